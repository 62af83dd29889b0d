"""L1 layouts: int7 operand entries, FP16/FP32 words and the accumulator port.

Bit positions (protocol facts; docs/numerics.md draws them):

* an L1 entry is 4 granules of 256 bits; as one 1024-bit integer, granule w is
  bits [256w +: 256];
* A entry (a 4x32 int7 block): A[i, 8w+k] at [255-(8i+k)*7 -: 7] of granule w
  (lane i = 0..3, k = 0..7);
* B entry (a 32x4 int7 block): B[8w+k, j] at [255-(4k+j)*7 -: 7] of granule w;
* granule 0 bits [31-8i -: 8] hold the E5M3 scale of A lane i (resp. B column
  j); bits [31:0] of granules 1..3 are unused (written 0, ignored on read);
* FP16 4x4 sub-tile (OP_EMIT): element (r, c) at [(4r+c)*16 +: 16];
* a 256-bit word of FP16 lanes: lane l at [16l +: 16]; of FP32 lanes (dtype 2):
  lane l at [32l +: 32];
* accumulator tile on the Verilog port: element (r, c) at [(4r+c)*22 +: 22].

Entry packers accept leading batch dimensions and return (or take) Python ints
(one per granule), so a bench can build thousands of entries in milliseconds.
"""

from __future__ import annotations

import numpy as np

from .fields7 import FIELD_BYTES, pack7, to_signed7, unpack7

GRANULE_BITS = 256
ENTRY_GRANULES = 4
K_PER_GRANULE = 8
K_PER_ENTRY = ENTRY_GRANULES * K_PER_GRANULE  # 32
INT7_MIN, INT7_MAX = -64, 63
ACC_BITS = 22


def _check_int7(v: np.ndarray) -> None:
    if v.size and (v.min() < INT7_MIN or v.max() > INT7_MAX):
        raise ValueError(f"int7 operands must be in {INT7_MIN}..{INT7_MAX}")


