"""Unit tests of models.numerics: the golden models themselves, without RTL.

The bit-exact models are checked against an independent oracle written here
with exact rational arithmetic (fractions.Fraction and Python's round(), which
rounds halves to even), against float64 within stated ulp bounds, on the
special cases of docs/numerics.md, and on the L1 bit positions written out by
hand.  Each checker is also shown to catch a wrong value.  Milliseconds each.
"""

from __future__ import annotations

import time
from decimal import ROUND_HALF_EVEN, Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from models.numerics import cluster, e8m15, formats, layout
from models.numerics.formats import ACC, E8M15, FP16, FP32, decode, encode
from models.numerics.reference import bit_mismatches, exp2_ref, inv_ref, ulp_error, ulp_failures

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


def v8(bits):
    return val(int(bits), 8, 15, 127, False)


def vacc(bits):
    return val(int(bits), 7, 14, 63, False)


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


def oracle_acc(v: Fraction) -> int:
    if v == 0:
        return 0
    s = int(v < 0)
    a = abs(v)
    e = floor_log2(a)
    q = round(a / Fraction(2) ** (e - 14))
    if q == 1 << 15:
        q, e = 1 << 14, e + 1
    if e > 64:
        return (s << 21) | 0x1FFFFF
    if e < -62:
        return 0
    return (s << 21) | ((e + 63) << 14) | (q - (1 << 14))


def finite8(n: int, lo: int = 1, hi: int = 254) -> np.ndarray:
    s = RNG.integers(0, 2, n)
    e = RNG.integers(lo, hi + 1, n)
    return (s << 23) | (e << 15) | RNG.integers(0, 1 << 15, n)


def oracle_mismatches(model_out, oracle_out, inputs) -> list[str]:
    return [f"{inp}: model {int(m):#x} oracle {o:#x}"
            for m, o, inp in zip(model_out, oracle_out, inputs) if int(m) != o]


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


def test_fp16_load_exact_and_round_trip():
    h = np.arange(65536)
    x = formats.fp16_to_e8m15(h)
    hv, xv = decode(h, FP16), decode(x, E8M15)
    assert np.array_equal(np.isnan(hv), np.isnan(xv))
    fin = ~np.isnan(hv)
    assert np.array_equal(hv[fin], xv[fin]) and np.array_equal(np.signbit(hv[fin]), np.signbit(xv[fin]))
    assert np.all(x[np.isnan(hv)] == e8m15.QNAN)
    back = formats.e8m15_to_fp16(x).astype(np.int64)
    finite = ((h >> 10) & 0x1F) != 0x1F
    assert np.array_equal(back[finite], h[finite])


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


def test_store_saturates_and_rounds():
    store = formats.e8m15_to_fp16
    assert int(store(encode(65504.0, E8M15))) == 0x7BFF
    assert int(store(encode(65519.0, E8M15))) == 0x7BFF  # rounds down to 65504
    assert int(store(encode(65520.0, E8M15))) == 0x7BFF  # would round to Inf: saturates
    assert int(store(encode(-1e30, E8M15))) == 0xFBFF
    assert int(store(e8m15.POS_INF)) == 0x7BFF and int(store(e8m15.NEG_INF)) == 0xFBFF
    assert int(store(e8m15.QNAN)) == 0x7E00
    assert int(store(encode(2.0 ** -25, E8M15))) == 0x0000  # tie to even: zero
    assert int(store(encode(-(2.0 ** -25) * 1.5, E8M15))) == 0x8001
    assert int(store(encode(-1e-30, E8M15))) == 0x8000  # signed zero
    x = int(formats.fp16_to_e8m15(0xF8BB))
    assert int(store(e8m15.vadd(x, x))) == 0xFBFF  # the protocol's known case


def test_store_matches_oracle():
    x = np.concatenate([finite8(3000, 95, 160), finite8(500)])
    exp = [oracle_fp16_sat(v8(b)) for b in x]
    assert not oracle_mismatches(formats.e8m15_to_fp16(x), exp, x)


