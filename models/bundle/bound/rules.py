"""Per-operation error propagation: how far one operation's result can land from the exact real math.

Every lane carries a value (the machine's bits, decoded exactly to float64)
and an absolute error bound ``e`` against the exact real-number result of the
program from its FP16 inputs (taken as exact). Each rule returns the result's
bound from its operands' values and bounds, to first order with the
operation's derivative, plus the operation's own rounding
(docs/numerics.md, "The float64 error bound", states every rule and its reason):

* E8M15 ops (units.md V.6): one unit of the 15-bit fraction of the result's
  binade (:func:`ue`), floored at 2^-126 (results below flush);
  none where the result is the exact result of the computed operands
  (known exactly in float64: products of two 16-bit significands, sums by
  two-sum), since an op whose result is representable does not round;
* table transcendentals (V.6.4): their measured maximum error in ulps of the
  result (docs/numerics.md §5) plus the input's error times the derivative's
  largest magnitude over ``[x - e, x + e]``; outside the domain where that is
  finite the bound is infinite and the judge refuses it;
* compares: a compare whose operands lie within their errors of each other
  may flip (:func:`unsure`); a lane written under a predicate that may have
  flipped takes the two candidates' difference as error (:func:`flip`);
* FP16 stores: half an FP16 ulp (subnormals kept), none for a value FP16
  holds exactly, or the saturation's actual loss (:func:`fp16_store`); the cluster's emit flushes below 2^-14
  (:func:`fp16_emit`);
* the accumulator (C.7): one unit of the 14-bit fraction per conversion and
  add (:func:`ue14`); the MXFP7 quantiser (M.3): 0.516 steps per element.

An unbounded error is ``inf`` (never a silent pass): the judge refuses a
judged lane whose bound is not finite.
"""

from __future__ import annotations

import numpy as np

from models.numerics.formats import ACC, E8M15, FP16, Format, decode
from models.numerics.formats import FP16_MAX as FP16_MAX_BITS
from models.numerics.reference import ulp

U = 2.0 ** -15  # one unit of the E8M15 fraction, relative
E8_FLOOR = 2.0 ** -126  # below the smallest E8M15 normal a result flushes
FP16_MIN_NORMAL = 2.0 ** -14
FP16_MAX = float(decode(FP16_MAX_BITS, FP16))  # 65504
LN2 = float(np.log(2.0))
SAFETY = 1.25  # covers what the analysis takes on trust: measured table errors, float64 bounds (numerics.md)
QUANT_STEPS = 0.516  # MXFP7 element error in steps (units.md M.3; the derivation in docs/numerics.md)
# Measured maximum errors of the table functions in ulps of the result (docs/numerics.md §5): over every
# FP16 input and over all 2^15 E8M15 mantissas (an operand the program computed need not be an FP16 value),
# the larger of the two. VLOG2 is 19.2 ulp over FP16 inputs; over E8M15 inputs 0.55 ulp outside [0.5, 2)
# and 9.2 * 2^-20 absolute inside it (an input near 1 with bits below FP16's reaches 170 ulps of a tiny result).
TABLE_ULPS = {"VEXP2": 0.71, "VLOG2": 19.2, "VINV": 0.60, "VRSQRT": 0.58}
LOG2_E8_ULPS = 0.55
LOG2_NEAR_ONE = 9.2 * 2.0 ** -20  # absolute, for an E8M15 (not FP16) input in [0.5, 2)
EXP2_ARG_LIMIT = 128.0  # |x| >= 128: the argument wraps (upstream defect D1), the result means nothing


class BoundError(ValueError):
    """Something the error analysis cannot bound (an opcode or mode it does not know): names it."""


def e8(bits: np.ndarray) -> np.ndarray:
    """E8M15 patterns -> exact float64 values, as models.numerics.formats.decode gives them (equal on all 2^24
    patterns, tests/unit/bundle/test_bound_rules.py) in a fraction of its time: an E8M15 pattern shifted up by
    8 bits is the float32 of the same value, except that E8M15 has no subnormals (exponent 0 reads as a signed
    zero). The analysis decodes every operand of every operation it follows."""
    u = np.asarray(bits).astype(np.uint32) & np.uint32(0xFFFFFF)
    with np.errstate(invalid="ignore"):
        value = (u << np.uint32(8)).view(np.float32).astype(np.float64)
    return np.where((u & np.uint32(0x7F8000)) == 0, np.copysign(0.0, value), value)


