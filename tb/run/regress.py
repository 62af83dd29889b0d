"""The main job: build and run every bench of the table, print one summary.

`make SIM=icarus` calls this. Options narrow it to one bench (BENCH=) or one
test (COCOTB_TEST_FILTER=); WAVES=1 gives each test its own FST and GTKWave
save file; MODULE=my_tb.test_x runs one's own cocotb module on the selected
benches instead of the table's (docs/getting-started.md). Writes a merged results.xml at the repository root and exits
non-zero if any test failed, any bench failed to build or run, or no test ran.

Each bench is a task of the regression engine `make regress` uses
(tb.farm.engine, tb.farm.tasks), so there is one runner: a local Dask cluster
of JOBS one-thread worker processes, one bench per worker, handed out one at
a time as workers come free (longest first). The tasks run in the benches'
usual folders (sim_build/<bench>/, which `make waves` opens) and the workers
print a bench's start and build lines themselves: they share this console.
So does VERBOSE=1's simulator output, streamed by the one worker it runs on
(a process this one started, whose output goes where this one's does), which
is why VERBOSE needs no in-process run of its own. The cluster is always
local: a SCHEDULER set for `make regress` is not read here, since the
summary, the logs it names, the waves and the run lock are this machine's
sim_build/, and the workers must inherit this shell's environment
(AGSIM_WALL_S among it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from tb.bundle.cycle_limits import check_overrides
from tb.run.benches import BENCHES, ROOT, get_bench
from tb.run.buildlock import FolderBusy, acquire, release
from tb.farm.engine import FarmError, FarmRun, close_client, open_client, run_tasks
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.run.options import (
    BadInput, check_filter, check_module, env_flag, jobs_from_env, seed_from_env, wall_override,
)
from tb.run.proctree import end_descendants
from tb.run.progress import Progress
from tb.run.typical import typical_for_benches
from tb.run.runner import BUILD_ROOT, BenchResult, bench_build_dir, list_tests
from tb.run.simulators import SimulatorMissing, check_simulator, compiler_version, verilator_root
from tb.run.summary import finished_line, format_summary, merge_results

INTERRUPTED = 130  # the shell's status for a run ended by Ctrl-C (128 + SIGINT)


def select_benches(spec: str, given: bool) -> list:
    """The benches BENCH names (comma-separated); all when BENCH is not given; an empty BENCH= is refused."""
    names = [n.strip() for n in spec.split(",")]
    if given and not any(names):
        raise BadInput("BENCH is set but empty; name one or more benches (`make list` shows them), or leave "
                       "BENCH out to run them all")
    if given and not all(names):
        raise BadInput(f"BENCH={spec!r} has an empty name between its commas; write BENCH=a,b")
    return [get_bench(n) for n in names if n] or list(BENCHES)


def print_tests(benches: list) -> None:
    """Each bench's test names as COCOTB_TEST_FILTER matches them (the module prefix left out)."""
    for bench in benches:
        names = [n.removeprefix(bench.test_module + ".") for n in list_tests(bench)]
        print(f"{bench.name}: {len(names)} test(s)")
        for n in names:
            print(f"  {n}")
    if benches and list_tests(benches[-1]):
        last = benches[-1]
        one = list_tests(last)[0].removeprefix(last.test_module + ".")
        print(f"run one: make SIM=icarus BENCH={last.name} COCOTB_TEST_FILTER='{re.escape(one)}$'")


def _report(o: TaskOutcome, bench: Any, progress: Progress, error_lines: dict[str, int], verbose: bool,
            header: bool, waves_dir: Path | None) -> BenchResult:
    """Print one finished bench: its line, progress, REPORT lines, where its waveforms went, and its ERROR
    lines if it failed (both scanned from its logs by the worker, tb.farm.tasks.run_task)."""
    r = o.result
    if header:
        print(f"--- {bench.name}: {bench.description}", flush=True)
    print(f"    {finished_line(r, f'{r.wall_s:.1f}s')}", flush=True)
    print(f"    {progress.done(bench.name, r.wall_s)}", flush=True)
    for line in o.report_lines:
        print(f"    {line}", flush=True)
    if waves_dir is not None:
        print(f"    {waves_line(r, bench.name, waves_dir)}", flush=True)
    found = o.error_lines
    error_lines[bench.name] = len(found)
    if r.failed and not verbose:
        for line in found[:20]:
            print(f"    {line}")
        if len(found) > 20:
            print(f"    ... {len(found) - 20} more ERROR lines in {', '.join(map(str, r.sim_logs))}")
    return r


