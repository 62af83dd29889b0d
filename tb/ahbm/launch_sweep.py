"""AHBM launch sweep: whole decode launches (composites and reduction) per batch size B and IPCQ link
width, a prefill sweep (tile size x query chunk), and their pictures.

`python -m tb.ahbm.launch_sweep [--quick]` (also run by `python -m tb.perf`, i.e. `make bench`, after the
decode sweep). Every point runs tb/ahbm/test_sweep.py on the d=128 CUBE of the ahbm_llama bench
(G = 8, DMA_BW 64 B/cycle, DMA_LAT 100, PREFETCH 4, tile 64), one build per link width (IPCQ_W is a
build parameter; WORDS sized for the largest batch), Verilator by default, and is scored like every
AHBM bench (each request's O bit exact and within tolerance, counts).

Decode table (B requests of COUNTER = 4096 tokens each, N = 8 PEs, start_pe = id mod 8):
  launch     cycles from the kernels' start to the last PE idle (PE 0's cyc_now)
  reduct.    the last composite's end on any PE to the end of the root's last merge (its activity log):
             the reduction no tile hides; red/launch = reduct. / launch
  tail       launch end - the last composite's end: the reduction and the root's NORM_STORE
  DMA roof   the busiest PE's K+V bytes of all B requests / DMA_BW (decode_sweep.dma_roofline)
  roof       DMA roof + one reduction at the link width (models/ahbm/reduce.reduction_roofline)
  polls      the §5.6 loop: child polls, misses, misses covered by a new tile / by tiles in flight / idle
Targets (printed beside the measured figures, a miss reported, not failed): B = 1 at a 256-bit link, the
reduction at most 10 % of the launch; B = 8, launch at most 1.1x the DMA roofline of the whole batch.

Prefill table (one PE, PREFILL_SEQ positions, causal): launch cycles against the larger of the engine's
measured MM + VEC cycles and the DMA's measured bytes / DMA_BW.

Pictures (sim_build/perf/, and docs/img/ with --publish): ahbm_timeline_b<B>_w256.png, every PE's engine
and DMA over one launch from its activity log; ahbm_roofline.png, the decode sweep's cycles per tile
(last runs in sim_build/perf/ahbm_history.jsonl) and this sweep's launches against their rooflines.

Given a Dask scheduler (--scheduler, SCHEDULER in `make bench`), every decode and prefill point is one task on
that cluster (tb.perf.points), each run in a folder of its own beside its build (the first point of a link
width builds it while the others of that width wait on the build folder's lock); a timeline point sends its
activity logs back, and the tables, pictures and history are made here from the records, as a local run's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from models.ahbm.batch import Request, plan_batch
from models.ahbm.reduce import reduction_roofline
from tb.run.benches import ROOT, Bench
from tb.ahbm.case import GROUPS
from tb.ahbm.cube import DMA_LAT_ENV, PREFETCH_ENV
from tb.ahbm import plots as ahbm_plots
from tb.ahbm.decode_sweep import (COUNTER, DMA_BW, HEAD_D, HISTORY, N_PES, PERF_ROOT, REQUEST_ID, dma_roofline,
                                run_point, sweep_bench)
from tb.perf.points import CallFailure, FarmError, run_points, where_points_run

BS = (1, 4, 8)
QUICK_BS = (1, 8)
WIDTHS = (64, 256, 512)
QUICK_WIDTHS = (256,)
TILE = 64
PREFETCH = 4
DMA_LAT = 100
TRACE_WIDTH = 256                   # the timelines are drawn at this link width
PREFILL_SEQ = 128
PREFILL_QBLOCKS = (4, 8)            # 32 and 64 rows a composite
PREFILL_TILES = (32, 64, 128)
TARGET_REDUCTION = 0.10             # B = 1, 256-bit link: reduction tail / launch
TARGET_BATCH = 1.10                 # B = 8: launch / DMA roofline of the batch
LAUNCH_HISTORY = PERF_ROOT / "ahbm_launch_history.jsonl"
DOCS_IMG = ROOT / "docs" / "img"


def slice_words(b: int, counter: int = COUNTER, tile: int = TILE) -> int:
    """WORDS (64-byte slice words) every PE needs for `b` decode requests of `counter` tokens."""
    reqs = [Request(counter, counter - 1, 1, REQUEST_ID + r) for r in range(b)]
    need = plan_batch(reqs, N_PES, GROUPS, HEAD_D, tile).slice_bytes
    return -(-need // 64)


def launch_bench(width: int, words: int) -> Bench:
    base = sweep_bench()
    return dataclasses.replace(base, name=f"ahbm_launch_w{width}",
                               parameters={**base.parameters, "IPCQ_W": width, "WORDS": max(words, base.parameters["WORDS"])},
                               description=f"AHBM launch sweep, IPCQ_W {width}")


# ---------------------------------------------------------------- decode points (pure)
@dataclass
class LaunchPoint:
    """One decode launch (B requests at a link width). `trace` (the PEs' activity logs, the launch's first
    and last cycle) is kept for a passed point at TRACE_WIDTH: its timeline is drawn where the sweep reports,
    which may not be where it ran."""

    b: int
    width: int
    passed: bool = False
    message: str = ""
    wall_s: float = 0.0
    seed: int = 0
    metrics: dict[str, Any] | None = None
    log: str = ""
    trace: tuple[dict[int, list[tuple[int, ...]]], int, int] | None = None


def last_merge_end(log: Sequence[Sequence[int]]) -> int | None:
    """The cycle a PE's last merge span ended, from its activity log (class 6 = merge), or None."""
    for i in range(len(log) - 1, -1, -1):
        if log[i][1] & 7 == 6:
            return log[i + 1][0] if i + 1 < len(log) else None
    return None


