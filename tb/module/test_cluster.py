"""Module bench of the cluster CU (rtl/units/cluster_cu.v) on the Local port of a 1x1 mesh.

Bench endpoints on the four edges play the agent (1,0), a peer (1,2), the
memory agent (0,1) (the cluster's MAG coordinate: it captures FILL requests
and memory drains, and plays read responses queued behind a FILL) and a drain
destination (2,1). Every flit the cluster sends is predicted by
models/cluster.py, bit for bit, per destination and in order; the values come
from the project's numerics (models/numerics). Hostile variants idle the
sources and back-pressure the sinks at random.
"""

from __future__ import annotations

from collections import defaultdict

import cocotb
import numpy as np

from models.cluster import (
    ACC_TILES, CU_TYPE, L1_GRANULES, N_BUFFERS, Buf, ClusterModel, Fault, a_entries, acks_for, b_entries,
    cu_data_bursts, drain, drain_shape, encode_inst, fill, gemm, granules_of, send_granules,
)
from models.cu_base import SigCode, caps_value, ctrl_reply, ctrl_request, cu_inst, signal_fields
from models.flit import FlitType, flit_field, pack_fields
from models.numerics.layout import unpack_fp16_subtile
from tb.lib.expect import compare_per_port
from tb.lib.harness import StallMode, StallPattern
from tb.lib.noc_tb import NocTB, StreamRun

UNIT = (1, 1)
P_AGENT, P_PEER, P_MAG, P_SINK = 1, 2, 3, 4  # (1,0), (1,2), (0,1), (2,1)
HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 80), backpressure=StallPattern(StallMode.BURST, 40))
PAYLOAD = (1 << 256) - 1


def _key(flit: int) -> str:
    """Two queues answer one port without an order between them: completions and acks."""
    if flit_field(flit, "type") == FlitType.CU_SIGNAL:
        return "ack" if (flit >> 248) & 0xFF == SigCode.DATA_RECEIVED else "done"
    if flit_field(flit, "type") == FlitType.CU_CTRL:
        return "ctrl"
    return "data"


class Scenario:
    """Streams to inject per port and the flits the model predicts per port."""

    def __init__(self, tb: NocTB) -> None:
        self.tb = tb
        self.geo = tb.geometry
        self.mag = self.geo.port_coord(P_MAG)
        self.model = ClusterModel(UNIT, self.mag)
        self.streams: dict[int, list[int]] = defaultdict(list)
        self.expected: dict[int, list[int]] = defaultdict(list)
        self.txn = 0x40

    def coord(self, port: int) -> tuple[int, int]:
        return self.geo.port_coord(port)

    def _expect(self, flits) -> None:
        for f in flits:
            self.expected[self.geo.port_index((flit_field(f, "dst_x"), flit_field(f, "dst_y")))].append(f)

    def burst(self, port: int, buf: int, off: int, granules, *, flags: int = 0, ack=(0, 0)) -> None:
        """CU_DATA burst(s) from `port` into the cluster; the model predicts the acks."""
        flits = cu_data_bursts(UNIT, self.coord(port), buf, off, granules, flags=flags, ack=ack, txn=self.txn)
        self.txn = (self.txn + 1) & 0xFF
        self.streams[port].extend(flits)
        self._expect(self.model.receive(flits))

    def operands(self, port: int, a, sa, b, sb, *, a_off: int = 0, b_off: int = 0) -> None:
        self.burst(port, Buf.L1A, a_off, granules_of(a_entries(a, sa)))
        self.burst(port, Buf.L1B, b_off, granules_of(b_entries(b, sb)))

    def inst(self, port: int, payload: int, last: int = 0):
        flit = cu_inst(UNIT, self.coord(port), self.txn, last, payload)
        self.txn = (self.txn + 1) & 0xFF
        self.streams[port].append(flit)
        out = self.model.execute(flit)
        self._expect(out.flits)
        self._expect([out.completion])
        return out

    def pad(self, port: int, n: int) -> None:
        """Flits the endpoint base drops on arrival (MEM_WR_ACK): time passing on one link."""
        src = self.coord(port)
        self.streams[port].extend(
            pack_fields({"dst_x": UNIT[0], "dst_y": UNIT[1], "src_x": src[0], "src_y": src[1],
                         "type": FlitType.MEM_WR_ACK, "txn": i & 0xFF, "last": 1}) for i in range(n))

    def captured(self, run: StreamRun, port: int, ftype: int | None = None) -> list[int]:
        return [r.flit for r in run.records if r.port == port and (ftype is None or flit_field(r.flit, "type") == ftype)]

    async def run(self, hostile: bool = False, **kw) -> StreamRun:
        total = sum(len(v) for v in self.expected.values())
        return await self.tb.run_streams(dict(self.streams), expect_total=total, **(HOSTILE if hostile else {}), **kw)

    def finish(self, run: StreamRun) -> None:
        v = self.tb.verdict
        v.check(run.outcome.ended == "done", f"run ended by {run.outcome.ended}: "
                f"{run.outcome.captured}/{run.expected_captures} predicted flits captured")
        checks, errors = compare_per_port(self.expected, run.records, _key)
        v.add_checks(checks, errors)
        v.check(run.mon_err == 0, "an RTL monitor raised mon_err (see ERROR lines)")
        v.finish()


