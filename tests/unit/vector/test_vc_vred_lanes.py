"""models.vector.lanes.reduce_tree (combines lane by lane on Python ints) against the same V.9 tree built here
from the numpy ops (models.numerics.e8m15.vadd / vmax / vmin, :func:`tree8`), bit for bit.

Why: the golden model's VRED runs the lane form; this holds its combine tree to the numpy datapath on every
kind and legal VL, over random patterns with zeros, non-canonical zeros, Inf and NaN mixed in, and over values
whose sums cancel, so a change to either form that moves one bit fails here. (SUMSQ/DOT leaves are the same
e8m15.vmul here as in the model, held to the lane form in tests/unit/numerics/test_e8m15_lane.py; EXPSUM's
exponentials are held to float64's exp2 within the table's error.)
"""

from __future__ import annotations

import numpy as np
import pytest

from models.numerics import e8m15, e8m15_transcendental
from models.vector.isa import LANES, RedKind
from models.vector.lanes import IDENTITY, reduce_tree

RNG = np.random.default_rng(4242)


def _wide(f):
    """A combine that always runs the numpy form (its operands broadcast to at least LANE_FORM_MAX + 1 lanes)."""
    def g(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        pad = e8m15.LANE_FORM_MAX + 1
        xs = np.broadcast_to(x, shape).reshape(-1)
        ys = np.broadcast_to(y, shape).reshape(-1)
        out = f(np.concatenate([xs, np.zeros(pad, xs.dtype)]), np.concatenate([ys, np.zeros(pad, ys.dtype)]))
        return np.asarray(out, dtype=np.uint32)[: xs.size].reshape(shape)
    return g


def _pairs(f, x: np.ndarray) -> np.ndarray:
    """f(x0, x1), f(x2, x3), ... along the last axis."""
    return np.asarray(f(x[..., 0::2], x[..., 1::2]), dtype=np.uint32)


def tree8(f, y: np.ndarray) -> np.ndarray:
    """V.9's T(y0..y7) = f(f(f(y0,y1), f(y2,y3)), f(f(y4,y5), f(y6,y7))) along the last axis (8 wide)."""
    return _pairs(f, _pairs(f, _pairs(f, y)))[..., 0]


NUMPY_COMBINE = {RedKind.MAX: _wide(e8m15.vmax), RedKind.MIN: _wide(e8m15.vmin)}


def numpy_reduce(kind: RedKind, a: np.ndarray, b: np.ndarray, vl: int) -> int:
    """V.9's order with numpy combines: per chunk / beat a tree T with the identity into acc, then T of acc."""
    f = NUMPY_COMBINE.get(kind, _wide(e8m15.vadd))
    ident = np.uint32(IDENTITY[kind])
    n = vl // LANES
    acc = np.full(16, ident, dtype=np.uint32)
    if kind in (RedKind.SUM, RedKind.MAX, RedKind.MIN):
        x = a[: n * LANES].reshape(n, LANES)
        acc[:n] = f(tree8(f, f(x[:, 0::2], x[:, 1::2])), np.full(n, ident, dtype=np.uint32))
    else:
        if kind == RedKind.EXPSUM:
            leaf = np.asarray(e8m15_transcendental.vexp2(a), dtype=np.uint32)[: n * LANES]
        else:
            leaf = np.asarray(e8m15.vmul(a[: n * LANES], b[: n * LANES]), dtype=np.uint32)
        acc[: 2 * n] = f(tree8(f, leaf.reshape(2 * n, 8)), np.full(2 * n, ident, dtype=np.uint32))
    return int(tree8(f, f(acc[0::2], acc[1::2])))


def _within_exp2(a: np.ndarray, expo: np.ndarray) -> None:
    """EXPSUM's V[vb] against float64's exp2 of the same inputs, within one E8M15 ulp (the table is 0.71 ulp,
    docs/numerics.md §5), on the finite lanes of moderate exponent."""
    from models.bundle.bound.rules import e8

    x = e8(a)
    ok = np.isfinite(x) & (np.abs(x) < 100)
    want = np.exp2(x[ok])
    assert np.all(np.abs(e8(expo)[ok] - want) <= 2.0 ** -15 * 2.0 ** np.floor(np.log2(want)))


def _vector(special: float) -> np.ndarray:
    e = RNG.integers(100, 155, 128)
    v = (RNG.integers(0, 2, 128) << 23) | (e << 15) | RNG.integers(0, 1 << 15, 128)
    odd = RNG.random(128) < special
    v = np.where(odd, RNG.choice([0x000000, 0x800000, 0x000123, 0x7F8000, 0xFF8000, 0x7FC000, 0x7F7FFF], 128), v)
    return v.astype(np.uint32)


@pytest.mark.parametrize("kind", [RedKind.SUM, RedKind.MAX, RedKind.MIN, RedKind.SUMSQ, RedKind.DOT,
                                  RedKind.EXPSUM])
def test_reduce_tree_equals_the_numpy_tree(kind: RedKind) -> None:
    for vl in range(0, 129, 16):
        for special in (0.0, 0.05, 0.3):
            for _ in range(4):
                a, b = _vector(special), _vector(special)
                if kind == RedKind.SUM and special == 0.0:
                    a[1::2] = a[0::2] ^ 0x800000  # pairs that cancel exactly
                got, expo = reduce_tree(kind, a, b, vl)
                assert isinstance(got, int)
                assert got == numpy_reduce(kind, a, b, vl), (kind.name, vl, special)
                if kind == RedKind.EXPSUM:
                    assert expo is not None
                    _within_exp2(a, expo)
                else:
                    assert expo is None


@pytest.mark.parametrize("kind", [RedKind.MAX, RedKind.MIN])
def test_max_min_without_nan_or_zero_leaves_take_the_order_and_equal_the_tree(kind: RedKind) -> None:
    """MAX / MIN whose leaves hold no NaN and no zero pattern skip the tree (lanes._ordered_extreme): the
    same bits as the numpy tree, with Infs, the largest finite patterns, ties and both signs among the
    leaves; one NaN or zero leaf sends it back to the tree."""
    from models.vector.lanes import _ordered_extreme

    for vl in range(16, 129, 16):
        for trial in range(12):
            a = _vector(0.0)
            picks = RNG.choice([0x7F8000, 0xFF8000, 0x7F7FFF, 0xFF7FFF, 0x008000, 0x808000, int(a[3])], 128)
            a = np.where(RNG.random(128) < [0.0, 0.05, 0.3, 1.0][trial % 4], picks, a).astype(np.uint32)
            assert _ordered_extreme(a[:vl], kind == RedKind.MAX) is not None
            got, _ = reduce_tree(kind, a, a, vl)
            assert got == numpy_reduce(kind, a, a, vl), (kind.name, vl, trial)
            spoiled = a.copy()
            spoiled[RNG.integers(0, vl)] = RNG.choice([0x000000, 0x800000, 0x000123, 0x7FC000, 0xFF8001])
            assert _ordered_extreme(spoiled[:vl], kind == RedKind.MAX) is None
            assert reduce_tree(kind, spoiled, spoiled, vl)[0] == numpy_reduce(kind, spoiled, spoiled, vl)
