"""Lanes with error: the vector core's ALU stages and VRED trees, each value with its error bound.

One role: given an opcode, its operands as (E8M15 patterns, error bounds) and
the machine's result patterns (the golden model's own arithmetic,
models.numerics.e8m15_alu), the result's error bound by the rules of
models/bundle/bound/rules.py. The values are never recomputed differently from the
golden model: every pattern here comes from models.numerics (e8m15, e8m15_alu).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from models.numerics import e8m15, e8m15_alu
from models.vector.isa import CMP_OPS, LANES, RedKind
from models.vector.lanes import IDENTITY

from . import rules
from .rules import BoundError, e8

SIGN_OF = {e8m15.VSUB: -1.0, e8m15.VFNMA: -1.0}


@dataclass
class Lanes:
    """E8M15 patterns (uint32), their error bounds (float64), a lower bound of the exact value beyond
    ``value - err`` where an operation knows one (-inf elsewhere), and the exact value itself as float64
    evaluates the program's math (what the judge compares with, models/bundle/kernel_judge.py), lane for lane.

    Why the floor: first order alone loses that 2^x is positive, so 1 / (1 + 2^x) with an uncertain x (SiLU,
    GELU, softmax) would look unbounded; VEXP2 records ``2^(x - e)`` as the floor, sums and products of
    non-negative floors keep one, and VINV, VRSQRT and VLOG2 use it as the smallest their input can be."""

    bits: np.ndarray
    err: np.ndarray
    floor: np.ndarray | None = None
    exact: np.ndarray | None = None  # the float64 value of the program's math (None: the lane's own value)

    def __post_init__(self) -> None:
        if self.floor is None:
            self.floor = np.full(np.shape(self.err), -np.inf)
        if self.exact is None:
            self.exact = self.value

    @cached_property
    def value(self) -> np.ndarray:
        """The machine's values (decoded once: a Lanes' bits are never changed after it is made)."""
        return e8(self.bits)

    @property
    def low(self) -> np.ndarray:
        """A lower bound of the exact value."""
        assert self.floor is not None
        return np.maximum(self.floor, self.value - self.err)


def _down(x: np.ndarray) -> np.ndarray:
    """x rounded towards -inf by one float64 step (a floor computed in float64 stays a floor)."""
    return np.nextafter(x, -np.inf)


def alu(op: int, a: Lanes, b: Lanes | None, c: Lanes | None) -> tuple[Lanes, np.ndarray | None]:
    """One ALU stage: (result with its bound, the lanes whose compare may have flipped, or None). A bound that
    is not a number (an infinity times zero, on lanes holding no data) is unbounded: inf."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out, maybe = _alu(op, a, b, c)
        out.exact = exact_alu(op, a, b, c)
    out.err = np.where(np.isnan(out.err), np.inf, out.err)
    return out, maybe


def _x(v: Lanes | None) -> np.ndarray:
    assert v is not None and v.exact is not None
    return v.exact


# the float64 math of each ALU opcode (units.md V.6.2, V.6.4) on the operands' exact values
_EXACT = {
    e8m15.VMOV: lambda a, b, c: a,
    e8m15.VNEG: lambda a, b, c: -a,
    e8m15.VABS: lambda a, b, c: np.abs(a),
    e8m15.VADD: lambda a, b, c: a + c,
    e8m15.VSUB: lambda a, b, c: a - c,
    e8m15.VMUL: lambda a, b, c: a * b,
    e8m15.VFMA: lambda a, b, c: a * b + c,
    e8m15.VFNMA: lambda a, b, c: c - a * b,
    e8m15.VMAX: lambda a, b, c: np.maximum(a, b),
    e8m15.VMIN: lambda a, b, c: np.minimum(a, b),
    e8m15.VSEL: lambda a, b, c: np.where(c != 0, a, b),
    e8m15.VCMPLT: lambda a, b, c: np.where(a < b, 1.0, 0.0),
    e8m15.VCMPGT: lambda a, b, c: np.where(a > b, 1.0, 0.0),
    e8m15.VCMPEQ: lambda a, b, c: np.where(a == b, 1.0, 0.0),
    e8m15.VEXP2: lambda a, b, c: np.exp2(a),
    e8m15.VLOG2: lambda a, b, c: np.log2(a),
    e8m15.VINV: lambda a, b, c: 1.0 / a,
    e8m15.VRSQRT: lambda a, b, c: 1.0 / np.sqrt(a),
}


def apply_exactly(op: int, a: np.ndarray, b: np.ndarray | None, c: np.ndarray | None) -> np.ndarray:
    """One ALU opcode's math in float64 on operand values (None: an operand the op does not read); a compare
    gives the chain's 1.0 / +0."""
    if op not in _EXACT:
        raise BoundError(f"the error analysis knows no rule for ALU opcode {op:#04x}")
    zero = np.zeros(np.shape(a))
    return np.asarray(_EXACT[op](a, zero if b is None else b, zero if c is None else c), dtype=np.float64)