def test_fp32_conversions_match_oracle():
    f = np.concatenate([RNG.integers(0, 1 << 32, 3000), [0x007FFFFF, 0x00000001, 0x7F7FFFFF, 0x3F800080,
                                                         0x3F800180, 0x807FFF80]])
    f = f[((f >> 23) & 0xFF) != 0xFF]
    got = formats.fp32_to_e8m15(f)
    exp = [oracle_e8m15(val(int(b), 8, 23, 127, True), int(b) >> 31) for b in f]
    assert not oracle_mismatches(got, exp, f)
    assert int(formats.fp32_to_e8m15(0x007FFFFF)) == 0x008000  # subnormal rounding up to 2^-126
    assert int(formats.fp32_to_e8m15(0x7F7FFFFF)) == 0x7F8000  # rounds past the top: Inf
    x = finite8(2000)
    assert np.array_equal(decode(formats.e8m15_to_fp32(x), FP32), decode(x, E8M15))  # exact
    assert int(formats.e8m15_to_fp32(0x7F8005)) == 0x7FC00000


# --- E8M15 arithmetic against the oracle ---------------------------------------

def _binary_inputs(n):
    a = finite8(n)
    c = np.where(RNG.random(n) < 0.5, finite8(n),
                 (a ^ (1 << 23)) & ~0x7F | RNG.integers(0, 128, n))  # near-cancellation
    e = np.clip(((a >> 15) & 0xFF) + RNG.integers(-20, 21, n), 1, 254)
    c = (c & ~(0xFF << 15)) | (e << 15)
    return a, c


def test_add_sub_match_oracle():
    a, c = _binary_inputs(2000)
    a = np.concatenate([a, [0x3F8000, 0x800000, 0x800000, 0x008001]])
    c = np.concatenate([c, [0xBF8000, 0x800000, 0x000000, 0x808000]])
    add, sub = e8m15.vadd(a, c), e8m15.vsub(a, c)
    exp_add, exp_sub = [], []
    for x, y in zip(a, c):
        va, vc = v8(x), v8(y)
        za, zc = int(x) >> 23, int(y) >> 23
        exp_add.append(oracle_e8m15(va + vc, za & zc if va == 0 and vc == 0 else 0))
        exp_sub.append(oracle_e8m15(va - vc, za & (zc ^ 1) if va == 0 and vc == 0 else 0))
    assert not oracle_mismatches(add, exp_add, zip(a, c))
    assert not oracle_mismatches(sub, exp_sub, zip(a, c))


def test_mul_fma_fnma_match_oracle():
    n = 1500
    a, b = finite8(n, 64, 190), finite8(n, 64, 190)
    pe = np.clip(((a >> 15) & 0xFF) + ((b >> 15) & 0xFF) - 127, 1, 254)
    c = finite8(n)
    c = (c & ~(0xFF << 15)) | (np.clip(pe + RNG.integers(-30, 31, n), 1, 254) << 15)
    a = np.concatenate([a, finite8(300), [0x3F8000, 0x000000]])
    b = np.concatenate([b, finite8(300), [0x3F8000, 0x3F8000]])
    c = np.concatenate([c, finite8(300), [0xBF8000, 0x800000]])
    mul, fma, fnma = e8m15.vmul(a, b), e8m15.vfma(a, b, c), e8m15.vfnma(a, b, c)
    for i, (x, y, z) in enumerate(zip(a, b, c)):
        p = v8(x) * v8(y)
        sp = (int(x) ^ int(y)) >> 23
        sc = int(z) >> 23
        assert int(mul[i]) == oracle_e8m15(p, sp), (x, y)
        zs = sp & sc if p == 0 and v8(z) == 0 else 0
        assert int(fma[i]) == oracle_e8m15(p + v8(z), zs), (x, y, z)
        zs = (sp ^ 1) & sc if p == 0 and v8(z) == 0 else 0
        assert int(fnma[i]) == oracle_e8m15(v8(z) - p, zs), (x, y, z)


def test_fma_is_fused():
    # (1 + 2^-15)(1 - 2^-15) - 1 = -2^-30 exactly; a separate multiply would round the product to 1
    a, b, c = 0x3F8001, int(encode(1 - 2.0 ** -15, E8M15)), 0xBF8000
    assert decode(e8m15.vfma(a, b, c), E8M15) == -(2.0 ** -30)
    assert decode(e8m15.vadd(e8m15.vmul(a, b), c), E8M15) == 0.0


