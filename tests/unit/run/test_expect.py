"""compare_per_port: every predicted flit, in order, per port; nothing extra."""

from __future__ import annotations

from tb.lib.expect import compare_per_port
from tb.lib.harness import CaptureRecord


def _recs(port: int, flits: list[int]) -> list[CaptureRecord]:
    return [CaptureRecord(cycle=10 + i, port=port, flit=f) for i, f in enumerate(flits)]


def test_exact_match_passes() -> None:
    checks, errors = compare_per_port({1: [5, 6, 7]}, _recs(1, [5, 6, 7]))
    assert checks == 3 and errors == []


def test_missing_surplus_wrong_and_reorder_fail() -> None:
    assert compare_per_port({1: [5, 6]}, _recs(1, [5]))[1][0].startswith("MISSING port 1 #1")
    assert compare_per_port({1: [5]}, _recs(1, [5, 9]))[1][0].startswith("SURPLUS port 1 #1")
    assert compare_per_port({1: [5, 6]}, _recs(1, [6, 5]))[1][0].startswith("WRONG port 1 #0")
    assert compare_per_port({1: [5]}, _recs(2, [5]))[1] != []


def test_key_separates_unordered_streams() -> None:
    # two streams to one port with no order between them: split by key
    key = lambda f: f % 2  # noqa: E731
    _, errors = compare_per_port({1: [2, 3, 4]}, _recs(1, [3, 2, 4]), key=key)
    assert errors == []
    _, errors = compare_per_port({1: [2, 3, 4]}, _recs(1, [4, 3, 2]), key=key)
    assert errors
