"""The Makefile's command lines, as make expands them (make -n: nothing runs)."""

from __future__ import annotations

import subprocess

from tb.benches import ROOT


def _dry(*args: str) -> str:
    env = {"PATH": "/usr/bin:/bin"}
    return subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=30).stdout


def test_the_suite_gets_its_worker_count() -> None:
    assert "pytest -n auto --dist worksteal tests" in _dry("test")  # an exported-but-unset JOBS was once empty
    assert "pytest -n 3 --dist worksteal tests" in _dry("test", "JOBS=3")


def test_a_verilator_run_bootstraps_the_cxx_tool_chain() -> None:
    assert "tools/bootstrap.sh --with-cxx" in _dry("SIM=verilator")
    assert "tools/bootstrap.sh --with-cxx" not in _dry("SIM=icarus")
    assert "tools/bootstrap.sh --with-verilator --with-cxx" in _dry("test")
