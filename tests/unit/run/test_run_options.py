"""Run options of both main targets refused in one line before anything runs: JOBS (make's `auto` or a
whole number from 1), WAVES and VERBOSE (yes/no words only), AGSIM_WALL_S (positive seconds); `make test`
checks them with `python -m tb.run.options` before pytest. Also which runs feed the progress estimate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tb.run import regress
from tb.run.benches import ROOT
from tb.run.benches import Bench, get_bench
from tb.run.options import BadInput, bench_wall_s, jobs_from_env, wall_budget, wall_override

CASES = [
    ({"JOBS": "0"}, "JOBS='0' is not a number of jobs; write JOBS=1, JOBS=2, ... (side by side, at least 1) or JOBS=auto"),
    ({"JOBS": "abc"}, "JOBS='abc' is not a number of jobs"),
    ({"JOBS": "-2"}, "JOBS='-2' is not a number of jobs"),
    ({"WAVES": "2"}, "WAVES='2' is not a yes/no value; write WAVES=1 (or yes/true/on) or WAVES=0"),
    ({"VERBOSE": "maybe"}, "VERBOSE='maybe' is not a yes/no value"),
    ({"AGSIM_WALL_S": "0"}, "AGSIM_WALL_S='0' is not a positive number of seconds"),
    ({"AGSIM_WALL_S": "ten"}, "AGSIM_WALL_S='ten' is not a positive number of seconds"),
]
VARS = ("JOBS", "WAVES", "VERBOSE", "AGSIM_WALL_S", "COCOTB_RANDOM_SEED", "COCOTB_TEST_FILTER", "BENCH",
        "AGSIM_BENCH_GIVEN", "SIM")
IDS = [f"{k}={v}" for env, _ in CASES for k, v in env.items()]


@pytest.mark.parametrize("env, words", CASES, ids=IDS)
def test_the_main_job_refuses_it_in_one_line(monkeypatch: pytest.MonkeyPatch, capsys, env, words) -> None:
    for k in VARS:
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(regress, "open_client", lambda *a, **k: pytest.fail("a cluster started despite bad input"))
    assert regress.main(["--bench", "fifo", "--results", os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {words}") and err.count("\n") == 1, err


@pytest.mark.parametrize("env, words", CASES, ids=IDS)
def test_make_test_refuses_it_before_pytest(env, words) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in VARS}
    out = subprocess.run([sys.executable, "-m", "tb.run.options"], cwd=ROOT, env={**clean, **env},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.startswith(f"error: {words}") and out.stderr.count("\n") == 1
    assert "Traceback" not in out.stderr


def test_make_test_accepts_good_values() -> None:
    clean = {k: v for k, v in os.environ.items() if k not in VARS}
    for env in ({}, {"JOBS": "auto", "WAVES": "0"}, {"JOBS": "3", "VERBOSE": "yes", "AGSIM_WALL_S": "7200"},
                {"JOBS": "", "WAVES": "", "SIM": "verilator"}):
        out = subprocess.run([sys.executable, "-m", "tb.run.options"], cwd=ROOT, env={**clean, **env},
                             capture_output=True, text=True, timeout=60)
        assert (out.returncode, out.stderr) == (0, ""), env


def test_jobs_and_wall_values(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, jobs in (("", 5), ("auto", 5), ("1", 1), (" 12 ", 12)):
        monkeypatch.setenv("JOBS", raw)
        assert jobs_from_env(cores=5) == jobs
    monkeypatch.setenv("JOBS", "1.5")
    with pytest.raises(BadInput):
        jobs_from_env(cores=5)
    monkeypatch.delenv("AGSIM_WALL_S", raising=False)
    assert wall_override() is None
    monkeypatch.setenv("AGSIM_WALL_S", "2.5")
    assert wall_override() == 2.5
    for bad in ("-1", "nan", "inf"):
        monkeypatch.setenv("AGSIM_WALL_S", bad)
        with pytest.raises(BadInput):
            wall_override()


def test_only_comparable_runs_feed_the_estimate() -> None:
    full, rec = regress.progress_key("icarus", 2, False, "")
    assert rec and full == "regress/icarus/2 at a time"
    assert regress.progress_key("verilator", 2, False, "")[0] != full  # another simulator
    assert regress.progress_key("icarus", 1, False, "")[0] != full     # benches alone run faster
    waves, rec_waves = regress.progress_key("icarus", 2, True, "")
    assert waves != full and not rec_waves                             # slower: neither read nor written
    assert regress.progress_key("icarus", 2, False, "hotspot") == (full, False)  # fewer tests: not written


def test_one_wall_budget_for_the_backstop_and_the_in_test_watchdogs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's backstop and the in-test wall watchdogs read one figure: the table's max_wall_s (the
    clients bench's as any other), the default for a name outside the table, AGSIM_WALL_S over both."""
    monkeypatch.delenv("AGSIM_WALL_S", raising=False)
    assert wall_budget("clients") == bench_wall_s(get_bench("clients").max_wall_s) == 3600
    assert wall_budget("a machine bench run under another name") == Bench.max_wall_s
    monkeypatch.setenv("AGSIM_WALL_S", "90")
    assert wall_budget("ahbm") == wall_budget("elsewhere") == bench_wall_s(3600) == 90


def test_module_is_refused_in_one_line_when_it_cannot_be_imported() -> None:
    """MODULE= (one's own cocotb module on a table bench): a dotted name that imports, else one line."""
    from tb.run.options import check_module

    check_module("tb.noc.test_mesh")  # the table's own module imports
    with pytest.raises(BadInput, match=r"^MODULE='my tb' is not a dotted Python module name"):
        check_module("my tb")
    with pytest.raises(BadInput, match=r"^MODULE=no_such_pkg.test_x: no such module in the project folder"):
        check_module("no_such_pkg.test_x")
