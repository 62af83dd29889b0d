"""AHBM per-PE kernel reference: the four ADR cases, bits and counts."""

import numpy as np
import pytest

from models.ahbm import attention
from models.ahbm.tolerance import check_attention
from models.ahbm import kernel
from models.ahbm import placement
from models.ahbm.numerics import F32, bf16_to_f32, to_bf16


def _data(seed, g, tq, s, d):
    rng = np.random.default_rng(seed)
    return (to_bf16(rng.standard_normal((g, tq, d))), to_bf16(rng.standard_normal((s, d))),
            to_bf16(rng.standard_normal((s, d))))


def _causal(qpos, s):
    return np.where(np.arange(s)[None, :] <= np.asarray(qpos)[:, None], F32(0), F32(-np.inf))


def _sweep_short(rows, k, v, tile, mask=None):
    """Plain tile loop with a short last tile (no padding)."""
    st = attention.empty_state(rows.shape[0], rows.shape[1])
    for j in range(0, k.shape[0], tile):
        st = attention.attn_tile(rows, k[j:j + tile], v[j:j + tile],
                                 None if mask is None else mask[:, j:j + tile], st)
    return st


def test_decode_no_sp_llama_geometry():
    G, d, S, T = 8, 128, 300, 64
    q, k, v = _data(0, G, S, S, d)
    r = kernel.decode(q[:, -1], k, v, n=1, tile=T)
    assert r.O.shape == (G, 1, d) and r.O.dtype == np.uint16
    c = r.per_block[0]["pe"][0]
    assert c["composites"] == c["k_loads"] == c["v_loads"] == 5
    assert c["masked"] == 0 and c["tiles_skipped"] == 0 and c["pushes"] == 0   # ragged = short, unmasked
    assert c["scores"] == G * S   # every key scored once for each of the G rows (the RTL's cnt_score)
    assert r.tree_depth == 0 and r.o_writes == 1
    assert kernel.check_counts(r, kernel.predict_counts(S, S - 1, 1, 1, 0, T, groups=G)) == []
    # the kernel's short ragged tile == a sweep over short tiles, bit for bit
    assert np.array_equal(r.O[:, 0], attention.finalize(_sweep_short(q[:, -1], k, v, T)))
    assert check_attention(bf16_to_f32(r.O[:, 0]), q[:, -1], k, v, None, tile=T, stored_bf16=True) == []


