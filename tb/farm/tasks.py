"""One task of a regression: one bench run with one seed on one simulator, and what a worker sends back.

`run_task` is what a Dask worker executes. It builds the bench under the
build root unless that build is already there (tb.run.runner's stamp says so; its
lock lets one task build while the others of the same bench wait for it, on
one machine or on a shared folder), runs it in a folder of its own (a farm's
seeds of one bench side by side) or in the bench's usual folder (the main job,
whose folders `make waves` and the docs name), and returns a picklable
`TaskOutcome` that carries everything the merge needs (verdicts, checks,
cycles, the ERROR and REPORT lines of its logs), so a worker without a shared
folder loses nothing.
"""

from __future__ import annotations

import functools
import json
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tb.run.benches import ROOT, get_bench
from tb.run.content_hash import files_digest
from tb.cover.db import OUT_ENV as COVER_OUT_ENV
from tb.run.runner import BenchResult, bench_build_dir, run_bench
from tb.run.summary import replay_command, scan_error_lines, scan_report_lines

# run_bench sets process-wide environment variables for its simulator: one task at a time per worker process,
# whatever the worker's thread count
ONE_AT_A_TIME = threading.Lock()  # shared with tb.farm.calls: a worker runs one task or point at a time


@dataclass(frozen=True)
class BenchTask:
    """A bench of the table run with `seed` on `sim` (its tests, or those matching `test_filter`).

    A part of a longer run (a shard of the vector core's differential, tb.farm.vc_shards) also has
    environment variables its test reads (`env`), a `tag` that names the part, its place among the parts
    (`order`) and `measure_env`, the variable through which the test writes what it measured (JSON).

    The main job's benches (tb.run.regress) run as the user asked for them at the console: in the bench's usual
    folder (`bench_folder`, not a folder per task: `make waves` and the docs name sim_build/<bench>/), with
    WAVES=1's FST per test (`waves`), with their simulator output streamed rather than written to each test's
    sim.log (`log_to_file` False, VERBOSE=1), and with the lines a terminal user watches printed by the
    worker as they happen (`start_line` as the task starts, then, with `announce`, a build's start and end);
    a local cluster's workers share the console of the process that started them."""

    bench: str
    sim: str
    seed: int
    test_filter: str = ""
    env: tuple[tuple[str, str], ...] = ()
    tag: str = ""
    order: int = 0
    measure_env: str = ""
    bench_folder: bool = False
    waves: bool = False
    log_to_file: bool = True
    start_line: str = ""
    announce: bool = False
    test_module: str = ""  # a cocotb module of one's own instead of the table's (MODULE=)

    @property
    def key(self) -> str:
        """A name unique within a run: a folder name and the task's Dask key."""
        return f"{self.bench}-{self.sim}-seed{self.seed}" + (f"-{self.tag}" if self.tag else "")

    @property
    def label(self) -> str:
        """Its row in the summary: bench@seed, and the part."""
        return f"{self.bench}@{self.seed}" + (f"[{self.tag}]" if self.tag else "")

    def replay(self) -> str:
        """The command that reruns this task alone on one machine."""
        prefix = "".join(f"{k}={v} " for k, v in self.env)
        return prefix + replay_command(self.seed, self.bench, self.test_filter, self.sim, self.test_module)


@dataclass
class TaskOutcome:
    """What one task gave: the bench's result and the lines of its logs the summary shows."""

    task: BenchTask
    result: BenchResult
    error_lines: list[str] = field(default_factory=list)
    report_lines: list[str] = field(default_factory=list)
    host: str = ""
    worker: str = ""  # the Dask worker's address ("" outside a worker)
    digest: str = ""  # the worker's source_digest ("" for an outcome made where the task failed to run)
    measured: dict = field(default_factory=dict)  # what the test wrote through the task's measure_env
    coverage_xml: str = ""  # the task's coverage database (tb.cover.db), "" when its bench samples none
    refused: bool = False  # the task raised ValueError: the bench table or an input was refused, not a test


# what a run's verdict depends on: the RTL, the models, the benches and the bundles they replay
SOURCE_FOLDERS = ("rtl", "models", "tb", "clients")


@functools.cache
def source_digest() -> str:
    """A short digest of every file under SOURCE_FOLDERS of this checkout (once per process): a worker's and
    the client's must agree, or the worker ran other RTL or other checks than the ones asked for."""
    files = [p for d in SOURCE_FOLDERS for p in (ROOT / d).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    return files_digest(files)[:16]


def failed_outcome(task: BenchTask, why: str, refused: bool = False) -> TaskOutcome:
    """The outcome of a task that gave no result of its own: a failure naming why, with its replay command."""
    return TaskOutcome(task, BenchResult(bench=task.bench, error=f"{why} (replay: {task.replay()})"),
                       refused=refused)


def run_task(task: BenchTask, build_root: str, expect_digest: str = "") -> TaskOutcome:
    """Run `task` on this worker: build under `build_root` if needed, run in build_root/runs/<task key>/ (or,
    with `task.bench_folder`, in the bench's usual folder under `build_root`).

    A worker whose sources differ from `expect_digest` (the client's) runs nothing: it answers at once with
    its own digest, which the engine reports as a failure (tb.farm.engine.same_sources), instead of
    spending a simulator run on results that would be thrown away."""
    if expect_digest and source_digest() != expect_digest:
        return TaskOutcome(task, BenchResult(bench=task.bench, error="not run: this worker's sources differ"),
                           host=socket.gethostname(), worker=worker_address(), digest=source_digest())
    root = Path(build_root)
    run_dir = bench_build_dir(root, task.sim, task.bench) if task.bench_folder else root / "runs" / task.key
    env = dict(task.env)
    measured_file = run_dir / "measured.json"
    cover_file = run_dir / "coverage.xml"
    cover_file.unlink(missing_ok=True)  # a rerun after a killed worker must not read the first try's
    env[COVER_OUT_ENV] = str(cover_file)
    if task.measure_env:
        measured_file.unlink(missing_ok=True)
        env[task.measure_env] = str(measured_file)
    with ONE_AT_A_TIME:
        if task.start_line:
            print(task.start_line, flush=True)
        result = run_bench(get_bench(task.bench), sim=task.sim, seed=task.seed, test_filter=task.test_filter or None,
                           waves=task.waves, build_root=root, log_to_file=task.log_to_file, run_dir=run_dir,
                           extra_env=env, announce=task.announce, test_module=task.test_module or None)
    logs = result.sim_logs
    measured = json.loads(measured_file.read_text()) if task.measure_env and measured_file.exists() else {}
    return TaskOutcome(task, result, scan_error_lines(logs), scan_report_lines(logs), socket.gethostname(),
                       worker_address(), source_digest(), measured,
                       cover_file.read_text() if cover_file.exists() else "")


def worker_address() -> str:
    """This Dask worker's address, "" outside a worker."""
    from distributed import get_worker

    try:
        return get_worker().address
    except ValueError:  # not inside a Dask worker (a direct call)
        return ""
