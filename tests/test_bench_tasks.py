"""The benchmark sweeps' points as tasks on Dask (tb/farm/calls.py, tb/perf/points.py).

What must hold: points run on a real cluster of two worker processes give the
records a run on this machine gives (so the tables, pictures and history do not
depend on where the points ran), in the points' order; a point that raises is a
failure naming the point, in its place; a worker on other sources gives a
failure, never a result. The NoC sweep is the real sweep here (Icarus, two
loads of one pattern, a short window: a second or two a side); the AHBM sweeps' points need a Verilator
build of the CUBE (minutes), so only their handling of a failed task is checked.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from pathlib import Path
from typing import Iterator

import cloudpickle
import pytest

from tb.farm.calls import CallFailure, Reply, checked, submit_calls
from tb.ahbm import launch_sweep
from tb.ahbm import decode_sweep
from tb.noc import sweep
from tb.perf.points import run_points

# the functions below run on the workers, which cannot import this file by its name: send them by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

LOADS = (0.05, 0.1)
PLAN = ((sweep.REFERENCE_DEPTH, "uniform"),)
WINDOW = (100, 600)  # warm-up and measured cycles: enough traffic for the fit, a second a point on Icarus


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """Two one-thread worker processes, as `make regress` starts locally (the dashboard on any free port)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as c:
        yield c


def _square_unless_two(n: int) -> int:
    """Later points finish first (the results must still come back in the points' order); point 2 raises."""
    time.sleep(0.1 * (4 - n))
    if n == 2:
        raise ValueError(f"no square of {n} today\n(a second line the failure leaves out)")
    return n * n


def test_calls_come_back_in_the_points_order_and_a_raising_point_is_named(cluster: object) -> None:
    from distributed import Client

    seen: list[int] = []
    with Client(cluster) as client:
        out = submit_calls(client, _square_unless_two, [0, 1, 2, 3], describe=lambda n: f"point {n}",
                           on_done=lambda p, _: seen.append(p))
    assert out == [0, 1, CallFailure("point 2", "ValueError: no square of 2 today"), 9]
    assert str(out[2]) == "point 2: ValueError: no square of 2 today"
    assert sorted(seen) == [0, 1, 2, 3]


def test_a_worker_on_other_sources_gives_a_failure_not_a_result() -> None:
    reply = Reply(42, digest="aaaa", host="farm7", worker="tcp://10.0.0.7:4100")
    assert checked(reply, "aaaa", "NoC uniform load 0.05") == 42
    assert checked(dataclasses.replace(reply, digest=""), "bbbb", "NoC uniform load 0.05") == 42  # nothing to compare
    failure = checked(reply, "bbbb", "NoC uniform load 0.05")
    assert isinstance(failure, CallFailure) and failure.point == "NoC uniform load 0.05"
    assert "farm7 (tcp://10.0.0.7:4100) from other sources (digest aaaa, this checkout bbbb)" in failure.why


def test_a_worker_reports_the_sources_it_loaded_not_those_edited_while_it_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's digest is taken before the call: a file edited while a long task ran (a layer's CUBE runs
    minutes) is not what the task ran, and must not fail it as "other sources"."""
    from tb.farm import calls

    edited = []
    monkeypatch.setattr(calls, "source_digest", lambda: "after" if edited else "before")

    def task(n: int) -> int:
        edited.append(True)  # the checkout changes while the task runs
        return n * n

    reply = calls.call_on_worker(task, 7)
    assert reply.value == 49 and reply.digest == "before"


def test_points_here_keep_their_order_and_raise_as_they_always_did() -> None:
    assert run_points(lambda n: n * n, [3, 1, 2], jobs=2) == [9, 1, 4]
    with pytest.raises(ValueError, match="no square of 2"):
        run_points(_square_unless_two, [2, 3])


def _without_wall(points: list[sweep.Point]) -> list[sweep.Point]:
    """The records less the one figure that is not the simulation's: the wall time of the run."""
    return [dataclasses.replace(p, wall_s=0.0) for p in points]


