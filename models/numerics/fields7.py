"""32 seven-bit fields <-> the 28 big-endian bytes that hold them, as the L1 entry granules and the memory agent's
QUANT response words lay them out (docs/numerics.md): field n at bits [255-7n -: 7] of a 256-bit word, the
most significant first, so the fields fill bytes 0..27 and bytes 28..31 are left to the scales.

Why a module: both models.numerics.layout (the cluster unpacks every entry a GEMM reads) and
models.numerics.mxfp7 (the agent packs every entry it quantises) convert these fields. Eight fields are 56
bits, seven bytes: each group of seven bytes is read or written as one big-endian 64-bit integer and
shifted, a few array operations per call instead of one array element per bit.
"""

from __future__ import annotations

import numpy as np

FIELDS = 32
FIELD_BYTES = 28  # 32 * 7 bits
_SHIFTS = np.arange(49, -1, -7, dtype=np.uint64)  # field j of a 56-bit group at bits [55-7j -: 7]


def unpack7(raw: np.ndarray) -> np.ndarray:
    """Bytes (..., 28) uint8 -> the 32 fields (..., 32) as uint8 in 0..127."""
    raw = np.asarray(raw, dtype=np.uint8)
    lead = raw.shape[:-1]
    groups = np.zeros(lead + (4, 8), np.uint8)
    groups[..., 1:] = raw.reshape(lead + (4, 7))
    words = groups.view(">u8")  # (..., 4, 1): one 56-bit group each
    return ((words >> _SHIFTS) & np.uint64(0x7F)).astype(np.uint8).reshape(lead + (FIELDS,))


def pack7(fields: np.ndarray) -> np.ndarray:
    """Fields (..., 32) (any integer dtype; the low 7 bits of each are used) -> bytes (..., 28) uint8."""
    fields = np.asarray(fields)
    lead = fields.shape[:-1]
    f = (fields.astype(np.int64) & 0x7F).astype(np.uint64).reshape(lead + (4, 8))
    words = np.bitwise_or.reduce(f << _SHIFTS, axis=-1)  # (..., 4), disjoint bits
    return np.ascontiguousarray(words.astype(">u8")).view(np.uint8).reshape(lead + (4, 8))[..., 1:].reshape(
        lead + (FIELD_BYTES,))


def to_signed7(codes: np.ndarray) -> np.ndarray:
    """7-bit two's complement codes (0..127) -> int8 in -64..63."""
    return (np.asarray(codes, dtype=np.uint8) ^ 0x40).astype(np.int8) - np.int8(0x40)


__all__ = ["FIELDS", "FIELD_BYTES", "pack7", "to_signed7", "unpack7"]
