"""Find and end every process a run started, simulator process groups included.

Why: the simulator runs under `timeout` (tb.run.simulators.make_runner), which
puts itself and the simulator in a process group of their own, out of reach of
the terminal's Ctrl-C. Killing only the Python worker that started it leaves
the simulator orphaned and, with `timeout` gone, with no wall limit. So on an
interrupt the main job collects every descendant of its workers (psutil),
ends the workers first (nothing new starts), then each process group found,
SIGTERM and after a grace period SIGKILL.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import psutil


@dataclass(frozen=True)
class Proc:
    """One process: its pid, parent, process group, session and name."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    name: str


def _proc(p: psutil.Process) -> Proc | None:
    """The Proc of a live process, or None once it has gone."""
    try:
        with p.oneshot():
            return Proc(p.pid, p.ppid(), os.getpgid(p.pid), os.getsid(p.pid), p.name())
    except (psutil.NoSuchProcess, ProcessLookupError):
        return None


def processes() -> list[Proc]:
    """Every process there is now (those that vanish while being read are left out)."""
    return [proc for p in psutil.process_iter() if (proc := _proc(p)) is not None]


def descendants(roots: list[int]) -> list[Proc]:
    """Every live process below the pids `roots` (children, theirs, ...)."""
    below: list[Proc] = []
    for pid in roots:
        try:
            kids = psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            continue
        below.extend(proc for p in kids if (proc := _proc(p)) is not None)
    return below


def _signal(pid: int, sig: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_tree(workers: list[int], grace_s: float = 3.0) -> list[Proc]:
    """End the processes `workers` and everything below them; return what was found below them.

    The workers are killed first so that none starts another simulator; then every process group
    below them that is not our own gets SIGTERM (`timeout` passes it on to the simulator), and
    whatever is left after `grace_s`, SIGKILL.
    """
    below = descendants(workers)
    for pid in workers:
        _signal(pid, signal.SIGKILL)
    own = os.getpgrp()
    groups = {p.pgid for p in below if p.pgid != own}
    for pgid in groups:
        _signal(pgid, signal.SIGTERM, group=True)
    for p in below:
        if p.pgid == own:  # below a worker but in our group (not under timeout)
            _signal(p.pid, signal.SIGTERM)
    handles = []
    for p in below:
        try:
            handles.append(psutil.Process(p.pid))
        except psutil.NoSuchProcess:
            pass
    _, left = psutil.wait_procs(handles, timeout=grace_s)
    for pgid in groups:
        _signal(pgid, signal.SIGKILL, group=True)
    for p in left:
        _signal(p.pid, signal.SIGKILL)
    return below


def end_descendants(grace_s: float = 5.0) -> int:
    """After an interrupted run's cluster was closed: end whatever still runs below this process (a worker
    slow to die on a loaded machine, a helper such as multiprocessing's resource tracker) with SIGTERM, and
    SIGKILL after `grace_s`, so that the run returns with nothing of its own left running. How many there
    were."""
    left = [p for p in psutil.Process().children(recursive=True) if alive(p.pid)]
    for p in left:
        _signal(p.pid, signal.SIGTERM)
    _, stubborn = psutil.wait_procs(left, timeout=grace_s)
    for p in stubborn:
        _signal(p.pid, signal.SIGKILL)
    psutil.wait_procs(stubborn, timeout=grace_s)
    return len(left)


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its parent is not running)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


__all__ = ["Proc", "alive", "descendants", "end_descendants", "end_tree", "processes"]
