"""The whole timing corpus on the vector core: 909 upstream programs, function and timing.

`python -m tb.perf.vec_timing [--select SPEC]` (also run by `python -m tb.perf`,
i.e. `make bench`). It reads clients/vec_timing/ and refuses, before any build,
a corpus that does not read or a record that does not fit the harness (one
line, exit status 2); then runs the vec_timing bench's test_corpus with every
record (AGSIM_VT_SELECT=all) in its own build folder (sim_build/perf/vec_timing/)
and prints what it measured: the functional verdict (enforced), one TIMING line
per set (programs, exact, within ±2 cycles, median / p95 relative error, worst
program, the target and whether it is met; enforced), the wall time. The
per-program figures, with each program's first differing word, are in
sim_build/perf/vec_timing/vec_timing.json. `make test` runs the 28-record subset.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from tb.run.benches import get_bench
from tb.vector.vec_timing.observed import Limits, refusal
from tb.vector.vec_timing.records import CorpusError, load_corpus, select
from tb.run.runner import BUILD_ROOT, run_bench

PERF_ROOT = BUILD_ROOT / "perf"
SIM = "icarus"
WALL_S_PER_RECORD = 2.0  # the bound on the run's wall time (measured: 0.1 s a record on Icarus); a hang still ends


def run(spec: str = "all", seed: int = 1, verbose: bool = False) -> int:
    bench = get_bench("vec_timing")
    try:
        records = select(load_corpus(), spec)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    limits = Limits.from_parameters(bench.parameters)
    refused = [msg for msg in (refusal(r, limits) for r in records) if msg]
    if refused:
        print(f"error: {refused[0]}" + (f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""),
              file=sys.stderr)
        return 2
    bench = dataclasses.replace(bench, max_wall_s=int(120 + WALL_S_PER_RECORD * len(records)))
    out = PERF_ROOT / bench.name / "vec_timing.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    result = run_bench(bench, sim=SIM, seed=seed, build_root=PERF_ROOT, log_to_file=not verbose,
                       test_filter="test_corpus$", extra_env={"AGSIM_VT_SELECT": spec, "AGSIM_VT_OUT": str(out)})
    wall = time.monotonic() - t0
    log = PERF_ROOT / bench.name / "sim.log"
    if result.error or not out.exists():
        print(f"vec timing: FAILED before measuring: {result.error or 'no measurement written'} (log {log})")
        return 1
    m = json.loads(out.read_text())
    passed = bool(result.tests) and all(t.passed for t in result.tests)
    functional = "PASS" if m["functional_failures"] == 0 else f"FAIL ({m['functional_failures']} mismatches)"
    print(f"vec timing: FUNCTIONAL {functional}: {m['records']} programs, {m['checks']} checks, "
          f"{m['sim_cycles']} simulated cycles, {wall:.0f} s wall on {SIM} (build included)")
    for s in m["summaries"].values():
        print(f"vec timing: TIMING {s['line']}")
    print(f"vec timing: per-program figures and first differing words in {out}")
    if not passed:
        failed = [t.name for t in result.tests if not t.passed]
        print(f"vec timing: FAIL {failed} (log {log})")
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf.vec_timing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--select", default="all", help="all (default), subset, or a regular expression of record ids")
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--verbose", "-v", action="store_true", help="simulator output on the terminal")
    args = ap.parse_args(argv)
    from tb.perf.compare import seed_from_env

    return run(args.select, args.seed if args.seed is not None else seed_from_env(), args.verbose)


if __name__ == "__main__":
    sys.exit(main())