def waves_line(r: BenchResult, bench: str, bench_dir: Path) -> str:
    """Where a WAVES=1 run of a bench left its FST and GTKWave save files (one folder per test)."""
    tests = [x.parent for x in r.results_files if (x.parent / "waves.fst").exists()]
    if not tests:
        return f"waves: no FST written under {bench_dir}/"
    return (f"waves: {len(tests)} test folder(s) {bench_dir}/<test>/ with waves.fst and waves.gtkw "
            f"(e.g. {tests[0].name}); open one: make waves BENCH={bench} COCOTB_TEST_FILTER=<test>")


def progress_key(sim: str, jobs: int, waves: bool, test_filter: str) -> tuple[str, bool]:
    """(the durations.json key a run reads, whether it records its durations there).

    Only comparable runs share a key: same simulator, as many benches side by side. A run with waves
    (slower) or a test filter (fewer tests) records nothing; a waves run reads a key no run writes, so
    its estimate comes from its own benches.
    """
    return f"regress/{sim}/{jobs} at a time" + ("/waves" if waves else ""), not (waves or test_filter)


def plan_tasks(benches: list, sim: str, seed: int, test_filter: str, waves: bool, verbose: bool, jobs: int,
               previous: dict[str, float], test_module: str = "") -> list[BenchTask]:
    """A task per bench, in the order they start: the selection's one at a time, side by side the longest
    first (by `previous`, the last comparable run's durations, else the typical ones; a bench with neither
    last). One at a time, a
    bench's worker prints its header as it starts; side by side a started line, the header coming with its
    result so that it stays with it."""
    order = benches if jobs == 1 else sorted(benches, key=lambda b: -previous.get(b.name, 0.0))
    return [BenchTask(b.name, sim, seed, test_filter, bench_folder=True, waves=waves, log_to_file=not verbose,
                      test_module=test_module,
                      start_line=f"--- {b.name}: {b.description}" if jobs == 1 else f"    {b.name} started",
                      announce=True)
            for b in order]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus"))
    ap.add_argument("--bench", default=os.environ.get("BENCH", ""), help="comma-separated bench names")
    ap.add_argument("--filter", default=os.environ.get("COCOTB_TEST_FILTER", ""), help="test name regex")
    ap.add_argument("--module", default=os.environ.get("MODULE", "").strip(),
                    help="a cocotb test module of one's own, run instead of the table's on each selected bench "
                         "(default: MODULE)")
    ap.add_argument("--waves", action="store_true", default=None, help="default: WAVES (1/yes/true/on)")
    ap.add_argument("--results", default=str(ROOT / "results.xml"))
    ap.add_argument("--list-tests", action="store_true",
                    help="print the test names of the selected benches (for COCOTB_TEST_FILTER) and exit")
    ap.add_argument("--build-root", type=Path, default=None, help=argparse.SUPPRESS)  # tests: a folder of their own
    ap.add_argument("--jobs", type=int, default=None,
                    help="benches run side by side, one per local Dask worker (default: JOBS, else the machine's "
                         "cores; VERBOSE=1 runs one)")
    ap.add_argument("--verbose", action="store_true", default=None,
                    help="stream simulator output to the console (default: VERBOSE, else each test's sim.log)")
    args = ap.parse_args(argv)

    try:
        given = bool(os.environ.get("AGSIM_BENCH_GIVEN")) or args.bench != ""
        benches = select_benches(args.bench, given)
        seed = seed_from_env()
        check_filter(args.filter)
        if args.module:
            check_module(args.module)
            benches = [dataclasses.replace(b, test_module=args.module) for b in benches]
        check_simulator(args.sim)
        waves = env_flag("WAVES") if args.waves is None else args.waves
        verbose = env_flag("VERBOSE") if args.verbose is None else args.verbose
        wanted_jobs = jobs_from_env() if args.jobs is None else args.jobs
        if wanted_jobs < 1:
            raise BadInput(f"--jobs {wanted_jobs} is not a number of jobs; give 1 or more")
        wall_override()
        check_overrides()  # AGSIM_CYCLE_MARGIN / AGSIM_MAX_CYCLES of the clients bench (tb/bundle/cycle_limits.py)
        if args.sim == "verilator":
            verilator_root()  # installed? (the message says how)
    except (ValueError, SimulatorMissing) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.list_tests:
        print_tests(benches)
        return 0
    build_root = args.build_root or BUILD_ROOT
    owner = f"tb.run.regress pid {os.getpid()}"
    try:
        acquire(build_root, owner)
    except FolderBusy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        return _run(args, benches, seed, waves, verbose, wanted_jobs, build_root)
    except KeyboardInterrupt:  # outside the benches' run (which handles its own): nothing to end or summarise
        print("\ninterrupted", file=sys.stderr)
        return INTERRUPTED
    finally:
        release(build_root, owner)


