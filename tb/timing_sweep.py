"""Timing sweeps: compiled programs on machines whose timing facts take several values (make sweep).

Why: an architect asks what a unit's timing is worth: what would a memory agent
answering sooner, or a vector core fetching faster, do for the forward pass and
for a matmul? One ``--timing`` run answers for one machine; a sweep runs the
bundles on every point of a grid of timing facts (models/machine/unit_timing.py)
and tables the machine cycles and the speed-up of each point against the
machine at upstream's timing, run in the same sweep as its first point.

``make sweep FACT=mag.R_FIFO_LAT VALUES=1,2,3,6 BUNDLES='clients/model/*/' RTL=1``
(several facts crossed: ``FACT=a,b VALUES='1,2;4,8'``, a value list per fact):

* every point is one task on the project's Dask engine (tb/farm: a local
  cluster of JOBS workers by default, ``SCHEDULER=tcp://...`` for a cluster);
  a point runs every bundle on the RTL machine built with its overrides (each
  point's build kept in its own folder, tb.client's ``timing-<facts>``), with
  every check of a ``tb.client run``: a bundle that fails is reported failed at
  that point, never tabled as a figure;
* the table (bundle x point: machine cycles, speed-up = cycles at upstream's
  timing / cycles at the point) is printed and written with a PNG plot into
  ``sim_build/sweep/`` (``OUT=`` for another folder);
* the points run on the timed golden models by default (models/timed: every
  round of the 24 bundles of clients/ within 1 % of the RTL's cycles, at
  upstream's timing and under overrides of each fact family; their bits judged
  as ``tb.client run --models`` judges them), or on the RTL with ``RTL=1`` (on
  ``SIM``).
A bad fact, value, margin or bundle folder is refused in one line before any point runs. A machine much
slower than upstream's may outrun the cycle limits, which start from upstream's cycles: ``MARGIN=<factor>``
(``--cycle-margin``) raises them for every point, as ``tb.client run --cycle-margin`` does.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models.bundle.reader import Bundle
from models.machine.unit_timing import FACTS, canonical, parse_overrides
from tb.bundle.cycle_limits import override_env
from tb.farm.calls import CallFailure
from tb.run.benches import ROOT
from tb.run.options import BadInput, parse_jobs

SWEEP_ROOT = ROOT / "sim_build" / "sweep"
BASE = "upstream's timing"  # the first point: no override


@dataclass(frozen=True)
class Point:
    """One machine of the grid: its overrides (fact, value) in the facts' order; the bundles and the run."""

    timing: tuple[tuple[str, int], ...]
    bundles: tuple[str, ...]
    sim: str
    build: str
    seed: int
    margin: str | None = None  # the cycle limits' factor over upstream's cycles (tb/bundle/cycle_limits.py)
    rtl: bool = True  # the RTL machine on `sim`; False: the timed golden models (models/timed)

    @property
    def label(self) -> str:
        return canonical(dict(self.timing)) or BASE


@dataclass(frozen=True)
class Cell:
    """One bundle at one point: its verdict, machine cycles ours, and its first failure when it failed."""

    bundle: str
    passed: bool
    machine: int
    failure: str = ""


def grid(facts: Sequence[str], values: Sequence[Sequence[int]]) -> list[dict[str, int]]:
    """The overrides of every point: upstream's timing first, then the facts' values crossed."""
    return [{}] + [dict(zip(facts, combo)) for combo in itertools.product(*values)]


def parse_grid(fact_spec: str, value_spec: str) -> list[dict[str, int]]:
    """FACT=a,b and VALUES='1,2;4,8' as the grid's points; ValueError in one line (the fact, its limits)."""
    facts = [f.strip() for f in fact_spec.split(",") if f.strip()]
    lists = [[v.strip() for v in part.split(",") if v.strip()] for part in value_spec.split(";")]
    if not facts:
        raise ValueError("FACT is empty: name a timing fact, e.g. FACT=mag.R_FIFO_LAT (models/machine/unit_timing.py)")
    if len(lists) != len(facts) or any(not vs for vs in lists):
        raise ValueError(f"VALUES={value_spec!r}: give one non-empty comma-separated list per fact of "
                         f"FACT={fact_spec!r}, the lists separated by ';' (e.g. VALUES='1,2;4,8' for two facts)")
    checked = [[parse_overrides([f"{fact}={v}"], "VALUES:")[fact] for v in vs] for fact, vs in zip(facts, lists)]
    return grid(facts, checked)