def launch_metrics(rec: dict[str, Any], width: int, b: int) -> dict[str, Any]:
    """A decode point's figures from its JSON line (module docstring). `reduction` needs the root's
    activity log: from the last composite's end to the end of the root's last merge (the root's
    NORM_STORE after it is the rest of the tail)."""
    launch = rec["end"] - rec["start"]
    last = max(c["cyc_last"] for c in rec["counters"])
    if launch <= 0 or not rec["start"] < last <= rec["end"]:
        raise ValueError(f"launch {rec['start']}..{rec['end']}, last composite end {last}: nothing to measure")
    tail = rec["end"] - last
    root = next((p for p, c in zip(rec["pes"], rec["counters"]) if c["cnt_store"]), None)
    log = rec.get("activity", {}).get(str(root))
    merged = last_merge_end(log) if log else None
    reduction = None if merged is None else merged - last
    droof = dma_roofline(int(rec.get("counter", COUNTER)), N_PES, HEAD_D, DMA_BW, b)
    roof = droof + reduction_roofline(N_PES, GROUPS, HEAD_D, width)
    return {"launch": launch, "tail": tail, "reduction": reduction,
            "red_share": None if reduction is None else reduction / launch, "tail_share": tail / launch,
            "dma_roof": droof, "roof": roof, "vs_roof": launch / roof, "vs_dma": launch / droof,
            "polls": rec.get("polls", {})}


