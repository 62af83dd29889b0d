"""Directed tests of the vector-core golden model (models/vector/__init__.py over models/vector/): the
architectural state and the CU_INST envelope, against units.md V.1 (reset, what a RUN keeps), V.2 (IMEM,
DESC with its 40-bit base and dims, RUN, the opcodes without effect, completion kinds and txn echo, CU_INSTs
held back behind a RUN) and V.3 (descriptors and the walk: mixed radix, repeat past the total, the capped
total, signed offsets and strides, L1 wrap mod 512, memory wrap mod 2^40).

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from models.numerics import e8m15
from models.numerics import e8m15_cvt
from models.vector import VectorCore, walk_total
from tests.unit.vector.vc_spec import (
    UNIT, MAG, PEER, PEER2, T_RD_REQ, SIG_INST, SIG_BATCH, SIG_FAULT, F_LEN, F_VL, S, C, K, ONE, MONE, M40, VMOV, VADD,
    VCMPLT, VBCAST, alu, vld, vst, vfill, W_BAR, W_HALT, vseti, vsetmode, vloop, pro, p_imem, p_desc, p_dim, fl,
    check_flit, check_signal, retired, faulted, same, spec_walk, lanes16, word16, rnd_e8, rnd_words, e8, Rig, below,
    chunks,
)


# ================================================================ V.1 reset and what RUN keeps
def test_reset_state():
    core = VectorCore(UNIT, MAG)
    assert (core.vl, core.mode, core.k3) == (128, 0, 0), "V.1: reset VL = 128, mode FLAT (0), K3 = 0"
    assert core.base == [0] * 8, "V.1: descriptors reset to base 0"
    assert all(list(d) == [(0, 1)] * 4 for d in core.dims), "V.1: strides 0, bounds 1 at reset"
    assert not core.v.any() and not core.p.any() and core.s == [0] * 16, "V.1: a model sets S, V, P to 0"
    rig = Rig()
    for i in range(1, 7):
        rig.setv(i, np.full(128, 0x123456))
    rig.setl1(0, 0x3C00 * sum(1 << (16 * i) for i in range(16)))  # 1.0 in every lane
    rig.setl1(1, 0x4000 * sum(1 << (16 * i) for i in range(16)))
    words = [alu(VMOV, vd=1, va=0, sa=K), alu(VMOV, vd=2, va=1, sa=K), alu(VMOV, vd=3, va=2, sa=K),
             alu(VMOV, vd=4, va=3, sa=K), alu(VMOV, vd=5, va=7, sa=K), vld(6, 3), W_HALT]
    retired(rig.go(words))
    # all 128 elements written: VL is 128 and mode FLAT (a chain would not write v1)
    for i, kv in ((1, 0), (2, ONE), (3, MONE), (4, 0), (5, 0)):
        same(rig.vec(i), np.full(128, kv), f"v{i} = K (K0 0, K1 1.0, K2 -1.0, K3 0 at reset)")
    same(rig.vec(6), np.full(128, ONE), "VLD through reset A3 (base 0, stride 0, bound 1): every chunk is L1[0]")
    rig.load([vfill(5, 7), W_HALT])
    reqs = rig.run()
    assert len(reqs) == 1, f"VFILL through reset A5: total 1, expected 1 request, got {len(reqs)}"
    check_flit(reqs[0], "VFILL request", dst=MAG, type=T_RD_REQ, txn=7, last=1, payload=0)


def test_run_keeps_everything_but_the_loop():
    rig = Rig()
    rng = np.random.default_rng(1)
    v1 = rnd_e8(rng, specials=False)
    rig.setv(1, v1)
    rig.setv(6, np.full(128, 0x111111))
    rig.setv(7, np.full(128, 0x222222))
    k3 = e8(0.75)
    # run 1: VL 48, K3, S3, S1 = 3, P1 by a compare, then a loop whose body is the VHALT (left active)
    run1 = (pro(vl=48) + vseti(k3, sa=K) + vseti(0xABCDEF, 3) + vseti(3, 1)
            + [alu(VCMPLT, pr=1, va=1, vb=0, sb=K), vsetmode(1), vloop(1, 1), W_HALT])
    retired(rig.go(run1))
    p1 = rig.core.p[1].copy()
    assert rig.core.loop.active, "test setup: the loop of run 1 is active when its VHALT retires"
    # run 2: VLOOP again - no F_LOOP, since RUN deactivates the loop (V.1, V.5)
    rig.load([vloop(1, 1), alu(VBCAST, vd=6, va=3, sa=S), W_HALT], at=100)
    retired(rig.run(100))
    exp6 = np.where(chunks(48), 0xABCDEF, 0x111111)
    same(rig.vec(6), exp6, "run 2: VBCAST of S3 (kept) over the chunks of VL 48 (kept)")
    # run 3: the mode (D2) and K3 are kept: a head and a stage form one chain
    rig.load([alu(VMOV, vd=9, va=1), alu(VADD, vd=7, sa=C, sb=K, sc=K, vc=3), W_HALT], at=200)
    retired(rig.run(200))
    exp7 = np.where(below(48), e8m15.vadd(e8m15.vmov(v1), np.full(128, k3)), 0x222222)
    same(rig.vec(7), exp7, "run 3: D2 chain VMOV(v1) + K3 below VL 48 (mode, K3, VL kept)")
    same(rig.core.p[1], p1, "P1 kept across RUNs")
    assert (rig.core.vl, rig.core.mode, rig.core.k3) == (48, 1, k3)


# ================================================================ V.2 the CU_INST envelope
def test_imem_and_run_pc():
    rig = Rig()
    rig.retire0(p_imem(511, 0xDEADBEEF))
    assert rig.core.imem[511] == 0xDEADBEEF, "V.2: IMEM[addr [251:243]] = word [31:0]"
    rig.load(vseti(0x123456, 4) + [W_HALT], at=500)
    retired(rig.run(500))
    assert rig.core.s[4] == 0x123456, "V.2: RUN pc [251:243] = 500 runs the kernel from 500"


def test_desc_base_is_40_bits_with_bits_68_63():
    rig = Rig()
    base = 0xC5_4321_0FE0  # bits [39:34] = 0b110001 travel in payload [68:63]
    rig.desc(6, base)
    assert rig.core.base[6] == base
    rig.load([vfill(6, 0), W_HALT])
    reqs = rig.run()
    check_flit(reqs[0], "VFILL through a 40-bit base", dst=MAG, type=T_RD_REQ, txn=0, last=1,
               payload=base << 216)
    rig.resp(0, 0)
    # the same base without payload[68:63]: only the low 34 bits remain
    rig.retire0(2 << 252 | 6 << 249 | 0 << 246 | (base & ((1 << 34) - 1)) << 212)
    assert rig.core.base[6] == base & ((1 << 34) - 1), "V.2: value = {[68:63], [245:212]}"


def test_desc_dims_signed_strides_bound_zero_and_high_bits_ignored():
    rig = Rig()
    base = 0x1000
    dims = [(-32, 3), (0, 0), (0x1FFFF, 2), (-0x20000, 2)]
    rig.retire0(p_desc(2, 0, base))
    rig.retire0(p_desc(2, 1, p_dim(*dims[0]) | 0x3F << 34))  # bits [39:34] of a dim value are ignored
    rig.retire0(p_desc(2, 2, p_dim(*dims[1]) | 0x15 << 34))
    rig.retire0(p_desc(2, 3, p_dim(*dims[2])))
    rig.retire0(p_desc(2, 4, p_dim(*dims[3])))
    for fld in (5, 6, 7):  # no effect
        rig.retire0(p_desc(2, fld, M40))
    assert rig.core.base[2] == base, "V.2: DESC fld 5..7 have no effect"
    rig.load([vfill(2, 0), W_HALT])
    reqs = rig.run()
    exp, total = spec_walk(base, dims, 12)
    assert total == 12 and len(reqs) == 12, f"walk total 3*1*2*2 = 12 (bound 0 reads as 1), got {len(reqs)} requests"
    same([fl(e.flit)["payload"] >> 216 for e in reqs], exp, "VFILL addresses (strides signed, mod 2^40)")
    for n in range(12):
        rig.resp(n, 0)


@pytest.mark.parametrize("op", [0] + list(range(4, 16)))
@pytest.mark.parametrize("last", [0, 1])
def test_envelope_opcodes_without_effect(op, last):
    rig = Rig()
    rig.load([W_HALT])
    snap = (list(rig.core.imem), list(rig.core.base), [list(d) for d in rig.core.dims], rig.core.l1.copy())
    payload = op << 252 | random.Random(op).getrandbits(252)
    evs = rig.inst(payload, txn=0x44, last=last)
    assert len(evs) == 1
    if last:
        check_signal(evs[0], SIG_BATCH, 0x44, 0x44)
    else:
        check_signal(evs[0], SIG_INST, 0, 0x44)
    assert snap[0] == list(rig.core.imem) and snap[1] == list(rig.core.base)
    assert snap[2] == [list(d) for d in rig.core.dims] and (snap[3] == rig.core.l1).all()
    assert rig.core.run is None, f"CU_INST op {op} must not run anything (V.2: 0, 4..15 have no effect)"


def test_completion_kinds_and_txn_echo():
    rig = Rig()
    evs = rig.inst(p_imem(3, W_HALT), txn=0xC3, last=1, src=PEER)
    assert len(evs) == 1
    check_signal(evs[0], SIG_BATCH, 0xC3, 0xC3, dst=PEER)  # to the src of the CU_INST
    rig.load([W_HALT])
    evs = rig.run(txn=0x17, last=0, src=PEER2)
    assert len(evs) == 1
    check_signal(evs[0], SIG_INST, 0, 0x17, dst=PEER2, wild=True)  # arg = the cycle count
    evs = rig.run(txn=0x18, last=1)
    assert len(evs) == 1
    check_signal(evs[0], SIG_BATCH, 0x18, 0x18)
    rig.load(pro(vl=0))
    for last in (0, 1):  # a fault is FAULT whatever `last` says
        evs = rig.run(txn=0x19, last=last)
        assert len(evs) == 1
        check_signal(evs[0], SIG_FAULT, F_VL, 0x19)


def test_run_holds_back_queued_cu_insts():
    rig = Rig()
    rig.desc(0, 0x400)
    rig.load([vfill(0, 10), W_BAR, W_HALT])
    reqs = rig.run()
    assert len(reqs) == 1
    assert rig.inst(p_imem(100, 0x12345678), txn=0x61) == [], "V.2: a RUN holds back the IMEM flits behind it"
    assert rig.inst(p_desc(3, 0, 0x999), txn=0x62) == []
    assert rig.core.imem[100] == 0 and rig.core.base[3] == 0
    evs = rig.resp(10, 0xAB)
    assert len(evs) == 3
    retired(evs[:1])
    check_signal(evs[1], SIG_INST, 0, 0x61)
    check_signal(evs[2], SIG_INST, 0, 0x62)
    assert rig.core.imem[100] == 0x12345678 and rig.core.base[3] == 0x999


# ================================================================ V.3 the walk
@pytest.mark.parametrize("off", [0, 5, -3, 8191, -8192])
def test_walk_vld_mixed_radix_repeat_wrap_and_signed_off(off):
    rig = Rig()
    rng = np.random.default_rng(2)
    l1 = rnd_words(rng, 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    base = 0x7F_0000_0000 | 508  # L1 walks use addr[8:0]
    dims = [(1, 3), (16, 2)]  # total 6: steps 6, 7 repeat the last address
    rig.go([vld(4, 1, off), W_HALT], {1: (base, dims)})
    addrs = [a & 511 for a in spec_walk(base, dims, 8, off)[0]]
    exp = np.concatenate([e8m15_cvt.fp16_to_e8m15(lanes16(l1[a])) for a in addrs])
    same(rig.vec(4), exp, f"VLD off {off}: chunks from L1 {addrs} (V.3: i0 fastest, repeat, wrap mod 512)")


def test_walk_vst_negative_stride_wrap_and_repeat():
    rig = Rig()
    rng = np.random.default_rng(3)
    v = rnd_e8(rng, lo=110, hi=140)
    rig.setv(3, v)
    before = [rig.l1w(a) for a in range(512)]
    rig.go([vst(3, 1, -5), W_HALT], {1: (2, [(-1, 4)])})
    addrs = [a & 511 for a in spec_walk(2, [(-1, 4)], 8, -5)[0]]
    assert addrs == [509, 508, 507, 506, 506, 506, 506, 506]
    exp = dict(enumerate(before))
    for c, a in enumerate(addrs):  # in walk order: the repeated address keeps the last chunk
        exp[a] = word16(e8m15_cvt.e8m15_to_fp16(v[16 * c:16 * c + 16]))
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)], "L1 after VST (V.3 walk, V.5 whole chunks)")


def test_walk_total_caps_partial_products():
    assert walk_total((65535, 65535, 65535, 65535)) == 65535
    assert walk_total((256, 256, 1, 1)) == 65535, "V.3: each partial product is capped at 65535"
    assert walk_total((0, 0, 0, 0)) == 1 and walk_total((2, 3, 0, 5)) == 30
    for bounds in [(256, 256), (16, 4096), (4096, 16, 16, 16), (2, 32768, 2, 2), (257,)]:
        rig = Rig()
        evs = rig.go([vfill(0, 0), W_HALT], {0: (0, [(32, b) for b in bounds])})
        assert len(faulted(evs, F_LEN)) == 0, f"bounds {bounds}: F_LEN before any flit (V.10)"
    rig = Rig()
    evs = rig.go([vfill(0, 0), W_HALT], {0: (0, [(32, 16), (512, 16)])})
    assert len(evs) == 256, "a walk of exactly 256 elements is legal"


def test_memory_walk_wraps_modulo_2_40():
    rig = Rig()
    reqs = rig.go([vfill(0, 0), W_HALT], {0: (M40 + 1 - 64, [(32, 4)])})
    same([fl(e.flit)["payload"] >> 216 for e in reqs], [M40 + 1 - 64, M40 + 1 - 32, 0, 32], "addresses mod 2^40")
