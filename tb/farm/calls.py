"""One function over a list of points, each point a task on a Dask cluster, the results in the points' order.

Why: a benchmark sweep (tb/perf: the NoC load sweep, the AHBM decode and launch
sweeps) is a list of independent simulator runs whose records are then tabled
and plotted together. On a cluster each point can run on any worker, but the
report must not depend on where or in what order they finished, so the results
come back in the order the points were given, whatever order they finished in.

This is the regression engine's contract (tb.farm.engine) for any picklable
top-level function instead of a bench run:
- a point whose call raised, or whose worker died too often (Dask's
  KilledWorker), is a `CallFailure` naming the point and the error in one line,
  in that point's place: the other points still give their results;
- every reply carries its worker's digest of the sources
  (tb.farm.tasks.source_digest); a worker that ran other sources gives a
  failure, never a result (its numbers were measured on other RTL);
- Ctrl-C cancels the points not finished and goes on as a KeyboardInterrupt;
- a worker runs one point at a time (a lock per worker process, whatever its
  thread count): a bench run sets process-wide environment variables.
"""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TypeVar

from tb.farm.tasks import ONE_AT_A_TIME, source_digest, worker_address

P = TypeVar("P")
R = TypeVar("R")

@dataclass(frozen=True)
class CallFailure:
    """A point that gave no result: the point's description and why, in one line."""

    point: str
    why: str

    def __str__(self) -> str:
        return f"{self.point}: {self.why}"


@dataclass(frozen=True)
class Reply:
    """What a worker sends back for one point: the function's value and where and from what sources it ran."""

    value: Any
    digest: str
    host: str
    worker: str


def one_line(exc: BaseException) -> str:
    """`Type: first line of the message`: what a failure says (a traceback stays in the worker's log)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def call_on_worker(fn: Callable[[P], R], point: P) -> Reply:
    """What each task runs: `fn(point)`, one at a time in this process, with this worker's source digest, taken
    before the call (the sources the worker loaded: a file edited while the call ran is not what it ran)."""
    digest = source_digest()
    with ONE_AT_A_TIME:
        value = fn(point)
    return Reply(value, digest, socket.gethostname(), worker_address())


def checked(reply: Reply, digest: str, point: str) -> Any:
    """The reply's value, or a CallFailure when its worker ran other sources than the ones whose digest is
    `digest` (an empty worker digest is not checked: nothing to compare)."""
    if not reply.digest or reply.digest == digest:
        return reply.value
    return CallFailure(point, f"ran on {reply.host} ({reply.worker}) from other sources (digest {reply.digest}, "
                              f"this checkout {digest}): start the workers from this checkout")


def submit_calls(client: Any, fn: Callable[[P], R], points: Sequence[P],
                 describe: Callable[[P], str] = str,
                 on_done: Callable[[P, R | CallFailure], None] | None = None) -> list[R | CallFailure]:
    """`fn(point)` for every point as one task each on `client`'s cluster (a distributed.Client).

    Returns one entry per point, in the points' order: the function's value or a CallFailure
    (`describe(point)` names the point). `on_done(point, entry)` sees each one as it finishes (finishing
    order), for a progress line. `fn` must be a top-level function and the points and values picklable."""
    from distributed import as_completed

    mine = source_digest()
    run_id = uuid.uuid4().hex[:8]  # two runs on one scheduler never share a key
    name = getattr(fn, "__name__", "call")
    futures = [client.submit(call_on_worker, fn, p, key=f"agsim-{name}-{i}-{run_id}", pure=False)
               for i, p in enumerate(points)]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(points)
    try:
        for fut in as_completed(futures):
            i = index[fut.key]
            label = describe(points[i])
            try:
                entry = checked(fut.result(), mine, label)
            except Exception as exc:  # noqa: BLE001 - the point's own error, or its worker died too often
                entry = CallFailure(label, one_line(exc))
            results[i] = entry
            if on_done is not None:
                on_done(points[i], entry)
    except KeyboardInterrupt:
        client.cancel([f for f in futures if not f.done()], force=True)
        raise
    return results


def run_calls(fn: Callable[[P], R], points: Sequence[P], scheduler: str | None, jobs: int,
              describe: Callable[[P], str] = str,
              on_done: Callable[[P, R | CallFailure], None] | None = None) -> list[R | CallFailure]:
    """:func:`submit_calls` on the cluster at `scheduler`, or on a local cluster of `jobs` workers started and
    closed here (FarmError when the scheduler does not answer)."""
    from tb.farm.engine import close_client, open_client

    client = open_client(scheduler, jobs)
    try:
        return submit_calls(client, fn, points, describe, on_done)
    finally:
        close_client(client)


__all__ = ["CallFailure", "Reply", "call_on_worker", "checked", "one_line", "run_calls", "submit_calls"]
