"""The launch sweep's arithmetic and pictures (tb/ahbm/launch_sweep.py, tb/ahbm/plots.py): figures
from a JSON line, targets reported met and missed, activity logs to spans, PNGs written."""

from __future__ import annotations

import pytest

from tb.ahbm import launch_sweep
from tb.ahbm import plots


def rec(start: int, end: int, lasts: list[int], merged: int | None = None) -> dict:
    """A decode point's line; PE 1 is the root, its log's last merge ends at `merged` (default: at the
    end, one store of 0 cycles), PE 0 never merges."""
    merged = end if merged is None else merged
    return {"start": start, "end": end, "pes": [0, 1],
            "counters": [{"cyc_last": x, "cnt_store": int(i == 1)} for i, x in enumerate(lasts)],
            "activity": {"0": [[start, 2], [lasts[0], 4], [lasts[0] + 1, 0]],
                         "1": [[start, 2], [max(lasts), 6], [merged, 7], [end, 0]]},
            "polls": {"pop_polls": 5, "pop_misses": 2}}


def test_launch_metrics_tail_and_rooflines() -> None:
    m = launch_sweep.launch_metrics(rec(100, 5100, [4000, 4600], merged=5000), 256, 1)
    assert m["launch"] == 5000 and m["tail"] == 500 and m["tail_share"] == pytest.approx(0.1)
    assert m["reduction"] == 400 and m["red_share"] == pytest.approx(0.08)
    assert m["dma_roof"] == 4096 and m["roof"] == 4096 + 3 * 132
    assert m["vs_dma"] == pytest.approx(5000 / 4096)
    m8 = launch_sweep.launch_metrics(rec(0, 40000, [38000, 39000]), 64, 8)
    assert m8["dma_roof"] == 8 * 4096 and m8["roof"] == 8 * 4096 + 3 * 522
    with pytest.raises(ValueError, match="nothing to measure"):
        launch_sweep.launch_metrics(rec(100, 90, [95, 95]), 64, 1)
    untraced = rec(0, 5000, [4000, 4600])
    del untraced["activity"]
    assert launch_sweep.launch_metrics(untraced, 256, 1)["reduction"] is None  # no log: not measured, never guessed


def test_targets_met_missed_and_unmeasured() -> None:
    metrics = launch_sweep.launch_metrics
    good = launch_sweep.LaunchPoint(1, 256, True, metrics=metrics(rec(0, 5000, [4500, 4600]), 256, 1))
    bad = launch_sweep.LaunchPoint(8, 256, True, metrics=metrics(rec(0, 40000, [38000, 39000]), 256, 8))
    lines = launch_sweep.target_lines([good, bad])
    assert "measured 8.0%" in lines[0] and lines[0].endswith("met")
    assert "measured 1.221x" in lines[1] and lines[1].endswith("missed")
    worse = launch_sweep.LaunchPoint(1, 256, True, metrics=metrics(rec(0, 5000, [4000, 4000]), 256, 1))
    assert launch_sweep.target_lines([worse])[0].endswith("missed")
    none = launch_sweep.target_lines([launch_sweep.LaunchPoint(1, 256, False, "boom")])
    assert all("not measured" in x for x in none)
    assert "FAILED: boom" in launch_sweep.format_launch_table([launch_sweep.LaunchPoint(1, 256, False, "boom")])


def test_prefill_bound_is_the_larger_of_compute_and_dma() -> None:
    r = {"start": 0, "end": 3000, "params": {"DMA_BW": 64},
         "counters": [{"cyc_mm": 1500, "cyc_vec": 500, "dma_bytes": 64 * 2500, "cnt_comp": 9, "cnt_mask": 3}]}
    m = launch_sweep.prefill_metrics(r)
    assert m["compute"] == 2000 and m["dma"] == 2500 and m["bound"] == 2500 and m["vs_bound"] == pytest.approx(1.2)


def test_spans_from_an_activity_log() -> None:
    # idle, then DMA on while waiting, MM with DMA, MM alone, VEC, merge, idle to the end
    log = [(0, 0), (10, 1 | 8), (20, 2 | 8), (20, 2 | 8), (30, 2), (40, 3), (45, 6), (60, 0)]
    eng, dma = plots.spans(log, 70)
    assert [(s.start, s.end, s.what) for s in eng] == [(0, 10, "idle"), (10, 20, "wait DMA"), (20, 40, "MM"),
                                                       (40, 45, "VEC"), (45, 60, "merge"), (60, 70, "idle")]
    assert [(s.start, s.end) for s in dma] == [(10, 30)]
    busy = plots.busy_by_class(eng)
    assert busy["MM"] == 20 and busy["idle"] == 20 and sum(busy.values()) == 70
    with pytest.raises(ValueError, match="cycle order"):
        plots.spans([(10, 0), (5, 1)], 20)


def test_pictures_are_written(tmp_path) -> None:
    t = plots.timeline({0: [(0, 1 | 8), (50, 2)], 3: [(0, 0), (20, 3)]}, 0, 100, "t", tmp_path / "t.png")
    r = plots.roofline_plot([(1, 100, 32, 130.0, 128.0), (1, 100, 64, 260.0, 256.0), (1, 400, 32, 190.0, 128.0)],
                            [(1, 256, 4600, 4492), (8, 256, 34000, 33164)], tmp_path / "r.png")
    for p in (t, r):
        assert p.exists() and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
