"""`python -m tb.farm` (`make regress`): benches x seeds on a Dask cluster, one merged report.

    make regress SEEDS=200                      every bench, seeds 1..200, on a local cluster (JOBS workers)
    make regress BENCH=mesh_4x4,ipcq SEEDS=1..50
    make regress SEEDS=20 SCHEDULER=tcp://host:8786 FARM_ROOT=/shared/agsim   on an existing cluster
    make regress VC_PROGRAMS=20000 [VC_SHARD=500]   the vector core's random differential, in shards
    make regress BUNDLES=all SIM=verilator           the compiled bundle corpus, a task per bundle
    make regress UNTIL=coverage BUDGET=200 [BENCH=mesh_4x4]   new seeds until the coverage closes (or
                                                     200 tasks; BUDGET=2h: wall time); with VC_PROGRAMS=n,
                                                     the differential's next n programs a batch instead

Each task is one bench run with one seed (tb.farm.tasks). The report is
written to results.xml (a testsuite per task, bench@seed), the durations to
<root>/durations.json, the table printed in the bench table's order; each
failed task prints the `make` command that replays it alone. The tasks'
coverage databases are merged into <root>/coverage.xml, with a closure
report and <root>/coverage.png (tb.farm.coverage). Exit status: 0 all
passed (and, with UNTIL=coverage or VC_PROGRAMS, the coverage closed), 1 a
failure or an open hole, 2 bad input or no cluster, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tb.run.benches import ROOT
from tb.run.buildlock import FolderBusy, acquire, release
from tb.cover.db import Database
from tb.farm.bundles import bundle_folders, plan_bundles
from tb.farm.coverage import coverage_report
from tb.farm.engine import FarmError, FarmRun, close_client, open_client, run_tasks
from tb.farm.merge import summary, write_report
from tb.farm.seeds import parse_seeds
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.farm.until import SeedBatches, parse_budget, run_until_closed
from tb.farm.vc_shards import DEFAULT_SHARD, ShardBatches, coverage_lines, plan_shards
from tb.run.options import BadInput, check_filter, jobs_from_env
from tb.run.proctree import end_descendants
from tb.run.progress import fmt_s
from tb.run.regress import INTERRUPTED, select_benches
from tb.run.runner import BUILD_ROOT
from tb.run.simulators import SimulatorMissing, check_simulator, verilator_root
from tb.run.summary import finished_line

FARM_ROOT = BUILD_ROOT / "farm"


def plan(benches: list, seeds: list[int], sim: str, test_filter: str) -> list[BenchTask]:
    """Every (bench, seed) pair as a task, bench by bench in the table's order."""
    return [BenchTask(b.name, sim, s, test_filter) for b in benches for s in seeds]


def _announce(total: int | None):
    done = [0]

    def on_done(o: TaskOutcome) -> None:
        done[0] += 1
        r, host = o.result, o.host or "?"
        line = finished_line(r, f"{r.cycles} cycles", f"{fmt_s(r.wall_s)} on {host}")
        print(f"[{done[0]}/{total or '?'}] {o.task.label}: {line}", flush=True)
        if r.failed:
            print(f"    replay: {o.task.replay()}", flush=True)
    return on_done


def _until(args: argparse.Namespace, seeds: list[int], benches: list):
    """(the batch planner, the budget) of an UNTIL=coverage run, or None; refuses what cannot close."""
    if not args.until:
        if args.budget:
            raise BadInput(f"BUDGET={args.budget} without UNTIL=coverage: a budget bounds a run until closure")
        return None
    if args.until != "coverage":
        raise BadInput(f"UNTIL={args.until!r}: the one stopping rule is UNTIL=coverage")
    if args.bundles:
        raise BadInput("UNTIL=coverage with BUNDLES: compiled bundles sample no coverage model; run them with "
                       "BUNDLES alone")
    if not args.budget:
        raise BadInput("UNTIL=coverage needs BUDGET=<tasks> or BUDGET=<time> (e.g. BUDGET=200 or BUDGET=2h): "
                       "a hole no seed can fill must not run forever")
    budget = parse_budget(args.budget)
    if args.vc_programs:
        return ShardBatches(seeds[0], args.vc_programs, _count("VC_SHARD", args.vc_shard), args.sim), budget
    return SeedBatches(benches, seeds[0], args.sim, args.filter), budget


def _batch_line(k: int, database: Database | None) -> None:
    if database is None:
        print(f"batch {k}: no coverage sampled yet", flush=True)
        return
    hit, total = database.hit_total()
    print(f"batch {k}: coverage {hit}/{total} bins, {total - hit} hole(s)", flush=True)