def _fields_to_granules(fields: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """fields (..., 4, 32) int7 in field order, scales (..., 4) -> (..., 4) granules as object ints."""
    raw = np.zeros(fields.shape[:-1] + (32,), np.uint8)  # (..., 4 granules, 32 bytes), big-endian
    raw[..., :FIELD_BYTES] = pack7(fields)
    raw[..., 0, FIELD_BYTES:] = np.asarray(scales).astype(np.int64) & 0xFF
    ints = np.array([int.from_bytes(r.tobytes(), "big") for r in raw.reshape(-1, 32)], dtype=object)
    return ints.reshape(fields.shape[:-2] + (ENTRY_GRANULES,))


def _granules_to_fields(granules) -> tuple[np.ndarray, np.ndarray]:
    """granules (..., 4) -> (fields (..., 4, 32) int8 in field order, scales (..., 4) uint8 of granule 0).

    A GEMM unpacks every entry it reads: the bytes of all granules in one buffer, the fields by
    models.numerics.fields7 (a few array operations per call).
    """
    g = np.asarray(granules, dtype=object)
    raw = np.frombuffer(b"".join(int(v).to_bytes(32, "big") for v in g.reshape(-1)), np.uint8).reshape(-1, 32)
    f = to_signed7(unpack7(raw[:, :FIELD_BYTES]))
    s = raw[:, FIELD_BYTES:]
    shape = g.shape[:-1]
    return f.reshape(shape + (ENTRY_GRANULES, 32)), s.reshape(shape + (ENTRY_GRANULES, 4))[..., 0, :].copy()


def pack_a_entry(a, scales) -> np.ndarray:
    """A block (..., 4, 32) int7 and lane scales (..., 4) E5M3 codes -> granules (..., 4)."""
    a = np.asarray(a)
    _check_int7(a)
    fields = a.reshape(a.shape[:-1] + (ENTRY_GRANULES, K_PER_GRANULE))  # (...,i,w,k)
    fields = np.swapaxes(fields, -3, -2).reshape(a.shape[:-2] + (ENTRY_GRANULES, 32))  # (...,w,8i+k)
    return _fields_to_granules(fields, np.asarray(scales))


def unpack_a_entry(granules):
    """Granules (..., 4) -> (A (..., 4, 32) int8, scales (..., 4) uint8)."""
    f, s = _granules_to_fields(granules)
    a = f.reshape(f.shape[:-1] + (4, K_PER_GRANULE))  # (...,w,i,k)
    a = np.swapaxes(a, -3, -2).reshape(f.shape[:-2] + (4, K_PER_ENTRY))
    return a, s


def pack_b_entry(b, scales) -> np.ndarray:
    """B block (..., 32, 4) int7 and column scales (..., 4) E5M3 codes -> granules (..., 4)."""
    b = np.asarray(b)
    _check_int7(b)
    fields = b.reshape(b.shape[:-2] + (ENTRY_GRANULES, 32))  # (...,w,4k+j)
    return _fields_to_granules(fields, np.asarray(scales))


def unpack_b_entry(granules):
    """Granules (..., 4) -> (B (..., 32, 4) int8, scales (..., 4) uint8)."""
    f, s = _granules_to_fields(granules)
    return f.reshape(f.shape[:-2] + (K_PER_ENTRY, 4)), s


def entry_to_int(granules) -> int:
    """Four granules -> one 1024-bit integer, granule w at [256w +: 256]."""
    return sum(int(g) << (GRANULE_BITS * w) for w, g in enumerate(granules))


def int_to_entry(value: int) -> list[int]:
    mask = (1 << GRANULE_BITS) - 1
    return [(int(value) >> (GRANULE_BITS * w)) & mask for w in range(ENTRY_GRANULES)]


def _pack_fields(values, width: int) -> int:
    out = 0
    for i, v in enumerate(np.asarray(values).reshape(-1)):
        out |= (int(v) & ((1 << width) - 1)) << (width * i)
    return out


def _unpack_fields(word: int, width: int, n: int, dtype) -> np.ndarray:
    word = int(word)
    mask = (1 << width) - 1
    return np.array([(word >> (width * i)) & mask for i in range(n)], dtype=dtype)


def pack_fp16_subtile(tile) -> int:
    """4x4 FP16 patterns -> granule, element (r, c) at [(4r+c)*16 +: 16]."""
    return _pack_fields(np.asarray(tile).reshape(16), 16)


def pack_fp16_subtiles(tiles) -> list[int]:
    """:func:`pack_fp16_subtile` of each of a stack of 4x4 FP16 tiles (T, 4, 4) in one pass: element (r, c) is
    lane 4r + c, and a granule's lanes are its little-endian bytes, so each tile's 16 patterns as ``<u2`` are
    the granule's bytes (a GEMM emits every tile it swept, models/numerics/cluster.py emit_granules)."""
    lanes = np.ascontiguousarray(np.asarray(tiles).reshape(-1, 16), dtype="<u2")
    return [int.from_bytes(row.tobytes(), "little") for row in lanes]


def unpack_fp16_subtile(granule: int) -> np.ndarray:
    return _unpack_fields(granule, 16, 16, np.uint16).reshape(4, 4)


def pack_fp16_lanes(lanes) -> int:
    """16 FP16 patterns -> 256-bit word, lane l at [16l +: 16]."""
    return _pack_fields(lanes, 16)


def unpack_fp16_lanes(word: int) -> np.ndarray:
    return _unpack_fields(word, 16, 16, np.uint16)


def pack_fp32_lanes(lanes) -> int:
    """8 FP32 patterns -> 256-bit word, lane l at [32l +: 32]."""
    return _pack_fields(lanes, 32)


def unpack_fp32_lanes(word: int) -> np.ndarray:
    return _unpack_fields(word, 32, 8, np.uint32)


def pack_acc_tile(tile) -> int:
    """4x4 accumulator patterns -> 352-bit port value, element (r, c) at [(4r+c)*22 +: 22]."""
    return _pack_fields(np.asarray(tile).reshape(16), ACC_BITS)


def unpack_acc_tile(value: int) -> np.ndarray:
    return _unpack_fields(value, ACC_BITS, 16, np.uint32).reshape(4, 4)
