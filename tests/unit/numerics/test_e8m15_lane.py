"""The lane-by-lane form of the E8M15 datapath (models/numerics/e8m15_lane.py) against the numpy form
(models/numerics/e8m15.py), bit for bit.

Why: the VRED trees and every small vector run on the lane form, so a slip in it would change the golden
model's bits while the numpy form's own tests (test_e8m15_fma.py against the exact reference) still pass.
Stimuli: the corner patterns crossed three ways, random 24-bit patterns over every exponent (zeros,
non-canonical zeros, Inf and NaN included), products aimed at the addend's alignment edges (cancellation,
the bypass edge, shifts past the sticky window), PACK on magnitudes of every width with exponents around
overflow and flush, and patterns with bits above the lane width.
"""

from __future__ import annotations

import numpy as np

from models.numerics import e8m15 as m8
from models.numerics import e8m15_lane as lane
from tests.unit.numerics.e8m15_ref import CORNERS, pat, show

SEED = np.random.default_rng(20261207)


def _numpy_fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The numpy form of the datapath, whatever width the dispatch in e8m15._fma would choose."""
    return m8._fma_arrays(*(np.asarray(v, dtype=np.int64) for v in (x, y, z)))


def _check_fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
    want = _numpy_fma(x & 0xFFFFFF, y & 0xFFFFFF, z & 0xFFFFFF).tolist()
    got = [lane.fma_lane(a, b, c) for a, b, c in zip(x.tolist(), y.tolist(), z.tolist())]
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, (f"{len(bad)} lane(s) differ; first: fma({show(int(x[bad[0]]) & 0xFFFFFF)}, "
                     f"{show(int(y[bad[0]]) & 0xFFFFFF)}, {show(int(z[bad[0]]) & 0xFFFFFF)}) "
                     f"lane {got[bad[0]]:#08x} numpy {want[bad[0]]:#08x}")


def _any_pattern(n: int) -> np.ndarray:
    """Random patterns over all 24 bits, with extra weight on e = 0 and e = 255."""
    e = SEED.integers(0, 256, n)
    e = np.where(SEED.random(n) < 0.1, 0, np.where(SEED.random(n) < 0.1, 255, e))
    m = np.where(SEED.random(n) < 0.2, SEED.integers(0, 4, n), SEED.integers(0, 1 << 15, n))
    return pat(SEED.integers(0, 2, n), e, m)


def test_fma_lane_on_the_corners_crossed() -> None:
    x, y, z = (g.ravel() for g in np.meshgrid(CORNERS, CORNERS, CORNERS, indexing="ij"))
    _check_fma(x, y, z)


def test_fma_lane_on_random_patterns() -> None:
    n = 40_000
    _check_fma(_any_pattern(n), _any_pattern(n), _any_pattern(n))


def test_fma_lane_on_aimed_addends() -> None:
    """z's exponent from far below to far above the product's: every alignment shift, the bypass edge
    (d < 0), the sticky window (s >= 33) and exact or near cancellation (z = -x*y rounded)."""
    n = 30_000
    s = SEED.integers(0, 2, (3, n))
    ex, ey = SEED.integers(60, 195, n), SEED.integers(60, 195, n)
    d = SEED.integers(-5, 55, n)  # d = ex + ey - ez - 110 as the datapath computes it
    ez = np.clip(ex + ey - 110 - d, 1, 254)
    small = SEED.random((3, n)) < 0.3  # short mantissas make exact products and ties
    m = np.where(small, SEED.integers(0, 8, (3, n)) << 12, SEED.integers(0, 1 << 15, (3, n)))
    x, y, z = pat(s[0], ex, m[0]), pat(s[1], ey, m[1]), pat(s[2], ez, m[2])
    _check_fma(x, y, z)
    prod = np.asarray(m8.vmul(x, y), dtype=np.int64)
    _check_fma(x, y, prod ^ 0x800000)  # z = -(x*y rounded): cancellation
    _check_fma(x, y, (prod ^ 0x800000) + SEED.integers(-3, 4, n).clip(-(prod & 0x7FFF), None))


def test_fma_lane_reads_the_low_24_bits() -> None:
    n = 5_000
    high = SEED.integers(0, 1 << 40, (3, n)) << 24
    x, y, z = _any_pattern(n), _any_pattern(n), _any_pattern(n)
    want = _numpy_fma(x, y, z).tolist()
    assert [lane.fma_lane(a, b, c) for a, b, c in
            zip((x | high[0]).tolist(), (y | high[1]).tolist(), (z | high[2]).tolist())] == want


def test_pack_lane_matches_pack() -> None:
    n = 40_000
    width = SEED.integers(0, 49, n)
    mag = np.where(width == 0, 0, (SEED.integers(0, 1 << 62, n) >> (62 - np.maximum(width, 1))) | (
        np.where(width > 0, 1, 0) << np.maximum(width - 1, 0)))
    mag = np.where(SEED.random(n) < 0.2, (1 << width.clip(0, 47)) - 1, mag)  # all ones: rounding carries
    ebase = SEED.integers(-60, 300, n) - width
    sign, stk, cancel = SEED.integers(0, 2, n), SEED.random(n) < 0.5, SEED.random(n) < 0.5
    want = m8.pack(mag, ebase, sign, stk, cancel).tolist()
    got = [lane.pack_lane(*a) for a in zip(mag.tolist(), ebase.tolist(), sign.tolist(), stk.tolist(),
                                            cancel.tolist())]
    assert got == want


def test_compares_and_reduction_combines_match() -> None:
    a = np.concatenate([np.repeat(CORNERS, len(CORNERS)), _any_pattern(20_000)])
    b = np.concatenate([np.tile(CORNERS, len(CORNERS)), _any_pattern(20_000)])
    al, bl = a.tolist(), b.tolist()
    assert [lane.cmp_lt_lane(x, y) for x, y in zip(al, bl)] == m8.cmp_lt(a, b).tolist()
    assert [lane.cmp_gt_lane(x, y) for x, y in zip(al, bl)] == m8.cmp_gt(a, b).tolist()
    for fn, op in ((lane.vadd_lane, m8.VADD), (lane.vmax_lane, m8.VMAX), (lane.vmin_lane, m8.VMIN)):
        # VADD reads (a, c), VMAX / VMIN (a, b): the second pattern goes to both b and c
        want = m8._fma_arrays(*(np.asarray(v, dtype=np.int64) for v in
                                m8._OPERANDS[op](m8._bits(a), m8._bits(b), m8._bits(b))))
        assert [fn(x, y) for x, y in zip(al, bl)] == want.tolist(), m8.OP_NAMES[op]


def test_small_arrays_take_the_lane_form_with_the_same_result() -> None:
    """e8m15's public ops on a few lanes (the lane form) equal the same ops on a wide array (numpy)."""
    a, b, c = _any_pattern(4096), _any_pattern(4096), _any_pattern(4096)
    wide = m8.vfma(a, b, c)
    assert wide.dtype == np.uint32
    for lo in range(0, 4096, 7 * 16):
        part = m8.vfma(a[lo:lo + 7], b[lo:lo + 7], c[lo:lo + 7])
        assert part.dtype == np.uint32 and part.tolist() == wide[lo:lo + 7].tolist()
    one = m8.vfma(int(a[0]), int(b[0]), int(c[0]))
    assert np.shape(one) == () and int(one) == int(wide[0])
    grid = m8.vadd(a[:12].reshape(3, 4), c[:4])
    assert grid.shape == (3, 4) and grid.tolist() == m8.vadd(a[:12], np.tile(c[:4], 3)).reshape(3, 4).tolist()


