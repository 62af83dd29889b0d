"""Bit-exact model of the vector core's E8M15 transcendentals (units.md V.6.4) over their normative
coefficient table, and SiLU as the vector core runs it.

Like models.numerics.e8m15, whose bit helpers and PACK they share, they
reproduce upstream's datapath (``vector/vec_tables.v``) literally:

* VEXP2, VLOG2, VINV and VRSQRT (V.6.4) are a quadratic in integers over the
  normative coefficient table ``vec_tables.csv`` followed by the same PACK;
  VEXP2 reproduces upstream defect **D1** (for 128 <= |x| < 256 the argument
  wraps modulo 256).
* SiLU is the compiler's five-instruction sequence (VMUL, VEXP2, VADD, VINV,
  VMUL), so it inherits D1 for x > ~88.7.

Every function is numpy-vectorised as e8m15's are: any integer array or scalar
of 24-bit patterns in (the low 24 bits are used), np.uint32 patterns out,
shaped like the broadcast input.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .e8m15 import (
    K0, K1, NEG_INF, NEG_LOG2E, POS_INF, QNAN, _C0, _C1, _C16, _C31, _GUARD15, _I64, _INF, _QNAN, _bits, _fields,
    _pack, _u32, _wrap, vadd, vmul,
)
from .e8m15_cvt import e8m15_to_fp16, fp16_to_e8m15
from .rounding import clamp, const

# Function selects of the coefficient table (V.6.4).
FSEL_EXP2, FSEL_LOG2, FSEL_INV, FSEL_RSQRT = 0, 1, 2, 3


# ----------------------------------------------------------------- the coefficient table
TABLE_PATH = Path(__file__).with_name("vec_tables.csv")
_TABLE_HEADER = ["fsel", "idx", "c0", "c1", "c2"]
_TABLE_ROWS = {0: 32, 1: 32, 2: 32, 3: 64}  # fsel -> entries (idx 0..n-1): 160 rows
_COEFF_BITS = 22


def _load_coeffs(path: Path) -> np.ndarray:
    """The normative table as an int64 array indexed by ``fsel*64 + idx`` (unused keys 0).

    The table is spec data, so anything but exactly the 160 rows V.6.4 describes
    (one per key, coefficients in the 22-bit signed range) is refused here, at
    import, rather than showing up later as wrong transcendental bits.
    """
    try:
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise RuntimeError(f"E8M15 coefficient table {path} cannot be read: {exc}") from None
    if not rows or [c.strip() for c in rows[0]] != _TABLE_HEADER:
        raise RuntimeError(f"{path}: the first line must be the header {','.join(_TABLE_HEADER)}")
    body = [r for r in rows[1:] if any(c.strip() for c in r)]
    if len(body) != sum(_TABLE_ROWS.values()):
        raise RuntimeError(f"{path}: {len(body)} rows, units.md V.6.4 describes exactly "
                           f"{sum(_TABLE_ROWS.values())}")
    table = np.zeros((256, 3), dtype=_I64)
    seen: set[int] = set()
    lo, hi = -(1 << (_COEFF_BITS - 1)), (1 << (_COEFF_BITS - 1)) - 1
    for line, row in enumerate(body, start=2):
        try:
            fsel, idx, *coeffs = (int(c) for c in row)
        except ValueError:
            raise RuntimeError(f"{path} line {line}: {row} is not five decimal integers") from None
        if len(coeffs) != 3 or fsel not in _TABLE_ROWS or not 0 <= idx < _TABLE_ROWS[fsel]:
            raise RuntimeError(f"{path} line {line}: {row} is not an entry of V.6.4")
        if not all(lo <= c <= hi for c in coeffs):
            raise RuntimeError(f"{path} line {line}: a coefficient is outside the 22-bit signed range")
        key = fsel * 64 + idx
        if key in seen:
            raise RuntimeError(f"{path} line {line}: duplicate entry fsel={fsel} idx={idx}")
        seen.add(key)
        table[key] = coeffs
    return table


COEFFS = _load_coeffs(TABLE_PATH)
COEFFS.setflags(write=False)
# the table's columns c0, c1, c2, each indexed by fsel*64 + idx
_COEF0, _COEF1, _COEF2 = (np.ascontiguousarray(COEFFS[:, j]) for j in range(3))


# ----------------------------------------------------------------- transcendentals (V.6.4)
# constants as 0-d arrays (rounding.const says why); 0, 1, 16, 31, QNAN, +Inf and 2^15 (the Horner steps'
# rounding half, e8m15's _GUARD15) are e8m15's
_K10, _K12, _K17, _K107, _K134 = (const(v) for v in (10, 12, 17, 107, 134))
_K1_20, _K1_25, _K_F12, _K_F17 = const(1 << 20), const(1 << 25), const(0xFFF), const(0x1FFFF)


def _quadratic(fsel: int, idx: np.ndarray, u: np.ndarray, ext, par=0) -> np.ndarray:
    """F of V.6.4's integer polynomial: ``C0 + c1*u + c2*u^2`` in two rounded Horner steps,
    with segment starts that hit an exact identity (``ident``) replaced by 0 or 2^20."""
    key = fsel * 64 + idx
    ident = ((idx & _C31) == _C0) & (u == _C0)
    if fsel == FSEL_RSQRT:
        ident &= ~(np.asarray(par) == 1)
    c0 = np.where(ident, _K1_20 if fsel >= FSEL_INV else _C0, _COEF0[key])
    big_c0 = _wrap(c0 + ext, 30)
    h = _wrap((_COEF2[key] * u + (_COEF1[key] << _C16) + _GUARD15) >> _C16, 22)
    return _wrap((h * u + (big_c0 << _C16) + _GUARD15) >> _C16, 30)


def _finish(f: np.ndarray, ebase, sign, special: np.ndarray, value) -> np.ndarray:
    """PACK(|F|, ebase, sign, stk=0, cancel=false), overridden by the op's specials."""
    out = _pack(np.abs(f), np.asarray(ebase, dtype=_I64), np.asarray(sign, dtype=_I64), False, False)
    return _u32(np.where(special, value, out))


