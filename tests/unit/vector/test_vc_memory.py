"""Directed tests of the vector-core golden model (models/vector/__init__.py over models/vector/): L1 and the
wire, against units.md V.8 (VCVT 0x12, VLD 0x14, VST 0x15 in whole chunks, FP16 / FP32 as V.7 converts),
V.11 (VFILL requests and responses, one VFILL at a time, VBAR and VHALT waiting for fills only, unmatched
responses, VDRAIN to memory and the node form, local and remote, the unread fields), V.12 (inbound CU_DATA:
accepted with its DATA_RECEIVED, rejected or interleaved bursts and F_CUDATA at the next RUN or boundary,
other flit types dropped), V.10 (F_DTYPE, F_LEN, F_CUDATA and its precedence) and protocol.md §1, §4 (every
header field of every flit); and models/vector/memory.py (CoreWithMemory) filling then draining.

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from models.numerics import e8m15_cvt
from models.vector.memory import CoreWithMemory
from models.vector import VectorCore
from tests.unit.vector.vc_spec import (
    UNIT, HOST, MAG, PEER, PEER2, T_RD_REQ, T_WR_REQ, T_WR_ACK, T_WR_DATA, T_INST, T_DATA, SIG_RECV, F_DTYPE, F_LEN,
    F_VL, F_CUDATA, ONE, RUN_TXN, vld, vst, vcvt, vfill, vdrain, vdrain_node, W_BAR, W_HALT, vseti, pro, p_imem, p_desc,
    p_run, p_dim, mkflit, fl, check_flit, check_signal, retired, faulted, same, spec_walk, lanes16, word16, elems32,
    word32, rnd_e8, rnd_words, Rig, chunks,
)


# ================================================================ V.8 VCVT, VLD, VST and V.10 F_DTYPE
@pytest.mark.parametrize("word", ["VLD", "VST", "VCVT"])
@pytest.mark.parametrize("dt", [0, 3, 4, 5, 6, 7])
def test_f_dtype(word, dt):
    rig = Rig()
    rig.setv(2, np.full(128, ONE))
    before = rig.core.l1.copy()
    w = {"VLD": vld(1, 0, dt=dt), "VST": vst(2, 0, dt=dt), "VCVT": vcvt(1, 2, dt)}[word]
    faulted(rig.go([w] + vseti(5, 9) + [W_HALT]), F_DTYPE)
    assert not rig.vec(1).any() and (rig.core.l1 == before).all(), f"{word} dt {dt}: nothing written"
    assert rig.core.s[9] == 0, "a fault stops the kernel"


@pytest.mark.parametrize("dt", [1, 2])
def test_op_12_vcvt(dt):
    """dt 1: per-element FP16 round trip (D3 not reproduced: chunk c gets its own chunk); dt 2: raw.
    Whole chunks, including lanes at or above VL."""
    rig = Rig()
    rng = np.random.default_rng(30)
    a, old = rnd_e8(rng, lo=100, hi=150), rnd_e8(rng)
    rig.setv(2, a), rig.setv(1, old)
    retired(rig.go(pro(vl=20) + [vcvt(1, 2, dt), W_HALT]))
    res = e8m15_cvt.fp16_to_e8m15(e8m15_cvt.e8m15_to_fp16(a)) if dt == 1 else a
    same(rig.vec(1), np.where(chunks(20), res, old), f"VCVT dt {dt} at VL 20: chunks 0, 1 whole")


@pytest.mark.parametrize("dt", [1, 2])
def test_op_14_vld(dt):
    rig = Rig()
    rng = np.random.default_rng(31)
    l1 = rnd_words(rng, 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    old = rnd_e8(rng)
    rig.setv(7, old)
    dims = [(3, 5), (100, 3)]
    retired(rig.go(pro(vl=40) + [vld(7, 4, -7, dt), W_HALT], {4: (33, dims)}))
    n = 3
    addrs = [a & 511 for a in spec_walk(33, dims, n * dt, -7)[0]]
    if dt == 1:
        vals = np.concatenate([e8m15_cvt.fp16_to_e8m15(lanes16(l1[a])) for a in addrs])
    else:
        vals = np.concatenate([e8m15_cvt.fp32_to_e8m15(elems32(l1[a])) for a in addrs])
    same(rig.vec(7), np.concatenate([vals, old[n * 16:]]), f"VLD dt {dt} at VL 40 (whole chunks 0..2)")


@pytest.mark.parametrize("dt", [1, 2])
def test_op_15_vst(dt):
    """VST: the source register is vd; whole chunks, lanes at or above VL store what the register holds."""
    rig = Rig()
    rng = np.random.default_rng(32)
    v = rnd_e8(rng, lo=105, hi=150)
    rig.setv(6, v)
    rig.setv(0, np.full(128, ONE))  # va = 0 must not be the source
    before = [rig.l1w(a) for a in range(512)]
    dims = [(2, 2), (7, 4)]
    retired(rig.go(pro(vl=20) + [vst(6, 5, 3, dt), W_HALT], {5: (500, dims)}))
    addrs = [a & 511 for a in spec_walk(500, dims, 2 * dt, 3)[0]]
    exp = dict(enumerate(before))
    if dt == 1:
        for c, a in enumerate(addrs):
            exp[a] = word16(e8m15_cvt.e8m15_to_fp16(v[16 * c:16 * c + 16]))
    else:
        f = e8m15_cvt.e8m15_to_fp32(v[:32])
        for k, a in enumerate(addrs):
            exp[a] = word32(f[8 * k:8 * k + 8])
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)], f"L1 after VST dt {dt} at VL 20")


# ================================================================ V.11 VFILL, VBAR, VHALT
def test_op_1d_vfill_request_flits():
    rig = Rig()
    base, dims = 0xF0_0000_0100, [(32, 3), (4096, 2)]
    reqs = rig.go([vfill(3, 300), W_HALT], {3: (base, dims)})
    exp, total = spec_walk(base, dims, 6)
    assert len(reqs) == 6, f"VFILL sends one request per walk element (6), got {len(reqs)}"
    for n, ev in enumerate(reqs):
        check_flit(ev, f"VFILL request {n}", dst=MAG, type=T_RD_REQ, txn=(300 + n) & 0xFF, last=1,
                   payload=exp[n] << 216)  # len 0, flags 0, count 0, rest 0
    data = rnd_words(np.random.default_rng(40), 6)
    for n in reversed(range(6)):  # responses in any order; their rsvd bits are ignored
        evs = rig.resp((300 + n) & 0xFF, data[n], rsvd=n % 4)
        if n:
            assert evs == [], "VHALT waits for every outstanding fill response"
    retired(evs)
    same([rig.l1w(300 + n) for n in range(6)], data, "L1[start + n] = response n")
    assert rig.core.protocol_errors == []


@pytest.mark.parametrize("start, total", [(250, 12), (508, 6), (0, 256), (200, 256)])
def test_vfill_l1_side_consecutive_wrapping_bit8_kept(start, total):
    rig = Rig()
    rng = np.random.default_rng(start)
    before = [rig.l1w(a) for a in range(512)]
    reqs = rig.go([vfill(1, start), W_HALT], {1: (0x10000, [(-64, total)])})
    assert [fl(e.flit)["txn"] for e in reqs] == [(start + n) & 0xFF for n in range(total)]
    data = rnd_words(rng, total)
    order = list(range(total))
    random.Random(start).shuffle(order)
    evs = []
    for n in order:
        evs = rig.resp((start + n) & 0xFF, data[n])
    retired(evs)
    exp = dict(enumerate(before))
    for n in range(total):
        exp[(start + n) % 512] = data[n]
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)],
         f"VFILL from {start}: L1 words start..start+{total - 1} mod 512 (bit 8 kept per txn)")


def test_a_second_vfill_waits_for_the_first():
    rig = Rig()
    reqs = rig.go([vfill(0, 0), vfill(1, 100), W_HALT], {0: (0x1000, [(32, 2)]), 1: (0x2000, [(32, 3)])})
    assert [fl(e.flit)["txn"] for e in reqs] == [0, 1], "only the first VFILL's requests before its responses"
    assert rig.resp(1, 11) == []
    reqs2 = rig.resp(0, 10)
    assert [fl(e.flit)["txn"] for e in reqs2] == [100, 101, 102]
    same([fl(e.flit)["payload"] >> 216 for e in reqs2], [0x2000, 0x2020, 0x2040], "second fill's addresses")
    assert rig.resp(100, 1) == [] and rig.resp(102, 3) == []
    retired(rig.resp(101, 2))
    same([rig.l1w(a) for a in (0, 1, 100, 101, 102)], [10, 11, 1, 2, 3], "L1")


def test_op_1c_vbar_waits_for_fills():
    rig = Rig()
    rig.go([vfill(0, 64), W_BAR, vld(2, 0)] + vseti(0x99, 5) + [W_HALT], {0: (0x40, [(32, 2)])})
    assert rig.core.s[5] == 0, "VBAR waits: the instructions after it have not run"
    assert rig.resp(65, 0x4000 * sum(1 << (16 * i) for i in range(16))) == []
    evs = rig.resp(64, 0x3C00 * sum(1 << (16 * i) for i in range(16)))
    retired(evs)
    assert rig.core.s[5] == 0x99
    # VLD A0 (base 0x40 -> L1 word 0x40 = 64, stride 32 -> word 96...): reads the filled word 64 first
    same(rig.vec(2)[:16], np.full(16, ONE), "the VLD after VBAR sees the landed fill")


def test_op_1f_vhalt_waits_for_fills_not_for_drains():
    rig = Rig()
    evs = rig.go([vfill(0, 5), W_HALT], {0: (0, [(0, 1)])})
    assert len(evs) == 1 and fl(evs[0].flit)["type"] == T_RD_REQ, "VHALT waits for the outstanding response"
    retired(rig.resp(5, 1))
    evs = rig.go([vdrain(0, 5), W_HALT], {0: (0, [(0, 1)])})
    retired(evs)  # no response to a drain is awaited


def test_unmatched_read_response_is_dropped_and_recorded():
    rig = Rig()
    before = rig.core.l1.copy()
    assert rig.resp(7, 123) == []
    assert (rig.core.l1 == before).all() and len(rig.core.protocol_errors) == 1
    rig.go([vfill(0, 3), W_HALT], {0: (0, [(0, 1)])})
    assert rig.resp(4, 55) == [] and len(rig.core.protocol_errors) == 2, "txn 4 matches no outstanding fill"
    retired(rig.resp(3, 56))
    assert rig.l1w(4) == 0 and rig.l1w(3) == 56


def test_cu_data_writes_are_not_fill_retirements():
    rig = Rig()
    rig.go([vfill(0, 3), W_BAR, W_HALT], {0: (0, [(0, 1)])})
    evs = rig.cu_data(PEER, 0, 20, [0xAA, 0xBB], flags=1)
    assert len(evs) == 1, "the burst is acknowledged but the VBAR keeps waiting"
    check_signal(evs[0], SIG_RECV, 0, 0, dst=PEER, what="DATA_RECEIVED")
    retired(rig.resp(3, 1))


def test_a_vfill_waits_before_its_f_len_check():
    """V.11: a VFILL behind an outstanding one waits; then F_LEN is checked (before any flit)."""
    rig = Rig()
    reqs = rig.go([vfill(0, 0), vfill(1, 10), W_HALT], {0: (0, [(0, 1)]), 1: (0, [(32, 257)])})
    assert len(reqs) == 1, "the second VFILL waits: no fault and no flit yet"
    assert faulted(rig.resp(0, 1), F_LEN) == []


def test_vbar_without_outstanding_fills_proceeds():
    rig = Rig()
    retired(rig.go([W_BAR, W_BAR] + vseti(3, 2) + [W_HALT]))
    assert rig.core.s[2] == 3


def test_vfill_and_vdrain_ignore_the_unread_fields():
    """V.11: the L1 start word is ir[8:0] and the walk offset is 0 (bits [13:9] are not an offset);
    VFILL has no dtype (F_DTYPE is VLD / VST / VCVT only); a memory VDRAIN ([24] = 0) reads no [25]."""
    rig = Rig()
    junk = 7 << 24 | 0xF << 17 | 0x1F << 9
    plain = rig.go([vfill(2, 77), W_HALT], {2: (0x5000, [(32, 2)])})
    retired(rig.resp(77, 1) + rig.resp(78, 2))
    noisy = rig.go([vfill(2, 77) | junk, W_HALT])
    assert [e.flit for e in noisy] == [e.flit for e in plain], "VFILL with dt 7, vd 15, ir[13:9] set"
    retired(rig.resp(77, 1) + rig.resp(78, 2))
    plain = retired(rig.go([vdrain(2, 77), W_HALT]))
    noisy = retired(rig.go([vdrain(2, 77) | 3 << 25 | 0xF << 17 | 0x1F << 9, W_HALT]))
    assert [e.flit for e in noisy] == [e.flit for e in plain] and len(plain) == 4


# ================================================================ V.11 VDRAIN
def test_op_1e_vdrain_to_memory():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(50), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    base, dims = 0x80_0000_1000, [(32, 2), (-4096, 2)]
    evs = retired(rig.go([vdrain(2, 510), W_HALT], {2: (base, dims)}))
    exp, _ = spec_walk(base, dims, 4)
    assert len(evs) == 8, f"one MEM_WR_REQ + one MEM_WR_DATA per element (8 flits), got {len(evs)}"
    for n in range(4):
        check_flit(evs[2 * n], f"MEM_WR_REQ {n}", dst=MAG, type=T_WR_REQ, txn=1, last=0, payload=exp[n] << 216)
        check_flit(evs[2 * n + 1], f"MEM_WR_DATA {n}", dst=MAG, type=T_WR_DATA, txn=1, last=1,
                   payload=l1[(510 + n) % 512])


def test_vdrain_node_local():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(51), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    rec = 0x0123 | 0x35 << 16 | 2 << 24  # granule 0x123, ack {y=3, x=5}, mesh 2 (local: not used), fin 0
    evs = retired(rig.go([vdrain_node(4, 509, (3, 2), buf=0b1010, sig=1), W_HALT],
                         {4: (rec, [(64, 3), (7, 2)])}))
    assert len(evs) == 7, "one descriptor + total (6) data flits"
    check_flit(evs[0], "node descriptor", dst=(3, 2), type=T_DATA, txn=0, last=0, rsvd=0,
               payload=0x0A << 248 | 0x0123 << 232 | 5 << 224 | 1 << 216 | 0x35 << 208)
    for n in range(6):
        check_flit(evs[1 + n], f"node data {n}", dst=(3, 2), type=T_DATA, txn=0, last=int(n == 5), rsvd=0,
                   payload=l1[(509 + n) % 512])


def test_vdrain_node_remote():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(52), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    rec = 0xBEEF | 0x00 << 16 | 3 << 24 | 0x96 << 26  # fin {y=9, x=6}, mesh 3, ack 0
    evs = retired(rig.go([vdrain_node(0, 40, (0, 1), buf=0, sig=0), W_HALT], {0: (rec, [(1, 2), (1, 1)])}))
    assert len(evs) == 3
    check_flit(evs[0], "remote descriptor", dst=(0, 1), type=T_DATA, txn=0x96, last=0, rsvd=0b111,
               payload=0xBEEF << 232 | 1 << 224)
    for n in range(2):
        check_flit(evs[1 + n], f"remote data {n}", dst=(0, 1), type=T_DATA, txn=0x96, last=int(n == 1),
                   rsvd=0b111, payload=l1[40 + n])


@pytest.mark.parametrize("word", ["VFILL", "VDRAIN", "VDRAIN.node"])
def test_f_len(word):
    rig = Rig()
    w = {"VFILL": vfill(0, 0), "VDRAIN": vdrain(0, 0), "VDRAIN.node": vdrain_node(0, 0, (1, 1))}[word]
    evs = rig.go([w] + vseti(1, 9) + [W_HALT], {0: (0, [(32, 16), (1, 17)])})
    assert faulted(evs, F_LEN) == [], f"{word} of 272 elements: F_LEN before any flit"
    assert rig.core.s[9] == 0


# ================================================================ V.12 inbound CU_DATA
@pytest.mark.parametrize("ack, to", [((0, 0), PEER), ((5, 6), (5, 6))])
def test_cu_data_accepted_with_ack(ack, to):
    rig = Rig()
    data = rnd_words(np.random.default_rng(60), 12)
    evs = rig.cu_data(PEER, 0, 500, data, flags=1, ack=ack)  # off + len = 511: accepted
    assert len(evs) == 1
    check_signal(evs[0], SIG_RECV, 0, 0, dst=to, what="DATA_RECEIVED")
    same([rig.l1w(500 + i) for i in range(12)], data, "L1[off + i] = payload, raw")
    retired(rig.go([W_HALT]))  # no F_CUDATA pending


def test_cu_data_without_signal_flag_is_not_acknowledged():
    rig = Rig()
    assert rig.cu_data(PEER, 0, 7, [1, 2, 3], flags=0) == []
    same([rig.l1w(a) for a in (7, 8, 9)], [1, 2, 3], "L1")


@pytest.mark.parametrize("buf, off, n", [(1, 0, 2), (2, 10, 1), (0, 501, 12), (0, 0x200, 1), (0, 0xFFFF, 1),
                                         (0x80, 3, 1)])
def test_cu_data_rejected_then_f_cudata_at_next_run(buf, off, n):
    rig = Rig()
    before = rig.core.l1.copy()
    assert rig.cu_data(PEER, buf, off, list(range(1, n + 1)), flags=1) == [], "a rejected burst is not acked"
    assert (rig.core.l1 == before).all(), "a rejected burst writes nothing"
    evs = rig.cu_data(PEER, 0, 30, [0x77], flags=1)  # counted out: the next flit is a new descriptor
    assert len(evs) == 1 and rig.l1w(30) == 0x77
    # the next RUN faults before its first instruction, even one that would fault itself
    faulted(rig.go(vseti(0x12, 4) + [W_HALT]), F_CUDATA)
    assert rig.core.s[4] == 0, "F_CUDATA: the RUN faults before its first instruction"
    retired(rig.run())
    assert rig.core.s[4] == 0x12, "F_CUDATA is cleared once reported"
    rig.cu_data(PEER, 1, 0, [1])
    faulted(rig.go(pro(vl=0)), F_CUDATA)  # precedence: F_CUDATA before the program's own F_VL
    faulted(rig.run(), F_VL)


def test_cu_data_interleaved_second_sender():
    rig = Rig()
    d = [0x11, 0x22, 0x33]
    out = rig.cu_data(PEER, 0, 40, [], flags=1, ln=3)  # descriptor only: len 3
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 0, d[0]))
    out += rig.core.take(mkflit(UNIT, PEER2, T_DATA, 0, 0, 0xEE))  # counts toward the open burst
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 0, d[1]))
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 1, d[2]))  # the burst's 4th flit: closed, no ack
    assert out == [], "an interleaved burst is dropped without an ack"
    same([rig.l1w(a) for a in range(40, 44)], [0x11, 0, 0, 0],
         "V.12: the flit before the interleave landed; the alien flit and the rest of the burst are dropped")
    evs = rig.cu_data(PEER2, 0, 60, [5, 6], flags=1)
    assert len(evs) == 1
    check_signal(evs[0], SIG_RECV, 0, 0, dst=PEER2, what="DATA_RECEIVED to the new burst's source")
    faulted(rig.go([W_HALT]), F_CUDATA)


def test_f_cudata_at_the_next_boundary_of_a_running_kernel():
    rig = Rig()
    rig.go([vfill(0, 0), W_BAR] + vseti(0x31, 3) + [W_HALT], {0: (0, [(0, 1)])})
    assert rig.cu_data(PEER, 1, 0, [9]) == []
    evs = rig.resp(0, 0xF00D)
    faulted(evs, F_CUDATA)
    assert rig.core.s[3] == 0 and rig.l1w(0) == 0xF00D, "the kernel stopped at the boundary after VBAR"
    assert len(rig.run()) == 1  # cleared: the same kernel runs again and waits for its fill
    retired(rig.resp(0, 0xF00E))
    assert rig.core.s[3] == 0x31


def test_other_flit_types_are_dropped():
    rig = Rig()
    for t in (T_RD_REQ, T_WR_REQ, T_WR_ACK, T_WR_DATA, 9, 0xE):
        assert rig.core.take(mkflit(UNIT, PEER, t, 1, 1, 12345)) == []
    assert not rig.core.l1.any() and rig.core.burst is None


# ================================================================ models/vector/memory.py
def test_core_with_memory_fill_then_drain():
    mem = CoreWithMemory(VectorCore(UNIT, MAG))
    data = rnd_words(np.random.default_rng(90), 3)
    for i, w in enumerate(data):
        mem.write_word(0x2000 + 32 * i, w)
    flits = [mkflit(UNIT, HOST, T_INST, 0x21, 0, p_imem(i, w))
             for i, w in enumerate([vfill(0, 10), W_BAR, vdrain(1, 10), W_HALT])]
    flits += [mkflit(UNIT, HOST, T_INST, 0x21, 0, p) for p in (
        p_desc(0, 0, 0x2000), p_desc(0, 1, p_dim(32, 3)), p_desc(1, 0, 0x9000), p_desc(1, 1, p_dim(64, 3)))]
    flits.append(mkflit(UNIT, HOST, T_INST, RUN_TXN, 1, p_run(0)))
    out = mem.take_all(flits)
    retired(out[-1:], last=1)
    assert [mem.read_word(0x9000 + 64 * i) for i in range(3)] == data
