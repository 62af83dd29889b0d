"""Progress lines of long runs: done/total, elapsed, and an estimate from the previous run or this run's mean."""

from __future__ import annotations

import json
from pathlib import Path

from tb.progress import Progress, fmt_s


def test_estimate_from_this_run_then_from_the_previous_run(tmp_path: Path) -> None:
    hist = tmp_path / "durations.json"
    p = Progress("job", ["a", "b", "c"], history=hist)
    line = p.done("a", 10.0)
    assert line.startswith("[1/3] a 10 s, elapsed ") and line.endswith("about 20 s left (from this run's mean step)")
    p.done("b", 30.0)
    assert p.done("c", 5.0).startswith("[3/3] c 5 s") and "left" not in p.done("c", 5.0)
    p.save()
    assert json.loads(hist.read_text()) == {"job": {"a": 10.0, "b": 30.0, "c": 5.0}}
    q = Progress("job", ["a", "b", "c"], history=hist)
    assert q.done("a", 12.0).endswith("about 35 s left (from the previous run)")


def test_a_filtered_run_records_nothing(tmp_path: Path) -> None:
    hist = tmp_path / "d.json"
    p = Progress("job", ["a"], history=hist, record=False)
    p.done("a", 1.0)
    p.save()
    assert not hist.exists()


def test_durations_read_well() -> None:
    assert (fmt_s(7.4), fmt_s(185), fmt_s(3720)) == ("7 s", "3m05s", "1h02m")
