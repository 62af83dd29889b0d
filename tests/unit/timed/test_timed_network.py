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


def test_a_busy_endpoint_holds_its_register_and_the_input_behind_it() -> None:
    """The agent takes nothing before edge 100: its flit waits in (1,1)'s West register; a flit for the
    orchestrator queued behind it in the same input FIFO waits too (head of line); one from another input
    goes by."""
    got: list[tuple[int, tuple[int, int], int]] = []
    mesh = TimedMesh(FUSED4.geometry, lambda e, dst, f: got.append((e, dst, f)),
                     accept=lambda dst, e: max(e, 100) if dst == MAG else e)
    north = (1, 0)
    mesh.send(10, north, _flit(north, MAG, 1))     # offered to the agent at 13, taken at 100
    mesh.send(11, north, _flit(north, MAG, 2))     # same register: granted once it reloads at 100, taken 101
    mesh.send(12, north, _flit(north, ORCH, 3))    # behind flit 2 in the North input: granted after it
    mesh.send(12, (1, 1), _flit((1, 1), ORCH, 4))  # the cluster's own input: not held
    mesh.advance(10_000)
    when = {f: (e, dst) for e, dst, f in got}
    assert when[_flit(north, MAG, 1)] == (100, MAG)
    assert when[_flit(north, MAG, 2)] == (101, MAG)
    far = FUSED4.geometry.hops((1, 1), ORCH)  # (1,1) -> (2,1) -> (3,1) -> (3,2)
    assert when[_flit((1, 1), ORCH, 4)] == (12 + 3 * far, ORCH)
    # flit 3 leaves the North holding register the edge after flit 2 is granted (100) and goes on unhindered
    assert when[_flit(north, ORCH, 3)] == (101 + 1 + 3 * (far - 1), ORCH)