def _operands(rng: np.random.Generator, gm: int, gn: int, nk: int, *, lo: int = -4, hi: int = 3,
              scale=lambda rng, shape: np.full(shape, 0xA0)):
    a = rng.integers(lo, hi + 1, size=(4 * gm, 32 * nk))
    b = rng.integers(lo, hi + 1, size=(32 * nk, 4 * gn))
    return a, scale(rng, (4 * gm, nk)), b, scale(rng, (nk, 4 * gn))


def tb_rng(tb: NocTB) -> np.random.Generator:
    return np.random.default_rng(tb.seed)


def _random_scales(rng, shape):
    return rng.integers(0x80, 0xC0, size=shape)


def _data_payloads(flits: list[int]) -> tuple[list[int], int]:
    """(data payloads, descriptor count) of a node drain as captured, framing by count."""
    data, descs, i = [], 0, 0
    while i < len(flits):
        n = ((flits[i] >> 224) & 0xFF) + 1
        descs += 1
        data.extend(f & PAYLOAD for f in flits[i + 1:i + 1 + n])
        i += n + 1
    return data, descs


# ---------------------------------------------------------------- protocol section 7
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_reference_gemm_drain_to_node(dut, hostile: bool) -> None:
    """Section 7 step 1 + pass A: operand bursts (gm=gn=3, nk=2, -4..3, 0xA0, anchor 40), GEMM,
    DRAIN dnode=1 to a bench endpoint: 9 granules in 2 bursts, exact integer products."""
    tb = NocTB(dut, f"test_reference_gemm_drain_to_node/hostile={hostile}")
    sc = Scenario(tb)
    a, sa, b, sb = _operands(tb_rng(tb), 3, 3, 2)
    sc.operands(P_AGENT, a, sa, b, sb)
    v = tb.verdict
    v.check(len(sc.streams[P_AGENT]) == 2 * 25, "one burst of 24 granules per side (len 23)")
    sc.inst(P_AGENT, gemm(3, 3, 2, anchor=40))
    # pass A: to the agent itself, as in the reference bench
    sc.inst(P_AGENT, drain(9, addr=0, dnode=1, dst=sc.coord(P_AGENT), dbuf=0, dflags=0))
    # pass B's descriptor fields (flags 1, dack = the agent), to another endpoint
    sc.inst(P_AGENT, drain(9, addr=0, dnode=1, dst=sc.coord(P_SINK), dbuf=0, dflags=1, dack=sc.coord(P_AGENT)))
    run = await sc.run(hostile)
    at_agent = sc.captured(run, P_AGENT)
    first = [f for f in at_agent if flit_field(f, "type") == FlitType.CU_DATA]
    second = sc.captured(run, P_SINK)
    done = [i for i, f in enumerate(at_agent) if flit_field(f, "type") == FlitType.CU_SIGNAL]
    last_data = max((i for i, f in enumerate(at_agent) if flit_field(f, "type") == FlitType.CU_DATA), default=-1)
    v.check(len(done) == 3 and done[1] > last_data,
            "pass A's DRAIN completion reached the agent before its last data flit (a DRAIN retires after its last "
            "flit has left the CU)")
    data, descs = _data_payloads(first)
    v.check(len(first) > 0, "pass A: no data arrived")
    v.check(len(data) == 9, f"pass A: {len(data)} granules, 9 expected")
    v.check(descs == 2, f"pass A: {descs} descriptors, 2 expected")
    exact = a @ b
    for t, g in enumerate(data):
        r, c = divmod(t, 3)
        want = exact[4 * r:4 * r + 4, 4 * c:4 * c + 4].astype(np.float16).view(np.uint16)
        v.check(np.array_equal(unpack_fp16_subtile(g), want), f"sub-tile {t} is not the exact integer product")
    v.check(len(second) == 11 and (second[0] >> 216) & 0xFF == 1 and (second[9] >> 216) & 0xFF == 1,
            "pass B: 2 descriptors with flags bit 0 expected")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_drain_to_memory(dut, hostile: bool) -> None:
    """DRAIN dnode=0: MEM_WR_REQ bursts of <= 8 beats to addr + 32t, the same FP16 data as a node drain."""
    tb = NocTB(dut, f"test_drain_to_memory/hostile={hostile}")
    sc = Scenario(tb)
    a, sa, b, sb = _operands(tb_rng(tb), 3, 3, 2)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, gemm(3, 3, 2))
    sc.inst(P_AGENT, drain(9, addr=0x8000))
    sc.inst(P_AGENT, drain(9, dnode=1, dst=sc.coord(P_SINK)))
    sc.inst(P_AGENT, drain(ACC_TILES, addr=0x12_0000_0020, dnode=0), last=1)  # a 40-bit address, 32 bursts
    run = await sc.run(hostile)
    v = tb.verdict
    mem = sc.captured(run, P_MAG)
    reqs = [f for f in mem if flit_field(f, "type") == FlitType.MEM_WR_REQ]
    beats = [f & PAYLOAD for f in mem if flit_field(f, "type") == FlitType.MEM_WR_DATA]
    v.check(len(reqs) == 2 + 32, f"{len(reqs)} MEM_WR_REQ, 2 + 32 expected")
    v.check(all((f >> 208) & 0xFF <= 7 for f in reqs), "a write burst longer than 8 beats")
    v.check([(f & PAYLOAD) >> 216 for f in reqs[:2]] == [0x8000, 0x8000 + 8 * 32], "write addresses not addr + 32t")
    node, _ = _data_payloads(sc.captured(run, P_SINK))
    v.check(beats[:9] == node, "memory drain data differs from the node drain's")
    sc.finish(run)


