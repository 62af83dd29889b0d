"""The timed mesh against the router's own timing rules (rtl/noc/noc_router.v header): three edges a router,
one flit an edge per port, first come first served at a contended output, one input's flits in order."""

from __future__ import annotations

from models.machine.layouts import FUSED4
from models.noc.flit import FlitType, make_flit
from models.timed.network import TimedMesh

MAG, VC0, VC3, ORCH = (0, 1), (1, 0), (3, 1), (3, 2)


def _mesh() -> tuple[TimedMesh, list[tuple[int, tuple[int, int], int]]]:
    got: list[tuple[int, tuple[int, int], int]] = []
    return TimedMesh(FUSED4.geometry, lambda e, dst, f: got.append((e, dst, f))), got


def _flit(src: tuple[int, int], dst: tuple[int, int], txn: int = 0) -> int:
    return make_flit(dst, src, FlitType.MEM_RD_REQ, txn, 1, 0)


def test_a_flit_takes_three_edges_a_router() -> None:
    mesh, got = _mesh()
    routers = FUSED4.geometry.hops(VC0, MAG)  # (1,1) only: the vector core sits north of it, the agent west
    mesh.send(100, VC0, _flit(VC0, MAG))
    mesh.advance(10_000)
    assert routers == 1 and got == [(100 + 3 * routers, MAG, _flit(VC0, MAG))]
    mesh, got = _mesh()
    far = FUSED4.geometry.hops(ORCH, MAG)  # (3,2) -> (2,2) -> (1,2) -> (1,1)
    mesh.send(7, ORCH, _flit(ORCH, MAG))
    mesh.advance(10_000)
    assert far == 4 and [e for e, _, _ in got] == [7 + 3 * far]


def test_one_input_sends_one_flit_an_edge_in_order() -> None:
    mesh, got = _mesh()
    for k in range(4):
        mesh.send(50, VC0, _flit(VC0, MAG, k))  # four flits offered at once: the FIFO serialises them
    mesh.advance(10_000)
    assert [e for e, _, _ in got] == [53, 54, 55, 56]
    assert [f for _, _, f in got] == [_flit(VC0, MAG, k) for k in range(4)]


def test_a_contended_output_grants_one_flit_an_edge() -> None:
    mesh, got = _mesh()
    north, local = (1, 0), (1, 1)  # a vector core and a cluster on router (1,1); both go out West to the agent
    mesh.send(10, north, _flit(north, MAG, 1))  # held at 11, wants the output at 12
    mesh.send(10, local, _flit(local, MAG, 2))  # the same: one is granted at 12, the other at 13
    mesh.send(11, local, _flit(local, MAG, 3))  # behind its input's flit: granted at 14
    mesh.advance(10_000)
    assert [e for e, _, _ in got] == [13, 14, 15]
    mesh, got = _mesh()
    mesh.send(10, north, _flit(north, MAG, 1))
    mesh.send(11, local, _flit(local, MAG, 2))  # held at 12, wants 13: free, no wait
    mesh.advance(10_000)
    assert [e for e, _, _ in got] == [13, 14]
