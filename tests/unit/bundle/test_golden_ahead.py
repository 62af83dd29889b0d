"""The golden results computed beside the simulator (tb/bundle/golden_ahead.py, models/bundle/golden.py)
equal the ones computed in-process, a child that fails is a named error, and the child never outlives the
process that started it, however that process ends (SIGKILL included) or when the run closes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from models.bundle.reader import Bundle
from models.bundle.golden import compute
from tb.bundle.golden_ahead import GoldenAhead
from tb.run.benches import ROOT

SMALL = "matmul_m32k64n32"
SLOW = str(ROOT / "clients" / "scale" / "flash_attention_causal_l128d64")  # seconds of golden work
# a stand-in for the simulator's process: starts the golden child, prints its pid and waits to be ended
PARENT = """
import sys, time
from pathlib import Path
from models.bundle.reader import Bundle
from tb.bundle.golden_ahead import GoldenAhead
ahead = GoldenAhead(Bundle(sys.argv[1]), "fused4", Path(sys.argv[2]))
print(ahead.proc.pid, ahead.out, flush=True)
time.sleep(600)
"""
GONE_WITHIN_S = 120.0  # only a bound on waiting: the child left without its result is what is checked


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan reaped late by init is already dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int) -> bool:
    end = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_the_child_dies_with_its_parent(tmp_path: Path, sig: signal.Signals) -> None:
    """The parent (the simulator's stand-in) is ended by `sig` while its child computes: the child is gone
    without having written its result (it did not merely finish), so no run leaves it orphaned."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, SLOW, str(tmp_path)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid_text, out = parent.stdout.readline().split(maxsplit=1)
    child = int(pid_text)
    try:
        assert _alive(child), "the golden child should be computing"
        parent.send_signal(sig)
        parent.wait()
        assert _wait_gone(child), f"the golden child {child} outlived its parent ended by {sig.name}"
        assert not Path(out.strip()).exists(), "the child finished its work instead of ending with its parent"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def test_close_ends_a_running_child(tmp_path: Path) -> None:
    """Every exit path of a bundle test closes its GoldenAhead: a child still computing is killed and reaped."""
    ahead = GoldenAhead(Bundle(SLOW), "fused4", tmp_path)
    assert ahead.proc is not None and ahead.proc.poll() is None
    assert ahead.finished() is None, "a child still computing has no result yet, and is not waited for"
    ahead.close()
    assert ahead.proc.returncode == -signal.SIGKILL and not ahead.out.exists()
    assert ahead.finished() is None, "a killed child left no result"
    ahead.close()  # twice is harmless (a finally after a result() that closed it already)


def test_child_result_equals_in_process(tmp_path: Path) -> None:
    b = Bundle(SMALL)
    ahead = GoldenAhead(b, "fused4", tmp_path)
    child = ahead.result()
    assert ahead.finished() is not None, "a child that ended with its result gives it without waiting"
    here = compute(b.path, "fused4")
    assert child.model is not None and here.model is not None
    assert child.model_error == here.model_error == ""
    assert np.array_equal(child.model.image, here.model.image)
    assert child.model.result.cycles == here.model.result.cycles
    assert not isinstance(here.bound, Exception) and not isinstance(child.bound, Exception)
    assert here.bound.bounds.keys() == child.bound.bounds.keys()
    for port, bound in here.bound.bounds.items():
        assert np.array_equal(bound, child.bound.bounds[port])


def test_a_result_is_reused_only_for_the_same_inputs(tmp_path: Path) -> None:
    """A second run of the same bundle reads the kept result; another machine is another key (a new child)."""
    b = Bundle(SMALL)
    first = GoldenAhead(b, "fused4", tmp_path)
    assert not first.reused
    first.result()
    again = GoldenAhead(b, "fused4", tmp_path)
    assert again.reused and again.proc is None
    assert np.array_equal(again.result().model.image, first.result().model.image)
    other = GoldenAhead(b, "mm_mesh_sys", tmp_path)
    assert not other.reused and other.out != first.out
    assert other.proc is not None and other.proc.wait() == 0


def test_failed_child_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=rf"golden run of {SMALL} .* exited with status [1-9]"):
        GoldenAhead(Bundle(SMALL), "no_such_machine", tmp_path).result()
