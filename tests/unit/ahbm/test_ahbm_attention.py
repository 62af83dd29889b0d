"""AHBM attn_tile / merge / finalize against the float64 reference within the derived bound
(models/ahbm/tolerance.py): a verdict that is the same on every machine (no BLAS anywhere)."""

import numpy as np
import pytest

from models.ahbm import attention
from models.ahbm.tolerance import accumulation_steps, attention_bound, bf16_store_bound, check_attention, check_within, dot_running_bound, gamma, matmul_f64
from models.ahbm.numerics import F32, bf16_to_f32, exp_f32, f32_to_bf16, to_bf16


def _data(seed, rows, seq, d, qscale=1.0):
    rng = np.random.default_rng(seed)
    q = to_bf16(rng.standard_normal((rows, d)) * qscale)
    k = to_bf16(rng.standard_normal((seq, d)))
    v = to_bf16(rng.standard_normal((seq, d)))
    return q, k, v


def _tiled(q, k, v, tile, mask=None):
    st = attention.empty_state(q.shape[0], q.shape[1])
    for j in range(0, k.shape[0], tile):
        mt = None if mask is None else mask[:, j:j + tile]
        st = attention.attn_tile(q, k[j:j + tile], v[j:j + tile], mt, st)
    return st


@pytest.mark.parametrize("seed,rows,seq,d,tile,qscale", [
    (0, 8, 256, 128, 64, 1.0),     # Llama3-70B head: G=8, d=128
    (1, 8, 300, 128, 64, 3.0),     # ragged last tile, peaky softmax
    (2, 4, 37, 16, 5, 1.0),
    (3, 2, 9, 8, 1, 2.0),          # one key per tile
    (4, 3, 64, 32, 64, 1.0),       # single tile
])
def test_tiled_within_derived_bound(seed, rows, seq, d, tile, qscale):
    q, k, v = _data(seed, rows, seq, d, qscale)
    tiled = attention.finalize_f32(_tiled(q, k, v, tile))
    assert check_attention(tiled, q, k, v, None, tile=tile) == []
    stored = bf16_to_f32(attention.f32_to_bf16(tiled))
    assert check_attention(stored, q, k, v, None, tile=tile, stored_bf16=True) == []


def test_causal_mask_and_fully_masked_rows():
    q, k, v = _data(7, 6, 40, 16)
    mask = np.where(np.arange(40)[None, :] <= np.array([0, 5, 13, 20, 39, -1])[:, None],
                    F32(0), F32(-np.inf)).astype(F32)
    st = _tiled(q, k, v, 8, mask)
    assert np.all(np.isfinite(st.l)) and np.all(np.isfinite(st.O))
    assert st.m[5] == -np.inf and st.l[5] == 0 and np.all(st.O[5] == 0)
    tiled = attention.finalize_f32(st)
    assert np.all(tiled[5] == 0)
    assert check_attention(tiled, q, k, v, mask, tile=8) == []


def test_empty_state_first_tile_no_nan_and_masked_tile_is_noop():
    q, k, v = _data(8, 2, 4, 8)
    st0 = attention.empty_state(2, 8)
    full_mask = np.full((2, 4), -np.inf, dtype=F32)
    st1 = attention.attn_tile(q, k, v, full_mask, st0)
    assert np.all(st1.m == -np.inf) and np.all(st1.l == 0) and np.all(st1.O == 0)
    st2 = attention.attn_tile(q, k, v, None, st0)
    st3 = attention.attn_tile(q, k, v, full_mask, st2)  # masked tile leaves a live state alone
    for a, b in ((st2.m, st3.m), (st2.l, st3.l), (st2.O, st3.O)):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def test_attn_tile_step_order_bitexact():
    """One composite re-done from the documented S2..S6 order."""
    q, k, v = _data(9, 3, 6, 8)
    prev = attention.attn_tile(q, k[:3], v[:3], None, attention.empty_state(3, 8))
    got = attention.attn_tile(q, k[3:], v[3:], None, prev)
    qf, kf, vf = bf16_to_f32(q), bf16_to_f32(k[3:]), bf16_to_f32(v[3:])
    scale = F32(1 / np.sqrt(8))
    for i in range(3):
        S = []
        for t in range(3):
            acc = F32(0)
            for c in range(8):
                acc = F32(acc + F32(qf[i, c] * kf[t, c]))
            S.append(F32(acc * scale))
        m_new = max(prev.m[i], max(S))
        P = [exp_f32(F32(s - m_new))[()] for s in S]
        alpha = exp_f32(F32(prev.m[i] - m_new))[()]
        rs = F32(0)
        for p in P:
            rs = F32(rs + p)
        assert got.l[i] == F32(F32(prev.l[i] * alpha) + rs)
        for c in range(8):
            pv = F32(0)
            for t in range(3):
                pv = F32(pv + F32(P[t] * vf[t, c]))
            assert got.O[i, c] == F32(F32(prev.O[i, c] * alpha) + pv)


