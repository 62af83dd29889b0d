"""Bit-exact model of the vector core's E8M15 lane arithmetic, as units.md V.6 fixes it.

Programs built by the upstream compiler must give the upstream hardware's bits,
so this module reproduces upstream's datapath (``vector/vec_alu.v``,
``vector/vec_tables.v``) literally, departures from correct rounding included.
It replaces an earlier correctly-rounded design of ours. In short:

* every op of V.6.2 (VMOV ... VCMPEQ) is one pass through the FMA datapath
  ``X*Y + Z`` of V.6.3 (:func:`fma`) with the operands the op selects; the
  datapath is a 48-bit window with a plain sticky bit and one round-to-nearest-
  even normaliser (:func:`pack`), so
  - a zero addend sets the sticky bit: VMUL and VFMA/VFNMA with c = +-0 round
    exact ties away from zero (upstream defect **D2**);
  - an effective subtraction whose addend is partly shifted out can round one
    ulp high;
  - an addend more than 17 binades above the product is returned exactly;
  - zeros come out by the datapath's sign rule (MOV/NEG/ABS/MAX/MIN/SEL of +-0
    give +0, ``+0 + -0`` gives -0), and every NaN result is 0x7FC000;
* compares (V.6.1) are on raw bits, so a non-canonical zero (e = 0, m != 0)
  compares greater than +0;
* VEXP2, VLOG2, VINV and VRSQRT (V.6.4) are a quadratic in integers over the
  normative coefficient table ``vec_tables.csv`` followed by the same PACK;
  VEXP2 reproduces upstream defect **D1** (for 128 <= |x| < 256 the argument
  wraps modulo 256).

Every function is numpy-vectorised: any integer array or scalar of 24-bit
patterns in (the low 24 bits are used), np.uint32 patterns (bool for
predicates) out, shaped like the broadcast inputs.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from .e8m15_cvt import e8m15_to_fp16, fp16_to_e8m15
from .rounding import low_bits, round_half_even, top_bit

_I64 = np.int64

# ----------------------------------------------------------------- constants
K0 = 0x000000  # +0.0, constant register K0
K1 = 0x3F8000  # 1.0, K1
K2 = 0xBF8000  # -1.0, K2
QNAN = 0x7FC000  # the one NaN every operation produces
POS_INF = 0x7F8000
NEG_INF = 0xFF8000
NEG_LOG2E = 0xBFB8AA  # -log2(e): the compiler's VSETI immediate 12564650 for SiLU/sigmoid

SIGN = 0x800000
MAG = 0x7FFFFF
_MASK48 = (1 << 48) - 1
_MASK33 = (1 << 33) - 1

# ISA opcodes of the lane operations (units.md V.8).
VMOV, VNEG, VABS, VADD, VSUB, VMUL, VFMA, VFNMA = range(0x00, 0x08)
VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ = range(0x08, 0x0E)
VEXP2, VLOG2, VINV, VRSQRT = range(0x0E, 0x12)
OP_NAMES = ("VMOV", "VNEG", "VABS", "VADD", "VSUB", "VMUL", "VFMA", "VFNMA", "VMAX", "VMIN", "VSEL",
            "VCMPLT", "VCMPGT", "VCMPEQ", "VEXP2", "VLOG2", "VINV", "VRSQRT")

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
_C0, _C1, _C2 = (np.ascontiguousarray(COEFFS[:, j]) for j in range(3))


# ----------------------------------------------------------------- bit helpers
def _bits(x) -> np.ndarray:
    """Patterns as int64, low 24 bits (the lane width)."""
    return low_bits(x, 24)


def _fields(p: np.ndarray):
    """``(s, e, m)`` of int64 patterns."""
    return (p >> 23) & 1, (p >> 15) & 0xFF, p & 0x7FFF


def _wrap(v: np.ndarray, n: int) -> np.ndarray:
    """``wrapN(v)``: v mod 2^n read as a signed n-bit number."""
    half = 1 << (n - 1)
    return ((v + half) & ((1 << n) - 1)) - half


def _u32(v) -> np.ndarray:
    return np.asarray(v, dtype=_I64).astype(np.uint32)


# ----------------------------------------------------------------- PACK (V.6.3)
def pack(mag, ebase, sign, stk, cancel) -> np.ndarray:
    """PACK of V.6.3: normalise a magnitude of up to 48 bits, round to nearest even on the
    bits the 48-bit window holds (plus ``stk``), then overflow to Inf / flush to zero.

    A zero magnitude gives ``{sign and not cancel, 0, 0}``: an exact cancellation is +0.
    The result exponent is ``p + ebase`` with p the top-bit index after rounding.
    """
    mag = np.asarray(mag, dtype=_I64)
    if np.any((mag < 0) | (mag > _MASK48)):
        raise ValueError("pack: mag is a 48-bit magnitude (0 <= mag < 2^48)")
    return _pack(mag, np.asarray(ebase, dtype=_I64), np.asarray(sign, dtype=_I64) & 1, stk, cancel)


def _pack(mag: np.ndarray, ebase: np.ndarray, sign: np.ndarray, stk, cancel) -> np.ndarray:
    """PACK on int64 operands already in range (mag < 2^48, sign 0/1): the datapath's own call."""
    p = top_bit(mag)
    n = (mag << np.maximum(47 - p, 0)) & _MASK48
    sticky = ((n & 0x7FFFFFFF) != 0) | np.asarray(stk, dtype=bool)
    q = round_half_even(n >> 32, (n >> 31) & 1, sticky)
    carry = q >> 16
    q = np.where(carry == 1, 0x8000, q)
    e = p + carry + ebase
    sbit = sign << 23
    finite = np.where(e >= 255, sbit | POS_INF, np.where(e <= 0, sbit, sbit | (e << 15) | (q - 0x8000)))
    zero = np.where(np.asarray(cancel, dtype=bool), 0, sbit)
    return _u32(np.where(mag == 0, zero, finite))


