"""Directed tests of the vector-core golden model (models/vector/__init__.py over models/vector/): the words
that compute on vector registers, against units.md V.4 (S and K sources), V.5 (tail rules: ALU words write
below VL under pm, VBCAST / VSHUF write whole chunks; D2 / D4 chains; ALU words in TREE mode), V.8 (opcodes
00-11 and 16, 17; the predicate interlock H1 normative) and V.10 (F_VSRC, F_CHAIN, F_OPCODE of an ALU
word in TREE mode).

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_transcendental, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.numerics import e8m15
from models.numerics.e8m15_transcendental import vexp2, vinv, vlog2, vrsqrt
from tests.unit.vector.vc_spec import (
    F_VSRC, F_CHAIN, F_OPCODE, V, S, C, K, ONE, VMOV, VNEG, VABS, VADD, VSUB, VMUL, VFMA, VFNMA, VMAX, VMIN, VSEL,
    VCMPLT, VCMPGT, VCMPEQ, VEXP2, VLOG2, VINV, VRSQRT, VBCAST, VSHUF, NAME, alu, vld, vcvt, W_HALT, vseti, pro,
    retired, faulted, same, rnd_e8, e8, Rig, below, chunks,
)


# ================================================================ V.5 tail rules, V.8 ALU opcodes
ALU_VALUE = {
    VMOV: lambda a, b, c: e8m15.vmov(a), VNEG: lambda a, b, c: e8m15.vneg(a), VABS: lambda a, b, c: e8m15.vabs(a),
    VADD: lambda a, b, c: e8m15.vadd(a, c), VSUB: lambda a, b, c: e8m15.vsub(a, c),
    VMUL: lambda a, b, c: e8m15.vmul(a, b),
    VFMA: lambda a, b, c: e8m15.vfma(a, b, c), VFNMA: lambda a, b, c: e8m15.vfnma(a, b, c),
    VMAX: lambda a, b, c: e8m15.vmax(a, b), VMIN: lambda a, b, c: e8m15.vmin(a, b),
    VSEL: lambda a, b, c: e8m15.vsel(a, b, c), VEXP2: lambda a, b, c: vexp2(a),
    VLOG2: lambda a, b, c: vlog2(a), VINV: lambda a, b, c: vinv(a), VRSQRT: lambda a, b, c: vrsqrt(a),
}
CMP_PRED = {VCMPLT: e8m15.cmp_lt, VCMPGT: e8m15.cmp_gt, VCMPEQ: e8m15.cmp_eq}


def _abc(seed):
    rng = np.random.default_rng(seed)
    a, b, c = rnd_e8(rng), rnd_e8(rng), rnd_e8(rng)
    b[::4] = a[::4]  # equal pairs for the compares and MAX / MIN
    c[1::3] = 0
    return a, b, c


@pytest.mark.parametrize("op", sorted(ALU_VALUE), ids=lambda o: f"{o:02X}_{NAME[o]}")
def test_alu_opcode(op):
    """V.8 00-0A, 0E-11: V[vd][e] = op(a, b, c) for every e < VL (a = va, b = vb, c = vc as V.6.2 wires them)."""
    rig = Rig()
    a, b, c = _abc(op)
    for i, x in ((1, a), (2, b), (3, c)):
        rig.setv(i, x)
    retired(rig.go([alu(op, vd=4, va=1, vb=2, vc=3), W_HALT]))
    same(rig.vec(4), ALU_VALUE[op](a, b, c), f"{NAME[op]} v4 = f(v1, v2, v3)")
    for i, x in ((1, a), (2, b), (3, c)):
        same(rig.vec(i), x, f"{NAME[op]}: source v{i} unchanged")
    assert not rig.core.p.any(), f"{NAME[op]} writes no predicate"


@pytest.mark.parametrize("op", sorted(CMP_PRED), ids=lambda o: f"{o:02X}_{NAME[o]}")
def test_compare_opcode(op):
    """V.8 0B-0D: P[pr][e] = pred(a, b) for e < VL; no vector write (vd and pm ignored)."""
    rig = Rig()
    a, b, c = _abc(op)
    for i, x in ((1, a), (2, b), (3, c)):
        rig.setv(i, x)
    old = np.full(128, 0x5A5A5A)
    rig.setv(4, old)
    retired(rig.go([alu(op, vd=4, va=1, vb=2, vc=3, pr=2, pm=1), W_HALT]))
    same(rig.core.p[2], CMP_PRED[op](a, b), f"{NAME[op]}: P2 = pred(v1, v2) (pm 1 with P2 = 0 must not mask it)")
    same(rig.vec(4), old, f"{NAME[op]}: vd is ignored, no vector write")
    assert not rig.core.p[[0, 1, 3]].any()


def test_scalar_and_constant_sources():
    """V.4: S = S[field] for every element; K = K[field mod 4]; a VSETI-made K3."""
    rig = Rig()
    rig.core.s[5] = e8(3.5)
    words = vseti(e8(-0.25), sa=K) + [alu(VADD, vd=4, va=5, sa=S, vc=2, sc=K),
                                       alu(VMUL, vd=6, va=5, sa=S, vb=7, sb=K),
                                       alu(VFMA, vd=8, va=1, vb=6, vc=9, sa=K, sb=S, sc=K), W_HALT]
    rig.core.s[6] = e8(2.0)
    retired(rig.go(words))
    same(rig.vec(4), np.full(128, e8(2.5)), "S5 + K2 = 3.5 - 1")
    same(rig.vec(6), np.full(128, e8(-0.875)), "S5 * K[7 mod 4 = 3] = 3.5 * -0.25")
    same(rig.vec(8), np.full(128, e8(3.0)), "K1 * S6 + K[9 mod 4 = 1] = 1 * 2 + 1")


@pytest.mark.parametrize("pm", [0, 1, 2, 3])
def test_alu_tail_writes_below_vl_under_pm(pm):
    """V.5: ALU instructions write only elements below VL, subject to pm (1: P set, 2 or 3: P clear)."""
    rig = Rig()
    rng = np.random.default_rng(10 + pm)
    a, c, old = rnd_e8(rng), rnd_e8(rng), rnd_e8(rng)
    p2 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(3, c), rig.setv(5, old)
    rig.core.p[2] = p2
    retired(rig.go(pro(vl=20) + [alu(VADD, vd=5, va=1, vc=3, pr=2, pm=pm), W_HALT]))
    mask = below(20) & (True if pm == 0 else p2 if pm == 1 else ~p2)
    same(rig.vec(5), np.where(mask, e8m15.vadd(a, c), old), f"VADD at VL 20, pm {pm}")


def test_vcmp_writes_predicate_bits_below_vl_only():
    rig = Rig()
    rng = np.random.default_rng(11)
    a, b = rnd_e8(rng), rnd_e8(rng)
    p1 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(2, b)
    rig.core.p[1] = p1
    retired(rig.go(pro(vl=20) + [alu(VCMPGT, vd=7, va=1, vb=2, pr=1, pm=2), W_HALT]))
    same(rig.core.p[1], np.where(below(20), e8m15.cmp_gt(a, b), p1), "V.8: P bits at or above VL unchanged")
    assert not rig.vec(7).any(), "V.8: a compare writes no vector"


def test_predicates_are_interlocked():
    """V.8 H1 normative: a predicated instruction right after a compare sees its result (the `where`
    lowering: VCMP; VMOV pm=1; VMOV pm=2)."""
    rig = Rig()
    rng = np.random.default_rng(12)
    a, b, x, y = (rnd_e8(rng, specials=False) for _ in range(4))
    for i, v in ((1, a), (2, b), (3, x), (4, y)):
        rig.setv(i, v)
    retired(rig.go([alu(VCMPLT, va=1, vb=2, pr=0), alu(VMOV, vd=5, va=3, pr=0, pm=1),
                    alu(VMOV, vd=5, va=4, pr=0, pm=2), W_HALT]))
    same(rig.vec(5), np.where(e8m15.cmp_lt(a, b), x, y), "where(a < b, x, y)")


# ================================================================ V.5 chains
def test_chain_d2():
    """D2: head + next word; C = previous stage; S/K per stage; the last stage's vd/pr/pm decide; pc += 2."""
    rig = Rig()
    rng = np.random.default_rng(20)
    a, b, old5, old9 = (rnd_e8(rng) for _ in range(4))
    p3 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(2, b), rig.setv(5, old5), rig.setv(9, old9)
    rig.core.p[3] = p3
    rig.core.s[4], rig.core.s[6] = e8(1.5), e8(-3.0)
    head = alu(VMUL, vd=9, va=1, vb=2, vc=4, sc=S, pr=0, pm=2)  # head vd/pm ignored
    stage = alu(VFMA, vd=5, va=0, vb=4, vc=6, sa=C, sb=S, sc=S, pr=3, pm=1)
    retired(rig.go(pro(vl=40, mode=1) + [head, stage] + vseti(0x777, 10) + [W_HALT]))
    value = e8m15.vfma(e8m15.vmul(a, b), np.full(128, e8(1.5)), np.full(128, e8(-3.0)))
    same(rig.vec(5), np.where(below(40) & p3, value, old5), "D2: v5 = (v1*v2)*S4 + S6 where P3, e < 40")
    same(rig.vec(9), old9, "D2: the head's vd is ignored")
    assert rig.core.s[10] == 0x777, "D2: pc advances by 2 and the word after the chain executes"


