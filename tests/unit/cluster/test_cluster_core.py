"""The cluster's event model (models.cluster.ClusterCore) against units.md §C: take(flit) -> list[Event].

Each test feeds flits as a port would take them and checks what comes out, written from the spec:
the multicast leader rule and followers (C.3), placement and the collecting register (C.4), the held
RD_RESP (C.3), banks and 8-bit wraps (C.4, C.5), emit and fuse (C.6), exec_result (C.6), and the
receive rules of protocol.md §4 (a rejected burst is still acknowledged).
"""

from __future__ import annotations

import numpy as np
import pytest

from models import cluster
from models.cu.base import SigCode, cu_data_bursts, cu_inst, signal_fields
from models.noc.flit import FlitType, make_flit, unpack_flit
from models.numerics.cluster import acc_add
from models.numerics.layout import unpack_fp16_subtile

UNIT, AGENT, MAG, SINK = (1, 1), (1, 0), (0, 1), (2, 1)


def _inst(payload: int, txn: int = 0x40, last: int = 0, src=AGENT, unit=UNIT) -> int:
    return cu_inst(unit, src, txn, last, payload)


def _resp(dst, txn: int, w: int, word: int, src=MAG) -> int:
    return make_flit(dst, src, FlitType.MEM_RD_RESP, txn & 0xFF, int(w == 3), word, rsvd=w)


def _entry_flits(dst, txn: int, words, src=MAG) -> list[int]:
    return [_resp(dst, txn, w, words[w], src) for w in range(4)]


def _signals(events) -> list[tuple[int, int]]:
    return [signal_fields(e.flit) for e in events if unpack_flit(e.flit).type == FlitType.CU_SIGNAL]


def _types(events) -> list[int]:
    return [unpack_flit(e.flit).type for e in events]


def _operands(core: cluster.ClusterCore, rng, gm, gn, nk, *, a_off=0, b_off=0):
    a = rng.integers(-64, 64, size=(4 * gm, 32 * nk))
    b = rng.integers(-64, 64, size=(32 * nk, 4 * gn))
    sa = rng.integers(0x90, 0xB0, size=(4 * gm, nk))
    sb = rng.integers(0x90, 0xB0, size=(nk, 4 * gn))
    core.take_all(cu_data_bursts(UNIT, AGENT, 0, a_off, cluster.granules_of(cluster.a_entries(a, sa))))
    core.take_all(cu_data_bursts(UNIT, AGENT, 1, b_off, cluster.granules_of(cluster.b_entries(b, sb))))
    return a, sa, b, sb


# ---------------------------------------------------------------- multicast (C.3)
@pytest.mark.parametrize("coord, peers, npeer, leads", [
    ((1, 1), [], 0, True),                            # npeer 0 always leads
    ((1, 1), [(2, 1), (1, 2)], 2, True),              # 0x11 < 0x12, 0x21
    ((2, 1), [(1, 1), (1, 2)], 2, False),             # 0x12 > 0x11
    ((1, 1), [(1, 1), (2, 1)], 2, False),             # lists itself: never leads
    ((2, 2), [(3, 2), (1, 1), (0, 0)], 1, True),      # only the first npeer bytes count
])
def test_leader_rule(coord, peers, npeer, leads):
    pv, _ = cluster.peer_field(peers)
    payload = cluster.encode_inst(cluster.Op.FILL, n=2, peers=pv, npeer=npeer)
    core = cluster.ClusterCore(coord, MAG)
    out = core.take(_inst(payload, unit=coord))
    assert cluster.leads(coord, cluster.decode_inst(payload)) == leads
    assert [e.dst for e in out] == ([MAG] if leads else [])
    if leads:
        p = unpack_flit(out[0].flit).payload
        assert (p >> 168) & 0xFFFFFF == pv and (p >> 166) & 3 == npeer