# ----------------------------------------------------------------- the FMA datapath (V.6.3)
def _specials(x, y, z, sxy, sz, zx, zy):
    """``(nan, inf, inf_sign)`` masks of V.6.3's override, in its order."""
    def kind(p):
        top = (p & 0x7F8000) == 0x7F8000
        return top & ((p & 0x7FFF) == 0), top & ((p & 0x7FFF) != 0)
    (xi, xn), (yi, yn), (zi, zn) = kind(x), kind(y), kind(z)
    pnan = xn | yn | (xi & zy) | (zx & yi)
    pinf = (xi | yi) & ~pnan
    nan = pnan | zn | (pinf & zi & (sxy != sz))
    inf = (pinf | zi) & ~nan
    return nan, inf, np.where(pinf, sxy, sz)


def fma(x, y, z) -> np.ndarray:
    """The V.6.3 datapath ``X*Y + Z`` with its special-value overrides.

    ``zX``/``zY`` (product is zero) are the exponent-is-zero flags of x and y. The
    addend is aligned into a 48-bit window (``add = floor(gZ * 2^32 / 2^s)``, with a
    plain sticky of the bits shifted out), the exact 32-bit product is added or
    subtracted mod 2^48, and PACK rounds once. The departures this implies (D2 ties,
    one-ulp-high subtraction, bypass, zero signs) are upstream's and intended.
    """
    return _fma(_bits(x), _bits(y), _bits(z))