def _run(args: argparse.Namespace, benches: list, seed: int, waves: bool, verbose: bool, wanted_jobs: int,
         build_root: Path) -> int:
    """Run the checked selection under the build folder's lock; print the summary; the exit status."""
    t0 = time.monotonic()
    jobs = 1 if verbose else max(1, min(wanted_jobs, len(benches)))  # streamed output stays one bench at a time
    print(f"running {len(benches)} bench(es) on {compiler_version(args.sim)}, seed {seed}, {jobs} at a time",
          flush=True)
    error_lines: dict[str, int] = {}
    job, record = progress_key(args.sim, jobs, waves, args.filter)
    names = [b.name for b in benches]
    progress = Progress(job, names, record=record, workers=jobs, typical=typical_for_benches(names, args.sim))
    tasks = plan_tasks(benches, args.sim, seed, args.filter, waves, verbose, jobs, progress.expected(),
                       test_module=args.module)
    by_name: dict[str, BenchResult] = {}
    refused: list[str] = []

    def on_done(o: TaskOutcome) -> None:
        bench = get_bench(o.task.bench)
        by_name[bench.name] = _report(o, bench, progress, error_lines, verbose, header=jobs > 1,
                                      waves_dir=bench_build_dir(build_root, args.sim, bench.name) if waves else None)
        if o.refused:
            refused.append(f"{bench.name}: {o.result.error}")

    try:
        client = open_client(None, jobs)
    except FarmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # held until the cluster was up, then closed (tb.farm.engine.open_client)
        print("\ninterrupted while the workers started; no bench started", flush=True)
        run = FarmRun(not_run=tasks)
    else:
        try:
            run = run_tasks(client, tasks, build_root, on_done, in_flight=jobs)
        finally:
            close_client(client)
        if run.not_run:
            end_descendants()  # nothing of this run may outlive it
            print(f"\ninterrupted: ended {run.ended_workers} worker(s) and {run.ended_below} process(es) below "
                  f"them (simulators included); no new bench started", flush=True)
    not_run = [b.name for b in benches if b.name not in by_name]
    results = [by_name[b.name] for b in benches if b.name in by_name]  # the summary keeps the selection's order
    if not not_run and not refused:
        progress.save()
    merge_results(results, Path(args.results))
    print(format_summary(results, seed, error_lines, args.bench, args.filter, args.sim,
                         elapsed_s=time.monotonic() - t0, jobs=jobs, not_run=not_run,
                         module=args.module))
    if not_run:
        return INTERRUPTED
    if refused:  # the bench table or an input refused, as a bad option is: not a test's failure
        print(f"error: {refused[0]}", file=sys.stderr)
        return 2
    ran = sum(len(r.tests) for r in results)
    if ran == 0:
        print("error: no test ran", file=sys.stderr)
        return 1
    return 0 if all(r.failed == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
