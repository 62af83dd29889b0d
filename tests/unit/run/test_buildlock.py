"""One run per build folder (tb.run.buildlock): a second run is refused in one line naming the first, the
workers of one run share it, a lock left by a dead run is taken over; the main job refuses a held folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from tb.run import regress
from tb.run.buildlock import LOCK_NAME, FolderBusy, acquire, release


@pytest.fixture
def other_run() -> Iterator[subprocess.Popen]:
    """A live process standing for another run (its pid is what the lock names)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys, time; print(flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE)
    proc.stdout.readline()  # it runs its own command now (before, /proc showed the parent's)
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_run_is_refused_naming_the_first(tmp_path: Path, other_run: subprocess.Popen) -> None:
    acquire(tmp_path, "first", pid=other_run.pid)
    held = json.loads((tmp_path / LOCK_NAME).read_text())
    assert held["pid"] == other_run.pid and "time.sleep(60)" in held["command"] and held["started"]
    with pytest.raises(FolderBusy) as refused:
        acquire(tmp_path, "second")
    text = str(refused.value)
    assert "\n" not in text
    assert f"is in use by another run (pid {other_run.pid}, started {held['started']}: " in text
    assert "time.sleep(60)" in text


def test_the_workers_of_one_run_share_it_and_release_is_the_holders(tmp_path: Path) -> None:
    lock = acquire(tmp_path, "run-a")
    assert acquire(tmp_path, "run-a") == lock  # a second worker of the same run
    release(tmp_path, "run-b")                 # not the holder: nothing happens
    assert lock.exists()
    release(tmp_path, "run-a")
    assert not lock.exists()


def test_a_stale_lock_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / LOCK_NAME).write_text(json.dumps({"owner": "gone", "pid": dead.pid, "command": "x",
                                                  "started": "then"}))
    acquire(tmp_path, "new")
    assert json.loads((tmp_path / LOCK_NAME).read_text())["owner"] == "new"


def test_the_main_job_refuses_a_held_build_folder(tmp_path: Path, other_run: subprocess.Popen,
                                                  monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    for k in ("JOBS", "WAVES", "VERBOSE", "AGSIM_WALL_S", "COCOTB_RANDOM_SEED", "COCOTB_TEST_FILTER", "SIM"):
        monkeypatch.delenv(k, raising=False)
    acquire(tmp_path, "the other make", pid=other_run.pid)
    monkeypatch.setattr(regress, "open_client", lambda *a, **k: pytest.fail("a cluster started in a held folder"))
    rc = regress.main(["--bench", "fifo", "--results", os.devnull, "--build-root", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith(f"error: {tmp_path} is in use by another run (pid {other_run.pid}")
    assert (tmp_path / LOCK_NAME).exists()  # still the other run's


def _suite_hooks(lock_root: Path, monkeypatch: pytest.MonkeyPatch):
    """tests/conftest.py loaded as a plain module, its lock folder moved to `lock_root`."""
    import importlib.util

    from tb.run.benches import ROOT

    spec = importlib.util.spec_from_file_location("suite_hooks", ROOT / "tests" / "conftest.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    monkeypatch.setattr(hooks, "LOCK_ROOT", lock_root)
    return hooks


def test_make_test_takes_the_lock_once_per_run_and_refuses_a_second(tmp_path: Path, other_run: subprocess.Popen,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    hooks = _suite_hooks(tmp_path, monkeypatch)
    run = SimpleNamespace(option=SimpleNamespace(numprocesses=2))
    hooks._start(run, hooks._bench_ids(["tests/unit/test_x.py::t", "tests/test_benches.py::test_bench[fifo-icarus]"]))
    held = json.loads((tmp_path / LOCK_NAME).read_text())
    assert held["pid"] == os.getpid() and run._agsim_progress.steps == ["fifo-icarus"]
    hooks._start(run, ["fifo-icarus"])  # the next worker's collection report: the same run, nothing more
    hooks.release(tmp_path, hooks._owner())
    unit_only = SimpleNamespace(option=SimpleNamespace(numprocesses=2))
    hooks._start(unit_only, hooks._bench_ids(["tests/unit/test_x.py::t"]))  # no bench: no lock
    assert not (tmp_path / LOCK_NAME).exists()

    acquire(tmp_path, "the other make test", pid=other_run.pid)
    with pytest.raises(pytest.exit.Exception) as refused:
        hooks._start(SimpleNamespace(option=SimpleNamespace(numprocesses=2)), ["fifo-icarus"])
    assert refused.value.returncode == 2
    assert str(refused.value.msg).startswith(f"error: {tmp_path} is in use by another run (pid {other_run.pid}")
    assert "\n" not in str(refused.value.msg)