def test_chain_d4_with_a_compare_mid_chain():
    """D4: a compare mid-chain gives 1.0 / +0 as value and writes no predicate."""
    rig = Rig()
    rng = np.random.default_rng(21)
    a, old = rnd_e8(rng, specials=False), rnd_e8(rng)
    rig.setv(1, a), rig.setv(6, old)
    rig.core.s[2], rig.core.s[3], rig.core.s[7] = e8(0.5), e8(0.25), e8(5.0)
    p0 = rng.integers(0, 2, 128).astype(bool)
    rig.core.p[0] = p0
    words = [alu(VMUL, vd=12, va=1, vb=2, sb=S, pm=1, pr=1),            # x = a * S2
             alu(VADD, vd=13, sa=C, sb=K, sc=K, vc=1),                    # x + K1
             alu(VCMPGT, vd=14, sa=C, va=0, sb=S, vb=3, sc=K, pr=2),      # (x+1 > S3) -> 1.0 / +0
             alu(VFMA, vd=6, sa=C, sb=S, vb=7, sc=C, pr=0, pm=2)]          # v * S7 + v
    retired(rig.go(pro(mode=2) + words + [W_HALT]))
    t = e8m15.vadd(e8m15.vmul(a, np.full(128, e8(0.5))), np.full(128, ONE))
    pred_val = np.where(e8m15.cmp_gt(t, np.full(128, e8(0.25))), ONE, 0)
    value = e8m15.vfma(pred_val, np.full(128, e8(5.0)), pred_val)
    same(rig.vec(6), np.where(~p0, value, old), "D4: v6 = cmp * 5 + cmp where !P0")
    assert not rig.core.p[[1, 2, 3]].any(), "a compare mid-chain writes no predicate"
    same(rig.core.p[0], p0, "P0 unchanged")
    for i in (12, 13, 14):
        assert not rig.vec(i).any(), f"D4: only the last stage's vd is written (v{i} is not)"


