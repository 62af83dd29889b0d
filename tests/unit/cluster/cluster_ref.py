"""References for the cluster's accumulator numerics, written from units.md C.7's text, and their stimulus.

Shared by tests/unit/cluster/test_cluster_numerics.py (the model against these) and tests/unit/numerics/test_arith_rtl.py
(the RTL against the model on the same vectors). Nothing here calls the model:

* the **literal** reference (``ref_convert``, ``ref_add``, ``ref_emit``): C.7.3, C.7.4 and C.7.5
  transcribed line by line on Python integers, one lane at a time, with switches that leave one quirk
  out (the mutants a test uses to show the vectors exercise that quirk);
* the **semantic** reference (``exact_*``): the exact rational value rounded correctly with Fraction,
  plus only the departures C.7.6 names (A1 exponent mod 128, A2 plain sticky, A3 binade 127) and
  C.7.5's flush and saturation; each returns the category of the vector, so a test can count them;
* the stimulus (``CONVERT``, ``ADD``, ``EMIT``: >= 10^4 vectors each, seeded) with cancellation,
  underflow, constructed A2 midpoints, A3, A1 wraps, ties and saturation.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

RNG = np.random.default_rng(20260701)
N = 20_000


# ---------------------------------------------------------------- the literal reference (C.7.3-C.7.5)
def ref_convert(d: int, sa: int, sb: int, anchor: int, *, a1: bool = True) -> int:
    """C.7.3, line by line. ``a1=False`` is a mutant that clamps the exponent instead of wrapping."""
    ea, ma, eb, mb = sa >> 3, sa & 7, sb >> 3, sb & 7
    mag = abs(d) * (8 + ma) * (8 + mb)
    if mag == 0:
        return 0
    p = mag.bit_length() - 1
    n = mag << (29 - p)
    q, g, s = n >> 15, (n >> 14) & 1, (n & ((1 << 14) - 1)) != 0
    q = q + (g & (s | (q & 1)))
    e = p + ea + eb - anchor - 6 + 63
    e = e % 128 if a1 else min(max(e, 1), 127)
    if q == 1 << 15:
        e, frac = (e + 1) % 128 if a1 else min(e + 1, 127), 0
    else:
        frac = q - (1 << 14)
    return int(d < 0) << 21 | e << 14 | frac


def ref_add(t: int, x: int, *, a2: bool = True, a3: bool = True) -> int:
    """C.7.4, line by line. Mutants: ``a2=False`` leaves the shifted-out bits out of the sticky,
    ``a3=False`` lets binade 127 through instead of replacing it by the maximum magnitude."""
    st, et, mt = t >> 21 & 1, t >> 14 & 0x7F, t & 0x3FFF
    sx, ex, mx = x >> 21 & 1, x >> 14 & 0x7F, x & 0x3FFF
    if et == 0 and ex == 0:
        return 0
    if et == 0:
        return x
    if ex == 0:
        return t
    if (et, mt) >= (ex, mx):
        (sb_, eb_, mb_), (ss_, es_, ms_) = (st, et, mt), (sx, ex, mx)
    else:
        (sb_, eb_, mb_), (ss_, es_, ms_) = (sx, ex, mx), (st, et, mt)
    sub = sb_ != ss_
    d = min(eb_ - es_, 23)
    bg = ((1 << 14) + mb_) << 8
    sm = ((1 << 14) + ms_) << 8
    sh, lost = sm >> d, sm % (1 << d) != 0
    total = bg - sh if sub else bg + sh
    if total == 0:
        return 0
    top = total.bit_length() - 1
    n = total << (23 - top)
    e_res = eb_ + top - 22
    q, g = n >> 9, n >> 8 & 1
    s = (lost and a2) or (n & 0xFF) != 0
    up = g and (s or q & 1)
    if up and q == (1 << 15) - 1:
        e_res += 1
    q = (q + up) % (1 << 15)
    if e_res <= 0:
        return 0
    if e_res >= 127 and a3:
        return sb_ << 21 | 127 << 14 | 0x3FFF
    return sb_ << 21 | (e_res & 0x7F) << 14 | (q & 0x3FFF)


def ref_emit(x: int, *, saturate: bool = True) -> int:
    """C.7.5, line by line. ``saturate=False`` is a mutant that overflows to infinity."""
    s, e, m = x >> 21 & 1, x >> 14 & 0x7F, x & 0x3FFF
    if e == 0:
        return s << 15
    up = (m >> 3 & 1) and ((m & 7) != 0 or m >> 4 & 1)
    f = (m >> 4) + up
    e16 = e - 48
    if f == 1 << 10:
        e16, f = e16 + 1, 0
    if e16 <= 0:
        return s << 15
    if e16 >= 31:
        return s << 15 | (0x1E << 10 | 0x3FF if saturate else 0x1F << 10)
    return s << 15 | e16 << 10 | f


# ---------------------------------------------------------------- the semantic reference (exact values)
def acc_value(x: int) -> Fraction:
    """C.7.1: (-1)^s 2^(e-63) (1 + m/2^14); e = 0 is zero."""
    s, e, m = x >> 21 & 1, x >> 14 & 0x7F, x & 0x3FFF
    if e == 0:
        return Fraction(0)
    v = (1 + Fraction(m, 1 << 14)) * Fraction(2) ** (e - 63)
    return -v if s else v


def round_sig(a: Fraction, bits: int) -> tuple[int, int]:
    """a > 0 rounded to ``bits`` significant bits, nearest even: (q, k) with value q * 2^k, 2^(bits-1) <= q."""
    k = a.numerator.bit_length() - a.denominator.bit_length() - bits
    while a / Fraction(2) ** k >= 1 << bits:
        k += 1
    while a / Fraction(2) ** k < 1 << (bits - 1):
        k -= 1
    q = round(a / Fraction(2) ** k)  # Python rounds halves to even
    if q == 1 << bits:
        q, k = q >> 1, k + 1
    return q, k


def exact_convert(d: int, sa: int, sb: int, anchor: int) -> tuple[int, str]:
    """(X, category): the scaled dot rounded to 15 bits; 'A1' when the biased exponent leaves 1..127."""
    ea, ma, eb, mb = sa >> 3, sa & 7, sb >> 3, sb & 7
    mag = abs(d) * (8 + ma) * (8 + mb)
    if mag == 0:
        return 0, "zero"
    q, k = round_sig(Fraction(mag), 15)
    biased = (k + 14) + ea + eb - anchor - 6 + 63  # value = q 2^k = 1.f 2^(k+14) 2^(Ea+Eb-anchor-6)
    cat = "A1" if not 1 <= biased <= 127 else "exact"
    return int(d < 0) << 21 | (biased % 128) << 14 | (q - (1 << 14)), cat


def exact_add(t: int, x: int) -> tuple[int, str]:
    """(R, category) of T + X from the exact sum: correct rounding to 15 bits, +0 for a zero or a result
    under 2^-62, the maximum magnitude from binade 127 up (A3), and, where the plain sticky of an
    effective subtraction rounds a retained midpoint up (A2), one ulp more in magnitude."""
    if (t >> 14) & 0x7F == 0:
        return (x if (x >> 14) & 0x7F else 0), "zero operand"
    if (x >> 14) & 0x7F == 0:
        return t, "zero operand"
    v = acc_value(t) + acc_value(x)
    if v == 0:
        return 0, "cancellation"
    q, k = round_sig(abs(v), 15)
    biased = k + 14 + 63
    cat = "exact"
    if _a2_midpoint(t, x):
        q, cat = q + 1, "A2"
        if q == 1 << 15:
            q, biased = q >> 1, biased + 1
    sign = int(v < 0)
    if biased <= 0:
        return 0, "underflow"
    if biased >= 127:
        return sign << 21 | 127 << 14 | 0x3FFF, ("A3" if cat == "exact" else cat + "+A3")
    return sign << 21 | biased << 14 | (q - (1 << 14)), cat


def _a2_midpoint(t: int, x: int) -> bool:
    """Whether T + X is an effective subtraction whose aligned, truncated difference (8 guard bits, the
    smaller operand's shifted-out bits dropped) lies exactly on a rounding midpoint while bits were lost,
    i.e. the exact difference is below the midpoint and correct rounding rounds down (C.7.4, A2)."""
    vt, vx = acc_value(t), acc_value(x)
    if (vt < 0) == (vx < 0):
        return False
    big, small = (vt, vx) if abs(vt) >= abs(vx) else (vx, vt)
    frame = Fraction(2) ** ((_exp(big) - 14) - 8)  # the lsb of the 8-guard-bit frame of the larger operand
    shifted = abs(small) / frame
    if shifted.denominator == 1 or _exp(big) - _exp(small) > 23:
        return False  # nothing lost (the 23-cap only ever loses a part below the guard bits)
    retained = abs(big) / frame - (shifted.numerator // shifted.denominator)
    lsb = Fraction(2) ** (int(retained).bit_length() - 15)  # one ulp of the 15-bit result, in frame units
    return (retained / lsb - Fraction(1, 2)).denominator == 1


def _exp(v: Fraction) -> int:
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e if Fraction(2) ** e <= a else e - 1


def exact_emit(x: int) -> tuple[int, str]:
    """(H, category): correct rounding to 11 bits, flush below 2^-14, saturation at 2^16 and above."""
    s = x >> 21 & 1
    v = abs(acc_value(x))
    if v == 0:
        return s << 15, "zero"
    q, k = round_sig(v, 11)
    e16 = k + 10 + 15
    if e16 <= 0:
        return s << 15, "flush"
    if e16 >= 31:
        return s << 15 | 0x7BFF, "saturate"
    return s << 15 | e16 << 10 | (q - (1 << 10)), "exact"


# ---------------------------------------------------------------- stimulus
def acc_patterns(n: int, lo: int = 0, hi: int = 127) -> np.ndarray:
    return (RNG.integers(0, 2, n) << 21) | (RNG.integers(lo, hi + 1, n) << 14) | RNG.integers(0, 1 << 14, n)


def convert_vectors() -> list[tuple[int, int, int, int]]:
    d = RNG.integers(-(1 << 17), (1 << 17) + 1, N)
    d[:2000] = RNG.integers(-40, 41, 2000)  # small dots: exact
    d[2000:2100] = 0
    d[2100:2150] = 1 << 17
    d[2150:2200] = -(1 << 17)
    sa = RNG.integers(0, 256, N)
    sb = RNG.integers(0, 256, N)
    anchor = np.clip(RNG.normal(40, 30, N).astype(np.int64), 0, 255)
    anchor[2200:4200] = RNG.choice([0, 1, 2, 3, 250, 253, 255], 2000)  # A1 wraps, both ways
    # q carries out: mag = 2^15 - 1 scaled by 8*8 with anchor chosen to land anywhere
    d[4200:4400] = RNG.choice([(1 << 15) - 1, (1 << 16) - 1, -((1 << 17) - 1)], 200)
    sa[4200:4400] = RNG.integers(0, 32, 200) << 3
    sb[4200:4400] = RNG.integers(0, 32, 200) << 3
    # ties: mag with bit pattern ...G=1, S=0
    d[4400:4600] = (RNG.integers(1 << 15, 1 << 16, 200) | 1) << 1
    sa[4400:4600] = 0xA0
    sb[4400:4600] = 0xA0
    return [(int(a), int(b), int(c), int(e)) for a, b, c, e in zip(d, sa, sb, anchor)]


def add_vectors() -> list[tuple[int, int]]:
    t = acc_patterns(N)
    e = np.clip(((t >> 14) & 0x7F) + RNG.integers(-25, 26, N), 0, 127)
    x = np.where(RNG.random(N) < 0.5, t ^ (1 << 21), acc_patterns(N))  # half: opposite sign
    x = (x & ~(0x7F << 14)) | (e << 14)
    k = N // 10
    x[:k] = t[:k] ^ (1 << 21)  # exact cancellation
    # underflow: small exponents, near-cancellation
    t[k:2 * k] = acc_patterns(k, 1, 4)
    x[k:2 * k] = (t[k:2 * k] ^ (1 << 21)) + RNG.integers(-64, 65, k)
    x[k:2 * k] = np.clip(x[k:2 * k], 0, (1 << 22) - 1)
    # A3: the top binades, same sign (carries into 127) and 127 itself
    t[2 * k:3 * k] = acc_patterns(k, 125, 127)
    x[2 * k:3 * k] = (t[2 * k:3 * k] & (1 << 21)) | (acc_patterns(k, 120, 127) & ~(1 << 21))
    # A2 midpoints: d in 9..14, the small operand's bits [d-1 : d-8] above its shifted-out part hold
    # 0x80 and its lsb is set (bits lost), the big mantissa large enough that the difference keeps bit 22
    m = 3 * k
    d = RNG.integers(9, 15, k)
    eb = RNG.integers(20, 120, k)
    mb = RNG.integers(1 << 6, 1 << 14, k)
    ms = RNG.integers(0, 1 << 14, k)
    window = 0xFF << (d - 8)
    ms = ((ms | (1 << 14)) & ~window | (0x80 << (d - 8))) & 0x3FFF | 1
    sgn = RNG.integers(0, 2, k)
    big = sgn << 21 | eb << 14 | mb
    small = (1 - sgn) << 21 | (eb - d) << 14 | ms
    swap = RNG.random(k) < 0.5
    t[m:m + k] = np.where(swap, small, big)
    x[m:m + k] = np.where(swap, big, small)
    # zeros with junk bits (e = 0 reads as zero)
    j = 4 * k
    t[j:j + 200] = RNG.integers(0, 2, 200) << 21 | RNG.integers(0, 1 << 14, 200)
    x[j + 100:j + 300] = RNG.integers(0, 2, 200) << 21 | RNG.integers(0, 1 << 14, 200)
    return [(int(a), int(b)) for a, b in zip(t, x)]


def emit_vectors() -> list[int]:
    sweep = ((np.arange(2)[:, None, None] << 21) | (np.arange(128)[None, :, None] << 14)
             | RNG.integers(0, 1 << 14, (2, 128, 40))).ravel()
    ties = acc_patterns(2000, 30, 80) & ~0xF | 0x8 | (RNG.integers(0, 2, 2000) << 4)  # exactly half an FP16 ulp
    edges = np.array([e << 14 | m for e in (47, 48, 49, 77, 78, 79) for m in (0, 0x3FF0, 0x3FF7, 0x3FF8, 0x3FFF)])
    rest = acc_patterns(N - sweep.size - ties.size - edges.size)
    return [int(v) for v in np.concatenate([sweep, ties, edges, edges | 1 << 21, rest])]


CONVERT = convert_vectors()
ADD = add_vectors()
EMIT = emit_vectors()


def mismatches(got, want, inputs, what: str) -> list[str]:
    """Every vector where ``got`` differs from ``want``, naming the vector and its inputs."""
    return [f"{what} vector {i} {inputs[i]}: expected {w:#x}, got {int(g):#x}"
            for i, (g, w) in enumerate(zip(got, want)) if int(g) != w]