def test_special_cases():
    P0, N0, ONE, INF, NINF, NAN = 0x000000, 0x800000, 0x3F8000, 0x7F8000, 0xFF8000, 0x7FC000
    Q = e8m15.QNAN
    add, sub, mul, fma = e8m15.vadd, e8m15.vsub, e8m15.vmul, e8m15.vfma
    assert int(add(P0, N0)) == P0 and int(add(N0, N0)) == N0 and int(sub(N0, P0)) == N0
    assert int(sub(ONE, ONE)) == P0 and int(add(0xBF8000, ONE)) == P0  # exact cancellation: +0
    assert int(mul(N0, ONE)) == N0 and int(mul(N0, N0)) == P0 and int(mul(0x000555, 0xBF8000)) == N0
    assert int(mul(0x008000, 0x3F0000)) == P0 and int(mul(0x808000, 0x3F0000)) == N0  # flush keeps sign
    assert int(mul(0x7F0000, 0x400000)) == INF and int(mul(0xFF0000, 0x400000)) == NINF  # overflow
    assert int(add(INF, NINF)) == Q and int(mul(INF, P0)) == Q and int(fma(INF, P0, ONE)) == Q
    assert int(fma(INF, ONE, NINF)) == Q and int(fma(ONE, ONE, INF)) == INF and int(fma(INF, ONE, ONE)) == INF
    assert int(add(NAN, INF)) == Q and int(add(0x7F8001, ONE)) == Q and int(mul(0xFFFFFF, P0)) == Q
    assert int(fma(P0, ONE, N0)) == P0 and int(fma(N0, ONE, N0)) == N0 and int(e8m15.vfnma(P0, ONE, N0)) == N0
    # bit-level ops
    assert int(e8m15.vneg(0x7F8001)) == 0xFF8001 and int(e8m15.vabs(0x800000)) == 0
    assert int(e8m15.vmov(0x000123)) == 0x000123
    # min / max
    assert int(e8m15.vmax(P0, N0)) == P0 and int(e8m15.vmin(P0, N0)) == N0
    assert int(e8m15.vmax(0x000123, 0x800456)) == P0 and int(e8m15.vmin(0x000123, 0x800456)) == N0
    assert int(e8m15.vmax(NAN, ONE)) == Q and int(e8m15.vmin(ONE, 0xFFFFFF)) == Q
    assert int(e8m15.vmax(NINF, 0xFF7FFF)) == 0xFF7FFF and int(e8m15.vmin(INF, 0x7F7FFF)) == 0x7F7FFF
    assert int(e8m15.vmax(0xBF8000, 0xC00000)) == 0xBF8000
    # exp2 and inv
    exp2, inv = e8m15.vexp2, e8m15.vinv
    assert int(exp2(P0)) == ONE and int(exp2(N0)) == ONE and int(exp2(INF)) == INF and int(exp2(NINF)) == P0
    assert int(exp2(NAN)) == Q and int(exp2(int(encode(128.0, E8M15)))) == INF
    assert int(exp2(int(encode(127.99, E8M15)))) != INF and int(exp2(int(encode(-1000.0, E8M15)))) == P0
    assert int(exp2(int(encode(-126.0, E8M15)))) == 0x008000 and int(exp2(int(encode(-127.0, E8M15)))) == P0
    for k in range(-126, 128):
        assert decode(exp2(encode(float(k), E8M15)), E8M15) == 2.0 ** k  # integers are exact
    assert int(inv(P0)) == INF and int(inv(N0)) == NINF and int(inv(INF)) == P0 and int(inv(NINF)) == N0
    assert int(inv(NAN)) == Q and int(inv(0x008000)) == int(encode(2.0 ** 126, E8M15))
    assert int(inv(0x7F0001)) == P0 and int(inv(0xFF0001)) == N0  # flushed
    assert int(inv(0x7E8000)) == 0x008000  # 1/2^126 = 2^-126 exactly