def _fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """fma() on int64 24-bit patterns (Python-int constants become 0-d arrays)."""
    x, y, z = (np.asarray(v, dtype=_I64) for v in (x, y, z))
    sx, ex, mx = _fields(x)
    sy, ey, my = _fields(y)
    sz, ez, mz = _fields(z)
    zx, zy, cz = ex == 0, ey == 0, ez == 0
    pz = zx | zy
    ex1, ey1 = np.where(pz, 1, ex), np.where(pz, 1, ey)
    sxy = sx ^ sy
    neg = (sxy ^ sz) == 1
    d = ex1 + ey1 - ez - 110
    byp = (d < 0) & ~cz
    s = np.where(cz, 48, np.where(byp, 0, np.minimum(d, 48)))
    ebase = np.where(byp, ez - 47, ex1 + ey1 - 157)
    gz = mz | 0x8000
    add = (gz << 32) >> s
    stk = (s >= 33) & ((gz & ((1 << np.clip(s - 32, 0, 16)) - 1)) != 0)
    prod = np.where(byp | pz, 0, (mx | 0x8000) * (my | 0x8000))
    total = np.where(neg, add - prod, add + prod) & _MASK48
    rneg = neg & (s != 0) & (total >= (1 << 47))
    mag = np.where(rneg, (-total) & _MASK33, total)
    sign = np.where(neg, np.where(rneg, sxy, sz), sxy)
    out = _pack(mag, ebase, sign, stk, neg & ~pz & ~cz).astype(_I64)
    nan, inf, inf_sign = _specials(x, y, z, sxy, sz, zx, zy)
    out = np.where(inf, (inf_sign << 23) | POS_INF, out)
    return _u32(np.where(nan, QNAN, out))


# ----------------------------------------------------------------- compare (V.6.1)
def _compare(a, b):
    """``(lt, gt, eq, nan)`` of V.6.1 on raw bits."""
    a, b = _bits(a), _bits(b)
    sa, sb = a >> 23, b >> 23
    ma, mb = a & MAG, b & MAG
    nan = (ma > POS_INF) | (mb > POS_INF)
    eq = ((ma == 0) & (mb == 0)) | ((ma == mb) & (sa == sb))
    ordered = np.where(sa != sb, sa == 1, np.where(sa == 1, ma > mb, ma < mb))
    lt = ~nan & ~eq & ordered
    gt = ~nan & ~eq & ~lt
    return lt, gt, eq, nan


def cmp_lt(a, b) -> np.ndarray:
    """CMPLT: a < b on raw sign-magnitude bits; false when either is NaN."""
    return _compare(a, b)[0]


def cmp_gt(a, b) -> np.ndarray:
    """CMPGT: not NaN, not equal, not less."""
    return _compare(a, b)[1]


def cmp_eq(a, b) -> np.ndarray:
    """CMPEQ: equal bits, or both +-0 exactly; false when either is NaN. A non-canonical
    zero equals only itself."""
    _, _, eq, nan = _compare(a, b)
    return eq & ~nan


# ----------------------------------------------------------------- operand selection (V.6.2)
Operands = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple]


def _as_value(pred) -> np.ndarray:
    """A predicate as the chain sees it: 1.0 or +0 (so zX = not pred)."""
    return np.where(pred, K1, K0)


# opcode -> (X, Y, Z) of the V.6.2 table; Y = 1.0 and Z = +0 unless the op says otherwise.
_OPERANDS: dict[int, Operands] = {
    VMOV: lambda a, b, c: (a, K1, K0),
    VNEG: lambda a, b, c: (a ^ SIGN, K1, K0),
    VABS: lambda a, b, c: (a & MAG, K1, K0),
    VADD: lambda a, b, c: (a, K1, c),
    VSUB: lambda a, b, c: (a, K1, c ^ SIGN),
    VMUL: lambda a, b, c: (a, b, K0),
    VFMA: lambda a, b, c: (a, b, c),
    VFNMA: lambda a, b, c: (a ^ SIGN, b, c),
    VMAX: lambda a, b, c: (np.where(cmp_lt(a, b), b, a), K1, K0),
    VMIN: lambda a, b, c: (np.where(cmp_gt(a, b), b, a), K1, K0),
    VSEL: lambda a, b, c: (np.where((c & MAG) != 0, a, b), K1, K0),
    VCMPLT: lambda a, b, c: (_as_value(cmp_lt(a, b)), K1, K0),
    VCMPGT: lambda a, b, c: (_as_value(cmp_gt(a, b)), K1, K0),
    VCMPEQ: lambda a, b, c: (_as_value(cmp_eq(a, b)), K1, K0),
}


