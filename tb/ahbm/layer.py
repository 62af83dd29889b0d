"""A whole Llama3-70B layer's decode attention on AHBM CUBEs: one launch per CUBE, each a Dask task, merged
into one layer report.

``python -m tb.ahbm.layer --context 32768 [--b 1] [--width 256] [--tile 64] [--sim verilator]``
(``make layer CONTEXT=32768 B=1``; ``SCHEDULER=tcp://...`` for a cluster, else a local Dask cluster of JOBS
workers).

Why: the ADR exists for a whole model's decode at long context, not one CUBE's launch. The mapping
(models/ahbm/layer.py, docs/ahbm.md "A whole layer"): one KV head per CUBE, its 8 query heads batched in
every composite, so a layer is 8 CUBEs running in parallel and its attention latency is the slowest CUBE's
launch. Every CUBE runs tb/ahbm/test_sweep.py's decode launch (the driver, the kernel and the scoreboard of
every AHBM bench: each request's O for each of the CUBE's query heads bit exact against the reference
kernel and within its float64 bound) on the d = 128 CUBE of the ahbm_llama bench, built once for the
layer's slice size, with its own operands (the run seed + its KV head: each KV head its own cache).

The report, per CUBE and for the layer, from the runs' own counters: launch cycles (the kernels' start to
the last PE idle) and their ratio to the KV-read roofline (one PE's K+V bytes / DMA_BW); the reduction
(the last composite's end to the root's last merge, from its activity log) and its share of the launch;
bytes the DMA read per PE (``dma_bytes``); IPCQ traffic (the (m, l, O) packets the PEs pushed, counted by
``cnt_push``, times a packet's words by the format, models/ahbm/ipcq.mlo_words); every O checked. A layer
whose CUBEs do not answer every query head exactly once is not called a layer.
Under a whole layer's report, what a token costs in an HBM3 cube (models/ahbm/cost.py; ``make cost`` gives
the table over several runs' records).

A context and batch whose slices do not fit is refused before any build, in one line naming the limit:
the commands address a PE's slice with 24-bit byte addresses (docs/ahbm.md §4), 2^18 words of 64 bytes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from models.ahbm.ipcq import SLICE_BYTES, mlo_words, slice_reach
from models.ahbm.layer import CubeAssignment, GQA, H_KV, H_Q, layer_mapping, whole_layer
from tb.ahbm.decode_sweep import DMA_BW, HEAD_D, N_PES, PERF_ROOT, run_point
from tb.ahbm.launch_sweep import TILE, common_env, launch_bench, launch_metrics, slice_words
from tb.farm.calls import CallFailure
from tb.run.benches import ROOT, Bench
from tb.run.options import parse_jobs
from tb.run.runner import bench_build_dir

LAYER_ROOT = ROOT / "sim_build" / "ahbm_layer"
WIDTH = 256  # IPCQ link bits (the launch sweep's B = 1 target width)
BENCH_CONTEXT = 32_768  # make bench's layer run; the larger contexts are make layer's
BYTE_WORDS = SLICE_BYTES // 64  # the most slice words byte addresses reach (ADDR_SHIFT 0, the benches')
MAX_WORDS = slice_reach(6) // 64  # with 64-byte-word addresses (ADDR_SHIFT 6): a 1 GiB slice


@dataclass(frozen=True)
class CubeArgs:
    """One CUBE's launch as a task's argument (picklable): all a worker needs to run it."""

    cube: CubeAssignment
    context: int
    b: int
    tile: int
    width: int
    words: int
    seed: int
    sim: str = "verilator"
    verbose: bool = False

    def __str__(self) -> str:
        return f"CUBE {self.cube.cube} (KV head {self.cube.kv_head})"

    @property
    def run_seed(self) -> int:
        """The CUBE's run seed: the layer's + its KV head, so each KV head has its own cache."""
        return self.seed + self.cube.kv_head

    @property
    def name(self) -> str:
        """The CUBE run's name: its folder beside the build and its log's name."""
        return f"layer_s{self.context}_b{self.b}_kv{self.cube.kv_head}"

    def bench(self) -> Bench:
        """The build this CUBE runs on (:func:`layer_bench`)."""
        return layer_bench(self.width, self.words, alog_depth(self.context, self.b, self.tile))


@dataclass
class CubeResult:
    """One CUBE's launch: its verdict, its figures (empty when it failed) and where its log is."""

    cube: CubeAssignment
    passed: bool
    message: str = ""
    seed: int = 0
    wall_s: float = 0.0
    checks: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def check_layer(context: int, b: int, tile: int, width: int, cubes: int) -> int:
    """The slice words every PE needs, or ValueError in one line naming the value, the limit and the fix."""
    if context < N_PES:
        raise ValueError(f"context {context}: at least {N_PES} tokens (one a PE of the CUBE's {N_PES})")
    if b < 1:
        raise ValueError(f"B={b}: at least one request a launch")
    if not 1 <= tile <= 128:
        raise ValueError(f"tile {tile}: keys a tile are 1..128 (the composite's KEYS field)")
    if width not in (64, 128, 256, 512):
        raise ValueError(f"width {width}: the IPCQ link is 64, 128, 256 or 512 bits")
    layer_mapping(cubes)
    words = slice_words(b, context, tile)
    if words > MAX_WORDS:
        most = most_requests(context, tile) if b > 1 else 0
        fix = f"B <= {most} at this context" if most else "a shorter context"
        raise ValueError(f"B={b} x {context:,} tokens needs {words:,} slice words a PE, above the {MAX_WORDS:,} "
                         f"(1 GiB) the commands' 24-bit address fields reach in 64-byte words (docs/ahbm.md §4); "
                         f"run {fix}")
    return words


