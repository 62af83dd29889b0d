"""`make scheduler` / `make worker SCHEDULER=...`: a Dask scheduler or worker of a farm that can import this project.

    make scheduler                                  the scheduler, on port 8786 (dask's default)
    make worker SCHEDULER=tcp://head:8786           a worker, one task at a time (--nthreads 1)
    make -C /path/to/agsim worker SCHEDULER=...     the same from any folder
    /path/to/agsim/.venv/bin/python /path/to/agsim/tb/farm/node.py worker tcp://head:8786   the same without make
    make worker SCHEDULER=... DASK_ARGS='--nworkers 8'   more of dask's own options

Why: the scheduler unpickles every task graph (tb.farm.tasks.run_task and its
BenchTask) and a worker runs it, so both must import the project's `tb`
package. `.venv/bin/dask worker` cannot, whatever folder it starts in: a
console script's sys.path begins with its own folder (.venv/bin), not the
working folder, so a cluster started that way failed every task with "Error
during deserialization of the task graph". This runs distributed's own `dask
scheduler` / `dask worker` command in a process whose sys.path begins with
this checkout (found from this file, so neither the working folder nor a
PYTHONPATH matters); the worker processes a worker's nanny spawns, one started
again after a crash included, inherit that sys.path (multiprocessing's spawn
passes it on).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ROLES = ("scheduler", "worker")


class NodeArgsRefused(ValueError):
    """The command line cannot start a node of this farm (the message names the fix)."""


def _given(args: list[str], option: str) -> bool:
    return any(a == option or a.startswith(option + "=") for a in args)


def dask_args(argv: list[str]) -> tuple[str, list[str]]:
    """(role, the arguments of `dask <role>`) for `argv` (role first, then dask's own options).

    A worker needs its scheduler's address (or --scheduler-file), and runs one task at a time unless
    --nthreads says otherwise: a task's simulator run sets process-wide environment variables
    (tb.farm.tasks.ONE_AT_A_TIME), so more threads would only queue behind it."""
    if not argv or argv[0] not in ROLES:
        got = argv[0] if argv else "nothing"
        raise NodeArgsRefused(f"a farm node is one of {', '.join(ROLES)}, not {got}: make scheduler, or make worker "
                              f"SCHEDULER=tcp://head:8786")
    role, args = argv[0], list(argv[1:])
    if role == "worker":
        has_address = bool(args) and not args[0].startswith("-")
        if not has_address and not _given(args, "--scheduler-file"):
            raise NodeArgsRefused("a worker needs its scheduler's address: make worker SCHEDULER=tcp://head:8786 "
                                  "(the address `make scheduler` prints as 'Scheduler at:')")
        if not _given(args, "--nthreads"):
            args += ["--nthreads", "1"]
    return role, args


def put_root_first(path: list[str]) -> None:
    """Make `path` (sys.path) begin with this checkout's root, and drop this file's folder, which heads it when
    the file is run by path (its modules, tb/farm/coverage.py among them, would shadow installed ones)."""
    path[:] = [str(ROOT)] + [p for p in path if p and Path(p).resolve() not in (ROOT, HERE)]


def main(argv: list[str] | None = None) -> int:
    """Start the node; returns only on bad arguments (2), or when dask's command ends."""
    try:
        role, args = dask_args(sys.argv[1:] if argv is None else argv)
    except NodeArgsRefused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    put_root_first(sys.path)
    from distributed.cli import dask_scheduler, dask_worker

    command = dask_worker.main if role == "worker" else dask_scheduler.main
    command.main(args=args, prog_name=f"dask {role}")  # click: exits with dask's own status
    return 0


if __name__ == "__main__":
    sys.exit(main())