def f16(bits: np.ndarray) -> np.ndarray:
    """FP16 patterns -> exact float64 values."""
    return decode(np.asarray(bits, dtype=np.int64) & 0xFFFF, FP16)


def _ulp(x: np.ndarray, fmt: Format, floor: float, at_zero: float) -> np.ndarray:
    """models.numerics.reference.ulp at |x| (which reads 0 as 1.0), at least `floor`, `at_zero` where x is
    0, and infinite where x is not finite."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    step = np.where(ax > 0, np.maximum(ulp(ax, fmt), floor), at_zero)
    return np.where(np.isfinite(ax), step, np.inf)


def ue(*x: np.ndarray) -> np.ndarray:
    """One E8M15 ulp at the largest magnitude of the arguments (the computed result and the exact function of
    the computed operands: the rounding stays within one ulp of whichever binade is the larger)."""
    return _ulp(np.maximum.reduce([np.abs(np.asarray(v, dtype=np.float64)) for v in x]), E8M15, E8_FLOOR, at_zero=E8_FLOOR)


def ue14(x: np.ndarray) -> np.ndarray:
    """One unit of the accumulator's 14-bit fraction at |x| (S1E7M14 has no subnormals: +0 below)."""
    return _ulp(x, ACC, 0.0, at_zero=0.0)


def h16(x: np.ndarray) -> np.ndarray:
    """Half an FP16 ulp at |x| (round to nearest), subnormals included."""
    ax = np.abs(np.asarray(x, dtype=np.float64))
    return 0.5 * np.where(ax > 0, ulp(ax, FP16), 2.0 ** -24)


def fp16_store(value: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Rounding error of an E8M15 value stored as FP16 (VST, VCVT round): half an ulp, or past 65504 what the
    saturation actually lost (an infinity is unbounded)."""
    over = np.abs(value) > FP16_MAX
    return np.where(over | (stored == value), np.abs(stored - value), h16(value))


def fp16_emit(value: np.ndarray, emitted: np.ndarray) -> np.ndarray:
    """Rounding error of the cluster's S1E7M14 -> FP16 emit (C.7.5): half an ulp; below 2^-14 flushed to zero
    (or rounded up to 2^-14), at most |x| + half an ulp; past 65504 the saturation's actual loss."""
    av = np.abs(value)
    return np.where((av > FP16_MAX) | (emitted == value), np.abs(emitted - value),
                    np.where(av < FP16_MIN_NORMAL, av + h16(value), h16(value)))


# ---------------------------------------------------------------- E8M15 lane operations (V.6.2)
def exact_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x + y in float64, whether that float64 sum is exact): Knuth's two-sum, whose error term is exactly the
    rounding float64 made."""
    s = x + y
    bb = s - x
    with np.errstate(invalid="ignore"):
        t = (x - (s - bb)) + (y - bb)
    return s, t == 0


def rounding(r: np.ndarray, exact: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The op's own rounding: none where the machine's result is the exact result (known exactly in float64),
    else one E8M15 ulp of the larger of the two."""
    return np.where(known & (r == exact), 0.0, ue(r, np.where(np.isfinite(exact), exact, 0.0)))