def most_requests(context: int, tile: int) -> int:
    """The largest B whose slices fit at this context (0: not even one). Each request has a region of its own
    of the same size, so the words grow by one region a request: two plans give it, a third confirms it."""
    one = slice_words(1, context, tile)
    if one > MAX_WORDS:
        return 0
    two = slice_words(2, context, tile)
    step, base = two - one, 2 * one - two
    most = max(0, (MAX_WORDS - base) // step)
    while most and slice_words(most, context, tile) > MAX_WORDS:  # never taken for equal regions; kept exact
        most -= 1
    return most


def alog_depth(context: int, b: int, tile: int) -> int:
    """Activity log entries a PE needs for the whole launch (the root's last merge is read from it): measured
    6.1-6.2 changes a composite over the 32k-128k launches, so 8 a composite and 256 for the reduction,
    rounded up to a power of two; never below the benches' 4,096."""
    keys = -(-context // N_PES)  # the busiest PE's keys of one request
    composites = b * -(-keys // tile)
    return max(4096, 1 << (8 * composites + 256 - 1).bit_length())


def layer_bench(width: int, words: int, alog: int = 4096) -> Bench:
    """The CUBE build of a layer run: the launch sweep's at this link width, its slices rounded up to a power
    of two of words, so that contexts of one size class share a build (and the launch sweep keeps its own);
    past what byte addresses reach (16 MiB), the commands address 64-byte words (ADDR_SHIFT 6)."""
    base = launch_bench(width, 0)  # the launch sweep's build; its WORDS the floor
    size = max(base.parameters["WORDS"], 1 << max(0, words - 1).bit_length())
    shift = 0 if size <= BYTE_WORDS else 6
    name = f"ahbm_layer_w{width}_k{size // 1024}" + (f"_a{alog // 1024}" if alog > 4096 else "")
    return dataclasses.replace(base, name=name,
                               parameters={**base.parameters, "WORDS": size, "ADDR_SHIFT": shift, "ALOG": alog},
                               description=f"AHBM layer run, IPCQ_W {width}, {size:,} slice words a PE")


def cube_launch(args: CubeArgs) -> CubeResult:
    """One CUBE's decode launch on the layer's build (built first if missing), scored: its CubeResult."""
    env = {**common_env(args.tile), "AHBM_SWEEP_B": str(args.b), "AHBM_SWEEP_COUNTER": str(args.context),
           "AHBM_SWEEP_TRACE": "1"}
    bench = args.bench()
    run = run_point(bench, args.name, env, args.run_seed, args.verbose, args.sim, own_dir=True)
    out = CubeResult(args.cube, False, run.message, args.run_seed, run.wall_s, log=run.log)
    if run.rec is None or not run.passed:
        return out
    try:
        out.metrics = cube_metrics(run.rec, args.width, args.b)
    except (ValueError, KeyError) as exc:
        out.message = f"unreadable measurement: {exc}"
        return out
    out.passed, out.checks = True, int(run.rec.get("checks", 0))
    drop_slice_images(bench_build_dir(PERF_ROOT, args.sim, bench.name) / "points" / args.name)  # run_point's folder
    return out


def drop_slice_images(folder: Path) -> None:
    """A passed CUBE's slice images (pe*_load.hex, 135 MB a PE at B = 8 x 128k) go: the run regenerates them
    from its seed; a failed one keeps them beside its log."""
    for f in folder.glob("pe*_load.hex"):
        f.unlink(missing_ok=True)


def cube_metrics(rec: dict[str, Any], width: int, b: int) -> dict[str, Any]:
    """A CUBE's figures from its run's JSON line: the launch sweep's (launch, reduction, rooflines), the
    DMA's bytes per PE, the IPCQ packets pushed, and the work the cost model charges (models/ahbm/cost.py):
    score elements (cnt_score), merges and O stores, summed over the PEs."""
    m = launch_metrics(rec, width, b)
    counters = rec["counters"]

    def total(key: str) -> int:
        return sum(int(c[key]) for c in counters)

    pushes = total("cnt_push")
    words = pushes * (1 + mlo_words(rec["params"]["D"], GQA, 1, width))  # header + body
    return {"launch": m["launch"], "vs_dma": m["vs_dma"], "dma_roof": m["dma_roof"], "reduction": m["reduction"],
            "red_share": m["red_share"], "tail": m["tail"], "dma_bytes": [int(c["dma_bytes"]) for c in counters],
            "pushes": pushes, "ipcq_bytes": words * width // 8, "composites": total("cnt_comp"),
            "scores": total("cnt_score"), "merges": total("cnt_merge"), "stores": total("cnt_store")}


def as_result(args: CubeArgs, entry: CubeResult | CallFailure) -> CubeResult:
    """The CUBE's result, or a failed one saying why its task gave none."""
    return CubeResult(args.cube, False, entry.why, args.run_seed) if isinstance(entry, CallFailure) else entry


# ---------------------------------------------------------------- the report (pure)
def format_layer(results: Sequence[CubeResult], context: int, b: int, width: int, tile: int) -> str:
    """The table (a row a CUBE) and the layer's lines."""
    head = (f"{'CUBE':>4s} {'KV':>2s} {'q heads':>7s} {'verdict':>7s} {'launch':>8s} {'/KV roof':>8s} "
            f"{'reduct.':>7s} {'red/launch':>10s} {'DMA MiB/PE':>10s} {'IPCQ KiB':>8s} {'checks':>6s} {'wall s':>6s}")
    lines = [f"AHBM decode attention, one Llama3-70B layer: {len(results)} CUBE(s) of N={N_PES} PEs, d={HEAD_D}, "
             f"G={GQA}, B={b} request(s) x {context:,} tokens, tile {tile}, {width}-bit IPCQ, DMA_BW {DMA_BW} B/cycle",
             head, "-" * len(head)]
    for r in results:
        a, m = r.cube, r.metrics
        if not r.passed:
            lines.append(f"{a.cube:4d} {a.kv_head:2d} {a.heads_text:>7s}  FAILED: {r.message} (seed {r.seed}; "
                         f"log {r.log or '-'})")
            continue
        red = "-" if m["reduction"] is None else f"{m['reduction']:d}"
        share = "-" if m["red_share"] is None else f"{100 * m['red_share']:.2f}%"
        dma = max(m["dma_bytes"]) / 2 ** 20
        lines.append(f"{a.cube:4d} {a.kv_head:2d} {a.heads_text:>7s} {'PASS':>7s} {m['launch']:8d} "
                     f"{m['vs_dma']:8.3f} {red:>7s} {share:>10s} {dma:10.2f} {m['ipcq_bytes'] / 1024:8.1f} "
                     f"{r.checks:6d} {r.wall_s:6.1f}")
    lines += layer_lines(results, b)
    return "\n".join(lines)


def layer_lines(results: Sequence[CubeResult], b: int) -> list[str]:
    """The layer's figures: latency (the slowest CUBE), bytes, traffic, heads answered."""
    ok = [r for r in results if r.passed]
    heads = [h for r in ok for h in r.cube.query_heads]
    whole = whole_layer([r.cube for r in ok])
    out = [f"O checked: {len(heads)} of {H_Q} query heads x {b} request(s), each bit exact against the reference "
           f"kernel and within its float64 bound"
           + ("" if whole else f"; NOT the whole layer ({len(results) - len(ok)} CUBE(s) failed or were not run)")]
    if not ok:
        return out
    slow = max(ok, key=lambda r: r.metrics["launch"])
    launches = [r.metrics["launch"] for r in ok]
    dma = [x for r in ok for x in r.metrics["dma_bytes"]]
    out.append(f"layer attention latency: {slow.metrics['launch']:,} cycles (the slowest CUBE, {slow.cube.cube}; "
               f"CUBEs {min(launches):,}-{max(launches):,}), {slow.metrics['vs_dma']:.3f}x the KV-read roofline "
               f"{slow.metrics['dma_roof']:,}")
    share = slow.metrics["red_share"]
    out.append("reduction: " + ("not measured" if share is None else
                                f"{slow.metrics['reduction']:,} cycles, {100 * share:.2f}% of the slowest launch")
               + f"; IPCQ {sum(r.metrics['ipcq_bytes'] for r in ok) / 1024:.1f} KiB in "
               f"{sum(r.metrics['pushes'] for r in ok)} (m,l,O) packet(s)")
    out.append(f"bank bytes read: {sum(dma) / 2 ** 20:.2f} MiB ({min(dma) / 2 ** 20:.2f}-{max(dma) / 2 ** 20:.2f} MiB "
               f"a PE over {len(dma)} PEs)")
    return out


def layer_record(results: Sequence[CubeResult], context: int, b: int, width: int, tile: int, sim: str,
                 elapsed_s: float, workers: str) -> dict[str, Any]:
    """The run as JSON: the inputs, every CUBE's result, where it ran and how long it took."""
    return {"context": context, "b": b, "width": width, "tile": tile, "sim": sim, "n": N_PES, "d": HEAD_D, "g": GQA,
            "dma_bw": DMA_BW,
            "elapsed_s": round(elapsed_s, 1), "workers": workers,
            "whole_layer": whole_layer([r.cube for r in results if r.passed]) and all(r.passed for r in results),
            "cubes": [{**asdict(r), "cube": asdict(r.cube)} for r in results]}


# ---------------------------------------------------------------- the run
def run_layer(context: int, b: int, width: int, tile: int, cubes: int, seed: int, sim: str,
              scheduler: str | None, jobs: int, words: int, verbose: bool = False) -> tuple[list[CubeResult], str]:
    """Every CUBE's launch as a task on the Dask cluster at `scheduler`, or on a local one of `jobs` workers, on
    slices of `words` (check_layer's); (results in CUBE order, where they ran)."""
    from tb.farm.calls import run_calls

    specs = [CubeArgs(a, context, b, tile, width, words, seed, sim, verbose) for a in layer_mapping(cubes)]
    where = f"the Dask cluster at {scheduler}" if scheduler else f"a local Dask cluster of {jobs} worker(s)"
    print(f"ahbm layer: {len(specs)} CUBE launch(es), each a task on {where}; {words:,} slice words a PE", flush=True)

    def done(args: CubeArgs, entry: CubeResult | CallFailure) -> None:
        r = as_result(args, entry)
        print(f"ahbm layer:   {args}: {'PASS' if r.passed else 'FAIL'} {r.wall_s:.1f}s"
              + ("" if r.passed else f" ({r.message})"), flush=True)

    entries = run_calls(cube_launch, specs, scheduler, jobs, str, done)
    return [as_result(a, e) for a, e in zip(specs, entries)], where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.ahbm.layer", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--context", type=int, default=32_768, help="tokens of every request (default %(default)s)")
    ap.add_argument("--b", type=int, default=1, help="decode requests a launch (default %(default)s)")
    ap.add_argument("--width", type=int, default=WIDTH, help="IPCQ link bits (default %(default)s)")
    ap.add_argument("--tile", type=int, default=TILE, help="keys a tile (default %(default)s)")
    ap.add_argument("--cubes", type=int, default=H_KV, help=f"CUBEs to run, 1..{H_KV} (default: the whole layer)")
    ap.add_argument("--sim", choices=("icarus", "verilator"), default="verilator")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None,
                    help="a Dask scheduler's address (default: SCHEDULER, else a local cluster)")
    ap.add_argument("--jobs", default=os.environ.get("JOBS", "auto"), help="local cluster: workers, or auto")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=LAYER_ROOT, help="where the report and its JSON go")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)
    try:
        jobs = parse_jobs(args.jobs)
        words = check_layer(args.context, args.b, args.tile, args.width, args.cubes)
    except ValueError as exc:  # BadInput is one
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    from tb.farm.engine import FarmError

    t0 = time.monotonic()
    try:
        results, where = run_layer(args.context, args.b, args.width, args.tile, args.cubes, args.seed, args.sim,
                                   args.scheduler, jobs, words, args.verbose)
    except FarmError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    elapsed = time.monotonic() - t0
    text = format_layer(results, args.context, args.b, args.width, args.tile)
    text += f"\nelapsed {elapsed:.0f} s on {where} ({sum(r.wall_s for r in results):.0f} s of task time, builds included)"
    rec = layer_record(results, args.context, args.b, args.width, args.tile, args.sim, elapsed, where)
    if rec["whole_layer"]:
        from models.ahbm.cost import hbm3_cube, token_cost, work_from_record
        from tb.ahbm.cost import token_lines

        tech = hbm3_cube(DMA_BW)
        text += "\n" + "\n".join(token_lines(token_cost(work_from_record(rec), tech), tech))
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stem = f"layer_s{args.context}_b{args.b}_w{args.width}"
    (out / f"{stem}.txt").write_text(text + "\n")
    (out / f"{stem}.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(text)
    print(f"report: {out / (stem + '.txt')}; record: {out / (stem + '.json')}")
    return 0 if rec["whole_layer"] or (args.cubes < H_KV and all(r.passed for r in results)) else 1


if __name__ == "__main__":
    sys.exit(main())