def test_inv_is_correctly_rounded():
    x = np.concatenate([(127 << 15) | np.arange(1 << 15), [(1 << 23) | (3 << 15) | 12345]])
    got = e8m15.vinv(x)
    sample = list(range(0, 1 << 15, 61)) + [1 << 15]
    exp = [oracle_e8m15(1 / v8(x[i])) for i in sample]
    assert not oracle_mismatches(got[sample], exp, x[sample])
    err = ulp_error(got, E8M15, inv_ref(decode(x, E8M15)))
    assert err.max() <= 0.5


def test_exp2_accuracy_float64():
    x = np.concatenate([finite8(20000, 100, 134), formats.fp16_to_e8m15(np.arange(0, 65536, 3))])
    xv = decode(x, E8M15)
    keep = np.isfinite(xv) & (xv > -126) & (xv < 128)
    err = ulp_error(e8m15.vexp2(x[keep]), E8M15, exp2_ref(xv[keep]))
    assert err.max() <= 0.5003  # documented bound (full sweep: 0.5002)


def test_exp2_table_and_constants():
    getcontext().prec = 50
    ln2 = Decimal(2).ln()
    scale = Decimal(2) ** e8m15.EXP2_Q

    def q(d):
        return int((d * scale).to_integral_value(ROUND_HALF_EVEN))

    assert list(e8m15.EXP2_TABLE) == [q((Decimal(i) / 64 * ln2).exp()) for i in range(64)]
    assert (e8m15.EXP2_C1, e8m15.EXP2_C2, e8m15.EXP2_C3) == (q(ln2), q(ln2 ** 2 / 2), q(ln2 ** 3 / 6))
    log2e = Fraction(Decimal(1) / ln2)
    assert e8m15.NEG_LOG2E == oracle_e8m15(-log2e) == 0xBFB8AA


def test_silu_accuracy_and_sequence():
    h = np.arange(65536)
    h = h[((h >> 10) & 0x1F) != 0x1F]
    out = e8m15.silu_fp16(h)
    err = ulp_error(out, FP16, e8m15.silu_ref(decode(h, FP16)))
    assert err.max() <= 0.75  # documented: 0.7484 FP16 ulp over every finite FP16 input
    # the five instructions, spelled out
    x = formats.fp16_to_e8m15(h[:500])
    t = e8m15.vmul(x, 0xBFB8AA)
    r = e8m15.vinv(e8m15.vadd(e8m15.vexp2(t), e8m15.K1))
    assert np.array_equal(e8m15.silu_e8m15(x), e8m15.vmul(r, x))
    assert int(e8m15.silu_fp16(0x7BFF)) == 0x7BFF and int(e8m15.silu_fp16(0xFBFF)) == 0x8000
    assert int(e8m15.silu_fp16(0x0000)) == 0x0000


def test_tile_speed():
    a, b, c = finite8(1024), finite8(1024), finite8(1024)
    ops = (lambda: e8m15.vfma(a, b, c), lambda: e8m15.vexp2(a), lambda: e8m15.vinv(a),
           lambda: e8m15.silu_e8m15(a), lambda: formats.e8m15_to_fp16(a))
    for op in ops:
        op()
        t = time.perf_counter()
        op()
        assert time.perf_counter() - t < 0.25  # a 64x16-lane tile: about a millisecond here


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


def test_gemm_matches_oracle():
    a, b, sa, sb, anchor = _gemm_case(60)
    anchor[:3] = [0, 255, 100]
    acc = RNG.integers(0, 1 << 22, (60, 4, 4))
    for t in range(60):
        load = cluster.gemm_step(a[t], b[t], sa[t], sb[t], int(anchor[t]))
        add = cluster.gemm_step(a[t], b[t], sa[t], sb[t], int(anchor[t]), acc[t], True)
        for i in range(4):
            for j in range(4):
                ea, ma = int(sa[t, i]) >> 3, int(sa[t, i]) & 7
                eb, mb = int(sb[t, j]) >> 3, int(sb[t, j]) & 7
                exact = (int(np.dot(a[t, i], b[t, :, j])) * Fraction(8 + ma, 8) * Fraction(8 + mb, 8)
                         * Fraction(2) ** (ea + eb - int(anchor[t])))
                p = oracle_acc(exact)
                assert int(load[i, j]) == p
                assert int(add[i, j]) == oracle_acc(vacc(acc[t, i, j]) + vacc(p))


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


