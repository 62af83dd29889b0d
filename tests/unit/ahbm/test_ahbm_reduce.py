"""The timing model of the streamed MERGE (models/ahbm/reduce.py): holds worked out by hand from the
rules in its docstring, the replay's edges in the simple cases, and the comparison failing on a wrong
edge (the module bench tb/ahbm/test_pe_merge.py holds the RTL to the same model)."""

from __future__ import annotations

import pytest

from models.ahbm.ipcq import mlo_words
from models.ahbm.reduce import MergeTiming, compare_timing, ml_body_word, reduction_roofline, stream_merge, word_holds


def test_holds_one_row_d32_64bit() -> None:
    # 1 row, d 32: 34 fp32 = 17 words of two; word 1 = (m0, l0) + the row scale, words 2..17 two O each
    assert word_holds(1, 32, 64) == [1, 2] + [1] * 16


def test_holds_llama_partial() -> None:
    # 8 rows, d 128, 16 VEC lanes -> 8 O elements merged a cycle
    h64 = word_holds(8, 128, 64)
    assert len(h64) == 1 + 520 and sum(h64) == 1 + 8 + 1 + 512      # link-bound: a word a cycle
    h256 = word_holds(8, 128, 256)
    assert len(h256) == 1 + 130 and sum(h256) == 1 + 2 + 1 + 128    # 8 O a word: still one cycle each
    h512 = word_holds(8, 128, 512)
    assert len(h512) == 1 + 65 and sum(h512) == 1 + (1 + 1) + 64 * 2  # 16 O a word: two cycles each


def test_ml_word_shares_o_elements() -> None:
    # 3 rows at 512 bits: word 1 = m0..2, l0..2 and 10 O elements -> 2 cycles + the row scale
    assert ml_body_word(3, 512) == 1
    assert word_holds(3, 32, 512)[1] == 2 + 1


def test_replay_all_queued_no_push() -> None:
    n = 1 + mlo_words(32, 1, 1, 64)
    t = stream_merge(1, 32, 64, start=100, arrivals=[0] * n, push=False)
    assert t.takes[0] == 101 and t.takes[1] == 102 and t.takes[2] == 104   # word 1 holds two edges
    assert t.done - 100 == 1 + 2 + 16 + 1                             # every hold, then the completion edge
    assert t.pushes == []


def test_replay_paced_by_arrivals() -> None:
    n = 1 + mlo_words(32, 1, 1, 64)
    arrivals = [200 + 3 * j for j in range(n)]                    # a slow sender: a word every 3 edges
    t = stream_merge(1, 32, 64, start=100, arrivals=arrivals, push=False)
    assert t.takes == [a + 1 for a in arrivals]
    assert t.done == arrivals[-1] + 2


def test_replay_push_follows_merge_and_backpressure() -> None:
    n = 1 + mlo_words(32, 1, 1, 64)
    t = stream_merge(1, 32, 64, start=0, arrivals=[0] * n, push=True)
    assert len(t.pushes) == n
    assert t.pushes[0] == t.takes[0] + 2                         # header: on the port next edge, taken after
    assert all(p >= tk + 2 for p, tk in zip(t.pushes, t.takes))
    assert t.done == t.pushes[-1] + 1
    blocked = set(range(10, 30))
    tb = stream_merge(1, 32, 64, start=0, arrivals=[0] * n, push=True, push_ready=lambda e: e not in blocked)
    assert not blocked & set(tb.pushes) and tb.done > t.done


def test_arrivals_must_match_the_packet() -> None:
    with pytest.raises(ValueError, match="arrival edges"):
        stream_merge(8, 32, 64, 0, [0, 0, 0], False)
    with pytest.raises(ValueError, match="IPCQ link width 96"):
        word_holds(8, 32, 96)


def test_compare_fails_on_a_wrong_edge() -> None:
    n = 1 + mlo_words(32, 8, 1, 256)
    model = stream_merge(8, 32, 256, 0, [0] * n, True)
    assert compare_timing(model, model, "x") == []
    late = MergeTiming(model.takes[:-1] + [model.takes[-1] + 1], model.pushes, model.done)
    assert any("takes at other edges" in e for e in compare_timing(late, model, "x"))
    short = MergeTiming(model.takes, model.pushes[:-1], model.done)
    assert any("words pushed" in e for e in compare_timing(short, model, "x"))
    assert any("completed at edge" in e for e in compare_timing(
        MergeTiming(model.takes, model.pushes, model.done + 1), model, "x"))


def test_reduction_roofline() -> None:
    assert reduction_roofline(1, 8, 128, 256) == 0
    assert reduction_roofline(8, 8, 128, 64) == 3 * 522            # 521 words; the holds add the row scale
    assert reduction_roofline(8, 8, 128, 256) == 3 * 132
    assert reduction_roofline(8, 8, 128, 512) == 3 * 131           # merge-bound: 66 words, 131 holds
