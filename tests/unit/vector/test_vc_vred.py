"""Directed tests of the vector-core golden model (models/vector/__init__.py over models/vector/): VRED
(0x13), against units.md V.9 (the exact tree order of every kind at every legal VL, compared with a left fold
and a lane-wise order on inputs where association matters; identities; kind = ir[7:5]; SUMSQ reading vb;
sa / sb / sc / pm not read; ANY / ALL reading P of the previous word's pr (D4); EXPSUM writing vb with the
last ALU word's pm (D5)) and V.10 (F_REDVL before F_OPCODE; F_OPCODE outside TREE).

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15_transcendental, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.numerics.e8m15_transcendental import vexp2
from tests.unit.vector.vc_spec import (
    F_OPCODE, F_REDVL, C, K, ONE, NEG0, VMOV, VRED, alu, W_HALT, vsetmode, vred, pro, retired, faulted, same, rnd_e8,
    e8, Rig, below, spec_vred, alt_orders,
)


# ================================================================ V.8 VRED, hand-checked
def test_op_13_vred_hand_checked():
    """VRED (0x13), hand-checked values (the tree order, identities, ANY/ALL, EXPSUM and faults have their
    own tests below): S[vd] = the reduction of V[va] at VL 128 in TREE mode."""
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    rig.setv(2, np.array([e8(float(i - 60)) for i in range(128)], dtype=np.uint32))
    retired(rig.go(pro(mode=3) + [vred(0, 3, 1), vred(1, 4, 2), vred(2, 5, 2), vred(4, 6, 1, 2), W_HALT]))
    assert rig.core.s[3] == e8(128.0), "SUM of 128 ones"
    assert (rig.core.s[4], rig.core.s[5]) == (e8(67.0), e8(-60.0)), "MAX, MIN of -60..67"
    assert rig.core.s[6] == e8(sum(i - 60 for i in range(128))), "DOT with ones = the sum of -60..67"


# ================================================================ V.9 VRED
def _red_inputs(kind, vl, seed):
    """Inputs on which the association matters. SUM / SUMSQ / DOT / EXPSUM: one leaf of 1.0 first, the others
    below half an ulp of it, so a left fold loses every small leaf while the V.9 tree adds small leaves to
    each other first. MAX / MIN: VMAX(NaN, x) is NaN but VMAX(x, NaN) is x, so a NaN's position matters."""
    rng = np.random.default_rng(seed)
    vb = rnd_e8(rng, lo=112, hi=136, specials=False)
    if kind == 5:  # va in (-18, -17]: VEXP2 leaves below 2^-16; va[0] = 0: the leaf 1.0
        va = (1 << 23 | 131 << 15 | rng.integers(2048, 4096, 128)).astype(np.uint32)
        va[0] = 0
    elif kind in (1, 2):
        va = rnd_e8(rng, lo=118, hi=136, specials=False)
        va[0] = va[vl - 1] = 0x7FC000
    else:  # 2^-18 <= va < 2^-16, va[0] = 1.0; DOT / SUMSQ: vb in {1.0, 0.5}, vb[0] = 1.0
        va = (rng.integers(109, 111, 128) << 15 | rng.integers(0, 1 << 15, 128)).astype(np.uint32)
        va[0] = ONE
        if kind in (3, 4):
            vb = np.where(rng.integers(0, 2, 128) == 1, ONE, e8(0.5)).astype(np.uint32)
            vb[0] = ONE
    return va, vb


@pytest.mark.parametrize("vl", [16, 48, 112, 128])
@pytest.mark.parametrize("kind", range(6), ids=["SUM", "MAX", "MIN", "SUMSQ", "DOT", "EXPSUM"])
def test_vred_exact_tree_order(kind, vl):
    va, vb = _red_inputs(kind, vl, vl + 7 * kind)
    exp = spec_vred(kind, va, vb, vl)
    alts = alt_orders(kind, va, vb, vl)
    assert exp not in alts or (kind in (1, 2) and alts != (exp, exp)), (
        f"test input does not discriminate the V.9 order from a left fold / lane-wise order: {exp:#x} {alts}")
    rig = Rig()
    rig.setv(1, va), rig.setv(3, vb)
    retired(rig.go(pro(vl=vl, mode=3) + [vred(kind, 2, 1, 3), W_HALT]))
    got = rig.core.s[2]
    assert got == exp, (f"VRED kind {kind} at VL {vl}: S2 = {got:#08x}, V.9 tree gives {exp:#08x}"
                        f" (left fold {alts[0]:#08x}, lane-wise {alts[1]:#08x})")
    with pytest.raises(AssertionError):  # the planted wrong orders would be caught by this comparison
        for alt in alts:
            assert got == alt


def test_vred_identities():
    rig = Rig()
    neg = np.array([e8(-(1 + i / 64)) for i in range(128)], dtype=np.uint32)
    pos = np.array([e8(2 + i / 64) for i in range(128)], dtype=np.uint32)
    rig.setv(1, neg), rig.setv(2, pos), rig.setv(3, np.full(128, NEG0))
    retired(rig.go(pro(vl=16, mode=3) + [vred(1, 4, 1), vred(2, 5, 2), vred(0, 6, 3), vred(4, 7, 3, 2), W_HALT]))
    assert rig.core.s[4] == e8(-1.0), "MAX identity is -Inf: max of negatives is the largest negative, not 0"
    assert rig.core.s[5] == e8(2.0), "MIN identity is +Inf: min of positives, not 0"
    assert rig.core.s[6] == 0, "SUM of -0s with identity +0 gives +0 (-0 + +0 = +0)"
    assert rig.core.s[7] == 0