def format_launch_table(points: Sequence[LaunchPoint]) -> str:
    head = (f"{'B':>2s} {'link':>4s} {'launch':>7s} {'reduct.':>7s} {'red/launch':>10s} {'tail':>5s} "
            f"{'tail/launch':>11s} {'DMA roof':>8s} "
            f"{'roof':>6s} {'/roof':>6s} {'/DMA':>6s} {'polls':>6s} {'misses':>6s} {'new tile':>8s} "
            f"{'in flight':>9s} {'idle':>5s} {'wall s':>6s}")
    lines = [head, "-" * len(head)]
    for p in sorted(points, key=lambda x: (x.b, x.width)):
        m = p.metrics
        if not p.passed or m is None:
            lines.append(f"{p.b:2d} {p.width:4d}  FAILED: {p.message}")
            continue
        q = m["polls"]
        red = "-" if m["reduction"] is None else f"{m['reduction']:d}"
        share = "-" if m["red_share"] is None else f"{100 * m['red_share']:.1f}%"
        lines.append(f"{p.b:2d} {p.width:4d} {m['launch']:7d} {red:>7s} {share:>10s} {m['tail']:5d} "
                     f"{100 * m['tail_share']:10.1f}% {m['dma_roof']:8d} {m['roof']:6d} {m['vs_roof']:6.2f} {m['vs_dma']:6.2f} "
                     f"{q.get('pop_polls', 0):6d} {q.get('pop_misses', 0):6d} {q.get('misses_covered', 0):8d} "
                     f"{q.get('misses_in_flight', 0):9d} {q.get('misses_idle', 0):5d} {p.wall_s:6.1f}")
    return "\n".join(lines)


def target_lines(points: Sequence[LaunchPoint]) -> list[str]:
    """The two targets, each with its measured figure and met / missed (or not measured)."""
    by = {(p.b, p.width): p for p in points if p.passed and p.metrics}
    out = []
    p = by.get((1, 256))
    if p is None or p.metrics["red_share"] is None:
        out.append(f"target: B=1, 256-bit link, reduction <= {100 * TARGET_REDUCTION:.0f}% of the launch: not measured")
    else:
        s = p.metrics["red_share"]
        out.append(f"target: B=1, 256-bit link, reduction <= {100 * TARGET_REDUCTION:.0f}% of the launch: measured "
                   f"{100 * s:.1f}% ({p.metrics['reduction']} of {p.metrics['launch']} cycles, the last composite's "
                   f"end to the root's last merge; with the root's NORM_STORE {100 * p.metrics['tail_share']:.1f}%): "
                   + ("met" if s <= TARGET_REDUCTION else "missed"))
    eights = sorted((x for x in by.values() if x.b == 8), key=lambda x: x.width)
    if not eights:
        out.append(f"target: B=8, launch <= {TARGET_BATCH:.1f}x the batch's DMA roofline: not measured")
    for x in eights:
        r = x.metrics["vs_dma"]
        out.append(f"target: B=8, {x.width}-bit link, launch <= {TARGET_BATCH:.1f}x the batch's DMA roofline: "
                   f"measured {r:.3f}x ({x.metrics['launch']} / {x.metrics['dma_roof']} cycles): "
                   + ("met" if r <= TARGET_BATCH else "missed"))
    return out


# ---------------------------------------------------------------- prefill points (pure)
@dataclass
class PrefillPoint:
    q_block: int
    tile: int
    passed: bool = False
    message: str = ""
    wall_s: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)
    log: str = ""


