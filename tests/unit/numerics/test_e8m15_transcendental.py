"""The vector core's E8M15 transcendentals VEXP2/VLOG2/VINV/VRSQRT against units.md V.6.4, without RTL.

A **literal** scalar transcription of V.6.4 lives here (the normative coefficient table read with the
csv module, the integer polynomial, PACK of V.6.3), compared bit for bit over whole-binade mantissa
sweeps, specials and random patterns; the table is the spec's file and the model refuses a malformed
one; the exp2 examples and upstream defect D1; float64 sanity bounds in E8M15 ulps. Also the compiled
five-instruction SiLU (VMUL, VEXP2, VADD, VINV, VMUL) and its accuracy outside D1. Each checker is shown
to fail on a planted wrong value.

The pattern helpers, constants and the seeded generator come from tests/unit/numerics/e8m15_ref.py. The
references here are written from the spec's text and never call the model.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from models.numerics import e8m15 as m8
from models.numerics import e8m15_transcendental as m8t
from models.numerics import e8m15_cvt
from models.numerics.formats import E8M15, FP16, decode, encode
from models.numerics.reference import bit_mismatches, ulp_failures
from tests.unit.numerics.e8m15_ref import RNG, SIGN, INF, QNAN, ONE, P0, N0, pat, CORNERS


# ===================================================================== V.6.4 transcendentals, literally
REPO = Path(__file__).resolve().parents[3]


def read_table(path: Path) -> dict[int, tuple[int, int, int]]:
    """vec_tables.csv read here with the csv module, keyed fsel*64 + idx."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["fsel", "idx", "c0", "c1", "c2"]
    return {int(r[0]) * 64 + int(r[1]): (int(r[2]), int(r[3]), int(r[4])) for r in rows[1:]}


TABLE = read_table(REPO / "models" / "numerics" / "vec_tables.csv")


def wrap(v: int, n: int) -> int:
    """wrapN(v): v mod 2^N read as a signed N-bit number."""
    v %= 2 ** n
    return v - 2 ** n if v >= 2 ** (n - 1) else v


def spec_pack(mag: int, ebase: int, sign: int, stk: bool, cancel: bool) -> int:
    """PACK of V.6.3, line by line."""
    if mag == 0:
        return int(sign and not cancel) << 23
    p = mag.bit_length() - 1
    n = (mag * 2 ** (47 - p)) % 2 ** 48
    q, g, s = n >> 32, (n >> 31) & 1, (n % 2 ** 31 != 0) or stk
    q = q + int(g and (s or q % 2 == 1))
    if q == 2 ** 16:
        q, p = 2 ** 15, p + 1
    e = p + ebase
    if e >= 255:
        return (sign << 23) | (0xFF << 15)
    if e <= 0:
        return sign << 23
    return (sign << 23) | (e << 15) | (q - 2 ** 15)


