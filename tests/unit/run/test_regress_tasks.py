"""The main job on the regression engine, without a cluster: its task plan (order, folders, the lines the
workers print) and how it reads what the engine gives back (the console lines, results.xml in the order
asked for, a refused bench table's status 2), the engine replaced by a stand-in that runs nothing."""

from __future__ import annotations

import functools
import pickle
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, Sequence

import pytest

from tb.run import regress
from tb.run.benches import get_bench
from tb.farm.engine import FarmRun
from tb.farm.tasks import BenchTask, TaskOutcome, failed_outcome
from tb.run.progress import Progress
from tb.run.typical import load_table, typical_for_benches
from tb.run.runner import BenchResult, CaseResult

BENCHES = [get_bench("fifo"), get_bench("router"), get_bench("router_turn")]
TYPICAL = load_table()


def test_a_first_run_side_by_side_starts_the_typically_longest_bench_first(tmp_path: Path) -> None:
    """No previous run to go by: the recorded typical durations order the benches; a bench the previous run
    timed goes by that figure."""
    names = [b.name for b in BENCHES]
    typical = typical_for_benches(names, "icarus")
    progress = Progress("job", names, history=tmp_path / "none.json", workers=2, typical=typical)
    tasks = regress.plan_tasks(BENCHES, "icarus", 7, "", False, False, 2, progress.expected())
    assert [t.bench for t in tasks] == sorted(names, key=lambda n: -TYPICAL["icarus"][n])
    (tmp_path / "d.json").write_text('{"job": {"fifo": 1000.0}}')
    again = Progress("job", names, history=tmp_path / "d.json", workers=2, typical=typical)
    assert regress.plan_tasks(BENCHES, "icarus", 7, "", False, False, 2, again.expected())[0].bench == "fifo"


def test_one_at_a_time_the_selection_order_and_each_header_printed_as_it_starts() -> None:
    tasks = regress.plan_tasks(BENCHES, "icarus", 7, "", False, False, 1, {"router_turn": 99.0})
    assert [t.bench for t in tasks] == ["fifo", "router", "router_turn"]
    assert tasks[0].start_line == f"--- fifo: {get_bench('fifo').description}"
    assert all(t.bench_folder and t.announce and t.log_to_file and not t.waves and t.seed == 7 for t in tasks)


def test_side_by_side_the_longest_first_and_a_started_line() -> None:
    tasks = regress.plan_tasks(BENCHES, "verilator", 7, "hot", True, False, 2, {"router": 5.0, "router_turn": 9.0})
    assert [t.bench for t in tasks] == ["router_turn", "router", "fifo"]  # never timed: last
    assert tasks[0].start_line == "    router_turn started"
    assert all(t.waves and t.sim == "verilator" and t.test_filter == "hot" for t in tasks)


def test_verbose_streams_and_a_task_stays_a_frozen_picklable_key() -> None:
    (task,) = regress.plan_tasks(BENCHES[:1], "icarus", 1, "", False, True, 1, {})
    assert not task.log_to_file
    assert pickle.loads(pickle.dumps(task)) == task and hash(task) == hash(pickle.loads(pickle.dumps(task)))
    with pytest.raises(AttributeError):
        task.seed = 2  # type: ignore[misc]


def _passed(task: BenchTask) -> TaskOutcome:
    result = BenchResult(bench=task.bench, tests=[CaseResult("t", True, checks=3, cycles=30)], wall_s=1.0)
    return TaskOutcome(task, result, report_lines=[f"{task.bench} table"])


def _engine(monkeypatch: pytest.MonkeyPatch, outcome: Callable[[BenchTask], TaskOutcome]) -> dict:
    """tb.run.regress's engine calls replaced: every task finishes at once with `outcome(task)`, in the order
    submitted; returns what run_tasks was given."""
    seen: dict = {}

    def run_tasks(client: object, tasks: Sequence[BenchTask], build_root: Path,
                  on_done: Callable[[TaskOutcome], None], in_flight: int | None = None) -> FarmRun:
        seen.update(tasks=list(tasks), in_flight=in_flight, build_root=build_root)
        out = FarmRun(workers=in_flight or 1)
        for t in tasks:
            out.outcomes.append(outcome(t))
            on_done(out.outcomes[-1])
        return out

    monkeypatch.setattr(regress, "open_client", lambda scheduler, workers: seen.setdefault("workers", workers))
    monkeypatch.setattr(regress, "close_client", lambda client: seen.setdefault("closed", True))
    monkeypatch.setattr(regress, "run_tasks", run_tasks)
    for k in ("JOBS", "WAVES", "VERBOSE", "AGSIM_WALL_S", "COCOTB_TEST_FILTER", "AGSIM_BENCH_GIVEN", "SIM", "BENCH"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("COCOTB_RANDOM_SEED", "5")
    return seen


def test_the_engine_outcomes_read_as_the_main_job_always_printed_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = _engine(monkeypatch, _passed)
    monkeypatch.setattr(regress, "Progress", functools.partial(Progress, history=tmp_path / "durations.json"))
    results = tmp_path / "results.xml"
    rc = regress.main(["--bench", "router,fifo", "--jobs", "2", "--filter", ".", "--results", str(results),
                       "--build-root", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert seen["workers"] == 2 and seen["in_flight"] == 2 and seen["closed"] and seen["build_root"] == tmp_path
    assert [t.bench for t in seen["tasks"]] == sorted(["router", "fifo"], key=lambda b: -TYPICAL["icarus"][b])
    assert "seed 5, 2 at a time" in out.splitlines()[0]
    for k, bench in enumerate(("router", "fifo"), 1):  # side by side, the header comes with the result
        lines = out[out.index(f"--- {bench}: "):].splitlines()
        assert lines[1] == "    1 passed, 0 failed, 3 checks, 1.0s  ok"
        assert lines[2].startswith(f"    [{k}/2] {bench} 1 s, elapsed ")
        assert lines[3] == f"    {bench} table"  # its REPORT lines, as the worker scanned them
    assert [s.get("name") for s in ET.parse(results).getroot().iter("testsuite")] == ["router", "fifo"]
    assert out.rstrip().endswith("2 passed, 0 failed")


def test_a_bench_table_refused_inside_a_task_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _engine(monkeypatch, lambda t: failed_outcome(t, "the task did not finish: ValueError: bench fifo: bad", True))
    rc = regress.main(["--bench", "fifo", "--jobs", "1", "--results", str(tmp_path / "r.xml"),
                       "--build-root", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 2
    assert "FAILED fifo: the task did not finish: ValueError: bench fifo: bad" in captured.out
    assert captured.err.startswith("error: fifo: the task did not finish: ValueError: bench fifo: bad")
