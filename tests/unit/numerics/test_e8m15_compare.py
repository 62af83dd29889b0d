"""The vector core's E8M15 compares, VMAX/VMIN/VSEL and the opcode dispatch, without RTL.

Compares against units.md V.6.1 (raw-bit order, NaN false, a non-canonical zero above +0; as values
1.0 / +0) and, on canonical operands, against the numeric order; VMAX/VMIN/VSEL against V.8 (NaN
position, zeros out as +0, VSEL on c's magnitude bits); m8a.alu / m8a.compare dispatching opcodes 00..11
of V.8 and refusing others; shapes, dtypes and the named constants; the cost of one 128-element op.

The pattern helpers, constants and the seeded generator come from tests/unit/numerics/e8m15_ref.py. The
references here are written from the spec's text and never call the model.
"""

from __future__ import annotations


import numpy as np
import pytest

from models.numerics import e8m15 as m8
from models.numerics import e8m15_alu as m8a
from models.numerics import e8m15_transcendental as m8t
from models.numerics import e8m15_cvt
from models.numerics.formats import E8M15, decode
from tests.unit.numerics.e8m15_ref import RNG, SIGN, INF, QNAN, ONE, P0, N0, rand_pat


# ===================================================================== V.6.1 compares, V.8 max/min/sel, dispatch
def test_compare_semantics() -> None:
    lt, gt, eq = m8.cmp_lt, m8.cmp_gt, m8.cmp_eq
    two, m_two, nan = 0x400000, 0xC00000, 0x7FC000
    assert bool(lt(ONE, two)) and bool(lt(m_two, 0xBF8000)) and bool(lt(m_two, ONE)) and not bool(lt(two, ONE))
    assert bool(gt(two, ONE)) and bool(gt(0xBF8000, m_two)) and not bool(gt(ONE, ONE))
    assert bool(eq(P0, N0)) and bool(eq(ONE, ONE)) and not bool(eq(ONE, 0xBF8000))
    for f in (lt, gt, eq):  # NaN: every compare false
        assert not bool(f(nan, ONE)) and not bool(f(ONE, 0xFF8001)) and not bool(f(nan, nan))
    # raw bits: a non-canonical zero is above +0 and unequal to it; its negative is below -0
    assert bool(gt(0x000001, P0)) and bool(lt(P0, 0x000001)) and not bool(eq(0x000001, P0))
    assert bool(lt(0x800001, N0)) and bool(eq(0x000001, 0x000001)) and bool(lt(0x800001, 0x000001))
    assert bool(lt(SIGN | INF, m_two)) and bool(gt(INF, 0x7F7FFF)) and bool(eq(INF, INF))
    # as values: 1.0 or +0, shaped like the inputs
    v = m8.vcmplt(np.array([ONE, two, nan, P0]), np.array([two, ONE, ONE, N0]))
    assert v.dtype == np.uint32 and list(v) == [ONE, P0, P0, P0]
    assert int(m8.vcmpgt(0x000001, P0)) == ONE and int(m8.vcmpeq(P0, N0)) == ONE and int(m8.vcmpeq(nan, nan)) == P0


def test_compare_matches_float_order() -> None:
    """On canonical operands the raw-bit compare is the numeric order (-0 == +0)."""
    a, b = rand_pat(20000, 0, 255), rand_pat(20000, 0, 255)
    b[:5000] = a[:5000] ^ (RNG.integers(0, 2, 5000) << 23)
    b[5000:8000] = a[5000:8000] + RNG.integers(-2, 3, 3000)
    a = np.where(((a >> 15) & 0xFF) == 0, a & SIGN, a)
    b = np.where(((b >> 15) & 0xFF) == 0, b & SIGN, b) & 0xFFFFFF
    va, vb = decode(a, E8M15), decode(b, E8M15)
    assert np.array_equal(m8.cmp_lt(a, b), va < vb)
    assert np.array_equal(m8.cmp_gt(a, b), va > vb)
    assert np.array_equal(m8.cmp_eq(a, b), va == vb)
    assert np.array_equal(m8a.compare(0x0B, a, b), va < vb) and np.array_equal(m8a.compare(0x0D, a, b), va == vb)