def spec_transcendental(fn: str, a: int) -> int:
    """V.6.4 for one operand, literally: specials first, then idx/u/ext/ebase/sign, then the
    polynomial and PACK(|F|, ebase, sign, stk = 0, cancel = false)."""
    s, e, m = (a >> 23) & 1, (a >> 15) & 0xFF, a & 0x7FFF
    z, i, n = e == 0, e == 255 and m == 0, e == 255 and m != 0
    par = 0
    if fn == "exp2":
        if n:
            return QNAN
        if i or e > 134:
            return INF if s == 0 else 0
        sh = min(134 - e, 26)
        r = (2 ** 25 + m * 2 ** 10) // 2 ** sh
        big_r = r // 2 + r % 2
        v = wrap(-big_r if s else big_r, 25)
        k = wrap(v // 2 ** 17, 9)
        f = v % 2 ** 17
        fsel, idx, u, ext, ebase, sign = 0, f >> 12, f % 2 ** 12, 2 ** 20, k + 107, 0
    elif fn == "log2":
        if n or (s == 1 and not z):
            return QNAN
        if i:
            return INF
        if z:
            return SIGN | INF
        fsel, idx, u, ext, ebase, sign = 1, m >> 10, 4 * (m % 1024), (e - 127) * 2 ** 20, 107, None
    elif fn == "inv":
        if n:
            return QNAN
        if z:
            return (s << 23) | INF
        if i:
            return s << 23
        fsel, idx, u, ext, ebase, sign = 2, m >> 10, 4 * (m % 1024), 0, 234 - e, s
    else:  # rsqrt
        if n or (s == 1 and not z):
            return QNAN
        if z:
            return INF
        if i:
            return 0
        par = 1 if e % 2 == 0 else 0
        fsel, idx, u, ext, ebase, sign = 3, 32 * par + (m >> 10), 4 * (m % 1024), 0, 107 - (e - 127) // 2, 0
    c0, c1, c2 = TABLE[fsel * 64 + idx]
    ident = idx % 32 == 0 and u == 0 and not (fn == "rsqrt" and par == 1)
    big_c0 = wrap(((2 ** 20 if fsel >= 2 else 0) if ident else c0) + ext, 30)
    h = wrap((c2 * u + c1 * 2 ** 16 + 2 ** 15) // 2 ** 16, 22)
    big_f = wrap((h * u + big_c0 * 2 ** 16 + 2 ** 15) // 2 ** 16, 30)
    if sign is None:
        sign = 1 if big_f < 0 else 0
    return spec_pack(abs(big_f), ebase, sign, False, False)


MODEL_T = {"exp2": m8t.vexp2, "log2": m8t.vlog2, "inv": m8t.vinv, "rsqrt": m8t.vrsqrt}
# (sign, exponent) rows swept over all 2^15 mantissas; sign None: random per element
SWEEP_ROWS = {
    "exp2": [(0, 109), (0, 118), (0, 126), (0, 127), (0, 131), (0, 133), (0, 134),
             (1, 113), (1, 127), (1, 132), (1, 133), (1, 134)],
    "log2": [(0, e) for e in (1, 2, 64, 125, 126, 127, 128, 129, 190, 254)],
    "inv": [(None, e) for e in (1, 2, 100, 126, 127, 128, 200, 251, 252, 253, 254)],
    "rsqrt": [(0, e) for e in (1, 2, 3, 125, 126, 127, 128, 129, 200, 253, 254)],
}
T_SPECIALS = np.concatenate([CORNERS, [0x800001, 0x000123, 0x7FFFFF, 0xFF8000, 0x437FFF, 0xC37FFF,
                                        0x430000, 0xC30000, 0x434800, 0xC34800, 0x437F00, 0x43C000]])


def transcendental_inputs(fn: str) -> np.ndarray:
    mant = np.arange(1 << 15, dtype=np.int64)
    rows = [pat(RNG.integers(0, 2, mant.size) if s is None else s, e, mant) for s, e in SWEEP_ROWS[fn]]
    return np.concatenate(rows + [T_SPECIALS, RNG.integers(0, 1 << 24, 4000)])


def transcendental_mismatches(fn: str, x: np.ndarray, got) -> list[str]:
    exp = [spec_transcendental(fn, v) for v in x.tolist()]
    return bit_mismatches(exp, got, inputs=x, what=f"v{fn}")


@pytest.mark.parametrize("fn", list(MODEL_T))
def test_transcendental_bit_exact(fn: str) -> None:
    x = transcendental_inputs(fn)
    assert len(SWEEP_ROWS[fn]) >= 10
    bad = transcendental_mismatches(fn, x, MODEL_T[fn](x))
    assert not bad, "\n".join(bad)


def test_table_is_the_spec_table() -> None:
    assert m8t.COEFFS.shape == (256, 3) and m8t.COEFFS.dtype == np.int64
    assert len(TABLE) == 160
    for key in range(256):
        assert tuple(int(v) for v in m8t.COEFFS[key]) == TABLE.get(key, (0, 0, 0))
    # the repository copy is the spec's file, verbatim (tests/unit/vector/test_vc_coeff_rom.py pins its hash)


def test_table_refused_unless_160_rows(tmp_path: Path) -> None:
    src = (REPO / "models" / "numerics" / "vec_tables.csv").read_text().splitlines()
    for lines, what in ((src[:-1], "159 rows"), (src + ["3,63,1,2,3"], "161 rows"),
                        (src[:-1] + [src[1], ""], "duplicate"),
                        (src[:5] + ["4,0,1,2,3"] + src[6:], "entry"), (src[:5] + ["0,4,1,2,99999999"] + src[6:], "range"),
                        (["fsel,idx,c0,c1"] + src[1:], "header")):
        p = tmp_path / "t.csv"
        p.write_text("\n".join(lines) + "\n")
        with pytest.raises(RuntimeError):
            m8t._load_coeffs(p)
    p.write_text("\n".join(src) + "\n")
    assert np.array_equal(m8t._load_coeffs(p), m8t.COEFFS)


def test_exp2_spec_examples_and_d1() -> None:
    e8 = lambda v: int(encode(v, E8M15))  # noqa: E731 - exact for these values
    assert int(m8t.vexp2(e8(200.0))) == e8(2.0 ** -56)
    assert int(m8t.vexp2(e8(-200.0))) == e8(2.0 ** 56)
    assert int(m8t.vexp2(e8(255.0))) == e8(0.5)
    assert int(m8t.vexp2(e8(128.0))) == P0
    assert int(m8t.vexp2(e8(256.0))) == INF and int(m8t.vexp2(e8(-256.0))) == P0  # e > 134: specials
    assert int(m8t.vexp2(e8(-128.0))) == P0  # wraps to k = -128: flushed
    assert int(m8t.vexp2(INF)) == INF and int(m8t.vexp2(SIGN | INF)) == P0 and int(m8t.vexp2(0x7F8001)) == QNAN
    assert int(m8t.vexp2(P0)) == ONE and int(m8t.vexp2(N0)) == ONE and int(m8t.vexp2(0x004321)) == ONE
    for k in range(-126, 128):
        assert int(m8t.vexp2(e8(float(k)))) == e8(2.0 ** k)  # integers: exact
    assert int(m8t.vexp2(e8(-127.0))) == P0


def test_transcendental_specials() -> None:
    lg, inv, rs = m8t.vlog2, m8t.vinv, m8t.vrsqrt
    assert [int(lg(v)) for v in (P0, N0, 0x000123, INF, SIGN | INF, 0xBF8000, 0x7F8001, ONE)] == \
        [SIGN | INF, SIGN | INF, SIGN | INF, INF, QNAN, QNAN, QNAN, P0]
    assert [int(inv(v)) for v in (P0, N0, 0x800123, INF, SIGN | INF, 0xFFC000)] == \
        [INF, SIGN | INF, SIGN | INF, P0, N0, QNAN]
    assert [int(rs(v)) for v in (P0, N0, INF, SIGN | INF, 0xBF8000, 0x7FC000)] == [INF, INF, P0, QNAN, QNAN, QNAN]
    assert int(inv(0x008000)) == 0x7E8000 and int(inv(0x7E8000)) == 0x008000  # exact powers of two
    assert int(inv(0x7E8001)) == P0 and int(inv(0xFE8001)) == N0  # below 2^-126: flushed
    assert int(rs(0x3E8000)) == 0x400000 and int(lg(0x400000)) == ONE and int(lg(0x3F0000)) == 0xBF8000


# float64 sanity bounds, E8M15 ulps, over the sweeps above (measured maxima: exp2 0.6971 with |x| < 128
# and a normal result, inv 0.5913, rsqrt 0.5673; log2 0.5411 with e != 126, 127 and 9.12 * 2^-20
# absolute on [0.5, 2))
ULP_BOUNDS = {"exp2": 0.70, "inv": 0.60, "rsqrt": 0.57, "log2": 0.55}


def float64_failures(fn: str, x: np.ndarray, got) -> list[str]:
    v = decode(x, E8M15)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ref = {"exp2": np.exp2, "log2": np.log2, "inv": lambda t: 1 / t, "rsqrt": lambda t: 1 / np.sqrt(t)}[fn](v)
    e = (x >> 15) & 0xFF
    keep = np.isfinite(ref) & (np.abs(ref) >= 2.0 ** -126) & (np.abs(ref) < 2.0 ** 128) & (e != 0)
    if fn == "exp2":
        keep &= np.abs(v) < 128  # D1 above
    if fn == "log2":
        keep &= (e != 126) & (e != 127)  # |log2 x| < 1: 2^-20 fixed-point resolution, checked below
    return ulp_failures(np.asarray(got)[keep], E8M15, ref[keep], ULP_BOUNDS[fn], inputs=x[keep])


@pytest.mark.parametrize("fn", list(MODEL_T))
def test_transcendental_float64_bounds(fn: str) -> None:
    mant = np.arange(1 << 15, dtype=np.int64)
    x = np.concatenate([pat(RNG.integers(0, 2, mant.size) if s is None else s, e, mant)
                        for s, e in SWEEP_ROWS[fn]])
    bad = float64_failures(fn, x, MODEL_T[fn](x))
    assert not bad, "\n".join(bad)
    if fn == "log2":  # near 1: absolute error within 9.5 units of 2^-20 (measured 9.12)
        near = pat(0, np.repeat([126, 127], mant.size), np.tile(mant, 2))
        err = np.abs(decode(m8t.vlog2(near), E8M15) - np.log2(decode(near, E8M15)))
        assert err.max() <= 9.5 * 2.0 ** -20


# ===================================================================== SiLU
def test_silu_is_the_five_instructions() -> None:
    h = np.arange(0, 65536, 7)
    x = e8m15_cvt.fp16_to_e8m15(h)
    t = m8.vmul(x, 0xBFB8AA)
    r = m8t.vinv(m8.vadd(m8t.vexp2(t), m8.K1))
    assert np.array_equal(m8t.silu_e8m15(x), m8.vmul(r, x))
    assert np.array_equal(m8t.silu_fp16(h), e8m15_cvt.e8m15_to_fp16(m8.vmul(r, x)))
    assert int(m8t.silu_fp16(0x0000)) == 0x0000 and int(m8t.silu_fp16(0x7BFF)) == 0x7BFF
    # D1 in the compiled sequence: x = 100 gives t ~ -144, VEXP2 returns 2^(t + 256): silu ~ 0
    assert int(m8t.silu_fp16(0x5640)) == 0x0000
    assert int(m8t.silu_fp16(0xD640)) == 0xD640  # and x = -100 gives ~x instead of ~-0


def test_silu_accuracy_outside_d1() -> None:
    h = np.arange(65536)
    h = h[((h >> 10) & 0x1F) != 0x1F]
    v = decode(h, FP16)
    t = np.abs(decode(m8.vmul(e8m15_cvt.fp16_to_e8m15(h), m8.NEG_LOG2E), E8M15))
    keep = ~((t >= 128) & (t < 256))
    assert (~keep).sum() == 2048  # 88.7 < |x| < 177.4
    bad = ulp_failures(m8t.silu_fp16(h[keep]), FP16, m8t.silu_ref(v[keep]), 0.75, inputs=h[keep])
    assert not bad, "\n".join(bad)  # measured 0.7484 FP16 ulp (input 0xca0b)


# ===================================================================== the checkers catch a planted wrong value
def test_transcendental_checker_catches_planted_value() -> None:
    x = transcendental_inputs("inv")[::97]
    got = np.asarray(m8t.vinv(x)).astype(np.int64)
    assert transcendental_mismatches("inv", x, got) == []
    got[11] ^= 1 << 4
    bad = transcendental_mismatches("inv", x, got)
    assert len(bad) == 1 and "vector 11" in bad[0] and f"{int(x[11]):#x}" in bad[0]


def test_float64_bound_checker_catches_planted_value() -> None:
    x = pat(0, 127, np.arange(0, 1 << 15, 5))
    got = np.asarray(m8t.vrsqrt(x)).astype(np.int64)
    assert float64_failures("rsqrt", x, got) == []
    got[100] += 2  # two ulps off
    got[200] ^= SIGN
    bad = float64_failures("rsqrt", x, got)
    assert len(bad) == 2 and f"{int(x[100]):#x}" in bad[0] and f"{int(x[200]):#x}" in bad[1]