def _fma_op(op: int, a, b=K0, c=K0) -> np.ndarray:
    """One V.6.2 op: select X, Y, Z, then the datapath."""
    return _fma(*_OPERANDS[op](_bits(a), _bits(b), _bits(c)))


def vmov(a) -> np.ndarray:
    """VMOV: a*1.0 + 0, so zeros become +0 and NaNs the canonical NaN."""
    return _fma_op(VMOV, a)


def vneg(a) -> np.ndarray:
    """VNEG: (-a)*1.0 + 0 (VNEG of +-0 is +0)."""
    return _fma_op(VNEG, a)


def vabs(a) -> np.ndarray:
    """VABS: |a|*1.0 + 0."""
    return _fma_op(VABS, a)


def vadd(a, c) -> np.ndarray:
    """VADD: a*1.0 + c (the second source is c, as the ISA wires it)."""
    return _fma_op(VADD, a, K0, c)


def vsub(a, c) -> np.ndarray:
    """VSUB: a*1.0 + (-c)."""
    return _fma_op(VSUB, a, K0, c)


def vmul(a, b) -> np.ndarray:
    """VMUL: a*b + (+0); the zero addend's sticky makes exact ties round away (D2)."""
    return _fma_op(VMUL, a, b)


def vfma(a, b, c) -> np.ndarray:
    """VFMA: a*b + c, fused."""
    return _fma_op(VFMA, a, b, c)


def vfnma(a, b, c) -> np.ndarray:
    """VFNMA: (-a)*b + c, fused."""
    return _fma_op(VFNMA, a, b, c)


def vmax(a, b) -> np.ndarray:
    """VMAX: (lt ? b : a) through the datapath; VMAX(x, NaN) = x, VMAX(NaN, x) = NaN."""
    return _fma_op(VMAX, a, b)


def vmin(a, b) -> np.ndarray:
    """VMIN: (gt ? b : a) through the datapath."""
    return _fma_op(VMIN, a, b)


def vsel(a, b, c) -> np.ndarray:
    """VSEL: a where c's magnitude bits are non-zero (Inf and NaN included), else b."""
    return _fma_op(VSEL, a, b, c)


def vcmplt(a, b) -> np.ndarray:
    """VCMPLT as a chain value: 1.0 or +0."""
    return _fma_op(VCMPLT, a, b)


def vcmpgt(a, b) -> np.ndarray:
    """VCMPGT as a chain value: 1.0 or +0."""
    return _fma_op(VCMPGT, a, b)


def vcmpeq(a, b) -> np.ndarray:
    """VCMPEQ as a chain value: 1.0 or +0."""
    return _fma_op(VCMPEQ, a, b)


# ----------------------------------------------------------------- transcendentals (V.6.4)
def _quadratic(fsel: int, idx: np.ndarray, u: np.ndarray, ext, par=0) -> np.ndarray:
    """F of V.6.4's integer polynomial: ``C0 + c1*u + c2*u^2`` in two rounded Horner steps,
    with segment starts that hit an exact identity (``ident``) replaced by 0 or 2^20."""
    key = fsel * 64 + idx
    ident = (idx % 32 == 0) & (u == 0) & ~((fsel == FSEL_RSQRT) & (np.asarray(par) == 1))
    c0 = np.where(ident, (1 << 20) if fsel >= FSEL_INV else 0, _C0[key])
    big_c0 = _wrap(c0 + ext, 30)
    h = _wrap((_C2[key] * u + (_C1[key] << 16) + (1 << 15)) >> 16, 22)
    return _wrap((h * u + (big_c0 << 16) + (1 << 15)) >> 16, 30)


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
    r = ((1 << 25) + (m << 10)) >> np.clip(134 - e, 0, 26)
    big_r = (r >> 1) + (r & 1)
    v = _wrap(np.where(s == 1, -big_r, big_r), 25)
    k, f = v >> 17, v & 0x1FFFF
    big_f = _quadratic(FSEL_EXP2, f >> 12, f & 0xFFF, 1 << 20)
    special = n | i | (e > 134)
    value = np.where(n, QNAN, np.where(s == 1, K0, POS_INF))
    return _finish(big_f, k + 107, 0, special, value)


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


