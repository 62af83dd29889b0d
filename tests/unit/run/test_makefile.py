"""The Makefile's command lines, as make expands them (make -n: nothing runs)."""

from __future__ import annotations

import os
import subprocess

from tb.run.benches import ROOT


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


def test_the_suite_checks_its_options_before_pytest() -> None:
    """JOBS=0 or JOBS=abc would reach pytest -n (0: no workers at all); tb.run.options refuses them first."""
    lines = _dry("test", "JOBS=abc").splitlines()
    check = lines.index(".venv/bin/python -m tb.run.options")
    assert "pytest -n abc" in lines[check + 1]


def _exported(var: str, *args: str) -> str:
    """What the regression engine's process sees of `var`: the recipe's interpreter replaced by printenv (the
    rest of its line a shell comment), after the bootstrap the target runs first. `var` is taken out of this
    process's environment, so a SEEDS set in the shell that started the suite does not decide the verdict."""
    env = {k: v for k, v in os.environ.items() if k != var}
    out = subprocess.run(["make", "-s", "regress", f"PY=printenv {var} #", *args], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=env)
    return out.stdout.splitlines()[-1] if out.stdout.strip() else ""


def test_make_regress_alone_runs_seed_one() -> None:
    """`make regress UNTIL=coverage BUDGET=...` (no SEEDS) once reached tb.farm with SEEDS exported empty."""
    assert _exported("SEEDS") == "1"
    assert _exported("SEEDS", "SEEDS=5..9") == "5..9"
    assert _exported("SEEDS", "SEEDS=") == ""  # given empty: tb.farm refuses it by name
