"""Directed tests of the vector-core golden model (models/vector/__init__.py over models/vector/): the words
that set state and steer the sequencer, against units.md V.8 (VSETVL 0x18 and F_VL, VSETMODE 0x19 reading
ir[14:13], VSETI 0x1A with its immediate word, VLOOP 0x1B), V.5 (the loop: closes only where the next pc is
loop_end; a VSETI immediate or a chain stepping over it leaves it active) and V.10 (F_VL, F_LOOP; a fault
stops the kernel and keeps VL, mode and registers).

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.numerics import e8m15
from tests.unit.vector.vc_spec import (
    F_LOOP, F_VL, V, S, C, K, ONE, VMOV, VADD, VSETMODE, alu, W_HALT, vseti, vsetvl, vsetmode, vloop, pro, retired,
    faulted, same, e8, Rig, below,
)


# ================================================================ V.8 VSETVL, VSETMODE, VSETI
@pytest.mark.parametrize("value", [1, 17, 128])
def test_op_18_vsetvl(value):
    rig = Rig()
    retired(rig.go(vseti(value, 3) + [vsetvl(3), alu(VMOV, vd=2, va=1, sa=K), W_HALT]))
    assert rig.core.vl == value
    same(rig.vec(2), np.where(below(value), ONE, 0), f"VL = S3 = {value}")


@pytest.mark.parametrize("value", [0, 129, 0x800080, 0xFFFFFF])
def test_f_vl(value):
    """V.8: F_VL if S[va] is 0 or above 128 (raw 24 bits: 0x800080 faults). VL keeps its value."""
    rig = Rig()
    rig.core.s[3] = value
    faulted(rig.go(pro(vl=48) + [vsetvl(3)] + vseti(9, 9) + [W_HALT]), F_VL)
    assert rig.core.vl == 48 and rig.core.s[9] == 0, "V.10: VL keeps its value; the kernel stops"


@pytest.mark.parametrize("va", range(16))
def test_op_19_vsetmode_reads_ir_14_13(va):
    rig = Rig()
    retired(rig.go([alu(VSETMODE, va=va, vd=15, sa=3, vb=15, vc=15, pr=3, pm=3), W_HALT]))
    assert rig.core.mode == va & 3, f"V.8: mode = ir[14:13]; ir[16:15] ignored (va = {va:#06b})"


def test_op_19_vsetmode_chain_after_ignored_high_bits():
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    retired(rig.go([alu(VSETMODE, va=0b1101), alu(VMOV, vd=9, va=1), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1),
                    W_HALT]))
    same(rig.vec(2), np.full(128, e8(2.0)), "VSETMODE va=0b1101 is D2: VMOV v1 + K1 as one chain")


@pytest.mark.parametrize("sa", [V, S, C, K])
def test_op_1a_vseti(sa):
    """sa 3 writes K3, sa 0..2 write S[vd]; the immediate is [23:0] of the next word; pc += 2."""
    rig = Rig()
    imm_word = 0xF8000000 | 0xA5B4C3  # would be VHALT if it were executed
    retired(rig.go(vseti(imm_word, 6, sa) + vseti(0x42, 7) + [alu(VMOV, vd=3, va=3, sa=K), W_HALT]))
    assert rig.core.s[7] == 0x42, "pc += 2: the immediate word is not executed"
    if sa == K:
        assert rig.core.k3 == 0xA5B4C3 and rig.core.s[6] == 0
        same(rig.vec(3), e8m15.vmov(np.full(128, 0xA5B4C3)), "K3 as a source")
    else:
        assert rig.core.s[6] == 0xA5B4C3 and rig.core.k3 == 0


# ================================================================ V.5, V.8 VLOOP
@pytest.mark.parametrize("count, runs", [(0, 1), (1, 1), (3, 3), (5, 5)])
def test_op_1b_vloop_count(count, runs):
    rig = Rig()
    rig.core.s[4] = e8(0.5)
    retired(rig.go(vseti(count, 1) + [vloop(1, 2), alu(VADD, vd=2, va=2, vc=1, sc=K),
                                      alu(VADD, vd=3, va=3, vc=4, sc=S), W_HALT]))
    exp2, exp3 = np.zeros(128, np.uint32), np.zeros(128, np.uint32)
    for _ in range(runs):
        exp2, exp3 = e8m15.vadd(exp2, np.full(128, ONE)), e8m15.vadd(exp3, np.full(128, e8(0.5)))
    same(rig.vec(2), exp2, f"VLOOP count {count}: the body runs max(count, 1) = {runs} times")
    same(rig.vec(3), exp3, "second body word")
    assert not rig.core.loop.active


@pytest.mark.parametrize("count", [0, 5])
def test_op_1b_vloop_body_zero_runs_nothing(count):
    rig = Rig()
    retired(rig.go(vseti(count, 1) + [vloop(1, 0), alu(VADD, vd=2, va=2, vc=1, sc=K), W_HALT]))
    same(rig.vec(2), np.full(128, ONE), "a body of 0 runs nothing: the next word runs once")


def test_vloop_closes_and_a_later_vloop_is_legal():
    rig = Rig()
    retired(rig.go(vseti(2, 1) + [vloop(1, 1), alu(VADD, vd=2, va=2, vc=1, sc=K),
                                  vloop(1, 1), alu(VADD, vd=2, va=2, vc=1, sc=K), W_HALT]))
    same(rig.vec(2), np.full(128, e8(4.0)), "two loops of 2 runs in sequence")


def test_a_chain_that_is_exactly_the_loop_body():
    rig = Rig()
    retired(rig.go(vseti(3, 1) + [vsetmode(1), vloop(1, 2), alu(VMOV, vd=9, va=2),
                                  alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1), vloop(1, 0), W_HALT]))
    same(rig.vec(2), np.full(128, e8(3.0)), "a D2 chain as a 2-word body runs 3 times, then the loop closes")


def test_f_loop_nested():
    rig = Rig()
    faulted(rig.go(vseti(3, 1) + [vloop(1, 3), alu(VADD, vd=2, va=2, vc=1, sc=K), vloop(1, 1),
                                  alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]), F_LOOP)
    same(rig.vec(2), np.full(128, ONE), "the first body word ran once before the nested VLOOP faulted")
    assert not rig.vec(3).any()


def test_vseti_stepping_over_loop_end_leaves_the_loop_active():
    """V.5: a VSETI immediate that steps over loop_end leaves the loop active; a later VLOOP: F_LOOP."""
    rig = Rig()
    words = vseti(3, 1) + [vloop(1, 1)] + vseti(0x55, 5) + [alu(VADD, vd=2, va=2, vc=1, sc=K),
                                                           vloop(1, 1), alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]
    faulted(rig.go(words), F_LOOP)
    assert rig.core.s[5] == 0x55
    same(rig.vec(2), np.full(128, ONE), "fell through once")
    assert not rig.vec(3).any()


def test_chain_stepping_over_loop_end_leaves_the_loop_active():
    rig = Rig()
    words = vseti(3, 1) + [vsetmode(1), vloop(1, 1), alu(VMOV, vd=9, va=2), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1),
                           vsetmode(0), vloop(1, 1), alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]
    faulted(rig.go(words), F_LOOP)
    same(rig.vec(2), np.full(128, ONE), "the chain over loop_end ran once and fell through")
    assert not rig.vec(3).any()


# ================================================================ V.10 faults: state at the fault
def test_fault_stops_the_kernel_and_state_is_kept():
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    words = pro(vl=48, mode=1) + [alu(VMOV, vd=9, va=1), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1)] + vseti(0, 3) + [
        vsetvl(3)] + vseti(7, 4) + [W_HALT]
    faulted(rig.go(words), F_VL)
    assert (rig.core.vl, rig.core.mode, rig.core.s[4]) == (48, 1, 0), "V.10: VL, mode, registers kept; stopped"
    same(rig.vec(2), np.where(below(48), e8(2.0), 0), "the chain before the fault took effect")
