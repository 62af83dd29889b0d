"""Bit-exact model of the vector core's E8M15 arithmetic (numpy-vectorised).

Every function takes E8M15 bit patterns (any integer array, 24 bits used) and
returns uint32 patterns.  Rules (docs/numerics.md has them in full):

* round to nearest, ties to even, once per instruction (VFMA/VFNMA are fused);
* a result below 2^-126 after rounding is flushed to a zero of the result's
  sign; an exponent-0 operand is a zero whatever its mantissa;
* a result of 2^128 or more after rounding is Inf; Inf and NaN follow IEEE 754
  (Inf-Inf, 0*Inf give NaN); every NaN produced is 0x7FC000;
* an exact zero sum of non-zero terms is +0; (-0)+(-0) is -0;
* VMOV, VNEG, VABS act on the bits only (sign flip / clear), like IEEE's
  copy/negate/abs;
* VEXP2 and VINV are the deterministic algorithms below; VINV is correctly
  rounded, VEXP2 within 0.5003 ulp (measured by models.numerics.accuracy).
"""

from __future__ import annotations

import numpy as np

from .formats import (
    E8M15,
    FINITE,
    INF,
    NAN,
    ZERO,
    e8m15_to_fp16,
    encode,
    fp16_to_e8m15,
    round_pack,
    unpack,
)
from .rounding import I64, align_add, as_i64

QNAN = 0x7FC000
POS_INF = 0x7F8000
NEG_INF = 0xFF8000
NEG_ZERO = 0x800000
SIGN = 0x800000

# Constant registers of the vector core.
K0 = 0x000000  # 0.0
K1 = 0x3F8000  # 1.0
K2 = 0xBF8000  # -1.0

# -log2(e) rounded to E8M15 (nearest even): the VSETI immediate of SiLU.
NEG_LOG2E = int(encode(-1.4426950408889634, E8M15))  # 0xBFB8AA

_FMA_GUARD = 4  # guard bits of the aligned FMA sum (see rounding.align_add)

# VEXP2 constants (fixed point).  x is read as floor(x * 2^28); its fraction f
# (28 bits) splits into a 6-bit table index and a 22-bit remainder y.
EXP2_FRAC_BITS = 28
EXP2_INDEX_BITS = 6
EXP2_Q = 30  # fixed-point scale of table, polynomial and product
# EXP2_TABLE[i] = round(2^(i/64) * 2^30), nearest even (checked in the tests against
# a 60-digit evaluation).
EXP2_TABLE = (
    1073741824, 1085434106, 1097253708, 1109202018, 1121280436, 1133490379, 1145833280, 1158310587,
    1170923762, 1183674286, 1196563654, 1209593378, 1222764986, 1236080024, 1249540052, 1263146652,
    1276901417, 1290805962, 1304861917, 1319070932, 1333434672, 1347954824, 1362633090, 1377471191,
    1392470869, 1407633882, 1422962010, 1438457051, 1454120821, 1469955159, 1485961921, 1502142985,
    1518500250, 1535035634, 1551751076, 1568648537, 1585730000, 1602997467, 1620452965, 1638098541,
    1655936265, 1673968228, 1692196547, 1710623359, 1729250827, 1748081133, 1767116489, 1786359126,
    1805811301, 1825475297, 1845353420, 1865448001, 1885761398, 1906295993, 1927054196, 1948038440,
    1969251188, 1990694927, 2012372174, 2034285470, 2056437387, 2078830522, 2101467502, 2124350982,
)
# Taylor coefficients of 2^z = 1 + c1 z + c2 z^2 + c3 z^3 (z < 2^-6), times 2^30.
EXP2_C1 = 744261118  # ln2
EXP2_C2 = 257941248  # ln2^2 / 2
EXP2_C3 = 59597083  # ln2^3 / 6

INV_NUM_BITS = 34  # VINV divides 2^34 by the 16-bit significand


def _u32(x) -> np.ndarray:
    return as_i64(x).astype(np.uint32)


def _pack(sign, mag, lsb_exp, sticky=False) -> np.ndarray:
    return as_i64(round_pack(sign, mag, lsb_exp, E8M15, sticky))


# --- bit-level ops --------------------------------------------------------------

def vmov(a) -> np.ndarray:
    return _u32(as_i64(a) & 0xFFFFFF)


