"""`python -m tb.perf` (make bench): the cocotb bench against a pure-Verilog bench.

Runs 20,000 flits of uniform random traffic on the mesh_4x4 bench under cocotb
and then, on the same stimulus, under rtl/harness/mesh_pure_tb.v; prints both
wall times, simulated cycles per second and the ratio cocotb/pure against the
target. Exits non-zero only if a run failed its checks (a missed speed target
is reported, not failed). COCOTB_RANDOM_SEED picks the seed (default 1).
"""

from __future__ import annotations

import argparse
import os
import sys

from tb.perf.compare import HISTORY, append_history, compare, format_report, seed_from_env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus") or "icarus")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="show the simulators' output instead of keeping it in the build folder's logs")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else seed_from_env()
    try:
        result = compare(seed, sim=args.sim, verbose=args.verbose)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(result))
    append_history(result)
    print(f"(appended to {HISTORY})")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
