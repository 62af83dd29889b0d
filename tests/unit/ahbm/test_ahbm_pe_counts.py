"""tb.ahbm.score.PeCounts: a launch's PE counters, predicted and seen, kept as one exp/obs pair in
artifacts.npz, which the archive's re-check compares (and fails on a counter that differs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tb.ahbm.score import PeCounts
from tb.lib import artifacts


def save(tmp_path: Path, seen_k_rank1: int) -> Path:
    counts = PeCounts()
    counts.add({"cnt_k": 4, "cnt_score": 256}, {"cnt_k": 4, "cnt_score": 256, "cnt_v": 9}, 0)
    counts.add({"cnt_k": 3, "cnt_score": 192}, {"cnt_k": seen_k_rank1, "cnt_score": 192, "cnt_v": 9}, 1)
    art = artifacts.Artifacts("launch", tmp_path)
    counts.save(art)
    return art.save({"seed": 1})


def test_the_counters_are_one_pair_a_row_a_rank(tmp_path: Path) -> None:
    arrays = artifacts.load(save(tmp_path, 3))["launch"]
    assert list(arrays["pe_counter_keys"]) == ["cnt_k", "cnt_score"]
    assert arrays["exp_pe_counters"].tolist() == [[4, 256], [3, 192]] == arrays["obs_pe_counters"].tolist()
    assert arrays["tiles_skipped"].tolist() == [0, 1]
    assert artifacts.recheck(tmp_path / artifacts.FILE_NAME)[1] == []


def test_the_recheck_fails_on_a_counter_that_differs(tmp_path: Path) -> None:
    errors = artifacts.recheck(save(tmp_path, 5))[1]
    assert len(errors) == 1 and "exp_pe_counters vs obs_pe_counters differ (1)" in errors[0]


def test_ranks_that_predict_other_counters_are_refused() -> None:
    counts = PeCounts()
    counts.add({"cnt_k": 1}, {"cnt_k": 1}, 0)
    with pytest.raises(ValueError, match="rank 1 predicts counters"):
        counts.add({"cnt_v": 1}, {"cnt_v": 1}, 0)
    assert np.asarray(counts.exp).shape == (1, 1)
