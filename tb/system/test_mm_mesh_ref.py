"""The reference peer-drain bench (protocol section 7) on the mm_mesh machine.

The bench plays the agent on router (1,1)'s Local port, exactly as the
reference does: it sends CU_INST flits with src (1,1), txn 0x40, last 0. A
cluster at (2,1) computes one 12x12 tile (gm = gn = 3, nk = 2, int7 operands
in -4..3, scales 0xA0, anchor 40) twice from the same L1; pass A drains it to
the agent, which records each data flit as gold[off]; pass B drains it into
the vector core at (1,0), which acknowledges to the agent. The vector core
then writes its L1 back to DRAM, and an epilogue doubles every lane. Equality
needs no float model, so any difference is the transport.

The 163 reference checks, counted apart from the bench's own extra checks:
pass A 3, pass B 4, vector drain 1 + 9, epilogue 1 + 1 + 144.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models import cluster as cl
from models import vector_core as vc
from models.cu_base import SigCode, cu_data_fields, cu_inst, signal_fields
from models.flit import FlitType, flit_field
from models.machines import MM_MESH
from tb.lib.dram import DramBackdoor
from tb.lib.noc_tb import NocTB

AGENT, CLUSTER, VECTOR = (1, 1), MM_MESH.clusters[0], MM_MESH.vector_cores[0]
TXN = 0x40
GM = GN = 3
NK = 2
N_SUB = GM * GN
VDRAIN_ADDR, EPILOGUE_ADDR = 0x8000, 0x8800
REFERENCE_CHECKS = 163


class Reference:
    """Counts the reference bench's 163 checks apart from everything else."""

    def __init__(self, tb: NocTB) -> None:
        self.tb = tb
        self.made = 0
        self.failed = 0

    def check(self, ok: bool, what: str) -> None:
        self.made += 1
        self.failed += not ok
        self.tb.verdict.check(ok, f"reference: {what}")


def _inst(payload: int) -> int:
    return cu_inst(CLUSTER, AGENT, TXN, 0, payload)


def _by(records, ftype: int, src=None) -> list[int]:
    return [r.flit for r in records if flit_field(r.flit, "type") == ftype
            and (src is None or (flit_field(r.flit, "src_x"), flit_field(r.flit, "src_y")) == src)]


