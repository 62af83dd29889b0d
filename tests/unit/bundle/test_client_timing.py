"""Our rounds' timing against upstream RTL's: the stamps, the judge, the report (models/bundle/round_timing.py,
models/bundle/timing.py, models/bundle/report.py).

* the stamps mean what upstream's figures mean: a host that spends 4 cycles
  on every AXI-Lite transfer, as upstream's plain host does, gives exactly
  upstream's host cycles for every round of every bundle (the round starts
  before its baselines, ends as the first KICK write is issued);
* the judge passes on values inside every target, its boundaries included,
  and fails on each kind of wrong value (a round's machine cycles at +11 %,
  the summed machine cycles at +4 %, a round's host cycles at −6 %), naming
  bundle, round, both figures and the ratio; every value is constructed here;
* a bundle with no reference or no timing is not judged and says why; the
  verdict is not judged only when no bundle has a reference (one's own
  export), and not met when one has but nothing was compared;
* the report prints ours beside upstream's and "no timing" on the models.
"""

from __future__ import annotations

from typing import Mapping

import pytest

from models.bundle.reader import Bundle, bundle_names
from models.bundle.report import BundleReport, RoundRow, format_rounds, format_table, format_timing
from models.bundle.timing import NO_REFERENCE, NO_TIMING, BundleTiming, TimingState, compare, judge, within
from models.bundle.executor import execute, run_sync, stage_writes
from models.bundle.loader import Poll
from models.machine.event_model import MachineModel, ModelHost
from models.machine.layouts import FUSED4
from models.bundle.round_timing import RoundTiming

AXI_CYCLES = 4  # upstream's host: one AXI-Lite transfer (AW, W, B or AR, R) about 4 cycles (clients/README.md)


class AxiClockHost(ModelHost):
    """The machine model behind a host whose clock advances AXI_CYCLES per AXI-Lite transfer: a staged slot is
    five word writes, a poll one read once the machine has run (upstream's host, transfer for transfer)."""

    def __init__(self, mm: MachineModel) -> None:
        super().__init__(mm)
        self.clock = 0

    async def read(self, addr: int) -> int:
        self.clock += AXI_CYCLES
        return await super().read(addr)

    async def write(self, addr: int, value: int) -> None:
        self.clock += AXI_CYCLES
        await super().write(addr, value)

    async def stage(self, slots: Mapping[int, int]) -> None:
        self.clock += AXI_CYCLES * len(stage_writes(slots, self.slots))
        await super().stage(slots)

    async def poll(self, cmd: Poll, what: str) -> int:
        value = await super().poll(cmd, what)
        self.clock += AXI_CYCLES
        return value

    def cycle(self) -> int:
        return self.clock


@pytest.mark.parametrize("name", bundle_names())
def test_stamps_give_upstreams_host_cycles_on_a_host_timed_like_upstreams(name: str) -> None:
    b = Bundle(name)
    assert b.timing_rtl is not None
    res = run_sync(execute(b, AxiClockHost(MachineModel(FUSED4)), FUSED4))
    ours = [r.timing for r in res.rounds]
    assert all(t is not None for t in ours)
    assert [t.host_cycles for t in ours if t] == [t.host_cycles for t in b.timing_rtl]
    for mine, theirs in zip(ours, b.timing_rtl):
        assert mine is not None and mine.round == theirs.round and mine.kicks[0] == 0
        assert len(mine.kicks) == len(theirs.kicks) and [a[:2] for a in mine.awaits] == [a[:2] for a in theirs.awaits]
        assert mine.machine_cycles == max(a[2] for a in mine.awaits) > mine.kicks[-1]


def test_stamps_are_relative_to_the_round_start_and_the_first_kick() -> None:
    t = RoundTiming.of_stamps(3, 1000, [1250, 1290, 1330], [((1, 1), 1900), ((2, 1), 1700)])
    assert t == RoundTiming(3, 250, (0, 40, 80), ((1, 1, 650), (2, 1, 450)), 650)
    assert t.total == 900
    assert RoundTiming.from_json(t.to_json()) == t
    with pytest.raises(ValueError, match="round 3: no KICK write was stamped"):
        RoundTiming.of_stamps(3, 1000, [], [((1, 1), 1900)])


def _round(index: int, host: int, machine: int) -> RoundTiming:
    return RoundTiming(index, host, (0,), ((1, 1, machine),), machine)


def _bundle(name: str, *rounds: tuple[int, int, int, int]) -> BundleTiming:
    """A compared bundle from (host ours, host upstream, machine ours, machine upstream) per round."""
    ours = [_round(i, h, m) for i, (h, _, m, _) in enumerate(rounds)]
    theirs = [_round(i, h, m) for i, (_, h, _, m) in enumerate(rounds)]
    return compare(name, ["MG"] * len(rounds), ours, theirs)


