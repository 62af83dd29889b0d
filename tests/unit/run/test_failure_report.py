"""What the console says when something fails: the first checks, the logs, this run's files only.

A failed test is shown with its first failing checks (decoded, as the
verdict recorded them) and the paths of its sim.log and build.log; a bench
that did not build shows the compiler's first error lines; the artifacts
re-check finds every artifacts.npz below a folder and says in one line when
there is none.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tb.lib import artifacts
from tb.run.summary import SHOWN_CHECKS, describe_failures, format_summary, scan_error_lines
from tb.run.runner import BenchResult, CaseResult, _read_results, compiler_errors


def test_a_failed_test_shows_its_first_checks_and_logs(tmp_path: Path) -> None:
    checks = [f"output c: lane {i} got 0x3c00 want 0x3c01" for i in range(5)]
    case = CaseResult("test_x/a=1", False, message="5 check(s) failed:\n  " + "\n  ".join(checks),
                      log=tmp_path / "sim.log", failures=checks)
    text = format_summary([BenchResult("b", [case], build_log=tmp_path / "build.log")], seed=7)
    assert "FAILED b::test_x/a=1: 5 check(s) failed:" in text
    for c in checks[:SHOWN_CHECKS]:
        assert f"    - {c}" in text
    assert checks[SHOWN_CHECKS] not in text and f"... {5 - SHOWN_CHECKS} more" in text
    assert f"logs: sim.log {tmp_path / 'sim.log'}, build.log {tmp_path / 'build.log'}" in text


def test_the_checks_come_from_the_verdict_record(tmp_path: Path) -> None:
    (tmp_path / "r.xml").write_text('<testsuites><testsuite><testcase name="t1"><failure message="2 check(s) '
                                    'failed:"/></testcase></testsuite></testsuites>')
    (tmp_path / "s.jsonl").write_text(json.dumps({"test": "t1", "verdict": "FAIL", "failures": ["a", "b"]}) + "\n")
    (res,) = _read_results(tmp_path / "r.xml", tmp_path / "s.jsonl")
    assert res.failures == ["a", "b"] and "    - b" in describe_failures(BenchResult("x", [res]))


def test_a_build_failure_shows_the_compiler_lines(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("INFO Running command iverilog -o sim.vvp ...\n"
                   "/w/rtl/noc/noc_fifo.v:12: syntax error\n/w/rtl/noc/noc_fifo.v:12: error: invalid module item.\n")
    errs = compiler_errors(log)
    assert errs == ["/w/rtl/noc/noc_fifo.v:12: syntax error", "/w/rtl/noc/noc_fifo.v:12: error: invalid module item."]
    r = BenchResult("fifo", error=f"build failed: boom; see {log}", build_log=log, build_errors=errs)
    lines = describe_failures(r)
    assert lines[0] == f"FAILED fifo: build failed: boom; see {log}" and lines[1] == f"    | {errs[0]}"


def test_error_lines_come_from_this_runs_logs_only(tmp_path: Path) -> None:
    stale = tmp_path / "bench" / "test_old"
    stale.mkdir(parents=True)
    (stale / "sim.log").write_text("ERROR from a WAVES run last week\n")
    (tmp_path / "bench" / "results.xml").write_text("<testsuites/>")
    (tmp_path / "bench" / "sim.log").write_text("INFO fine\nERROR mon_err rose\n")
    r = BenchResult("bench", results_files=[tmp_path / "bench" / "results.xml"])
    assert scan_error_lines(r.sim_logs) == ["ERROR mon_err rose"]


def _save(folder: Path, test: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    art = artifacts.Artifacts(test, folder)
    art.add("exp_x", np.arange(4, dtype=np.uint16))
    art.add("obs_x", np.arange(4, dtype=np.uint16))
    art.save({"verdict": "PASS", "seed": 1})


def test_the_recheck_finds_per_test_files_below_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _save(tmp_path / "bench" / "test_a", "test_a")  # WAVES=1: one file per test folder
    _save(tmp_path / "bench" / "test_b", "test_b")
    assert artifacts.main([str(tmp_path / "bench")]) == 0
    assert "re-checked 2 in 2 file(s), 0 mismatch(es)" in capsys.readouterr().out
    assert artifacts.main([str(tmp_path / "bench" / "artifacts.npz")]) == 0  # the file the old hint named
    assert artifacts.main([str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no artifacts.npz at or below" in err
