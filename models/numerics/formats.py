"""Bit patterns of every number format the machines use, and exact conversions.

Formats (all sign-magnitude, exponent biased, a hidden leading one for normal
numbers; docs/numerics.md has the full rules):

========  ====  ===  ===  ====  ==========================================
name      bits  E    M    bias  zero / specials / overflow
========  ====  ===  ===  ====  ==========================================
FP16        16   5   10    15   IEEE half: subnormals, Inf, NaN
FP32        32   8   23   127   IEEE single: subnormals, Inf, NaN
E8M15       24   8   15   127   vector core: E=0 is a signed zero (no
                                subnormals, flush to zero), E=255 Inf/NaN,
                                overflow -> Inf
ACC         22   7   14    63   S1E7M14 accumulator: E=0 is zero (always
                                +0 when produced), no Inf/NaN, every
                                exponent 1..127 normal, overflow saturates
E5M3         8   5    3    20   block scale: every code is 2^(E-20)*(1+M/8)
========  ====  ===  ===  ====  ==========================================

Everything here rounds to nearest, ties to even, at unbounded exponent; then
a format without subnormals flushes a result below its smallest normal to zero
and a format with them (FP16, FP32) keeps the bits the subnormal grid allows
(gradual underflow, rounded once).  This is the cluster's rule (and a generic
reference encoder); the vector core's own E8M15 arithmetic and its FP16/FP32
load/store follow upstream's datapath instead (units.md V.6/V.7:
``e8m15``, ``e8m15_cvt``).  All functions are numpy-vectorised: bit
patterns go in as any integer array and come out as uint16 (FP16) or uint32.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .rounding import I64, as_i64, bit_length, round_nearest_even

ZERO, FINITE, INF, NAN = 0, 1, 2, 3  # operand classes returned by unpack()


@dataclass(frozen=True)
class Format:
    name: str
    exp_bits: int
    man_bits: int
    bias: int
    specials: bool  # the all-ones exponent encodes Inf (M=0) and NaN (M!=0)
    subnormals: bool  # E=0 encodes subnormals; otherwise E=0 is zero whatever M is
    overflow: str  # 'inf' or 'saturate' (to the largest finite magnitude)
    signed_zero: bool  # False: zero has no sign (read and produced as +0)
    qnan: int | None  # the one NaN pattern produced

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @property
    def prec(self) -> int:
        return self.man_bits + 1

    @property
    def emask(self) -> int:
        return (1 << self.exp_bits) - 1

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite number."""
        return self.emask - (1 if self.specials else 0) - self.bias

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def max_finite(self) -> int:
        return ((self.emax + self.bias) << self.man_bits) | ((1 << self.man_bits) - 1)

    @property
    def inf(self) -> int:
        return self.emask << self.man_bits

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    def out_dtype(self):
        return np.uint16 if self.width <= 16 else np.uint32


FP16 = Format("FP16", 5, 10, 15, True, True, "inf", True, 0x7E00)
FP32 = Format("FP32", 8, 23, 127, True, True, "inf", True, 0x7FC00000)
E8M15 = Format("E8M15", 8, 15, 127, True, False, "inf", True, 0x7FC000)
ACC = Format("S1E7M14", 7, 14, 63, False, False, "saturate", False, None)

FP16_MAX = 0x7BFF  # 65504
FP16_NEG_MAX = 0xFBFF


def unpack(bits, fmt: Format):
    """Split patterns into ``(sign, sig, lsb_exp, cls)``: value = (-1)^sign * sig * 2^lsb_exp.

    ``sig`` includes the hidden one; ``cls`` is ZERO, FINITE, INF or NAN.
    """
    b = as_i64(bits)
    m = fmt.man_bits
    s = (b >> (fmt.width - 1)) & 1
    e = (b >> m) & fmt.emask
    f = b & ((1 << m) - 1)
    special = (e == fmt.emask) if fmt.specials else np.zeros(b.shape, bool)
    if fmt.subnormals:
        zero = (e == 0) & (f == 0)
        sig = np.where(e == 0, f, f | (1 << m))
        lsb = np.where(e == 0, fmt.emin, e - fmt.bias) - m
    else:
        zero = e == 0
        sig = np.where(zero, 0, f | (1 << m))
        lsb = e - fmt.bias - m
    cls = np.where(special, np.where(f == 0, INF, NAN), np.where(zero, ZERO, FINITE))
    sig = np.where(cls == FINITE, sig, 0)
    if not fmt.signed_zero:
        s = np.where(zero, 0, s)
    return s, sig, lsb, cls


def pack_rounded(sign, sig, out_lsb, fmt: Format, overflow: str | None = None) -> np.ndarray:
    """Pattern of ``(-1)^sign * sig * 2^out_lsb`` already rounded by round_for().

    Applies the format's flush-to-zero (no subnormals) and overflow rule.
    """
    overflow = overflow or fmt.overflow
    sign, sig, out_lsb = (as_i64(v) for v in (sign, sig, out_lsb))
    m = fmt.man_bits
    msb = out_lsb + bit_length(sig) - 1
    zero = (sig == 0) | ((msb < fmt.emin) & (not fmt.subnormals))
    big = (msb > fmt.emax) & ~zero
    sbit = sign << (fmt.width - 1)
    subn = sig < (1 << m)  # only reachable with subnormals (or zero)
    normal = ((msb + fmt.bias) << m) | (sig & ((1 << m) - 1))
    body = np.where(subn, sig, normal)
    ovf = fmt.inf if overflow == "inf" else fmt.max_finite
    zsign = sbit if fmt.signed_zero else 0
    out = np.where(zero, zsign, np.where(big, sbit | ovf, sbit | body))
    return out.astype(fmt.out_dtype())