def exact_alu(op: int, a: Lanes, b: Lanes | None, c: Lanes | None) -> np.ndarray:
    """The exact (float64) result of one ALU stage on its operands' exact values (its predicate, for a compare:
    ``exact != 0``)."""
    return apply_exactly(op, _x(a), None if b is None else _x(b), None if c is None else _x(c))


def _alu(op: int, a: Lanes, b: Lanes | None, c: Lanes | None) -> tuple[Lanes, np.ndarray | None]:
    bits = np.asarray(e8m15_alu.alu(op, a.bits, None if b is None else b.bits, None if c is None else c.bits),
                      dtype=np.uint32)
    r = e8(bits)
    av, ea = a.value, a.err
    if op == e8m15.VMOV:
        return Lanes(bits, ea.copy(), a.floor), None
    if op in (e8m15.VNEG, e8m15.VABS):
        return Lanes(bits, ea.copy(), np.maximum(a.low, 0.0) if op == e8m15.VABS else None), None
    if op in (e8m15.VADD, e8m15.VSUB):
        assert c is not None
        floor = _down(a.low + c.low) if op == e8m15.VADD else None
        return Lanes(bits, rules.add(av, ea, c.value, c.err, r, SIGN_OF.get(op, 1.0)), floor), None
    if op == e8m15.VMUL:
        assert b is not None
        nonneg = (a.low >= 0) & (b.low >= 0)
        floor = np.where(nonneg, _down(np.where(nonneg, a.low * b.low, 0.0)), -np.inf)
        return Lanes(bits, rules.mul(av, ea, b.value, b.err, r), floor), None
    if op in (e8m15.VFMA, e8m15.VFNMA):
        assert b is not None and c is not None
        return Lanes(bits, rules.fma(av, ea, b.value, b.err, c.value, c.err, r, SIGN_OF.get(op, 1.0))), None
    if op in (e8m15.VMAX, e8m15.VMIN):
        assert b is not None
        floor = np.maximum(a.low, b.low) if op == e8m15.VMAX else np.minimum(a.low, b.low)
        return Lanes(bits, rules.extreme(av, ea, b.value, b.err, op == e8m15.VMAX), floor), None
    if op == e8m15.VSEL:
        assert b is not None and c is not None
        cv = c.value
        maybe = (c.err > 0) & (np.abs(cv) <= c.err)  # c might be zero (or not) in the exact math
        took_a = (c.bits & e8m15.MAG) != 0
        chosen, other = np.where(took_a, av, b.value), np.where(took_a, b.value, av)
        ec, eo = np.where(took_a, ea, b.err), np.where(took_a, b.err, ea)
        return Lanes(bits, rules.flip(chosen, ec, other, eo, maybe), np.minimum(a.low, b.low)), None
    if op in CMP_OPS:
        assert b is not None
        maybe = rules.unsure(av, ea, b.value, b.err)
        return Lanes(bits, np.where(maybe, 1.0, 0.0)), maybe  # the chain value 1.0 / +0
    if op == e8m15.VEXP2:
        err = rules.exp2(av, ea, r)
        return Lanes(bits, err, np.where(np.isfinite(err), _down(2.0 ** (av - ea)), -np.inf)), None
    lo = a.low  # the smallest the exact input can be (|a*| for VINV of a negative a: |a| - ea)
    if op == e8m15.VINV:
        mag_lo = np.where(av > 0, lo, np.abs(av) - ea)
        err = rules.inv(av, ea, mag_lo, r)
        pos = (av > 0) & np.isfinite(err)
        return Lanes(bits, err, np.where(pos, _down(1.0 / np.where(pos, av + ea, 1.0)), -np.inf)), None
    if op == e8m15.VRSQRT:
        err = rules.rsqrt(av, ea, lo, r)
        ok = np.isfinite(err)
        return Lanes(bits, err, np.where(ok, _down(1.0 / np.sqrt(np.where(ok, av + ea, 1.0))), -np.inf)), None
    if op == e8m15.VLOG2:
        return Lanes(bits, rules.log2(av, ea, lo, r)), None
    raise BoundError(f"the error analysis knows no rule for ALU opcode {op:#04x}")


Note = Callable[[str, np.ndarray, np.ndarray], None]  # (operation, own error, the magnitude it is relative to)


_SUMS = {e8m15.VADD, e8m15.VSUB, e8m15.VFMA, e8m15.VFNMA}


