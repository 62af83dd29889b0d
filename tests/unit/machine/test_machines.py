"""Machine descriptions: the layouts the protocol fixes, and the refusals."""

from __future__ import annotations

import pytest

from models.machine.layouts import FUSED4, MM_MESH, MM_MESH_SYS, Machine, UnitKind, get_machine


def test_mm_mesh_is_the_reference_layout() -> None:
    assert (MM_MESH.nx, MM_MESH.ny) == (2, 1)
    assert MM_MESH.mag == (0, 1)
    assert MM_MESH.vector_cores == [(1, 0)]
    assert MM_MESH.clusters == [(2, 1)]
    assert MM_MESH.units[(1, 1)] == UnitKind.EXT and MM_MESH.agent == (1, 1)
    g = MM_MESH.geometry
    assert sorted(g.endpoint_coords()) == sorted([(1, 1), (2, 1), (0, 1), (1, 0)])
    assert MM_MESH_SYS.units[(1, 1)] == UnitKind.ORCH


def test_fused4_is_four_of_each() -> None:
    assert FUSED4.clusters == [(1, 1), (2, 1), (1, 2), (2, 2)]
    assert FUSED4.vector_cores == [(1, 0), (2, 0), (3, 0), (3, 1)]
    assert FUSED4.agent == (3, 2) and FUSED4.mag == (0, 1)


def test_refusals_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown machine 'x'; known machines: mm_mesh"):
        get_machine("x")
    with pytest.raises(ValueError):
        Machine("bad", 2, 1, {(0, 0): UnitKind.MAG})  # a corner
    with pytest.raises(ValueError, match="not an orchestrator"):
        Machine("bad", 2, 1, {(1, 1): UnitKind.CLUSTER}, agent=(1, 1))
    with pytest.raises(ValueError):
        Machine("bad", 15, 1, {})  # past the 4-bit coordinate space
