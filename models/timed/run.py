"""A bundle on the timed golden models: each round's host and machine cycles, and a table beside upstream's.

Why: the first form of the models' own clock (models/timed) is measured round by round against upstream's
RTL (each bundle's timing_rtl.json) before anything judges with it; this is that measurement, run as
``python -m models.timed DIR... [--timing FACT=VALUE ...]``. The bits of the run are the golden models'
(every unit's timed twin calls the golden take), so the run also fails loudly where they would.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from models.bundle.executor import ExecResult, execute, run_sync
from models.bundle.reader import Bundle
from models.bundle.round_budget import DeliveryBudget
from models.bundle.round_timing import RoundTiming
from models.machine.event_model import Factory
from models.machine.layouts import Machine, UnitKind, get_machine

from .cluster import TimedCluster
from .mag import TimedMag
from .machine import TimedHost, TimedMachine
from .unit import FlitRecord
from .vector import TimedVector


def _facts(timing: Mapping[str, int], *units: str) -> dict[str, int]:
    return {k: v for k, v in timing.items() if k.split(".", 1)[0] in units}


def timed_units(timing: Mapping[str, int] | None = None) -> dict[UnitKind, Factory]:
    """Every unit kind's timed twin, each given the overrides of its own facts (models/machine/unit_timing.py)."""
    t = dict(timing or {})
    vec, mag, cl = _facts(t, "vector"), _facts(t, "mag", "dram"), _facts(t, "cluster")
    return {
        UnitKind.VECTOR: lambda c, mm: TimedVector(c, mm.machine.mag, vec),
        UnitKind.MAG: lambda c, mm: TimedMag(c, mm.dram, base=mm.machine.mem_base, facts=mag),
        UnitKind.CLUSTER: lambda c, mm: TimedCluster(c, mm.machine.mag, cl),
    }


def check_timing(timing: Mapping[str, int] | None) -> None:
    """Refuse (ValueError, one line) an override set the timed units cannot run: a fact's limits, and the
    combinations the RTL's units refuse at elaboration (a drain queue limit past its depth, an intake margin
    past its queue), before anything runs."""
    from models.mag.model import DramImage

    t = dict(timing or {})
    TimedVector((1, 0), (0, 1), _facts(t, "vector"))
    TimedCluster((1, 1), (0, 1), _facts(t, "cluster"))
    TimedMag((0, 1), DramImage(1), facts=_facts(t, "mag", "dram"))


@dataclass
class TimedRun:
    """One bundle on the timed models: the executor's result (its rounds carry the timing) and CPU seconds."""

    bundle: Bundle
    result: ExecResult
    cpu_s: float
    trace: list[FlitRecord] | None = None
    errors: list[str] = field(default_factory=list)  # the units' monitors and FAULT signals, as --models fails on

    @property
    def rounds(self) -> list[RoundTiming]:
        return [r.timing for r in self.result.rounds if r.timing is not None]


def run_timed(b: Bundle, machine: Machine | None = None, timing: Mapping[str, int] | None = None,
              trace: bool = False) -> TimedRun:
    """Every round of `b` on a fresh timed machine through the loader (the executor's own round stamps);
    `trace`: record every flit at its endpoint (TimedRun.trace, models/timed/trace.py)."""
    machine = machine or get_machine(b.meta["machine"]["name"])
    tm = TimedMachine(machine, timed_units(timing))
    if trace:
        tm.trace = []
    t0 = time.process_time()
    res = run_sync(execute(b, TimedHost(tm, DeliveryBudget.of(b, machine)), machine))
    errors = tm.unit_errors() + [f"FAULT signal from {node}: code {code}" for node, code in tm.orch.faults]
    return TimedRun(b, res, time.process_time() - t0, tm.trace, errors)


def trace_lines(run: TimedRun, rtl_trace: Path) -> list[str]:
    """A traced run's flits beside the RTL's flit trace of the same bundle (models/timed/trace.py), each
    endpoint named, the limit 1 % of each flit's round: the report lines."""
    from .trace import compare, model_trace, read_rtl_trace, round_limits

    assert run.trace is not None, "run_timed(..., trace=True) records the flits this compares"
    machine = get_machine(run.bundle.meta["machine"]["name"])
    g = machine.geometry
    limits = round_limits([(r.kicked, r.timing.machine_cycles) for r in run.result.rounds if r.timing])
    cmp = compare(model_trace(run.trace, machine), read_rtl_trace(rtl_trace),
                  g.port_index(machine.coords(UnitKind.ORCH)[0]), limits)
    return cmp.lines({g.port_index(c): f"{k.value} ({c[0]},{c[1]})" for c, k in machine.units.items()})


def table(runs: list[TimedRun]) -> list[str]:
    """Per round: the timed models' machine and host cycles beside upstream's (timing_rtl.json), and the
    ratio; per bundle its total and worst round; last, the corpus's total and the rounds within 1 %."""
    lines = [f"{'bundle':34s} {'round':>5s} unit {'models':>8s} {'upstream':>8s} {'ratio':>6s} {'host':>11s}"]
    n = within = 0
    ours_all = theirs_all = 0
    for run in runs:
        ups = run.bundle.timing_rtl or []
        ours_b = theirs_b = 0
        worst: tuple[float, int] = (1.0, -1)
        for r, u, rnd in zip(run.rounds, ups, run.result.rounds):
            ratio = r.machine_cycles / u.machine_cycles if u.machine_cycles else float("nan")
            lines.append(f"{run.bundle.name:34s} {r.round:5d} {rnd.unit:4s} {r.machine_cycles:8d} "
                         f"{u.machine_cycles:8d} {ratio:6.3f} {r.host_cycles:5d}/{u.host_cycles:<5d}")
            ours_b, theirs_b = ours_b + r.machine_cycles, theirs_b + u.machine_cycles
            n += 1
            within += abs(ratio - 1) <= 0.01
            if abs(ratio - 1) > abs(worst[0] - 1):
                worst = (ratio, r.round)
        if ups:
            lines.append(f"{run.bundle.name:34s} total {ours_b:>13d} {theirs_b:8d} {ours_b / theirs_b:6.3f} "
                         f"worst round {worst[1]} {worst[0]:.3f}; {run.cpu_s:.2f} CPU s")
        ours_all, theirs_all = ours_all + ours_b, theirs_all + theirs_b
    if theirs_all:
        lines.append(f"all: machine cycles {ours_all} models / {theirs_all} upstream ({ours_all / theirs_all:.3f}); "
                     f"{within} of {n} rounds within 1 %")
    return lines


__all__ = ["TimedRun", "check_timing", "run_timed", "table", "timed_units", "trace_lines"]
