"""The wall-clock backstop (Bench.max_wall_s, AGSIM_WALL_S) stops a simulator that runs past it, and
every test it left unfinished fails with one line naming the bench, the limit, the elapsed time and how
to raise it, instead of cocotb's "simulation ended prematurely ... is your clock running?"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tb.run.benches import get_bench
from tb.run.summary import describe_failures
from tb.run.runner import CaseResult, list_tests, mark_unfinished, run_bench

LINE = re.compile(r"^router: the simulator was stopped by the wall-clock backstop of 0.2 s after (\d+\.\d) s, before "
                  r"this test finished \(a hung simulator, or a machine too slow or loaded for the bound\); raise "
                  r"it with AGSIM_WALL_S=<seconds> or the bench's max_wall_s in tb/run/benches\.py$")


def test_a_backstop_forced_low_names_itself_in_every_unfinished_test(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGSIM_WALL_S", "0.2")  # less than the simulator and cocotb take to start, on any machine
    result = run_bench(get_bench("router"), seed=5, build_root=tmp_path, log_to_file=True)
    assert not result.error, result.error
    unfinished = [t for t in result.tests if not t.passed]
    assert len(result.tests) == len(list_tests(get_bench("router"))) and unfinished  # every test reported
    for t in unfinished:
        match = LINE.match(t.message)
        assert match, t.message
    assert result.wall_s < 60, f"the run took {result.wall_s:.1f} s: the backstop did not stop the simulator"
    report = describe_failures(result)
    assert sum(line.startswith("FAILED router::") for line in report) == len(unfinished)
    assert "prematurely" not in "\n".join(report)


def test_only_unfinished_tests_are_marked() -> None:
    """A passed test and a test that failed on its own checks keep their verdicts; cocotb's premature-end
    failures and the tests it never reported get the backstop's line."""
    cases = [CaseResult("a", True), CaseResult("b", False, message="3 check(s) failed: LOST flit"),
             CaseResult("c", False, message="cocotb expected it would shut down the simulation, but the "
                                            "simulation ended prematurely. ...")]
    out = mark_unfinished(cases, ["a", "b", "c", "d"], "stopped")
    assert [(c.name, c.passed, c.message) for c in out] == [
        ("a", True, ""), ("b", False, "3 check(s) failed: LOST flit"), ("c", False, "stopped"),
        ("d", False, "stopped")]
