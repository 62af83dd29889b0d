"""Unit tests for models.noc.traffic: deterministic, and only present endpoints."""

from __future__ import annotations

import random
from typing import Callable

import numpy as np
import pytest

from models.noc.mesh import MeshGeometry
from models.noc.traffic import (
    hotspot,
    nearest_neighbour,
    self_addressed,
    transpose,
    transpose_target,
    uniform_random,
)

GEOMS = [
    MeshGeometry.with_all_edges(3, 3),
    MeshGeometry(4, 2, edge_mask=0b1010_0110_0101),
    MeshGeometry(2, 3),
    MeshGeometry(1, 1),
]

PATTERNS: dict[str, Callable] = {
    "uniform": lambda g, r: uniform_random(g, r, 50),
    "transpose": lambda g, r: transpose(g, r, 3),
    "hotspot": lambda g, r: hotspot(g, r, 2),
    "nearest": lambda g, r: nearest_neighbour(g, r, 3),
    "self": lambda g, r: self_addressed(g, r, 2),
}


@pytest.mark.parametrize("name", list(PATTERNS))
@pytest.mark.parametrize("geom", GEOMS, ids=lambda g: f"{g.nx}x{g.ny}m{g.edge_mask:x}")
def test_deterministic_and_present_only(name: str, geom: MeshGeometry) -> None:
    gen = PATTERNS[name]
    for make_rng in (random.Random, np.random.default_rng):
        a = gen(geom, make_rng(1234))
        b = gen(geom, make_rng(1234))
        assert a == b
        assert a, "pattern produced no traffic"
        for s, d in a:
            assert isinstance(s, int) and isinstance(d, int)
            assert geom.present(s) and geom.present(d)


def test_uniform_random_seed_sensitivity_and_count() -> None:
    g = MeshGeometry.with_all_edges(3, 3)
    a = uniform_random(g, random.Random(1), 200)
    b = uniform_random(g, random.Random(2), 200)
    assert len(a) == len(b) == 200 and a != b
    assert all(s != d for s, d in a)
    assert {s for s, _ in a} | {d for _, d in a} == set(g.endpoints())
    assert any(s == d for s, d in uniform_random(g, random.Random(1), 400, allow_self=True))
    assert uniform_random(MeshGeometry(1, 1), random.Random(0), 3) == [(0, 0)] * 3
    with pytest.raises(ValueError):
        uniform_random(g, random.Random(0), -1)


def test_transpose_square() -> None:
    g = MeshGeometry.with_all_edges(3, 3)
    assert transpose_target(g, (1, 2)) == (2, 1)
    assert transpose_target(g, (2, 0)) == (0, 2)
    assert transpose_target(g, (0, 2)) == (2, 0)
    assert transpose_target(g, (1, 4)) == (4, 1)
    assert transpose_target(g, (4, 1)) == (1, 4)
    pairs = transpose(g, random.Random(0), 2)
    assert len(pairs) == 2 * len(g.endpoints())
    # Round-major order, and the mapping is an involution on a full square mesh.
    assert [s for s, _ in pairs[: len(g.endpoints())]] == g.endpoints()
    mapping = dict(pairs)
    assert all(mapping[mapping[s]] == s for s in mapping)


def test_transpose_non_square_scales_into_grid() -> None:
    g = MeshGeometry(3, 2)
    assert transpose_target(g, (2, 1)) == (1, 2)  # (y,x) exists: kept
    assert transpose_target(g, (3, 1)) == (1, 2)  # y'=3 > ny: scaled 3->2
    for s, d in transpose(g, random.Random(0)):
        assert d < g.num_routers  # locals map to locals


def test_transpose_absent_partner_falls_back_to_random() -> None:
    g = MeshGeometry(3, 3, edge_mask=0b111)  # north edge only; west partners absent
    north = [g.port_index((x, 0)) for x in (1, 2, 3)]
    a = transpose(g, random.Random(5), 20)
    b = transpose(g, random.Random(6), 20)
    dsts = {d for s, d in a if s in north}
    assert len(dsts) > 1 and all(g.present(d) for d in dsts)
    assert all(s != d for s, d in a if s in north)
    assert [p for p in a if p[0] in north] != [p for p in b if p[0] in north]


def test_hotspot() -> None:
    g = MeshGeometry.with_all_edges(2, 2)
    pairs = hotspot(g, random.Random(0), 3, target=(3, 1))
    assert len(pairs) == 3 * len(g.endpoints())
    assert {d for _, d in pairs} == {g.port_index((3, 1))}
    assert sorted({s for s, _ in pairs}) == g.endpoints()
    assert hotspot(g, random.Random(0), 1, target=2) == [(s, 2) for s in g.endpoints()]
    with pytest.raises(ValueError):
        hotspot(MeshGeometry(2, 2), random.Random(0), 1, target=(3, 1))


def test_nearest_neighbour_distance() -> None:
    for g in GEOMS[:3]:
        for s, d in nearest_neighbour(g, random.Random(3), 10):
            rs, _ = g.entry_port(s)
            rd, _ = g.entry_port(d)
            assert g.router_distance(rs, rd) <= 1
            assert s != d
    assert nearest_neighbour(MeshGeometry(1, 1), random.Random(0)) == [(0, 0)]


def test_self_addressed() -> None:
    g = MeshGeometry.with_all_edges(2, 3)
    pairs = self_addressed(g, None, 2)
    assert pairs == [(e, e) for e in g.endpoints()] * 2
    assert all(g.hops(s, d) == 1 for s, d in pairs)
