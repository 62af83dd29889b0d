"""Tasks on a Dask cluster: a local one on this machine's cores, or an existing scheduler given its address.

Why Dask: a regression of thousands of seeds outgrows one machine, and Dask
runs the same Python function on a laptop's cores, on workers a farm's queue
started (dask-jobqueue on LSF, SGE or Slurm) or on hand-started `make worker`
processes, with the scheduler doing the bookkeeping a home-made pool would:
a task whose worker dies is run again on another worker (Dask's own
rescheduling; after `distributed.scheduler.allowed-failures` deaths it gives
up with KilledWorker, which ends here as that task's named failure), and each
task has one future, so its result is counted once.

Workers must run one task at a time (`--nthreads 1`; the local cluster and
`make worker` do). The scheduler and the workers must import this project
(`make scheduler`, `make worker`: tb.farm.node; a cluster that cannot is
refused before a task is sent, check_imports), from a checkout of the same
sources: every outcome carries its worker's digest of rtl/, models/ and tb/
(tb.farm.tasks.source_digest), and a task run on other sources is reported
as a failure, never merged.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import psutil

from tb.farm.tasks import BenchTask, TaskOutcome, failed_outcome, run_task, source_digest
from tb.run.proctree import end_tree


class FarmError(RuntimeError):
    """The cluster could not be started or reached (the message names the address and the fix)."""


@dataclass
class FarmRun:
    """What a run gave: an outcome per finished task (in finishing order) and the tasks that never ran.

    After an interrupt on a local cluster, `ended_workers` worker processes were ended and `ended_below`
    processes below them (their simulators among them)."""

    outcomes: list[TaskOutcome] = field(default_factory=list)
    not_run: list[BenchTask] = field(default_factory=list)
    workers: int = 0
    wall_s: float = 0.0
    ended_workers: int = 0
    ended_below: int = 0


def dask_setup(worker: Any) -> None:
    """Dask's preload hook, run in each local worker process as it starts (open_client preloads this module).

    The worker ignores Ctrl-C: a terminal sends SIGINT to the whole process group, workers included, and the
    client, which gets it too, is the one that decides what ends (run_tasks); a worker interrupted on its own
    would die with a traceback mid-task. Its simulators inherit the same (they run in groups of their own).
    The workers a cluster spawns as it starts ignore it already (_spawn_ignoring_interrupts); this covers
    one its nanny starts again later, in place of a worker that died."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def open_client(scheduler: str | None, workers: int):  # -> distributed.Client
    """A client of the scheduler at `scheduler`, or of a new local cluster of `workers` one-thread processes
    (every one of them connected before this returns, so the first tasks are spread over all of them)."""
    if scheduler:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise FarmError(f"no Dask scheduler answered at {scheduler} ({exc}); start one with `make scheduler` "
                            f"or leave SCHEDULER unset for a local cluster") from None
        try:
            check_imports(client, scheduler)
        except FarmError:
            client.close()
            raise
        return client
    if workers < 1:
        raise FarmError(f"a local cluster of {workers} workers: give JOBS=1 or more")
    client = None
    with _interrupts_noted() as interrupted:
        from distributed import Client, LocalCluster  # noted already: an import cut short leaves a broken module

        try:
            # no dashboard; the scheduler's HTTP server (it always has one) on a free port of this host only,
            # not on 8787, which another cluster may hold (Dask then warns on the console)
            cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None,
                                   scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                                   silence_logs=logging.ERROR, preload=[__name__])
            client = Client(cluster)
            _spawn_ignoring_interrupts(cluster, workers)
            client.wait_for_workers(workers)
        except Exception as exc:  # noqa: BLE001 - whatever stopped the start, named in one line
            if client is not None:
                close_client(client)
            raise FarmError(f"a local Dask cluster of {workers} worker(s) did not start ({type(exc).__name__}: "
                            f"{exc})") from None
    if interrupted:
        close_client(client)
        raise KeyboardInterrupt
    return client


PROBE_MODULE = "tb.farm.tasks"  # what a task's unpickling imports first


def check_imports(client: Any, scheduler: str) -> None:
    """Refuse a cluster whose scheduler or a worker of which cannot import this project, naming the fix.

    Why: the scheduler unpickles every task graph and a worker runs it; one started with `dask scheduler` or
    `dask worker` has .venv/bin, not the project, on its path, and every task then failed with Dask's "Error
    during deserialization of the task graph", far from its cause. Workers that join later are not asked
    (one that cannot import fails its tasks by name)."""
    from importlib.util import find_spec

    try:
        ok = client.run_on_scheduler(find_spec, PROBE_MODULE) is not None
    except ImportError:
        ok = False
    if not ok:
        raise FarmError(f"the scheduler at {scheduler} cannot import this project ({PROBE_MODULE}): start it with "
                        f"`make scheduler` from a checkout (docs/regressions.md), not with `dask scheduler`")
    found = client.run(find_spec, PROBE_MODULE, on_error="return")
    blind = sorted(addr for addr, spec in found.items() if spec is None or isinstance(spec, BaseException))
    if blind:
        raise FarmError(f"{len(blind)} worker(s) of {scheduler} cannot import this project ({PROBE_MODULE}): "
                        f"{', '.join(blind)}; start them with `make worker SCHEDULER={scheduler}` from a checkout "
                        f"(docs/regressions.md), not with `dask worker`")


SPAWN_GUARD_S = 120.0  # a bound on waiting for worker processes to be spawned, not a speed claim