# ---------------------------------------------------------------- the cluster as a receiver
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_cluster_acknowledges_every_burst(dut, hostile: bool) -> None:
    """CU_DATA into the cluster with flags=1: one DATA_RECEIVED per burst to ack (or the source when 0),
    arg = buf, INCLUDING rejected bursts (bad buf, range overflow, odd peer offset); never wrapped."""
    tb = NocTB(dut, f"test_cluster_acknowledges_every_burst/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = _operands(rng, 3, 3, 2)
    junk = [int(x) for x in rng.integers(0, 1 << 62, size=16)]
    sc.operands(P_PEER, a, sa, b, sb)
    agent, sink = sc.coord(P_AGENT), sc.coord(P_SINK)
    cases = [  # buf, off, count, ack
        (0, 1000, 8, agent),
        (1, 1500, 3, (0, 0)),                     # back to the source
        (2, 40, 4, sink),                         # peer pairs, accepted
        (3, 0, 2, agent),                         # reserved buf: rejected, acked
        (200, 0, 1, (0, 0)),                      # unallocated buf: rejected, acked to the source
        (0, L1_GRANULES - 4, 8, agent),           # would wrap onto L1A granules 0..3: rejected, acked
        (1, L1_GRANULES - 1, 2, sink),            # would wrap onto L1B granule 0: rejected, acked
        (2, 7, 2, agent),                         # odd peer offset: rejected, acked
        (2, 2 * ACC_TILES - 2, 4, agent),         # past the accumulator: rejected, acked
        (0, 64, 16, (0, 0)),
    ]
    for buf, off, n, ack in cases:
        sc.burst(P_PEER, buf, off, junk[:n], flags=1, ack=ack)
    sc.burst(P_PEER, 0, 80, junk[:5], flags=0)      # no ack asked
    # the operands survived the rejected bursts: the GEMM still gives the exact products
    sc.inst(P_PEER, gemm(3, 3, 2))
    sc.inst(P_PEER, drain(9, dnode=1, dst=sink))
    run = await sc.run(hostile)
    v = tb.verdict
    acks = [r.flit for r in run.records if flit_field(r.flit, "type") == FlitType.CU_SIGNAL
            and signal_fields(r.flit)[0] == SigCode.DATA_RECEIVED]
    v.check(len(acks) == len(cases), f"{len(acks)} DATA_RECEIVED for {len(cases)} acknowledged bursts")
    v.check(sorted(signal_fields(f)[1] for f in acks) == sorted(c[0] for c in cases), "ack args are not the buf ids")
    data, _ = _data_payloads(sc.captured(run, P_SINK, FlitType.CU_DATA))
    exact = a @ b
    v.check(all(np.array_equal(unpack_fp16_subtile(g), exact[4 * (t // 3):4 * (t // 3) + 4,
                                                                4 * (t % 3):4 * (t % 3) + 4].astype(np.float16).view(np.uint16))
                for t, g in enumerate(data)) and len(data) == 9, "a rejected burst wrapped into the operands")
    sc.finish(run)


# ---------------------------------------------------------------- emit saturation
@cocotb.test()
async def test_fp16_saturation_on_emit(dut) -> None:
    """Products past 65504 saturate to 0x7bff / 0xfbff on OP_EMIT, never infinity; bit exact."""
    tb = NocTB(dut, "test_fp16_saturation_on_emit")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = _operands(rng, 4, 4, 1, lo=-64, hi=63)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, gemm(4, 4, 1, anchor=36))  # x16: about half the elements pass 65504
    sc.inst(P_AGENT, drain(16, dnode=1, dst=sc.coord(P_SINK)))
    run = await sc.run()
    v = tb.verdict
    vals = np.concatenate([unpack_fp16_subtile(g).reshape(-1) for g in sc.model.fp16_tiles(16)])
    v.check((vals == 0x7BFF).any() and (vals == 0xFBFF).any(), "the stimulus did not reach saturation both ways")
    v.check(not ((vals & 0x7C00) == 0x7C00).any(), "the model produced an infinity or NaN")
    got, _ = _data_payloads(sc.captured(run, P_SINK))
    gv = np.concatenate([unpack_fp16_subtile(g).reshape(-1) for g in got]) if got else np.zeros(0)
    v.check(not ((gv & 0x7C00) == 0x7C00).any(), "the cluster emitted an infinity or NaN")
    sc.finish(run)


# ---------------------------------------------------------------- tile counts
SHAPES = {1: (1, 1, 1), 8: (2, 4, 2), 9: (3, 3, 3), 64: (8, 8, 2)}  # gm*gn -> (gm, gn, nk)


@cocotb.test()
@cocotb.parametrize(tiles=[1, 8, 9, 64])
async def test_tile_counts_and_values(dut, tiles: int) -> None:
    """gm*gn in {1, 8, 9, 64}: full-range int7, random scales, LOAD then an acc=1 chain; node drain of
    gm*gn granules in ceil(gm*gn/8) descriptors with dflags=1, bit exact; hostile."""
    gm, gn, nk = SHAPES[tiles]
    tb = NocTB(dut, f"test_tile_counts_and_values/tiles={tiles}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = _operands(rng, gm, gn, nk, lo=-64, hi=63, scale=_random_scales)
    a2, sa2, b2, sb2 = _operands(rng, gm, gn, 1, lo=-64, hi=63, scale=_random_scales)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.operands(P_AGENT, a2, sa2, b2, sb2, a_off=4 * gm * nk, b_off=4 * gn * nk)
    sc.inst(P_AGENT, gemm(gm, gn, nk, anchor=44))
    fused = int(tiles >= 9)  # GEMM.emit / DRAIN.fuse: accepted, same flits as a plain drain
    sc.inst(P_AGENT, gemm(gm, gn, 1, anchor=44, acc=1, aoff=gm * nk, boff=gn * nk, emit=fused))
    n = gm * gn
    sc.inst(P_AGENT, drain(n, addr=32 * 3, dnode=1, dst=sc.coord(P_SINK), dflags=1, dack=sc.coord(P_AGENT),
                           fuse=fused), last=1)
    run = await sc.run(hostile=True)
    v = tb.verdict
    data, descs = _data_payloads(sc.captured(run, P_SINK))
    v.check(len(data) == n, f"{len(data)} granules, {n} expected")
    v.check(descs == acks_for(n) == drain_shape(n)[1], f"{descs} descriptors, ceil({n}/8) = {acks_for(n)} expected")
    sc.finish(run)


# ---------------------------------------------------------------- FILL
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_fill_streams_into_l1(dut, hostile: bool) -> None:
    """FILL: one MEM_RD_REQ (STREAM, count n, entry_words 4, txn eoff); responses played by the MAG
    endpoint in a shuffled order land by their tags (entry = txn, word = rsvd); then GEMM + DRAIN."""
    tb = NocTB(dut, f"test_fill_streams_into_l1/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    gm, gn, nk = 2, 3, 2
    a, sa, b, sb = _operands(rng, gm, gn, nk, lo=-64, hi=63, scale=_random_scales)
    for sel, ents, eoff, addr in ((0, a_entries(a, sa), 5, 0x4000), (1, b_entries(b, sb), 17, 0x9000)):
        words = granules_of(ents)
        payload = fill(addr, len(ents), sel, eoff=eoff)
        sc.inst(P_MAG, payload)
        responses = sc.model.fill_responses(words, payload)
        order = rng.permutation(len(responses))
        sc.pad(P_MAG, 40)  # the FILL is running before its first response arrives
        sc.streams[P_MAG].extend(responses[i] for i in order)
    sc.inst(P_MAG, gemm(gm, gn, nk, aoff=5, boff=17))
    sc.inst(P_MAG, drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)), last=1)
    run = await sc.run(hostile)
    v = tb.verdict
    reqs = sc.captured(run, P_MAG, FlitType.MEM_RD_REQ)
    v.check(len(reqs) == 2, f"{len(reqs)} MEM_RD_REQ for 2 FILLs")
    v.check(all((f >> 200) & 0xFF == 0x40 and (f >> 158) & 0xFF == 4 for f in reqs), "not STREAM / entry_words 4")
    sc.finish(run)


# ---------------------------------------------------------------- faults, drops, CU_CTRL
@cocotb.test()
async def test_faults_retire_with_codes(dut) -> None:
    """Each faulting instruction retires FAULT with its code and sends nothing; the unit carries on."""
    tb = NocTB(dut, "test_faults_retire_with_codes")
    sc = Scenario(tb)
    bad = [
        (encode_inst(0), Fault.OPCODE),
        (encode_inst(9, n=3), Fault.OPCODE),
        (fill(0, 256, 0, strict=False), Fault.FILL_RANGE),
        (fill(0, 10, 1, eoff=250, strict=False), Fault.FILL_RANGE),
        (gemm(17, 16, 1, strict=False), Fault.GEMM_RANGE),
        (gemm(16, 1, 17, aoff=255, strict=False), Fault.GEMM_RANGE),
        (drain(257, strict=False), Fault.DRAIN_RANGE),
        (drain(4, dnode=1, dst=(2, 1), dmesh=2, strict=False), Fault.REMOTE),
    ]
    for payload, fault in bad:
        out = sc.inst(P_AGENT, payload)
        tb.verdict.check(out.fault == fault, f"model disagrees on {fault.name}")
    a, sa, b, sb = _operands(tb_rng(tb), 1, 1, 1, lo=-64, hi=63, scale=_random_scales)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, gemm(1, 1, 1))
    sc.inst(P_AGENT, drain(1, dnode=1, dst=sc.coord(P_SINK)), last=1)
    run = await sc.run()
    codes = [signal_fields(f) for f in sc.captured(run, P_AGENT, FlitType.CU_SIGNAL)]
    tb.verdict.check(codes[:len(bad)] == [(SigCode.FAULT, int(f)) for _, f in bad], f"fault codes {codes}")
    tb.verdict.check(codes[-1][0] == SigCode.BATCH_COMPLETE, "the last instruction did not retire BATCH_COMPLETE")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_unconsumed_types_dropped_and_caps(dut, hostile: bool) -> None:
    """MEM_WR_ACK, MEM_RD_RESP outside a FILL, MEM_WR_REQ/DATA, MEM_RD_REQ, CU_SIGNAL and reserved types
    are taken and dropped, never held; CU_CAPS says 'MG' with 3 buffers."""
    tb = NocTB(dut, f"test_unconsumed_types_dropped_and_caps/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    for port in (P_AGENT, P_PEER, P_SINK):
        src = sc.coord(port)
        for i, t in enumerate([FlitType.MEM_WR_ACK, FlitType.MEM_RD_RESP, FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA,
                               FlitType.MEM_RD_REQ, FlitType.CU_SIGNAL, 0x9, 0xE, FlitType.ERROR] * 4):
            sc.streams[port].append(pack_fields({"dst_x": UNIT[0], "dst_y": UNIT[1], "src_x": src[0],
                                                 "src_y": src[1], "type": t, "txn": i, "last": 1,
                                                 "payload": int(rng.integers(0, 1 << 62))}))
            if i % 6 == 5:
                sc.inst(port, gemm(1, 1, 1))
        req = ctrl_request(UNIT, src, txn=7, index=0)
        sc.streams[port].append(req)
        sc.expected[port].append(ctrl_reply(UNIT, req, caps_value(CU_TYPE, 1, N_BUFFERS, 32)))
    run = await sc.run(hostile)
    sc.finish(run)


# ---------------------------------------------------------------- OP_SEND and ADD_PEER
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_send_and_peer_add(dut, hostile: bool) -> None:
    """OP_SEND (dbuf 2): two accumulator-format granules per sub-tile, bursts of 8 granules; a peer burst
    into buf 2 adds into the tiles (ADD_PEER, acknowledged); a self-addressed OP_SEND doubles them without
    deadlock. The bench sequences each write behind the instruction before it by time (padding flits)."""
    tb = NocTB(dut, f"test_send_and_peer_add/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = _operands(rng, 3, 3, 2, lo=-64, hi=63, scale=_random_scales)
    sink, agent = sc.coord(P_SINK), sc.coord(P_AGENT)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, gemm(3, 3, 2, anchor=40))
    sc.inst(P_AGENT, drain(9, addr=32 * 6, dnode=1, dst=sink, dbuf=2))           # 18 granules, 3 bursts
    sc.pad(P_AGENT, 150)
    # peer values of moderate magnitude (exponent 70..77), both signs
    peer = np.asarray(rng.integers(0, 1 << 22, size=(9, 4, 4)), dtype=np.uint32)
    peer = (peer & np.uint32(0x203FFF)) | np.uint32(0x46 << 14) | ((peer >> np.uint32(14)) & np.uint32(7)) << np.uint32(14)
    sc.burst(P_AGENT, Buf.ACC, 0, [g for t in range(9) for g in send_granules(peer[t])], flags=1, ack=agent)
    sc.inst(P_AGENT, drain(9, dnode=1, dst=sink))                                 # GEMM + peer, as FP16
    out = sc.inst(P_AGENT, drain(4, dnode=1, dst=UNIT, dbuf=2, dflags=1, dack=agent))  # to itself
    # what the cluster sent itself is what it receives: the model applies it (and predicts the ack)
    sc.expected[0] = []
    sc._expect(sc.model.receive(out.flits))
    sc.pad(P_AGENT, 150)
    sc.inst(P_AGENT, drain(9, dnode=1, dst=sink), last=1)                        # tiles 0..3 doubled
    run = await sc.run(hostile)
    v = tb.verdict
    v.check(len(out.flits) == 8 + 1, f"self send: {len(out.flits)} flits, 8 granules + 1 descriptor expected")
    got = sc.captured(run, P_SINK)
    v.check(len(got) == 18 + 3 + 2 * (9 + 2), f"{len(got)} flits at the sink, {18 + 3 + 2 * 11} expected")
    sc.finish(run)