def test_mov_lane_equals_the_datapath_on_every_exponent() -> None:
    """mov_lane returns a finite non-zero pattern unchanged without the datapath: every sign, every exponent
    (0 and 255 included), the mantissa extremes and random mantissas, and bits above the lane width."""
    s, e, m = np.meshgrid([0, 1], np.arange(256), np.concatenate([[0, 1, 0x4000, 0x7FFE, 0x7FFF],
                                                                   SEED.integers(0, 1 << 15, 59)]), indexing="ij")
    x = pat(s.ravel(), e.ravel(), m.ravel())
    x = np.concatenate([x, x[::7] | (SEED.integers(1, 1 << 20, x[::7].size) << 24)])
    want = _numpy_fma(x & 0xFFFFFF, np.full_like(x, m8.K1), np.zeros_like(x)).tolist()
    assert [lane.mov_lane(v) for v in x.tolist()] == want
    assert [lane.vadd_lane(v, 0) for v in x.tolist()] == want
    assert [lane.vadd_lane(v, 1 << 24) for v in x.tolist()] == want  # only the low 24 bits of c are read


def test_the_mov_ops_shortcut_equals_the_datapath() -> None:
    """The ops whose Y, Z are 1.0, +0 (VMOV, VNEG, VABS, VMAX, VMIN, VSEL, the compares as values) skip the FMA
    (e8m15._mov): the same bits as the datapath on the selected X, for every exponent and the corners."""
    s, e, m = np.meshgrid([0, 1], np.arange(256), np.concatenate([[0, 1, 0x4000, 0x7FFF],
                                                                   SEED.integers(0, 1 << 15, 28)]), indexing="ij")
    a = np.concatenate([pat(s.ravel(), e.ravel(), m.ravel()), np.repeat(CORNERS, len(CORNERS))])
    b = np.concatenate([_any_pattern(a.size - len(CORNERS) ** 2), np.tile(CORNERS, len(CORNERS))])
    c = _any_pattern(a.size)
    assert m8._mov(a).tolist() == _numpy_fma(a, np.full_like(a, m8.K1), np.zeros_like(a)).tolist()
    for op in sorted(m8._MOV_OPS):
        x, y, z = m8._OPERANDS[op](m8._bits(a), m8._bits(b), m8._bits(c))
        assert (y, z) == (m8.K1, m8.K0), m8.OP_NAMES[op]
        want = _numpy_fma(*np.broadcast_arrays(np.asarray(x, np.int64), y, z)).tolist()
        assert m8._fma_op(op, a, b, c).tolist() == want, m8.OP_NAMES[op]
        assert m8._fma_op(op, a[:5], b[:5], c[:5]).tolist() == want[:5], m8.OP_NAMES[op]


