"""Find and end every process a run started, simulator process groups included.

Why: the simulator runs under `timeout` (tb.simulators.make_runner), which
puts itself and the simulator in a process group of their own, out of reach of
the terminal's Ctrl-C. Killing only the Python worker that started it leaves
the simulator orphaned and, with `timeout` gone, with no wall limit. So on an
interrupt the main job collects every descendant of its workers (read from
/proc), ends the workers first (nothing new starts), then each process group
found, SIGTERM and after a grace period SIGKILL.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Proc:
    """One process as /proc shows it."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    name: str


def processes() -> list[Proc]:
    """Every process /proc lists now (those that vanish while being read are left out)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp session ...
        out.append(Proc(int(entry.name), int(fields[1]), int(fields[2]), int(fields[3]), name))
    return out


def descendants(roots: list[int]) -> list[Proc]:
    """Every live process below the pids `roots` (children, theirs, ...)."""
    table = processes()
    below: list[Proc] = []
    frontier = set(roots)
    while frontier:
        kids = [p for p in table if p.ppid in frontier]
        below.extend(kids)
        frontier = {p.pid for p in kids}
    return below


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
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
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    own = os.getpgrp()
    groups = {p.pgid for p in below if p.pgid != own}
    strays = [p.pid for p in below if p.pgid == own]  # below a worker but in our group (not under timeout)
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    for pid in strays:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    pids = {p.pid for p in below}
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return below


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its parent is not running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


__all__ = ["Proc", "alive", "descendants", "end_tree", "processes"]
