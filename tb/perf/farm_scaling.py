"""The regression engine's scaling (tb/farm): the vector core's differential in shards on 1, then 2 workers.

`python -m tb.perf.farm_scaling [--programs N --shard M]` (also a stage of `make bench`). Two figures, each
beside its target:
- throughput ratio: programs per second of elapsed time on 2 local workers over the same on 1 (target >= 1.8
  on this 2-core machine);
- the engine's per-task overhead: the time workers spent outside tasks (scheduling, results coming back, a
  worker's idle tail), (elapsed x workers - the tasks' own walls summed) / tasks, against the median task's
  wall (target <= 5 %). The cluster's start is apart: it is paid once per run, not per task.
The build is made before either run, so neither pays it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from tb.farm.engine import close_client, open_client, run_tasks
from tb.farm.tasks import run_task
from tb.farm.vc_shards import plan_shards
from tb.runner import BUILD_ROOT

ROOT = BUILD_ROOT / "perf" / "farm"
RATIO_TARGET = 1.8
OVERHEAD_TARGET = 0.05


def measure(workers: int, programs: int, shard: int, seed: int, root: Path) -> dict:
    """One run of the shards on a local cluster of `workers`: its elapsed time, the tasks' walls, passed."""
    t0 = time.monotonic()
    client = open_client(None, workers)
    started = time.monotonic() - t0
    try:
        run = run_tasks(client, plan_shards([seed], programs, shard, "icarus"), root)
    finally:
        close_client(client)
    walls = [o.result.wall_s for o in run.outcomes]
    passed = bool(run.outcomes) and not run.not_run and all(o.result.tests and not o.result.failed
                                                              for o in run.outcomes)
    return {"workers": workers, "start_s": started, "elapsed_s": run.wall_s, "walls": walls, "passed": passed,
            "programs": programs}


def overhead(m: dict) -> float:
    """Seconds per task that workers spent outside tasks."""
    return (m["elapsed_s"] * m["workers"] - sum(m["walls"])) / len(m["walls"])


def report(one: dict, two: dict) -> list[str]:
    ratio = (two["programs"] / two["elapsed_s"]) / (one["programs"] / one["elapsed_s"])
    lines = []
    for m in (one, two):
        lines.append(f"farm: {m['workers']} worker(s): {m['programs']} programs in {len(m['walls'])} shards, "
                     f"{m['elapsed_s']:.1f} s elapsed ({m['programs'] / m['elapsed_s']:.2f} programs/s), cluster "
                     f"start {m['start_s']:.1f} s apart, {'PASS' if m['passed'] else 'FAIL'}")
    lines.append(f"farm: throughput 2 workers / 1 worker = {ratio:.2f} (target >= {RATIO_TARGET}: "
                 f"{'met' if ratio >= RATIO_TARGET else 'NOT met'})")
    for m in (one, two):
        per, median = overhead(m), statistics.median(m["walls"])
        share = per / median
        lines.append(f"farm: {m['workers']} worker(s): {per:.2f} s per task outside tasks, median task "
                     f"{median:.1f} s: {100 * share:.1f} % (target <= {100 * OVERHEAD_TARGET:.0f} %: "
                     f"{'met' if share <= OVERHEAD_TARGET else 'NOT met'})")
    return lines


def run(programs: int = 400, shard: int = 100, seed: int = 1) -> int:
    warm = plan_shards([seed], 1, 1, "icarus")[0]
    first = run_task(warm, str(ROOT))  # the build, before either measured run
    if first.result.error:
        print(f"farm: FAILED before measuring: {first.result.error}")
        return 1
    one = measure(1, programs, shard, seed, ROOT)
    two = measure(2, programs, shard, seed, ROOT)
    print("\n".join(report(one, two)))
    return 0 if one["passed"] and two["passed"] else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf.farm_scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=400)
    ap.add_argument("--shard", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    return run(args.programs, args.shard, args.seed)


if __name__ == "__main__":
    sys.exit(main())