@pytest.mark.parametrize("request_id", [0, 5])
def test_decode_sp_n8_tree(request_id):
    G, d, S, T, N = 8, 64, 203, 8, 8
    q, k, v = _data(1, G, 1, S, d)
    r = kernel.decode(q[:, 0], k, v, n=N, request_id=request_id, tile=T)
    assert r.tree_depth == 3 and r.total("pushes") == 7 and r.o_writes == 1
    pred = kernel.predict_counts(S, S - 1, 1, N, request_id, T, groups=G)
    assert kernel.check_counts(r, pred) == []
    st = placement.start_pe(request_id, N)
    for p, c in enumerate(r.per_block[0]["pe"]):
        assert c["composites"] == -(-placement.valid_len(S, st, p, N) // T)
    # independent composition: per-PE sweeps, then the ADR tree in level order
    states = []
    for p in range(N):
        idx = placement.place(S, request_id, N)[p]
        states.append(_sweep_short(q[:, 0], k[idx], v[idx], T))
    m = attention.merge
    s = states
    root = m(m(m(s[7], s[6]), m(s[5], s[4])), m(m(s[3], s[2]), m(s[1], s[0])))
    assert np.array_equal(r.O[:, 0], attention.finalize(root))
    assert check_attention(bf16_to_f32(r.O[:, 0]), q[:, 0], k, v, None, tile=T, pes=N, stored_bf16=True) == []
    single = kernel.decode(q[:, 0], k, v, n=1, tile=T)
    assert np.max(np.abs(attention.bf16_to_f32(single.O) - attention.bf16_to_f32(r.O))) <= 2.0 ** -7


def test_decode_sp_fewer_tokens_than_pes():
    q, k, v = _data(2, 2, 1, 3, 16)
    r = kernel.decode(q[:, 0], k, v, n=8, request_id=6, tile=4)
    assert sum(c["composites"] for c in r.per_block[0]["pe"]) == 3
    assert check_attention(bf16_to_f32(r.O[:, 0]), q[:, 0], k, v, None, tile=4, pes=8, stored_bf16=True) == []


@pytest.mark.parametrize("n,request_id", [(1, 0), (4, 3)])
def test_prefill_causal_skip_and_masks(n, request_id):
    G, d, S, T, QB = 2, 32, 70, 16, 16
    q, k, v = _data(3, G, S, S, d)
    r = kernel.prefill(q, k, v, q_block=QB, tile=T, n=n, request_id=request_id)
    assert kernel.check_counts(r, kernel.predict_counts(S, 0, S, n, request_id, T, QB, groups=G)) == []
    assert r.o_writes == 5 and len(r.per_block) == 5
    if n == 1:
        nt = -(-S // T)
        for b in r.per_block:
            c = b["pe"][0]
            assert c["tiles_skipped"] == nt - -(-b["qe"] // T)
            assert c["composites"] == -(-b["qe"] // T)
            assert c["masked"] >= 1          # diagonal tile
        # bit-exact: block 2 rows re-done by hand
        qs, qe = 32, 48
        rows = q[:, qs:qe].reshape(G * 16, d)
        mask = np.tile(_causal(np.arange(qs, qe), qe), (G, 1))
        st = _sweep_short(rows, k[:qe], v[:qe], T, mask)
        assert np.array_equal(r.O[:, qs:qe].reshape(G * 16, d), attention.finalize(st))
    assert r.total("tiles_skipped") > 0
    for g in range(G):
        assert check_attention(bf16_to_f32(r.O[g]), q[g], k, v, _causal(np.arange(S), S), tile=T, pes=n,
                                   stored_bf16=True) == []


@pytest.mark.parametrize("n,seq", [(4, 37), (8, 64), (2, 5)])
def test_ring_prefill(n, seq):
    G, d = 2, 16
    q, k, v = _data(4, G, seq, seq, d)
    r = kernel.ring_prefill(q, k, v, n)
    assert r.total("ring_steps") == n * n
    assert r.total("ring_steps_skipped") == placement.predicted_ring_skips(n)
    assert r.total("composites") == n * n - placement.predicted_ring_skips(n)
    assert r.total("pushes") == 0 and r.o_writes == n
    for p, c in enumerate(r.per_block[0]["pe"]):
        assert c["ring_steps_skipped"] == n - 1 - p and c["masked"] == 1
    for g in range(G):
        assert check_attention(bf16_to_f32(r.O[g]), q[g], k, v, _causal(np.arange(seq), seq), tile=seq, pes=n,
                                   stored_bf16=True) == []
    # ring on PE p == sweep over blocks p, p-1, .., 0 with the diagonal masked
    p = n - 1
    qs, qe = placement.ring_block(p, seq, n)
    rows = q[:, qs:qe].reshape(G * (qe - qs), d)
    st = attention.empty_state(rows.shape[0], d)
    for b in range(p, -1, -1):
        ks, ke = placement.ring_block(b, seq, n)
        mask = placement.make_mask_tile(np.arange(ks, ke), qs, qe, G) if b == p else None
        st = attention.attn_tile(rows, k[ks:ke], v[ks:ke], mask, st)
    assert np.array_equal(r.O[:, qs:qe].reshape(rows.shape[0], d), attention.finalize(st))


def test_count_checker_fails_on_wrong_value():
    q, k, v = _data(5, 2, 1, 40, 16)
    r = kernel.decode(q[:, 0], k, v, n=4, request_id=1, tile=4)
    pred = kernel.predict_counts(40, 39, 1, 4, 1, 4, groups=2)
    assert kernel.check_counts(r, pred) == []
    pred[0][2]["k_loads"] += 1
    fails = kernel.check_counts(r, pred)
    assert len(fails) == 1 and "k_loads" in fails[0]
    pred[0][2]["k_loads"] -= 1
    pred[0][1]["scores"] -= 2
    fails = kernel.check_counts(r, pred)
    assert len(fails) == 1 and "scores" in fails[0]
    assert kernel.check_counts(r, pred[:0])


def test_query_beyond_cache_refused():
    q, k, v = _data(6, 1, 2, 4, 8)
    with pytest.raises(ValueError):
        kernel.kv_parallel(q, k, v, q_start=3)


def test_ring_prefill_sub_blocks_and_tiles():
    """Sub-blocks of the query block and tiles of the KV block: same O as the whole-block ring
    within tolerance, per sub-block bit exact with a direct sweep, counts consistent."""
    G, d, n, seq = 2, 16, 4, 50
    q, k, v = _data(9, G, seq, seq, d)
    whole = kernel.ring_prefill(q, k, v, n)
    r = kernel.ring_prefill(q, k, v, n, q_block=4, tile=5)
    assert r.total("ring_steps_skipped") == placement.predicted_ring_skips(n)
    assert r.total("tiles_skipped") > 0 and r.o_writes > n
    for g in range(G):
        assert check_attention(bf16_to_f32(r.O[g]), q[g], k, v, _causal(np.arange(seq), seq), tile=5, pes=n,
                                   stored_bf16=True) == []
    p = 2                                    # PE 2's second sub-block, by hand
    qs, qe = placement.ring_block(p, seq, n)
    bs, be = qs + 4, qs + 8
    rows = q[:, bs:be].reshape(G * 4, d)
    st = attention.empty_state(rows.shape[0], d)
    for s in range(n):
        ks, ke = placement.ring_block(placement.ring_source(p, s, n), seq, n)
        if ks >= qe:
            continue
        for t0 in range(ks, ke, 5):
            pos = np.arange(t0, min(t0 + 5, ke))
            kind = placement.classify(pos, bs, be)
            if kind == "future":
                continue
            mask = placement.make_mask_tile(pos, bs, be, G) if kind == "partial" else None
            st = attention.attn_tile(rows, k[pos[0]:pos[-1] + 1], v[pos[0]:pos[-1] + 1], mask, st)
    assert np.array_equal(r.O[:, bs:be].reshape(G * 4, d), attention.finalize(st))