def test_chain_last_stage_compare_writes_the_predicate():
    rig = Rig()
    rng = np.random.default_rng(22)
    a = rnd_e8(rng)
    p3 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a)
    rig.core.p[3] = p3
    rig.core.s[5] = e8(0.0)
    retired(rig.go(pro(vl=70, mode=1) + [alu(VADD, vd=2, va=1, vc=1, sc=K, pm=1),
                                           alu(VCMPLT, vd=7, sa=C, va=0, sb=S, vb=5, sc=K, pr=3, pm=1),
                                           W_HALT]))
    pred = e8m15.cmp_lt(e8m15.vadd(a, np.full(128, ONE)), np.zeros(128, dtype=np.uint32))
    same(rig.core.p[3], np.where(below(70), pred, p3), "D2 ending in a compare: P3 below VL")
    assert not rig.vec(7).any() and not rig.vec(2).any(), "a chain ending in a compare writes no vector"


def test_chain_head_compare_with_a_non_compare_last_stage_writes_the_vector():
    rig = Rig()
    rng = np.random.default_rng(23)
    a, b = rnd_e8(rng), rnd_e8(rng)
    rig.setv(1, a), rig.setv(2, b)
    rig.core.s[4] = e8(3.0)
    retired(rig.go(pro(mode=1) + [alu(VCMPLT, vd=6, va=1, vb=2, pr=1),
                                  alu(VMUL, vd=5, sa=C, sb=S, vb=4, sc=K), W_HALT]))
    same(rig.vec(5), e8m15.vmul(np.where(e8m15.cmp_lt(a, b), ONE, 0), np.full(128, e8(3.0))),
         "a compare head gives 1.0 / +0 to the next stage")
    assert not rig.core.p.any(), "the head's compare-ness is ignored: no predicate write"