def test_merge_split_within_rule_commutative_and_associative():
    q, k, v = _data(10, 8, 192, 64)
    parts = [_tiled(q, k[s:s + 64], v[s:s + 64], 16) for s in (0, 64, 128)]
    a, b, c = parts
    ab = attention.merge(a, b)
    ba = attention.merge(b, a)
    for x, y in ((ab.m, ba.m), (ab.l, ba.l), (ab.O, ba.O)):
        assert np.array_equal(x.view(np.uint32), y.view(np.uint32))
    left = attention.finalize_f32(attention.merge(ab, c))
    right = attention.finalize_f32(attention.merge(a, attention.merge(b, c)))
    ref, bound = attention_bound(q, k, v, None, 64, 16, accumulation_steps(192, 16, 3))
    assert check_within(left, ref, bound) == []
    assert check_within(right, ref, bound) == []
    assert check_within(left, right, 2 * bound) == []


def test_merge_identical_split_and_empty_are_exact():
    q, k, v = _data(11, 4, 50, 16)
    a = _tiled(q, k, v, 7)
    aa = attention.merge(a, a)
    assert np.array_equal(aa.m, a.m)
    assert np.array_equal(aa.l, a.l * F32(2)) and np.array_equal(aa.O, a.O * F32(2))
    assert np.array_equal(attention.finalize(aa), attention.finalize(a))
    e = attention.empty_state(4, 16)
    for st in (attention.merge(a, e), attention.merge(e, a)):
        assert np.array_equal(st.m, a.m) and np.array_equal(st.l, a.l)
        assert np.array_equal(st.O, a.O)
    ee = attention.merge(e, e)
    assert np.all(ee.m == -np.inf) and np.all(ee.l == 0) and not np.isnan(ee.O).any()


def test_finalize_casts_rne_and_zero_rows():
    st = attention.State(np.array([0, -np.inf], F32), np.array([3, 0], F32),
                         np.array([[1, 2], [0, 0]], F32))
    out = attention.finalize(st)
    assert out.dtype == np.uint16
    assert out[0, 0] == f32_to_bf16(F32(1) / F32(3)) and out[1, 0] == 0 and out[1, 1] == 0


def test_bound_fails_on_wrong_value():
    """The derived bound bites: one element moved past it, a NaN, a wrong shape, a nonzero output
    of a fully masked row (bound 0), and a bf16 store one step off all fail, each named."""
    q, k, v = _data(12, 8, 128, 128)
    tiled = attention.finalize_f32(_tiled(q, k, v, 32))
    ref, bound = attention_bound(q, k, v, None, 128, 32, accumulation_steps(128, 32))
    assert check_within(tiled, ref, bound) == []
    # the bound means something: the fp32 kernel's worst error reaches a measurable share of it (the
    # derivation's worst cases are far from typical, so a share, not a match)
    assert np.max(np.abs(tiled - ref) / bound) >= 1e-3
    bad = tiled.astype(np.float64)
    bad[3, 17] = ref[3, 17] + 1.01 * bound[3, 17]
    fails = check_within(bad, ref, bound)
    assert len(fails) == 1 and "1 of 1024 elements" in fails[0] and "(3, 17)" in fails[0]
    bad[3, 17] = ref[3, 17] - 0.99 * bound[3, 17]
    assert check_within(bad, ref, bound) == []
    bad = tiled.copy()
    bad[0, 0] = np.nan
    assert check_within(bad, ref, bound) == ["O: non-finite values"]
    assert check_within(tiled[:2], ref, bound)
    masked = np.full((8, 128), F32(-np.inf))
    ref0, bound0 = attention_bound(q, k, v, masked, 128, 32, 4)
    assert np.all(ref0 == 0) and np.all(bound0 == 0)
    assert check_within(np.zeros((8, 128)), ref0, bound0) == []
    assert check_within(np.full((8, 128), 2.0 ** -149), ref0, bound0)
    stored = f32_to_bf16(tiled)
    store_bound = bf16_store_bound(ref, bound)
    assert check_within(bf16_to_f32(stored), ref, store_bound) == []
    stored[2, 5] ^= np.uint16(2)  # two bf16 steps off
    assert len(check_within(bf16_to_f32(stored), ref, store_bound)) == 1


def test_bound_terms_by_hand():
    """gamma, the running dot bound and the store bound on values worked out by hand."""
    assert gamma(1) == 2.0 ** -24 / (1 - 2.0 ** -24)
    dot, run = dot_running_bound(np.array([[1.0, -2.0, 3.0]]), np.array([[1.0, 1.0, 1.0]]))
    assert dot[0, 0] == 2.0 and run[0, 0] == abs(1 - 2) + abs(1 - 2 + 3)
    assert accumulation_steps(300, 64, 1) == 5 + 2
    sb = bf16_store_bound(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
    assert sb[0] == 2.0 ** -8 and sb[1] == 0.0   # half a bf16 ulp of 1.0; an exact zero stays exact


def test_reference_is_fixed_order():
    """matmul_f64 sums k ascending: it equals the explicit loop bit for bit, on any machine."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((5, 70)), rng.standard_normal((70, 6))
    loop = np.zeros((5, 6))
    for i in range(5):
        for j in range(6):
            acc = 0.0
            for kk in range(70):
                acc += a[i, kk] * b[kk, j]
            loop[i, j] = acc
    assert np.array_equal(matmul_f64(a, b), loop)
