"""What one compiled bundle's run looked like, as rows a person reads: per round and per bundle.

Why a module of its own: the RTL bench (tb/bundle/test_clients.py) stores
these rows in its artifacts and the command line (``python -m tb.client``)
prints them, for RTL runs and for runs on the golden models alike, so both
print one table from one definition. Plain data (JSON-able dicts), no cocotb.

Per round: index, name, unit, slots staged, flits kicked, the round's cycles
(on the machine model: network deliveries, it has no clock), awaits met (nodes
whose count, once the writes landed, is exactly baseline + expected) of awaits
made, the signals the plan awaited, the host relayouts run after the round
and, on the RTL, the round's timing beside upstream's (models/bundle/timing.py).
Per bundle: the verdict, the number of failures, lanes differing from each
reference, the worst error against the float64 bound derived from the
bundle's own run (models/bundle/lane_bound.py, models/bundle/bound) and that bound's
source, total cycles, wall seconds and the machine cycles against upstream's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from models.bundle.bound.ledger import OpLoss
from models.bundle.calls import kernel_calls
from models.bundle.kernel_judge import KernelVerdict, ProgramError, program_error, where_it_arises
from models.bundle.reader import Bundle
from models.bundle.lane_bound import BOUND_SOURCE, bound_check
from models.bundle.judge import NOT_JUDGED, kernel_verdicts, lanes_vs_models, lanes_vs_rtl, one_kernel, op_losses
from models.bundle.models_beside import ModelsBeside
from models.bundle.timing import NO_REFERENCE, NO_TIMING, BundleTiming, compare, ratio, speed_up
from models.bundle.executor import ExecResult
from models.bundle.loader import COUNT_MOD
from models.bundle.round_timing import RoundTiming


LOSSES_SHOWN = 3  # operations named for the kernel whose error is the largest


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
    timing: dict[str, Any] | None = None  # RoundTiming.to_json() on a clock of cycles (the RTL), else None
    dram_read: int | None = None  # bytes the units moved through the DRAM's ports during the round
    dram_written: int | None = None


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
    bound_worst: float | None = None  # max |y - ref| / bound over the lanes (models/bundle/lane_bound.py)
    bound_note: str | None = None  # why no float64 bound could be derived (a word the analysis has no rule for)
    extra: dict[str, Any] = field(default_factory=dict)
    bound_source: str = BOUND_SOURCE  # where the bound comes from ("derived": models/bundle/bound)
    bound_max: float | None = None  # the largest bound of a judged lane
    upstream_timing: list[dict[str, Any]] | None = None  # the bundle's timing_rtl.json rounds; None: no reference
    kernels: list[dict[str, Any]] = field(default_factory=list)  # KernelVerdict.to_json() per kernel call
    program: list[dict[str, Any]] = field(default_factory=list)  # ProgramError.to_json() per output port
    calls: list[dict[str, Any]] = field(default_factory=list)  # per call: index, kernel, rounds, dispatches
    losses: list[dict[str, Any]] = field(default_factory=list)  # OpLoss.to_json(): each operation's own error

    @property
    def verdict(self) -> str:
        """PASS, FAIL, or NOT JUDGED when what failed is that nothing (or an output) was judged at all."""
        if self.passed:
            return "PASS"
        return NOT_JUDGED if any(f.startswith(NOT_JUDGED) for f in self.failures) else "FAIL"

    @property
    def timed(self) -> bool:
        """Whether the run's clock is cycles: the RTL's, or the timed golden models' (models/timed) when their
        rounds were timed; the untimed golden models count network deliveries."""
        return self.machine == "rtl" or any(r.timing is not None for r in self.rows)

    def timing(self) -> BundleTiming:
        """Our rounds beside upstream's (models/bundle/timing.py), or why they cannot be compared."""
        ours = [RoundTiming.from_json(r.timing) if r.timing else None for r in self.rows] if self.timed else None
        theirs = None if self.upstream_timing is None else [RoundTiming.from_json(t) for t in self.upstream_timing]
        return compare(self.bundle, [r.unit for r in self.rows], ours, theirs)

    @classmethod
    def of_run(cls, b: Bundle, res: ExecResult, machine: str, failures: list[str], wall_s: float, checks: int,
               extra: dict[str, Any] | None = None, timed: bool | None = None) -> "BundleReport":
        """The report of a finished run (RTL or models): rows, lanes against both references, the bound.
        `timed`: the rounds' timing is cycles (default: on the RTL only; the models when the timed models
        stamped them)."""
        assert res.image is not None
        vs_rtl, (bounds, no_bound) = lanes_vs_rtl(b, res.image), bound_check(b, res.image)
        kernels = kernel_verdicts(b, res) or []
        # one kernel: its outputs against the bundle's float64 reference; many: end to end the bound compounds,
        # so the kernels' own verdicts are the figure
        judged = [(r.worst, r.bound_max) for r in bounds] if one_kernel(b) else \
            [(v.worst, v.bound_max) for v in kernels if v.lanes]
        worst = max((w for w, _ in judged), default=None)
        bound_max = max((m for _, m in judged), default=None)
        return cls(b.name, machine, not failures, list(failures[:20]), round_rows(res, machine == "rtl" if timed is None else timed),
                   res.cycles,
                   wall_s, checks, sum(r.nbytes // 2 for r in b.outputs.values()),
                   None if vs_rtl is None else sum(vs_rtl.values()), sum(lanes_vs_models(b, res.image).values()),
                   worst, no_bound, dict(extra or {}),
                   bound_source=BOUND_SOURCE if one_kernel(b) else f"{BOUND_SOURCE}, per kernel",
                   bound_max=bound_max,
                   upstream_timing=None if b.timing_rtl is None else [t.to_json() for t in b.timing_rtl],
                   kernels=[v.to_json() for v in kernels], program=[e.to_json() for e in program_error(b, res.image)],
                   calls=call_rows(b), losses=[e.to_json() for e in op_losses(b)])

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "BundleReport":
        d = dict(d)
        d["rows"] = [RoundRow(**r) for r in d["rows"]]
        return cls(**d)


def call_rows(b: Bundle) -> list[dict[str, Any]]:
    """Per kernel call: index, kernel, rounds and dispatches (the stages its rounds belong to)."""
    stage = {int(p["round"]): p.get("stage") for p in b.meta["plan"] if p["kind"] == "round"}
    return [{"index": c.index, "kernel": c.kernel, "rounds": list(c.rounds),
             "dispatches": len({stage.get(r, r) for r in c.rounds})} for c in kernel_calls(b.meta)]


def round_rows(res: ExecResult, timed: bool) -> list[RoundRow]:
    """One row per round of a finished run; with `timed` (a clock of cycles), each round's timing."""
    rows = []
    for r in res.rounds:
        met = sum(1 for n in r.after
                  if r.after[n] == (r.baselines[n] + r.expected.get(n, 0)) % COUNT_MOD)
        rows.append(RoundRow(r.index, r.name, r.unit, r.staged, r.kicked, r.cycles, met, len(r.expected),
                             sum(r.expected.values()), r.relayouts,
                             r.timing.to_json() if timed and r.timing is not None else None, r.dram_read,
                             r.dram_written))
    return rows


def _pair(ours: int | None, upstream: int | None) -> str:
    return f"{'-' if ours is None else ours}/{'-' if upstream is None else upstream}"


def format_rounds(rep: BundleReport) -> str:
    """The per-round table of one bundle; on the RTL with each round's host and machine cycles, ours beside
    upstream's, and the machine ratio (ours / upstream)."""
    clock = "cycles" if rep.timed else "deliveries"
    timing = f" {'host ours/upstream':>18s} {'machine ours/upstream':>21s} {'ratio':>6s}" if rep.timed else ""
    head = (f"  {'round':>5s}  {'unit':4s} {'staged':>6s} {'flits':>6s} {clock:>10s} {'awaits met':>11s} "
            f"{'relayouts':>9s}{timing}  name")
    theirs = {t["round"]: RoundTiming.from_json(t) for t in rep.upstream_timing or []}
    lines = [head]
    for r in rep.rows:
        cols = ""
        if rep.timed:
            mine, up = (RoundTiming.from_json(r.timing) if r.timing else None), theirs.get(r.round)
            rate = f"{ratio(mine.machine_cycles, up.machine_cycles):.3f}" if mine and up else "-"
            cols = (f" {_pair(mine and mine.host_cycles, up and up.host_cycles):>18s} "
                    f"{_pair(mine and mine.machine_cycles, up and up.machine_cycles):>21s} {rate:>6s}")
        lines.append(f"  {r.round:5d}  {r.unit:4s} {r.staged:6d} {r.flits:6d} {r.cycles:10d} "
                     f"{f'{r.awaits_met}/{r.awaits}':>11s} {r.relayouts:9d}{cols}  {r.name}")
    return "\n".join(lines)


def format_timing(rep: BundleReport) -> str:
    """One line: the bundle's machine cycles, ours beside upstream's, the ratio and the worst round; or why
    there is no comparison. An RTL run held to the timed golden models too gets their line below it
    (models/bundle/models_beside.py), with or without upstream's figures."""
    head = _timing_line(rep, rep.timing())
    beside = rep.extra.get("models_beside")
    return head if beside is None else head + "\n" + ModelsBeside.from_json(beside).line()


def _timing_line(rep: BundleReport, t: BundleTiming) -> str:
    if t.note == NO_TIMING:
        return f"  timing: {NO_TIMING} (a run on the golden models: their clock is network deliveries, not cycles)"
    if t.note == NO_REFERENCE:
        return (f"  timing: {NO_REFERENCE} (the bundle has no timing_rtl.json); machine cycles "
                f"{t.machine_ours} ours")
    if t.note:
        return f"  timing: {t.note}"
    what_if = rep.extra.get("timing_overrides", "")
    if what_if:  # our machine had other timing facts: compared with upstream's, not judged
        return (f"  timing what-if ({what_if}): machine cycles {t.machine_ours} ours / {t.machine_upstream} "
                f"upstream's at its own timing, speed-up {speed_up(t.machine_ours, t.machine_upstream)}")
    w = t.worst
    assert w is not None  # a compared bundle has at least one round
    return (f"  timing: machine cycles {t.machine_ours} ours / {t.machine_upstream} upstream, ratio "
            f"{t.machine_ratio:.3f}; worst round {w.round} ({w.unit}): {w.ours.machine_cycles} / "
            f"{w.upstream.machine_cycles}, ratio {w.machine_ratio:.3f}")


def format_table(reports: Iterable[BundleReport]) -> str:
    """One row per bundle: verdict, rounds, cycles (load to readback; deliveries on the models), machine cycles
    ours and upstream's, their ratio and the worst round's ratio ("no timing" on the golden models, "no
    reference" without timing_rtl.json)."""
    reps = list(reports)
    clock = "cycles" if any(rep.timed for rep in reps) else "deliveries"
    lines = [f"  {'bundle':34s} {'verdict':7s} {'rounds':>6s} {clock:>10s} {'machine ours':>12s} "
             f"{'upstream':>12s} {'ratio':>6s} {'worst round':>13s}"]
    for rep in reps:
        t = rep.timing()
        if t.compared and t.worst is not None:
            cols = (f"{t.machine_ours:12d} {t.machine_upstream:12d} {t.machine_ratio:6.3f} "
                    f"{f'r{t.worst.round} {t.worst.machine_ratio:.3f}':>13s}")
        elif t.note == NO_REFERENCE:
            cols = f"{t.machine_ours:12d} {NO_REFERENCE:>12s} {'-':>6s} {'-':>13s}"
        else:
            cols = f"{NO_TIMING if t.note == NO_TIMING else 'not measured':>12s} {'-':>12s} {'-':>6s} {'-':>13s}"
        lines.append(f"  {rep.bundle:34s} {rep.verdict:7s} {len(rep.rows):6d} "
                     f"{rep.cycles:10d} {cols}")
    return "\n".join(lines)


def format_bound(rep: BundleReport) -> str:
    """One line: the float64 bound's verdict (worst |y - ref| / bound, the largest bound) and its source; for
    a program of many kernels, the kernels' own verdicts (worst and least worst |y - exact| / bound)."""
    if rep.bound_worst is None:
        return f"  float64 bound ({rep.bound_source}): none ({rep.bound_note or 'no output read'})"
    judged = [KernelVerdict.from_json(k) for k in rep.kernels if k["lanes"]]
    if len(rep.kernels) > 1 and judged:
        lo = min(judged, key=lambda v: v.worst)
        hi = max(judged, key=lambda v: v.worst)
        return (f"  float64 bound ({rep.bound_source}): {len(judged)} kernel(s), {sum(v.lanes for v in judged)} "
                f"lanes judged against float64 on the values each read; worst |y - exact|/bound {hi.worst:.3g} "
                f"({hi.label}), least {lo.worst:.3g} ({lo.label}); largest bound "
                f"{rep.bound_max if rep.bound_max is not None else float('nan'):.3g}")
    extra = ""
    if judged:
        extra = f"; every lane the kernel produced: worst |y - exact|/bound {judged[0].worst:.3g}"
    return (f"  float64 bound ({rep.bound_source}): worst |y - ref|/bound {rep.bound_worst:.3g}, largest bound "
            f"{rep.bound_max if rep.bound_max is not None else float('nan'):.3g}{extra}")


def _kernel_cycles(rep: BundleReport, rounds: list[int]) -> tuple[int | None, int | None, int]:
    """A kernel's machine cycles, ours (None off the RTL) and upstream's (None without timing_rtl.json), and
    our clock's count (cycles on the RTL, deliveries on the models) over its rounds."""
    rows = {r.round: r for r in rep.rows}
    theirs = {t["round"]: t for t in rep.upstream_timing or []}
    mine = [rows[r] for r in rounds if r in rows]
    ours = sum(int(r.timing["machine_cycles"]) for r in mine if r.timing) if rep.timed and mine else None
    up = sum(int(theirs[r]["machine_cycles"]) for r in rounds if r in theirs) if theirs else None
    return ours, up, sum(r.cycles for r in mine)


def format_kernels(rep: BundleReport) -> str:
    """Per kernel call: dispatches, rounds, machine cycles ours and upstream's (deliveries on the models), DRAM
    bytes the units moved, the kernel's share of the total; then its lanes judged and its worst error against
    its own bound, and where that lane is."""
    verdicts = {int(k["call"]): KernelVerdict.from_json(k) for k in rep.kernels}
    clock = "machine ours" if rep.timed else "deliveries"
    head = (f"  {'kernel':22s} {'disp':>4s} {'rounds':>6s} {clock:>12s} {'upstream':>9s} {'share':>6s} "
            f"{'DRAM bytes':>10s} {'lanes':>6s} {'err/bound':>9s}  worst at")
    per = [(c, *_kernel_cycles(rep, c["rounds"])) for c in rep.calls]
    total = sum((ours if rep.timed else count) or 0 for c, ours, up, count in per) or 1
    lines = [head]
    for c, ours, up, count in per:
        mine = ours if rep.timed else count
        moved = [r for r in rep.rows if r.round in set(c["rounds"]) and r.dram_read is not None]
        dram = f"{sum((r.dram_read or 0) + (r.dram_written or 0) for r in moved)}" if moved else "-"
        v = verdicts.get(int(c["index"]))
        idle = "nothing it produced reached DRAM (its results stayed in the units)"
        judged = (f"{v.lanes:6d} {v.worst:9.3g}  {v.worst_at}" if v and v.lanes else
                  f"{(v.lanes if v else 0):6d} {'-':>9s}  {(v.missing or idle) if v else ''}")
        lines.append(f"  {str(c['index']) + ':' + c['kernel']:22s} {c['dispatches']:4d} {len(c['rounds']):6d} "
                     f"{'-' if mine is None else mine:>12} {'-' if up is None else up:>9} "
                     f"{100.0 * (mine or 0) / total:5.1f}% {dram:>10s} {judged}")
    return "\n".join(lines)


def format_program(rep: BundleReport) -> list[str]:
    """The whole program's outputs against the bundle's float64 reference (a figure, beside upstream's
    Python models' error) and, for a program of many kernels, the kernel whose own error is the largest."""
    lines = []
    judged = ", judged within the bound above" if len(rep.kernels) <= 1 else ", not judged"
    for d in rep.program:
        e = ProgramError(**d)
        models = "-" if e.models_err_max is None else f"{e.models_err_max:.3g}"
        lines.append(f"  whole program against {e.port}__ref (float64{judged}): max |y - ref| {e.err_max:.3g} "
                     f"at {e.at} ({e.rel:.2g} of max |ref| {e.ref_max:.3g}); upstream's Python models {models}")
    src = where_it_arises([KernelVerdict.from_json(k) for k in rep.kernels])
    if len(rep.kernels) > 1 and src is not None:
        lines.append(f"  largest kernel error: {src.label}, max |y - exact| {src.err_max:.3g} at {src.err_at} "
                     f"({src.rel_err:.2g} of its results' scale {src.scale:.3g}; within its own bound: worst "
                     f"|y - exact|/bound {src.worst:.3g})")
        ops = sorted((OpLoss(**d) for d in rep.losses if d["call"] == src.call and d["lossy"]),
                     key=lambda e: -e.rel_max)[:LOSSES_SHOWN]
        if ops:
            lines.append(f"    its operations' own rounding, the largest relative loss first: " + "; ".join(
                f"{e.op} {e.rel_max:.3g} of its scale {e.rel_value:.3g} ({e.lossy} of {e.lanes} lane(s) rounded, "
                f"at most {e.abs_max:.3g})" for e in ops))
    return lines


def format_verdict(rep: BundleReport) -> str:
    """One line: PASS/FAIL, the bundle, the machine, checks, the lanes against both references, time."""
    vs_rtl = "-" if rep.lanes_vs_rtl is None else f"{rep.lanes_vs_rtl}"
    vs_mod = "-" if rep.lanes_vs_models is None else f"{rep.lanes_vs_models}"
    word = "PASS" if rep.passed else f"{rep.verdict} ({len(rep.failures)} failure(s))"
    clock = "cycles" if rep.timed else "deliveries"
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
    idle = [r.bundle for r in reps if r.verdict == NOT_JUDGED]
    failed = [name for name in bad if name not in idle]
    parts = [f"{len(failed)} of {len(reps)} bundle(s) FAILED: {', '.join(failed)}"] if failed else []
    parts += [f"{len(idle)} of {len(reps)} bundle(s) {NOT_JUDGED}: {', '.join(idle)}"] if idle else []
    return "; ".join(parts)


__all__ = ["BundleReport", "RoundRow", "call_rows", "format_bound", "format_kernels", "format_program", "format_rounds",
           "format_summary", "format_table", "format_timing", "format_verdict", "round_rows"]
