"""The suite's lint verdicts kept by input (tb/run/lint.py lint_key): an unchanged job is not re-linted, a change to
anything it reads is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb.run import lint


def _job(src: Path, **extra) -> lint.LintJob:
    return lint.LintJob(name="t", top="t", sources=(str(src),), **extra)


def test_a_clean_verdict_is_kept_for_exactly_its_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint, "LINT_CACHE", tmp_path / "cache")
    src = tmp_path / "t.v"
    src.write_text("module t; endmodule\n")
    job = _job(src)
    key = lint.lint_key(job)
    assert not lint.clean_before(key)
    lint.remember_clean(key, job)
    assert lint.clean_before(lint.lint_key(job))
    src.write_text("module t; wire w; endmodule\n")  # the source's text changed: linted again
    assert not lint.clean_before(lint.lint_key(job))
    src.write_text("module t; endmodule\n")
    assert lint.clean_before(lint.lint_key(job))
    # another parameter, another command: linted again
    assert not lint.clean_before(lint.lint_key(_job(src, parameters=(("W", 3),))))


def test_an_include_folders_file_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "defs.vh").write_text("`define A 1\n")
    src = tmp_path / "t.v"
    src.write_text("module t; endmodule\n")
    job = _job(src, include_dirs=(str(inc),))
    before = lint.lint_key(job)
    (inc / "defs.vh").write_text("`define A 2\n")
    assert lint.lint_key(job) != before
