"""AHBM placement formulas (ADR-001 §2), causal tile decisions, ring skips."""

import numpy as np
import pytest

from models.ahbm import placement


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("request_id", [0, 1, 5, 7, 13])
def test_valid_len_and_slots_on_ragged_lengths(n, request_id):
    st = placement.start_pe(request_id, n)
    assert st == request_id % n
    for counter in [0, 1, n - 1, n, n + 1, 3 * n + 2, 101]:
        placed = placement.place(counter, request_id, n)
        lens = [placement.valid_len(counter, st, p, n) for p in range(n)]
        assert lens == [len(x) for x in placed]
        assert sum(lens) == counter and max(lens) - min(lens) <= 1
        for p in range(n):
            assert np.array_equal(placed[p], placement.slot_to_global(np.arange(lens[p]), p, st, n))
            for s, g in enumerate(placed[p]):
                assert placement.global_to_pe_slot(int(g), st, n) == (p, s)
        if counter:
            writer = [p for p in range(n) if placement.is_my_turn(counter - 1, st, p, n)]
            assert writer == [placement.dest_pe(request_id, counter - 1, n)]


def test_rotation_moves_first_token():
    assert [placement.dest_pe(r, 0, 8) for r in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert placement.valid_len(10, 6, 6, 8) == 2 and placement.valid_len(10, 6, 7, 8) == 2
    assert placement.valid_len(10, 6, 0, 8) == 1


def test_valid_len_wrong_value_detected():
    placed = placement.place(11, 3, 4)
    assert placement.valid_len(11, 3, 0, 4) != len(placed[0]) + 1


def test_strided_tile_positions_and_classification_bruteforce():
    n, rid, tile, counter = 4, 6, 3, 37
    st = placement.start_pe(rid, n)
    for qs, qe in [(0, 1), (5, 9), (20, 37), (36, 37), (12, 13)]:
        for p in range(n):
            ml = placement.valid_len(counter, st, p, n)
            for j in range(placement.n_tiles(ml, tile)):
                pos = placement.tile_positions(j, tile, ml, p, st, n)
                assert np.all(np.diff(pos) == n)           # strided globally
                vis = pos[None, :] <= np.arange(qs, qe)[:, None]
                want = "past" if vis.all() else "future" if not vis.any() else "partial"
                assert placement.classify(pos, qs, qe) == want
                assert [placement.tile_all_past(pos, qs, qe), placement.tile_partial(pos, qs, qe),
                        placement.tile_all_future(pos, qs, qe)].count(True) == 1
                mask = placement.make_mask_tile(pos, qs, qe, 2, tile)
                assert mask.shape == (2 * (qe - qs), tile)
                assert np.array_equal(mask[: qe - qs, : len(pos)] == 0, vis)
                assert np.array_equal(mask[qe - qs:], mask[: qe - qs])
                assert np.all(mask[:, len(pos):] == -np.inf)


def test_causal_skip_counts_no_sp():
    """N=1, S keys, tile T, block [qs, qe): future = n_tiles - ceil(qe/T);
    past = tiles whose last key <= qs."""
    S, T = 100, 16
    for qs, qe in [(0, 16), (16, 32), (40, 50), (96, 100), (0, 100)]:
        c = placement.causal_tile_counts(S, 0, 1, T, qs, qe)[0]
        nt = -(-S // T)
        assert c["future"] == nt - -(-qe // T)
        assert c["past"] == sum(1 for j in range(nt) if min((j + 1) * T, S) - 1 <= qs)
        assert c["past"] + c["partial"] + c["future"] == nt


def test_decode_never_skips():
    for n in (1, 8):
        for counter in (1, 9, 77):
            c = placement.causal_tile_counts(counter, 3, n, 4, counter - 1, counter)
            assert all(v["future"] == 0 and v["partial"] == 0 for v in c.values())


@pytest.mark.parametrize("n", [1, 2, 4, 8])
@pytest.mark.parametrize("seq", [8, 20, 257])
def test_ring_skip_counts(n, seq):
    total = 0
    for p in range(n):
        skipped = placement.ring_skipped_steps(p, seq, n)
        # step s carries block (p-s) mod N: s <= p past/diagonal, s > p future
        assert skipped == list(range(p + 1, n))
        assert sorted(placement.ring_source(p, s, n) for s in skipped) == list(range(p + 1, n))
        total += len(skipped)
        kinds = [placement.ring_step_kind(p, s, seq, n) for s in range(n)]
        assert kinds[0] == ("past" if seq // n == 1 and seq % n == 0 else "partial")
        assert all(k == "past" for k in kinds[1:p + 1])
    assert total == placement.predicted_ring_skips(n)
    assert placement.predicted_ring_skips(n) + 1 != total
