"""`make lint` as part of the test suite: every job of tb/run/lint.py must be clean.

The lint jobs come from one place (tb.run.lint.lint_jobs: each RTL unit alone,
each arithmetic block, every bench of the table as it is built), so a unit
added to the table is linted here without a second list. verilator is
installed by the bootstrap; a missing one fails here, it is not skipped.

A clean verdict is kept under a hash of all it depends on (tb.run.lint.lint_key: the
command, verilator's version, the text of the sources and of every file in the
include folders), so a suite run re-lints only what changed; a failure is never
kept. `make lint` always lints everything.
"""

from __future__ import annotations

import subprocess

import pytest

from tb.run.lint import clean_before, command, lint_jobs, lint_key, remember_clean

JOBS = lint_jobs()


@pytest.mark.parametrize("job", JOBS, ids=[j.name for j in JOBS])
def test_lint_clean(job) -> None:
    key = lint_key(job)  # before the lint: a file edited while it runs is linted again next time
    if clean_before(key):  # the same command, linter and file texts were linted clean: the verdict stands
        return
    proc = subprocess.run(command(job), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "%Warning" not in proc.stderr, f"{job.name}:\n{proc.stderr}"
    remember_clean(key, job)
