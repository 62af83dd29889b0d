"""Unit tests for models.noc.mesh: indexing and routing must match the RTL rules."""

from __future__ import annotations

import itertools

import pytest

from models.noc.mesh import MAX_DIM, MeshGeometry, Port


def test_port_enum_values() -> None:
    assert [int(p) for p in (Port.N, Port.E, Port.S, Port.W, Port.L)] == [0, 1, 2, 3, 4]


def test_exact_indices_2x2() -> None:
    g = MeshGeometry.with_all_edges(2, 2)
    expected = {
        (1, 1): 0, (2, 1): 1, (1, 2): 2, (2, 2): 3,  # locals, row-major
        (1, 0): 4, (2, 0): 5,  # north edge
        (1, 3): 6, (2, 3): 7,  # south edge
        (0, 1): 8, (0, 2): 9,  # west edge
        (3, 1): 10, (3, 2): 11,  # east edge
    }
    assert g.num_ports == 12
    for coord, idx in expected.items():
        assert g.port_index(coord) == idx
        assert g.port_coord(idx) == coord


def test_exact_indices_3x2() -> None:
    g = MeshGeometry(3, 2)
    expected = {
        (1, 1): 0, (2, 1): 1, (3, 1): 2, (1, 2): 3, (2, 2): 4, (3, 2): 5,
        (1, 0): 6, (2, 0): 7, (3, 0): 8,
        (1, 3): 9, (2, 3): 10, (3, 3): 11,
        (0, 1): 12, (0, 2): 13,
        (4, 1): 14, (4, 2): 15,
    }
    assert g.num_ports == 3 * 2 + 2 * 3 + 2 * 2 == 16
    assert [g.port_coord(i) for i in range(16)] == sorted(expected, key=expected.get)
    for coord, idx in expected.items():
        assert g.port_index(coord) == idx


@pytest.mark.parametrize("nx,ny", [(1, 1), (2, 3), (4, 4), (14, 14), (14, 1)])
def test_index_round_trip(nx: int, ny: int) -> None:
    g = MeshGeometry.with_all_edges(nx, ny)
    assert g.num_ports == nx * ny + 2 * nx + 2 * ny
    coords = [g.port_coord(i) for i in range(g.num_ports)]
    assert len(set(coords)) == g.num_ports
    for i, c in enumerate(coords):
        assert g.port_index(c) == i
        assert all(0 <= v <= 15 for v in c)


@pytest.mark.parametrize("coord", [(0, 0), (3, 0), (0, 3), (3, 3), (5, 1), (1, 4), (-1, 1)])
def test_non_endpoint_coordinates_refused(coord: tuple[int, int]) -> None:
    g = MeshGeometry.with_all_edges(2, 2)
    with pytest.raises(ValueError):
        g.port_index(coord)
    assert not g.is_valid_destination(coord)


def test_port_coord_range() -> None:
    g = MeshGeometry(2, 2)
    for bad in (-1, 12):
        with pytest.raises(ValueError):
            g.port_coord(bad)


@pytest.mark.parametrize("nx,ny", [(0, 2), (15, 2), (2, 15), (2, 0), (16, 16)])
def test_dimension_limits(nx: int, ny: int) -> None:
    with pytest.raises(ValueError) as exc:
        MeshGeometry(nx, ny)
    assert str(MAX_DIM) in str(exc.value) and "choose" in str(exc.value)


def test_edge_mask_limits_and_presence() -> None:
    with pytest.raises(ValueError):
        MeshGeometry(2, 2, edge_mask=1 << 8)
    with pytest.raises(ValueError):
        MeshGeometry(2, 2, edge_mask=-1)
    assert MeshGeometry.all_edges(2, 2) == 0xFF
    g = MeshGeometry(2, 2, edge_mask=0b1000_0001)  # north (1,0) and east (3,2)
    assert g.endpoints() == [0, 1, 2, 3, 4, 11]
    assert g.endpoint_coords() == [(1, 1), (2, 1), (1, 2), (2, 2), (1, 0), (3, 2)]
    assert g.present(4) and not g.present(5) and g.present(11) and not g.present(12)
    assert g.is_valid_destination((1, 0)) and not g.is_valid_destination((2, 0))
    assert g.is_valid_destination(3) and not g.is_valid_destination(99)
    assert MeshGeometry(2, 2).endpoints() == [0, 1, 2, 3]