def own_error(op: int, a: Lanes, b: Lanes | None, c: Lanes | None, r: Lanes) -> tuple[np.ndarray, np.ndarray]:
    """One stage's own error: its result against the same operation applied exactly to the machine's own
    operand values (models/bundle/bound/ledger.py), and the scale it is relative to: the magnitude of what a
    sum adds (|a| + |c|, |a b| + |c|), else of the exact result."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        f = apply_exactly(op, a.value, None if b is None else b.value, None if c is None else c.value)
        scale = np.abs(f)
        if op in _SUMS:
            assert c is not None
            first = a.value * (b.value if op in (e8m15.VFMA, e8m15.VFNMA) and b is not None else 1.0)
            scale = np.abs(first) + np.abs(c.value)
        return np.abs(r.value - f), scale


def chain(stages: list[tuple[int, Lanes | None, Lanes | None, Lanes | None]],
          note: Note | None = None) -> tuple[Lanes, np.ndarray | None]:
    """A chain of stages (None operands: the previous stage's result), as models.vector.lanes.run_chain;
    `note` is told each stage's own error (compares have none: they decide, they do not round)."""
    prev: Lanes | None = None
    maybe: np.ndarray | None = None
    for op, a, b, c in stages:
        a, b, c = (prev if x is None else x for x in (a, b, c))
        assert a is not None
        prev, maybe = alu(op, a, b, c)
        if note is not None and op not in CMP_OPS:
            note(e8m15.OP_NAMES[op], *own_error(op, a, b, c, prev))
    assert prev is not None
    return prev, maybe


# ---------------------------------------------------------------- VRED (V.9)
def _combine(kind: RedKind, x: Lanes, y: Lanes) -> Lanes:
    if kind == RedKind.SUM:
        bits = np.asarray(e8m15.vadd(x.bits, y.bits), dtype=np.uint32)
        return Lanes(bits, rules.add(x.value, x.err, y.value, y.err, e8(bits)), _down(x.low + y.low),
                     _x(x) + _x(y))
    larger = kind == RedKind.MAX
    fn = e8m15.vmax if larger else e8m15.vmin
    return Lanes(np.asarray(fn(x.bits, y.bits), dtype=np.uint32),
                 rules.extreme(x.value, x.err, y.value, y.err, larger),
                 np.maximum(x.low, y.low) if larger else np.minimum(x.low, y.low),
                 np.maximum(_x(x), _x(y)) if larger else np.minimum(_x(x), _x(y)))


def _part(x: Lanes, index: object) -> Lanes:
    assert x.floor is not None
    return Lanes(x.bits[index], x.err[index], x.floor[index], _x(x)[index])


def _pairs(kind: RedKind, x: Lanes) -> Lanes:
    return _combine(kind, _part(x, (Ellipsis, slice(0, None, 2))), _part(x, (Ellipsis, slice(1, None, 2))))


def _tree8(kind: RedKind, x: Lanes) -> Lanes:
    return _part(_pairs(kind, _pairs(kind, _pairs(kind, x))), (Ellipsis, 0))


KNOWN_REDUCTIONS = (RedKind.SUM, RedKind.MAX, RedKind.MIN)  # the VRED kinds with a rule


def reduce(kind: RedKind, a: Lanes, vl: int) -> Lanes:
    """VRED SUM / MAX / MIN at VL: the combine order of models.vector.lanes.reduce_tree (per chunk a pair step and
    an 8-leaf tree, combined with the identity, then the same over the 16 accumulators), each combine with
    its rule; the result is one lane."""
    if kind not in KNOWN_REDUCTIONS:
        raise BoundError(f"the error analysis knows no rule for VRED.{kind.name}")
    n = vl // LANES
    ident = np.uint32(IDENTITY[kind])
    assert a.floor is not None
    x = Lanes(*(v[: n * LANES].reshape(n, LANES) for v in (a.bits, a.err, a.floor, _x(a))))
    identity = Lanes(np.full(n, ident, np.uint32), np.zeros(n))
    per_chunk = _combine(kind, _tree8(kind, _pairs(kind, x)), identity)
    assert per_chunk.floor is not None
    planes = [np.full(16, ident, np.uint32), np.zeros(16), np.full(16, e8(np.array([ident]))[0]), None]
    planes[3] = planes[2].copy()  # the identity's exact value is its value
    for plane, part in zip(planes, (per_chunk.bits, per_chunk.err, per_chunk.floor, _x(per_chunk))):
        plane[:n] = part  # type: ignore[index]
    acc = Lanes(*planes)  # type: ignore[arg-type]
    top = _tree8(kind, _pairs(kind, acc))
    assert top.floor is not None
    return Lanes(*(np.atleast_1d(v) for v in (top.bits, top.err, top.floor, _x(top))))


__all__ = ["KNOWN_REDUCTIONS", "Lanes", "alu", "apply_exactly", "chain", "exact_alu", "own_error", "reduce"]
