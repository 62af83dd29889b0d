"""Tasks on a Dask cluster: a local one on this machine's cores, or an existing scheduler given its address.

Why Dask: a regression of thousands of seeds outgrows one machine, and Dask
runs the same Python function on a laptop's cores, on workers a farm's queue
started (dask-jobqueue on LSF, SGE or Slurm) or on hand-started `dask worker`
processes, with the scheduler doing the bookkeeping a home-made pool would:
a task whose worker dies is run again on another worker (Dask's own
rescheduling; after `distributed.scheduler.allowed-failures` deaths it gives
up with KilledWorker, which ends here as that task's named failure), and each
task has one future, so its result is counted once.

Workers must run one task at a time (`--nthreads 1`; the local cluster does),
from a checkout of the same sources: every outcome carries its worker's
digest of rtl/, models/ and tb/ (tb.farm.tasks.source_digest), and a task run
on other sources is reported as a failure, never merged.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from tb.farm.tasks import BenchTask, TaskOutcome, failed_outcome, run_task, source_digest


class FarmError(RuntimeError):
    """The cluster could not be started or reached (the message names the address and the fix)."""


@dataclass
class FarmRun:
    """What a run gave: an outcome per finished task (in finishing order) and the tasks that never ran."""

    outcomes: list[TaskOutcome] = field(default_factory=list)
    not_run: list[BenchTask] = field(default_factory=list)
    workers: int = 0
    wall_s: float = 0.0


def open_client(scheduler: str | None, workers: int):  # -> distributed.Client
    """A client of the scheduler at `scheduler`, or of a new local cluster of `workers` one-thread processes."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise FarmError(f"no Dask scheduler answered at {scheduler} ({exc}); start one with `dask scheduler` "
                            f"or leave SCHEDULER unset for a local cluster") from None
    if workers < 1:
        raise FarmError(f"a local cluster of {workers} workers: give JOBS=1 or more")
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster)


def same_sources(outcome: TaskOutcome, digest: str) -> TaskOutcome:
    """`outcome` if its worker ran the sources whose digest is `digest`, else a failure that says so."""
    if not outcome.digest or outcome.digest == digest:
        return outcome
    return failed_outcome(outcome.task, f"ran on {outcome.host} ({outcome.worker}) from other sources (digest "
                                        f"{outcome.digest}, this checkout {digest}): start the workers from this "
                                        f"checkout")


def run_tasks(client, tasks: Sequence[BenchTask], build_root: Path,
              on_done: Callable[[TaskOutcome], None] = lambda o: None) -> FarmRun:
    """Run every task on `client`'s cluster; `on_done` sees each outcome as it arrives.

    Ctrl-C cancels what has not finished and returns what has (the rest in `not_run`); a local cluster's
    workers are then closed with it, and their simulators die with them (tb.simulators.sim_prefix)."""
    from distributed import as_completed

    t0 = time.monotonic()
    mine = source_digest()
    run_id = uuid.uuid4().hex[:8]  # two runs on one scheduler never share a key
    futures = [client.submit(run_task, t, str(build_root), key=f"agsim-{t.key}-{run_id}", pure=False) for t in tasks]
    task_of = dict(zip((f.key for f in futures), tasks))
    out = FarmRun(workers=len(client.scheduler_info().get("workers", {})))
    try:
        for fut in as_completed(futures):
            task = task_of[fut.key]
            try:
                outcome = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died too often, an error inside the task
                outcome = failed_outcome(task, f"the task did not finish: {type(exc).__name__}: {exc}")
            outcome = same_sources(outcome, mine)
            out.outcomes.append(outcome)
            on_done(outcome)
    except KeyboardInterrupt:
        finished = {o.task for o in out.outcomes}
        client.cancel([f for f in futures if not f.done()], force=True)
        out.not_run = [t for t in tasks if t not in finished]
    out.wall_s = time.monotonic() - t0
    return out