def test_follower_accepts_responses_of_any_origin_with_its_own_sel_and_fbank():
    """A follower sends nothing, stays in its FILL until n entries, places them by its own sel/fbank."""
    follower = cluster.ClusterCore((2, 1), MAG)
    payload = cluster.fill(0x8000, 2, 1, eoff=9, fbank=1, peers=[(2, 1), (1, 2)])  # lists itself: a follower
    assert follower.take(_inst(payload, unit=(2, 1))) == []
    words = [[0x100 + 4 * e + w for w in range(4)] for e in range(2)]
    out = follower.take_all(_entry_flits((2, 1), 9, words[0], src=(7, 7)))  # another origin: accepted
    assert out == [] and follower.fill is not None
    out = follower.take_all(_entry_flits((2, 1), 10, words[1]))
    assert _signals(out) == [(SigCode.INST_COMPLETE, 1)] and out[0].dst == AGENT
    assert follower.entry(cluster.Buf.L1B, 256 + 9) == words[0]
    assert follower.entry(cluster.Buf.L1B, 256 + 10) == words[1]
    assert follower.entry(cluster.Buf.L1A, 256 + 9) == [0] * 4


# ---------------------------------------------------------------- placement (C.4)
def test_word_3_commits_the_collecting_register_at_fbank_txn():
    core = cluster.ClusterCore(UNIT, MAG)
    core.take(_inst(cluster.fill(0, 3, 0, eoff=254, fbank=1)))
    words = [[(e << 8) | w for w in range(4)] for e in range(3)]
    core.take_all(_entry_flits(UNIT, 254, words[0])[:3])
    assert core.entry(cluster.Buf.L1A, 256 + 254) == [0] * 4  # nothing lands before word 3
    core.take(_entry_flits(UNIT, 254, words[0])[3])
    assert core.entry(cluster.Buf.L1A, 510) == words[0]
    core.take_all(_entry_flits(UNIT, 255, words[1]))
    out = core.take_all(_entry_flits(UNIT, 256, words[2]))  # txn = eoff + 2 mod 256 = 0
    assert core.entry(cluster.Buf.L1A, 511) == words[1] and core.entry(cluster.Buf.L1A, 256) == words[2]
    assert core.entry(cluster.Buf.L1A, 0) == [0] * 4  # wraps within bank 1, never into bank 0
    assert _signals(out) == [(SigCode.INST_COMPLETE, 1)]


def test_fill_of_256_entries_faults_instead_of_hanging():
    core = cluster.ClusterCore(UNIT, MAG)
    out = core.take(_inst(cluster.fill(0, 256, 0, strict=False)))
    assert _signals(out) == [(SigCode.FAULT, cluster.Fault.FILL_RANGE)] and core.fill is None
    assert _signals(core.take(_inst(cluster.gemm(1, 1, 1)))) == [(SigCode.INST_COMPLETE, 1)]  # it carries on


# ---------------------------------------------------------------- the held RD_RESP (C.3)
def test_rd_resp_outside_a_fill_is_held_and_consumed_by_the_next_fill():
    core = cluster.ClusterCore(UNIT, MAG)
    early = [[0xE0 + w for w in range(4)]]
    assert core.take_all(_entry_flits(UNIT, 5, early[0])) == []
    assert core.held and core.entry(cluster.Buf.L1B, 5) == [0] * 4
    # a CU_DATA burst behind it is blocked: no ack yet, nothing written
    assert core.take_all(cu_data_bursts(UNIT, SINK, 0, 40, [7, 8], flags=1)) == []
    assert core.l1[cluster.Buf.L1A][40:42] == [0, 0]
    # an instruction starts past it (GEMM), and the blocked flits stay blocked
    assert _signals(core.take(_inst(cluster.gemm(1, 1, 1)))) == [(SigCode.INST_COMPLETE, 1)]
    assert core.held
    # the next FILL consumes it (one of its n entries), then the CU_DATA is applied and acknowledged
    out = core.take(_inst(cluster.fill(0x400, 2, 1, eoff=5)))
    assert _types(out) == [FlitType.MEM_RD_REQ, FlitType.CU_SIGNAL]
    assert _signals(out) == [(SigCode.DATA_RECEIVED, 0)] and out[1].dst == SINK
    assert core.entry(cluster.Buf.L1B, 5) == early[0] and core.l1[cluster.Buf.L1A][40:42] == [7, 8]
    out = core.take_all(_entry_flits(UNIT, 6, [1, 2, 3, 4]))
    assert _signals(out) == [(SigCode.INST_COMPLETE, 2)]  # the FILL retired after its 2nd entry
    # its own late responses are held in turn, for the FILL after it
    core.take_all(_entry_flits(UNIT, 5, [9, 9, 9, 9]))
    assert core.held and core.entry(cluster.Buf.L1B, 5) == early[0]