def test_within_is_exact_at_the_boundary() -> None:
    assert within(1100, 1000, 10) and within(900, 1000, 10) and within(0, 0, 3)
    assert not within(1101, 1000, 10) and not within(899, 1000, 10) and not within(1, 0, 3)


def test_in_target_values_pass() -> None:
    # a round at +10 % and one at -10 % (the boundaries), hosts at +5 % and -5 %, the sum at +2 %
    verdict = judge([_bundle("a", (1050, 1000, 2200, 2000), (190, 200, 900, 1000)),
                     _bundle("b", (400, 400, 3000, 3000), (950, 1000, 1020, 1000))])
    assert verdict.state is TimingState.MET and verdict.passed and verdict.reasons == []
    assert verdict.judged == ["a", "b"] and verdict.rounds == 4
    assert (verdict.machine_ours, verdict.machine_upstream) == (7120, 7000)
    assert verdict.lines()[0].startswith("timing against upstream's RTL: MET; 2 bundle(s), 4 round(s) judged")


def test_a_round_at_plus_11_percent_fails() -> None:
    # the sum stays at +1.5 %: only the round is out
    verdict = judge([_bundle("a", (200, 200, 1110, 1000)), _bundle("b", (200, 200, 920, 1000))])
    assert verdict.state is TimingState.NOT_MET and not verdict.passed
    assert verdict.lines()[0].startswith("timing against upstream's RTL: NOT MET (1 reason(s)); 2 bundle(s)")
    assert verdict.reasons == ["bundle a round 0 (MG) machine cycles: ours 1110, upstream 1000, ratio 1.110 "
                               "(target 0.90..1.10)"]


def test_a_total_at_plus_4_percent_fails() -> None:
    # every round within 10 %, the sum at +4 %
    verdict = judge([_bundle("a", (200, 200, 1080, 1000), (200, 200, 1000, 1000)),
                     _bundle("b", (200, 200, 1040, 1000))])
    assert not verdict.passed
    assert verdict.reasons == ["2 bundle(s) summed machine cycles: ours 3120, upstream 3000, ratio 1.040 "
                               "(target 0.97..1.03)"]


def test_a_host_at_minus_6_percent_fails() -> None:
    verdict = judge([_bundle("a", (200, 200, 1000, 1000), (1880, 2000, 500, 500))])
    assert not verdict.passed
    assert verdict.reasons == ["bundle a round 1 (MG) host cycles: ours 1880, upstream 2000, ratio 0.940 "
                               "(target 0.95..1.05)"]


def test_a_machine_timed_at_a_quarter_of_upstream_fails_every_machine_target() -> None:
    verdict = judge([_bundle("a", (200, 200, 250, 1000), (200, 200, 260, 1000))])
    assert not verdict.passed and len(verdict.reasons) == 3
    assert verdict.reasons[-1].startswith("1 bundle(s) summed machine cycles: ours 510, upstream 2000, ratio 0.255")


def test_what_cannot_be_compared_is_not_judged_and_says_why() -> None:
    up = [_round(0, 200, 1000), _round(1, 200, 1000)]
    models, early = compare("m", ["MG", "VC"], None, up), compare("e", ["MG"], [_round(0, 1, 1)], up)
    assert models.note == NO_TIMING
    assert compare("r", ["MG", "VC"], [_round(0, 1, 1), _round(1, 1, 1)], None).note == NO_REFERENCE
    assert early.note.startswith("not measured (1 of 2 rounds timed")
    assert compare("s", ["MG", "VC"], [_round(0, 1, 1), _round(2, 1, 1)], up).note.startswith("not comparable")
    verdict = judge([early, models])
    assert verdict.not_judged == {"e": "not measured (1 of 2 rounds timed: the run ended early)", "m": NO_TIMING}
    assert "  not judged: e: not measured (1 of 2 rounds timed: the run ended early)" in verdict.lines()


def test_no_reference_anywhere_is_not_judged_and_not_met() -> None:
    """One's own export: no bundle has timing_rtl.json. The verdict says so with our machine cycles, and is not
    a pass: a bench that requires the targets met fails on it."""
    verdict = judge([compare("r", ["MG"], [_round(0, 1, 300)], None),
                     compare("s", ["MG", "VC"], [_round(0, 1, 200), _round(1, 1, 40)], None)])
    assert verdict.state is TimingState.NOT_JUDGED and not verdict.passed
    assert verdict.not_judged == {"r": NO_REFERENCE, "s": NO_REFERENCE} and verdict.judged == []
    assert verdict.reasons == ["no bundle has a reference timing (timing_rtl.json): not judged, so not met"]
    assert verdict.lines() == ["timing against upstream's RTL: not judged, no bundle has a timing_rtl.json to "
                               "compare with; machine cycles 540 ours"]


