"""The regression engine's scaling (tb/farm): the vector core's differential in shards on 1, then 2 workers.

`python -m tb.perf.farm_scaling [--programs N --shard M --pairs P]` (also a stage of `make bench`). The
runs alternate, 1 worker then 2, P pairs (default 2), so a drift of the machine's speed over the minutes
falls on both sides alike. Figures, each beside its target:
- throughput ratio: programs per second of elapsed time on 2 local workers over the same on 1, over all
  pairs (target >= 1.8 on this 2-core machine), and each pair's own;
- the machine's capacity beside it: 2 x the median task wall alone / the median task wall side by side,
  the ratio a perfect engine would reach on this machine at that moment (two simulators on the two cores
  of a virtual machine run slower than one alone: shared caches, memory, the host's other guests), and the
  engine's efficiency, the measured ratio over that capacity;
- the engine's per-task overhead: the time workers spent outside tasks (scheduling, results coming back, a
  worker's idle tail), (elapsed x workers - the tasks' own walls summed) / tasks, against the median task's
  wall (target <= 5 %). The cluster's start is apart: it is paid once per run, not per task.
The build is made before any run, so none pays it.
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
from tb.run.runner import BUILD_ROOT

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


def _merged(runs: list[dict]) -> dict:
    """Runs on the same number of workers as one: elapsed and programs summed, walls pooled."""
    return {"workers": runs[0]["workers"], "start_s": max(r["start_s"] for r in runs),
            "elapsed_s": sum(r["elapsed_s"] for r in runs), "walls": [w for r in runs for w in r["walls"]],
            "passed": all(r["passed"] for r in runs), "programs": sum(r["programs"] for r in runs)}


def _rate(m: dict) -> float:
    return m["programs"] / m["elapsed_s"]


def report(ones: list[dict], twos: list[dict]) -> list[str]:
    one, two = _merged(ones), _merged(twos)
    ratio = _rate(two) / _rate(one)
    capacity = 2 * statistics.median(one["walls"]) / statistics.median(two["walls"])
    lines = []
    for m in ones + twos:
        lines.append(f"farm: {m['workers']} worker(s): {m['programs']} programs in {len(m['walls'])} shards, "
                     f"{m['elapsed_s']:.1f} s elapsed ({_rate(m):.2f} programs/s), cluster "
                     f"start {m['start_s']:.1f} s apart, {'PASS' if m['passed'] else 'FAIL'}")
    pairs = ", ".join(f"{_rate(b) / _rate(a):.2f}" for a, b in zip(ones, twos))
    lines.append(f"farm: throughput 2 workers / 1 worker = {ratio:.2f} over {len(ones)} alternating pair(s) "
                 f"(each pair: {pairs}) (target >= {RATIO_TARGET}: {'met' if ratio >= RATIO_TARGET else 'NOT met'})")
    lines.append(f"farm: the machine's capacity: a task's median wall {statistics.median(one['walls']):.1f} s alone, "
                 f"{statistics.median(two['walls']):.1f} s beside another: 2 workers can give about {capacity:.2f} "
                 f"(medians); "
                 f"the engine reached {100 * ratio / capacity:.0f} % of it")
    for m in (one, two):
        per, median = overhead(m), statistics.median(m["walls"])
        share = per / median
        lines.append(f"farm: {m['workers']} worker(s): {per:.2f} s per task outside tasks, median task "
                     f"{median:.1f} s: {100 * share:.1f} % (target <= {100 * OVERHEAD_TARGET:.0f} %: "
                     f"{'met' if share <= OVERHEAD_TARGET else 'NOT met'})")
    return lines


def run(programs: int = 400, shard: int = 100, seed: int = 1, pairs: int = 2) -> int:
    warm = plan_shards([seed], 1, 1, "icarus")[0]
    first = run_task(warm, str(ROOT))  # the build, before any measured run
    if first.result.error:
        print(f"farm: FAILED before measuring: {first.result.error}")
        return 1
    ones, twos = [], []
    for _ in range(pairs):
        ones.append(measure(1, programs, shard, seed, ROOT))
        twos.append(measure(2, programs, shard, seed, ROOT))
    print("\n".join(report(ones, twos)))
    return 0 if all(m["passed"] for m in ones + twos) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf.farm_scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", type=int, default=400)
    ap.add_argument("--shard", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=2, help="alternating (1 worker, 2 workers) pairs of runs")
    args = ap.parse_args(argv)
    return run(args.programs, args.shard, args.seed, args.pairs)


if __name__ == "__main__":
    sys.exit(main())
