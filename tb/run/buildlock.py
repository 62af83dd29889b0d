"""One run per build folder: a lock file naming the run that holds it.

Two runs on one build root (`make test` twice at once, or `make SIM=icarus`
twice) rebuild and rerun the same sim_build/<bench>/ folders under each other,
and fail with what looks like device bugs. So a run takes
<build root>/run.lock (pid, command, start time) before it builds anything; a
second run is refused in one line naming the first, and a lock whose pid is
gone (a run killed with SIGKILL) is stale and taken over. The lock belongs to
a run, not to a process: the pytest-xdist workers of one `make test` share
sim_build/pytest/ (each bench in its own folder), so they take it under the
run's id (`owner`) and pass when the holder has the same one.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tb.run.proctree import alive

LOCK_NAME = "run.lock"


class FolderBusy(RuntimeError):
    """Another live run holds the build folder (the message names it)."""


def command_of(pid: int) -> str:
    """The command line of `pid` (from /proc), or '?' when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(p.decode(errors="replace") for p in raw.split(b"\0") if p) or "?"


def _read(lock: Path) -> dict | None:
    try:
        return json.loads(lock.read_text())
    except (OSError, ValueError):
        return None


def acquire(root: Path, owner: str, pid: int | None = None) -> Path:
    """Take `root`/run.lock for the run `owner` (held by process `pid`, default this one); return the lock path.

    Passes when the run `owner` already holds it; raises FolderBusy when another live run does.
    """
    pid = pid or os.getpid()
    root.mkdir(parents=True, exist_ok=True)
    lock = root / LOCK_NAME
    record = {"owner": owner, "pid": pid, "command": command_of(pid),
              "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())}
    for _ in range(3):  # a stale lock removed, or a holder gone between two reads: try again
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            held = _read(lock)
            if held is None:  # being written by its taker this instant, or unreadable
                time.sleep(0.2)
                held = _read(lock)
            if held and held.get("owner") == owner:
                return lock
            if held and alive(int(held.get("pid", 0))):
                raise FolderBusy(
                    f"{root} is in use by another run (pid {held['pid']}, started {held.get('started', '?')}: "
                    f"{held.get('command', '?')}); wait for it to finish or stop it, or run from another clone "
                    f"(a stale lock is {lock}: remove it only if that pid is not a run)") from None
            lock.unlink(missing_ok=True)  # stale: its run is gone
            continue
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        return lock
    raise FolderBusy(f"could not take {lock}: it keeps changing hands; another run is starting in {root}")


def release(root: Path, owner: str) -> None:
    """Remove the lock if the run `owner` holds it (never another run's)."""
    lock = root / LOCK_NAME
    held = _read(lock)
    if held and held.get("owner") == owner:
        lock.unlink(missing_ok=True)


__all__ = ["FolderBusy", "LOCK_NAME", "acquire", "command_of", "release"]
