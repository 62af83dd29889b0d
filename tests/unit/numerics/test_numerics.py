"""Unit tests of models.numerics: the formats, the layouts, the cluster GEMM's value semantics.

The generic encoder is checked against an independent oracle written here with
exact rational arithmetic (fractions.Fraction and Python's round(), which
rounds halves to even); the cluster's GEMM against float64 within stated ulp
bounds and on its scale and anchor semantics; the L1 bit positions written out
by hand.  Each checker is also shown to catch a wrong value.  Milliseconds
each.  The cluster's accumulator numerics bit for bit (units.md C.7, with its
quirks A1-A3) are tested in test_cluster_numerics.py; the vector core's E8M15
numerics (units.md V.6/V.7) in test_e8m15_*.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from models.numerics import cluster, e8m15, formats, layout
from models.numerics.e8m15_transcendental import vexp2
from models.numerics.formats import ACC, E8M15, FP16, decode, encode
from models.numerics.reference import bit_mismatches, ulp_error, ulp_failures

RNG = np.random.default_rng(7)

# --- an independent oracle: exact values and rounding by Fraction -----------------


def val(bits: int, e_bits: int, m_bits: int, bias: int, subnormals: bool):
    """Exact value of a pattern: Fraction, or 'inf'/'-inf'/'nan' (written apart from the models)."""
    width = 1 + e_bits + m_bits
    s = -1 if (bits >> (width - 1)) & 1 else 1
    e = (bits >> m_bits) & ((1 << e_bits) - 1)
    m = bits & ((1 << m_bits) - 1)
    if e == (1 << e_bits) - 1 and (e_bits, m_bits) != (7, 14):
        return "nan" if m else ("inf" if s > 0 else "-inf")
    if e == 0:
        if not subnormals:
            return Fraction(0)
        return s * Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
    return s * (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def oracle_e8m15(v: Fraction, zero_sign: int = 0) -> int:
    if v == 0:
        return zero_sign << 23
    s = int(v < 0)
    a = abs(v)
    e = floor_log2(a)
    q = round(a / Fraction(2) ** (e - 15))
    if q == 1 << 16:
        q, e = 1 << 15, e + 1
    if e > 127:
        return (s << 23) | 0x7F8000
    if e < -126:
        return s << 23
    return (s << 23) | ((e + 127) << 15) | (q - (1 << 15))


def oracle_fp16_sat(v: Fraction) -> int:
    s = int(v < 0)
    a = abs(v)
    if a == 0:
        return s << 15
    e = max(floor_log2(a), -14)
    q = round(a / Fraction(2) ** (e - 10))
    if q == 1 << 11:
        q, e = 1 << 10, e + 1
    if e > 15:
        return (s << 15) | 0x7BFF
    if q < (1 << 10):
        return (s << 15) | q
    return (s << 15) | ((e + 15) << 10) | (q - (1 << 10))


def finite8(n: int, lo: int = 1, hi: int = 254) -> np.ndarray:
    s = RNG.integers(0, 2, n)
    e = RNG.integers(lo, hi + 1, n)
    return (s << 23) | (e << 15) | RNG.integers(0, 1 << 15, n)


# --- formats -------------------------------------------------------------------

def test_known_patterns():
    assert decode(0x3C00, FP16) == 1.0 and decode(0x7BFF, FP16) == 65504.0
    assert decode(0x0001, FP16) == 2.0 ** -24 and decode(0xFC00, FP16) == -np.inf
    assert decode(0x3F8000, E8M15) == 1.0 and decode(0xBF8000, E8M15) == -1.0
    assert decode(0x008000, E8M15) == 2.0 ** -126 and decode(0x000123, E8M15) == 0.0
    assert decode(0x0FC000, ACC) == 1.0 and decode(0x1FFFFF, ACC) == 2.0 ** 64 * (2 - 2.0 ** -14)
    assert decode(0x200000, ACC) == 0.0  # no negative zero in the accumulator
    assert formats.e5m3_decode(0xA0) == 1.0 and formats.e5m3_decode(0xFF) == 2.0 ** 11 * 1.875
    assert formats.e5m3_decode(0x00) == 2.0 ** -20 and formats.e5m3_decode(0xA4) == 1.5
    assert int(formats.e5m3_encode(1.0)) == 0xA0 and int(formats.e5m3_encode(3.0)) == 0xAC
    assert int(formats.e5m3_encode(1e9)) == 0xFF and int(formats.e5m3_encode(1e-9)) == 0x00
    assert (e8m15.K0, e8m15.K1, e8m15.K2) == (0, 0x3F8000, 0xBF8000)


def test_a_narrow_format_decodes_by_its_table_as_by_its_fields():
    """decode's table (FP16: every pattern, made once) against the field arithmetic on all 2^16 patterns:
    the same value, the same sign of zero, NaN where it is NaN; bits above the width ignored as the fields
    ignore them; a scalar pattern gives a scalar."""
    bits = np.arange(1 << 16, dtype=np.int64)
    ref, fast = formats.decode_fields(bits, FP16), decode(bits, FP16)
    same = ((ref == fast) & (np.signbit(ref) == np.signbit(fast))) | (np.isnan(ref) & np.isnan(fast))
    assert np.all(same), bits[~same][:5]
    high = bits[::97] | (0x5A << 16)
    assert np.array_equal(decode(high, FP16), formats.decode_fields(high, FP16), equal_nan=True)
    assert np.ndim(decode(0x3C00, FP16)) == 0 and decode(0x8000, FP16) == 0.0 and np.signbit(decode(0x8000, FP16))


def test_encode_matches_oracle():
    x = np.concatenate([RNG.normal(0, 1, 2000) * 2.0 ** RNG.integers(-140, 140, 2000),
                        [65504, 65519.99, 65520, 2.0 ** -25, 2.0 ** -25 * 1.0001, 3 * 2.0 ** -26]])
    got8 = encode(x, E8M15)
    got16 = encode(x, FP16, overflow="saturate")
    for xi, g8, g16 in zip(x, got8, got16):
        f = Fraction(float(xi))
        assert int(g8) == oracle_e8m15(f, int(np.signbit(xi))), xi
        assert int(g16) == oracle_fp16_sat(f), xi
    assert int(encode(np.inf, FP16)) == 0x7C00 and int(encode(np.inf, FP16, "saturate")) == 0x7BFF
    assert int(encode(np.nan, E8M15)) == 0x7FC000


# (the vector core's E8M15 arithmetic and its FP16/FP32 conversions: tests/unit/test_e8m15_*.py)


# --- cluster GEMM --------------------------------------------------------------

def _gemm_case(n, anchor_mu=40):
    a = RNG.integers(-64, 64, (n, 4, 32))
    b = RNG.integers(-64, 64, (n, 32, 4))
    sa = RNG.integers(0, 256, (n, 4))
    sb = RNG.integers(0, 256, (n, 4))
    anchor = np.clip(RNG.normal(anchor_mu, 12, n).astype(int), 0, 255)
    return a, b, sa, sb, anchor


def test_gemm_exact_integer_dot():
    a = RNG.integers(-64, 64, (50, 4, 32))
    b = RNG.integers(-8, 8, (50, 32, 4))
    ones = np.full((50, 4), 0xA0)
    out = cluster.gemm_product(a, b, ones, ones, 40)
    dot = np.matmul(a, b)
    assert np.all(np.abs(dot) < 2 ** 15)
    assert np.array_equal(decode(out, ACC), dot.astype(float))
    # a bigger dot product is rounded once to 15 bits
    big = cluster.gemm_product(np.full((4, 32), -64), np.full((32, 4), -64), ones[0], ones[0], 40)
    assert np.all(decode(big, ACC) == 131072.0)


def test_gemm_scales_and_anchor():
    a = RNG.integers(-64, 64, (4, 32))
    b = RNG.integers(-64, 64, (32, 4))
    one = np.full(4, 0xA0)
    base = decode(cluster.gemm_product(a, b, one, one, 40), ACC)
    sa = np.array([0xA0, 0xA8, 0x98, 0xA4])  # 1, 2, 0.5, 1.5 per row
    sb = np.array([0xA4, 0xA0, 0xA0, 0xB0])  # 1.5, 1, 1, 4 per column
    scaled = decode(cluster.gemm_product(a, b, sa, sb, 40), ACC)
    want = decode(encode(base * formats.e5m3_decode(sa)[:, None] * formats.e5m3_decode(sb)[None, :], ACC), ACC)
    assert np.array_equal(scaled, want)
    assert np.array_equal(decode(cluster.gemm_product(a, b, one, one, 43), ACC), base / 8)
    assert np.array_equal(decode(cluster.gemm_product(a, b, one, one, 30), ACC), base * 1024)


def test_gemm_accumulates_k_blocks_within_tolerance():
    n = 8  # K = 256: eight LOAD/ADD steps
    a = RNG.integers(-64, 64, (n, 4, 32))
    b = RNG.integers(-64, 64, (n, 32, 4))
    one = np.full(4, 0xA0)
    acc = None
    for k in range(n):
        acc = cluster.gemm_step(a[k], b[k], one, one, 40, acc, accumulate=k > 0)
    ref = sum(cluster.gemm_reference(a[k], b[k], one, one, 40) for k in range(n))
    # each of the 2n-1 roundings costs at most half an ulp of the final magnitude's binade
    assert not ulp_failures(acc, ACC, ref, max_ulps=n)


# --- L1 layouts, written out by hand ---------------------------------------------

def _field(value: int, top: int, width: int) -> int:
    return (value >> (top - width + 1)) & ((1 << width) - 1)


def test_a_entry_bit_positions():
    a = RNG.integers(-64, 64, (4, 32))
    sa = RNG.integers(0, 256, 4)
    g = layout.pack_a_entry(a, sa)
    for w in range(4):
        for i in range(4):
            for k in range(8):
                assert _field(int(g[w]), 255 - (8 * i + k) * 7, 7) == int(a[i, 8 * w + k]) & 0x7F
    for i in range(4):
        assert _field(int(g[0]), 31 - 8 * i, 8) == sa[i]
    assert all(int(g[w]) & 0xFFFFFFFF == 0 for w in (1, 2, 3))
    a2, s2 = layout.unpack_a_entry(g)
    assert np.array_equal(a2, a) and np.array_equal(s2, sa)
    whole = layout.entry_to_int(g)
    assert layout.int_to_entry(whole) == [int(v) for v in g] and (whole >> 768) == int(g[3])


def test_b_entry_bit_positions():
    b = RNG.integers(-64, 64, (32, 4))
    sb = RNG.integers(0, 256, 4)
    g = layout.pack_b_entry(b, sb)
    for w in range(4):
        for k in range(8):
            for j in range(4):
                assert _field(int(g[w]), 255 - (4 * k + j) * 7, 7) == int(b[8 * w + k, j]) & 0x7F
    for j in range(4):
        assert _field(int(g[0]), 31 - 8 * j, 8) == sb[j]
    b2, s2 = layout.unpack_b_entry(g)
    assert np.array_equal(b2, b) and np.array_equal(s2, sb)
    batch = layout.pack_b_entry(np.stack([b, b[::-1]]), np.stack([sb, sb]))
    assert batch.shape == (2, 4) and list(batch[0]) == list(g)
    with pytest.raises(ValueError):
        layout.pack_b_entry(np.full((32, 4), 64), sb)


def test_granule_and_word_layouts():
    tile = RNG.integers(0, 1 << 16, (4, 4))
    g = layout.pack_fp16_subtile(tile)
    for r in range(4):
        for c in range(4):
            assert (g >> ((4 * r + c) * 16)) & 0xFFFF == tile[r, c]
    assert np.array_equal(layout.unpack_fp16_subtile(g), tile)
    tiles = RNG.integers(0, 1 << 16, (9, 4, 4))  # the stacked packer: each granule by the bit positions above
    assert layout.pack_fp16_subtiles(tiles) == [sum(int(t[r, c]) << ((4 * r + c) * 16) for r in range(4)
                                                    for c in range(4)) for t in tiles]
    lanes = RNG.integers(0, 1 << 32, 8)
    w = layout.pack_fp32_lanes(lanes)
    assert (w >> 96) & 0xFFFFFFFF == lanes[3] and np.array_equal(layout.unpack_fp32_lanes(w), lanes)
    h = RNG.integers(0, 1 << 16, 16)
    assert np.array_equal(layout.unpack_fp16_lanes(layout.pack_fp16_lanes(h)), h)
    acc = RNG.integers(0, 1 << 22, (4, 4))
    p = layout.pack_acc_tile(acc)
    assert (p >> (6 * 22)) & 0x3FFFFF == acc[1, 2] and np.array_equal(layout.unpack_acc_tile(p), acc)
    em = cluster.emit_granule(acc)
    assert (em >> (16 * 6)) & 0xFFFF == int(cluster.acc_emit(acc[1, 2]))


def test_gemm_entry_from_granules():
    a, b, sa, sb, anchor = _gemm_case(1)
    ga, gb = layout.pack_a_entry(a[0], sa[0]), layout.pack_b_entry(b[0], sb[0])
    acc = RNG.integers(0, 1 << 22, (4, 4))
    assert np.array_equal(cluster.gemm_entry(ga, gb, int(anchor[0]), acc, True),
                          cluster.gemm_step(a[0], b[0], sa[0], sb[0], int(anchor[0]), acc, True))
    with pytest.raises(ValueError):
        cluster.gemm_step(a[0], b[0], sa[0], sb[0], 256)


# --- every checker catches a wrong value -----------------------------------------

def test_bit_mismatches_catches_wrong_value():
    exp = vexp2(finite8(100))
    assert bit_mismatches(exp, exp) == []
    wrong = exp.copy()
    wrong[42] ^= 1
    msgs = bit_mismatches(exp, wrong, what="exp2")
    assert len(msgs) == 1 and "vector 42" in msgs[0]
    assert bit_mismatches(exp, wrong[:50])  # a missing result


def test_ulp_failures_catches_wrong_value():
    ref = RNG.normal(0, 1, 200) * 2.0 ** RNG.integers(-100, 100, 200)
    good = encode(ref, E8M15).astype(np.int64)  # correctly rounded: within half an ulp
    assert not ulp_failures(good, E8M15, ref, 0.5)
    bad = good.copy()
    bad[3] += 2  # two ulps off
    msgs = ulp_failures(bad, E8M15, ref, 0.5, inputs=np.arange(200) + 0x1000)
    assert len(msgs) == 1 and "input 0x1003" in msgs[0]
    assert ulp_error(e8m15.QNAN, E8M15, 1.0) == np.inf  # NaN for a number is caught
    assert ulp_error(e8m15.POS_INF, E8M15, 1e38) == np.inf
