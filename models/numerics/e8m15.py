"""Bit-exact model of the vector core's E8M15 lane arithmetic, as units.md V.6 fixes it: the FMA
datapath, PACK, the compares and the ops that pass through the datapath.

Programs built by the upstream compiler must give the upstream hardware's bits,
so this module reproduces upstream's datapath (``vector/vec_alu.v``) literally,
departures from correct rounding included.
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
  compares greater than +0.

The transcendentals of V.6.4 (VEXP2, VLOG2, VINV, VRSQRT over the coefficient
table, through this module's PACK) and SiLU are
models.numerics.e8m15_transcendental; the lane result by opcode (``alu``,
``compare``) is models.numerics.e8m15_alu, which imports both.

Every function is numpy-vectorised: any integer array or scalar of 24-bit
patterns in (the low 24 bits are used), np.uint32 patterns (bool for
predicates) out, shaped like the broadcast inputs.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .e8m15_lane import K1, MAG, POS_INF, QNAN, _MASK33, _MASK48, fma_lane
from .rounding import clamp, const, low_bits, round_half_even, top_bit

_I64 = np.int64

# ----------------------------------------------------------------- constants
# K1 (1.0), QNAN, POS_INF, MAG and the window masks come from e8m15_lane, which needs them too and
# cannot import this module (this one imports it); they are re-exported here.
K0 = 0x000000  # +0.0, constant register K0
K2 = 0xBF8000  # -1.0, K2
NEG_INF = 0xFF8000
NEG_LOG2E = 0xBFB8AA  # -log2(e): the compiler's VSETI immediate 12564650 for SiLU/sigmoid

SIGN = 0x800000

# ISA opcodes of the lane operations (units.md V.8).
VMOV, VNEG, VABS, VADD, VSUB, VMUL, VFMA, VFNMA = range(0x00, 0x08)
VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ = range(0x08, 0x0E)
VEXP2, VLOG2, VINV, VRSQRT = range(0x0E, 0x12)
OP_NAMES = ("VMOV", "VNEG", "VABS", "VADD", "VSUB", "VMUL", "VFMA", "VFNMA", "VMAX", "VMIN", "VSEL",
            "VCMPLT", "VCMPGT", "VCMPEQ", "VEXP2", "VLOG2", "VINV", "VRSQRT")


# ----------------------------------------------------------------- bit helpers
def _bits(x) -> np.ndarray:
    """Patterns as int64, low 24 bits (the lane width)."""
    return low_bits(x, 24)


def _fields(p: np.ndarray):
    """``(s, e, m)`` of int64 patterns."""
    return (p >> _C23) & _C1, (p >> _C15) & _CFF, p & _M15


def _wrap(v: np.ndarray, n: int) -> np.ndarray:
    """``wrapN(v)``: v mod 2^n read as a signed n-bit number, for the widths the transcendentals wrap to
    (22, 25, 30: their constants are made once, below); another width is a ValueError naming it."""
    try:
        half, mask = _WRAP_CONSTS[n]
    except KeyError:
        raise ValueError(f"_wrap: width {n} is not one of {sorted(_WRAP_CONSTS)}") from None
    return ((v + half) & mask) - half


# the widths the transcendentals wrap to, their constants as 0-d arrays (rounding.const says why)
_WRAP_CONSTS = {n: (const(1 << (n - 1)), const((1 << n) - 1)) for n in (22, 25, 30)}


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


# the datapath's constants as 0-d arrays (rounding.const says why)
_C0, _C1, _C2, _C15, _C16, _C23, _C31, _C32, _C47, _C48 = (const(v) for v in (0, 1, 2, 15, 16, 23, 31, 32, 47, 48))
_C110, _C157, _C255, _CFF = const(110), const(157), const(255), const(0xFF)
_M15, _GUARD15, _M31, _M33, _M48 = const(0x7FFF), const(0x8000), const(0x7FFFFFFF), const(_MASK33), const(_MASK48)
_TOP47, _INF, _QNAN, _MAG = const(1 << 47), const(POS_INF), const(QNAN), const(MAG)
_C14, _C127 = const(14), const(127)


def _pack(mag: np.ndarray, ebase: np.ndarray, sign: np.ndarray, stk, cancel) -> np.ndarray:
    """PACK on int64 operands already in range (mag < 2^48, sign 0/1): the datapath's own call.

    Round to nearest even on the window's bits 31 and below: up when the guard (bit 31) is set and any
    lower bit, ``stk`` or the kept lsb is; a carry out of 16 bits leaves the fraction 0 (``q & 0x7FFF``).
    """
    p = top_bit(mag)
    n = (mag << np.maximum(_C47 - p, _C0)) & _M48
    kept = n >> _C32
    sticky = ((n & _M31) != _C0) | np.asarray(stk, dtype=bool)
    q = round_half_even(kept, (n >> _C31) & _C1, sticky)
    carry = q >> _C16
    e = p + carry + ebase
    sbit = sign << _C23
    finite = sbit | np.where(e >= _C255, _INF, np.where(e <= _C0, _C0, (e << _C15) | (q & _M15)))
    out = np.where(mag == _C0, np.where(np.asarray(cancel, dtype=bool), _C0, sbit), finite)
    return out.astype(np.uint32)


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


LANE_FORM_MAX = 32  # widest call evaluated lane by lane (e8m15_lane); numpy's fixed cost wins above


def _fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """fma() on int64 24-bit patterns (Python-int constants become 0-d arrays).

    A call of at most LANE_FORM_MAX lanes runs lane by lane on Python ints
    (models.numerics.e8m15_lane, the same steps), where numpy's cost per
    operation, not per lane, would dominate; wider calls run :func:`_fma_arrays`.
    """
    x, y, z = np.asarray(x, dtype=_I64), np.asarray(y, dtype=_I64), np.asarray(z, dtype=_I64)
    if max(x.size, y.size, z.size) > LANE_FORM_MAX:  # the broadcast is at least as wide: skip working it out
        return _fma_arrays(x, y, z)
    shape = np.broadcast_shapes(x.shape, y.shape, z.shape)
    if math.prod(shape) > LANE_FORM_MAX:
        return _fma_arrays(x, y, z)
    xs, ys, zs = (np.broadcast_to(v, shape).ravel().tolist() for v in (x, y, z))
    return np.array([fma_lane(a, b, c) for a, b, c in zip(xs, ys, zs)], dtype=np.uint32).reshape(shape)


def _fma_arrays(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The datapath in numpy on int64 arrays (of any width; :func:`_fma` picks it for wide ones).

    Written for few array operations (the vector core calls it once per ALU op on 128 lanes, where the cost
    is per operation): the sticky of the addend's shifted-out bits is ``(add << s) != gZ * 2^32``, and the
    special-value override runs only when some operand has exponent 255.
    """
    sx, ex, mx = _fields(x)
    sy, ey, my = _fields(y)
    sz, ez, mz = _fields(z)
    zx, zy, cz = ex == _C0, ey == _C0, ez == _C0
    pz = zx | zy
    esum = np.where(pz, _C2, ex + ey)  # ex1 + ey1: both read as 1 when the product is zero
    sxy = sx ^ sy
    neg = sxy != sz
    d = esum - (ez + _C110)
    byp = (d < _C0) & ~cz
    s = np.where(cz, _C48, clamp(d, _C0, _C48))  # 0 on the bypass (d < 0)
    ebase = np.where(byp, ez - _C47, esum - _C157)
    g32 = (mz | _GUARD15) << _C32
    add = g32 >> s
    stk = (add << s) != g32
    prod = np.where(byp | pz, _C0, (mx | _GUARD15) * (my | _GUARD15))
    total = np.where(neg, add - prod, add + prod) & _M48
    rneg = neg & (total >= _TOP47) & (s != _C0)
    mag = np.where(rneg, (-total) & _M33, total)
    sign = np.where(neg & ~rneg, sz, sxy)
    out = _pack(mag, ebase, sign, stk, neg & ~(pz | cz))
    if np.maximum(np.maximum(ex, ey), ez).max() < 0xFF:
        return out
    nan, inf, inf_sign = _specials(x, y, z, sxy, sz, zx, zy)
    out = np.where(inf, (inf_sign << 23) | POS_INF, out)
    return _u32(np.where(nan, QNAN, out))


