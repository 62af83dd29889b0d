"""The checkers and references of tests/unit/vector/vc_spec.py fail on planted errors: retired / faulted /
check_flit / check_signal / same / Rig.retire0 on wrong expectations, the V.3 walk odometer and the V.9
VRED tree against hand-written results, and our encoders against the example words of protocol.md §6.

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.vector.vc_spec import (
    HOST, PEER, T_SIG, SIG_INST, F_LEN, F_VL, ONE, M40, VADD, alu, vld, vst, vfill, vdrain, W_BAR, W_HALT, pro, p_run,
    check_flit, check_signal, retired, faulted, same, spec_walk, e8, Rig, spec_vred, alt_orders,
)


# ================================================================ the checkers fail on planted wrong values
def test_checkers_catch_planted_errors():
    rig = Rig()
    rig.load([W_HALT])
    good = rig.run(txn=0x33)
    retired(good, txn=0x33)
    with pytest.raises(AssertionError, match="txn"):
        retired(good, txn=0x34)
    with pytest.raises(AssertionError, match="BATCH|payload|wild"):
        retired(good, txn=0x33, last=1)
    with pytest.raises(AssertionError, match="expected FAULT"):
        faulted(good, F_VL, txn=0x33)
    rig.load(pro(vl=0))
    bad = rig.run()
    faulted(bad, F_VL)
    with pytest.raises(AssertionError, match="F_VL"):
        faulted(bad, F_LEN)
    with pytest.raises(AssertionError, match="faulted"):
        retired(bad)
    with pytest.raises(AssertionError, match=r"\[3\] expected 0x5 got 0x4"):
        same([1, 2, 3, 4], [1, 2, 3, 5], "v")
    with pytest.raises(AssertionError, match="values"):
        same([1, 2, 3], [1, 2, 3, 4], "v")
    ev = good[-1]
    with pytest.raises(AssertionError, match="dst"):
        check_flit(ev, "x", dst=PEER, type=T_SIG, txn=0x33, last=1, payload=0, payload_mask=0)
    with pytest.raises(AssertionError, match="last"):
        check_flit(ev, "x", dst=HOST, type=T_SIG, txn=0x33, last=0, payload=0, payload_mask=0)
    with pytest.raises(AssertionError, match="payload"):
        check_flit(ev, "x", dst=HOST, type=T_SIG, txn=0x33, last=1, payload=1 << 248)
    with pytest.raises(AssertionError, match="wild_arg"):
        check_signal(ev, SIG_INST, 0, 0x33, wild=False)
    # the walk odometer against hand-written walks (so a wrong odometer would be caught here)
    assert spec_walk(100, [(1, 3), (10, 2)], 8)[0] == [100, 101, 102, 110, 111, 112, 112, 112]
    assert spec_walk(0, [(-1, 2), (0, 0), (5, 2)], 5)[0] == [0, M40, 5, 4, 4]
    assert spec_walk(0, [(1, 256), (1, 256)], 0)[1] == 65535
    with pytest.raises(AssertionError):
        same(spec_walk(100, [(1, 3), (10, 2)], 8)[0], [100, 101, 102, 103, 110, 111, 112, 112], "walk")
    # the V.9 reducer and the wrong orders it is compared with, on hand-checkable inputs
    ones = np.full(128, ONE, dtype=np.uint32)
    assert spec_vred(0, ones, ones, 48) == e8(48.0) and spec_vred(5, np.zeros(128, np.uint32), ones, 16) == e8(16.0)
    tiny = np.full(128, 0x370000, dtype=np.uint32)  # 2^-17: a quarter ulp of 1.0
    tiny[0] = ONE
    assert alt_orders(0, tiny, ones, 16) == (ONE, ONE), "a left fold / lane-wise order loses every 2^-17"
    # the tree: pairs (1 + 2^-17 -> 1.0), 2^-16 x 7; then 1 + 2^-16 (a tie, to even: 1.0), 2^-15 x 3;
    # then 1 + 2^-15, 2^-14; then 1 + 3 * 2^-15, exact
    assert spec_vred(0, tiny, ones, 16) == e8(1 + 3 * 2 ** -15), "the tree adds them pairwise first"
    with pytest.raises(AssertionError):
        same(spec_vred(0, tiny, ones, 16), alt_orders(0, tiny, ones, 16)[0], "planted: a left fold")
    # retire0 insists on exactly one INST_COMPLETE arg 0
    rig2 = Rig()
    rig2.load(pro(vl=0))
    with pytest.raises(AssertionError, match="type|payload"):
        rig2.retire0(p_run(0))
    # our encoders against the protocol's example words (protocol.md §6)
    assert [W_HALT, W_BAR, vfill(0, 0), alu(VADD, vd=1), vld(0, 1), vst(1, 2), vdrain(0, 0)] == [
        0xF8000000, 0xE0000000, 0xE8000000, 0x18020000, 0xA1200000, 0xA9420000, 0xF0000000]