def test_vred_kind_is_vc_2_0():
    rig = Rig()
    v = np.array([e8(float(i % 7)) for i in range(128)], dtype=np.uint32)
    rig.setv(1, v)
    rig.core.p[0, :5] = True
    retired(rig.go(pro(mode=3) + [vred(8, 2, 1), vred(0, 3, 1), vred(15, 4, pr=0), W_HALT]))
    assert rig.core.s[2] == rig.core.s[3] == spec_vred(0, v, v, 128), "kind = ir[7:5]: vc = 8 acts as SUM"
    assert rig.core.s[4] == 0, "vc = 15 acts as ALL (P0 not all set)"


def test_vred_sumsq_reads_vb():
    rig = Rig()
    va, vb = _red_inputs(3, 32, 7)
    rig.setv(1, va), rig.setv(2, vb)
    retired(rig.go(pro(vl=32, mode=3) + [vred(3, 4, 1, 2), W_HALT]))
    assert rig.core.s[4] == spec_vred(3, va, vb, 32) != spec_vred(3, va, va, 32), "SUMSQ leaf is va[e]*vb[e]"


def test_vred_does_not_read_sa_sb_sc_pm():
    """V.9: sa, sb, sc and pm of a VRED word are not read (so C selectors raise no F_CHAIN)."""
    rig = Rig()
    va, vb = _red_inputs(0, 128, 3)
    rig.setv(1, va)
    rig.core.p[2, 7] = True
    words = [alu(VMOV, vd=9, va=9, pr=2), alu(VRED, vd=3, va=1, vc=6, sa=C, sb=C, sc=C, pm=3, pr=1),
             vsetmode(3), alu(VRED, vd=4, va=1, vc=0, sa=C, sb=C, sc=C, pm=1, pr=0), W_HALT]
    retired(rig.go(words))
    assert rig.core.s[3] == ONE and rig.core.s[4] == spec_vred(0, va, vb, 128)


@pytest.mark.parametrize("kind", range(6))
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_f_redvl_before_f_opcode(kind, mode):
    rig = Rig()
    rig.core.s[4] = 0x123
    faulted(rig.go(pro(vl=20, mode=mode) + [vred(kind, 4, 1, 2), W_HALT]), F_REDVL)
    assert rig.core.s[4] == 0x123


@pytest.mark.parametrize("kind", range(6))
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_f_opcode_vred_outside_tree(kind, mode):
    rig = Rig()
    rig.core.s[4] = 0x123
    faulted(rig.go(pro(vl=32, mode=mode) + [vred(kind, 4, 1, 2), W_HALT]), F_OPCODE)
    assert rig.core.s[4] == 0x123 and rig.core.mode == mode


def test_vred_any_all_d4_predicate_select():
    """ANY/ALL read P[q], q = the pr of the most recent ALU, VRED or chain word (D4); no mode/VL limit."""
    rig = Rig()
    rig.core.p[2, 25] = True                 # P2: nothing below VL 20
    rig.core.p[3, :20] = True                # P3: all below VL 20
    rig.core.s[1] = rig.core.s[2] = 0x5555
    words = pro(vl=20) + [alu(VMOV, vd=9, va=9, pr=2),
                          vred(6, 1, pr=3),   # ANY over P2 (not P3, its own pr): +0
                          vred(7, 2, pr=0),   # ALL over P3 (the previous VRED's pr), not P0: 1.0
                          W_HALT]
    retired(rig.go(words))
    assert rig.core.s[1] == 0, "D4: ANY reads P[pr of the previous ALU word] = P2 -> +0 (own pr P3 would give 1.0)"
    assert rig.core.s[2] == ONE, "D4: ALL reads P[pr of the previous VRED] = P3 -> 1.0 (own pr P0 would give +0)"
    rig2 = Rig()
    rig2.core.p[1, 3] = True
    retired(rig2.go(pro(mode=1) + [alu(VMOV, vd=9, va=9, pr=0), alu(VMOV, vd=9, sa=C, sb=K, sc=K, pr=1),
                                   vred(6, 5, pr=2), W_HALT]))
    assert rig2.core.s[5] == ONE, "D4: after a chain, ANY reads P[pr of its last stage] = P1"
    rig3 = Rig()
    rig3.core.p[0, :127] = True
    retired(rig3.go([alu(VMOV, vd=9, va=9, pr=0), vred(7, 6, pr=1), W_HALT]))
    assert rig3.core.s[6] == 0, "ALL below VL 128 with bit 127 clear is +0"


@pytest.mark.parametrize("pm", [0, 1, 2, 3])
def test_vred_expsum_writes_vb_with_the_last_alu_pm(pm):
    """EXPSUM: V[vb][e] = VEXP2(V[va][e]) for e < VL, by P[pr] of the VRED with the pm of the most recent
    ALU word (D5); S[vd] = the sum."""
    rig = Rig()
    va, _ = _red_inputs(5, 32, 70 + pm)
    old = rnd_e8(np.random.default_rng(9))
    p3 = np.random.default_rng(8).integers(0, 2, 128).astype(bool)
    rig.setv(1, va), rig.setv(4, old)
    rig.core.p[3] = p3
    words = pro(vl=32) + [alu(VMOV, vd=9, va=9, pr=0, pm=pm), vsetmode(3), vred(5, 2, 1, 4, pr=3), W_HALT]
    retired(rig.go(words))
    mask = below(32) & (True if pm == 0 else p3 if pm == 1 else ~p3)
    same(rig.vec(4), np.where(mask, vexp2(va), old), f"EXPSUM vector write, last ALU pm {pm} (D5)")
    assert rig.core.s[2] == spec_vred(5, va, va, 32)