def test_non_alu_words_run_in_tree_mode():
    rig = Rig()
    rig.setl1(0, 0x3C00 * sum(1 << (16 * i) for i in range(16)))
    retired(rig.go(pro(vl=32, mode=3) + vseti(0x4000, 4) + [alu(VBCAST, vd=2, va=4, sa=S), vld(3, 0),
                                                              vcvt(5, 3, 2), W_HALT]))
    same(rig.vec(2)[:32], np.full(32, 0x4000), "VBCAST in TREE")
    same(rig.vec(5)[:32], np.full(32, ONE), "VLD, VCVT in TREE")


def test_tree_mode_alu_word_faults_f_opcode():
    """V.5 / D6 normative: an ALU word in TREE mode raises F_OPCODE (and writes nothing)."""
    for op in (VMOV, VADD, VCMPLT, VEXP2):
        rig = Rig()
        rig.setv(1, np.full(128, ONE))
        faulted(rig.go(pro(mode=3) + [alu(op, vd=2, va=1, vb=1, vc=1, pr=1), W_HALT]), F_OPCODE)
        assert not rig.vec(2).any() and not rig.core.p.any(), f"{NAME[op]} in TREE: nothing written"
        assert rig.core.mode == 3


# ================================================================ V.10 faults F_VSRC, F_CHAIN
@pytest.mark.parametrize("mode, stage", [(1, 1), (2, 1), (2, 2), (2, 3)])
@pytest.mark.parametrize("sel", ["sa", "sb", "sc"])
def test_f_vsrc_any_selector_of_a_gathered_stage(mode, stage, sel):
    rig = Rig()
    depth = 2 if mode == 1 else 4
    ok_sel = {"sa": C, "sb": K, "sc": K}
    words = [alu(VMOV, vd=3, va=1)]
    for k in range(1, depth):
        f = dict(ok_sel)
        if k == stage:
            f[sel] = V  # VMOV reads only a: an unread V selector still faults
        words.append(alu(VMOV, vd=3, **f))
    rig.setv(1, np.full(128, ONE))
    faulted(rig.go(pro(mode=mode) + words + [W_HALT]), F_VSRC)
    assert not rig.vec(3).any(), "a faulting chain writes nothing"


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("sel", ["sa", "sb", "sc"])
def test_f_chain_any_c_selector_in_a_head_or_flat_word(mode, sel):
    rig = Rig()
    f = {"sa": V, "sb": V, "sc": V, sel: C}
    stages = [alu(VMOV, vd=3, sa=V)] * (0 if mode == 0 else 1 if mode == 1 else 3)  # stages with V: F_VSRC
    faulted(rig.go(pro(mode=mode) + [alu(VNEG, vd=3, va=1, **f)] + stages + [W_HALT]), F_CHAIN,)
    # V.10: F_CHAIN is checked at decode of the head, before any stage is gathered (stage V -> F_VSRC)


# ================================================================ V.8 VBCAST, VSHUF
def test_op_16_vbcast_s_to_v_whole_chunks():
    rig = Rig()
    old = rnd_e8(np.random.default_rng(33))
    rig.setv(3, old)
    rig.core.s[9] = 0xABCDEF
    retired(rig.go(pro(vl=20) + [alu(VBCAST, vd=3, va=9, sa=S), W_HALT]))
    same(rig.vec(3), np.where(chunks(20), 0xABCDEF, old), "VBCAST sa=1: chunks 0..nchunk-1 = S9 (raw)")


@pytest.mark.parametrize("sa", [V, C, K])
def test_op_16_vbcast_v_to_s(sa):
    rig = Rig()
    v = rnd_e8(np.random.default_rng(34))
    rig.setv(4, v)
    retired(rig.go(pro(vl=20) + [alu(VBCAST, vd=7, va=4, sa=sa), W_HALT]))
    assert rig.core.s[7] == int(v[0]), f"VBCAST sa={sa} != 1: S[vd] = V[va][0]"
    same(rig.vec(4), v, "source unchanged")
    assert not rig.vec(7).any(), "no vector written"


def test_op_17_vshuf_rotates_within_chunks():
    rig = Rig()
    rng = np.random.default_rng(35)
    v, old = rnd_e8(rng), rnd_e8(rng)
    rig.setv(2, v), rig.setv(1, old)
    rig.core.s[3] = 0xFFFF35  # S[vb][3:0] = 5
    retired(rig.go(pro(vl=20) + [alu(VSHUF, vd=1, va=2, vb=3), W_HALT]))
    rot = np.array([v[16 * (e // 16) + (e % 16 + 5) % 16] for e in range(128)])
    same(rig.vec(1), np.where(chunks(20), rot, old), "VSHUF lane i = lane (i + 5) mod 16, chunks 0..1")
