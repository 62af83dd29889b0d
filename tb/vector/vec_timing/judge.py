"""The timing half of the replay: each RUN's cycle count and each word's execute time against upstream's.

Per program (`judge_program`): every RUN whose count the record holds
(Record.timed_runs: micro, both RUNs' INST_COMPLETE arg; random, the last
RUN's kernel_cycles) against ours, and every RUN's execute trace against
`result.trace`: the first word whose pc or execute time differs is named with
its disassembly, which is where the rule at fault shows (clients/vec_timing/
latency.md lists upstream's rules). A program is *exact* when every count and
every execute time agree.

Per set (`summarize`): programs, exact, within ±2 cycles, the median and 95th
percentile of the per-program relative error (the largest |ours − upstream| /
upstream over its timed RUNs; median of an even count: the mean of the middle
two; p95: the nearest-rank value, the ceil(0.95·n)-th smallest), the worst
program, and the verdict against the set's target:
  micro   every program within ±2 cycles on every timed RUN;
  random  median relative error ≤ 2 %, 95th percentile ≤ 10 %.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from models.vector import isa
from models.vector.disasm import disassemble
from models.vector.isa import Word
from tb.vector.vec_timing.records import Record

MICRO_TOLERANCE = 2  # cycles, every timed RUN of every directed program
RANDOM_MEDIAN = 0.02  # relative error, median over the random programs
RANDOM_P95 = 0.10  # relative error, 95th percentile
WITHIN = 2  # the summary's "within" column, cycles


@dataclass(frozen=True)
class WordDiff:
    """The first executed word whose pc or execute time differs (None: that side has no such word)."""

    index: int
    ours: tuple[int, int] | None  # (pc, t)
    upstream: tuple[int, int] | None
    text: str  # the upstream word's disassembly (ours when upstream has none)

    def describe(self) -> str:
        def side(v: tuple[int, int] | None) -> str:
            return "no word" if v is None else f"pc {v[0]} at t={v[1]}"
        return f"word {self.index}: ours {side(self.ours)}, upstream {side(self.upstream)} ({self.text})"


@dataclass(frozen=True)
class RunTiming:
    """One RUN: its start pc, both cycle counts (None where not known), the first differing word."""

    run: int
    pc: int
    ours: int | None
    upstream: int | None
    first_diff: WordDiff | None

    @property
    def timed(self) -> bool:
        return self.upstream is not None

    @property
    def error(self) -> int | None:
        """ours - upstream (None if not timed, or if ours is unknown)."""
        return None if self.upstream is None or self.ours is None else self.ours - self.upstream


@dataclass(frozen=True)
class ProgramTiming:
    """One program's timing verdict."""

    id: str
    set: str
    runs: tuple[RunTiming, ...]

    @property
    def timed(self) -> tuple[RunTiming, ...]:
        return tuple(r for r in self.runs if r.timed)

    @property
    def abs_error(self) -> float:
        """The largest |ours - upstream| over the timed RUNs (inf if a count of ours is missing)."""
        errs = [math.inf if r.error is None else abs(r.error) for r in self.timed]
        return max(errs, default=0)

    @property
    def rel_error(self) -> float:
        """The largest |ours - upstream| / upstream over the timed RUNs."""
        errs = [math.inf if r.error is None else abs(r.error) / max(r.upstream or 0, 1) for r in self.timed]
        return max(errs, default=0.0)

    @property
    def exact(self) -> bool:
        return self.abs_error == 0 and all(r.first_diff is None for r in self.runs)

    def within(self, cycles: int) -> bool:
        return self.abs_error <= cycles

    def describe(self) -> str:
        """One line: each RUN's counts and, where the run differs, its first differing word."""
        parts = []
        for r in self.runs:
            counts = (f"{r.ours if r.ours is not None else '?'} vs {r.upstream}" if r.timed
                      else "no count (faulted)")
            diff = f"; first difference {r.first_diff.describe()}" if r.first_diff else ""
            parts.append(f"RUN {r.run} (pc {r.pc}): {counts}{diff}")
        return f"{self.id}: " + " | ".join(parts)


def first_difference(ours: Sequence[tuple[int, int]], upstream: Sequence[tuple[int, int]]) -> int | None:
    """Index of the first (pc, t) that differs, or where one trace ends before the other; None if equal."""
    for k, (a, b) in enumerate(zip(ours, upstream)):
        if tuple(a) != tuple(b):
            return k
    return None if len(ours) == len(upstream) else min(len(ours), len(upstream))


