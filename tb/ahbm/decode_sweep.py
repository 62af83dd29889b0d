"""AHBM decode sweep: PREFETCH x tile size on the d=128 CUBE, measured from the PEs' counters.

`python -m tb.ahbm.decode_sweep [--quick]` (also run by `python -m tb.perf`,
i.e. `make bench`, after the cocotb-vs-pure-Verilog comparison).

Every point is one decode with sequence parallelism on the 2x4 CUBE of the
ahbm_llama bench (d = 128, G = 8 query rows, N = 8 PEs, depth-3 reduction
tree), a context of COUNTER = 4096 tokens (512 per PE: 16, 8 or 4 full tiles;
see below for why not ragged), DMA_BW = 64 B/cycle, DMA_LAT = 100. One build
serves every point (sim_build/perf/verilator/ahbm_sweep/, or sim_build/perf/
ahbm_sweep/ with --sim icarus): the CUBE is built with PREFETCH 4 and DMA_LAT
400, the largest values swept, and each run picks its PREFETCH and DMA latency
at run time (ahbm_cube's cfg_prefetch / cfg_dma_lat, tb/ahbm/cube.py); the
tile size (32, 64, 128) is a kernel argument. The cocotb side is
tb/ahbm/test_sweep.py: the existing driver, kernel and scoreboard (O bit
exact and within tolerance, counts), then the PEs' raw counters as one JSON
line. A run that fails its scoreboard fails the sweep (exit status 1).

Metrics, per PE from its counters, then the mean over the 8 PEs (nothing is
computed from the timing formulas of rtl/ahbm/pe/pe_engine.v):

  span        cyc_last - cyc_first: first composite start (its K landed) to
              the last composite's end
  cyc/tile    span / cnt_comp
  DMA/peak    dma_bytes / ((cyc_dma_last - cyc_dma_first) * DMA_BW): the bytes
              the DMA delivered over its own window, from its first request to
              its last landed word, as a fraction of the peak (the first
              DMA_LAT cycles of the window move no data, so it stays < 100 %)
  DMA B/cyc   dma_bytes / dma_busy_cyc: the engine's own rate while it moves data
  hidden      cyc_hidden / (cyc_mm + cyc_vec): compute cycles during which the
              DMA was moving words out of the slice
  wait        cyc_wait: cycles the engine waited for DMA data (K, V, Q)
  launch      cycles from the kernels' start to the last PE idle;
              launch/roof divides it by the whole launch's roofline
              (launch_roofline: one PE's K+V over DMA_BW, then the
              reduction's ceil(log2 N) levels of one packet at the
              64-bit link, models/ahbm/reduce.reduction_roofline)

The roofline is the cycles per tile if the DMA never idled,
2 * tile * d * 2 / DMA_BW (K and V of one full tile); `meas/roof` is the mean
cycles per tile over it. The span starts when tile 0's K has landed (that K,
and the first DMA_LAT cycles of tile 0's V, moved before it) and ends one MM
stage after the last V landed, so a DMA that never idles reads a few per cent
under 1 (more at large tiles with few composites), never a sign of beating
the DMA. The context is a multiple of N * 128 on purpose: with a ragged
remainder (4096 + 37 was tried) each PE ends on a 4- or 5-key composite that
counts as a tile, and the mean cycles per tile read 11 % (tile 64) to ~20 %
(tile 128) under the full-tile roofline; the other AHBM benches cover ragged
tiles for correctness.

The table goes to stdout with one line stating what was measured, and one JSON
line per point is appended to sim_build/perf/ahbm_history.jsonl. The points
run one after another on the one build; given a Dask scheduler (--scheduler,
SCHEDULER in `make bench`) each point is one task on that cluster
(tb.perf.points), the first to start building while the others wait on the
build folder's lock, each run in a folder of its own, and the table is made
here from the records, as a local run's. --quick runs tile 64 only (PREFETCH
1..4); --prefetch / --tiles pick points; --dma-lat L runs another DMA latency
(up to the build's 400; a larger one is refused before simulating), e.g. to
find where PREFETCH starts to matter.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from tb.run.benches import Bench, get_bench
from tb.ahbm.case import GROUPS   # the case runner's GQA group: the sweep reports it
from models.ahbm.reduce import reduction_roofline
from tb.ahbm.cube import DMA_LAT_ENV, PREFETCH_ENV, runtime_config
from tb.perf.history import git_rev, utc_now
from tb.perf.points import CallFailure, FarmError, run_points, where_points_run
from tb.run.runner import BUILD_ROOT, bench_build_dir, run_bench

BASE_BENCH = "ahbm_llama"
TEST_MODULE = "tb.ahbm.test_sweep"
PERF_ROOT = BUILD_ROOT / "perf"
HISTORY = PERF_ROOT / "ahbm_history.jsonl"

PREFETCHES = (1, 2, 3, 4)
TILES = (32, 64, 128)
QUICK_TILES = (64,)
COUNTER = 4096              # context tokens: 512 per PE, full tiles (module docstring)
N_PES = 8
REQUEST_ID = 3              # start_pe 3
DMA_BW = 64
DMA_LAT = 100
LONG_DMA_LAT = 400          # second sweep of `make bench`: latency comparable to a 32-key tile's transfer
LATENCY_TILES = (32,)
NEAR_ROOFLINE = 1.10        # "approaches the roofline": mean cycles per tile within 10 % of it, either side
SWEEP_TARGET_S = 180  # benchmark target: both decode tables under 3 minutes on Verilator


# ---------------------------------------------------------------- metrics (pure)
HEAD_D = 128                # the sweep CUBE's head dimension (the ahbm_llama bench's D)
LINK_BITS = 64              # the decode sweep's IPCQ link width (the ahbm_llama bench's IPCQ_W)


def dma_roofline(counter: int = COUNTER, n: int = N_PES, d: int = HEAD_D, dma_bw: int = DMA_BW, b: int = 1) -> int:
    """Cycles to stream the K and V (bf16) of `b` requests of `counter` tokens through the busiest PE's
    DMA at dma_bw bytes/cycle."""
    keys = -(-counter // n)
    return -(-b * 2 * keys * d * 2 // dma_bw)


def launch_roofline(counter: int = COUNTER, n: int = N_PES, d: int = HEAD_D, groups: int = GROUPS,
                    dma_bw: int = DMA_BW, link_bits: int = LINK_BITS, b: int = 1) -> int:
    """Cycles of a whole decode launch if nothing idled: the K/V stream of every request
    (dma_roofline), then one reduction that no other work can hide (the last request's):
    models.ahbm.reduce.reduction_roofline, ceil(log2 n) levels of one (m, l, O) packet at one link word
    per cycle or the streamed merge's own rate, whichever is slower."""
    return dma_roofline(counter, n, d, dma_bw, b) + reduction_roofline(n, groups, d, link_bits)


def roofline_cycles(tile: int, d: int, dma_bw: int) -> float:
    """Cycles per tile if the DMA never idled: K and V of one tile, bf16, at dma_bw bytes/cycle."""
    return 2 * tile * d * 2 / dma_bw


def pe_metrics(c: dict[str, int], dma_bw: int) -> dict[str, float]:
    """One PE's measurements from its counters (keys of tb.ahbm.cube.CubeTB.counters)."""
    span = c["cyc_last"] - c["cyc_first"]
    comp = c["cnt_comp"]
    if comp <= 0 or span <= 0:
        raise ValueError(f"no composite span to measure (cnt_comp {comp}, cyc_first {c['cyc_first']}, "
                         f"cyc_last {c['cyc_last']})")
    compute = c["cyc_mm"] + c["cyc_vec"]
    return {
        "span": span,
        "composites": comp,
        "cyc_per_tile": span / comp,
        "dma_frac": c["dma_bytes"] / ((c["cyc_dma_last"] - c["cyc_dma_first"]) * dma_bw),
        "dma_rate": c["dma_bytes"] / c["dma_busy"] if c["dma_busy"] else 0.0,
        "hidden_frac": c["cyc_hidden"] / compute if compute else 0.0,
        "wait": c["cyc_wait"],
    }


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def point_metrics(counters: Sequence[dict[str, int]], dma_bw: int, d: int, tile: int) -> dict[str, float]:
    """A sweep point: every PE's metrics, their mean (max for the slowest PE), the roofline, the ratio."""
    per = [pe_metrics(c, dma_bw) for c in counters]
    if not per:
        raise ValueError("no PE counters")
    roof = roofline_cycles(tile, d, dma_bw)
    out: dict[str, Any] = {k: _mean([m[k] for m in per]) for k in
                           ("span", "composites", "cyc_per_tile", "dma_frac", "dma_rate", "hidden_frac", "wait")}
    out["cyc_per_tile_max"] = max(m["cyc_per_tile"] for m in per)
    out["roofline"] = roof
    out["ratio"] = out["cyc_per_tile"] / roof
    out["per_pe"] = per
    return out


# ---------------------------------------------------------------- points and report (pure)
@dataclass
class Point:
    """One (PREFETCH, tile) run."""

    prefetch: int
    tile: int
    passed: bool = False
    dma_lat: int = DMA_LAT
    message: str = ""
    wall_s: float = 0.0              # this run, build included when it built
    launch_cycles: int = 0
    seed: int = 0
    metrics: dict[str, Any] | None = None
    log: str = ""


def format_table(points: Iterable[Point]) -> str:
    """One row per point, PREFETCH-major."""
    head = (f"{'P':>2s} {'tile':>4s} {'tiles/PE':>8s} {'cyc/tile':>8s} {'roofline':>8s} {'meas/roof':>9s} "
            f"{'DMA/peak':>8s} {'DMA B/cyc':>9s} {'hidden':>6s} {'wait/PE':>7s} {'launch cyc':>10s} "
            f"{'launch/roof':>11s} {'wall s':>6s}")
    roof = launch_roofline()
    lines = [head, "-" * len(head)]
    for p in sorted(points, key=lambda x: (x.prefetch, x.tile)):
        m = p.metrics
        if not p.passed or m is None:
            lines.append(f"{p.prefetch:2d} {p.tile:4d}  FAILED: {p.message}")
            continue
        lines.append(f"{p.prefetch:2d} {p.tile:4d} {m['composites']:8.2f} {m['cyc_per_tile']:8.1f} "
                     f"{m['roofline']:8.0f} {m['ratio']:9.3f} {100 * m['dma_frac']:7.1f}% "
                     f"{m['dma_rate']:9.1f} {100 * m['hidden_frac']:5.1f}% {m['wait']:7.0f} "
                     f"{p.launch_cycles:10d} {p.launch_cycles / roof:11.2f} {p.wall_s:6.1f}")
    return "\n".join(lines)


def _span(xs: Sequence[float], fmt: str) -> str:
    lo, hi = min(xs), max(xs)
    return format(lo, fmt) if format(lo, fmt) == format(hi, fmt) else f"{format(lo, fmt)}-{format(hi, fmt)}"


def summary_line(points: Iterable[Point]) -> str:
    """What the sweep measured, in one statement built from the numbers (no expectation assumed)."""
    ok = [p for p in points if p.passed and p.metrics is not None]
    if not ok:
        return "measured: nothing (no point passed)"
    near = f"within {100 * (NEAR_ROOFLINE - 1):.0f}% of the DMA roofline"

    def close(rs: Sequence[float]) -> bool:
        return all(abs(r - 1) <= NEAR_ROOFLINE - 1 + 1e-9 for r in rs)

    one = sorted((p for p in ok if p.prefetch == 1), key=lambda p: p.tile)
    more = [p for p in ok if p.prefetch >= 2]
    parts = []
    if one:
        r1 = [p.metrics["ratio"] for p in one]
        parts.append("prefetch 1: cycles/tile " + "/".join(f"{r:.2f}" for r in r1) + "x the DMA roofline (tile "
                     + "/".join(str(p.tile) for p in one) + ")" + (f", already {near}" if close(r1)
                                                                   else f", not {near}"))
    if more:
        ratios = [p.metrics["ratio"] for p in more]
        verdict = "approaches the DMA roofline" if close(ratios) else f"does not come {near} everywhere"
        parts.append(f"prefetch >= 2 {verdict}: cycles/tile {_span(ratios, '.2f')}x the roofline")
    two = {p.tile: p for p in ok if p.prefetch == 2}
    pairs = [(p, two[p.tile]) for p in one if p.tile in two]
    if pairs:
        parts.append("prefetch 1 -> 2 changes cycles/tile by " + "/".join(
            f"{100 * (b.metrics['cyc_per_tile'] / a.metrics['cyc_per_tile'] - 1):+.1f}%" for a, b in pairs)
            + " (tile " + "/".join(str(a.tile) for a, _ in pairs) + ")")
    parts.append("DMA bytes / (DMA window x peak) " + _span([100 * p.metrics["dma_frac"] for p in ok], ".0f")
                 + "%, engine rate " + _span([p.metrics["dma_rate"] for p in ok], ".1f") + f" of {DMA_BW} B/cycle")
    parts.append("compute hidden under DMA " + _span([100 * p.metrics["hidden_frac"] for p in ok], ".0f")
                 + "% of MM+VEC cycles")
    return "measured: " + "; ".join(parts)


def history_record(p: Point, git: str, when: str | None = None) -> dict[str, Any]:
    m = None
    if p.metrics is not None:
        m = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in p.metrics.items() if k != "per_pe"}
    return {
        "time": when or utc_now(),
        "git": git, "bench": "ahbm_sweep", "prefetch": p.prefetch, "tile": p.tile,
        "counter": COUNTER, "n": N_PES, "groups": GROUPS, "request_id": REQUEST_ID, "dma_bw": DMA_BW,
        "dma_lat": p.dma_lat, "seed": p.seed, "passed": p.passed, "message": p.message,
        "wall_s": round(p.wall_s, 2), "launch_cycles": p.launch_cycles, "metrics": m,
    }