def test_vmul_reduced_form_equals_the_datapath() -> None:
    """Wide VMULs without an Inf or NaN operand take e8m15._mul: the datapath's bits on random patterns over
    every finite exponent (products that overflow, flush, round on a tie, carry into the exponent, zero
    factors, both signs), and None (the datapath instead) as soon as one operand is an Inf or a NaN."""
    n = 60_000
    ex, ey = SEED.integers(0, 255, n), SEED.integers(0, 255, n)
    ey = np.where(SEED.random(n) < 0.5, np.clip(254 - ex + SEED.integers(-130, 130, n), 0, 254), ey)
    short = SEED.random((2, n)) < 0.3  # short mantissas: exact products and ties
    m = np.where(short, SEED.integers(0, 16, (2, n)) << 11, SEED.integers(0, 1 << 15, (2, n)))
    x, y = pat(SEED.integers(0, 2, n), ex, m[0]), pat(SEED.integers(0, 2, n), ey, m[1])
    want = _numpy_fma(x, y, np.zeros_like(x)).tolist()
    assert m8._mul(x, y).tolist() == want
    assert m8.vmul(x, y).tolist() == want
    assert m8.vmul(x[:40], y[:40]).tolist() == want[:40]
    for bad in (0x7F8000, 0xFF8000, 0x7FC000, 0x7F8001):
        xb = x[:64].copy()
        xb[7] = bad
        assert m8._mul(xb, y[:64]) is None and m8._mul(y[:64], xb) is None
        assert m8.vmul(xb, y[:64]).tolist() == _numpy_fma(xb, y[:64], np.zeros(64, np.int64)).tolist()
    scalar = _numpy_fma(x[:100], np.full(100, y[0]), np.zeros(100, np.int64)).tolist()
    assert m8.vmul(x[:100], int(y[0])).tolist() == scalar
