"""Bit-exact model of the cluster's accumulator arithmetic, as units.md C.7 fixes it.

Everything here is **fixed by units.md C.7** (upstream's accumulator, checked
bit-exactly against upstream's RTL), not chosen by us; the quirks A1-A3 of
C.7.6 are reproduced:

* C.7.2 the K-block dot product ``D[i][j] = sum_k qa[i][k] * qb[k][j]``, an
  exact integer (|D| <= 2^17);
* C.7.3 :func:`acc_convert`: D with the A-lane and B-lane scale bytes and the
  GEMM's anchor into S1E7M14: ``|D| * (8+Ma) * (8+Mb)`` rounded to 15
  significant bits (nearest even), biased exponent ``p + Ea + Eb - anchor - 6 +
  63`` taken **mod 128** (A1: no overflow or underflow handling);
* C.7.4 :func:`acc_add`: the accumulator add with 8 guard bits, a shift capped
  at 23 and a **plain sticky** (A2: a retained difference on a midpoint rounds
  up in magnitude), +0 on cancellation and underflow (E <= 0), and any result
  reaching binade 127 replaced by the maximum magnitude (A3);
  :func:`acc_load` is LOAD = ADD(0, X), which passes a converted value with
  e = 127 through unchanged (and a wrapped e = 0 as +0);
* C.7.5 :func:`acc_emit`: S1E7M14 -> FP16, nearest even at mantissa bit 4,
  flushed below the FP16 normal range (no subnormals), **saturating** to
  +-65504 (never Inf).

Every function is numpy-vectorised over integer bit patterns (int64 inside).
The RTL twins are rtl/cluster/acc_convert.v, acc_add.v, acc_to_fp16.v and
cu_gemm_subtile.v (tests/unit/numerics/test_arith_rtl.py holds them equal).
"""

from __future__ import annotations

import numpy as np

from .formats import e5m3_decode, e5m3_parts
from .layout import pack_fp16_subtile, pack_fp16_subtiles, unpack_a_entry, unpack_b_entry
from .rounding import as_i64, clamp, top_bit

ANCHOR_NEUTRAL = 40
ACC_E_TOP = 127  # the top binade of S1E7M14 (an ordinary binade: no Inf, no NaN)
ACC_MAX_MAG = (ACC_E_TOP << 14) | 0x3FFF  # {127, 0x3FFF}: what quirk A3 substitutes
FP16_MAX_MAG = (0x1E << 10) | 0x3FF  # 65504


