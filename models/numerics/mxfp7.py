"""FP16 -> MXFP7 quantisation of one memory-agent entry (units.md M.3), packed as C.4 words.

Why it exists: a cluster's FILL asks the memory agent for QUANT entry reads, and
the agent must hand back exactly the words upstream's quantiser produces; the
cluster accepts anything and raises no fault, so a wrong bit here only shows up
as a wrong GEMM much later. This module is the one Python statement of that
transform; models/mag/model.py serves it and rtl/mag/mag_quant.v must equal it bit
for bit (tests/unit/mag/test_mag_quant_rtl.py).

An entry is 256 bytes = 8 DRAM words = 128 FP16 values; element (lane L, k) is
at byte ``64L + 2k`` (little-endian), L = 0..3, k = 0..31. Each lane gets one
scale byte ``{(sexp+20)[4:0], (sm-8)[2:0]}`` (value ``2^sexp * sm/8``) from its
peak magnitude, and each element a saturating 7-bit code. Output word w
(0..3) holds K = 8w..8w+7 of all four lanes: 32 seven-bit fields, field j at
bits [255-7j : 249-7j], in A packing (BLAYOUT 0: lane j div 8, K = 8w + j mod
8) or B packing (BLAYOUT 1: K = 8w + j div 4, lane j mod 4), and the four
scale bytes at [31-8L : 24-8L] in every word.

Everything is numpy-vectorised over leading batch dimensions, so a bench can
convert thousands of entries at once. Words leave as ``(..., 4, 32)`` uint8
arrays in big-endian byte order (byte 0 = bits [255:248]) or as Python ints.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .fields7 import FIELD_BYTES, pack7
from .rounding import clamp, const, top_bit

__all__ = [
    "ENTRY_BYTES", "ENTRY_DRAM_WORDS", "LANES", "K_PER_LANE", "OUT_WORDS", "ZERO_LANE_SCALE", "RECIPROCAL",
    "entry_halves", "decode", "normalise", "lane_scale", "scale_fields", "quantise_elements", "quantise",
    "pack_words", "word_ints", "quantise_entries", "quantise_dram_words",
]

ENTRY_BYTES = 256
"""Bytes of one entry in DRAM (128 FP16 values)."""
ENTRY_DRAM_WORDS = 8
"""DRAM words (256 bits) one QUANT entry reads."""
LANES = 4
K_PER_LANE = 32
OUT_WORDS = 4
"""Response words of one QUANT entry."""
ZERO_LANE_SCALE = 0xA0
"""The scale byte of a lane whose 32 magnitudes are all zero (sexp 0, sm 8)."""
RECIPROCAL = np.array([4096, 3641, 3277, 2979, 2731, 2520, 2341, 2185], dtype=np.int64)
"""rec[sm - 8] for sm = 8..15: 2^15 / sm rounded to nearest, except 13 -> 2520 (not 2521), as the spec's table."""

_MAG_MAX = 63
# the per-element constants as 0-d arrays: rounding.const's shared read-only ones (it says why), the same
# objects e8m15 binds for 0, 1, 15, 0xFF, 0x7FFF (not imported from there: the memory agent's quantiser has
# no business loading the vector core's datapath)
_K0, _K1, _K7, _K8, _K10, _K15, _K1024 = (const(v) for v in (0, 1, 7, 8, 10, 15, 1024))
_K_1F, _K_FF, _K_3FF, _K_7FFF, _K_MAG_MAX = const(0x1F), const(0xFF), const(0x3FF), const(0x7FFF), const(_MAG_MAX)

