"""The integer rounding kernel of the generic encoder (``formats.encode`` / ``convert``).

A value is handled as an exact integer magnitude and the exponent of its least
significant bit: ``value = mag * 2**lsb_exp``.  :func:`round_nearest_even`
rounds such a value to a given number of significant bits (round to nearest,
ties to even), optionally with a floor on the exponent of the result's lsb
(gradual underflow, as in IEEE subnormals).  The tests use that encoder as a
correctly rounded reference; the units' own datapaths round as the spec pins
them (the cluster: ``cluster``, units.md C.7; the vector core: ``e8m15``,
``e8m15_cvt``, units.md V.6/V.7).  All functions take and return numpy int64
arrays (scalars broadcast); magnitudes must stay below 2**62.  Small helpers
(:func:`low_bits`, :func:`top_bit`, :func:`round_half_even`, :func:`bit_length`,
:func:`clamp`, :func:`const`) serve those fixed-width datapaths, which round on
explicit guard/sticky bits.
"""

from __future__ import annotations

import numpy as np

I64 = np.int64


def as_i64(x) -> np.ndarray:
    """An int64 array view of an int, sequence or array."""
    return np.asarray(x, dtype=I64)


def low_bits(x, width: int) -> np.ndarray:
    """The low ``width`` bits of each integer as int64: a pattern as a port of that width sees it."""
    return np.asarray(x, dtype=I64) & ((1 << width) - 1)


def top_bit(v) -> np.ndarray:
    """Index of the top set bit of each non-negative int64 below 2^53 (-1 for 0).

    frexp is exact for such integers, so this is a priority encoder in three numpy
    operations (the vector core's PACK and conversions call it on every lane).
    """
    return np.frexp(as_i64(v).astype(np.float64))[1].astype(I64) - 1


_CONSTS: dict[int, np.ndarray] = {}


def const(value: int) -> np.ndarray:
    """An int64 constant as a read-only 0-d array, one shared array per value.

    Why 0-d arrays: numpy combines one with an array in about half the time it takes to convert a Python
    int on every operation, and the lane datapaths are mostly such operations on a vector register's 128
    lanes. Why shared: every module that binds ``const(v)`` at import gets the same object, so a value has
    one definition however many datapaths name it. Why read-only: a shared constant written in place (an
    ``out=`` or ``+=`` on it) would change every datapath's arithmetic at once; numpy now refuses that.
    """
    a = _CONSTS.get(value)
    if a is None:
        a = np.array(value, dtype=I64)
        a.setflags(write=False)
        _CONSTS[value] = a
    return a


def clamp(v, lo: int | np.ndarray, hi: int | np.ndarray) -> np.ndarray:
    """``v`` limited to ``lo..hi`` (integers or 0-d :func:`const` arrays): np.clip's result, without its
    per-call dtype-limit checks, which cost more than the clamp itself on the datapaths' small arrays."""
    return np.minimum(np.maximum(v, lo), hi)


_ONE = const(1)
# numpy's native dtypes are singletons, so an identity test is the cheapest exact-dtype check (a dtype that
# is equal but not identical, say a byte-swapped one, is merely converted)
_I64_DTYPE, _BOOL_DTYPE = np.dtype(I64), np.dtype(bool)


def round_half_even(kept, guard, sticky) -> np.ndarray:
    """``kept`` plus the round-to-nearest-even increment, given the guard bit (0/1) and the
    sticky flag (any bit below the guard set).

    The fixed-width datapaths (e8m15 PACK, the FP16 store) call this on every lane vector with int64
    arrays and a bool sticky already, so operands of those dtypes are used as they are: the conversions
    (np.asarray per operand) would otherwise cost as much as the rounding itself. Anything else (ints,
    lists, other dtypes) is converted as before.
    """
    if type(kept) is not np.ndarray or kept.dtype is not _I64_DTYPE:
        kept = as_i64(kept)
    if type(guard) is not np.ndarray or guard.dtype is not _I64_DTYPE:
        guard = as_i64(guard)
    if type(sticky) is not np.ndarray or sticky.dtype is not _BOOL_DTYPE:
        sticky = np.asarray(sticky, bool)
    return kept + (guard & (sticky | (kept & _ONE)))


def bit_length(v) -> np.ndarray:
    """Bit length of each non-negative int64 (0 for 0), by a 6-step binary search."""
    v = as_i64(v)
    n = np.zeros(v.shape, I64)
    for s in (32, 16, 8, 4, 2, 1):
        big = v >= (I64(1) << s)
        n = np.where(big, n + s, n)
        v = np.where(big, v >> s, v)
    return n + (v > 0)


def round_nearest_even(mag, lsb_exp, prec: int, emin_lsb: int | None = None, sticky=False):
    """Round ``mag * 2**lsb_exp`` to ``prec`` significant bits, ties to even.

    ``sticky`` marks a value slightly above ``mag`` (by less than one lsb); it is
    only meaningful when ``mag`` has more than ``prec`` bits (it does here).
    ``emin_lsb`` is the smallest exponent the result's lsb may take (gradual
    underflow: below it the result keeps fewer than ``prec`` bits); ``None``
    means unbounded (the caller flushes).

    Returns ``(sig, out_lsb)`` with ``value = sig * 2**out_lsb``, ``sig < 2**prec``;
    ``sig >= 2**(prec-1)`` unless the result is zero or under the ``emin_lsb``
    floor.  A carry out of the top bit is renormalised (``sig`` halves,
    ``out_lsb`` grows by one).
    """
    mag, lsb, st = np.broadcast_arrays(as_i64(mag), as_i64(lsb_exp), np.asarray(sticky, bool))
    out = lsb + bit_length(mag) - prec
    if emin_lsb is not None:
        out = np.maximum(out, emin_lsb)
    sh = out - lsb
    right = clamp(sh, 0, 63)
    q = mag >> right
    rem = mag - (q << right)
    half = np.where(right > 0, I64(1) << np.maximum(right - 1, 0), 0)
    up = (right > 0) & ((rem > half) | ((rem == half) & (st | ((q & 1) == 1))))
    q = np.where(sh < 0, mag << clamp(-sh, 0, 62), q + up)
    carry = (q >> prec) > 0
    return np.where(carry, q >> 1, q), np.where(carry, out + 1, out)
