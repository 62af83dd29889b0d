"""tb/run/simdiff.py: the test-by-test comparison of an Icarus and a Verilator run of one seed."""

from __future__ import annotations

import json
from pathlib import Path

from tb.run.simdiff import diff_bench, format_diffs


def _stats(folder: Path, rows: list[tuple[str, str, int, int]], seed: int = 7) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stats.jsonl").write_text("".join(
        json.dumps({"test": t, "verdict": v, "checks": c, "cycles": y, "run_seed": seed}) + "\n"
        for t, v, c, y in rows))


def test_equal_runs_agree_and_a_one_cycle_difference_is_named(tmp_path: Path) -> None:
    rows = [("a", "PASS", 10, 100), ("b", "PASS", 5, 50)]
    _stats(tmp_path / "orch", rows)
    _stats(tmp_path / "verilator" / "orch", rows)
    d = diff_bench("orch", tmp_path)
    assert d.compared == 2 and not d.differ and not d.missing
    _stats(tmp_path / "verilator" / "orch", [rows[0], ("b", "PASS", 5, 51)])
    d = diff_bench("orch", tmp_path)
    assert d.differ == {"b": (("PASS", 5, 50), ("PASS", 5, 51))}
    assert "b: ('PASS', 5, 50) -> ('PASS', 5, 51)" in format_diffs([d])


def test_runs_of_different_seeds_or_one_simulator_are_not_compared(tmp_path: Path) -> None:
    _stats(tmp_path / "mag", [("a", "PASS", 1, 1)], seed=1)
    assert diff_bench("mag", tmp_path).missing == "no verdict lines on Verilator"
    _stats(tmp_path / "verilator" / "mag", [("a", "PASS", 1, 1)], seed=2)
    assert diff_bench("mag", tmp_path).missing == "run seeds differ (Icarus [1], Verilator [2])"