def add(a: np.ndarray, ea: np.ndarray, c: np.ndarray, ec: np.ndarray, r: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """a + sign*c rounded to r."""
    s, known = exact_sum(a, sign * c)
    return ea + ec + rounding(r, s, known)


def mul(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray, r: np.ndarray) -> np.ndarray:
    """a * b rounded to r (the second-order ea*eb kept: it costs nothing; a product of two 16-bit significands
    is exact in float64)."""
    return np.abs(a) * eb + np.abs(b) * ea + ea * eb + rounding(r, a * b, np.isfinite(a * b))


def fma(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray, c: np.ndarray, ec: np.ndarray,
        r: np.ndarray, sign: float = 1.0) -> np.ndarray:
    """sign*a*b + c rounded once to r."""
    s, known = exact_sum(sign * a * b, c)
    return np.abs(a) * eb + np.abs(b) * ea + ea * eb + ec + rounding(r, s, known)


def extreme(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray, larger: bool) -> np.ndarray:
    """VMAX (larger) / VMIN: |max(a, b) - max(a*, b*)| <= max(ea, eb); where one operand is surely the
    larger (their error intervals do not meet) the result's error is that operand's alone."""
    a_wins = (a - ea > b + eb) if larger else (a + ea < b - eb)
    b_wins = (b - eb > a + ea) if larger else (b + eb < a - ea)
    return np.where(a_wins, ea, np.where(b_wins, eb, np.maximum(ea, eb)))


def unsure(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray) -> np.ndarray:
    """Whether a compare of a and b may decide otherwise than on the exact values: they lie within their
    errors of each other (exact operands never flip)."""
    tol = ea + eb
    return (tol > 0) & (np.abs(a - b) <= tol)


def flip(v1: np.ndarray, e1: np.ndarray, v2: np.ndarray, e2: np.ndarray, maybe: np.ndarray) -> np.ndarray:
    """Error of a choice between v1 (chosen, within e1) and v2 (within e2) that may have been the wrong one
    where `maybe`: then the exact math chose v2's exact value, |v1 - v2| + e2 away."""
    return np.where(maybe, np.maximum(e1, e2) + np.abs(v1 - v2), e1)


# ---------------------------------------------------------------- table functions (V.6.4)
def _guard(mask: np.ndarray, err: np.ndarray) -> np.ndarray:
    return np.where(mask, err, np.inf)


def exp2(a: np.ndarray, ea: np.ndarray, r: np.ndarray) -> np.ndarray:
    """VEXP2: table error plus ea * ln2 * 2^(a + ea); a lane near the wrap of D1 (|x| >= 128) is bounded only
    by |r| + 2^(a + ea) (exact value in (0, 2^(a+ea)]), which is finite for a very negative argument."""
    with np.errstate(over="ignore"):
        top = 2.0 ** (a + ea)
        inner = TABLE_ULPS["VEXP2"] * ue(r, 2.0 ** a) + LN2 * top * ea
    wild = np.abs(a) + ea >= EXP2_ARG_LIMIT - 2
    return np.where(wild, np.abs(r) + top, inner)


def log2(a: np.ndarray, ea: np.ndarray, lo: np.ndarray, r: np.ndarray) -> np.ndarray:
    """VLOG2: table error (by the input's class, :data:`TABLE_ULPS`) plus |log2 a - log2 a*| <=
    ea / (ln2 min(a, lo)), finite only when the exact input
    is known positive (``lo``: a lower bound of it, > 0)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exact = np.log2(np.where(a > 0, a, 1.0))
        low = np.minimum(a, lo)
        fp16_input = np.asarray(a, dtype=np.float16).astype(np.float64) == a
        near_one = (a >= 0.5) & (a < 2.0)
        table = np.where(fp16_input, TABLE_ULPS["VLOG2"] * ue(r, exact),
                         LOG2_E8_ULPS * ue(r, exact) + np.where(near_one, LOG2_NEAR_ONE, 0.0))
        err = table + ea / (LN2 * np.where(low > 0, low, 1.0))
    return _guard((lo > 0) & (a > 0), err)


def inv(a: np.ndarray, ea: np.ndarray, lo: np.ndarray, r: np.ndarray) -> np.ndarray:
    """VINV: table error plus |1/a - 1/a*| = |a - a*| / (|a| |a*|) <= ea / (|a| lo), finite only when the
    exact input keeps a's sign with |a*| >= lo > 0 (``lo``: a lower bound of |a*|)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        err = TABLE_ULPS["VINV"] * ue(r, 1.0 / np.where(a != 0, a, 1.0)) + \
            ea / np.where(lo > 0, lo * np.abs(a), 1.0)
    return _guard((lo > 0) & (a != 0), err)


def rsqrt(a: np.ndarray, ea: np.ndarray, lo: np.ndarray, r: np.ndarray) -> np.ndarray:
    """VRSQRT: table error plus |a^-1/2 - a*^-1/2| = |a - a*| / (sqrt(a a*) (sqrt a + sqrt a*))
    <= ea / (sqrt(a lo) (sqrt a + sqrt lo)), finite only when the exact input is known positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = 1.0 / np.sqrt(np.where(a > 0, a, 1.0))
        ok = (lo > 0) & (a > 0)
        den = np.where(ok, np.sqrt(a * lo) * (np.sqrt(a) + np.sqrt(lo)), 1.0)
        err = TABLE_ULPS["VRSQRT"] * ue(r, exact) + ea / den
    return _guard(ok, err)


__all__ = ["BoundError", "E8_FLOOR", "FP16_MAX", "QUANT_STEPS", "SAFETY", "TABLE_ULPS", "U", "add", "e8", "exp2",
           "extreme",
           "f16", "flip", "fma", "fp16_emit", "fp16_store", "h16", "inv", "log2", "mul", "rsqrt", "ue", "ue14",
           "unsure"]
