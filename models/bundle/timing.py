"""Our machine's execution time against upstream RTL's, round by round: the comparison and its judge.

Why: a compiled bundle carries upstream RTL's time per round
(``timing_rtl.json``, models/bundle/timing_schema.py); our RTL run stamps the same
moments (models/bundle/executor.py, models/bundle/round_timing.py). The targets a machine
timed like upstream's meets (:data:`TARGETS`):

* every round's machine cycles (first KICK to the last await met) within
  ±10 % of upstream's;
* the machine cycles summed over every bundle judged within ±3 %;
* every round's host cycles (round start to the first KICK) within ±5 %.

:func:`judge` returns a :class:`TimingVerdict` whose reasons name the bundle,
the round, both figures and the ratio (ours / upstream). A bundle without
``timing_rtl.json`` has "no reference", a run on the golden models "no
timing" (their clock is network deliveries, not cycles): neither is judged,
and neither gets a made-up number.

A run whose machine had timing overrides (``python -m tb.client run --timing
FACT=VALUE``, models/machine/unit_timing.py) is a what-if: upstream's figures
are for upstream's timing, so nothing is judged; each bundle's machine cycles
are printed beside upstream's with the speed-up (upstream / ours).

The verdict is met, not met, or not judged (:class:`TimingState`). Not judged
is one's own export: no bundle of the run has a reference at all, so there is
nothing upstream's to hold ours against. Nothing compared while some bundle has
a reference (its run ended early, its rounds do not pair) is not met: a
reference was there and was not used. Only met is a pass (``passed``).

The bench and ``python -m tb.client`` print the verdict on every RTL run, and
a missed target fails them as a wrong lane does. The bench, whose bundles all
carry a reference, fails on not judged too; the client lets a run that is not
judged stand on its bundles' verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

from models.bundle.round_timing import RoundTiming

NO_TIMING = "no timing"  # a run whose clock is not cycles (the golden models)
NO_REFERENCE = "no reference"  # a bundle without timing_rtl.json


@dataclass(frozen=True)
class Targets:
    """Tolerances in percent of upstream's figure (ours within upstream ± pct %)."""

    round_machine_pct: int = 10
    total_machine_pct: int = 3
    round_host_pct: int = 5


TARGETS = Targets()


def ratio(ours: int, upstream: int) -> float:
    """ours / upstream (an upstream figure of 0: 1.0 when ours is 0 too, else infinite)."""
    if upstream == 0:
        return 1.0 if ours == 0 else float("inf")
    return ours / upstream


def within(ours: int, upstream: int, pct: int) -> bool:
    """|ours − upstream| <= pct % of upstream, in integers (exactly 10 % is within 10 %)."""
    return abs(ours - upstream) * 100 <= pct * upstream


@dataclass(frozen=True)
class RoundPair:
    """One round: our figures beside upstream's."""

    unit: str
    ours: RoundTiming
    upstream: RoundTiming

    @property
    def round(self) -> int:
        return self.ours.round

    @property
    def machine_ratio(self) -> float:
        return ratio(self.ours.machine_cycles, self.upstream.machine_cycles)

    @property
    def host_ratio(self) -> float:
        return ratio(self.ours.host_cycles, self.upstream.host_cycles)


@dataclass(frozen=True)
class BundleTiming:
    """One bundle's rounds compared, or `note` saying why they are not (no timing, no reference, ...)."""

    bundle: str
    pairs: tuple[RoundPair, ...] = ()
    note: str = ""
    # our rounds timed when upstream has none to pair them with (NO_REFERENCE): the machine cycles are still
    # ours to say, as the verdict of one's own export does
    unpaired: tuple[RoundTiming, ...] = ()

    @property
    def compared(self) -> bool:
        return not self.note

    @property
    def machine_ours(self) -> int:
        return sum(p.ours.machine_cycles for p in self.pairs) + sum(t.machine_cycles for t in self.unpaired)

    @property
    def machine_upstream(self) -> int:
        return sum(p.upstream.machine_cycles for p in self.pairs)

    @property
    def machine_ratio(self) -> float:
        return ratio(self.machine_ours, self.machine_upstream)

    @property
    def worst(self) -> RoundPair | None:
        """The round whose machine ratio is farthest from 1 (the first of equals)."""
        return max(self.pairs, key=lambda p: abs(p.machine_ratio - 1.0), default=None)