def bundle_dirs(specs: Sequence[str]) -> list[Path]:
    """The bundle folders the specs (folders or glob patterns) name, each once, every one read and checked as
    `tb.client run` checks it (tb.client.resolve); ValueError in one line when none, or one is not a bundle."""
    from tb.client import Refused, resolve

    out: list[str] = []
    for spec in specs:
        for hit in sorted(glob.glob(spec)) or [spec]:
            if not (Path(hit) / "bundle.json").is_file():
                raise ValueError(f"BUNDLES: {hit} holds no bundle.json; give bundle folders or a pattern of them "
                                 f"(e.g. BUNDLES='clients/model/*/')")
            if str(Path(hit).resolve()) not in out:
                out.append(str(Path(hit).resolve()))
    if not out:
        raise ValueError("BUNDLES is empty: give bundle folders or a pattern (e.g. BUNDLES='clients/model/*/')")
    try:
        return [b.path for b in resolve(out, rtl=True)]
    except Refused as exc:
        raise ValueError(f"BUNDLES: {exc}") from None


def run_point(point: Point) -> list[Cell]:
    """Every bundle on the machine of `point` (a task on a worker): one cell per bundle, in order."""
    return run_point_rtl(point) if point.rtl else run_point_models(point)


def run_point_models(point: Point) -> list[Cell]:
    """Every bundle on the timed golden models with the point's overrides, judged as `tb.client run --models`
    judges the bits (the bundle judge, no FAULT signal, no model error): a bundle that fails is a failed cell."""
    from models.bundle.judge import judge
    from models.timed.run import run_timed

    cells = []
    for p in point.bundles:
        b = Bundle(Path(p))
        try:
            run = run_timed(b, timing=dict(point.timing))
        except Exception as exc:  # a refusal or a fault of the run is that bundle's failure at this point
            cells.append(Cell(b.name, False, 0, f"{type(exc).__name__}: {exc}"))
            continue
        failures = judge(b, run.result) + [f"model error: {e}" for e in run.errors]
        cells.append(Cell(b.name, not failures, sum(r.machine_cycles for r in run.rounds),
                          failures[0] if failures else ""))
    return cells


def run_point_rtl(point: Point) -> list[Cell]:
    """Every bundle on the RTL machine of `point`: one cell per bundle, in order."""
    from tb.client import run_rtl, what_if_build

    timing = dict(point.timing)
    bundles = [Bundle(Path(p)) for p in point.bundles]
    limit_env = override_env(point.margin, None)  # a slower machine than upstream's may need a larger margin
    reports = run_rtl(bundles, what_if_build(Path(point.build), timing), point.seed, False, point.sim,
                      limit_env, timing)
    return [Cell(r.bundle, r.passed, r.timing().machine_ours, "" if r.passed else (r.failures or ["failed"])[0])
            for r in reports]


def speed_up(base: Cell | None, cell: Cell) -> float | None:
    """Cycles at upstream's timing over cycles at the point (None when either run failed or has no cycles)."""
    if base is None or not base.passed or not cell.passed or cell.machine <= 0:
        return None
    return base.machine / cell.machine


