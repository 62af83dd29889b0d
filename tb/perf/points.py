"""Run a sweep's points here or as tasks on a Dask cluster: the one helper the benchmark sweeps share.

Why one helper: the NoC load sweep and the AHBM decode and launch sweeps are
each a list of independent points (one simulator run each) turned into a
table, pictures and history lines. Where the points run must change nothing
in those, so every sweep hands its points to `run_points` and gets back one
entry per point in the points' order:
- without a scheduler, on this machine as the sweeps always ran (one after
  another, or `jobs` at a time in threads); a point's exception goes up to the
  sweep as before;
- with one (SCHEDULER=tcp://host:8786, as `make regress` takes it), one task
  per point through tb.farm.calls; a point that failed there is a CallFailure
  in its place, which the sweep turns into its own failed row.
The point function must be a top-level function of a picklable argument that
returns a picklable record, so the same function serves both ways.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

from tb.farm.calls import CallFailure
from tb.farm.engine import FarmError

P = TypeVar("P")
R = TypeVar("R")

WORKER_WAIT_S = 30  # how long a scheduler may have no worker before the sweep gives up


def where_points_run(n: int, scheduler: str | None) -> str:
    """`n` points and where they run, for a sweep's header line."""
    return f"{n} point{'' if n == 1 else 's'} " + (f"as tasks on the Dask cluster at {scheduler}" if scheduler
                                                   else "on this machine")


def run_points(fn: Callable[[P], R], points: Sequence[P], *, scheduler: str | None = None, jobs: int = 1,
               describe: Callable[[P], str] = str,
               on_done: Callable[[P, R | CallFailure], None] | None = None) -> list[R | CallFailure]:
    """`fn(point)` for every point, here (`jobs` at a time) or on the cluster at `scheduler`; the entries in
    the points' order. `on_done` sees each entry as it comes (here: in order; on a cluster: as they finish).
    FarmError when the scheduler does not answer or has no worker."""
    if scheduler:
        return _on_cluster(fn, points, scheduler, describe, on_done)
    results: list[Any] = []
    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(fn, p) for p in points]
            for p, fut in zip(points, futures):
                results.append(fut.result())
                if on_done is not None:
                    on_done(p, results[-1])
        return results
    for p in points:
        results.append(fn(p))
        if on_done is not None:
            on_done(p, results[-1])
    return results


def _on_cluster(fn: Callable[[P], R], points: Sequence[P], scheduler: str, describe: Callable[[P], str],
                on_done: Callable[[P, R | CallFailure], None] | None) -> list[R | CallFailure]:
    from tb.farm.calls import submit_calls
    from tb.farm.engine import open_client

    client = open_client(scheduler, 1)
    try:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except TimeoutError:
            raise FarmError(f"the Dask scheduler at {scheduler} has no worker after {WORKER_WAIT_S} s; start one "
                            f"from this checkout with `make worker SCHEDULER={scheduler}`") from None
        return submit_calls(client, fn, points, describe, on_done)
    finally:
        client.close()


__all__ = ["CallFailure", "FarmError", "run_points", "where_points_run"]
