"""Module bench of the cluster CU (rtl/cluster/cluster_cu.v) on the Local port of a 1x1 mesh.

Bench endpoints on the four edges play the agent (1,0), a peer (1,2), the
memory agent (0,1) (the cluster's MAG coordinate: it captures FILL requests
and memory drains, and plays read responses queued behind a FILL) and a drain
destination (2,1). Every flit the cluster sends is predicted by the event
model models.cluster.ClusterCore (tb/cluster/bench.py), bit for bit, per
destination and in order; units.md §C fixes what crosses the link. Hostile
variants idle the sources and back-pressure the sinks at random.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models import cluster
from models.cluster import ACC_TILES, CU_TYPE, L1_GRANULES, N_BUFFERS, Buf, Fault
from models.cu.base import SigCode, caps_value, ctrl_reply, ctrl_request, signal_fields
from models.noc.flit import FlitType, flit_field, pack_fields
from models.numerics.layout import unpack_fp16_subtile
from tb.cluster.bench import (
    P_AGENT, P_MAG, P_PEER, P_SINK, PAYLOAD, UNIT, Scenario, data_payloads, operands, random_scales, signals,
)
from tb.noc.bench import NocTB
from tb.cluster import timing as cluster_timing


def tb_rng(tb: NocTB) -> np.random.Generator:
    return np.random.default_rng(tb.seed)


def _exact(a, b, t: int, gn: int) -> np.ndarray:
    """Sub-tile t of the exact integer product, as FP16 patterns."""
    g, h = divmod(t, gn)
    return (a @ b)[4 * g:4 * g + 4, 4 * h:4 * h + 4].astype(np.float16).view(np.uint16)


# ---------------------------------------------------------------- protocol section 7
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_reference_gemm_drain_to_node(dut, hostile: bool) -> None:
    """Section 7 step 1 + pass A: operand bursts (gm=gn=3, nk=2, -4..3, 0xA0, anchor 40), GEMM,
    DRAIN dnode=1 to a bench endpoint: 9 granules in 2 bursts, exact integer products."""
    tb = NocTB(dut, f"test_reference_gemm_drain_to_node/hostile={hostile}")
    sc = Scenario(tb)
    a, sa, b, sb = operands(tb_rng(tb), 3, 3, 2)
    sc.operands(P_AGENT, a, sa, b, sb)
    v = tb.verdict
    v.check(len(sc.streams[P_AGENT]) == 2 * 25, "one burst of 24 granules per side (len 23)")
    sc.inst(P_AGENT, cluster.gemm(3, 3, 2, anchor=40))
    sc.inst(P_AGENT, cluster.drain(9, addr=0, dnode=1, dst=sc.coord(P_AGENT), dbuf=0, dflags=0))
    sc.inst(P_AGENT, cluster.drain(9, addr=0, dnode=1, dst=sc.coord(P_SINK), dbuf=0, dflags=1, dack=sc.coord(P_AGENT)))
    run = await sc.run(hostile)
    at_agent = sc.captured(run, P_AGENT)
    first = [f for f in at_agent if flit_field(f, "type") == FlitType.CU_DATA]
    second = sc.captured(run, P_SINK)
    done = [i for i, f in enumerate(at_agent) if flit_field(f, "type") == FlitType.CU_SIGNAL]
    last_data = max((i for i, f in enumerate(at_agent) if flit_field(f, "type") == FlitType.CU_DATA), default=-1)
    v.check(len(done) == 3 and done[1] > last_data,
            "pass A's DRAIN completion reached the agent before its last data flit (a DRAIN retires after its last "
            "flit has left the CU)")
    data, descs = data_payloads(first)
    v.check(len(data) == 9 and descs == 2, f"pass A: {len(data)} granules in {descs} descriptors, 9 in 2 expected")
    for t, g in enumerate(data):
        v.check(np.array_equal(unpack_fp16_subtile(g), _exact(a, b, t, 3)), f"sub-tile {t} is not the exact product")
    v.check(len(second) == 11 and (second[0] >> 216) & 0xFF == 1 and (second[9] >> 216) & 0xFF == 1,
            "pass B: 2 descriptors with flags bit 0 expected")
    v.check([signal_fields(at_agent[i]) for i in done] == [(SigCode.INST_COMPLETE, k) for k in (1, 2, 3)],
            "exec_result is not the running count of retired FILL/GEMM/DRAIN (units.md C.6)")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_drain_to_memory(dut, hostile: bool) -> None:
    """DRAIN dnode=0: MEM_WR_REQ bursts of <= 8 beats to addr + 32t, the same FP16 data as a node drain."""
    tb = NocTB(dut, f"test_drain_to_memory/hostile={hostile}")
    sc = Scenario(tb)
    a, sa, b, sb = operands(tb_rng(tb), 3, 3, 2)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, cluster.gemm(3, 3, 2))
    sc.inst(P_AGENT, cluster.drain(9, addr=0x8000))
    sc.inst(P_AGENT, cluster.drain(9, dnode=1, dst=sc.coord(P_SINK)))
    sc.inst(P_AGENT, cluster.drain(ACC_TILES, addr=0x12_0000_0020, dnode=0), last=1)  # a 40-bit address, 32 bursts
    run = await sc.run(hostile)
    v = tb.verdict
    mem = sc.captured(run, P_MAG)
    reqs = [f for f in mem if flit_field(f, "type") == FlitType.MEM_WR_REQ]
    beats = [f & PAYLOAD for f in mem if flit_field(f, "type") == FlitType.MEM_WR_DATA]
    v.check(len(reqs) == 2 + 32 and all((f >> 208) & 0xFF <= 7 for f in reqs), f"{len(reqs)} MEM_WR_REQ, 34 expected")
    v.check([(f & PAYLOAD) >> 216 for f in reqs[:2]] == [0x8000, 0x8000 + 8 * 32], "write addresses not addr + 32t")
    node, _ = data_payloads(sc.captured(run, P_SINK))
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
    a, sa, b, sb = operands(rng, 3, 3, 2)
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
    sc.inst(P_PEER, cluster.gemm(3, 3, 2))
    sc.inst(P_PEER, cluster.drain(9, dnode=1, dst=sink))
    run = await sc.run(hostile)
    v = tb.verdict
    acks = [r.flit for r in run.records if flit_field(r.flit, "type") == FlitType.CU_SIGNAL
            and signal_fields(r.flit)[0] == SigCode.DATA_RECEIVED]
    v.check(len(acks) == len(cases), f"{len(acks)} DATA_RECEIVED for {len(cases)} acknowledged bursts")
    v.check(sorted(signal_fields(f)[1] for f in acks) == sorted(c[0] for c in cases), "ack args are not the buf ids")
    data, _ = data_payloads(sc.captured(run, P_SINK, FlitType.CU_DATA))
    v.check(len(data) == 9 and all(np.array_equal(unpack_fp16_subtile(g), _exact(a, b, t, 3))
                                   for t, g in enumerate(data)), "a rejected burst wrapped into the operands")
    sc.finish(run)


# ---------------------------------------------------------------- emit saturation
@cocotb.test()
async def test_fp16_saturation_on_emit(dut) -> None:
    """Products past 65504 saturate to 0x7bff / 0xfbff on OP_EMIT, never infinity (units.md C.7.5)."""
    tb = NocTB(dut, "test_fp16_saturation_on_emit")
    sc = Scenario(tb)
    a, sa, b, sb = operands(tb_rng(tb), 4, 4, 1, lo=-64, hi=63)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, cluster.gemm(4, 4, 1, anchor=36))  # x16: about half the elements pass 65504
    sc.inst(P_AGENT, cluster.drain(16, dnode=1, dst=sc.coord(P_SINK)))
    run = await sc.run()
    v = tb.verdict
    vals = np.concatenate([unpack_fp16_subtile(g).reshape(-1) for g in sc.model.fp16_tiles(16)])
    v.check((vals == 0x7BFF).any() and (vals == 0xFBFF).any(), "the stimulus did not reach saturation both ways")
    got, _ = data_payloads(sc.captured(run, P_SINK))
    gv = np.concatenate([unpack_fp16_subtile(g).reshape(-1) for g in got]) if got else np.zeros(0)
    v.check(not ((gv & 0x7C00) == 0x7C00).any(), "the cluster emitted an infinity or NaN")
    sc.finish(run)


# ---------------------------------------------------------------- tile counts, emit and fuse
SHAPES = {1: (1, 1, 1), 8: (2, 4, 2), 9: (3, 3, 3), 64: (8, 8, 2)}  # gm*gn -> (gm, gn, nk)


@cocotb.test()
@cocotb.parametrize(tiles=[1, 8, 9, 64])
async def test_tile_counts_and_values(dut, tiles: int) -> None:
    """gm*gn in {1, 8, 9, 64}: full-range int7, random scales, LOAD then an acc=1 chain; node drain of
    gm*gn granules in ceil(gm*gn/8) descriptors with dflags=1, bit exact; for 9 and 64 the acc=1 GEMM
    emits (units.md C.6) and a fused DRAIN repeats its destination and sends nothing; hostile."""
    gm, gn, nk = SHAPES[tiles]
    tb = NocTB(dut, f"test_tile_counts_and_values/tiles={tiles}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = operands(rng, gm, gn, nk, lo=-64, hi=63, scale=random_scales)
    a2, sa2, b2, sb2 = operands(rng, gm, gn, 1, lo=-64, hi=63, scale=random_scales)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.operands(P_AGENT, a2, sa2, b2, sb2, a_off=4 * gm * nk, b_off=4 * gn * nk)
    sc.inst(P_AGENT, cluster.gemm(gm, gn, nk, anchor=44))
    n = gm * gn
    dest = dict(addr=32 * 3, dnode=1, dst=sc.coord(P_SINK), dflags=1, dack=sc.coord(P_AGENT))
    fused = tiles >= 9
    emitted = sc.inst(P_AGENT, cluster.gemm(gm, gn, 1, anchor=44, acc=1, aoff=gm * nk, boff=gn * nk, emit=int(fused),
                                       **(dest if fused else {})))
    sc.inst(P_AGENT, cluster.drain(n, fuse=int(fused), **dest), last=1)
    run = await sc.run(hostile=True)
    v = tb.verdict
    data, descs = data_payloads(sc.captured(run, P_SINK))
    v.check(len(data) == n, f"{len(data)} granules, {n} expected")
    v.check(descs == cluster.acks_for(n) == cluster.drain_shape(n)[1], f"{descs} descriptors, ceil({n}/8) expected")
    v.check(len(emitted) == (n + cluster.acks_for(n) + 1 if fused else 1), "the emitting GEMM's flits")
    sc.finish(run)


@cocotb.test()
async def test_emit_and_fuse(dut) -> None:
    """Emit to memory and to a node, the same flits as DRAINs; a GEMM whose last K block is a LOAD emits
    nothing, so a fused DRAIN after it faults F_FUSE (upstream waits forever); emit with dmesh faults. The
    emitting GEMM retires when its sweep starts: the FILL after it sends its request while the emitted
    sub-tiles are still on their way out."""
    tb = NocTB(dut, "test_emit_and_fuse")
    sc = Scenario(tb)
    a, sa, b, sb = operands(tb_rng(tb), 3, 3, 2, lo=-64, hi=63, scale=random_scales)
    sc.operands(P_AGENT, a, sa, b, sb)
    v = tb.verdict
    mem = sc.inst(P_AGENT, cluster.gemm(3, 3, 2, emit=1, addr=0x4000))
    fill = cluster.fill(0x9000, 1, 0, eoff=200, fbank=1)
    sc.inst(P_AGENT, fill)
    sc.pad(P_MAG, 80)  # the operands land before the responses (a held response lets instructions pass)
    sc.responses(P_MAG, cluster.granules_of(cluster.a_entries(a, sa))[:4], fill)
    node = sc.inst(P_AGENT, cluster.gemm(3, 3, 2, emit=1, dnode=1, dst=sc.coord(P_SINK), dbuf=1, dflags=1,
                                    dack=sc.coord(P_PEER)))
    sc.inst(P_AGENT, cluster.drain(18, fuse=1, dnode=1, dst=sc.coord(P_SINK)))       # claims both GEMMs' 9 + 9
    load = sc.inst(P_AGENT, cluster.gemm(2, 2, 1, emit=1, dnode=1, dst=sc.coord(P_SINK)))  # LOAD last block: nothing
    fuse = sc.inst(P_AGENT, cluster.drain(4, fuse=1, dnode=1, dst=sc.coord(P_SINK)))
    remote = sc.inst(P_AGENT, cluster.gemm(1, 1, 2, emit=1, dmesh=1, strict=False))
    sc.inst(P_AGENT, cluster.drain(4, dnode=1, dst=sc.coord(P_SINK)), last=1)
    v.check(len(mem) == 9 + 2 + 1 and len(node) == 9 + 2 + 1 and len(load) == 1, "emitted flit counts")
    v.check(signals(fuse) == [(SigCode.FAULT, Fault.FUSE)] and signals(remote) == [(SigCode.FAULT, Fault.REMOTE)],
            "the model's fused DRAIN / remote emit faults")
    run = await sc.run()
    at_mag = [(r.cycle, flit_field(r.flit, "type")) for r in run.records if r.port == P_MAG]
    req = [c for c, t in at_mag if t == FlitType.MEM_RD_REQ]
    writes = [c for c, t in at_mag if t == FlitType.MEM_WR_DATA]
    v.check(len(req) == 1 and len(writes) == 9 and req[0] < writes[0],
            "the FILL's request did not overtake the emitting GEMM's writes (the GEMM retires when its sweep starts)")
    sc.finish(run)


# ---------------------------------------------------------------- FILL
def _fill_case(rng, gm, gn, nk):
    a, sa, b, sb = operands(rng, gm, gn, nk, lo=-64, hi=63, scale=random_scales)
    return a, sa, b, sb, cluster.granules_of(cluster.a_entries(a, sa)), cluster.granules_of(cluster.b_entries(b, sb))


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_fill_flags_banks_and_wraps(dut, hostile: bool) -> None:
    """FILL A with QUANT (flags 0x50) and B with preq (0x60), into bank 1 at eoff 250: the txn tags wrap to
    entry {1, 0..}; responses entry by entry in a shuffled order, each entry's words consecutive; a FILL of
    B with QUANT (0x70) and A with preq (0x40) into bank 0; then a GEMM reading bank 1 from aoff/boff 250
    (wrapping within the bank), and GEMMs on both banks.

    The memory agent's responses are scripted into the port's stream, 40 pad flits behind each FILL, not
    sent once the request has left, so no FILL may follow a DRAIN here: under hostile backpressure its
    request would wait behind the DRAIN's flits while its scripted responses completed it, and leave after
    its FILL (seed 703692705, which the cluster's monitor rightly flags: no causal memory agent answers a
    request it has not received)."""
    tb = NocTB(dut, f"test_fill_flags_banks_and_wraps/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    gm, gn, nk = 2, 3, 2
    _, _, _, _, ga, gb = _fill_case(rng, gm, gn, nk)
    fills = [(cluster.fill(0x4000, gm * nk, 0, eoff=250, fbank=1), ga),
             (cluster.fill(0x9000, gn * nk, 1, eoff=250, fbank=1, preq=1), gb)]
    _, _, _, _, ga2, gb2 = _fill_case(rng, gm, gn, nk)
    fills += [(cluster.fill(0x1_0000, gn * nk, 1, eoff=3), gb2),
              (cluster.fill(0x2_0000, gm * nk, 0, eoff=7, preq=1), ga2)]
    for payload, words in fills:
        sc.inst(P_MAG, payload)
        sc.pad(P_MAG, 40)  # the FILL is running, and its request has left, before its first response arrives
        sc.responses(P_MAG, words, payload, order=rng.permutation(len(words) // 4))
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk, aoff=250, boff=250, abank=1, bbank=1))
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)))
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk, aoff=7, boff=3))
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)))
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk, aoff=250, boff=3, abank=1, bbank=0))  # A from bank 1, B from bank 0
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)), last=1)
    run = await sc.run(hostile)
    v = tb.verdict
    reqs = sc.captured(run, P_MAG, FlitType.MEM_RD_REQ)
    v.check([(f >> 200) & 0xFF for f in reqs] == [0x50, 0x60, 0x70, 0x40], "FILL flags {STREAM, BLAYOUT, QUANT}")
    v.check(all((f >> 158) & 0xFF == 0 and (f >> 208) & 0xFF == 3 for f in reqs), "entry_words 0 and len 3")
    data, _ = data_payloads(sc.captured(run, P_SINK))
    v.check(len(data) == 18 and len(set(data)) > 6, "three drains of 6 sub-tiles, of different operands")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_multicast_leader_and_follower(dut, hostile: bool) -> None:
    """A FILL listing peers above its own {y,x} leads: its request carries peers and n_peer. A FILL listing
    a peer below it (or itself) follows: it sends nothing and takes responses of any origin (here with
    the src of other nodes) until n entries, with its own sel and fbank. Everything comes from one port:
    a follower takes whatever response arrives, so the order between FILLs and responses matters."""
    tb = NocTB(dut, f"test_multicast_leader_and_follower/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    gm, gn, nk = 2, 2, 2
    a, sa, b, sb, ga, gb = _fill_case(rng, gm, gn, nk)
    peers = [(2, 1), (1, 2)]
    lead = cluster.fill(0x4000, gm * nk, 0, eoff=0, peers=peers)                      # 0x11 < 0x12, 0x21: leads
    follow = cluster.fill(0x9000, gn * nk, 1, eoff=40, fbank=1, peers=[(1, 2), (0, 1)])  # 0x10 < 0x11: follows
    self_listed = cluster.fill(0xA000, gn * nk, 1, eoff=60, peers=[(1, 1)])          # lists itself: follows
    v = tb.verdict
    for payload, words, src in ((lead, ga, None), (follow, gb, sc.coord(P_PEER)), (self_listed, gb, (5, 5))):
        sent = sc.inst(P_MAG, payload)
        v.check(len(sent) == (1 if payload == lead else 0), "only the leader sends a request (model)")
        sc.pad(P_MAG, 30)
        sc.responses(P_MAG, words, payload, src=src)
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk, boff=40, bbank=1))
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)))
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk, boff=60))
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)), last=1)
    run = await sc.run(hostile)
    reqs = sc.captured(run, P_MAG, FlitType.MEM_RD_REQ)
    field, npeer = cluster.peer_field(peers)
    v.check(len(reqs) == 1 and (reqs[0] >> 168) & 0xFFFFFF == field and (reqs[0] >> 166) & 3 == npeer,
            "one request, from the leader, with its peer list")
    data, _ = data_payloads(sc.captured(run, P_SINK))
    v.check(len(data) == 8 and data[:4] == data[4:], "both followers placed the same B")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_held_rd_resp(dut, hostile: bool) -> None:
    """An RD_RESP outside a FILL is held (units.md C.3): the CU_DATA behind it waits (its ack comes after
    the next FILL starts), an instruction still runs past it (the GEMM and DRAIN see L1 without it), and
    the next FILL consumes it as one of its entries."""
    tb = NocTB(dut, f"test_held_rd_resp/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    gm, gn, nk = 1, 2, 1
    a, sa, b, sb, ga, gb = _fill_case(rng, gm, gn, nk)
    a_new = cluster.granules_of(cluster.a_entries(*operands(rng, gm, gn, nk, lo=-64, hi=63, scale=random_scales)[:2]))
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.pad(P_MAG, 120)  # the agent's operands land first (a held response would block them too)
    fill = cluster.fill(0x4000, 1, 0, eoff=0)
    early = sc.responses(P_MAG, a_new, fill)                       # held: no FILL runs
    behind = sc.burst(P_MAG, Buf.L1B, 400, [int(x) for x in rng.integers(0, 1 << 60, 2)], flags=1)
    v = tb.verdict
    v.check(early == [] and behind == [] and sc.model.held, "the model holds the response and what is behind it")
    before = sc.inst(P_MAG, cluster.gemm(gm, gn, nk))                    # runs past the held response
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)))
    started = sc.inst(P_MAG, fill)                                 # consumes it; the CU_DATA follows
    sc.inst(P_MAG, cluster.gemm(gm, gn, nk))
    sc.inst(P_MAG, cluster.drain(gm * gn, dnode=1, dst=sc.coord(P_SINK)), last=1)
    v.check(signals(before) == [(SigCode.INST_COMPLETE, 1)], "the GEMM ran past the held response")
    v.check([s[0] for s in signals(started)] == [SigCode.INST_COMPLETE, SigCode.DATA_RECEIVED],
            "the FILL (n = 1) retired on the held entry, then the blocked burst was applied")
    run = await sc.run(hostile)
    data, _ = data_payloads(sc.captured(run, P_SINK))
    v.check(len(data) == 4 and data[:2] != data[2:], "the drains before and after the FILL differ")
    sc.finish(run)


# ---------------------------------------------------------------- faults, drops, CU_CTRL
@cocotb.test()
async def test_faults_retire_with_codes(dut) -> None:
    """Each faulting instruction retires FAULT with its code, sends nothing and is not counted; the unit
    carries on (the exec_result count resumes)."""
    tb = NocTB(dut, "test_faults_retire_with_codes")
    sc = Scenario(tb)
    bad = [
        (cluster.encode_inst(0), Fault.OPCODE),
        (cluster.encode_inst(9, n=3), Fault.OPCODE),
        (cluster.fill(0, 256, 0, strict=False), Fault.FILL_RANGE),
        (cluster.fill(0, 0xFFFF, 1, strict=False), Fault.FILL_RANGE),
        (cluster.gemm(17, 16, 1, strict=False), Fault.GEMM_RANGE),
        (cluster.gemm(2, 2, 2, emit=1, dmesh=2, strict=False), Fault.REMOTE),
        (cluster.drain(257, strict=False), Fault.DRAIN_RANGE),
        (cluster.drain(4, dnode=1, dst=(2, 1), dmesh=2, strict=False), Fault.REMOTE),
        (cluster.drain(4) | 0x12 << cluster.INST_FIELDS["dfin"][1], Fault.REMOTE),  # dfin: remote as dmesh
        (cluster.gemm(2, 2, 2, emit=1) | 0x01 << cluster.INST_FIELDS["dfin"][1], Fault.REMOTE),
        (cluster.drain(1, fuse=1), Fault.FUSE),
    ]
    for payload, fault in bad:
        tb.verdict.check(signals(sc.inst(P_AGENT, payload)) == [(SigCode.FAULT, fault)], f"model: {fault.name}")
    a, sa, b, sb = operands(tb_rng(tb), 1, 1, 1, lo=-64, hi=63, scale=random_scales)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, cluster.gemm(1, 1, 1))
    sc.inst(P_AGENT, cluster.drain(1, dnode=1, dst=sc.coord(P_SINK)), last=1)
    run = await sc.run()
    codes = [signal_fields(f) for f in sc.captured(run, P_AGENT, FlitType.CU_SIGNAL)]
    tb.verdict.check(codes[:len(bad)] == [(SigCode.FAULT, int(f)) for _, f in bad], f"fault codes {codes}")
    tb.verdict.check(codes[len(bad)] == (SigCode.INST_COMPLETE, 1), "the first success after faults is number 1")
    sc.finish(run)


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_unconsumed_types_dropped_and_caps(dut, hostile: bool) -> None:
    """MEM_WR_ACK, MEM_WR_REQ/DATA, MEM_RD_REQ, CU_SIGNAL and reserved types are taken and dropped, never
    held (a MEM_RD_RESP is held: test_held_rd_resp); CU_CAPS says 'MG' with 3 buffers."""
    tb = NocTB(dut, f"test_unconsumed_types_dropped_and_caps/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    for port in (P_AGENT, P_PEER, P_SINK):
        src = sc.coord(port)
        for i, t in enumerate([FlitType.MEM_WR_ACK, FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA,
                               FlitType.MEM_RD_REQ, FlitType.CU_SIGNAL, 0x9, 0xE, FlitType.ERROR] * 4):
            sc.send(port, [pack_fields({"dst_x": UNIT[0], "dst_y": UNIT[1], "src_x": src[0], "src_y": src[1],
                                        "type": t, "txn": i, "last": 1, "payload": int(rng.integers(0, 1 << 62))})])
            if i % 6 == 5 and port == P_AGENT:  # one instructing port: exec_result counts in arrival order
                sc.inst(port, cluster.gemm(1, 1, 1))
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
    into buf 2 adds into the tiles (ADD_PEER, the C.7.4 add, acknowledged); a self-addressed OP_SEND
    doubles them without deadlock. The bench sequences each write behind the instruction before it by
    time (padding flits)."""
    tb = NocTB(dut, f"test_send_and_peer_add/hostile={hostile}")
    sc = Scenario(tb)
    rng = tb_rng(tb)
    a, sa, b, sb = operands(rng, 3, 3, 2, lo=-64, hi=63, scale=random_scales)
    sink, agent = sc.coord(P_SINK), sc.coord(P_AGENT)
    sc.operands(P_AGENT, a, sa, b, sb)
    sc.inst(P_AGENT, cluster.gemm(3, 3, 2, anchor=40))
    sc.inst(P_AGENT, cluster.drain(9, addr=32 * 6, dnode=1, dst=sink, dbuf=2))           # 18 granules, 3 bursts
    sc.pad(P_AGENT, 150)
    # peer values of moderate magnitude (exponent 70..77), both signs
    peer = np.asarray(rng.integers(0, 1 << 22, size=(9, 4, 4)), dtype=np.uint32)
    peer = (peer & np.uint32(0x203FFF)) | np.uint32(0x46 << 14) | ((peer >> np.uint32(14)) & np.uint32(7)) << np.uint32(14)
    sc.burst(P_AGENT, Buf.ACC, 0, [g for t in range(9) for g in cluster.send_granules(peer[t])], flags=1, ack=agent)
    sc.inst(P_AGENT, cluster.drain(9, dnode=1, dst=sink))                                 # GEMM + peer, as FP16
    out = sc.inst(P_AGENT, cluster.drain(4, dnode=1, dst=UNIT, dbuf=2, dflags=1, dack=agent))  # to itself
    sc.pad(P_AGENT, 150)
    sc.inst(P_AGENT, cluster.drain(9, dnode=1, dst=sink), last=1)                        # tiles 0..3 doubled
    run = await sc.run(hostile)
    v = tb.verdict
    v.check(sum(e.dst == UNIT for e in out) == 8 + 1, "self send: 8 granules + 1 descriptor expected")
    got = sc.captured(run, P_SINK)
    v.check(len(got) == 18 + 3 + 2 * (9 + 2), f"{len(got)} flits at the sink, {18 + 3 + 2 * 11} expected")
    sc.finish(run)


# ---------------------------------------------------------------- upstream's cycles (tb/cluster/timing.py)
@cocotb.test()
async def test_timing_matmul_round(dut) -> None:
    """matmul_m32k64n32's cluster round: GEMM 6 cycles after the FILL, DRAIN 32 156 after the GEMM."""
    await cluster_timing.matmul_round(dut)


@cocotb.test()
async def test_timing_drains(dut) -> None:
    """DRAINs of 32, 8, 16, 32 sub-tiles: 22 + 10 n/8 cycles from their start."""
    await cluster_timing.drains(dut)


@cocotb.test()
async def test_timing_sweep_waits(dut) -> None:
    """Back-to-back GEMMs wait for the sweep (wide) or the array (small); pacing; DRAIN waits for the array."""
    await cluster_timing.sweep_waits(dut)