def _count(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise BadInput(f"{name}={text!r} is not a whole number of programs") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.farm", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus") or "icarus")
    ap.add_argument("--bench", default=os.environ.get("BENCH", ""), help="comma-separated bench names (default all)")
    ap.add_argument("--seeds", default=os.environ.get("SEEDS", "1"), help="a count, a range a..b or a list a,b,c")
    ap.add_argument("--filter", default=os.environ.get("COCOTB_TEST_FILTER", ""), help="test name regex")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER", ""),
                    help="a Dask scheduler's address (default: a local cluster)")
    ap.add_argument("--workers", type=int, default=None, help="local cluster workers (default JOBS, else the cores)")
    ap.add_argument("--root", type=Path, default=Path(os.environ.get("FARM_ROOT") or FARM_ROOT),
                    help="builds and runs; on a cluster, a folder every worker can write (shared: one build per "
                         "bench; not shared: one per worker)")
    ap.add_argument("--results", type=Path, default=ROOT / "results.xml")
    ap.add_argument("--vc-programs", default=os.environ.get("VC_PROGRAMS", ""),
                    help="run the vector core's random differential instead: this many programs per seed")
    ap.add_argument("--bundles", default=os.environ.get("BUNDLES", ""),
                    help="run compiled bundles instead: `all` (clients/bundles) or comma-separated bundle folders")
    ap.add_argument("--vc-shard", default=os.environ.get("VC_SHARD") or str(DEFAULT_SHARD),
                    help="programs per task of the differential (default %(default)s)")
    ap.add_argument("--until", default=os.environ.get("UNTIL", ""),
                    help="'coverage': batches of new seeds (or shards) until the merged coverage closes")
    ap.add_argument("--budget", default=os.environ.get("BUDGET", ""),
                    help="with --until: at most this many tasks (200) or this much wall time (30m, 2h)")
    args = ap.parse_args(argv)
    try:
        check_simulator(args.sim)
        check_filter(args.filter)
        seeds = parse_seeds(args.seeds)
        benches = select_benches(args.bench, bool(args.bench))
        workers = jobs_from_env() if args.workers is None else args.workers
        if args.sim == "verilator":
            verilator_root()
        args.vc_programs = _count("VC_PROGRAMS", args.vc_programs) if args.vc_programs else 0
        until = _until(args, seeds, benches)
        if until is not None:
            tasks = []
        elif args.vc_programs:
            tasks = plan_shards(seeds, args.vc_programs, _count("VC_SHARD", args.vc_shard), args.sim)
        elif args.bundles:
            tasks = plan_bundles(bundle_folders(args.bundles), seeds, args.sim)
        else:
            tasks = plan(benches, seeds, args.sim, args.filter)
        client = open_client(args.scheduler or None, workers)
    except (ValueError, SimulatorMissing, FarmError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while the local cluster started (closed again by open_client): nothing ran
        print("interrupted: no task started", file=sys.stderr)
        return INTERRUPTED
    owner = f"tb.farm pid {os.getpid()}"
    try:
        acquire(args.root, owner)  # two runs in one root would write the same run folders
    except FolderBusy as exc:
        close_client(client)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    where = f"the scheduler at {args.scheduler}" if args.scheduler else f"a local cluster of {workers} worker(s)"
    if until is not None:
        batches, budget = until
        what = "vector-core shards" if args.vc_programs else f"{len(benches)} bench(es) on new seeds"
        print(f"running batches of {what} until the coverage closes or {budget} are spent, on {args.sim}, "
              f"on {where}; builds and runs in {args.root}", flush=True)
    else:
        what = (f"{args.vc_programs} vector-core programs x {len(seeds)} seed(s)" if args.vc_programs
                else f"{len({t.tag for t in tasks})} bundle(s) x {len(seeds)} seed(s)" if args.bundles
                else f"{len(benches)} bench(es) x {len(seeds)} seed(s)")
        print(f"running {len(tasks)} task(s) ({what}) on {args.sim}, "
              f"on {where}; builds and runs in {args.root}", flush=True)
    run: FarmRun | None = None
    try:
        if until is not None:
            batches, budget = until
            batches.for_workers(len(client.scheduler_info().get("workers", {})))
            u = run_until_closed(client, batches, budget, args.root, _announce(None), _batch_line)
            run, ended = u.run, f"{u.ended} after {u.batches} batch(es), {len(u.run.outcomes)} task(s): " \
                                f"{batches.needed(seeds[0])}"
        else:
            run, ended = run_tasks(client, tasks, args.root, _announce(len(tasks))), ""
    finally:
        close_client(client)
        if run is None or run.not_run:
            end_descendants()  # an interrupted run leaves nothing of its own running
        release(args.root, owner)
    write_report(run.outcomes, args.results, args.root / "durations.json")
    seeds_spec = f"UNTIL=coverage from {seeds[0]}" if until is not None else args.seeds
    print(summary(run.outcomes, run.not_run, seeds_spec, args.sim, run.wall_s, run.workers))
    print(f"results: {args.results}; durations: {args.root / 'durations.json'}")
    lines, database = coverage_report(run.outcomes, args.root)
    print("\n".join(lines))
    closed = True
    if args.vc_programs:
        lines, closed = coverage_lines(run.outcomes, database)
        print("\n".join(lines))
    if until is not None:
        closed = database is not None and database.closed
        print(f"UNTIL=coverage: {ended}")
    if run.not_run:
        print(f"interrupted: {len(run.not_run)} task(s) did not run", file=sys.stderr)
        return INTERRUPTED
    if not run.outcomes or not any(o.result.tests for o in run.outcomes):
        print("error: no test ran", file=sys.stderr)
        return 1
    return 0 if closed and all(o.result.failed == 0 for o in run.outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