def word_text(rec: Record, pc: int) -> str:
    """The disassembly of the record's word at pc (a VSETI with its immediate)."""
    if pc not in rec.imem:
        return "not loaded"
    w = rec.imem[pc]
    imm = rec.imem.get(pc + 1) if Word(w).op == isa.OP_VSETI else None
    return disassemble(w, imm)


def judge_program(rec: Record, counts: Sequence[int | None], traces: Sequence[Sequence[tuple[int, int]]]) -> ProgramTiming:
    """Our per-RUN counts (None where unknown) and execute traces against the record's."""
    upstream = dict(rec.timed_runs())
    runs = []
    for k, want in enumerate(rec.result.trace):
        ours_trace = list(traces[k]) if k < len(traces) else []
        idx = first_difference(ours_trace, want.words)
        diff = None
        if idx is not None:
            o = tuple(ours_trace[idx]) if idx < len(ours_trace) else None
            u = tuple(want.words[idx]) if idx < len(want.words) else None
            diff = WordDiff(idx, o, u, word_text(rec, (u or o)[0]))
        runs.append(RunTiming(k, want.pc, counts[k] if k < len(counts) else None, upstream.get(k), diff))
    return ProgramTiming(rec.id, rec.set, tuple(runs))


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    return math.nan if n == 0 else (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2)


def nearest_rank(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return math.nan if not s else s[max(1, math.ceil(q * len(s))) - 1]


@dataclass(frozen=True)
class SetSummary:
    """The timing figures of one set and its verdict against the target."""

    set: str
    programs: int
    exact: int
    within: int
    median: float
    p95: float
    worst: ProgramTiming | None
    failures: tuple[str, ...]  # why the target is not met (empty: met)

    @property
    def met(self) -> bool:
        return not self.failures

    def line(self) -> str:
        worst = (f"worst {self.worst.id} ({100 * self.worst.rel_error:.1f} %, "
                 + ", ".join(f"{r.ours} vs {r.upstream}" for r in self.worst.timed) + ")") if self.worst else "worst -"
        return (f"{self.set}: {self.programs} programs, {self.exact} exact, {self.within} within ±{WITHIN} cycles, "
                f"relative error median {100 * self.median:.1f} % p95 {100 * self.p95:.1f} %, {worst}; "
                f"target {target_text(self.set)}: {'met' if self.met else 'NOT met'}")


def target_text(set_name: str) -> str:
    if set_name == "micro":
        return f"every program within ±{MICRO_TOLERANCE} cycles"
    return f"median ≤ {100 * RANDOM_MEDIAN:.0f} %, p95 ≤ {100 * RANDOM_P95:.0f} %"


def summarize(set_name: str, programs: Sequence[ProgramTiming]) -> SetSummary:
    """The set's figures and its verdict (a set with no program does not meet its target)."""
    rel = [p.rel_error for p in programs]
    med, p95 = median(rel), nearest_rank(rel, 0.95)
    failures: list[str] = []
    if not programs:
        failures.append("no program was judged")
    elif set_name == "micro":
        off = [p for p in programs if not p.within(MICRO_TOLERANCE)]
        if off:
            failures.append(f"{len(off)} of {len(programs)} programs off by more than ±{MICRO_TOLERANCE} cycles, "
                            f"first {off[0].describe()}")
    else:
        if not med <= RANDOM_MEDIAN:
            failures.append(f"median relative error {100 * med:.1f} % > {100 * RANDOM_MEDIAN:.0f} %")
        if not p95 <= RANDOM_P95:
            failures.append(f"95th percentile relative error {100 * p95:.1f} % > {100 * RANDOM_P95:.0f} %")
    worst = max(programs, key=lambda p: p.rel_error) if programs else None
    return SetSummary(set_name, len(programs), sum(p.exact for p in programs),
                      sum(p.within(WITHIN) for p in programs), med, p95, worst, tuple(failures))


__all__ = ["MICRO_TOLERANCE", "RANDOM_MEDIAN", "RANDOM_P95", "ProgramTiming", "RunTiming", "SetSummary", "WordDiff",
           "first_difference", "judge_program", "median", "nearest_rank", "summarize", "target_text", "word_text"]