# ---------------------------------------------------------------- GEMM banks and wraps (C.5)
def test_gemm_reads_its_banks_and_wraps_offsets_within_them():
    rng = np.random.default_rng(3)
    ref, core = cluster.ClusterCore(UNIT, MAG), cluster.ClusterCore(UNIT, MAG)
    _operands(ref, rng, 2, 2, 2)
    ref.take(_inst(cluster.gemm(2, 2, 2)))
    # the same entries at bank 1, starting at offset 253: entries {1, 253..255, 0}
    for side, n in ((cluster.Buf.L1A, 4), (cluster.Buf.L1B, 4)):
        for e in range(n):
            dst = cluster.l1_entry(1, 253 + e)
            core.l1[side][4 * dst:4 * dst + 4] = ref.entry(side, e)
    core.take(_inst(cluster.gemm(2, 2, 2, aoff=253, boff=253, abank=1, bbank=1)))
    assert np.array_equal(core.acc[:4], ref.acc[:4])
    assert cluster.l1_entry(1, 256) == 256 and cluster.l1_entry(0, 300) == 44


# ---------------------------------------------------------------- emit and fuse (C.6)
def test_emitting_gemm_sends_the_drain_flits_and_a_fused_drain_sends_none():
    core, ref = cluster.ClusterCore(UNIT, MAG), cluster.ClusterCore(UNIT, MAG)
    for c in (core, ref):
        _operands(c, np.random.default_rng(4), 3, 3, 2)
    dest = dict(addr=32 * 5, dnode=1, dst=SINK, dbuf=0, dflags=1, dack=AGENT)
    out = core.take(_inst(cluster.gemm(3, 3, 2, emit=1, **dest)))
    ref.take(_inst(cluster.gemm(3, 3, 2)))
    drained = ref.take(_inst(cluster.drain(9, **dest)))
    assert [e.flit for e in out[:-1]] == [e.flit for e in drained[:-1]]  # the same 11 flits, FP16, tile order
    assert len(out) == 12 and core.emitted == 9
    fused = core.take(_inst(cluster.drain(9, fuse=1, **dest)))
    assert _signals(fused) == [(SigCode.INST_COMPLETE, 2)] and core.emitted == 0


def test_emit_with_a_load_last_block_emits_nothing_and_a_fused_drain_faults():
    core = cluster.ClusterCore(UNIT, MAG)
    out = core.take(_inst(cluster.gemm(2, 2, 1, emit=1, dnode=1, dst=SINK)))
    assert _types(out) == [FlitType.CU_SIGNAL] and core.emitted == 0
    out = core.take(_inst(cluster.drain(4, fuse=1, dnode=1, dst=SINK)))
    assert _signals(out) == [(SigCode.FAULT, cluster.Fault.FUSE)]
    out = core.take(_inst(cluster.gemm(2, 2, 1, acc=1, emit=1, dbuf=2, dnode=1, dst=SINK)))  # ADD last block
    data = [unpack_flit(e.flit) for e in out if e.dst == SINK]
    assert len(data) == 5 and data[0].payload >> 248 == 2  # dbuf 2, yet FP16: one granule per sub-tile
    assert unpack_fp16_subtile(data[1].payload).shape == (4, 4)


