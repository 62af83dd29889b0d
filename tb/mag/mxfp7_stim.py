"""FP16 entries that exercise the QUANT transform (units.md M.3), for unit tests and the MAG bench.

Uniformly random FP16 patterns almost never hit what can go wrong in M.3: an
all-zero lane, a peak exactly on an sm threshold, a subnormal peak that the
normalisation loop shifts, the clamp of sexp at -20, Inf and NaN peaks,
elements that round up to 63 or vanish (t >= 8). So each lane of a generated
entry is drawn from one of several kinds, each aimed at one of those.

Entries are ``(n, 256)`` uint8 arrays, element (lane L, k) at byte 64L + 2k
little-endian, i.e. exactly the bytes a DRAM holds for one QUANT entry.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LANE_KINDS", "THRESHOLD_SIGS", "random_entries", "peak_sweep_entries", "lanes_to_entries"]

THRESHOLD_SIGS = (1024, 1134, 1135, 1260, 1261, 1386, 1387, 1512, 1513, 1638, 1639, 1764, 1765,
                  1890, 1891, 2016, 2017, 2047)
"""Normalised peak significands on and just past every sm threshold of M.3 (and the two ends)."""

LANE_KINDS = ("random", "subnormal", "zero", "threshold", "sub_threshold", "special", "narrow", "wide", "tiny")


def _with_sign(rng: np.random.Generator, mag: np.ndarray) -> np.ndarray:
    return (mag | (rng.integers(0, 2, mag.shape) << 15)).astype(np.uint16)


def _below(rng: np.random.Generator, peak: int, n: int, spread: int) -> np.ndarray:
    """n magnitudes at or below ``peak`` (as 15-bit patterns), within ``spread`` patterns of it."""
    lo = max(0, peak - spread)
    return rng.integers(lo, peak + 1, n)


def _lane(rng: np.random.Generator, kind: str) -> np.ndarray:
    """32 FP16 patterns of one lane of the given kind (the peak placed at a random k)."""
    k = 32
    if kind == "random":
        return rng.integers(0, 1 << 16, k).astype(np.uint16)
    if kind == "subnormal":
        return _with_sign(rng, rng.integers(0, 1024, k))
    if kind == "zero":
        return (rng.integers(0, 2, k) << 15).astype(np.uint16)           # +0 and -0
    if kind == "threshold":
        sig = int(rng.choice(THRESHOLD_SIGS))
        peak = (int(rng.integers(1, 31)) << 10) | (sig - 1024)
    elif kind == "sub_threshold":                                        # subnormal peak: the loop shifts it
        sig = int(rng.choice(THRESHOLD_SIGS))
        shift = int(rng.integers(1, 11))
        peak = sig >> shift if (sig >> shift) << shift == sig else int(rng.integers(1, 1024))
    elif kind == "special":
        peak = int(rng.choice([0x7C00, 0x7C01, 0x7E00, 0x7FFF, 0x7BFF]))  # Inf, NaNs, max finite
    elif kind == "narrow":                                               # everything near the peak: codes near 63
        peak = int(rng.integers(1, 0x7C00))
        mags = _below(rng, peak, k, 64)
        mags[rng.integers(0, k)] = peak
        return _with_sign(rng, mags)
    elif kind == "wide":                                                 # far below the peak: t >= 8, zeros
        peak = int(rng.integers(0x5000, 0x7C00))
        mags = rng.integers(0, 0x2000, k)
        mags[rng.integers(0, k)] = peak
        return _with_sign(rng, mags)
    else:                                                                # "tiny": sexp clamped at -20
        peak = int(rng.integers(1, 8))
    mags = _below(rng, peak, k, peak if rng.random() < 0.5 else 40)
    mags[rng.integers(0, k)] = peak
    return _with_sign(rng, mags)


def lanes_to_entries(lanes: np.ndarray) -> np.ndarray:
    """FP16 patterns (n, 4, 32) -> entry bytes (n, 256) uint8, little-endian, lane-major."""
    lanes = np.ascontiguousarray(lanes, dtype="<u2")
    return lanes.reshape(lanes.shape[0], -1).view(np.uint8).reshape(lanes.shape[0], 256)


def random_entries(rng: np.random.Generator, n: int) -> np.ndarray:
    """n entries whose lanes are drawn from LANE_KINDS (about equally often)."""
    kinds = rng.integers(0, len(LANE_KINDS), (n, 4))
    lanes = np.empty((n, 4, 32), dtype=np.uint16)
    for i in range(n):
        for lane in range(4):
            lanes[i, lane] = _lane(rng, LANE_KINDS[kinds[i, lane]])
    return lanes_to_entries(lanes)


def peak_sweep_entries(rng: np.random.Generator) -> np.ndarray:
    """8192 entries whose 32768 lanes have every 15-bit magnitude once as their peak (random others below)."""
    peaks = rng.permutation(1 << 15)
    mags = (rng.random((1 << 15, 32)) * (peaks[:, None] + 1)).astype(np.int64)
    mags[np.arange(1 << 15), rng.integers(0, 32, 1 << 15)] = peaks
    lanes = _with_sign(rng, mags).reshape(-1, 4, 32)
    return lanes_to_entries(lanes)