def test_acc_add_and_emit_match_oracle():
    x = RNG.integers(0, 1 << 22, 3000)
    e = np.clip(((x >> 14) & 0x7F) + RNG.integers(-16, 17, 3000), 0, 127)
    y = np.where(RNG.random(3000) < 0.5, x ^ (1 << 21), RNG.integers(0, 1 << 22, 3000))
    y = (y & ~(0x7F << 14)) | (e << 14)
    got = cluster.acc_add(x, y)
    assert not oracle_mismatches(got, [oracle_acc(vacc(p) + vacc(q)) for p, q in zip(x, y)], zip(x, y))
    assert int(cluster.acc_add(0x1FFFFF, 0x1FFFFF)) == 0x1FFFFF  # saturates
    assert int(cluster.acc_add(0x0FC000, 0x2FC000)) == 0  # 1 - 1 = +0
    em = formats.acc_to_fp16(x)
    assert not oracle_mismatches(em, [oracle_fp16_sat(vacc(p)) for p in x], x)
    assert int(formats.acc_to_fp16(0x1FFFFF)) == 0x7BFF and int(formats.acc_to_fp16(0x3FFFFF)) == 0xFBFF
    assert int(formats.acc_to_fp16(0x200000)) == 0x0000


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
    lanes = RNG.integers(0, 1 << 32, 8)
    w = layout.pack_fp32_lanes(lanes)
    assert (w >> 96) & 0xFFFFFFFF == lanes[3] and np.array_equal(layout.unpack_fp32_lanes(w), lanes)
    h = RNG.integers(0, 1 << 16, 16)
    assert np.array_equal(layout.unpack_fp16_lanes(layout.pack_fp16_lanes(h)), h)
    acc = RNG.integers(0, 1 << 22, (4, 4))
    p = layout.pack_acc_tile(acc)
    assert (p >> (6 * 22)) & 0x3FFFFF == acc[1, 2] and np.array_equal(layout.unpack_acc_tile(p), acc)
    em = cluster.emit_granule(acc)
    assert (em >> (16 * 6)) & 0xFFFF == int(formats.acc_to_fp16(acc[1, 2]))


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
    exp = e8m15.vexp2(finite8(100))
    assert bit_mismatches(exp, exp) == []
    wrong = exp.copy()
    wrong[42] ^= 1
    msgs = bit_mismatches(exp, wrong, what="exp2")
    assert len(msgs) == 1 and "vector 42" in msgs[0]
    assert bit_mismatches(exp, wrong[:50])  # a missing result


def test_ulp_failures_catches_wrong_value():
    x = finite8(200, 100, 134)
    ref = exp2_ref(decode(x, E8M15))
    good = e8m15.vexp2(x)
    fin = (ref < 2.0 ** 128) & (ref > 2.0 ** -126)
    assert not ulp_failures(good[fin], E8M15, ref[fin], 0.5003)
    bad = good.copy()
    idx = np.flatnonzero(fin)[3]
    bad[idx] += 2  # two ulps off
    msgs = ulp_failures(bad[fin], E8M15, ref[fin], 0.5003, inputs=x[fin])
    assert len(msgs) == 1 and f"{int(x[idx]):#x}" in msgs[0]
    assert ulp_error(e8m15.QNAN, E8M15, 1.0) == np.inf  # NaN for a number is caught
    assert ulp_error(e8m15.POS_INF, E8M15, 1e38) == np.inf


def test_oracle_comparison_catches_wrong_value():
    a, c = _binary_inputs(50)
    got = e8m15.vadd(a, c).astype(np.int64)
    exp = [oracle_e8m15(v8(x) + v8(y)) for x, y in zip(a, c)]
    assert not oracle_mismatches(got, exp, zip(a, c))
    wrong = got.copy()
    wrong[7] = wrong[7] ^ 1
    assert len(oracle_mismatches(wrong, exp, zip(a, c))) == 1
