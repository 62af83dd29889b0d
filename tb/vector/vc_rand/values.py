"""Operand values for the random programs: E8M15 immediates, FP16 / FP32 data words, transcendental operands.

Special values (signed zeros, non-canonical zeros, infinities, NaNs, the
extremes) are sprinkled in with fixed probabilities.
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

E8_SPECIALS = (0x000000, 0x800000,  # +0, -0
               0x001234, 0x807FFF, 0x000001,  # non-canonical zeros (e = 0, m != 0; only VSETI makes them)
               0x7F8000, 0xFF8000,  # +Inf, -Inf
               0x7FC000, 0xFFC000, 0x7F8001, 0xFFFFFF,  # NaNs
               0x7F7FFF, 0xFF7FFF,  # +-max normal
               0x008000, 0x808000,  # +-min normal
               0x3F8000, 0xBF8000)  # +-1
FP16_SPECIALS = (0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFC01, 0x7BFF, 0xFBFF, 0x0400, 0x8400, 0x0001,
                 0x83FF, 0x3C00, 0xBC00)
FP32_SPECIALS = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001, 0x7F7FFFFF,
                 0x00800000, 0x807FFFFF, 0x00000001, 0x3F800000, 0x3F800080, 0x3F800180, 0x3F8000FF)


def e8_normal(rng: random.Random, lo: int = 118, hi: int = 136) -> int:
    """A finite, canonical E8M15 pattern with exponent in lo..hi."""
    return rng.getrandbits(1) << 23 | rng.randint(lo, hi) << 15 | rng.getrandbits(15)


def e8_value(rng: random.Random, special: float = 0.35) -> int:
    """An E8M15 immediate for a data scalar: a special value with probability `special`."""
    return rng.choice(E8_SPECIALS) if rng.random() < special else e8_normal(rng)


def fp16_lane(rng: random.Random) -> int:
    if rng.random() < 0.06:
        return rng.choice(FP16_SPECIALS)
    return rng.getrandbits(1) << 15 | rng.randint(8, 22) << 10 | rng.getrandbits(10)


def fp32_elem(rng: random.Random) -> int:
    if rng.random() < 0.06:
        return rng.choice(FP32_SPECIALS)
    e = rng.randint(110, 145) if rng.random() < 0.85 else rng.randint(1, 254)
    return rng.getrandbits(1) << 31 | e << 23 | rng.getrandbits(23)


def pack_lanes(values: Sequence[int], bits: int) -> int:
    """Little-endian lanes of `bits` each into one 256-bit word."""
    word = 0
    for i, v in enumerate(values):
        word |= (v & ((1 << bits) - 1)) << (bits * i)
    return word


def data_word(rng: random.Random) -> int:
    """One L1/DRAM word: 16 FP16 lanes or 8 FP32 elements (either dtype may load it; specials sprinkled)."""
    if rng.random() < 0.5:
        return pack_lanes([fp16_lane(rng) for _ in range(16)], 16)
    return pack_lanes([fp32_elem(rng) for _ in range(8)], 32)


def _f32(x: float) -> int:
    with np.errstate(over="ignore"):
        return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def transc_value(rng: random.Random) -> int:
    """An FP32 operand in a range a transcendental treats specially (units.md V.6.4)."""
    cls = rng.randrange(12)
    if cls == 0:
        return _f32(rng.uniform(128, 256) * rng.choice((1, -1)))  # EXP2 defect D1
    if cls == 1:
        return _f32(rng.uniform(256, 2000) * rng.choice((1, -1)))  # EXP2 saturates
    if cls == 2:
        return _f32(rng.uniform(-127, 127))
    if cls == 3:
        return _f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-40, 0))
    if cls == 4:
        return _f32(float(rng.randint(-130, 130)))  # exact integers: EXP2's table identity
    if cls == 5:
        return _f32(2.0 ** rng.randint(-120, 120))  # powers of 2 (INV/LOG2 identity) and of 4 (RSQRT)
    if cls == 6:
        return _f32(-(2.0 ** rng.uniform(-60, 60)))  # negatives: LOG2/RSQRT NaN
    if cls == 7:
        return rng.choice(FP32_SPECIALS)
    return _f32(2.0 ** rng.uniform(-100, 100))
