"""The vector core's load and store conversions, bit for bit as units.md V.7 fixes them.

Upstream hardware (``vector/vec_cvt.v``) converts with plain field arithmetic,
and a model that runs upstream-compiled programs must produce the same bits,
so every rule here is the spec's rule, not a generic IEEE conversion:

* FP16 -> E8M15 (VLD) is exact; NaN payloads move up five bits, sign kept.
* E8M15 -> FP16 (VST) rounds to nearest even, **saturates** finite overflow to
  +-0x7BFF but stores Inf as Inf, and stores a NaN as ``{s, 31, 1, m[13:5]}``.
* FP32 -> E8M15 (VLD FP32) flushes every FP32 subnormal to a signed zero,
  rounds to nearest even on mantissa bit 7, and keeps 14 payload bits of a NaN.
* E8M15 -> FP32 (VST FP32) is exact (``{s, e, m << 8}``; ``e = 0`` gives +-0).

All four are numpy-vectorised: any integer array or scalar of patterns in (the
low 16, 24 or 32 bits are used), np.uint16 (FP16) or np.uint32 out, same shape.
"""

from __future__ import annotations

import numpy as np

from .e8m15 import _C0, _C1, _C15, _C23, _C31, _CFF, _GUARD15, _M15
from .rounding import clamp, const, low_bits, round_half_even, top_bit


# --------------------------------------------------------------------- FP16
def fp16_to_e8m15(h) -> np.ndarray:
    """VLD FP16: exact. +-0 stays +-0; Inf/NaN -> ``{s, 0xFF, m10 * 32}``; normal ->
    ``{s, e5 + 112, m10 * 32}``; a subnormal with top mantissa bit p becomes the normal
    ``{s, 103 + p, (m10 << (15 - p)) mod 2^15}``.

    A lookup in the table of all 65536 results (:func:`fp16_to_e8m15_fields` on each, made at import):
    every VLD converts a register's worth of lanes, and one take is cheaper than the field arithmetic."""
    return _FP16_TO_E8M15[low_bits(h, 16)]


def fp16_to_e8m15_fields(h) -> np.ndarray:
    """:func:`fp16_to_e8m15` by the field arithmetic of V.7 (what its table holds)."""
    h = low_bits(h, 16)
    s, e5, m10 = h >> 15, (h >> 10) & 0x1F, h & 0x3FF
    p = top_bit(m10)
    normal = ((e5 + 112) << 15) | (m10 << 5)
    special = (0xFF << 15) | (m10 << 5)
    sub = ((103 + p) << 15) | ((m10 << clamp(15 - p, 0, 15)) & 0x7FFF)
    body = np.where(e5 == 0x1F, special, np.where(e5 != 0, normal, np.where(m10 != 0, sub, 0)))
    return ((s << 23) | body).astype(np.uint32)


_FP16_TO_E8M15 = fp16_to_e8m15_fields(np.arange(1 << 16))
_FP16_TO_E8M15.setflags(write=False)


def _fp16_subnormal(g: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The subnormal store path: ``g * 2^32`` shifted right by ``min(118 - e, 31)``, bits
    [42:32] kept, RNE on bit 31 and below. A carry to 0x400 lands in the exponent field,
    which is exactly the smallest normal 2^-14."""
    t = (g << 32) >> clamp(118 - e, 0, 31)
    return round_half_even((t >> 32) & 0x7FF, (t >> 31) & 1, (t & 0x7FFFFFFF) != 0)


# VST's constants as 0-d arrays (rounding.const says why), those e8m15's datapath also uses imported from
# there; its subnormal path runs only when a lane needs it
_C4, _C5, _C10, _C11, _C112 = (const(v) for v in (4, 5, 10, 11, 112))
_M4, _M9 = const(0xF), const(0x1FF)
_H400, _HMAX, _HNAN, _HINF = const(0x400), const(0x7BFF), const(0x7E00), const(0x7C00)


def e8m15_to_fp16(x) -> np.ndarray:
    """VST FP16. e = 0 -> +-0; NaN -> ``{s, 31, 1, m[13:5]}``; Inf -> +-Inf; otherwise the
    16-bit significand rounded RNE to 11 bits with ``e5 = e - 112 + carry``; ``e5 >= 31``
    saturates to +-0x7BFF (finite values never become Inf); ``e5 <= 0`` takes the subnormal
    path."""
    x = low_bits(x, 24)
    s, e, m = x >> _C23, (x >> _C15) & _CFF, x & _M15
    g = m | _GUARD15
    q = round_half_even(g >> _C5, (g >> _C4) & _C1, (g & _M4) != _C0)  # RNE on bit 4, sticky below
    carry = q >> _C11
    e5 = e - _C112 + carry
    normal = (e5 << _C10) | (q & (_H400 - _C1))  # a carry leaves the fraction 0
    low = e5 <= _C0
    small = np.where(low, _fp16_subnormal(g, e), _C0) if low.any() else _C0
    finite = np.where(e5 >= _C31, _HMAX, np.where(low, small, normal))
    special = np.where(m != _C0, _HNAN | ((m >> _C5) & _M9), _HINF)
    body = np.where(e == _C0, _C0, np.where(e == _CFF, special, finite))
    return ((s << _C15) | body).astype(np.uint16)


# --------------------------------------------------------------------- FP32
def fp32_to_e8m15(f) -> np.ndarray:
    """VLD FP32. e = 0 (zero or subnormal) -> +-0; NaN -> ``{s, 0xFF, 1, m[21:8]}``;
    Inf -> +-Inf; otherwise the mantissa rounded RNE on bit 7 to 15 bits, a carry raising
    the exponent (out of e = 254 it gives +-Inf, since the mantissa is then 0)."""
    f = low_bits(f, 32)
    s, e, m = f >> 31, (f >> 23) & 0xFF, f & 0x7FFFFF
    q = round_half_even(m >> 8, (m >> 7) & 1, (m & 0x7F) != 0)
    finite = ((e + (q >> 15)) << 15) | (q & 0x7FFF)
    nan = (0xFF << 15) | 0x4000 | ((m >> 8) & 0x3FFF)
    special = np.where(m != 0, nan, 0xFF << 15)
    body = np.where(e == 0, 0, np.where(e == 0xFF, special, finite))
    return ((s << 23) | body).astype(np.uint32)


def e8m15_to_fp32(x) -> np.ndarray:
    """VST FP32, exact: e = 0 -> +-0, otherwise ``{s, e, m * 256}`` (Inf and NaN included,
    so a NaN keeps its payload)."""
    x = low_bits(x, 24)
    s, e, m = x >> 23, (x >> 15) & 0xFF, x & 0x7FFF
    body = np.where(e == 0, 0, (e << 23) | (m << 8))
    return ((s << 31) | body).astype(np.uint32)


__all__ = ["fp16_to_e8m15", "fp16_to_e8m15_fields", "e8m15_to_fp16", "fp32_to_e8m15", "e8m15_to_fp32"]