def vneg(a) -> np.ndarray:
    return _u32((as_i64(a) ^ SIGN) & 0xFFFFFF)


def vabs(a) -> np.ndarray:
    return _u32(as_i64(a) & 0x7FFFFF)


# --- fused multiply-add and its special cases ----------------------------------

def vfma_core(a, b, c, negate_product=False, negate_addend=False) -> np.ndarray:
    """(+-a*b) + (+-c) with one rounding: the datapath behind ADD/SUB/MUL/FMA/FNMA.

    The negate flags may be arrays (per lane), like the operands.
    """
    sa, ma, la, ka = unpack(a, E8M15)
    sb, mb, lb, kb = unpack(b, E8M15)
    sc, mc, lc, kc = unpack(c, E8M15)
    sp = sa ^ sb ^ (as_i64(negate_product) & 1)
    sc = sc ^ (as_i64(negate_addend) & 1)
    # exact product (32 bits, top bit at 31 or 30); addend as 32 bits (top bit at 31)
    mp, lp = ma * mb, la + lb
    sign, mag, lsb = align_add(sp, mp, lp, sc, mc << 16, lc - 16, width=32, guard=_FMA_GUARD)
    p_zero = (ka == ZERO) | (kb == ZERO)
    c_zero = kc == ZERO
    # sign of an exact zero: -0 only for (-0) + (-0); any other exact zero is +0
    zsign = np.where(p_zero & c_zero, sp & sc, 0)
    sign = np.where(mag == 0, zsign, sign)
    out = _pack(sign, mag, lsb)
    p_inf = (ka == INF) | (kb == INF)
    c_inf = kc == INF
    nan = (ka == NAN) | (kb == NAN) | (kc == NAN) | (p_inf & p_zero) | (p_inf & c_inf & (sp != sc))
    out = np.where(p_inf, (sp << 23) | POS_INF, np.where(c_inf, (sc << 23) | POS_INF, out))
    return _u32(np.where(nan, QNAN, out))


def vfma(a, b, c) -> np.ndarray:
    """VFMA: a*b + c, fused (one rounding)."""
    return vfma_core(a, b, c)


def vfnma(a, b, c) -> np.ndarray:
    """VFNMA: c - a*b, fused (one rounding)."""
    return vfma_core(a, b, c, negate_product=True)


def vadd(a, c) -> np.ndarray:
    """VADD: a + c."""
    return vfma_core(a, K1, c)


def vsub(a, c) -> np.ndarray:
    """VSUB: a - c."""
    return vfma_core(a, K1, c, negate_addend=True)


def vmul(a, b) -> np.ndarray:
    """VMUL: a * b (the FMA datapath with addend -0, which leaves every product unchanged)."""
    return vfma_core(a, b, NEG_ZERO)


# --- max / min ------------------------------------------------------------------

def _order_key(a):
    s, sig, lsb, k = unpack(a, E8M15)
    mag = np.where(k == ZERO, 0, as_i64(a) & 0x7FFFFF)
    return np.where(s == 1, -mag - 1, mag), s, k


def _canonical(a, s, k):
    return np.where(k == ZERO, s << 23, as_i64(a) & 0xFFFFFF)


def vmax(a, b) -> np.ndarray:
    """VMAX: the larger operand (-0 < +0); NaN if either is NaN; zeros come out canonical."""
    ka_, sa, ka = _order_key(a)
    kb_, sb, kb = _order_key(b)
    pick_a = ka_ >= kb_
    out = np.where(pick_a, _canonical(a, sa, ka), _canonical(b, sb, kb))
    return _u32(np.where((ka == NAN) | (kb == NAN), QNAN, out))


def vmin(a, b) -> np.ndarray:
    """VMIN: the smaller operand (-0 < +0); NaN if either is NaN; zeros come out canonical."""
    ka_, sa, ka = _order_key(a)
    kb_, sb, kb = _order_key(b)
    pick_a = ka_ <= kb_
    out = np.where(pick_a, _canonical(a, sa, ka), _canonical(b, sb, kb))
    return _u32(np.where((ka == NAN) | (kb == NAN), QNAN, out))


# --- VEXP2 ----------------------------------------------------------------------

