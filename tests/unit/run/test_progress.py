"""Progress lines of long runs: done/total, elapsed, and an estimate from the previous run or this run's mean."""

from __future__ import annotations

import json
from pathlib import Path

from tb.run.progress import Progress, deal_to_slices, fmt_s, longest_first, previous_durations


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


def test_previous_durations_merge_the_jobs_of_one_prefix(tmp_path: Path) -> None:
    hist = tmp_path / "durations.json"
    assert previous_durations("pytest/icarus/", hist) == {}  # no file: nothing known
    hist.write_text(json.dumps({"pytest/icarus/1 workers": {"a": 5, "b": 7},
                                "pytest/icarus/2 workers": {"a": 9},
                                "pytest/verilator/2 workers": {"c": 100}}))
    assert previous_durations("pytest/icarus/", hist) == {"a": 9.0, "b": 7.0}
    hist.write_text("{ not json")
    assert previous_durations("pytest/icarus/", hist) == {}


def test_longest_first_puts_the_untimed_then_the_longest_ahead() -> None:
    steps = ["fifo", "clients", "ahbm", "mesh", "new"]
    # a new folder: the named ones lead, in their order; the rest keep theirs
    assert longest_first(steps, {}, first=["clients", "ahbm"]) == ["clients", "ahbm", "fifo", "mesh", "new"]
    # durations known: the one never timed first (it may be long), then longest first
    known = {"fifo": 1.0, "clients": 200.0, "ahbm": 110.0, "mesh": 9.0}
    assert longest_first(steps, known, first=["clients"]) == ["new", "clients", "ahbm", "mesh", "fifo"]


def test_deal_to_slices_starts_every_workers_part_with_its_share_of_the_heads() -> None:
    heads, rest = ["L1", "L2", "L3", "L4", "L5"], [f"u{i}" for i in range(15)]
    out = deal_to_slices(heads, rest, 2)
    assert sorted(out) == sorted(heads + rest) and len(out) == 20  # nothing lost or doubled
    first, second = out[:10], out[10:]  # worksteal's cut: 20 // 2, then the 10 left
    assert first[:3] == ["L1", "L3", "L5"] and second[:2] == ["L2", "L4"]
    assert [x for x in out if x.startswith("u")] == rest  # the rest keeps its order
    assert deal_to_slices(heads, rest, 1) == heads + rest
    # parts too small for their heads: nothing is lost
    assert sorted(deal_to_slices(heads, ["u0"], 3)) == sorted(heads + ["u0"])
