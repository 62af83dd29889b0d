"""Named traffic scenarios, sized per bench, shared by the mesh and router benches.

A scenario is a pattern from models.noc.traffic plus a flit budget, so every bench
asks for 'hotspot' the same way and the test names read the same everywhere.
"""

from __future__ import annotations

import random
from typing import Mapping

from models.noc import traffic
from models.noc.mesh import MeshGeometry
from tb.lib.harness import StallMode, StallPattern

def drawn_stalls(rng: random.Random, idle_levels: Mapping[StallMode, int],
                 busy_levels: Mapping[StallMode, int], *, quiet: bool = False) -> tuple[StallPattern, StallPattern]:
    """(the sources' idle pattern, the sinks' busy pattern) of a run: each mode drawn from `rng` among the
    levels' keys, so a bench's seeds cover every pair of modes (the coverage model's idle x backpressure,
    tb/cover/noc.py). A hostile run never draws both NONE; `quiet` lets it (a saturating run is hostile
    enough without stalls)."""
    pairs = [(i, b) for i in idle_levels for b in busy_levels
             if quiet or (i, b) != (StallMode.NONE, StallMode.NONE)]
    idle, busy = rng.choice(pairs)
    return StallPattern(idle, idle_levels[idle]), StallPattern(busy, busy_levels[busy])


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