def test_max_min_sel_semantics() -> None:
    mx, mn, sel = m8.vmax, m8.vmin, m8.vsel
    two = 0x400000
    assert int(mx(ONE, two)) == two and int(mn(ONE, two)) == ONE and int(mx(0xBF8000, 0xC00000)) == 0xBF8000
    assert int(mx(ONE, QNAN)) == ONE and int(mx(QNAN, ONE)) == QNAN  # VMAX(x, NaN) = x; VMAX(NaN, x) = NaN
    assert int(mn(ONE, 0xFF8001)) == ONE and int(mn(0x7F8001, ONE)) == QNAN
    assert int(mx(P0, N0)) == P0 and int(mx(N0, P0)) == P0 and int(mn(N0, P0)) == P0  # zeros come out +0
    assert int(mx(0x000001, P0)) == P0 and int(mx(0x000001, ONE)) == ONE  # non-canonical zero: +0 out
    assert int(mx(SIGN | INF, 0xFF7FFF)) == 0xFF7FFF and int(mn(INF, 0x7F7FFF)) == 0x7F7FFF
    assert int(mx(two, SIGN | INF)) == two and int(mn(two, INF)) == two
    # VSEL: c's magnitude bits, not a predicate
    for c, pick_a in ((P0, False), (N0, False), (0x000001, True), (ONE, True), (INF, True), (QNAN, True),
                      (0x800100, True)):
        assert int(sel(two, ONE, c)) == (two if pick_a else ONE), hex(c)
    assert int(sel(N0, ONE, ONE)) == P0 and int(sel(0x7F8001, ONE, ONE)) == QNAN


def test_alu_dispatch() -> None:
    a, b, c = rand_pat(300, 0, 255), rand_pat(300, 0, 255), rand_pat(300, 0, 255)
    named = [m8.vmov(a), m8.vneg(a), m8.vabs(a), m8.vadd(a, c), m8.vsub(a, c), m8.vmul(a, b), m8.vfma(a, b, c),
             m8.vfnma(a, b, c), m8.vmax(a, b), m8.vmin(a, b), m8.vsel(a, b, c), m8.vcmplt(a, b), m8.vcmpgt(a, b),
             m8.vcmpeq(a, b), m8t.vexp2(a), m8t.vlog2(a), m8t.vinv(a), m8t.vrsqrt(a)]
    for op, want in enumerate(named):
        got = m8a.alu(op, a, b, c)
        assert got.dtype == np.uint32 and got.shape == a.shape and np.array_equal(got, want), hex(op)
        assert np.array_equal(m8a.alu(np.int64(op), a, b, c), want)
    ops = RNG.integers(0, 0x12, a.size)
    lanes = m8a.alu(ops, a, b, c)
    assert np.array_equal(lanes, np.stack(named)[ops, np.arange(a.size)])
    for op, f in ((0x0B, m8.cmp_lt), (0x0C, m8.cmp_gt), (0x0D, m8.cmp_eq)):
        assert np.array_equal(m8a.compare(op, a, b), f(a, b)) and m8a.compare(op, a, b).dtype == bool
    assert int(m8a.alu(0x00, 0xBF8000)) == 0xBF8000 and int(m8a.alu(0x0E, P0)) == ONE  # unread operands may be absent
    for bad in (0x12, 0x1F, -1, 3.0, "VADD", None):
        with pytest.raises(ValueError, match=str(hex(bad)) if isinstance(bad, int) else "opcode"):
            m8a.alu(bad, a, b, c)
    with pytest.raises(ValueError, match="0x12"):
        m8a.alu(np.array([0, 0x12]), a[:2], b[:2], c[:2])
    with pytest.raises(ValueError, match="0x0a"):
        m8a.compare(0x0A, a, b)
    with pytest.raises(ValueError, match="operand c"):
        m8a.alu(0x03, a, b, None)


def test_shapes_and_dtypes() -> None:
    assert m8.vadd(ONE, ONE).shape == () and int(m8.vadd(ONE, ONE)) == 0x400000
    a = rand_pat(12).reshape(3, 4)
    assert m8.vfma(a, ONE, np.zeros((1, 4), np.uint32)).shape == (3, 4)
    assert m8t.vexp2(a.astype(np.uint32)).dtype == np.uint32 and m8.cmp_lt(a, a.T[:1].T).dtype == bool
    assert e8m15_cvt.e8m15_to_fp16(a).dtype == np.uint16 and e8m15_cvt.fp16_to_e8m15(a & 0xFFFF).dtype == np.uint32
    assert (m8.K0, m8.K1, m8.K2, m8.QNAN, m8.POS_INF, m8.NEG_INF) == (0, 0x3F8000, 0xBF8000, QNAN, INF, 0xFF8000)
    assert m8.NEG_LOG2E == 0xBFB8AA == 12564650 and abs(decode(m8.NEG_LOG2E, E8M15) + 1 / np.log(2)) < 2.0 ** -15