# ----------------------------------------------------------------- compare (V.6.1)
def _compare(a, b):
    """``(lt, gt, eq, nan)`` of V.6.1 on raw bits."""
    a, b = _bits(a), _bits(b)
    sa, sb = a >> _C23, b >> _C23
    ma, mb = a & _MAG, b & _MAG
    nan = (ma > _INF) | (mb > _INF)
    eq = ((ma == _C0) & (mb == _C0)) | ((ma == mb) & (sa == sb))
    ordered = np.where(sa != sb, sa == _C1, np.where(sa == _C1, ma > mb, ma < mb))
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


# The ops whose Y and Z are 1.0 and +0: the datapath is VMOV of the selected X (:func:`_mov`).
_MOV_OPS = frozenset({VMOV, VNEG, VABS, VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ})


def _mov(x: np.ndarray) -> np.ndarray:
    """``X*1.0 + (+0)`` on 24-bit patterns: X when it is finite and non-zero (exponent 1..254), +0 for a
    zero, X for an Inf, the canonical NaN for a NaN.

    The datapath gives exactly that (models.numerics.e8m15_lane.mov_lane says why for the finite case; the
    zeros follow the sign rule, Inf and NaN the override), in a handful of array operations instead of the
    whole FMA; the unit tests compare the two on every exponent.
    """
    e = (x >> _C15) & _CFF
    special = np.where((x & _M15) == _C0, x, _QNAN)
    return np.where(e == _C0, _C0, np.where(e == _CFF, special, x)).astype(np.uint32)


