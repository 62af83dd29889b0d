"""make bench's judge table (tb/perf/judge_speed.py) with the timed models' column: constructed seconds, the
RTL / timed ratio per bundle and the median line against its target."""

from __future__ import annotations

from tb.perf.judge_speed import TIMED_TARGET, JudgeSpeed, format_speeds


def test_the_timed_models_median_against_its_target() -> None:
    rows = [JudgeSpeed("a", 1.0, 4.0, True, 0.5, 2.0), JudgeSpeed("b", 1.0, 9.0, True, 0.5, 1.0),
            JudgeSpeed("c", 1.0, 30.0, True, 0.5, 0.5)]  # RTL / timed: 2, 9, 60
    lines = format_speeds(rows).splitlines()
    assert lines[-1] == (f"the timed models: the RTL's cycles at 9.0x its speed on the median bundle (target "
                         f"{TIMED_TARGET:g}x; 2.0-60.0x over 3 bundles)")
    assert lines[1].endswith("   2.000       2.0")
    even = format_speeds(rows[:2]).splitlines()[-1]
    assert "at 5.5x its speed on the median bundle" in even  # the middle two's mean


def test_the_matrix_line_counts_the_rounds_within_one_percent() -> None:
    from tb.perf.timed_matrix import SetResult

    res = SetResult("vector.FETCH=2", [("a", 0, 1000, 1010), ("a", 1, 2000, 1979), ("b", 0, 500, 500)], True)
    assert res.line() == ("vector.FETCH=2                  3 rounds,    2 within 1 % of the RTL; models / RTL per "
                          "round 0.990-1.010, summed 3,489 / 3,500 = 0.997")
    assert SetResult("x", [("a", 0, 100, 100)], False).line().endswith(" (a run FAILED its checks)")
