"""What one compiled bundle's run looked like, as rows a person reads: per round and per bundle.

Why a module of its own: the RTL bench (tb/system/test_clients.py) stores
these rows in its artifacts and the command line (``python -m tb.client``)
prints them, for RTL runs and for runs on the golden models alike, so both
print one table from one definition. Plain data (JSON-able dicts), no cocotb.

Per round: index, name, unit, slots staged, flits kicked, the round's cycles
(on the machine model: network deliveries, it has no clock), awaits met (nodes
whose count, once the writes landed, is exactly baseline + expected) of awaits
made, the signals the plan awaited, and the host relayouts run after the round. Per bundle: the verdict, the number of
failures, lanes differing from each reference, the worst error against the
float64 bound derived from the bundle's own run (models/client_bound.py,
models/bound) and that bound's source, total cycles and wall seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from models.bundle import Bundle
from models.client_bound import BOUND_SOURCE, bound_check
from models.client_judge import lanes_vs_models, lanes_vs_rtl
from models.executor import ExecResult
from models.loader import COUNT_MOD


@dataclass(frozen=True)
class RoundRow:
    round: int
    name: str
    unit: str
    staged: int
    flits: int
    cycles: int
    awaits_met: int
    awaits: int
    signals: int
    relayouts: int = 0


@dataclass
class BundleReport:
    """One bundle's run on one machine ("rtl" or "models")."""

    bundle: str
    machine: str
    passed: bool
    failures: list[str]
    rows: list[RoundRow]
    cycles: int
    wall_s: float
    checks: int = 0
    lanes: int = 0  # FP16 output lanes
    lanes_vs_rtl: int | None = None  # lanes differing from upstream's RTL (expected_rtl.npz)
    lanes_vs_models: int | None = None  # lanes differing from upstream's Python models (expected.npz)
    bound_worst: float | None = None  # max |y - ref| / bound over the lanes (models/client_bound.py)
    bound_note: str | None = None  # why no float64 bound could be derived (a word the analysis has no rule for)
    extra: dict[str, Any] = field(default_factory=dict)
    bound_source: str = BOUND_SOURCE  # where the bound comes from ("derived": models/bound)
    bound_max: float | None = None  # the largest bound of a judged lane

    @classmethod
    def of_run(cls, b: Bundle, res: ExecResult, machine: str, failures: list[str], wall_s: float, checks: int,
               extra: dict[str, Any] | None = None) -> "BundleReport":
        """The report of a finished run (RTL or models): rows, lanes against both references, the bound."""
        assert res.image is not None
        vs_rtl, bounds_and_note = lanes_vs_rtl(b, res.image), bound_check(b, res.image)
        bounds, no_bound = bounds_and_note
        return cls(b.name, machine, not failures, list(failures[:20]), round_rows(res), res.cycles, wall_s, checks,
                   sum(r.nbytes // 2 for r in b.outputs.values()),
                   None if vs_rtl is None else sum(vs_rtl.values()), sum(lanes_vs_models(b, res.image).values()),
                   max((r.worst for r in bounds), default=None), no_bound, dict(extra or {}),
                   bound_max=max((r.bound_max for r in bounds), default=None))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "BundleReport":
        d = dict(d)
        d["rows"] = [RoundRow(**r) for r in d["rows"]]
        return cls(**d)


def round_rows(res: ExecResult) -> list[RoundRow]:
    """One row per round of a finished run."""
    rows = []
    for r in res.rounds:
        met = sum(1 for n in r.after
                  if r.after[n] == (r.baselines[n] + r.expected.get(n, 0)) % COUNT_MOD)
        rows.append(RoundRow(r.index, r.name, r.unit, r.staged, r.kicked, r.cycles, met, len(r.expected),
                             sum(r.expected.values()), r.relayouts))
    return rows


def format_rounds(rep: BundleReport) -> str:
    """The per-round table of one bundle."""
    clock = "cycles" if rep.machine == "rtl" else "deliveries"
    head = f"  {'round':>5s}  {'unit':4s} {'staged':>6s} {'flits':>6s} {clock:>10s} {'awaits met':>11s} {'relayouts':>9s}  name"
    lines = [head]
    for r in rep.rows:
        lines.append(f"  {r.round:5d}  {r.unit:4s} {r.staged:6d} {r.flits:6d} {r.cycles:10d} "
                     f"{f'{r.awaits_met}/{r.awaits}':>11s} {r.relayouts:9d}  {r.name}")
    return "\n".join(lines)


def format_bound(rep: BundleReport) -> str:
    """One line: the float64 bound's verdict (worst |y - ref| / bound, the largest bound) and its source."""
    if rep.bound_worst is None:
        return f"  float64 bound ({rep.bound_source}): none ({rep.bound_note or 'no output read'})"
    return (f"  float64 bound ({rep.bound_source}): worst |y - ref|/bound {rep.bound_worst:.3g}, largest bound "
            f"{rep.bound_max if rep.bound_max is not None else float('nan'):.3g}")


def format_verdict(rep: BundleReport) -> str:
    """One line: PASS/FAIL, the bundle, the machine, checks, the lanes against both references, time."""
    vs_rtl = "-" if rep.lanes_vs_rtl is None else f"{rep.lanes_vs_rtl}"
    vs_mod = "-" if rep.lanes_vs_models is None else f"{rep.lanes_vs_models}"
    word = "PASS" if rep.passed else f"FAIL ({len(rep.failures)} failure(s))"
    clock = "cycles" if rep.machine == "rtl" else "deliveries"
    bound = "-" if rep.bound_worst is None else f"{rep.bound_worst:.3g} ({rep.bound_source})"
    return (f"{word} {rep.bundle} on {rep.machine}: {rep.checks} checks, lanes differing from expected_rtl "
            f"{vs_rtl} / from expected {vs_mod} of {rep.lanes}, worst error/bound {bound}, {rep.cycles} {clock}, "
            f"{rep.wall_s:.2f} s")


def format_summary(reports: Iterable[BundleReport]) -> str:
    """The closing line over every bundle of one command."""
    reps = list(reports)
    bad = [r.bundle for r in reps if not r.passed]
    if not bad:
        return f"all {len(reps)} bundle(s) passed"
    return f"{len(bad)} of {len(reps)} bundle(s) FAILED: {', '.join(bad)}"


__all__ = ["BundleReport", "RoundRow", "format_bound", "format_rounds", "format_summary", "format_verdict",
           "round_rows"]