# Word w, field j -> (lane, K) of the entry, for A and B packing (C.4).
_W = np.arange(OUT_WORDS)[:, None]
_J = np.arange(32)[None, :]
_A_LANE, _A_K = np.broadcast_to(_J // 8, (4, 32)), 8 * _W + _J % 8
_B_LANE, _B_K = np.broadcast_to(_J % 4, (4, 32)), 8 * _W + _J // 4


def entry_halves(raw: np.ndarray) -> np.ndarray:
    """Entry bytes ``(..., 256)`` uint8 -> FP16 patterns ``(..., 4, 32)`` uint16, element (L, k) at byte 64L+2k."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    if raw.shape[-1] != ENTRY_BYTES:
        raise ValueError(f"an entry is {ENTRY_BYTES} bytes, got a last dimension of {raw.shape[-1]}")
    halves = raw.view("<u2").astype(np.uint16)
    return halves.reshape(raw.shape[:-1] + (LANES, K_PER_LANE))


def decode(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """dec(h): (e, sig) of the magnitude bits; exponent field 0 -> (1, m10), else (e5, 1024 + m10).

    The sign is ignored and Inf/NaN decode as ordinary numbers with e5 = 31.
    """
    h = np.asarray(h).astype(np.int64)
    e5 = (h >> _K10) & _K_1F
    m10 = h & _K_3FF
    sub = e5 == _K0
    return np.where(sub, _K1, e5), np.where(sub, m10, _K1024 + m10)


def normalise(e: np.ndarray, sig: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The peak's normalisation loop: while 0 < sig < 1024: sig <<= 1, e -= 1 (at most 10 steps).

    In one step: a non-zero sig below 1024 shifts by 10 minus its top bit index (exact below 2^53).
    """
    e, sig = np.array(e, dtype=np.int64), np.array(sig, dtype=np.int64)
    k = np.where(sig > 0, np.maximum(10 - top_bit(sig), 0), 0)
    return np.asarray(e - k), np.asarray(sig << k)


def lane_scale(h: np.ndarray) -> np.ndarray:
    """Scale byte of each lane: ``h`` (..., 4, 32) FP16 patterns -> (..., 4) uint8 (M.3, per lane)."""
    peak = (np.asarray(h).astype(np.int64) & 0x7FFF).max(axis=-1)   # unsigned compare of h[14:0]
    e, sig = normalise(*decode(peak))
    zero = sig == 0
    big = sig > 1890
    sexp = np.where(zero, 0, np.where(big, e - 20, e - 21))
    sm_small = clamp((sig + 125) // 126, 9, 15)                    # ceil(sig / 126) into [9, 15]
    sm = np.where(zero, 8, np.where(big, np.where(sig > 2016, 9, 8), sm_small))
    sexp = clamp(sexp, -20, 11)
    return ((((sexp + 20) & 0x1F) << 3) | ((sm - 8) & 0x7)).astype(np.uint8)


def scale_fields(scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sexp, sm) a scale byte encodes: sexp = byte[7:3] - 20, sm = 8 + byte[2:0]."""
    s = np.asarray(scale).astype(np.int64)
    return (s >> 3) - 20, 8 + (s & 0x7)


def quantise_elements(h: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """7-bit codes of FP16 patterns under their lane's scale byte (broadcast), as int8 in -63..63.

    Takes any scale byte, not only one lane_scale() would produce, so a test can
    reach the branches (t < 0, the saturation at 63) no real peak leads to.
    """
    h = np.asarray(h).astype(np.int64)
    sexp, sm = scale_fields(scale)
    rec = RECIPROCAL[sm - 8]
    e, sig = decode(h & _K_7FFF)
    t = (sexp + 21) - e
    x = ((sig * rec) >> _K15) & _K_FF
    x = x >> clamp(t, _K0, _K7)
    mag = np.minimum(_K_MAG_MAX, (x >> _K1) + (x & _K1))            # round half up, saturate
    mag = np.where(t < _K0, _K_MAG_MAX, mag)
    mag = np.where((sig == _K0) | (t >= _K8), _K0, mag)
    return np.where(((h >> _K15) & _K1) == _K1, -mag, mag).astype(np.int8)  # -0 is 0


def quantise(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lanes of FP16 patterns (..., 4, 32) -> (codes (..., 4, 32) int8, scale bytes (..., 4) uint8)."""
    scale = lane_scale(h)
    return quantise_elements(h, scale[..., None]), scale


def pack_words(q: np.ndarray, scale: np.ndarray, blayout: bool | np.ndarray) -> np.ndarray:
    """Codes (..., 4, 32) and scales (..., 4) -> the four words (..., 4, 32) uint8, big-endian bytes.

    ``blayout`` selects B packing (True) or A packing (False); an array of
    flags broadcasts over the leading dimensions (one per entry).
    """
    q = np.asarray(q)
    scale = np.asarray(scale, dtype=np.uint8)
    fa = q[..., _A_LANE, _A_K]                                        # (..., 4 words, 32 fields)
    fb = q[..., _B_LANE, _B_K]
    sel = np.asarray(blayout, dtype=bool)[..., None, None]
    fields = np.where(sel, fb, fa)
    out = np.empty(fields.shape[:-1] + (32,), np.uint8)
    out[..., :FIELD_BYTES] = pack7(fields)
    out[..., FIELD_BYTES:] = scale[..., None, :]  # every word carries the four lane scales
    return out


def word_ints(words: np.ndarray) -> list:
    """Big-endian word bytes (..., 32) -> nested lists of 256-bit Python ints with the same leading shape."""
    words = np.asarray(words, dtype=np.uint8)
    flat = [int.from_bytes(w.tobytes(), "big") for w in words.reshape(-1, 32)]
    return np.array(flat, dtype=object).reshape(words.shape[:-1]).tolist()


def quantise_entries(raw: np.ndarray, blayout: bool | np.ndarray) -> np.ndarray:
    """Entry bytes (..., 256) uint8 -> their four response words (..., 4, 32) uint8 (big-endian)."""
    q, scale = quantise(entry_halves(raw))
    return pack_words(q, scale, blayout)


def quantise_dram_words(words: Sequence[int], blayout: bool) -> list[int]:
    """One entry as its 8 DRAM words (ints, byte 32j+b in bits [8b+7:8b] of word j) -> 4 response words."""
    if len(words) != ENTRY_DRAM_WORDS:
        raise ValueError(f"a QUANT entry is {ENTRY_DRAM_WORDS} DRAM words, got {len(words)}")
    raw = np.frombuffer(b"".join(int(w).to_bytes(32, "little") for w in words), dtype=np.uint8)
    return word_ints(quantise_entries(raw, blayout))