def _mul(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``X*Y + (+0)`` (VMUL) on int64 24-bit patterns, or None when an operand is an Inf or a NaN.

    Why the datapath reduces so with Z = +0: s = 48, so the addend adds nothing but a set sticky bit (D2:
    exact ties round away), with no bypass and no cancellation; gX*gY lies in [2^30, 2^32), so PACK keeps
    its 16 bits from bit 15 (or 16 when bit 31 is set), adds the next bit (the sticky being set), and the
    exponent is eX + eY - 127 plus that extra top bit and the rounding's carry; a zero factor (exponent 0)
    gives +0. Half the operations of the general datapath; the unit tests compare the two.
    """
    ex, ey = (x >> _C15) & _CFF, (y >> _C15) & _CFF
    if max(ex.max(), ey.max()) == 0xFF:
        return None
    prod = ((x & _M15) | _GUARD15) * ((y & _M15) | _GUARD15)
    big = prod >> _C31  # 1 when the product's top bit is bit 31
    q = (prod >> (_C15 + big)) + ((prod >> (_C14 + big)) & _C1)
    e = ex + ey + big + (q >> _C16) - _C127
    body = np.where(e >= _C255, _INF, np.where(e <= _C0, _C0, (e << _C15) | (q & _M15)))
    out = ((((x ^ y) >> _C23) & _C1) << _C23) | body
    return np.where((ex == _C0) | (ey == _C0), _C0, out).astype(np.uint32)


def _fma_op(op: int, a, b=K0, c=K0) -> np.ndarray:
    """One V.6.2 op: select X, Y, Z, then the datapath (VMOV's and VMUL's reduced forms where they apply)."""
    x, y, z = _OPERANDS[op](_bits(a), _bits(b), _bits(c))
    if op in _MOV_OPS:
        return _mov(np.asarray(x, dtype=_I64))
    if op == VMUL and max(np.size(x), np.size(y)) > LANE_FORM_MAX:
        product = _mul(*np.broadcast_arrays(np.asarray(x, dtype=_I64), np.asarray(y, dtype=_I64)))
        if product is not None:
            return product
    return _fma(x, y, z)


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


__all__ = [
    "K0", "K1", "K2", "QNAN", "POS_INF", "NEG_INF", "NEG_LOG2E", "OP_NAMES",
    "pack", "fma", "cmp_lt", "cmp_gt", "cmp_eq",
    "vmov", "vneg", "vabs", "vadd", "vsub", "vmul", "vfma", "vfnma", "vmax", "vmin", "vsel",
    "vcmplt", "vcmpgt", "vcmpeq",
]
