"""The vector core's element-wise work: chains of ALU stages and the VRED trees (units.md V.5, V.9).

Pure functions over numpy arrays of E8M15 patterns (128 elements, element e =
lane e mod 16 of chunk e div 16); every operation is the exact arithmetic of
models.numerics (e8m15, e8m15_transcendental, by opcode e8m15_alu). No state lives here: models.vector.core gathers the
operands and decides what is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from models.numerics import e8m15, e8m15_alu, e8m15_lane, e8m15_transcendental

from .isa import CMP_OPS, LANES, VL_MAX, RedKind

Vec = np.ndarray  # uint32[128] of E8M15 patterns


@dataclass(frozen=True)
class Stage:
    """One gathered chain stage: its opcode and three operands, each an array or None for 'C'."""

    op: int
    a: Vec | None
    b: Vec | None
    c: Vec | None


def run_chain(stages: Sequence[Stage]) -> tuple[Vec, Vec | None]:
    """(value, predicate) of the last stage; C operands are the previous stage's value.

    The predicate is the last stage's compare result (None when it is not a compare).
    """
    value: Vec | None = None
    pred: Vec | None = None
    for s in stages:
        a, b, c = (value if x is None else x for x in (s.a, s.b, s.c))
        value = np.asarray(e8m15_alu.alu(s.op, a, b, c), dtype=np.uint32)
        pred = np.asarray(e8m15_alu.compare(s.op, a, b), dtype=bool) if s.op in CMP_OPS else None
    assert value is not None, "a chain has at least one stage"
    return value, pred


# ---------------------------------------------------------------- VRED (V.9)
IDENTITY = {RedKind.SUM: 0x000000, RedKind.MAX: 0xFF8000, RedKind.MIN: 0x7F8000, RedKind.SUMSQ: 0x000000,
            RedKind.DOT: 0x000000, RedKind.EXPSUM: 0x000000}


_LANE_COMBINE: dict[RedKind, Callable[[int, int], int]] = {
    RedKind.MAX: e8m15_lane.vmax_lane, RedKind.MIN: e8m15_lane.vmin_lane}  # others: ADD (a + c)


def _lane_pairs(f: Callable[[int, int], int], x: list[int]) -> list[int]:
    """f(x0, x1), f(x2, x3), ... of a flat list."""
    return [f(a, b) for a, b in zip(x[0::2], x[1::2])]


def _lane_tree8(f: Callable[[int, int], int], y: list[int]) -> list[int]:
    """tree8 of each run of 8 in a flat list (one result per run): three pair steps."""
    return _lane_pairs(f, _lane_pairs(f, _lane_pairs(f, y)))


def _ordered_extreme(x: Vec, largest: bool) -> int | None:
    """The MAX (MIN) tree's result when no leaf is a NaN or a zero pattern (exponent 0), else None.

    Why the tree's order then does not matter: on such patterns the raw-bit compare of V.6.1 is the order of
    the values (distinct patterns, distinct values), so VMAX(a, b) selects the larger one, and VMOV of a
    finite non-zero pattern or an Inf returns it unchanged; every combine is then max(a, b) and the tree is
    the largest leaf (the identity, -Inf for MAX and +Inf for MIN, never wins over a leaf). A NaN or a zero
    leaf makes the order matter (VMAX(x, NaN) = x but VMAX(NaN, x) = NaN; VMOV turns -0 into +0), and then
    the tree is walked.
    """
    p = x.astype(np.int64) & 0xFFFFFF
    e = (p >> 15) & 0xFF
    if not np.all((e != 0) & ((e != 0xFF) | ((p & 0x7FFF) == 0))):
        return None
    key = np.where(p >> 23 == 1, -(p & 0x7FFFFF), p & 0x7FFFFF)  # sign-magnitude as a signed number
    return int(p[np.argmax(key) if largest else np.argmin(key)])


def reduce_tree(kind: RedKind, a: Vec, b: Vec, vl: int) -> tuple[int, Vec | None]:
    """(S result, EXPSUM's elementwise VEXP2 or None) of VRED kinds 0..5 at VL (a multiple of 16).

    The combine order is V.9's: per chunk (kinds 0-2) or per half-chunk beat
    (kinds 3-5) an 8-leaf tree T combined with the identity into acc[0..15],
    then T over the pairs of acc. The combines run lane by lane on Python ints
    (models.numerics.e8m15_lane, the same datapath as :func:`tree8`'s numpy
    form): the tree's vectors are 1 to 32 lanes wide, where numpy's fixed cost per
    call is most of the work.
    """
    n = vl // LANES
    if kind in (RedKind.MAX, RedKind.MIN) and n:
        extreme = _ordered_extreme(a[: n * LANES], kind == RedKind.MAX)
        if extreme is not None:
            return extreme, None
    f = _LANE_COMBINE.get(kind, e8m15_lane.vadd_lane)
    ident = IDENTITY[kind]
    acc = [ident] * 16
    expo = None
    if kind in (RedKind.SUM, RedKind.MAX, RedKind.MIN):
        leaves = _lane_pairs(f, a[: n * LANES].tolist())  # 8 per chunk
        acc[:n] = [f(t, ident) for t in _lane_tree8(f, leaves)]
    else:
        if kind == RedKind.EXPSUM:
            expo = np.asarray(e8m15_transcendental.vexp2(a), dtype=np.uint32)
            leaf = expo[: n * LANES]
        else:  # SUMSQ and DOT: va[e] * vb[e]
            leaf = np.asarray(e8m15.vmul(a[: n * LANES], b[: n * LANES]), dtype=np.uint32)
        acc[: 2 * n] = [f(t, ident) for t in _lane_tree8(f, leaf.tolist())]  # 8 per beat
    (result,) = _lane_tree8(f, _lane_pairs(f, acc))
    return result, expo


def any_all(kind: RedKind, pred: np.ndarray, vl: int) -> int:
    """ANY / ALL: 1.0 if any / every bit of the predicate below VL is set, else +0."""
    bits = pred[:vl]
    hit = bool(bits.any()) if kind == RedKind.ANY else bool(bits.all())
    return 0x3F8000 if hit else 0x000000


# ---------------------------------------------------------------- whole-chunk moves
def chunk_mask(vl: int) -> np.ndarray:
    """Elements of the chunks 0..ceil(VL/16)-1 (what VLD, VCVT, VSHUF and VBCAST write)."""
    nchunk = -(-vl // LANES)
    return np.arange(VL_MAX) < nchunk * LANES


def shuffle(v: Vec, shift: int) -> Vec:
    """VSHUF: lane i of each chunk = lane (i + shift) mod 16 of the same chunk."""
    chunks = v.reshape(-1, LANES)
    idx = (np.arange(LANES) + (shift & 0xF)) % LANES
    return chunks[:, idx].reshape(-1)


# ================================================================ lanes <-> words
def word_to_u16(word: int) -> np.ndarray:
    """A 256-bit word -> its 16 FP16 lanes (lane i = bits [16i+15:16i])."""
    return np.frombuffer(int(word).to_bytes(32, "little"), dtype="<u2").astype(np.uint16)


def words_to_u16(words: Sequence[int]) -> np.ndarray:
    """256-bit words -> uint16 (n, 16): row r is word r's lanes (lane i = bits [16i+15:16i])."""
    return np.array([word_to_u16(w) for w in words], dtype=np.uint16).reshape(-1, 16)


def u16_to_word(lanes) -> int:
    return int.from_bytes(np.asarray(lanes, dtype="<u2").tobytes(), "little")


def word_to_u32(word: int) -> np.ndarray:
    """A 256-bit word -> its 8 FP32 elements (element j = bits [32j+31:32j])."""
    return np.frombuffer(int(word).to_bytes(32, "little"), dtype="<u4").astype(np.uint32)


def u32_to_word(elems) -> int:
    return int.from_bytes(np.asarray(elems, dtype="<u4").tobytes(), "little")


__all__ = ["IDENTITY", "Stage", "any_all", "chunk_mask", "reduce_tree", "run_chain", "shuffle",
           "u16_to_word", "u32_to_word", "word_to_u16", "word_to_u32", "words_to_u16"]
