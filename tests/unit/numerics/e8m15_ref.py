"""The test side's own reading of E8M15 patterns, shared by the tests of the vector core's E8M15
numerics (models/numerics/e8m15.py, e8m15_transcendental.py, e8m15_alu.py, e8m15_cvt.py) in
tests/unit/numerics/test_e8m15_*.py. A plain module, imported by name; it never calls the model.

It holds the constants (sign and magnitude masks, Inf, the canonical NaN, 1.0, the zeros), the field
split and kind of a pattern as units.md V.6 defines them (e = 0 is zero whatever m, e = 255 Inf or NaN),
a pattern printer for failure messages, pattern builders, the corner patterns every test crosses, and
the one seeded generator the test files draw from (as when they were one file, the draws a test sees
depend on which tests ran before it in the same process).
"""

from __future__ import annotations

import numpy as np


# ===================================================================== constants and the seeded generator
RNG = np.random.default_rng(20250601)

SIGN, MAG, INF, QNAN = 0x800000, 0x7FFFFF, 0x7F8000, 0x7FC000
ONE, P0, N0 = 0x3F8000, 0x000000, 0x800000


# ===================================================================== helpers (test side)
def fields(p: int) -> tuple[int, int, int]:
    return (p >> 23) & 1, (p >> 15) & 0xFF, p & 0x7FFF


def kind(p: int) -> str:
    _, e, m = fields(p)
    if e == 0:
        return "zero"
    if e == 0xFF:
        return "nan" if m else "inf"
    return "num"


def show(p: int) -> str:
    """A pattern with its value, for failure messages."""
    s, e, m = fields(p)
    k = kind(p)
    if k == "num":
        val = f"{'-' if s else ''}{(0x8000 | m) / 32768:.6f}*2^{e - 127}"
    elif k == "zero":
        val = f"{'-' if s else '+'}0" + (f" (m={m:#x})" if m else "")
    else:
        val = f"{'-' if s else '+'}{k}"
    return f"{p:#08x}[{val}]"


def pat(s, e, m) -> np.ndarray:
    return (np.asarray(s, np.int64) << 23) | (np.asarray(e, np.int64) << 15) | np.asarray(m, np.int64)


def rand_pat(n: int, e_lo: int = 1, e_hi: int = 254) -> np.ndarray:
    return pat(RNG.integers(0, 2, n), RNG.integers(e_lo, e_hi + 1, n), RNG.integers(0, 1 << 15, n))


CORNERS = np.array([
    0x000000, 0x800000, 0x000001, 0x807FFF, 0x004321,          # zeros, non-canonical zeros
    0x3F8000, 0xBF8000, 0x3F8001, 0xBFFFFF, 0x400000, 0x3F7FFF,  # around 1
    0x008000, 0x808000, 0x008001, 0x00FFFF,                   # smallest normals
    0x7F7FFF, 0xFF7FFF, 0x7F0000, 0x5F8000, 0x208000,          # large / scaled
    0x7F8000, 0xFF8000, 0x7FC000, 0x7F8001, 0xFFFFFF,          # Inf, NaN (payloads, sign)
], dtype=np.int64)
