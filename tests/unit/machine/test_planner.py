"""The fused planner: layout arithmetic, pairing, ack counts, and the five refusals."""

from __future__ import annotations

import re

import pytest

from models.machine.layouts import FUSED4, MM_MESH, Machine, UnitKind
from models.machine.planner import (
    Acc, Const, Op, Operand, PlanRefused, deal, expected_acks, mul, plan_fused, silu, span_words,
)


def test_span_and_slots() -> None:
    assert span_words(3, 3) == 16 and span_words(4, 8) == 32 and span_words(1, 1) == 8
    p = plan_fused(32, 32, 64, 4, 8, 2, mul(Acc(0), silu(Acc(1))), FUSED4)
    assert p.slots == (0, 32) and p.result_word == 64 and p.footprint_words == 96


def test_reference_geometry_on_mm_mesh() -> None:
    p = plan_fused(12, 12, 64, 3, 3, 2, Op("add", (Acc(), Acc())), MM_MESH)
    assert len(p.instances) == 1 and p.instances[0].vector_core == (1, 0)
    assert p.acks_per_drain == 2  # ceil(9/8)
    assert expected_acks(p) == {(1, 0): 2}


def test_gated_mlp_acks_add() -> None:
    p = plan_fused(32, 32, 32, 8, 8, 1, mul(Acc(0), silu(Acc(1))), FUSED4)
    assert p.accumulators == 2 and p.acks_per_core == 16  # 2 x ceil(64/8)


def test_deal_is_round_robin_over_sorted_keys() -> None:
    nodes = [(1, 0), (2, 0)]
    assert deal([(1, 0), (0, 0), (0, 1)], nodes) == {(0, 0): (1, 0), (0, 1): (2, 0), (1, 0): (1, 0)}


# each refusal names the fix that points the right way: too many instances -> larger tiles, a tile too big ->
# smaller ones, a second operand -> two stages
@pytest.mark.parametrize("args,match,fix", [
    ((64, 64, 64, 4, 4, 2, silu(Acc())), "instances but 1 vector cores", "larger gm\\*gn \\(fewer, larger"),
    ((64, 128, 64, 16, 32, 2, silu(Acc())), "> 256", "smaller gm\\*gn \\(smaller, more"),
    ((64, 64, 64, 16, 16, 2, silu(Acc())), "exceeds L1_SAFE", "smaller gm\\*gn \\(smaller, more"),
    ((16, 16, 64, 4, 4, 2, mul(Acc(), Operand("bias"))), "neither an accumulator", "write two stages with a temp"),
])
def test_refusals_name_limit_and_the_fix_that_helps(args, match, fix) -> None:
    with pytest.raises(PlanRefused, match=match) as info:
        plan_fused(*args, MM_MESH)
    assert re.search(fix, str(info.value)), str(info.value)
    assert "two stages with a temp" in str(info.value)


@pytest.mark.parametrize("make, words", [
    (lambda: Acc(-3), "Acc(-3): the sweep slot must be an integer in 0..38"),
    (lambda: Acc(2.5), "Acc(2.5): the sweep slot must be an integer"),
    (lambda: Op("add", (Acc(),)), "Op('add') takes 2 operand(s), got 1"),
    (lambda: Op("mul", (Acc(), 3)), "Op('mul'): operand 3 is not an expression"),
])
def test_invalid_operands_are_refused_when_built(make, words) -> None:
    with pytest.raises(PlanRefused) as info:
        make()
    assert str(info.value).startswith(words)


def test_footprint_in_the_bad_band_is_named() -> None:
    with pytest.raises(PlanRefused, match="measured-bad band"):
        plan_fused(32, 96, 64, 8, 24, 2, silu(Acc()), FUSED4)  # span 192: 384 words


def test_machine_without_agent_is_refused() -> None:
    no_agent = Machine("noagent", 2, 1, {(0, 1): UnitKind.MAG, (1, 0): UnitKind.VECTOR,
                                         (2, 1): UnitKind.CLUSTER})
    with pytest.raises(PlanRefused, match="no agent coordinate"):
        plan_fused(12, 12, 64, 3, 3, 2, silu(Acc()), no_agent)


def test_constants_are_fine_and_shapes_are_checked() -> None:
    plan_fused(12, 12, 64, 3, 3, 2, mul(Acc(), Const(2.0)), MM_MESH)
    with pytest.raises(PlanRefused, match="not a whole number"):
        plan_fused(10, 12, 64, 3, 3, 2, silu(Acc()), MM_MESH)
    with pytest.raises(PlanRefused, match="32\\*nk"):
        plan_fused(12, 12, 60, 3, 3, 2, silu(Acc()), MM_MESH)