def test_emit_to_memory_goes_to_the_mag():
    core = cluster.ClusterCore(UNIT, MAG)
    out = core.take(_inst(cluster.gemm(3, 3, 1, acc=1, emit=1, addr=0x1000)))
    reqs = [unpack_flit(e.flit) for e in out if unpack_flit(e.flit).type == FlitType.MEM_WR_REQ]
    assert [r.payload >> 216 for r in reqs] == [0x1000, 0x1000 + 8 * 32] and all(e.dst == MAG for e in out[:-1])


# ---------------------------------------------------------------- exec_result (C.6)
def test_exec_result_is_the_running_count_of_retired_fill_gemm_drain():
    core = cluster.ClusterCore(UNIT, MAG)
    seq = [cluster.gemm(1, 1, 1), cluster.drain(1, dnode=1, dst=SINK), cluster.encode_inst(9),
           cluster.drain(300, strict=False), cluster.gemm(2, 1, 1)]
    got = [_signals(core.take(_inst(p, txn=i)))[-1] for i, p in enumerate(seq)]
    assert got == [(SigCode.INST_COMPLETE, 1), (SigCode.INST_COMPLETE, 2), (SigCode.FAULT, cluster.Fault.OPCODE),
                   (SigCode.FAULT, cluster.Fault.DRAIN_RANGE), (SigCode.INST_COMPLETE, 3)]
    last = core.take(_inst(cluster.gemm(1, 1, 1), txn=0x77, last=1))
    assert _signals(last) == [(SigCode.BATCH_COMPLETE, 0x77)] and core.retired == 4


# ---------------------------------------------------------------- CU_DATA (protocol §4)
def test_interleaved_burst_is_rejected_and_still_acknowledged():
    core = cluster.ClusterCore(UNIT, MAG)
    burst = cu_data_bursts(UNIT, AGENT, 0, 100, [1, 2, 3], flags=1, txn=5)
    intruder = cu_data_bursts(UNIT, SINK, 0, 200, [9], flags=1)
    out = core.take_all([burst[0], burst[1], intruder[0], burst[2], burst[3]])
    assert core.l1[cluster.Buf.L1A][100:103] == [1, 0, 0]  # landed until the intruder rejected the burst
    assert _signals(out) == [(SigCode.DATA_RECEIVED, 0)] and out[0].dst == AGENT
    assert core.dbg["dropped"] == 1 and core.dbg["rejected"] == 1


def test_peer_pairs_add_with_the_accumulator_add():
    rng = np.random.default_rng(5)
    core = cluster.ClusterCore(UNIT, MAG)
    core.acc[:] = rng.integers(0, 1 << 22, size=core.acc.shape)
    peer = rng.integers(0, 1 << 22, size=(3, 4, 4))
    before = core.acc.copy()
    out = core.take_all(cu_data_bursts(UNIT, SINK, 2, 2, [g for t in peer for g in cluster.send_granules(t)], flags=1,
                                       ack=AGENT))
    assert np.array_equal(core.acc[1:4], acc_add(before[1:4], peer)) and np.array_equal(core.acc[4:], before[4:])
    assert [e.dst for e in out] == [AGENT]


def test_other_types_are_dropped_never_held():
    core = cluster.ClusterCore(UNIT, MAG)
    for t in (FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA, FlitType.MEM_RD_REQ, FlitType.CU_SIGNAL, 0x9, 0xE):
        assert core.take(make_flit(UNIT, AGENT, t, 0, 1, 0)) == []
    assert not core.pending and core.dbg["dropped"] == 6
    assert core.take(make_flit(UNIT, AGENT, FlitType.MEM_WR_ACK, 0, 1, 0)) == [] and core.dbg["dropped"] == 6