def test_noc_points_on_the_cluster_give_the_records_made_here(cluster: object, tmp_path: Path) -> None:
    here = sweep.sweep("icarus", 1, 2, LOADS, root=tmp_path / "here", plan=PLAN, window=WINDOW)
    there = sweep.sweep("icarus", 1, 2, LOADS, scheduler=cluster.scheduler_address, root=tmp_path / "there",
                        plan=PLAN, window=WINDOW)
    assert [(p.pattern, p.load, p.measure) for p in there] == [("uniform", ld, WINDOW[1]) for ld in LOADS]
    assert _without_wall(there) == _without_wall(here)
    assert all(p.delivered > 0 for p in there)
    a, b = _without_wall(here), _without_wall(there)
    assert (sweep.format_report(b, sweep.summarise(b), "icarus", 0.0)
            == sweep.format_report(a, sweep.summarise(a), "icarus", 0.0))
    assert sweep.plot(b, tmp_path / "there.png").read_bytes() == sweep.plot(a, tmp_path / "here.png").read_bytes()
    # the two points of one depth built it once between them, under the folder's lock, and left its stamp
    assert (sweep.build_folder("icarus", sweep.REFERENCE_DEPTH, tmp_path / "there") / sweep.STAMP).exists()


def test_a_noc_point_that_fails_on_the_cluster_fails_the_sweep_by_name(cluster: object, tmp_path: Path) -> None:
    with pytest.raises(sweep.SweepError,
                       match=r"^NoC diagonal load 0.05 FIFO_DEPTH 4 \(icarus\): KeyError: 'diagonal'$"):
        sweep.sweep("icarus", 1, 2, (0.05,), scheduler=cluster.scheduler_address, root=tmp_path,
                    plan=((sweep.OLD_DEPTH, "diagonal"),), window=WINDOW)


def test_the_load_bench_is_built_once_and_again_when_its_inputs_change(tmp_path: Path) -> None:
    run = sweep.built(sweep.OLD_DEPTH, "icarus", tmp_path)
    target = Path(run[-1])
    first = target.stat().st_mtime_ns
    assert sweep.built(sweep.OLD_DEPTH, "icarus", tmp_path) == run and target.stat().st_mtime_ns == first
    (tmp_path / sweep.STAMP).write_text("{}")  # as if a source had changed since
    time.sleep(0.01)
    sweep.built(sweep.OLD_DEPTH, "icarus", tmp_path)
    assert target.stat().st_mtime_ns != first


def _all_fail(fn: object, specs: list, **_: object) -> list[CallFailure]:
    return [CallFailure(str(s), "KilledWorker: the worker died 3 times") for s in specs]


def test_a_decode_point_whose_task_failed_is_a_failed_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_sweep, "run_points", _all_fail)
    points = decode_sweep.run_sweep((2,), (64,), seed=5, scheduler="tcp://nowhere:8786")
    assert [(p.prefetch, p.tile, p.passed, p.seed) for p in points] == [(2, 64, False, 5)]
    assert "FAILED: KilledWorker: the worker died 3 times" in decode_sweep.format_table(points)


def test_launch_and_prefill_points_whose_tasks_failed_are_failed_rows(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    monkeypatch.setattr(launch_sweep, "run_points", _all_fail)
    launches, prefills = launch_sweep.run_launches((1,), (256,), (64,), 5, False, "verilator", tmp_path, 100,
                                                   scheduler="tcp://nowhere:8786")
    assert [(p.b, p.width, p.passed) for p in launches] == [(1, 256, False)]
    assert [(p.q_block, p.tile, p.passed) for p in prefills] == [(q, 64, False) for q in launch_sweep.PREFILL_QBLOCKS]
    assert "FAILED: KilledWorker" in launch_sweep.format_launch_table(launches)
    assert "FAILED: KilledWorker" in launch_sweep.format_prefill_table(prefills)