def test_a_reference_with_nothing_compared_is_not_met() -> None:
    """A bundle has timing_rtl.json but its run ended early: nothing was compared, and that is a failure, not
    an export without a reference; so is a set of bundles with no timing at all, or none."""
    up = [_round(0, 200, 1000), _round(1, 200, 1000)]
    early = compare("e", ["MG"], [_round(0, 1, 1)], up)
    for timings in ([early], [early, compare("r", ["MG"], [_round(0, 1, 1)], None)],
                    [compare("m", ["MG"], None, up)], []):
        verdict = judge(timings)
        assert verdict.state is TimingState.NOT_MET and not verdict.passed
        assert verdict.reasons == ["no bundle with a reference timing (timing_rtl.json) was timed: nothing to judge"]
        assert verdict.lines()[0].startswith("timing against upstream's RTL: NOT MET (1 reason(s)); 0 bundle(s)")


def _report(machine: str, upstream: list[RoundTiming] | None) -> BundleReport:
    ours = [RoundTiming(0, 195, (0, 49), ((1, 1, 498), (2, 1, 637)), 637),
            RoundTiming(1, 1500, (0,), ((3, 0, 300),), 300)]
    rows = [RoundRow(t.round, f"k:{t.round}", unit, 8, 8, 900, 2, 2, 8, 0,
                     t.to_json() if machine == "rtl" else None) for t, unit in zip(ours, ["MG", "VC"])]
    return BundleReport("k", machine, True, [], rows, 2000, 1.0,
                        upstream_timing=None if upstream is None else [t.to_json() for t in upstream])


def test_the_report_prints_ours_beside_upstreams() -> None:
    up = [RoundTiming(0, 188, (0, 36), ((1, 1, 900), (2, 1, 1236)), 1236),
          RoundTiming(1, 1468, (0,), ((3, 0, 1420),), 1420)]
    rep = BundleReport.from_json(_report("rtl", up).to_json())
    rounds = format_rounds(rep).splitlines()
    assert "host ours/upstream" in rounds[0] and "machine ours/upstream" in rounds[0]
    assert rounds[1].split()[-4:] == ["195/188", "637/1236", "0.515", "k:0"]
    assert rounds[2].split()[-4:] == ["1500/1468", "300/1420", "0.211", "k:1"]
    assert format_timing(rep) == ("  timing: machine cycles 937 ours / 2656 upstream, ratio 0.353; worst round 1 "
                                  "(VC): 300 / 1420, ratio 0.211")
    assert format_table([rep]).splitlines()[1].split() == ["k", "PASS", "2", "2000", "937", "2656", "0.353", "r1",
                                                           "0.211"]


def test_the_report_says_no_reference_and_no_timing() -> None:
    rep = _report("rtl", None)
    assert format_rounds(rep).splitlines()[1].split()[-4:] == ["195/-", "637/-", "-", "k:0"]
    assert format_timing(rep) == "  timing: no reference (the bundle has no timing_rtl.json); machine cycles 937 ours"
    assert format_table([rep]).splitlines()[1].split()[4:] == ["937", "no", "reference", "-", "-"]
    models = _report("models", [_round(0, 188, 900), _round(1, 188, 900)])
    assert "ours/upstream" not in format_rounds(models)
    assert format_timing(models).startswith("  timing: no timing (a run on the golden models")
    assert format_table([models]).splitlines()[1].split()[4:] == ["no", "timing", "-", "-", "-"]


def test_a_what_if_compares_and_judges_nothing() -> None:
    """A machine with timing overrides is not upstream's: a round 20 % off and a total 12 % off are a what-if's
    figures, not failures; each bundle's speed-up is upstream's cycles over ours."""
    timings = [_bundle("a", (200, 200, 1200, 1000)), _bundle("b", (200, 200, 1000, 1000))]
    assert judge(timings).state is TimingState.NOT_MET  # the same figures at upstream's timing fail
    verdict = judge(timings, what_if="dram.RD_LATENCY=8")
    assert verdict.state is TimingState.WHAT_IF and verdict.reasons == [] and verdict.judged == ["a", "b"]
    lines = verdict.lines()
    assert lines[0].startswith("timing what-if (dram.RD_LATENCY=8): not judged against upstream's RTL")
    assert "machine cycles 2200 ours / 2000 upstream's, speed-up 0.909x" in lines[0]
    assert lines[1:] == ["  a: machine cycles 1200 ours / 1000 upstream's, speed-up 0.833x",
                         "  b: machine cycles 1000 ours / 1000 upstream's, speed-up 1.000x"]