def prefill_metrics(rec: dict[str, Any]) -> dict[str, Any]:
    c = rec["counters"][0]
    launch = rec["end"] - rec["start"]
    compute = c["cyc_mm"] + c["cyc_vec"]
    dma = -(-c["dma_bytes"] // rec["params"]["DMA_BW"])
    bound = max(compute, dma)
    return {"launch": launch, "composites": c["cnt_comp"], "masks": c["cnt_mask"], "compute": compute,
            "dma": dma, "bound": bound, "vs_bound": launch / bound if bound else 0.0}


def format_prefill_table(points: Sequence[PrefillPoint]) -> str:
    head = (f"{'q_block':>7s} {'rows':>4s} {'tile':>4s} {'launch':>7s} {'comp.':>5s} {'masks':>5s} "
            f"{'MM+VEC':>7s} {'DMA':>6s} {'/bound':>6s} {'wall s':>6s}")
    lines = [head, "-" * len(head)]
    for p in sorted(points, key=lambda x: (x.q_block, x.tile)):
        m = p.metrics
        if not p.passed:
            lines.append(f"{p.q_block:7d} {GROUPS * p.q_block:4d} {p.tile:4d}  FAILED: {p.message}")
            continue
        lines.append(f"{p.q_block:7d} {GROUPS * p.q_block:4d} {p.tile:4d} {m['launch']:7d} {m['composites']:5d} "
                     f"{m['masks']:5d} {m['compute']:7d} {m['dma']:6d} {m['vs_bound']:6.2f} {p.wall_s:6.1f}")
    return "\n".join(lines)


# ---------------------------------------------------------------- runs
def common_env(tile: int) -> dict[str, str]:
    return {"AHBM_SWEEP_TILE": str(tile), PREFETCH_ENV: str(PREFETCH), DMA_LAT_ENV: str(DMA_LAT)}


@dataclass(frozen=True)
class LaunchArgs:
    """One decode launch as a task's argument (picklable): all a worker needs to run it."""

    b: int
    width: int
    words: int
    seed: int
    verbose: bool = False
    sim: str = "verilator"
    own_dir: bool = False  # a run folder of its own (points side by side on a cluster)

    def __str__(self) -> str:
        return f"AHBM launch B={self.b} link={self.width}"


@dataclass(frozen=True)
class PrefillArgs:
    """One prefill point as a task's argument (picklable)."""

    q_block: int
    tile: int
    words: int
    seed: int
    verbose: bool = False
    sim: str = "verilator"
    own_dir: bool = False

    def __str__(self) -> str:
        return f"AHBM prefill q_block={self.q_block} tile={self.tile}"


def decode_launch(args: LaunchArgs) -> LaunchPoint:
    """One decode launch on its link width's build (built first if missing): its scored LaunchPoint."""
    b, w = args.b, args.width
    env = {**common_env(TILE), "AHBM_SWEEP_B": str(b), "AHBM_SWEEP_TRACE": "1"}  # every point: the root's merges
    run = run_point(launch_bench(w, args.words), f"b{b}_w{w}", env, args.seed, args.verbose, args.sim, args.own_dir)
    pt = LaunchPoint(b, w, message=run.message, wall_s=run.wall_s, seed=args.seed, log=run.log)
    if run.rec is not None and run.passed:
        try:
            pt.metrics = launch_metrics(run.rec, w, b)
            pt.passed = True
        except (ValueError, KeyError) as exc:
            pt.message = f"unreadable measurement: {exc}"
        if pt.passed and w == TRACE_WIDTH:  # a picture
            logs = {int(k): [tuple(e) for e in v] for k, v in run.rec["activity"].items()}
            pt.trace = (logs, run.rec["start"], run.rec["end"])
    return pt


def prefill_point(args: PrefillArgs) -> PrefillPoint:
    """One prefill point on the decode table's first build (built first if missing)."""
    env = {**common_env(args.tile), "AHBM_SWEEP_PREFILL": f"{PREFILL_SEQ},{args.q_block}"}
    run = run_point(launch_bench(WIDTHS[0], args.words), f"prefill_qb{args.q_block}_t{args.tile}", env, args.seed,
                    args.verbose, args.sim, args.own_dir)
    pt = PrefillPoint(args.q_block, args.tile, message=run.message, wall_s=run.wall_s, log=run.log)
    if run.rec is not None and run.passed:
        pt.metrics = prefill_metrics(run.rec)
        pt.passed = True
    return pt


def launch_point(args: LaunchArgs | PrefillArgs) -> LaunchPoint | PrefillPoint:
    """The sweep's one task function: a decode launch or a prefill point (one list, one submission)."""
    return decode_launch(args) if isinstance(args, LaunchArgs) else prefill_point(args)


def _as_point(args: LaunchArgs | PrefillArgs, entry: LaunchPoint | PrefillPoint | CallFailure
              ) -> LaunchPoint | PrefillPoint:
    """The point's record, or a failed one saying why its task gave none."""
    if not isinstance(entry, CallFailure):
        return entry
    if isinstance(args, LaunchArgs):
        return LaunchPoint(args.b, args.width, message=entry.why, seed=args.seed)
    return PrefillPoint(args.q_block, args.tile, message=entry.why)


def _progress(args: LaunchArgs | PrefillArgs, entry: LaunchPoint | PrefillPoint | CallFailure) -> None:
    pt = _as_point(args, entry)
    what = (f"ahbm launch:  B={pt.b} link={pt.width}" if isinstance(pt, LaunchPoint)
            else f"ahbm prefill: q_block={pt.q_block} tile={pt.tile}")
    print(f"{what}: {'PASS' if pt.passed else 'FAIL'} {pt.wall_s:.1f}s"
          + ("" if pt.passed else f" ({pt.message}; log {pt.log or '-'})"), flush=True)


def draw_timeline(pt: LaunchPoint, trace_dir: Path) -> Path:
    """The timeline picture of a traced decode point."""
    assert pt.trace is not None and pt.metrics is not None
    logs, start, end = pt.trace
    return ahbm_plots.timeline(logs, start, end,
                               f"decode, B={pt.b} x {COUNTER} tokens, N={N_PES}, d={HEAD_D}, {pt.width}-bit IPCQ, "
                               f"PREFETCH {PREFETCH}, tile {TILE}: {pt.metrics['launch']} cycles",
                               trace_dir / f"ahbm_timeline_b{pt.b}_w{pt.width}.png")


def run_launches(bs: Sequence[int], widths: Sequence[int], prefill_tiles: Sequence[int], seed: int, verbose: bool,
                 sim: str, trace_dir: Path, words: int, scheduler: str | None = None
                 ) -> tuple[list[LaunchPoint], list[PrefillPoint]]:
    """Every decode launch (width-major), then every prefill point (none if `prefill_tiles` is empty): one
    after another here, or a task each on the cluster at `scheduler`; then the timelines."""
    own = bool(scheduler)
    specs: list[LaunchArgs | PrefillArgs] = [LaunchArgs(b, w, words, seed, verbose, sim, own)
                                             for w in widths for b in bs]
    specs += [PrefillArgs(qb, t, words, seed, verbose, sim, own) for qb in PREFILL_QBLOCKS for t in prefill_tiles]
    entries = [_as_point(a, e) for a, e in zip(specs, run_points(launch_point, specs, scheduler=scheduler,
                                                                  on_done=_progress))]
    points = [p for p in entries if isinstance(p, LaunchPoint)]
    for p in points:
        if p.trace is not None:
            draw_timeline(p, trace_dir)
    return points, [p for p in entries if isinstance(p, PrefillPoint)]


def last_decode_sweep(path: Path = HISTORY) -> list[tuple[int, int, int, float, float]]:
    """(prefetch, dma_lat, tile, cycles/tile, roofline) of the newest passed decode-sweep run of each point."""
    rows: dict[tuple[int, int, int], tuple[int, int, int, float, float]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            m = r.get("metrics")
            if r.get("passed") and m:
                key = (r["prefetch"], r["dma_lat"], r["tile"])
                rows[key] = (*key, m["cyc_per_tile"], m["roofline"])
    return sorted(rows.values())


def launch_main(*, quick: bool = False, seed: int = 1, verbose: bool = False, sim: str = "verilator",
                publish: bool = False, prefill: bool = True, scheduler: str | None = None) -> int:
    """Run (here, or a task per point on the cluster at `scheduler`), print the tables and targets, draw,
    append the history; 0 if every point passed, 1 if one did not, 2 if the sweep could not run."""
    from tb.perf.history import git_rev

    bs, widths = (QUICK_BS, QUICK_WIDTHS) if quick else (BS, WIDTHS)
    print(f"ahbm launch sweep: B {list(bs)} x link {list(widths)} bits, {COUNTER} tokens a request, PREFETCH "
          f"{PREFETCH}, tile {TILE}, DMA_LAT {DMA_LAT}, seed {seed}, {sim}", flush=True)
    prefill_tiles = ((64,) if quick else PREFILL_TILES) if prefill else ()
    if scheduler:
        n = len(bs) * len(widths) + len(PREFILL_QBLOCKS) * len(prefill_tiles)
        print(f"ahbm launch sweep: {where_points_run(n, scheduler)}", flush=True)
    t0 = time.monotonic()
    words = slice_words(max(BS))                    # the same builds with --quick
    try:
        points, pre = run_launches(bs, widths, prefill_tiles, seed, verbose, sim, PERF_ROOT, words, scheduler)
    except FarmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wall = time.monotonic() - t0
    print("", flush=True)
    print(f"AHBM decode launches: N={N_PES}, d={HEAD_D}, G={GROUPS}, B requests x {COUNTER} tokens, tile {TILE}, "
          f"PREFETCH {PREFETCH}, DMA_BW {DMA_BW}, DMA_LAT {DMA_LAT}")
    print(format_launch_table(points))
    print("roof = DMA roof + one reduction at the link width (ceil(log2 N) levels of a packet, streamed merge); "
          "tail = cycles after the last composite")
    for line in target_lines(points):
        print(line)
    if pre:
        print("")
        print(f"AHBM prefill: one PE, {PREFILL_SEQ} positions causal, d={HEAD_D}, G={GROUPS}, PREFETCH {PREFETCH}; "
              "/bound = launch / max(MM+VEC cycles, DMA bytes / DMA_BW), both measured")
        print(format_prefill_table(pre))
    ok = [p for p in points if p.passed]
    if ok:
        png = ahbm_plots.roofline_plot(last_decode_sweep(),
                                       [(p.b, p.width, p.metrics["launch"], p.metrics["dma_roof"]) for p in ok],
                                       PERF_ROOT / "ahbm_roofline.png", TARGET_BATCH)
        pngs = [png] + sorted(PERF_ROOT.glob(f"ahbm_timeline_b*_w{TRACE_WIDTH}.png"))
        print("pictures: " + ", ".join(str(x.relative_to(ROOT)) for x in pngs))
        if publish:
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            for x in pngs:
                shutil.copyfile(x, DOCS_IMG / x.name)
            print(f"(copied to {DOCS_IMG.relative_to(ROOT)}/)")
    LAUNCH_HISTORY.parent.mkdir(parents=True, exist_ok=True)
    with LAUNCH_HISTORY.open("a") as f:
        git = git_rev()
        for p in points:
            f.write(json.dumps({"git": git, "kind": "decode", "b": p.b, "width": p.width, "passed": p.passed,
                                "message": p.message, "seed": p.seed, "wall_s": round(p.wall_s, 2),
                                "metrics": p.metrics}) + "\n")
        for q in pre:
            f.write(json.dumps({"git": git, "kind": "prefill", "q_block": q.q_block, "tile": q.tile,
                                "passed": q.passed, "message": q.message, "metrics": q.metrics}) + "\n")
    print(f"wall {wall:.0f} s for {len(points) + len(pre)} runs; appended to {LAUNCH_HISTORY.relative_to(ROOT)}")
    return 0 if all(p.passed for p in points) and all(q.passed for q in pre) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.ahbm.launch_sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help=f"B {QUICK_BS} at {QUICK_WIDTHS[0]} bits, prefill tile 64")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--sim", choices=("icarus", "verilator"), default="verilator")
    ap.add_argument("--publish", action="store_true", help="copy the pictures to docs/img/ (docs/speed.md's)")
    ap.add_argument("--no-prefill", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None,
                    help="a Dask scheduler's address: each point a task there (default: SCHEDULER, else here)")
    args = ap.parse_args(argv)
    from tb.perf.compare import seed_from_env

    seed = args.seed if args.seed is not None else seed_from_env()
    return launch_main(quick=args.quick, seed=seed, verbose=args.verbose, sim=args.sim, publish=args.publish,
                       prefill=not args.no_prefill, scheduler=args.scheduler)


if __name__ == "__main__":
    sys.exit(main())