def _classes(p: np.ndarray):
    """``(s, e, m, z, i, n)``: fields and the zero / Inf / NaN flags of V.6.4's table."""
    s, e, m = _fields(p)
    return s, e, m, e == 0, (e == 0xFF) & (m == 0), (e == 0xFF) & (m != 0)


def _mantissa_segment(m: np.ndarray):
    """``(idx, u)`` for LOG2, INV, RSQRT: 32 segments of the mantissa, 12-bit offset."""
    return m >> 10, 4 * (m & 0x3FF)


def vexp2(a) -> np.ndarray:
    """VEXP2: 2^a. |a| is taken to 17 fraction bits (rounded half away), the signed 25-bit
    wrap of v is upstream defect D1 (128 <= |a| < 256 reduces modulo 256), then
    ``2^k * (2^20 + poly(f)) * 2^-20``. NaN -> NaN; Inf or e > 134: +Inf (a > 0), +0 (a < 0)."""
    s, e, m, _, i, n = _classes(_bits(a))
    r = (_K1_25 + (m << _K10)) >> clamp(_K134 - e, 0, 26)
    big_r = (r >> _C1) + (r & _C1)
    v = _wrap(np.where(s == _C1, -big_r, big_r), 25)
    k, f = v >> _K17, v & _K_F17
    big_f = _quadratic(FSEL_EXP2, f >> _K12, f & _K_F12, _K1_20)
    special = n | i | (e > _K134)
    value = np.where(n, _QNAN, np.where(s == _C1, _C0, _INF))
    return _finish(big_f, k + _K107, 0, special, value)


def vlog2(a) -> np.ndarray:
    """VLOG2: (e - 127) + log2(1.m) as a fixed-point F with 20 fraction bits, then PACK
    (so results near 0 keep only what 2^-20 resolution holds). NaN or a negative non-zero
    -> NaN; +Inf -> +Inf; +-0 (any e = 0) -> -Inf."""
    s, e, m, z, i, n = _classes(_bits(a))
    idx, u = _mantissa_segment(m)
    big_f = _quadratic(FSEL_LOG2, idx, u, (e - 127) << 20)
    nan = n | ((s == 1) & ~z)
    value = np.where(nan, QNAN, np.where(i, POS_INF, NEG_INF))
    return _finish(big_f, 107, big_f < 0, nan | i | z, value)


def vinv(a) -> np.ndarray:
    """VINV: 1/a = (F / 2^20) * 2^(127 - e) with the sign of a, F ~ 2^20 / 1.m from the
    table. NaN -> NaN; +-0 -> +-Inf; +-Inf -> +-0; results below 2^-126 (e >= 253) flush."""
    s, e, m, z, i, n = _classes(_bits(a))
    idx, u = _mantissa_segment(m)
    big_f = _quadratic(FSEL_INV, idx, u, 0)
    value = np.where(n, QNAN, np.where(z, (s << 23) | POS_INF, s << 23))
    return _finish(big_f, 234 - e, s, n | z | i, value)


def vrsqrt(a) -> np.ndarray:
    """VRSQRT: 1/sqrt(a), the table half chosen by the exponent's parity. NaN or a negative
    non-zero -> NaN; +-0 -> +Inf; +Inf -> +0."""
    s, e, m, z, i, n = _classes(_bits(a))
    par = (e & 1) == 0
    idx, u = _mantissa_segment(m)
    big_f = _quadratic(FSEL_RSQRT, 32 * par + idx, u, 0, par)
    nan = n | ((s == 1) & ~z)
    value = np.where(nan, QNAN, np.where(z, POS_INF, K0))
    return _finish(big_f, 107 - ((e - 127) >> 1), 0, nan | z | i, value)


# ----------------------------------------------------------------- SiLU as the vector core runs it
def silu_e8m15(x) -> np.ndarray:
    """SiLU by the compiled five-instruction sequence: VMUL by -log2(e), VEXP2, VADD K1,
    VINV, VMUL by x. For x > ~88.7 the VEXP2 argument enters D1's range and silu ~ 0."""
    t = vmul(x, NEG_LOG2E)
    r = vinv(vadd(vexp2(t), K1))
    return vmul(r, x)


def silu_fp16(h) -> np.ndarray:
    """FP16 load, silu_e8m15, FP16 store (V.7)."""
    return e8m15_to_fp16(silu_e8m15(fp16_to_e8m15(h)))


def silu_ref(x) -> np.ndarray:
    """float64 reference x / (1 + e^-x)."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


__all__ = [
    "COEFFS", "vexp2", "vlog2", "vinv", "vrsqrt", "silu_e8m15", "silu_fp16", "silu_ref",
]
