"""`python -m tb.perf` (make bench): the cocotb bench against a pure-Verilog bench,
then the AHBM decode sweep.

1. Runs 20,000 flits of uniform random traffic on the mesh_4x4 bench under
   cocotb and then, on the same stimulus, under rtl/harness/mesh_pure_tb.v;
   prints both wall times, simulated cycles per second and the ratio
   cocotb/pure against the target (tb/perf/compare.py).
2. The AHBM decode sweep (tb/perf/ahbm_sweep.py): PREFETCH 1..4 x tile
   32/64/128 on the d=128 CUBE, decode with SP over 8 PEs and a 4096-token
   context, every run scored; prints cycles per tile against the DMA
   roofline, DMA bandwidth, compute hidden under DMA (--quick: tile 64 only).
3. The vector core's long differential run (tb/perf/vc_random.py): 5,000
   constrained-random programs, RTL = model after every RUN (--quick: 1,000).

Exits non-zero only if a run failed its checks (a missed speed target is
reported, not failed). COCOTB_RANDOM_SEED picks the seed (default 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tb.perf import ahbm_sweep, vc_random
from tb.perf.compare import HISTORY, append_history, compare, format_report, seed_from_env
from tb.progress import Progress


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus") or "icarus")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="show the simulators' output instead of keeping it in the build folder's logs")
    ap.add_argument("--quick", action="store_true", help="AHBM sweep at tile 64 only (PREFETCH 1..4)")
    ap.add_argument("--jobs", "-j", type=int, default=ahbm_sweep.DEFAULT_JOBS,
                    help="AHBM sweep: PREFETCH builds run side by side (default %(default)s)")
    ap.add_argument("--no-sweep", action="store_true", help="the cocotb/pure comparison only")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else seed_from_env()
    steps = ["cocotb vs pure Verilog"]
    if not args.no_sweep:
        steps += ["AHBM decode sweep"] + ([] if args.quick else ["AHBM decode sweep, DMA_LAT 400"])
    steps += ["vector core differential run"]
    progress = Progress("bench-quick" if args.quick else "bench", steps, record=not args.no_sweep)
    t = time.monotonic()

    def step_done(name: str) -> None:
        nonlocal t
        print(progress.done(name, time.monotonic() - t), flush=True)
        t = time.monotonic()

    try:
        result = compare(seed, sim=args.sim, verbose=args.verbose)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(result))
    append_history(result)
    print(f"(appended to {HISTORY})")
    step_done(steps[0])
    rc = 0 if result.passed else 1
    if not args.no_sweep:
        print("", flush=True)
        if ahbm_sweep.sweep_main(quick=args.quick, seed=seed, jobs=args.jobs, verbose=args.verbose) != 0:
            rc = 1
        step_done("AHBM decode sweep")
        if not args.quick:
            # the same decode where the DMA latency is comparable to a tile's transfer: there the
            # prefetch depth shows (at DMA_LAT 100 every depth measures the same)
            print("", flush=True)
            if ahbm_sweep.sweep_main(seed=seed, jobs=args.jobs, verbose=args.verbose,
                                     tiles=ahbm_sweep.LATENCY_TILES, dma_lat=ahbm_sweep.LONG_DMA_LAT) != 0:
                rc = 1
            step_done("AHBM decode sweep, DMA_LAT 400")
    print("", flush=True)
    if vc_random.run(1000 if args.quick else vc_random.DEFAULT_PROGRAMS, seed=seed, verbose=args.verbose) != 0:
        rc = 1
    step_done("vector core differential run")
    progress.save()
    return rc


if __name__ == "__main__":
    sys.exit(main())