def compare(bundle: str, units: Sequence[str], ours: Sequence[RoundTiming | None] | None,
            upstream: Sequence[RoundTiming] | None) -> BundleTiming:
    """Pair our rounds with upstream's (same round numbers, plan order); `ours` None: a run with no clock.
    `units` names each round's unit (MG, VC)."""
    if ours is None:
        return BundleTiming(bundle, note=NO_TIMING)
    timed = [t for t in ours if t is not None]
    if upstream is None:
        return BundleTiming(bundle, note=NO_REFERENCE, unpaired=tuple(timed))
    if len(timed) != len(upstream):
        return BundleTiming(bundle, note=f"not measured ({len(timed)} of {len(upstream)} rounds timed: the run "
                                         f"ended early)")
    for mine, theirs in zip(timed, upstream):
        if mine.round != theirs.round:
            return BundleTiming(bundle, note=f"not comparable (our round {mine.round} beside upstream's round "
                                             f"{theirs.round})")
    return BundleTiming(bundle, tuple(RoundPair(u, m, t) for u, m, t in zip(units, timed, upstream)))


def _reason(what: str, ours: int, upstream: int, pct: int) -> str:
    return (f"{what}: ours {ours}, upstream {upstream}, ratio {ratio(ours, upstream):.3f} (target "
            f"{1 - pct / 100:.2f}..{1 + pct / 100:.2f})")


def judge_rounds(timing: BundleTiming, targets: Targets = TARGETS) -> list[str]:
    """The per-round targets on one compared bundle: one reason per figure out of its target."""
    out = []
    for p in timing.pairs:
        where = f"bundle {timing.bundle} round {p.round} ({p.unit})"
        if not within(p.ours.machine_cycles, p.upstream.machine_cycles, targets.round_machine_pct):
            out.append(_reason(f"{where} machine cycles", p.ours.machine_cycles, p.upstream.machine_cycles,
                               targets.round_machine_pct))
        if not within(p.ours.host_cycles, p.upstream.host_cycles, targets.round_host_pct):
            out.append(_reason(f"{where} host cycles", p.ours.host_cycles, p.upstream.host_cycles,
                               targets.round_host_pct))
    return out


class TimingState(Enum):
    """The judge's three answers; only MET lets a bench that requires the targets pass."""

    MET = "MET"
    NOT_MET = "NOT MET"
    NOT_JUDGED = "not judged"  # no bundle has a reference (one's own export): nothing to hold ours against
    WHAT_IF = "what-if"  # our machine ran other timing facts than upstream's (overrides): compared, not judged


