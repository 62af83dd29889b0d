"""Named traffic scenarios, sized per bench, shared by the mesh and router benches.

A scenario is a pattern from models.traffic plus a flit budget, so every bench
asks for 'hotspot' the same way and the test names read the same everywhere.
"""

from __future__ import annotations

import random

from models import traffic
from models.mesh import MeshGeometry

PATTERNS: tuple[str, ...] = ("uniform", "transpose", "hotspot", "neighbour", "self")


def make_pairs(pattern: str, geometry: MeshGeometry, rng: random.Random, per_source: int) -> list[tuple[int, int]]:
    """`per_source` flits from every present endpoint, addressed by `pattern`."""
    n_src = len(geometry.endpoints())
    if pattern == "uniform":
        return traffic.uniform_random(geometry, rng, per_source * n_src)
    if pattern == "transpose":
        return traffic.transpose(geometry, rng, per_source)
    if pattern == "hotspot":
        return traffic.hotspot(geometry, rng, per_source)
    if pattern == "neighbour":
        return traffic.nearest_neighbour(geometry, rng, per_source)
    if pattern == "self":
        return traffic.self_addressed(geometry, rng, per_source)
    raise ValueError(f"unknown traffic pattern '{pattern}'; known: {', '.join(PATTERNS)}")