@cocotb.test()
async def test_reference_peer_drain(dut) -> None:
    """Protocol section 7 end to end on mm_mesh: 163 reference checks, all passing."""
    tb = NocTB(dut, "test_reference_peer_drain")
    ref = Reference(tb)
    v = tb.verdict
    port = tb.geometry.port_index(AGENT)
    rng = np.random.default_rng(tb.seed)

    # ---- 1. operands: one CU_DATA burst per side, off 0, len 23, flags 0
    a = rng.integers(-4, 4, size=(4 * GM, 32 * NK))
    b = rng.integers(-4, 4, size=(32 * NK, 4 * GN))
    a_gran = cl.granules_of(cl.a_entries(a, np.full((4 * GM, NK), 0xA0)))
    b_gran = cl.granules_of(cl.b_entries(b, np.full((NK, 4 * GN), 0xA0)))
    phase1 = (cl.cu_data_bursts(CLUSTER, AGENT, 0, 0, a_gran) + cl.cu_data_bursts(CLUSTER, AGENT, 1, 0, b_gran))
    assert len(phase1) == 2 * 25, f"bench set-up: operand bursts are {len(phase1)} flits, not 2 x (1 + 24)"
    # ---- 2. pass A: GEMM, DRAIN to the agent; 3. pass B: GEMM, DRAIN to the vector core
    gemm = cl.gemm(GM, GN, NK, anchor=40)
    phase1 += [_inst(gemm), _inst(cl.drain(N_SUB, dnode=1, dst=AGENT, dbuf=0, dflags=0)),
               _inst(gemm), _inst(cl.drain(N_SUB, dnode=1, dst=VECTOR, dbuf=0, dflags=1, dack=AGENT))]
    acks = cl.acks_for(N_SUB)
    expect1 = N_SUB + acks + 4 + acks  # data + descriptors, 4 completions, the vector core's acks
    run1 = await tb.run_streams({port: phase1}, expect_total=expect1)
    v.check(run1.outcome.ended == "done", f"cluster stage ended by {run1.outcome.ended}")

    cu = _by(run1.records, FlitType.CU_DATA, CLUSTER)
    n_desc, data, gold = _frame(cu)
    ref.check(len(data) > 0, "pass A: data arrived")
    ref.check(len(data) == N_SUB, f"pass A: {len(data)} granules, expected {N_SUB}")
    ref.check(n_desc == acks, f"pass A: {n_desc} descriptors, expected {acks}")
    # Beyond the reference: the flits are the cluster model's, bit for bit, and
    # every lane is the exact integer product (|dot| <= 1024 is exact in FP16).
    model = cl.ClusterModel(CLUSTER)
    model.receive(phase1[:50])
    model.execute(phase1[50])
    v.check(model.execute(phase1[51]).flits == cu, "pass A: the drained flits differ from the cluster model")
    exact = np.asarray(a, np.int64) @ np.asarray(b, np.int64)
    for t in range(N_SUB):
        g, h = divmod(t, GN)
        lanes = vc.word_to_u16(gold.get(t, 0)).view(np.float16).astype(np.float64).reshape(4, 4)
        v.check(np.array_equal(lanes, exact[4 * g:4 * g + 4, 4 * h:4 * h + 4]),
                f"pass A: sub-tile {t} is not the exact integer product")

    sig = _by(run1.records, FlitType.CU_SIGNAL, VECTOR)
    ack_flits = [f for f in sig if signal_fields(f)[0] == SigCode.DATA_RECEIVED]
    ref.check(len(ack_flits) > 0, "pass B: acks arrived")
    ref.check(len(ack_flits) == acks, f"pass B: {len(ack_flits)} acks, expected {acks}")
    ref.check(all(signal_fields(f)[1] == 0 for f in ack_flits), "pass B: ack arg is not buf_id 0")
    ref.check(int(dut.u_dut.u_vector_1_0.cud_fault_r.value) == 0 and
              not any(signal_fields(f)[0] == SigCode.FAULT for f in sig), "pass B: the vector core faulted")
    done = [f for f in _by(run1.records, FlitType.CU_SIGNAL, CLUSTER)]
    v.check([signal_fields(f)[0] for f in done] == [SigCode.INST_COMPLETE] * 4,
            f"cluster completions: {[hex(signal_fields(f)[0]) for f in done]}")

    # ---- 4. vector drain: VDRAIN A0 then VHALT; A0 = 0x8000, dim {32, 9}
    dram = DramBackdoor(dut.u_dut.dram, tb.clock.clk)
    words = vc.assemble(["VDRAIN A0", "VHALT"])
    prog = vc.program_flits(VECTOR, AGENT, words, {0: vc.Descriptor(VDRAIN_ADDR, ((32, N_SUB),))}, txn=TXN)
    run2 = await tb.run_streams({port: prog}, expect_total=len(prog), reset=False)
    run_done = _by(run2.records, FlitType.CU_SIGNAL, VECTOR)
    ref.check(len(run_done) == len(prog) and signal_fields(run_done[-1])[0] != SigCode.FAULT,
              "vector drain: the RUN did not retire cleanly")
    await tb.bank.settle(500)
    drained = await dram.read_words(VDRAIN_ADDR // 32, N_SUB)
    for t in range(N_SUB):
        ref.check(drained[t] == gold.get(t), f"vector drain: DRAM word {t} differs from gold")

    # ---- 5. epilogue: v1 = v0 + v0 on each word, then VDRAIN A3 from L1 word 64
    lines = ["VSETI 16", "VSETVL", "VSETMODE FLAT"]
    for t in range(N_SUB):
        lines += [f"VLD v0, A1+{t}", "VADD v1, v0, v0", f"VST v1, A2+{t}"]
    lines += ["VDRAIN A3+64", "VHALT"]
    descs = {1: vc.Descriptor(0, ((1, 1),)), 2: vc.Descriptor(64, ((1, 1),)),
             3: vc.Descriptor(EPILOGUE_ADDR, ((32, N_SUB),))}
    prog = vc.program_flits(VECTOR, AGENT, vc.assemble(lines), descs, txn=TXN)
    run3 = await tb.run_streams({port: prog}, expect_total=len(prog), reset=False)
    run_done = _by(run3.records, FlitType.CU_SIGNAL, VECTOR)
    ref.check(len(run_done) == len(prog), "epilogue: the RUN did not retire")
    ref.check(bool(run_done) and signal_fields(run_done[-1])[0] != SigCode.FAULT, "epilogue: the RUN faulted")
    await tb.bank.settle(500)
    doubled = await dram.read_words(EPILOGUE_ADDR // 32, N_SUB)
    for t in range(N_SUB):
        g, d = vc.word_to_u16(gold.get(t, 0)), vc.word_to_u16(doubled[t])
        for lane in range(16):
            ref.check(int(d[lane]) == _doubled(int(g[lane])), f"epilogue: word {t} lane {lane} is "
                      f"{int(d[lane]):#06x}, gold {int(g[lane]):#06x} doubled is {_doubled(int(g[lane])):#06x}")

    art = tb.artifacts
    art.add("a", np.asarray(a, np.int8))
    art.add("b", np.asarray(b, np.int8))
    art.words("exp_vdrain", [gold.get(t, 0) for t in range(N_SUB)])
    art.words("obs_vdrain", drained)
    art.add("exp_epilogue", np.vectorize(_doubled, otypes=[np.uint16])(
        art.arrays["exp_vdrain"].astype(np.int64)).astype(np.uint16))
    art.words("obs_epilogue", doubled)
    art.count("granules", N_SUB, len(data))
    art.count("descriptors", acks, n_desc)
    art.count("acks", acks, len(ack_flits))
    art.count("reference_checks", REFERENCE_CHECKS, ref.made)
    v.check(ref.made == REFERENCE_CHECKS, f"made {ref.made} reference checks, the reference has {REFERENCE_CHECKS}")
    v.check(run1.mon_err == run2.mon_err == run3.mon_err == 0, "an RTL monitor raised mon_err")
    tb.log.info("REPORT reference checks: %d made, %d failed (the reference bench has %d)", ref.made, ref.failed,
                REFERENCE_CHECKS)
    tb.finish()


def _doubled(h: int) -> int:
    """FP16 doubled by exponent + 1 (zero stays zero; the reference tile has no overflow)."""
    return h if h & 0x7FFF == 0 else h + (1 << 10)


def _frame(stream: list[int]) -> tuple[int, list[int], dict[int, int]]:
    """Frame a CU_DATA stream by count: (descriptors, data flits, gold[off] as the agent records it)."""
    data: list[int] = []
    gold: dict[int, int] = {}
    left, off, n_desc = 0, 0, 0
    for f in stream:
        if left == 0:  # a descriptor
            n_desc += 1
            _, off, left, _, _ = cu_data_fields(f)
            continue
        data.append(f & ((1 << 256) - 1))
        gold[off] = f & ((1 << 256) - 1)
        off += 1
        left -= 1
    return n_desc, data, gold


@cocotb.test()
@cocotb.parametrize(shape=["3x3x2", "2x4x1", "4x4x1"])
async def test_node_drain_equals_memory_drain(dut, shape: str) -> None:
    """One tile drained to memory and to the vector core's L1 (then VDRAINed): byte-identical images."""
    gm, gn, nk = (int(x) for x in shape.split("x"))
    n = gm * gn
    tb = NocTB(dut, f"test_node_drain_equals_memory_drain/shape={shape}")
    v = tb.verdict
    port = tb.geometry.port_index(AGENT)
    rng = np.random.default_rng(tb.seed)
    a = rng.integers(-64, 64, size=(4 * gm, 32 * nk))
    b = rng.integers(-64, 64, size=(32 * nk, 4 * gn))
    sa = rng.choice([0x98, 0xA0, 0xA3], size=(4 * gm, nk))
    sb = rng.choice([0x9C, 0xA0, 0xA5], size=(nk, 4 * gn))
    flits = (cl.cu_data_bursts(CLUSTER, AGENT, 0, 0, cl.granules_of(cl.a_entries(a, sa)))
             + cl.cu_data_bursts(CLUSTER, AGENT, 1, 0, cl.granules_of(cl.b_entries(b, sb))))
    n_operand = len(flits)
    mem_addr, node_word, back_addr = 0x4000, 0, 0x6000
    flits += [_inst(cl.gemm(gm, gn, nk, anchor=40)),
              _inst(cl.drain(n, addr=mem_addr, dnode=0)),
              _inst(cl.drain(n, addr=node_word * 32, dnode=1, dst=VECTOR, dbuf=0, dflags=1, dack=AGENT))]
    acks = cl.acks_for(n)
    run1 = await tb.run_streams({port: flits}, expect_total=3 + acks)
    got_acks = [f for f in _by(run1.records, FlitType.CU_SIGNAL, VECTOR)
                if signal_fields(f) == (SigCode.DATA_RECEIVED, 0)]
    v.check(len(got_acks) == acks, f"{len(got_acks)} acks from the vector core, expected ceil({n}/8) = {acks}")

    prog = vc.program_flits(VECTOR, AGENT, vc.assemble([f"VDRAIN A0+{node_word}", "VHALT"]),
                            {0: vc.Descriptor(back_addr, ((32, n),))}, txn=TXN)
    run2 = await tb.run_streams({port: prog}, expect_total=len(prog), reset=False)
    done = _by(run2.records, FlitType.CU_SIGNAL, VECTOR)
    v.check(len(done) == len(prog) and signal_fields(done[-1])[0] != SigCode.FAULT, "the VDRAIN RUN faulted")
    await tb.bank.settle(500)
    dram = DramBackdoor(dut.u_dut.dram, tb.clock.clk)
    via_memory = await dram.read_bytes(mem_addr, 32 * n)
    via_node = await dram.read_bytes(back_addr, 32 * n)
    v.check(bytes(via_memory) == bytes(via_node), "the L1 image (drained back) differs from the memory drain")
    model = cl.ClusterModel(CLUSTER)
    model.receive(flits[:n_operand])
    model.execute(flits[n_operand])
    want = b"".join(g.to_bytes(32, "little") for g in model.fp16_tiles(n))
    v.check(bytes(via_memory) == want, "the memory drain differs from the cluster model")
    v.check(run1.mon_err == run2.mon_err == 0, "an RTL monitor raised mon_err")
    tb.artifacts.add("a", np.asarray(a, np.int8))
    tb.artifacts.add("b", np.asarray(b, np.int8))
    tb.artifacts.add("exp_image", np.frombuffer(bytes(via_memory), np.uint8))
    tb.artifacts.add("obs_image", np.frombuffer(bytes(via_node), np.uint8))
    tb.artifacts.count("acks", acks, len(got_acks))
    tb.finish()
