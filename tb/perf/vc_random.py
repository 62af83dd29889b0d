"""The vector core's long differential run: 5,000 constrained-random programs, RTL = model after each.

`python -m tb.perf.vc_random [--programs N]` (also run by `python -m tb.perf`,
i.e. `make bench`). It runs the vector_core bench's test_random_programs
(tb/vector/test_vector_core.py) with AGSIM_VC_PROGRAMS = N in its own build
folder (sim_build/perf/vector_core/) and prints what the test measured: the
programs run, the instructions the model executed (the RTL executed the same,
or the case failed), the faults raised per code, the RUN cycles the RTL
reported, the coverage goals missed, the wall time. `make test` runs the same
test with 300 programs. A failing program fails the run (exit status 1); the
log names the case, its generator seed and index, and the program.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from tb.run.benches import get_bench
from tb.vector.test_vector_core import RANDOM_PROGRAMS_ENV, RANDOM_STATS_ENV
from tb.run.runner import BUILD_ROOT, run_bench

PERF_ROOT = BUILD_ROOT / "perf"
DEFAULT_PROGRAMS = 5000
WALL_S_PER_PROGRAM = 0.5  # the bound on the run's wall time: generous, a hang still ends


def run(programs: int = DEFAULT_PROGRAMS, seed: int = 1, verbose: bool = False) -> int:
    bench = dataclasses.replace(get_bench("vector_core"), max_wall_s=int(120 + WALL_S_PER_PROGRAM * programs))
    out = PERF_ROOT / bench.name / "vc_random.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    result = run_bench(bench, seed=seed, build_root=PERF_ROOT, log_to_file=not verbose,
                       test_filter="test_random_programs$",
                       extra_env={RANDOM_PROGRAMS_ENV: str(programs), RANDOM_STATS_ENV: str(out)})
    wall = time.monotonic() - t0
    log = PERF_ROOT / bench.name / "sim.log"
    if result.error or not out.exists():
        print(f"vc random: FAILED before measuring: {result.error or 'no measurement written'} (log {log})")
        return 1
    m = json.loads(out.read_text())
    passed = bool(result.tests) and all(t.passed for t in result.tests)
    faults = ", ".join(f"{k} {v}" for k, v in sorted(m["faults"].items()))
    print(f"vc random: {'PASS' if passed else 'FAIL'} seed {seed}: {m['programs']} programs, "
          f"{m['instructions']} instructions executed, {m['checks']} checks, {m['sim_cycles']} simulated cycles, "
          f"{wall:.0f} s wall ({m['programs'] / wall:.1f} programs/s)")
    print(f"vc random: opcodes executed {m['opcodes']} of 32; faults raised: {faults}; "
          f"coverage goals missed: {m['missing'] or 'none'}; RUN cycle counts returned: {m['run_cycles']}")
    print("vc random: HAZARD reports, RTL = model after every RUN: "
          + ", ".join(f"{hid} {n}" for hid, n in m["hazards"].items()))
    if not passed:
        print(f"vc random: first failures: {m['failures']} (log {log})")
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf.vc_random", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=DEFAULT_PROGRAMS)
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--verbose", "-v", action="store_true", help="simulator output on the terminal")
    args = ap.parse_args(argv)
    from tb.perf.compare import seed_from_env

    return run(args.programs, args.seed if args.seed is not None else seed_from_env(), args.verbose)


if __name__ == "__main__":
    sys.exit(main())
