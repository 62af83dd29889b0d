"""What stamps a benchmark's history line (sim_build/perf/*history.jsonl): when, and from which sources.

The benchmark stages append one JSON line per run or point so figures can be
followed across commits; each line says when it was measured (UTC) and the
commit it was measured on, `+dirty` when tracked files differed from it.
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone

from tb.run.benches import ROOT


def utc_now() -> str:
    """Now, in UTC, to the second (ISO 8601)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def git_rev() -> str:
    """The checkout's short commit, `+dirty` when a tracked file differs from it; '' outside git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + ("+dirty" if dirty else "") if rev else ""
    except (OSError, subprocess.SubprocessError):
        return ""


__all__ = ["git_rev", "utc_now"]