def exp2_fixed(f) -> np.ndarray:
    """2^(f / 2^28) in Q.30 for a 28-bit fraction f: table times a cubic (truncating steps)."""
    f = as_i64(f)
    y = f & ((1 << (EXP2_FRAC_BITS - EXP2_INDEX_BITS)) - 1)
    t = np.asarray(EXP2_TABLE, I64)[f >> (EXP2_FRAC_BITS - EXP2_INDEX_BITS)]
    h = (EXP2_C3 * y) >> EXP2_FRAC_BITS
    h = ((h + EXP2_C2) * y) >> EXP2_FRAC_BITS
    h = ((h + EXP2_C1) * y) >> EXP2_FRAC_BITS
    p = (1 << EXP2_Q) + h
    return (t * p) >> EXP2_Q


def vexp2(x) -> np.ndarray:
    """VEXP2: 2^x.

    X = floor(x * 2^28) (|x| < 256); n = X >> 28, f = X mod 2^28;
    r = EXP2_TABLE[f >> 22] * (1 + c1 y + c2 y^2 + c3 y^3) >> 30, all in Q.30
    (y = f mod 2^22 read as y/2^28, Horner with truncating shifts);
    result = r * 2^(n-30) rounded to nearest even,
    Inf from 2^128 up, flushed to +0 below 2^-126.  |x| >= 256: +Inf or +0;
    +-0 -> 1.0; +Inf -> +Inf; -Inf -> +0; NaN -> NaN.
    """
    s, sig, lsb, k = unpack(x, E8M15)
    e = lsb + 15  # unbiased exponent
    sh = e + (EXP2_FRAC_BITS - 15)  # |X| = sig * 2^sh
    big = (k == FINITE) & (e >= 8)
    left = np.clip(sh, 0, EXP2_FRAC_BITS - 8)
    right = np.clip(-sh, 0, 31)
    xa = np.where(sh >= 0, sig << left, sig >> right)
    lost = (sh < 0) & (((sig >> right) << right) != sig)
    X = np.where(s == 1, -(xa + lost), xa)
    n = X >> EXP2_FRAC_BITS
    r = exp2_fixed(X & ((1 << EXP2_FRAC_BITS) - 1))
    out = _pack(0, r, n - EXP2_Q)
    out = np.where(big | (k == INF), np.where(s == 1, 0, POS_INF), out)
    return _u32(np.where(k == NAN, QNAN, out))


# --- VINV -----------------------------------------------------------------------

def vinv(x) -> np.ndarray:
    """VINV: 1/x correctly rounded (nearest even).

    q = floor(2^34 / sig), sticky = remainder != 0 (sig the 16-bit significand);
    1/x = q * 2^(-19-e) rounded once; results below 2^-126 flush to a signed zero.
    1/+-0 = +-Inf, 1/+-Inf = +-0, NaN -> NaN.
    """
    s, sig, lsb, k = unpack(x, E8M15)
    e = lsb + 15
    d = np.where(k == FINITE, sig, 1)
    num = I64(1) << INV_NUM_BITS
    q, rem = num // d, num % d
    out = _pack(s, q, -19 - e, rem != 0)
    out = np.where(k == ZERO, (s << 23) | POS_INF, np.where(k == INF, s << 23, out))
    return _u32(np.where(k == NAN, QNAN, out))


# --- SiLU as the vector core computes it ---------------------------------------

def silu_e8m15(x) -> np.ndarray:
    """SiLU by the five-instruction sequence: VMUL by -log2(e), VEXP2, VADD K1, VINV, VMUL by x."""
    t = vmul(x, NEG_LOG2E)
    e = vexp2(t)
    d = vadd(e, K1)
    r = vinv(d)
    return vmul(r, x)


def silu_fp16(h) -> np.ndarray:
    """FP16 load, silu_e8m15, FP16 store (saturating)."""
    return e8m15_to_fp16(silu_e8m15(fp16_to_e8m15(h)))


def silu_ref(x) -> np.ndarray:
    """float64 reference x / (1 + e^-x)."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


__all__ = [
    "K0", "K1", "K2", "NEG_LOG2E", "QNAN", "POS_INF", "NEG_INF", "NEG_ZERO",
    "vmov", "vneg", "vabs", "vadd", "vsub", "vmul", "vfma", "vfnma", "vfma_core",
    "vmax", "vmin", "vexp2", "vinv", "exp2_fixed", "silu_e8m15", "silu_fp16", "silu_ref",
    "EXP2_TABLE", "EXP2_C1", "EXP2_C2", "EXP2_C3",
]
