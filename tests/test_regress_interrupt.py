"""Ctrl-C during the main job: every simulator ends (their process groups included), nothing new starts,
the finished benches are summarised, the others named as not run, exit status 130.

Runs `python -m tb.run.regress` for real in a session of its own, one bench at a time (fifo, router,
router_turn), and sends SIGINT to its process group, as a terminal does, once router's simulator runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from tb.run.benches import ROOT
from tb.run.proctree import alive, processes

HANG_GUARD_S = 300  # a bound on waiting for a hung run, not a speed claim: generous for a loaded, slow machine


def _simulator_of(session: int, bench: str) -> int | None:
    """The pid of a running vvp of `bench` in `session` (not the post-build elaboration check)."""
    for proc in processes():
        if proc.sid != session or proc.name != "vvp" or not alive(proc.pid):
            continue
        try:
            cmd = " ".join(psutil.Process(proc.pid).cmdline())
        except psutil.NoSuchProcess:
            continue
        if f"/{bench}/" in cmd and "agsim_elab_check" not in cmd:
            return proc.pid
    return None


def test_ctrl_c_ends_every_simulator_and_summarises(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("BENCH", "COCOTB_TEST_FILTER", "WAVES", "VERBOSE", "JOBS", "AGSIM_WALL_S")}
    env["COCOTB_RANDOM_SEED"] = "3"
    run = subprocess.Popen([sys.executable, "-m", "tb.run.regress", "--bench", "fifo,router,router_turn", "--jobs", "1",
                            "--results", str(tmp_path / "results.xml"), "--build-root", str(tmp_path / "build")],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(run.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + HANG_GUARD_S
    sim = None
    while sim is None and run.poll() is None and time.monotonic() < deadline:
        sim = _simulator_of(run.pid, "router")
        time.sleep(0.02)
    assert sim is not None, "router's simulator never started:\n" + "".join(lines)
    seen = [p.pid for p in processes() if p.sid == run.pid]
    os.killpg(run.pid, signal.SIGINT)
    rc = run.wait(timeout=HANG_GUARD_S)
    reader.join(timeout=10)
    out = "".join(lines)
    assert rc == 130, out
    left = [p for p in seen if alive(p)]
    assert not left, f"still running after the interrupt: {left}"
    assert not [p for p in processes() if p.sid == run.pid and alive(p.pid)]  # nothing of the run is left
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert "NOT RUN (interrupted): router, router_turn" in out
    summary = out[out.index("bench               pass"):]
    assert "\nfifo " in summary and "\nrouter " not in summary  # the finished bench, kept
    assert "3 passed, 0 failed, 2 bench(es) not run" in out
    assert "--- router_turn" not in out  # nothing new started
    log = (tmp_path / "build" / "router" / "sim.log").read_text(errors="replace")
    assert "** TESTS=" not in log, "router's simulator ran to its end instead of being stopped"
