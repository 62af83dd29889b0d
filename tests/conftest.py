"""The suite run's own hooks: one run per bench build folder, and a line per finished bench.

* A run that collects the bench wrappers (tests/test_benches.py) takes
  sim_build/pytest/run.lock (tb.run.buildlock) before any bench builds, and a
  second such run in the same clone is refused in one line naming the first.
  The lock is the run's: under pytest-xdist the controller takes it when the
  workers report what they collected, and the workers never touch it.
* In each pytest-xdist worker the bench legs are dealt to the heads of the parts
  worksteal hands out, longest first, so no worker runs all the long ones.
* Each finished bench prints one line, `[k/N] bench-sim passed in 12 s,
  elapsed 3m05s, about 6m left`, so a `make test` of many minutes says what it
  has done instead of only dots (unit tests stay dots: there are thousands).
* A suite started where SIGINT is ignored (in the background of a
  non-interactive shell: `make test &`, `nohup`) would pass that on to every
  process a test starts, and the Ctrl-C tests would send a signal nobody
  hears; each pytest process makes SIGINT Python's own again, which a child
  gets back as the default (a handler does not survive exec; "ignored" does).
"""

from __future__ import annotations

import os
import signal

import pytest

from tb.run.buildlock import FolderBusy, acquire, release
from tb.run.progress import Progress, deal_to_slices
from tb.run.runner import BUILD_ROOT
from tb.run.simulators import bench_legs
from tb.run.typical import typical_for

BENCH_TESTS = "tests/test_benches.py::"
LOCK_ROOT = BUILD_ROOT / "pytest"
LEGS = bench_legs(os.environ.get("SIM", "icarus") or "icarus")

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def _owner() -> str:
    return f"pytest pid {os.getpid()}"


def _bench_id(nodeid: str) -> str:
    """`bench-sim` of a bench wrapper's node id."""
    return nodeid[len(BENCH_TESTS):].removeprefix("test_bench[").removesuffix("]")


def _bench_ids(ids: list[str]) -> list[str]:
    """`bench-sim` of each bench wrapper among the collected node ids."""
    return [_bench_id(i) for i in ids if i.startswith(BENCH_TESTS)]


def _start(config: pytest.Config, bench_ids: list[str]) -> None:
    """Once per run, in the controller: take the lock and set up the per-bench lines."""
    if not bench_ids or getattr(config, "_agsim_progress", None) is not None:
        return
    try:
        acquire(LOCK_ROOT, _owner())
    except FolderBusy as exc:
        pytest.exit(f"error: {exc}", returncode=2)
    config._agsim_locked = True
    workers = getattr(config.option, "numprocesses", None)
    workers = workers if isinstance(workers, int) and workers > 0 else 1
    sim = os.environ.get("SIM", "icarus") or "icarus"
    legs = {f"{b.name}-{s}": (b.name, s) for b, s in LEGS}
    typical = typical_for([(i, *legs[i]) for i in bench_ids if i in legs])
    config._agsim_progress = Progress(f"pytest/{sim}/{workers} workers", bench_ids, workers=workers, typical=typical)


def pytest_collection_finish(session: pytest.Session) -> None:
    if _controller(session.config):  # without xdist the controller collects itself
        _start(session.config, _bench_ids([i.nodeid for i in session.items]))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    _start(node.config, _bench_ids(ids))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One line per finished bench (its call, or a setup that failed), in the controller."""
    if not report.nodeid.startswith(BENCH_TESTS) or not (report.when == "call" or report.failed):
        return
    config = _CONTROLLER[0] if _CONTROLLER else None  # None in an xdist worker: the controller prints
    progress = getattr(config, "_agsim_progress", None)
    if progress is None:
        return
    name = _bench_id(report.nodeid)
    if name in progress.finished:
        return
    line = progress.done(name, report.duration, report.outcome)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        writer = getattr(reporter, "_tw", None)  # xdist writes its dots through it, not through the reporter
        if getattr(writer, "width_of_current_line", 0):
            reporter.write("\n")
        reporter.write_line(line)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """In each pytest-xdist worker (all collect the same order): the bench legs, longest first as
    tests/test_benches.py lists them, dealt to the heads of the parts worksteal hands the workers, so every
    worker starts on long legs and the unit tests are what gets stolen (tb.run.progress.deal_to_slices)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    legs = [i for i in items if i.nodeid.startswith(BENCH_TESTS)]
    if workers < 2 or not legs:
        return
    items[:] = deal_to_slices(legs, [i for i in items if not i.nodeid.startswith(BENCH_TESTS)], workers)


_CONTROLLER: list[pytest.Config] = []  # the run's config, in the process that prints (a report carries none)


def pytest_configure(config: pytest.Config) -> None:
    if _controller(config):
        _CONTROLLER[:] = [config]


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _controller(config):
        return
    progress = getattr(config, "_agsim_progress", None)
    if progress is not None and len(progress.finished) == len(progress.steps) == len(LEGS):
        progress.save()  # only a run of the whole table feeds the next estimate
    if getattr(config, "_agsim_locked", False):
        release(LOCK_ROOT, _owner())