def test_is_router_and_entry_ports() -> None:
    g = MeshGeometry.with_all_edges(3, 2)
    assert g.is_router((1, 1)) and g.is_router((3, 2))
    assert not g.is_router((0, 1)) and not g.is_router((4, 1)) and not g.is_router((1, 3))
    assert g.entry_port((2, 2)) == ((2, 2), Port.L)
    assert g.entry_port((2, 0)) == ((2, 1), Port.N)
    assert g.entry_port((2, 3)) == ((2, 2), Port.S)
    assert g.entry_port((0, 2)) == ((1, 2), Port.W)
    assert g.entry_port((4, 1)) == ((3, 1), Port.E)
    assert g.entry_port(g.port_index((4, 1))) == ((3, 1), Port.E)


def test_output_port_rules() -> None:
    g = MeshGeometry.with_all_edges(3, 3)
    assert g.output_port((1, 1), (3, 1)) is Port.E
    assert g.output_port((3, 3), (1, 1)) is Port.W
    assert g.output_port((2, 1), (2, 3)) is Port.S
    assert g.output_port((2, 3), (2, 1)) is Port.N
    # X first: both dx and dy differ -> E/W before N/S.
    assert g.output_port((1, 1), (3, 3)) is Port.E
    assert g.output_port((3, 3), (1, 1)) is Port.W
    assert g.output_port((2, 2), (2, 2)) is Port.L
    # At the target router the raw coordinate picks the outward edge hop.
    assert g.output_port((1, 2), (0, 2)) is Port.W
    assert g.output_port((3, 2), (4, 2)) is Port.E
    assert g.output_port((2, 1), (2, 0)) is Port.N
    assert g.output_port((2, 3), (2, 4)) is Port.S
    # Clamping: an east-edge destination steers east, then Y, then out east.
    assert g.output_port((1, 3), (4, 1)) is Port.E
    assert g.output_port((3, 3), (4, 1)) is Port.N
    with pytest.raises(ValueError):
        g.output_port((0, 1), (1, 1))


def test_specific_routes() -> None:
    g = MeshGeometry.with_all_edges(3, 3)
    assert g.route((1, 1), (3, 3)) == [(1, 1), (2, 1), (3, 1), (3, 2), (3, 3)]
    assert g.route((3, 3), (1, 1)) == [(3, 3), (2, 3), (1, 3), (1, 2), (1, 1)]
    # Edge to edge: enter at (2,1), go W, then S, then out W.
    assert g.route((2, 0), (0, 3)) == [(2, 1), (1, 1), (1, 2), (1, 3)]
    # Outward hop to an edge endpoint on the source's own router.
    assert g.route((2, 2), (2, 0)) == [(2, 2), (2, 1)]
    assert g.hops((2, 1), (2, 0)) == 1
    # Clamped destination beyond the east edge.
    g32 = MeshGeometry.with_all_edges(3, 2)
    assert g32.route((1, 2), (4, 1)) == [(1, 2), (2, 2), (3, 2), (3, 1)]
    # Port indices are accepted as well as coordinates.
    assert g32.route(g32.port_index((1, 2)), g32.port_index((4, 1))) == g32.route((1, 2), (4, 1))
    with pytest.raises(ValueError):
        g.route((1, 1), (0, 0))


@pytest.mark.parametrize("nx,ny", [(1, 1), (2, 2), (3, 2), (2, 4), (5, 3)])
def test_route_properties_all_pairs(nx: int, ny: int) -> None:
    g = MeshGeometry.with_all_edges(nx, ny)
    eps = g.endpoints()
    for s, d in itertools.product(eps, eps):
        path = g.route(s, d)
        entry, _ = g.entry_port(s)
        exit_router, exit_port = g.entry_port(d)
        assert path[0] == entry
        assert path[-1] == exit_router
        assert g.output_port(path[-1], g.port_coord(d)) is exit_port
        assert all(g.is_router(r) for r in path)
        # Each step is to a neighbour, and there is never a Y-to-X turn.
        moved_y = False
        for a, b in zip(path, path[1:]):
            assert g.router_distance(a, b) == 1
            if a[1] != b[1]:
                moved_y = True
            else:
                assert not moved_y, f"Y-to-X turn on {s}->{d}: {path}"
        # Minimal: X-first DOR never detours.
        assert g.hops(s, d) == len(path) == g.router_distance(entry, exit_router) + 1
        if s == d:
            assert g.hops(s, d) == 1


def test_neighbour_and_clamp() -> None:
    g = MeshGeometry(2, 2)
    assert g.neighbour((1, 1), Port.N) == (1, 0)
    assert g.neighbour((1, 1), Port.E) == (2, 1)
    assert g.neighbour((1, 1), Port.S) == (1, 2)
    assert g.neighbour((1, 1), Port.W) == (0, 1)
    assert g.neighbour((1, 1), Port.L) == (1, 1)
    assert g.clamp((0, 3)) == (1, 2)
    assert g.routers() == [(1, 1), (2, 1), (1, 2), (2, 2)]