def _fields(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s, e, m) of S1E7M14 patterns (bits above 21 ignored: a 22-bit port)."""
    x = as_i64(x)
    return (x >> 21) & 1, (x >> 14) & 0x7F, x & 0x3FFF


def dot_blocks(a, b) -> np.ndarray:
    """C.7.2: the exact integer K-block dot products, (..., 4, 32) x (..., 32, 4) -> (..., 4, 4)."""
    return np.matmul(as_i64(a), as_i64(b))


def acc_convert(dot, scale_a, scale_b, anchor) -> np.ndarray:
    """C.7.3: exact dot products D with scale bytes (A lane, B lane) and the anchor -> S1E7M14 patterns X.

    ``dot``, ``scale_a``, ``scale_b`` and ``anchor`` broadcast against each other (per lane (i, j): the
    scale of A lane i and of B lane j).
    """
    d = as_i64(dot)
    anchor = as_i64(anchor)
    if np.any((anchor < 0) | (anchor > 255)):
        raise ValueError("anchor is an 8-bit field (0..255)")
    ea, ma = e5m3_parts(scale_a)
    eb, mb = e5m3_parts(scale_b)
    mag = np.abs(d) * (8 + ma) * (8 + mb)  # exact, < 2^25
    p = top_bit(mag)  # 0..24 (-1 for zero, masked below); below 2^53, so frexp's exact priority encoder
    n = mag << clamp(29 - p, 0, 29)  # leading one at bit 29
    q = n >> 15
    g = (n >> 14) & 1
    s = (n & 0x3FFF) != 0
    q = q + (g & (s | (q & 1)))
    e = (p + ea + eb - anchor - 6 + 63) % 128  # quirk A1: no clamp
    carry = q == (1 << 15)
    e = np.where(carry, (e + 1) % 128, e)
    frac = np.where(carry, 0, q - (1 << 14))
    x = (d < 0).astype(np.int64) << 21 | e << 14 | frac
    return np.where(mag == 0, 0, x).astype(np.uint32)


def acc_add(t, x) -> np.ndarray:
    """C.7.4: R = ADD(T, X) on S1E7M14 patterns (the GEMM ADD / ADD_EMIT and ADD_PEER step)."""
    t, x = np.broadcast_arrays(as_i64(t) & 0x3FFFFF, as_i64(x) & 0x3FFFFF)
    st, et, mt = _fields(t)
    sx, ex, mx = _fields(x)
    t_big = (et > ex) | ((et == ex) & (mt >= mx))  # (eT, mT) >= (eX, mX), lexicographic
    s_big, e_big, m_big = (np.where(t_big, a, b) for a, b in ((st, sx), (et, ex), (mt, mx)))
    s_sml, e_sml, m_sml = (np.where(t_big, b, a) for a, b in ((st, sx), (et, ex), (mt, mx)))
    sub = s_big != s_sml
    d = np.minimum(e_big - e_sml, 23)
    bg = ((1 << 14) + m_big) << 8
    sm = ((1 << 14) + m_sml) << 8
    sh = sm >> d
    lost = (sm & ((np.int64(1) << d) - 1)) != 0
    total = np.where(sub, bg - sh, bg + sh)  # 0 <= total < 2^24
    top = top_bit(total)  # total < 2^24
    n = total << clamp(23 - top, 0, 23)
    e_res = e_big + top - 22
    q = (n >> 9) & 0x7FFF
    g = (n >> 8) & 1
    sticky = lost | ((n & 0xFF) != 0)  # quirk A2: the plain sticky
    up = (g == 1) & (sticky | ((q & 1) == 1))
    e_res = np.where(up & (q == 0x7FFF), e_res + 1, e_res)
    q = (q + up) & 0x7FFF
    r = np.where(e_res <= 0, 0,
                 np.where(e_res >= ACC_E_TOP, s_big << 21 | ACC_MAX_MAG,  # quirk A3
                          s_big << 21 | (e_res & 0x7F) << 14 | (q & 0x3FFF)))
    r = np.where(total == 0, 0, r)
    r = np.where(ex == 0, t, r)
    r = np.where(et == 0, x, r)
    r = np.where((et == 0) & (ex == 0), 0, r)
    return r.astype(np.uint32)


def acc_load(x) -> np.ndarray:
    """LOAD = ADD(0, X): X unchanged (e = 127 passes through), a pattern with e = 0 as +0.

    Written out rather than through :func:`acc_add`: with T = 0 the add's own
    overrides (T zero gives X, both zero give +0) are all that applies, and
    every GEMM block goes through here.
    """
    x = as_i64(x) & 0x3FFFFF
    return np.where(((x >> 14) & 0x7F) == 0, 0, x).astype(np.uint32)


def acc_emit(x) -> np.ndarray:
    """C.7.5: S1E7M14 -> FP16, saturating (ADD_EMIT's value and OP_EMIT's tile lane)."""
    s, e, m = _fields(x)
    up = (((m >> 3) & 1) == 1) & (((m & 7) != 0) | (((m >> 4) & 1) == 1))
    f = (m >> 4) + up  # 11 bits
    e16 = e - 48
    carry = f == (1 << 10)
    e16 = np.where(carry, e16 + 1, e16)
    f = np.where(carry, 0, f)
    h = np.where(e16 <= 0, 0, np.where(e16 >= 31, FP16_MAX_MAG, (e16 & 0x1F) << 10 | (f & 0x3FF)))
    h = np.where(e == 0, 0, h)
    return (s << 15 | h).astype(np.uint16)


acc_to_fp16 = acc_emit  # the name the kernel models use


def gemm_product(a, b, scale_a, scale_b, anchor: int) -> np.ndarray:
    """LOAD of one entry pair: (..., 4, 32) x (..., 32, 4) -> (..., 4, 4) S1E7M14 patterns (C.7.2-C.7.4)."""
    sa, sb = as_i64(scale_a), as_i64(scale_b)
    x = acc_convert(dot_blocks(a, b), sa[..., :, None], sb[..., None, :], anchor)
    return acc_load(x)


def gemm_step(a, b, scale_a, scale_b, anchor: int, acc=None, accumulate=False) -> np.ndarray:
    """One GEMM issue on (batches of) sub-tiles: LOAD (accumulate false) or ADD of the block into ``acc``."""
    prod = gemm_product(a, b, scale_a, scale_b, anchor)
    if acc is None:
        if np.any(accumulate):
            raise ValueError("accumulate needs the accumulator tile")
        return prod
    acc_mask = np.asarray(accumulate, bool)
    if acc_mask.ndim:
        acc_mask = acc_mask[..., None, None]
    # ADD(T, X) equals ADD(T, LOAD(X)): a block X with e = 0 leaves T unchanged either way
    return np.where(acc_mask, acc_add(acc, prod), prod).astype(np.uint32)


def gemm_entry(a_granules, b_granules, anchor: int, acc=None, accumulate=False) -> np.ndarray:
    """The same from L1 granules (4 ints each, scales from granule 0) -> 4x4 S1E7M14 patterns."""
    a, sa = unpack_a_entry(a_granules)
    b, sb = unpack_b_entry(b_granules)
    return gemm_step(a, b, sa, sb, anchor, acc, accumulate)


def emit_granule(acc_tile) -> int:
    """One 4x4 sub-tile -> its 256-bit FP16 granule (lane g = 4r + c at [16g +: 16])."""
    return pack_fp16_subtile(acc_emit(np.asarray(acc_tile).reshape(4, 4)))


def emit_granules(tiles) -> list[int]:
    """:func:`emit_granule` of each of a stack of sub-tiles (T, 4, 4), with one emit over all of them: a GEMM
    emits every tile it swept."""
    return pack_fp16_subtiles(acc_emit(np.asarray(tiles).reshape(-1, 4, 4)))


def gemm_reference(a, b, scale_a, scale_b, anchor: int) -> np.ndarray:
    """float64 of the exact scaled product (C.6: dot * (8+Ma)(8+Mb)/64 * 2^(Ea+Eb-anchor)); exact here."""
    dot = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
    sa = e5m3_decode(scale_a)[..., :, None]
    sb = e5m3_decode(scale_b)[..., None, :]
    return dot * sa * sb * np.ldexp(1.0, ANCHOR_NEUTRAL - int(anchor))
