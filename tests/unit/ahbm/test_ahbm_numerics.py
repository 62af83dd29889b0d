"""AHBM numerics: bf16 casts, the defined exp (bit-exact vs its step list,
accuracy vs float64), ordered fp32 dot products."""

from fractions import Fraction

import numpy as np
import pytest

from models.ahbm import numerics

# ------------------------------------------------------------ independent fp32 rounding


def _round_f32(q: Fraction) -> Fraction:
    """Exact rational -> nearest binary32 value (ties to even), integer math."""
    if q == 0:
        return Fraction(0)
    s = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, -126)
    scaled = a / Fraction(2) ** (e - 23)
    m = scaled.numerator // scaled.denominator
    rem = scaled - m
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m % 2):
        m += 1
    val = Fraction(m) * Fraction(2) ** (e - 23)
    assert val < Fraction(2) ** 128, "overflow not expected here"
    return s * val


def _fr(x) -> Fraction:
    return Fraction(float(x))


def _exp_steps(x: float) -> int:
    """The documented exp_f32 step list, re-done with exact rationals and an
    independent rounding to binary32.  Returns the result bit pattern."""
    xf = _fr(np.float32(x))
    if xf > _fr(numerics.EXP_X_MAX):
        return 0x7F800000
    if xf < _fr(numerics.EXP_X_MIN):
        return 0
    t = _round_f32(xf * _fr(numerics.LOG2E))                     # E1
    fl = t.numerator // t.denominator                            # E2 rint, half even
    frac = t - fl
    n = fl + (1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2) else 0)
    nf = Fraction(n)                                             # E3
    r1 = _round_f32(xf - _round_f32(nf * _fr(numerics.LN2_HI)))  # E4
    r = _round_f32(r1 - _round_f32(nf * _fr(numerics.LN2_LO)))   # E5
    p = _fr(numerics.EXP_COEFFS[7])                              # E6
    for k in range(6, -1, -1):
        p = _round_f32(_round_f32(p * r) + _fr(numerics.EXP_COEFFS[k]))
    pb = int(numerics.f32_to_bits(np.float32(float(p)))[()])     # E7
    E = ((pb >> 23) & 0xFF) + n
    if E <= 0:
        return 0
    if E >= 255:
        return 0x7F800000
    return pb + (n << 23)


