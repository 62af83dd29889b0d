"""Bit-exact model of the cluster compute unit's arithmetic: int7 GEMM into S1E7M14.

One GEMM step takes an A entry (4x32 int7, one E5M3 scale per row/lane i) and
a B entry (32x4 int7, one E5M3 scale per column j) and produces a 4x4 sub-tile:

    dot[i,j]  = sum_k A[i,k] * B[k,j]                       exact integer
    P[i,j]    = dot[i,j] * (8 + MA[i]) * (8 + MB[j])         exact integer (< 2^25)
    value     = P[i,j] * 2^(EA[i] + EB[j] - anchor - 6)
              = dot * scaleA[i] * scaleB[j] * 2^(40 - anchor)

i.e. the A-side and B-side scales multiply (both apply, per row and per column)
and the 8-bit GEMM field ``anchor`` is a power-of-two alignment: 40 is neutral,
so 0xA0 scales (1.0) with anchor 40 give the exact integer dot product.  The
value is rounded once into S1E7M14 (nearest even, saturating, flushed to +0
below 2^-62).  LOAD (accumulate=0) stores it; ADD (accumulate=1) stores
acc + it, rounded once more (nearest even, same rules).  Emit converts each
element to FP16 (models.numerics.formats.acc_to_fp16).
"""

from __future__ import annotations

import numpy as np

from .formats import ACC, acc_to_fp16, e5m3_decode, e5m3_parts, round_pack, unpack
from .layout import pack_fp16_subtile, unpack_a_entry, unpack_b_entry
from .rounding import as_i64, align_add

ANCHOR_NEUTRAL = 40
_ACC_GUARD = 4


def acc_add(x, y) -> np.ndarray:
    """S1E7M14 x + y, nearest even; saturates; below 2^-62 (and exact zero) -> +0."""
    sx, mx, lx, _ = unpack(x, ACC)
    sy, my, ly, _ = unpack(y, ACC)
    sign, mag, lsb = align_add(sx, mx, lx, sy, my, ly, width=ACC.prec, guard=_ACC_GUARD)
    return round_pack(sign, mag, lsb, ACC)


def gemm_product(a, b, scale_a, scale_b, anchor: int) -> np.ndarray:
    """LOAD value of one entry pair: (..., 4, 32) x (..., 32, 4) -> (..., 4, 4) S1E7M14 patterns."""
    if not 0 <= int(anchor) <= 255:
        raise ValueError("anchor is an 8-bit field (0..255)")
    dot = np.matmul(as_i64(a), as_i64(b))
    ea, ma = e5m3_parts(scale_a)
    eb, mb = e5m3_parts(scale_b)
    p = dot * (8 + ma)[..., :, None] * (8 + mb)[..., None, :]
    lsb = ea[..., :, None] + eb[..., None, :] - int(anchor) - 6
    return round_pack((p < 0).astype(np.int64), np.abs(p), lsb, ACC)


def gemm_step(a, b, scale_a, scale_b, anchor: int, acc=None, accumulate=False) -> np.ndarray:
    """One GEMM step on (batches of) sub-tiles: LOAD (accumulate false) or ADD into ``acc``."""
    prod = gemm_product(a, b, scale_a, scale_b, anchor)
    if acc is None:
        if np.any(accumulate):
            raise ValueError("accumulate needs the accumulator tile")
        return prod
    acc = as_i64(acc)
    acc_mask = np.asarray(accumulate, bool)
    if acc_mask.ndim:
        acc_mask = acc_mask[..., None, None]
    return np.where(acc_mask, acc_add(acc, prod), prod).astype(np.uint32)


def gemm_entry(a_granules, b_granules, anchor: int, acc=None, accumulate=False) -> np.ndarray:
    """The same from L1 granules (4 ints each, scales in granule 0) -> 4x4 S1E7M14 patterns."""
    a, sa = unpack_a_entry(a_granules)
    b, sb = unpack_b_entry(b_granules)
    return gemm_step(a, b, sa, sb, anchor, acc, accumulate)


def emit_granule(acc_tile) -> int:
    """OP_EMIT of one 4x4 accumulator sub-tile -> the 256-bit FP16 granule."""
    return pack_fp16_subtile(acc_to_fp16(np.asarray(acc_tile).reshape(4, 4)))


def gemm_reference(a, b, scale_a, scale_b, anchor: int) -> np.ndarray:
    """float64 value of the exact product (exact: < 2^26 significant bits, in range)."""
    dot = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    sa = e5m3_decode(scale_a)[..., :, None]
    sb = e5m3_decode(scale_b)[..., None, :]
    return dot * sa * sb * np.ldexp(1.0, ANCHOR_NEUTRAL - int(anchor))


