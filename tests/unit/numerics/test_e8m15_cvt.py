"""The vector core's FP16/FP32 <-> E8M15 conversions against units.md V.7, without RTL.

Checked against numpy's float16 cast / the generic correctly-rounded encoder for finite in-range
values and against the V.7 rules, spelled out here, for the rest: the FP16 load of every pattern and
its round trip, the FP16 store at its edges (saturation, ties, subnormals, NaN payloads) and at random,
the FP32 load (subnormals flush, carry to Inf) and store. Each checker is shown to fail on a planted
wrong value.

The pattern helpers, constants and the seeded generator come from tests/unit/numerics/e8m15_ref.py. The
references here are written from the spec's text and never call the model.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from models.numerics import e8m15 as m8
from models.numerics import e8m15_cvt
from models.numerics.formats import E8M15, FP16, FP32, decode, encode
from models.numerics.reference import bit_mismatches
from tests.unit.numerics.e8m15_ref import RNG, SIGN, INF, QNAN, ONE, P0, N0, fields, pat, rand_pat, CORNERS


# ===================================================================== V.7 conversions
ALL_FP16 = np.arange(65536, dtype=np.int64)


def fp16_load_rule(h: int) -> int:
    """V.7 VLD FP16 for Inf/NaN and zero; finite values are checked through their exact value."""
    s, e5, m10 = h >> 15, (h >> 10) & 0x1F, h & 0x3FF
    if e5 == 0x1F:
        return (s << 23) | (0xFF << 15) | (m10 * 32)
    raise AssertionError("finite")


def fp16_load_mismatches(h: np.ndarray, got) -> list[str]:
    fin = ((h >> 10) & 0x1F) != 0x1F
    exp = np.asarray(encode(decode(h, FP16), E8M15), np.int64)  # FP16 values are E8M15 values: exact
    exp = np.where(fin, exp, [0 if f else fp16_load_rule(int(x)) for f, x in zip(fin, h)])
    zero = (h & 0x7FFF) == 0
    exp = np.where(zero, (h >> 15) << 23, exp)  # +-0 -> +-0
    return bit_mismatches(exp, got, inputs=h, what="fp16_to_e8m15")


def test_fp16_load_every_pattern() -> None:
    got = e8m15_cvt.fp16_to_e8m15(ALL_FP16)
    bad = fp16_load_mismatches(ALL_FP16, got)
    assert not bad, "\n".join(bad)
    assert int(got[0x0001]) == pat(0, 103, 0) and int(got[0x03FF]) == pat(0, 112, 0x7FC0)  # subnormals
    assert int(got[0xFC00]) == SIGN | INF and int(got[0x7E00]) == 0x7FC000 and int(got[0xFD55]) == 0xFFAAA0


def test_fp16_round_trip_every_pattern() -> None:
    back = np.asarray(e8m15_cvt.e8m15_to_fp16(e8m15_cvt.fp16_to_e8m15(ALL_FP16)), np.int64)
    nan = ((ALL_FP16 >> 10) & 0x1F == 0x1F) & ((ALL_FP16 & 0x3FF) != 0)
    assert np.array_equal(back[~nan], ALL_FP16[~nan])  # Inf included: stored as Inf
    assert np.array_equal(back[nan], ALL_FP16[nan] | 0x200)  # NaN: quiet bit set, 9 payload bits kept


def fp16_store_rule(x: int) -> Optional[int]:
    """V.7 VST FP16 for the patterns it names (e = 0, Inf, NaN); None for a finite value."""
    s, e, m = fields(x)
    if e == 0:
        return s << 15
    if e == 0xFF:
        return (s << 15) | (0x7E00 | ((m >> 5) & 0x1FF) if m else 0x7C00)
    return None


def fp16_store_expected(x: np.ndarray) -> list[int]:
    """E8M15 -> FP16: numpy's float16 cast of the exact value (RNE, subnormals) for finite x,
    saturating to +-0x7BFF where the cast overflows; the V.7 rules for zero, Inf and NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        cast = decode(x, E8M15).astype(np.float16).view(np.uint16).astype(np.int64)
    cast = np.where((cast & 0x7FFF) == 0x7C00, (cast & 0x8000) | 0x7BFF, cast)
    rule = [fp16_store_rule(v) for v in x.tolist()]
    return [int(c) if r is None else r for c, r in zip(cast, rule)]


def fp16_store_mismatches(x: np.ndarray, got) -> list[str]:
    return bit_mismatches(fp16_store_expected(x), got, inputs=x, what="e8m15_to_fp16")