@dataclass
class TimingVerdict:
    """The judge's answer over a set of bundles."""

    state: TimingState
    reasons: list[str]  # why the targets are not shown met: empty exactly when the state is MET
    judged: list[str]  # bundles compared
    not_judged: dict[str, str] = field(default_factory=dict)  # bundle -> why (no timing, no reference, ...)
    machine_ours: int = 0  # over the bundles compared; when not judged, over every bundle timed
    machine_upstream: int = 0
    rounds: int = 0
    targets: Targets = TARGETS
    what_if: str = ""  # the timing overrides the run's machine had (models/machine/unit_timing.py canonical)
    per_bundle: dict[str, tuple[int, int]] = field(default_factory=dict)  # what-if: bundle -> (ours, upstream)

    @property
    def passed(self) -> bool:
        """Whether the targets were met; not judged is not met (a bench that requires them fails on it)."""
        return self.state is TimingState.MET

    def lines(self) -> list[str]:
        """The verdict as printed: a head line, then one line per reason and per bundle not judged. Not judged
        is the head alone: each bundle's own timing line has said it has no reference."""
        if self.state is TimingState.WHAT_IF:
            head = (f"timing what-if ({self.what_if}): not judged against upstream's RTL, which ran its own timing; "
                    f"{len(self.judged)} bundle(s), machine cycles {self.machine_ours} ours / {self.machine_upstream} "
                    f"upstream's, speed-up {speed_up(self.machine_ours, self.machine_upstream)}")
            return [head] + [f"  {b}: machine cycles {o} ours / {u} upstream's, speed-up {speed_up(o, u)}"
                             for b, (o, u) in self.per_bundle.items()]
        if self.state is TimingState.NOT_JUDGED:
            return [f"timing against upstream's RTL: not judged, no bundle has a timing_rtl.json to compare with; "
                    f"machine cycles {self.machine_ours} ours"]
        word = "MET" if self.passed else f"NOT MET ({len(self.reasons)} reason(s))"
        head = (f"timing against upstream's RTL: {word}; {len(self.judged)} bundle(s), {self.rounds} round(s) "
                f"judged, machine cycles {self.machine_ours} ours / {self.machine_upstream} upstream, ratio "
                f"{ratio(self.machine_ours, self.machine_upstream):.3f}; targets: a round's machine cycles "
                f"±{self.targets.round_machine_pct} %, the sum ±{self.targets.total_machine_pct} %, a round's host "
                f"cycles ±{self.targets.round_host_pct} %")
        return ([head] + [f"  {r}" for r in self.reasons]
                + [f"  not judged: {b}: {why}" for b, why in self.not_judged.items()])


def speed_up(ours: int, upstream: int) -> str:
    """upstream / ours as a what-if's figure ("1.250x": ours runs in 0.8 of upstream's cycles)."""
    return f"{ratio(upstream, ours):.3f}x"


def judge(timings: Iterable[BundleTiming], targets: Targets = TARGETS, what_if: str = "") -> TimingVerdict:
    """Every target over `timings`: per round (machine, host) and the machine cycles summed over the bundles
    compared. Nothing compared is not a pass: not judged when no bundle has a reference at all (one's own
    export), else not met, and the reasons say why. `what_if` (the run's timing overrides): the machine is not
    upstream's, so nothing is judged; the verdict compares (WHAT_IF, each bundle's speed-up)."""
    timings = list(timings)
    compared = [t for t in timings if t.compared]
    if what_if and compared:
        return TimingVerdict(TimingState.WHAT_IF, reasons=[], judged=[t.bundle for t in compared],
                             not_judged={t.bundle: t.note for t in timings if not t.compared},
                             machine_ours=sum(t.machine_ours for t in compared),
                             machine_upstream=sum(t.machine_upstream for t in compared),
                             rounds=sum(len(t.pairs) for t in compared), targets=targets, what_if=what_if,
                             per_bundle={t.bundle: (t.machine_ours, t.machine_upstream) for t in compared})
    reasons = [r for t in compared for r in judge_rounds(t, targets)]
    ours = sum(t.machine_ours for t in compared)
    theirs = sum(t.machine_upstream for t in compared)
    if compared and not within(ours, theirs, targets.total_machine_pct):
        reasons.append(_reason(f"{len(compared)} bundle(s) summed machine cycles", ours, theirs,
                               targets.total_machine_pct))
    if compared:
        state = TimingState.NOT_MET if reasons else TimingState.MET
    elif timings and all(t.note == NO_REFERENCE for t in timings):
        state, ours = TimingState.NOT_JUDGED, sum(t.machine_ours for t in timings)
        reasons.append("no bundle has a reference timing (timing_rtl.json): not judged, so not met")
    else:
        state = TimingState.NOT_MET
        reasons.append("no bundle with a reference timing (timing_rtl.json) was timed: nothing to judge")
    return TimingVerdict(state, reasons, [t.bundle for t in compared],
                         {t.bundle: t.note for t in timings if not t.compared}, ours, theirs,
                         sum(len(t.pairs) for t in compared), targets)


__all__ = ["BundleTiming", "NO_REFERENCE", "NO_TIMING", "RoundPair", "TARGETS", "Targets",
           "TimingState", "TimingVerdict", "compare", "judge", "judge_rounds", "ratio", "speed_up", "within"]
