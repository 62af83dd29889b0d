"""The RTL's rounds held to the timed golden models' (models/bundle/models_beside.py): every value here is
constructed, each target checked at its boundary and past it, and the report line names where they part,
also for a bundle without upstream's timing (one's own export)."""

from __future__ import annotations

from models.bundle.models_beside import ModelsBeside
from models.bundle.report import BundleReport, RoundRow, format_timing
from models.bundle.round_timing import RoundTiming


def _beside(rtl: list[int], models: list[int]) -> ModelsBeside:
    return ModelsBeside("k", tuple("VC" for _ in rtl), tuple(rtl), tuple(models))


def test_within_the_targets_nothing_fails_and_the_close_rounds_are_counted() -> None:
    b = _beside([1000, 2020, 3000], [1000, 2000, 2940])  # 1.000, 1.010 (on the 1 % boundary), 1.020
    assert b.failures() == [] and b.close() == 2 and b.worst() == 2
    assert b.line() == ("  models: machine cycles 6020 RTL / 5940 the timed golden models, ratio 1.013; 2 of 3 "
                        "round(s) within 1 %; worst round 2 (VC): 3000 / 2940, ratio 1.020")
    assert _beside([2021], [2000]).close() == 0  # just past 1 %


def test_a_round_past_ten_percent_and_a_sum_past_three_fail_by_name() -> None:
    round_off = _beside([1100, 5000], [1000, 5000])  # exactly 10 %: within
    assert round_off.failures() == []
    past = _beside([1101, 5000], [1000, 5000])
    assert past.failures() == ["bundle k round 0 (VC): machine cycles 1101 on the RTL, 1000 on the timed models "
                               "(ratio 1.101, target ±10 %)"]
    total = _beside([1090, 1090], [1000, 1000])  # each round 9 % off: the sum 9 % off, past ±3 %
    assert total.failures() == ["bundle k: machine cycles 2180 on the RTL, 2000 on the timed models (ratio 1.090, "
                                "target ±3 %)"]
    assert _beside([1000], [1000, 1000]).failures()[0].endswith("not comparable")


def test_the_line_follows_the_rtl_timing_even_without_upstreams() -> None:
    ours = RoundTiming(0, 188, (0,), ((1, 1, 500),), 500)
    row = RoundRow(0, "own:0", "MG", 8, 8, 900, 1, 1, 4, 0, ours.to_json())
    rep = BundleReport("own", "rtl", True, [], [row], 900, 1.0, extra={"models_beside": _beside([500], [505]).to_json()})
    lines = format_timing(rep).splitlines()
    assert lines[0].startswith("  timing: no reference (the bundle has no timing_rtl.json); machine cycles 500 ours")
    assert lines[1] == ("  models: machine cycles 500 RTL / 505 the timed golden models, ratio 0.990; 1 of 1 "
                        "round(s) within 1 %; worst round 0 (VC): 500 / 505, ratio 0.990")