E8_STORE_EDGE = np.array([0x477FE0, 0x477FEF, 0x477FF0, 0xC77FF0, 0x478000, 0x7F7FFF, 0x330000, 0x330001,
                          0x32FFFF, 0x334000, 0x338000, 0x387FC0, 0x387FE0, 0x387FF0, 0x388000, 0x380000,
                          0x37FFFF, 0x2F0000, 0x2B8000, 0x2B7FFF, 0x7F8000, 0xFF8000, 0x7FC000, 0xFFBFFF,
                          0x7F8010, 0x000000, 0x800000, 0x000001], dtype=np.int64)


def test_fp16_store_edges_and_random() -> None:
    x = np.concatenate([E8_STORE_EDGE, CORNERS, rand_pat(15000, 95, 150), rand_pat(3000, 0, 255),
                        pat(RNG.integers(0, 2, 3000), RNG.integers(100, 143, 3000),
                            (RNG.integers(0, 1 << 10, 3000) << 5) | 0x10)])  # exact ties at 11 bits
    got = e8m15_cvt.e8m15_to_fp16(x)
    bad = fp16_store_mismatches(x, got)
    assert not bad, "\n".join(bad)
    st = lambda v: int(e8m15_cvt.e8m15_to_fp16(v))  # noqa: E731
    assert st(0x477FE0) == 0x7BFF and st(0x477FF0) == 0x7BFF and st(0xFF7FFF) == 0xFBFF  # saturation
    assert st(INF) == 0x7C00 and st(SIGN | INF) == 0xFC00 and st(QNAN) == 0x7E00 and st(0xFF8020) == 0xFE01
    assert st(0x330000) == 0x0000 and st(0x330001) == 0x0001 and st(0xB34000) == 0x8001  # 2^-25 tie
    assert st(0x387FF0) == 0x0400  # rounds up into the smallest normal (carry into the exponent)
    x2 = int(e8m15_cvt.fp16_to_e8m15(0xF8BB))
    assert st(m8.vadd(x2, x2)) == 0xFBFF  # the protocol's known case


FP32_EDGE = np.array([0, 0x80000000, 1, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFF7F,
                      0x7F7FFF80, 0x7F7FFF7F, 0x7F7FFE80, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                      0x7F800100, 0xFFFFFFFF, 0x3F800080, 0x3F800180, 0x3F800081, 0x3F80017F, 0x3F8000FF,
                      0x3F7FFF80, 0x40490FDB], dtype=np.int64)


def fp32_load_expected(f: np.ndarray) -> list[int]:
    """FP32 -> E8M15: the V.7 rules for e = 0 (zero or subnormal: +-0) and Inf/NaN; for a
    normal FP32 (>= 2^-126) the correctly-rounded encoder, which then never flushes, is V.7's
    RNE with a carry to Inf."""
    enc = np.asarray(encode(decode(f, FP32), E8M15), np.int64)
    out = []
    for v, r in zip(f.tolist(), enc.tolist()):
        s, e, m = v >> 31, (v >> 23) & 0xFF, v & 0x7FFFFF
        if e == 0:
            r = s << 23
        elif e == 0xFF:
            r = (s << 23) | (0xFF << 15) | ((0x4000 | ((m >> 8) & 0x3FFF)) if m else 0)
        out.append(r)
    return out


def fp32_store_expected(x: np.ndarray) -> list[int]:
    """E8M15 -> FP32: exact (the encoder of the exact value), e = 0 -> +-0, Inf/NaN -> {s, 255, m << 8}."""
    enc = np.asarray(encode(decode(x, E8M15), FP32), np.int64)
    out = []
    for v, r in zip(x.tolist(), enc.tolist()):
        s, e, m = fields(v)
        if e == 0:
            r = s << 31
        elif e == 0xFF:
            r = (s << 31) | (0xFF << 23) | (m << 8)
        out.append(r)
    return out