def round_for(mag, lsb_exp, fmt: Format, sticky=False):
    """Round an exact magnitude to the format's precision (its subnormal floor if any)."""
    emin_lsb = fmt.emin - fmt.man_bits if fmt.subnormals else None
    return round_nearest_even(mag, lsb_exp, fmt.prec, emin_lsb, sticky)


def round_pack(sign, mag, lsb_exp, fmt: Format, sticky=False, overflow: str | None = None) -> np.ndarray:
    """Pattern of the exact value ``(-1)^sign * mag * 2^lsb_exp`` rounded once into ``fmt``."""
    q, out = round_for(mag, lsb_exp, fmt, sticky)
    return pack_rounded(sign, q, out, fmt, overflow)


def convert(bits, src: Format, dst: Format, overflow: str | None = None) -> np.ndarray:
    """Convert patterns between formats: one rounding, dst's underflow/overflow rules.

    NaN becomes dst's canonical NaN; Inf becomes dst's Inf, or its largest
    finite number when the overflow rule is 'saturate'.
    """
    overflow = overflow or dst.overflow
    s, sig, lsb, cls = unpack(bits, src)
    out = as_i64(round_pack(s, sig, lsb, dst, overflow=overflow))
    sbit = s << (dst.width - 1)
    inf = dst.inf if overflow == "inf" else dst.max_finite
    out = np.where(cls == INF, sbit | inf, out)
    if dst.qnan is not None:
        out = np.where(cls == NAN, dst.qnan, out)
    elif np.any(cls == NAN):
        raise ValueError(f"{dst.name} has no NaN")
    return out.astype(dst.out_dtype())


TABLE_WIDTH = 16  # formats this wide or narrower (FP16) decode by a table of every pattern


def decode(bits, fmt: Format) -> np.ndarray:
    """Exact float64 value of each pattern (NaN, +-inf included); bits above the format's width are ignored.

    A format of at most TABLE_WIDTH bits is decoded by a look-up in :func:`decode_fields` of all its patterns
    (made once): the error analysis of a bundle decodes every FP16 lane a kernel reads or writes, and the
    arithmetic costs some 60 us a call whatever its size."""
    if fmt.width <= TABLE_WIDTH:
        return _decode_table(fmt)[as_i64(bits) & ((1 << fmt.width) - 1)]
    return decode_fields(bits, fmt)


@functools.cache
def _decode_table(fmt: Format) -> np.ndarray:
    table = decode_fields(np.arange(1 << fmt.width, dtype=I64), fmt)
    table.setflags(write=False)
    return table


def decode_fields(bits, fmt: Format) -> np.ndarray:
    """:func:`decode` by the arithmetic on the pattern's fields, for any width."""
    s, sig, lsb, cls = unpack(bits, fmt)
    mag = np.ldexp(sig.astype(np.float64), lsb.astype(np.int32))
    mag = np.where(cls == INF, np.inf, np.where(cls == NAN, np.nan, mag))
    return np.where(s == 1, -mag, mag)


def float_parts(x):
    """Exact ``(sign, mag, lsb_exp, cls)`` of float64 values (mag < 2**53)."""
    x = np.asarray(x, np.float64)
    sign = np.signbit(x).astype(I64)
    fin = np.isfinite(x)
    frac, e = np.frexp(np.where(fin, np.abs(x), 0.0))
    mag = np.ldexp(frac, 53).astype(I64)
    cls = np.where(np.isnan(x), NAN, np.where(np.isinf(x), INF, np.where(x == 0, ZERO, FINITE)))
    return sign, mag, e.astype(I64) - 53, cls


def encode(x, fmt: Format, overflow: str | None = None) -> np.ndarray:
    """Pattern of float64 values rounded once into ``fmt`` (nearest even)."""
    overflow = overflow or fmt.overflow
    s, mag, lsb, cls = float_parts(x)
    out = as_i64(round_pack(s, mag, lsb, fmt, overflow=overflow))
    sbit = s << (fmt.width - 1)
    inf = fmt.inf if (overflow == "inf" and fmt.specials) else fmt.max_finite
    out = np.where(cls == INF, sbit | inf, out)
    if np.any(cls == NAN):
        if fmt.qnan is None:
            raise ValueError(f"{fmt.name} has no NaN")
        out = np.where(cls == NAN, fmt.qnan, out)
    return out.astype(fmt.out_dtype())


# --- E5M3 block scales ----------------------------------------------------------

E5M3_ONE = 0xA0  # E=20, M=0: 1.0


def e5m3_parts(code):
    """``(E, M)`` fields of E5M3 codes {E[4:0], M[2:0]}."""
    c = as_i64(code)
    return (c >> 3) & 0x1F, c & 0x7


def e5m3_decode(code) -> np.ndarray:
    """Value 2^(E-20) * (1 + M/8) of each code (every code is a positive normal number)."""
    e, m = e5m3_parts(code)
    return np.ldexp((8 + m).astype(np.float64), (e - 23).astype(np.int32))


def e5m3_encode(x) -> np.ndarray:
    """Nearest E5M3 code (ties to even) of positive values, clamped to [2^-20, 2^11*1.875]."""
    x = np.asarray(x, np.float64)
    if np.any(~(x > 0)):
        raise ValueError("E5M3 holds positive values only")
    s, mag, lsb, _ = float_parts(x)
    q, out = round_nearest_even(mag, lsb, 4)
    e = out + 3 + 20
    code = (e << 3) | (q & 7)
    return np.where(e < 0, 0, np.where(e > 31, 0xFF, code)).astype(np.uint8)