def test_exp_bit_exact_against_step_list():
    rng = np.random.default_rng(11)
    xs = np.concatenate([
        rng.uniform(-90, 90, 600), rng.uniform(-1, 1, 300), rng.uniform(-20, 0, 300),
        np.array([0.0, -0.0, 1.0, -1.0, 0.5 * np.log(2), -0.5 * np.log(2), 88.0, 88.7,
                  -87.0, -87.9, -88.0, 1e-8, -1e-30, 3.0e-39]),
    ]).astype(np.float32)
    got = numerics.f32_to_bits(numerics.exp_f32(xs))
    want = np.array([_exp_steps(x) for x in xs], dtype=np.uint32)
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, [(float(xs[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_exp_specials():
    x = np.array([np.nan, np.inf, -np.inf, 89.0, -89.0, 0.0, -0.0], dtype=np.float32)
    y = numerics.exp_f32(x)
    assert numerics.f32_to_bits(y[0]) == 0x7FC00000
    assert y[1] == np.inf and y[3] == np.inf
    assert numerics.f32_to_bits(y[2]) == 0 and numerics.f32_to_bits(y[4]) == 0
    assert y[5] == 1.0 and y[6] == 1.0
    assert numerics.exp_f32(np.float32(-3.0)).shape == ()


def test_exp_accuracy_vs_float64():
    """Dense sweep over the normal-result range; max error <= 1.5 fp32 ulps
    (measured 1.21 ulp).  Flushed results (true value < 2^-126) are 0."""
    x = np.linspace(-88.0, 88.7, 1_000_003).astype(np.float32)
    x = np.concatenate([x, (np.random.default_rng(3).uniform(-1, 1, 200_000)).astype(np.float32)])
    y = numerics.exp_f32(x).astype(np.float64)
    r = np.exp(x.astype(np.float64))
    normal = r >= 2.0 ** -126
    ulps = np.abs(y - r)[normal] / numerics.ulp_f32(r[normal])
    print(f"exp_f32 max error {ulps.max():.3f} ulp, mean {ulps.mean():.3f} ulp")
    assert ulps.max() <= 1.5
    assert np.all(y[~normal] == 0.0)
    assert np.all(np.diff(numerics.exp_f32(np.linspace(-30, 0, 100_001).astype(np.float32))) >= 0)


def test_bf16_cast_edge_cases():
    cases = {
        0x3F800000: 0x3F80,  # 1.0
        0x3F808000: 0x3F80,  # exact tie, even stays
        0x3F818000: 0x3F82,  # exact tie, odd rounds up
        0x3F808001: 0x3F81,  # just above tie
        0x3F807FFF: 0x3F80,  # just below tie
        0x80000000: 0x8000,  # -0
        0x7F800000: 0x7F80,  # +inf
        0xFF800000: 0xFF80,  # -inf
        0x7F7FFFFF: 0x7F80,  # max fp32 rounds to +inf
        0x7F7F7FFF: 0x7F7F,  # stays finite (max bf16)
        0xFF7FFFFF: 0xFF80,  # -max -> -inf
        0x00000001: 0x0000,  # tiny subnormal rounds to +0
        0x00018000: 0x0002,  # subnormal tie to even (odd 1 -> 2)
        0x00008000: 0x0000,  # subnormal tie to even (0 stays)
        0x7F800001: 0x7FC0,  # signalling NaN -> quiet NaN
        0xFFC12345: 0xFFC0,  # negative NaN keeps sign
    }
    src = np.array(list(cases), dtype=np.uint32)
    got = numerics.f32_to_bf16(numerics.bits_to_f32(src))
    assert [hex(g) for g in got] == [hex(v) for v in cases.values()]


def test_bf16_roundtrip_and_rne_vs_float64():
    b = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
    f = numerics.bf16_to_f32(b)
    finite = np.isfinite(f)
    assert np.array_equal(numerics.f32_to_bf16(f)[finite], b[finite])
    # random fp32: result is the nearest bf16 neighbour
    x = np.random.default_rng(5).standard_normal(20000).astype(np.float32) * 100
    r = numerics.bf16_to_f32(numerics.f32_to_bf16(x)).astype(np.float64)
    ulp = 2.0 ** (np.floor(np.log2(np.abs(x.astype(np.float64)))) - 7)
    assert np.all(np.abs(r - x) <= ulp / 2)


def test_scale_constant():
    assert int(numerics.f32_to_bits(numerics.softmax_scale(128))) == 0x3DB504F3
    assert numerics.softmax_scale(64) == np.float32(0.125)


def test_dot_order_matches_scalar_loop():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 17)).astype(np.float32)
    b = rng.standard_normal((4, 17)).astype(np.float32)
    got = numerics.dot_rows_seq(a, b)
    for i in range(3):
        for j in range(4):
            acc = np.float32(0)
            for k in range(17):
                acc = np.float32(acc + np.float32(a[i, k] * b[j, k]))
            assert got[i, j].view(np.uint32) == acc.view(np.uint32)
    p = rng.random((2, 5)).astype(np.float32)
    v = rng.standard_normal((5, 3)).astype(np.float32)
    mm = numerics.matmul_seq(p, v)
    acc = np.float32(0)
    for t in range(5):
        acc = np.float32(acc + np.float32(p[1, t] * v[t, 2]))
    assert mm[1, 2] == acc
    rs = numerics.rowsum_seq(p)
    acc = np.float32(0)
    for t in range(5):
        acc = np.float32(acc + p[0, t])
    assert rs[0] == acc


@pytest.mark.parametrize("bad", [0x3F81, 0x3F7F])
def test_bf16_cast_wrong_value_detected(bad):
    assert numerics.f32_to_bf16(np.float32(1.0)) != bad


def test_bench_table_scale_equals_model_scale():
    """tb/run/benches.py derives the CUBE's SCALE parameter without numpy; it must be the model's."""
    from tb.run.benches import get_bench, softmax_scale_bits

    for d in (32, 64, 96, 128):
        assert softmax_scale_bits(d) == int(np.float32(numerics.softmax_scale(d)).view(np.uint32))
    for name in ("pe", "ahbm", "ahbm_llama"):
        b = get_bench(name)
        assert b.parameters["SCALE"] == int(np.float32(numerics.softmax_scale(b.parameters["D"])).view(np.uint32))
