"""The golden models' delivery budget (models/bundle/round_budget.py): derived per round from the program
(timing_rtl.json's machine cycles, or the plan's estimate without it), never a fixed figure; healthy runs stay
below it; a network that never goes quiet ends named, with the round and how its budget was reached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.bundle.executor import execute, run_sync
from models.bundle.loader import plan_rounds
from models.bundle.reader import BUNDLES, Bundle
from models.bundle.round_budget import DeliveryBudget
from models.machine.event_model import UNIT_MODELS, MachineModel, ModelHost, ModelRefused, run_bundle
from models.machine.layouts import FUSED4, UnitKind
from models.vector.link import Event
from tests.unit.bundle.test_cycle_limits import copy_bundle

MATMUL = "matmul_m32k64n32"  # one MG round on the clusters
SOFTMAX = "softmax_m32n64"  # three VC rounds on the vector cores


def test_budget_is_twice_timing_rtl_per_endpoint() -> None:
    """(2 x the round's machine cycles in timing_rtl.json + 10,000) x the machine's endpoints, round by round."""
    b = Bundle(BUNDLES / SOFTMAX)
    rounds = json.loads((BUNDLES / SOFTMAX / "timing_rtl.json").read_text())["rounds"]
    budget = DeliveryBudget.of(b, FUSED4)
    endpoints = len(FUSED4.units)  # 4 clusters, 4 vector cores, the memory agent, the orchestrator
    assert endpoints == 10
    for position, r in enumerate(rounds):
        assert budget.for_round(position) == (2 * int(r["machine_cycles"]) + 10_000) * endpoints
    assert budget.for_round(len(rounds)) == max(budget.for_round(p) for p in range(len(rounds)))
    assert "timing_rtl.json's" in budget.why(0) and f"x {endpoints} endpoints" in budget.why(0)


def test_budget_without_timing_is_the_plans_estimate(tmp_path: Path) -> None:
    b = Bundle(copy_bundle(tmp_path, BUNDLES / MATMUL, timing=False))
    flits = sum(len(k.flits) for k in plan_rounds(b)[0].round.kicks)
    budget = DeliveryBudget.of(b, FUSED4)
    assert budget.for_round(0) == (2 * 4_096 * flits + 10_000) * len(FUSED4.units)
    assert "estimated" in budget.why(0)


class CountingHost(ModelHost):
    """ModelHost that keeps, per round, the most deliveries one wait made and that wait's budget."""

    def __init__(self, mm: MachineModel, budget: DeliveryBudget) -> None:
        super().__init__(mm, budget)
        self.worst: dict[int, tuple[int, int]] = {}

    def _run(self, what: str, until=None) -> bool:  # type: ignore[no-untyped-def]
        before = self.mm.steps
        try:
            return super()._run(what, until)
        finally:
            used = self.mm.steps - before
            limit = self._max_steps()[0]
            if used > self.worst.get(self.position, (0, 0))[0]:
                self.worst[self.position] = (used, limit)


@pytest.mark.parametrize("name", [MATMUL, SOFTMAX, "flash_attention_l64d64"])
def test_healthy_waits_stay_below_their_budget(name: str) -> None:
    b = Bundle(BUNDLES / name)
    mm = MachineModel(FUSED4)
    host = CountingHost(mm, DeliveryBudget.of(b, FUSED4))
    run_sync(execute(b, host, FUSED4))
    assert host.worst, "no wait delivered anything"
    for position, (used, limit) in host.worst.items():
        # a healthy wait delivers at most one flit a cycle per endpoint in the cycles upstream's RTL took
        assert 0 < used <= limit // 10, (position, used, limit)


class Echo:
    """A planted unit that sends every flit it takes back to itself: a network that never goes quiet."""

    def __init__(self, coord: tuple[int, int], mm: MachineModel) -> None:
        self.coord = coord

    def take(self, flit: int) -> list[Event]:
        return [Event(self.coord, flit)]


def test_livelock_ends_named_with_its_round_and_budget() -> None:
    b = Bundle(BUNDLES / SOFTMAX)
    with pytest.raises(ModelRefused) as exc:
        run_bundle(b, FUSED4, {**UNIT_MODELS, UnitKind.VECTOR: Echo})
    msg = str(exc.value)
    limit = DeliveryBudget.of(b, FUSED4).for_round(0)
    assert f"round 0" in msg and "did not go quiet" in msg, msg
    assert f"{limit:,} deliveries = 2 x timing_rtl.json's" in msg, msg


def test_each_rounds_runs_get_its_poll_bound_as_their_instruction_budget() -> None:
    """A vector RUN started in a round may execute at most that round's poll bound of instructions (each retires
    in at least one cycle, so a RUN the RTL finishes executes fewer): the host sets it on every vector core as
    the round starts (models/vector/runaway.py)."""
    b = Bundle(BUNDLES / SOFTMAX)
    rounds = json.loads((BUNDLES / SOFTMAX / "timing_rtl.json").read_text())["rounds"]
    mm = MachineModel(FUSED4)
    host = ModelHost(mm, DeliveryBudget.of(b, FUSED4))
    cores = [u for c, u in mm.units.items() if FUSED4.units[c] is UnitKind.VECTOR]
    assert len(cores) == 4
    for position, r in enumerate(rounds):
        host.round_started(position)
        for core in cores:
            assert core.run_budget.words == 2 * int(r["machine_cycles"]) + 10_000
            assert f"{int(r['machine_cycles']):,} machine cycles" in core.run_budget.why