def table(points: Sequence[Point], results: Sequence[list[Cell] | CallFailure]) -> str:
    """Markdown: a row per bundle (and the sum), a column per point: machine cycles (speed-up); a failure is
    a numbered mark in its cell, and listed whole under the table."""
    names = [Path(p).name for p in points[0].bundles]
    notes: list[str] = []

    def failed(why: str) -> str:
        notes.append(why)
        return f"FAILED [{len(notes)}]"
    base = results[0] if isinstance(results[0], list) else None
    head = "| bundle | " + " | ".join(p.label for p in points) + " |"
    lines = [head, "|---|" + "---:|" * len(points)]
    for i, name in enumerate(names + ["all"]):
        cells = []
        for j, res in enumerate(results):
            if isinstance(res, CallFailure):
                cells.append(failed(f"point {res.point}: {res.why}") if i == 0 else "FAILED (the point)")
                continue
            if name == "all":
                ok = all(c.passed for c in res) and base is not None and all(c.passed for c in base)
                total = sum(c.machine for c in res)
                ref = sum(c.machine for c in base) if base is not None else 0
                cells.append(f"{total:,} ({ref / total:.3f}x)" if ok and total else "-")
                continue
            cell = res[i]
            s = speed_up(base[i] if base is not None else None, cell)
            cells.append(f"{cell.machine:,} ({s:.3f}x)" if s is not None else
                         failed(f"{name} at {points[j].label}: {cell.failure}") if not cell.passed
                         else f"{cell.machine:,}")
        lines.append(f"| {'**all**' if name == 'all' else name} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ([""] + [f"[{k}] {why}" for k, why in enumerate(notes, 1)] if notes else []))


def plot(points: Sequence[Point], results: Sequence[list[Cell] | CallFailure], path: Path, title: str) -> None:
    """Speed-up against upstream's timing, a line per bundle over the points."""
    from tb.perf.figures import pyplot, save_png

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.6 * len(points) + 3, 4.2))
    base = results[0] if isinstance(results[0], list) else None
    facts = {k for p in points for k, _ in p.timing}
    if len(facts) == 1:  # one fact: the points at their values, upstream's among them
        fact = facts.pop()
        xs = [dict(p.timing).get(fact, FACTS[fact].value) for p in points]
        labels = [str(x) + (" (upstream's)" if not p.timing else "") for x, p in zip(xs, points)]
        ax.set_xlabel(f"{fact} ({FACTS[fact].measure})")
    else:
        xs = list(range(len(points)))
        labels = [p.label.replace(",", "\n") for p in points]
    order = sorted(range(len(points)), key=lambda k: xs[k])
    for i, name in enumerate(Path(p).name for p in points[0].bundles):
        ys = [speed_up(base[i] if base else None, r[i]) if isinstance(r, list) else None for r in results]
        kept = [k for k in order if ys[k] is not None]
        ax.plot([xs[k] for k in kept], [ys[k] for k in kept], marker="o", label=name)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(xs, labels, fontsize=8)
    ax.set_ylabel("speed-up against upstream's timing")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.timing_sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fact", required=True, help="timing fact(s), comma-separated (crossed)")
    ap.add_argument("--values", required=True, help="values per fact: '1,2,3' or, crossed, '1,2;4,8'")
    ap.add_argument("--bundles", nargs="+", required=True, help="bundle folders or glob patterns")
    ap.add_argument("--rtl", action="store_true",
                    help="run the points on the RTL machine (SIM); default: the timed golden models")
    ap.add_argument("--sim", default="verilator", choices=("icarus", "verilator"))
    ap.add_argument("--scheduler", default=None, help="a Dask scheduler's address (default: a local cluster)")
    ap.add_argument("--jobs", default="auto", help="local cluster: workers, or auto (the machine's cores)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cycle-margin", metavar="X", default=None,
                    help="the cycle limits' factor over upstream's cycles (default 2): a much slower machine "
                         "needs more (tb/bundle/cycle_limits.py)")
    ap.add_argument("--out", type=Path, default=SWEEP_ROOT)
    args = ap.parse_args(argv)
    args.out = args.out.resolve()
    try:
        overrides = parse_grid(args.fact, args.values)
        if not args.rtl:  # a combination the timed units refuse (as the RTL's elaboration would), before any point
            from models.timed.run import check_timing

            for point in overrides:
                try:
                    check_timing(point)
                except ValueError as exc:
                    raise ValueError(f"VALUES: {canonical(point)}: {exc}") from None
        folders = bundle_dirs(args.bundles)
        jobs = parse_jobs(args.jobs)
        override_env(args.cycle_margin, None)  # a bad margin refused here, before any point runs
    except (ValueError, BadInput) as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    points = [Point(tuple(o.items()), tuple(str(f) for f in folders), args.sim, str(args.out / "build"), args.seed,
                    args.cycle_margin, args.rtl) for o in overrides]
    engine = f"the RTL ({args.sim})" if args.rtl else "the timed golden models"
    from tb.farm.calls import run_calls
    from tb.farm.engine import FarmError

    where = f"the Dask cluster at {args.scheduler}" if args.scheduler else f"a local Dask cluster of {jobs}"
    print(f"timing sweep: {len(points)} point(s) x {len(folders)} bundle(s) on {engine}, each point a "
          f"task on {where}", flush=True)
    t0 = time.monotonic()
    try:
        results = run_calls(run_point, points, args.scheduler, jobs, lambda p: p.label,
                            lambda p, r: print(f"  point {p.label}: "
                                               f"{'failed: ' + r.why if isinstance(r, CallFailure) else 'done'}",
                                               flush=True))
    except FarmError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    text = table(points, results)
    title = f"{args.fact} on {args.sim if args.rtl else 'the timed models'}: speed-up against upstream's timing"
    (args.out / "sweep.md").write_text(f"{title}\n\n{text}\n")
    plot(points, results, args.out / "sweep.png", title)
    print(text)
    print(f"{len(points)} point(s) in {time.monotonic() - t0:.0f} s (builds included); table: "
          f"{args.out / 'sweep.md'}; plot: {args.out / 'sweep.png'}")
    failed = any(isinstance(r, CallFailure) or not all(c.passed for c in r) for r in results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