def append_history(points: Iterable[Point], path: Path = HISTORY, git: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        for p in sorted(points, key=lambda x: (x.prefetch, x.tile)):
            f.write(json.dumps(history_record(p, git)) + "\n")


# ---------------------------------------------------------------- runs
BUILD_PREFETCH = max(PREFETCHES)   # the sweep's one build holds the largest of each
BUILD_DMA_LAT = LONG_DMA_LAT


def sweep_bench() -> Bench:
    """The ahbm_llama bench built for the whole sweep (the largest PREFETCH and DMA latency), its test module."""
    base = get_bench(BASE_BENCH)
    return dataclasses.replace(
        base, name="ahbm_sweep", test_module=TEST_MODULE,
        parameters={**base.parameters, "PREFETCH": BUILD_PREFETCH, "DMA_BW": DMA_BW, "DMA_LAT": BUILD_DMA_LAT},
        description=f"AHBM decode sweep on the {BASE_BENCH} CUBE, built for PREFETCH <= {BUILD_PREFETCH}, "
                    f"DMA_LAT <= {BUILD_DMA_LAT}")


def check_point_config(prefetch: int, dma_lat: int) -> None:
    """Refuse a point the one build cannot run, before any simulation: the CUBE's own rule
    (tb/ahbm/cube.runtime_config, a CubeConfigError, i.e. a ValueError) against the sweep's build."""
    runtime_config({"PREFETCH": BUILD_PREFETCH, "DMA_LAT": BUILD_DMA_LAT},
                   {PREFETCH_ENV: str(prefetch), DMA_LAT_ENV: str(dma_lat)})


def read_point(prefetch: int, tile: int, rec: dict[str, Any], dma_lat: int = DMA_LAT) -> Point:
    """A point from the JSON line the cocotb test wrote (metrics recomputed from the raw counters)."""
    pt = Point(prefetch, tile, dma_lat=dma_lat, seed=int(rec.get("seed", 0)),
               launch_cycles=int(rec["launch_cycles"]))
    prm = rec["params"]
    if prm["PREFETCH"] != prefetch or prm["DMA_BW"] != DMA_BW or prm["DMA_LAT"] != dma_lat or rec["tile"] != tile:
        pt.message = (f"the run measured PREFETCH={prm['PREFETCH']} DMA_BW={prm['DMA_BW']} DMA_LAT={prm['DMA_LAT']} "
                      f"tile={rec['tile']}, the sweep asked for PREFETCH={prefetch} DMA_BW={DMA_BW} "
                      f"DMA_LAT={dma_lat} tile={tile}")
        return pt
    if rec["verdict"] != "PASS":
        pt.message = "scoreboard: " + "; ".join(rec.get("failures", [])[:3])
        return pt
    pt.metrics = point_metrics(rec["counters"], prm["DMA_BW"], prm["D"], tile)
    pt.passed = True
    return pt


@dataclass
class PointRun:
    """One simulator run of the sweep test: its JSON line (None if it wrote none), why not, its wall time
    and its kept log."""

    rec: dict[str, Any] | None
    message: str
    wall_s: float
    log: str
    passed: bool


def run_point(bench: Bench, name: str, env: dict[str, str], seed: int, verbose: bool, sim: str,
              own_dir: bool = False) -> PointRun:
    """Run tb/ahbm/test_sweep.py once on `bench` with the point's environment; keep its log as
    sim_<name>.log in the build folder. `own_dir`: run in build folder/points/<name>/ rather than in the
    build folder itself, so that points of one build can run side by side (tasks on a cluster)."""
    build_dir = bench_build_dir(PERF_ROOT, sim, bench.name)
    run_dir = build_dir / "points" / name if own_dir else build_dir
    out = run_dir / f"sweep_{name}.json"
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    result = run_bench(bench, sim=sim, seed=seed, build_root=PERF_ROOT, log_to_file=not verbose,
                       extra_env={**env, "AHBM_SWEEP_OUT": str(out)}, run_dir=run_dir if own_dir else None)
    wall = time.monotonic() - t0
    log = run_dir / "sim.log"
    kept = build_dir / f"sim_{name}.log"
    if log.exists():
        shutil.copyfile(log, kept)
    if result.error:
        return PointRun(None, result.error, wall, str(kept), False)
    if len(result.tests) != 1:
        return PointRun(None, f"{len(result.tests)} tests ran, expected exactly one", wall, str(kept), False)
    test = result.tests[0]
    first = test.message.splitlines()[0] if test.message else ""
    if not out.exists():
        return PointRun(None, f"{first or 'no measurement'} (no {out.name} written)", wall, str(kept), False)
    try:
        rec = json.loads(out.read_text())
    except ValueError as exc:
        return PointRun(None, f"unreadable measurement {out}: {exc}", wall, str(kept), False)
    return PointRun(rec, "" if test.passed else (first or "failed"), wall, str(kept), test.passed)


@dataclass(frozen=True)
class DecodeArgs:
    """One point of the sweep as a task's argument (picklable): all a worker needs to run it."""

    prefetch: int
    tile: int
    dma_lat: int
    seed: int
    verbose: bool = False
    sim: str = "verilator"
    own_dir: bool = False  # a run folder of its own (points side by side on a cluster)

    def __str__(self) -> str:
        return f"AHBM decode PREFETCH={self.prefetch} tile={self.tile} DMA_LAT={self.dma_lat}"


def decode_point(args: DecodeArgs) -> Point:
    """One point on the sweep's build (built first if missing), wherever it runs: its scored Point."""
    prefetch, tile, dma_lat = args.prefetch, args.tile, args.dma_lat
    check_point_config(prefetch, dma_lat)
    run = run_point(sweep_bench(), f"p{prefetch}_t{tile}_lat{dma_lat}",
                    {"AHBM_SWEEP_TILE": str(tile), PREFETCH_ENV: str(prefetch), DMA_LAT_ENV: str(dma_lat)},
                    args.seed, args.verbose, args.sim, args.own_dir)
    if run.rec is None:
        pt = Point(prefetch, tile, dma_lat=dma_lat, message=run.message)
    else:
        try:
            pt = read_point(prefetch, tile, run.rec, dma_lat)
        except (ValueError, KeyError) as exc:
            pt = Point(prefetch, tile, dma_lat=dma_lat, message=f"unreadable measurement: {exc}")
        if pt.passed and not run.passed:
            pt.passed, pt.message = False, run.message
    pt.wall_s = run.wall_s
    pt.seed = pt.seed or args.seed
    pt.log = run.log
    return pt


def _as_point(args: DecodeArgs, entry: Point | CallFailure) -> Point:
    """The point's record, or a failed Point saying why its task gave none."""
    if isinstance(entry, CallFailure):
        return Point(args.prefetch, args.tile, dma_lat=args.dma_lat, seed=args.seed, message=entry.why)
    return entry


def _progress(args: DecodeArgs, entry: Point | CallFailure) -> None:
    pt = _as_point(args, entry)
    print(f"ahbm sweep:   PREFETCH={pt.prefetch} tile={pt.tile}: {'PASS' if pt.passed else 'FAIL'} "
          f"{pt.wall_s:.1f}s" + ("" if pt.passed else f" ({pt.message}; log {pt.log or '-'})"), flush=True)


def run_sweep(prefetches: Sequence[int], tiles: Sequence[int], seed: int, verbose: bool = False,
              dma_lat: int = DMA_LAT, sim: str = "verilator", scheduler: str | None = None) -> list[Point]:
    """Every point on the one build (the first run builds it): one after another here, or a task each on
    the cluster at `scheduler`. A point the build cannot run is refused (ValueError) before any runs."""
    for pf in prefetches:
        check_point_config(pf, dma_lat)
    specs = [DecodeArgs(pf, tile, dma_lat, seed, verbose, sim, own_dir=bool(scheduler))
             for pf in prefetches for tile in tiles]
    entries = run_points(decode_point, specs, scheduler=scheduler, on_done=_progress)
    return sorted((_as_point(a, e) for a, e in zip(specs, entries)), key=lambda p: (p.prefetch, p.tile))


def report(points: Sequence[Point], wall_s: float, dma_lat: int = DMA_LAT) -> str:
    lines = ["", f"AHBM decode sweep: N={N_PES} PEs, d=128, G={GROUPS}, context {COUNTER} tokens, decode with SP, "
                 f"DMA_BW {DMA_BW} B/cycle, DMA_LAT {dma_lat}; means over the {N_PES} PEs",
             format_table(points),
             f"launch/roof = launch cycles (the kernels' first cycle to the last PE idle) / {launch_roofline()}, the "
             f"whole launch's roofline: one PE's K+V bytes / DMA_BW + {max(0, (N_PES - 1).bit_length())} reduction "
             f"levels of one (m,l,O) packet at the {LINK_BITS}-bit link (models/ahbm/reduce.reduction_roofline)",
             "cyc/tile = (cyc_last - cyc_first) / cnt_comp; roofline = 2*tile*d*2/DMA_BW; DMA/peak = dma_bytes / "
             "((cyc_dma_last - cyc_dma_first)*DMA_BW), the DMA's own window;\nDMA B/cyc = dma_bytes / "
             "dma_busy_cyc; hidden = cyc_hidden / (cyc_mm + cyc_vec), DMA transferring; wait = cyc_wait",
             summary_line(points),
             f"wall {wall_s:.0f} s for {len(points)} runs on one build"]
    failed = [p for p in points if not p.passed]
    if failed:
        lines.append(f"FAILED {len(failed)} of {len(points)} runs: "
                     + "; ".join(f"P={p.prefetch} tile={p.tile}: {p.message}" for p in failed))
    return "\n".join(lines)


def sweep_main(*, quick: bool = False, seed: int = 1, verbose: bool = False,
               prefetches: Sequence[int] = PREFETCHES, tiles: Sequence[int] | None = None,
               dma_lat: int = DMA_LAT, sim: str = "verilator", scheduler: str | None = None) -> int:
    """Run (here, or a task per point on the cluster at `scheduler`), print, append the history; 0 if every
    run passed its scoreboard, 1 if one did not, 2 if the sweep could not run."""

    tiles = tuple(tiles) if tiles else (QUICK_TILES if quick else TILES)
    print(f"ahbm sweep: PREFETCH {list(prefetches)} x tile {list(tiles)}, context {COUNTER}, DMA_LAT {dma_lat}, "
          f"seed {seed}, {sim}; build and logs in {bench_build_dir(PERF_ROOT, sim, 'ahbm_sweep')}/",
          flush=True)
    if scheduler:
        print(f"ahbm sweep: {where_points_run(len(prefetches) * len(tiles), scheduler)}", flush=True)
    t0 = time.monotonic()
    try:
        points = run_sweep(tuple(prefetches), tiles, seed, verbose, dma_lat, sim, scheduler)
    except (ValueError, FarmError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wall = time.monotonic() - t0
    print(report(points, wall, dma_lat))
    append_history(points, git=git_rev())
    print(f"(appended {len(points)} lines to {HISTORY})")
    return 0 if points and all(p.passed for p in points) else 1


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.ahbm.decode_sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"tile {QUICK_TILES[0]} only (PREFETCH 1..4)")
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--prefetch", type=_ints, default=PREFETCHES, help="comma-separated PREFETCH values")
    ap.add_argument("--tiles", type=_ints, default=None, help="comma-separated tile sizes (overrides --quick)")
    ap.add_argument("--dma-lat", type=int, default=DMA_LAT,
                    help=f"DMA latency in cycles (default %(default)s; at most {LONG_DMA_LAT}, the build's)")
    ap.add_argument("--verbose", "-v", action="store_true", help="simulator output on the terminal")
    ap.add_argument("--sim", choices=("icarus", "verilator"), default="verilator")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None,
                    help="a Dask scheduler's address: each point a task there (default: SCHEDULER, else here)")
    args = ap.parse_args(argv)
    from tb.perf.compare import seed_from_env

    seed = args.seed if args.seed is not None else seed_from_env()
    return sweep_main(quick=args.quick, seed=seed, verbose=args.verbose, prefetches=args.prefetch,
                      tiles=args.tiles, dma_lat=args.dma_lat, sim=args.sim, scheduler=args.scheduler)


if __name__ == "__main__":
    sys.exit(main())
