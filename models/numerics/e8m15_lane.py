"""One lane of the vector core's E8M15 FMA datapath and PACK (units.md V.6.3) on plain Python ints.

Why a second form of the same datapath: models.numerics.e8m15 evaluates it with
numpy, about seventy array operations per call, each costing roughly a
microsecond whatever the width. The VRED trees (units.md V.9) call it on
vectors of 1 to 32 lanes, ten times per reduction, so there nearly all the time
is numpy's fixed cost. Lane by lane in Python ints the same datapath costs a few
microseconds per lane, which is cheaper below a few dozen lanes.

Every step here is the step of the same name in e8m15 (``_fma``, ``_pack``,
``_specials``), in the same order, on one 24-bit pattern per operand; the unit
tests (tests/unit/numerics/test_e8m15_lane.py) hold the two forms equal bit for
bit over random, special and boundary patterns. e8m15 picks this form for small
arrays; nothing outside models.numerics should need it.
"""

from __future__ import annotations

# The patterns and window masks both forms use are defined here, as plain ints, and e8m15 imports them
# (it re-exports K1, QNAN, POS_INF, MAG): e8m15 imports this module, so this one imports nothing back.
K1 = 0x3F8000  # 1.0, constant register K1
QNAN = 0x7FC000  # the one NaN every operation produces
POS_INF = 0x7F8000
MAG = 0x7FFFFF  # the magnitude bits of a pattern
_MASK24 = 0xFFFFFF
_MASK48 = (1 << 48) - 1  # the datapath's 48-bit window
_MASK33 = (1 << 33) - 1  # a re-negated sum's magnitude


def pack_lane(mag: int, ebase: int, sign: int, stk: bool, cancel: bool) -> int:
    """e8m15._pack for one lane: mag < 2^48, sign 0/1."""
    if mag == 0:
        return 0 if cancel else sign << 23
    p = mag.bit_length() - 1
    n = (mag << (47 - p)) & _MASK48 if p < 47 else mag
    kept = n >> 32
    q = kept + (((n >> 31) & 1) & (((n & 0x7FFFFFFF) != 0) | bool(stk) | (kept & 1)))
    carry = q >> 16
    if carry == 1:
        q = 0x8000
    e = p + carry + ebase
    sbit = sign << 23
    if e >= 255:
        return sbit | POS_INF
    if e <= 0:
        return sbit
    return sbit | (e << 15) | (q - 0x8000)


def fma_lane(x: int, y: int, z: int) -> int:
    """e8m15._fma for one lane: ``X*Y + Z`` of 24-bit patterns (only the low 24 bits are read)."""
    x &= _MASK24
    y &= _MASK24
    z &= _MASK24
    sx, ex, mx = x >> 23, (x >> 15) & 0xFF, x & 0x7FFF
    sy, ey, my = y >> 23, (y >> 15) & 0xFF, y & 0x7FFF
    sz, ez, mz = z >> 23, (z >> 15) & 0xFF, z & 0x7FFF
    zx, zy, cz = ex == 0, ey == 0, ez == 0
    pz = zx or zy
    if pz:
        ex1 = ey1 = 1
    else:
        ex1, ey1 = ex, ey
    sxy = sx ^ sy
    neg = (sxy ^ sz) == 1
    d = ex1 + ey1 - ez - 110
    byp = d < 0 and not cz
    s = 48 if cz else (0 if byp else min(d, 48))
    ebase = ez - 47 if byp else ex1 + ey1 - 157
    gz = mz | 0x8000
    add = (gz << 32) >> s
    stk = s >= 33 and (gz & ((1 << min(s - 32, 16)) - 1)) != 0
    prod = 0 if (byp or pz) else (mx | 0x8000) * (my | 0x8000)
    total = ((add - prod) if neg else (add + prod)) & _MASK48
    rneg = neg and s != 0 and total >= (1 << 47)
    mag = ((-total) & _MASK33) if rneg else total
    sign = (sxy if rneg else sz) if neg else sxy
    out = pack_lane(mag, ebase, sign, stk, neg and not pz and not cz)
    # the special-value override (e8m15._specials), in its order
    xt, yt, zt = (x & POS_INF) == POS_INF, (y & POS_INF) == POS_INF, (z & POS_INF) == POS_INF
    if not (xt or yt or zt):
        return out
    xi, xn = xt and mx == 0, xt and mx != 0
    yi, yn = yt and my == 0, yt and my != 0
    zi, zn = zt and mz == 0, zt and mz != 0
    pnan = xn or yn or (xi and zy) or (zx and yi)
    pinf = (xi or yi) and not pnan
    if pnan or zn or (pinf and zi and sxy != sz):
        return QNAN
    if pinf or zi:
        return ((sxy if pinf else sz) << 23) | POS_INF
    return out


def cmp_lt_lane(a: int, b: int) -> bool:
    """e8m15.cmp_lt for one lane: a < b on raw sign-magnitude bits, false when either is NaN."""
    a &= _MASK24
    b &= _MASK24
    sa, sb, ma, mb = a >> 23, b >> 23, a & MAG, b & MAG
    if ma > POS_INF or mb > POS_INF:
        return False
    if (ma == 0 and mb == 0) or (ma == mb and sa == sb):
        return False
    if sa != sb:
        return sa == 1
    return ma > mb if sa == 1 else ma < mb


def cmp_gt_lane(a: int, b: int) -> bool:
    """e8m15.cmp_gt for one lane: not NaN, not equal, not less; on these raw sign-magnitude bits that is
    exactly ``b < a`` (a NaN or an equal pair is false both ways), so it is cmp_lt_lane with the operands
    swapped."""
    return cmp_lt_lane(b, a)


def mov_lane(x: int) -> int:
    """``x*1.0 + (+0)`` (VMOV), which returns a finite non-zero x (exponent 1..254) unchanged.

    Why that holds, step by step in fma_lane: the zero addend gives s = 48, so add = 0 and the sticky is
    set; the product is gX * 2^15 exactly, whose magnitude (negated twice when x < 0) PACK normalises
    without a guard bit (bit 14 of gX * 2^15 is 0), so nothing rounds; ebase = eX - 30 and the top bit is
    30, so the exponent is eX. Zeros, Inf and NaN take the datapath (+0, Inf, the canonical NaN). The unit
    tests compare this with the numpy datapath on every exponent.
    """
    x &= _MASK24
    if 0 < (x >> 15) & 0xFF < 0xFF:
        return x
    return fma_lane(x, K1, 0)


def vadd_lane(a: int, c: int) -> int:
    """e8m15.vadd for one lane: a*1.0 + c (with c = +0, VMOV: the reductions' identity combine)."""
    return mov_lane(a) if c & _MASK24 == 0 else fma_lane(a, K1, c)


def vmax_lane(a: int, b: int) -> int:
    """e8m15.vmax for one lane: (lt ? b : a) through the datapath."""
    return mov_lane(b if cmp_lt_lane(a, b) else a)


def vmin_lane(a: int, b: int) -> int:
    """e8m15.vmin for one lane: (gt ? b : a) through the datapath."""
    return mov_lane(b if cmp_gt_lane(a, b) else a)


__all__ = ["cmp_gt_lane", "cmp_lt_lane", "fma_lane", "mov_lane", "pack_lane", "vadd_lane", "vmax_lane",
           "vmin_lane"]