# ----------------------------------------------------------------- dispatch by opcode
_UNARY: dict[int, Callable[[object], np.ndarray]] = {VEXP2: vexp2, VLOG2: vlog2, VINV: vinv, VRSQRT: vrsqrt}
_READS_B = frozenset({VMUL, VFMA, VFNMA, VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ})
_READS_C = frozenset({VADD, VSUB, VFMA, VFNMA, VSEL})
_CMP_PRED = {VCMPLT: cmp_lt, VCMPGT: cmp_gt, VCMPEQ: cmp_eq}


def _op_name(op) -> str:
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool):
        return f"{int(op):#04x}" + (f" ({OP_NAMES[int(op)]})" if 0 <= int(op) < len(OP_NAMES) else "")
    return repr(op)


def _checked(op, allowed, what: str) -> int:
    """The opcode as an int, or ValueError naming it."""
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool) and int(op) in allowed:
        return int(op)
    raise ValueError(f"{what}: opcode {_op_name(op)} is not one of "
                     f"{', '.join(f'{o:#04x}' for o in sorted(allowed))}")


def _alu_one(op: int, a, b, c) -> np.ndarray:
    for name, val, used in (("b", b, op in _READS_B), ("c", c, op in _READS_C)):
        if used and val is None:
            raise ValueError(f"alu: opcode {_op_name(op)} reads operand {name}, got None")
    if op in _UNARY:
        return _UNARY[op](a)
    return _fma_op(op, a, K0 if b is None else b, K0 if c is None else c)


def alu(op, a, b=None, c=None) -> np.ndarray:
    """The lane result of ISA opcode 0x00..0x11 (V.6.2 / V.6.4) on patterns a, b, c.

    ``op`` is normally a Python int; an integer array selects the op per lane (each
    distinct opcode is evaluated once over the whole vector, then selected). Operands
    an op does not read may be None. Anything else than 0x00..0x11 is a ValueError.
    """
    if np.ndim(op) == 0:
        return _alu_one(_checked(op, range(len(OP_NAMES)), "alu"), a, b, c)
    ops = np.asarray(op)
    if ops.dtype.kind not in "iu":
        raise ValueError(f"alu: opcodes must be integers, got dtype {ops.dtype}")
    codes = [int(o) for o in np.unique(ops)]
    for o in codes:
        _checked(o, range(len(OP_NAMES)), "alu")
    out: Optional[np.ndarray] = None
    for o in codes:
        res = _alu_one(o, a, b, c)
        out = res if out is None else np.where(ops == o, res, out)
    return _u32(np.broadcast_to(out, np.broadcast_shapes(ops.shape, out.shape)))


def compare(op, a, b) -> np.ndarray:
    """The predicate (bool array) of VCMPLT, VCMPGT or VCMPEQ (0x0B..0x0D), for P writes."""
    return _CMP_PRED[_checked(op, _CMP_PRED, "compare")](a, b)


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
    "K0", "K1", "K2", "QNAN", "POS_INF", "NEG_INF", "NEG_LOG2E", "COEFFS", "OP_NAMES",
    "pack", "fma", "cmp_lt", "cmp_gt", "cmp_eq",
    "vmov", "vneg", "vabs", "vadd", "vsub", "vmul", "vfma", "vfnma", "vmax", "vmin", "vsel",
    "vcmplt", "vcmpgt", "vcmpeq", "vexp2", "vlog2", "vinv", "vrsqrt", "alu", "compare",
    "silu_e8m15", "silu_fp16", "silu_ref",
]