def _spawn_ignoring_interrupts(cluster: Any, workers: int) -> None:
    """Have `cluster` spawn `workers` worker processes while this process ignores Ctrl-C, and return as
    soon as they exist (a second or so before they are ready).

    Why: a worker that gets the terminal's Ctrl-C before dask_setup runs in it dies with a traceback, and
    the cluster's start with it; a process spawned while its parent ignores SIGINT ignores it from its
    first instruction (a Python handler cannot be passed on). They are seen as this process's children
    running multiprocessing's spawn_main (the cluster names its workers only once all are ready). A Ctrl-C
    in these few milliseconds is lost."""
    if threading.current_thread() is not threading.main_thread():
        cluster.scale(workers)
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        earlier = {p.pid for p in _spawned_children()}
        cluster.scale(workers)
        deadline = time.monotonic() + SPAWN_GUARD_S
        while len({p.pid for p in _spawned_children()} - earlier) < workers:
            if time.monotonic() > deadline:
                raise FarmError(f"{workers} worker process(es) were not spawned in {SPAWN_GUARD_S:g} s")
            time.sleep(0.005)
    finally:
        signal.signal(signal.SIGINT, before)


def _spawned_children() -> list:
    """This process's children started by multiprocessing's spawn method (exec'd already)."""
    found = []
    for child in psutil.Process().children():
        try:
            if any("spawn_main" in part for part in child.cmdline()):
                found.append(child)
        except psutil.Error:  # gone, or not readable yet
            continue
    return found


@contextmanager
def _interrupts_noted() -> Iterator[list[int]]:
    """Note Ctrl-C instead of raising it while a cluster starts; the list yielded is not empty if one came.

    Why: distributed cannot be interrupted halfway through a cluster's start (its clean-up then fails
    with a traceback); the caller acts on it once the cluster is up. Outside the main thread (where
    signals cannot be handled) nothing is noted."""
    came: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield came
        return
    before = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield came
    finally:
        signal.signal(signal.SIGINT, before)


def close_client(client: Any) -> None:
    """Close `client` and, when it started one, its local cluster (the worker processes end with it)."""
    client.close()
    if client.cluster is not None:
        client.cluster.close()


def same_sources(outcome: TaskOutcome, digest: str) -> TaskOutcome:
    """`outcome` if its worker ran the sources whose digest is `digest`, else a failure that says so."""
    if not outcome.digest or outcome.digest == digest:
        return outcome
    return failed_outcome(outcome.task, f"ran on {outcome.host} ({outcome.worker}) from other sources (digest "
                                        f"{outcome.digest}, this checkout {digest}): start the workers from this "
                                        f"checkout")


def run_tasks(client: Any, tasks: Sequence[BenchTask], build_root: Path,
              on_done: Callable[[TaskOutcome], None] = lambda o: None, in_flight: int | None = None) -> FarmRun:
    """Run every task on `client`'s cluster; `on_done` sees each outcome as it arrives.

    `in_flight` None hands the scheduler every task at once (a farm: it balances thousands of them); a
    number keeps at most that many submitted, the next in `tasks`' order submitted as one finishes, so a
    cluster of that many workers starts the tasks exactly in the order given (the main job's longest first)
    and none waits queued on a worker (an interrupt has nothing queued there to start).

    Ctrl-C (KeyboardInterrupt, in the caller's thread) cancels what has not finished and returns what has
    (the rest in `not_run`); from then on this process ignores Ctrl-C, so a second one cannot cut the
    caller's clean-up and report short. On a local cluster the worker processes and every process below
    them (the simulators' own process groups) are ended at once (tb.run.proctree.end_tree), the cluster left
    for the caller to close; Dask cannot stop a task running on an existing cluster's worker, which runs
    it to its end."""
    from distributed import as_completed

    t0 = time.monotonic()
    mine = source_digest()
    run_id = uuid.uuid4().hex[:8]  # two runs on one scheduler never share a key
    waiting = list(tasks)
    task_of: dict[str, BenchTask] = {}
    out = FarmRun(workers=len(client.scheduler_info().get("workers", {})))
    futures: list = []
    running = as_completed()

    def submit(count: int) -> None:
        batch, waiting[:] = waiting[:count], waiting[count:]
        for t in batch:
            fut = client.submit(run_task, t, str(build_root), mine, key=f"agsim-{t.key}-{run_id}", pure=False)
            task_of[fut.key] = t
            futures.append(fut)
            running.add(fut)

    try:
        submit(len(waiting) if in_flight is None else in_flight)
        for fut in running:
            task = task_of[fut.key]
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died too often, an error inside the task
                outcome = failed_outcome(task, f"the task did not finish: {type(exc).__name__}: {exc}",
                                         refused=isinstance(exc, ValueError))
            outcome = same_sources(outcome, mine)
            out.outcomes.append(outcome)
            submit(1)  # before on_done: a free worker does not wait for the report's printing
            on_done(outcome)
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        finished = {o.task for o in out.outcomes}
        client.cancel([f for f in futures if not f.done()], force=True)
        out.ended_workers, out.ended_below = _end_local_workers(client)
        out.not_run = [t for t in tasks if t not in finished]
    out.wall_s = time.monotonic() - t0
    return out


def _end_local_workers(client: Any) -> tuple[int, int]:
    """End a local cluster's worker processes and everything below them; (workers ended, processes below).

    Why not the cluster's own close: it asks each worker to finish its running task first and kills it only
    seconds later, while a simulator may run on for minutes. The nannies (in this process) are told the
    cluster is closing first, so that none starts a new worker in place of an ended one."""
    from distributed import Nanny

    cluster_workers = getattr(client.cluster, "workers", {}) if client.cluster is not None else {}
    nannies = [w for w in cluster_workers.values() if isinstance(w, Nanny)]
    for nanny in nannies:
        nanny.close_gracefully(reason="interrupted")
    pids = [nanny.pid for nanny in nannies if nanny.pid]
    return len(pids), len(end_tree(pids))