def test_fp32_conversions() -> None:
    f = np.concatenate([FP32_EDGE, RNG.integers(0, 1 << 32, 8000, dtype=np.int64),
                        (RNG.integers(0, 1 << 24, 2000, dtype=np.int64) << 8) | 0x80])  # ties
    got = e8m15_cvt.fp32_to_e8m15(f)
    bad = bit_mismatches(fp32_load_expected(f), got, inputs=f, what="fp32_to_e8m15")
    assert not bad, "\n".join(bad)
    ld = lambda v: int(e8m15_cvt.fp32_to_e8m15(v))  # noqa: E731
    assert ld(0x007FFFFF) == P0 and ld(0x807FFFFF) == N0  # subnormals flush, even next to 2^-126
    assert ld(0x7F7FFF80) == INF and ld(0xFF7FFF80) == SIGN | INF and ld(0x7F7FFF7F) == 0x7F7FFF  # carry
    assert ld(0x3F800080) == ONE and ld(0x3F800180) == 0x3F8002 and ld(0x7F800100) == 0x7FC001
    x = np.concatenate([CORNERS, RNG.integers(0, 1 << 24, 8000, dtype=np.int64)])
    got = e8m15_cvt.e8m15_to_fp32(x)
    bad = bit_mismatches(fp32_store_expected(x), got, inputs=x, what="e8m15_to_fp32")
    assert not bad, "\n".join(bad)
    assert int(e8m15_cvt.e8m15_to_fp32(0x7F8005)) == 0x7F800500 and int(e8m15_cvt.e8m15_to_fp32(0x804321)) == 0x80000000
    fin = x[((x >> 15) & 0xFF) != 0xFF]
    assert np.array_equal(e8m15_cvt.fp32_to_e8m15(e8m15_cvt.e8m15_to_fp32(fin)),
                          np.where(((fin >> 15) & 0xFF) == 0, fin & SIGN, fin))  # store-load: identity


# ===================================================================== the checkers catch planted wrong values
def test_conversion_checkers_catch_planted_values() -> None:
    got = np.asarray(e8m15_cvt.fp16_to_e8m15(ALL_FP16)).astype(np.int64)
    for i in (0x0001, 0x7C01, 0x8000):  # a subnormal, a NaN payload, -0
        wrong = got.copy()
        wrong[i] ^= 1 << 5
        assert len(fp16_load_mismatches(ALL_FP16, wrong)) == 1
    x = E8_STORE_EDGE
    st = np.asarray(e8m15_cvt.e8m15_to_fp16(x)).astype(np.int64)
    assert fp16_store_mismatches(x, st) == []
    for i, v in ((0, 0x7C00), (2, 0x7C00), (6, 0x0001), (23, 0xFE00), (20, 0x7BFF)):
        wrong = st.copy()
        wrong[i] = v  # overflow to Inf, tie rounded up, a NaN payload lost, Inf saturated
        assert len(fp16_store_mismatches(x, wrong)) == 1, (i, hex(v))
    f = FP32_EDGE
    ld = np.asarray(e8m15_cvt.fp32_to_e8m15(f)).astype(np.int64)
    wrong = ld.copy()
    wrong[3] = 0x008000  # the old rule: subnormal rounding up to 2^-126
    assert bit_mismatches(fp32_load_expected(f), ld) == [] and len(bit_mismatches(fp32_load_expected(f), wrong)) == 1
    x = CORNERS
    wrong = np.asarray(e8m15_cvt.e8m15_to_fp32(x)).astype(np.int64)
    wrong[24] = 0x7FC00000  # 0xFFFFFF's payload and sign lost (the old canonical NaN)
    assert len(bit_mismatches(fp32_store_expected(x), wrong)) == 1


def test_fp16_load_table_equals_the_field_arithmetic() -> None:
    """VLD FP16 looks its results up in a table made from the field arithmetic: on every pattern that is not a
    NaN the result is the value's own E8M15 pattern, worked out apart from both (an FP16 value, subnormals
    included, is a float32 normal or zero whose low 8 fraction bits are zero: its float32 bits shifted down by
    8); a NaN stays a NaN of the same sign; the low 16 bits of wider ints are what is read; shape and dtype."""
    from models.numerics.e8m15_cvt import fp16_to_e8m15_fields

    h = np.arange(1 << 16)
    got_all = np.asarray(e8m15_cvt.fp16_to_e8m15(h)).astype(np.int64)
    f32 = h.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32).astype(np.int64)
    nan = np.isnan(h.astype(np.uint16).view(np.float16))
    assert np.array_equal(got_all[~nan], f32[~nan] >> 8)
    assert np.all((got_all[nan] & 0x7F8000) == 0x7F8000) and np.all(got_all[nan] & 0x7FFF)
    assert np.array_equal(got_all[nan] >> 23, h[nan] >> 15)
    wide = h[::97] | (np.arange(h[::97].size) << 16)
    got = e8m15_cvt.fp16_to_e8m15(wide.reshape(-1, 1))
    assert got.dtype == np.uint32 and got.shape == (wide.size, 1)
    assert np.array_equal(got.ravel(), fp16_to_e8m15_fields(wide))
    got[0, 0] = 1  # a result is the caller's to keep
