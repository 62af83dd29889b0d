"""`make list` runs `python3 -m tb.run.benches` on the system Python, outside the
venv: the bench table must import with the standard library alone and list
every bench."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tb.run.benches import BENCHES

ROOT = Path(__file__).resolve().parents[3]


def test_bench_table_lists_without_the_venv() -> None:
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    assert python, "no system python3 (the Makefile's `make list` needs one)"
    out = subprocess.run([python, "-S", "-m", "tb.run.benches"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    names = {line.split()[0] for line in out.stdout.splitlines() if line.strip()}
    assert {b.name for b in BENCHES} <= names
