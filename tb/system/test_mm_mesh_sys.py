"""System bench on mm_mesh_sys: the host drives a whole machine through the orchestrator.

Machine (models/machine/layouts.py MM_MESH_SYS): MAG + DRAM at (0,1), vector core at
(1,0), cluster at (2,1), orchestrator at (1,1) with its AXI4-Lite host port on
the harness. Nothing on the mesh is played by the bench: every flit a unit
receives was staged and dispatched by the host (tb.system.host_sequence), every
result is read back from DRAM in bulk, and every expected value comes from the
Python models (models.cluster, models.vector, models.machine.planner).

Tests (each: seed printed, one verdict, `artifacts.npz` in the build folder,
schema in tb/lib/artifacts.py):

* test_granules_and_acks/tiles=P, P = gm*gn in {1, 8, 9, 64, 160} (scenario 3):
  operands FILLed from DRAM L1 images, GEMM, node drain into the vector core
  with dflags=1, dack = the orchestrator; exactly P granules land (a sentinel
  after them is untouched), ceil(P/8) acks with arg = buf_id 0 credited to the
  vector core's own NODE_STATUS slot, Await equality, bit exact against models.
* test_fault_cudata_buf (7a), test_fault_dack_zero (7b), test_fault_walk_len
  (7c), test_fault_l1_range (7d): each fault ends as a named failure the test
  asserts on (SequenceAwaitError / UnitFaultError / PlanRefused), never a hang.
* test_fp16_saturation (7e): 0xf8bb doubled is 0xfbff, through VFILL, VLD,
  VADD, VST, VDRAIN.
* test_reference_epilogue: the protocol section 7 sequence once more, but
  through the orchestrator and the host (seed section 4): cluster stage with
  dflags=1 and dack=(1,1), Await ceil(9/8)=2 acks on (1,0), vector stage;
  DRAM bit exact against the models.
"""

from __future__ import annotations

import dataclasses

import cocotb
import numpy as np

from models import cluster
from models.machine import reference_bench
from models.vector import Descriptor, F_CUDATA, F_LEN, assemble, compare_fp16_words, u16_to_word
from models.cu.base import SigCode, cu_data_bursts
from models.machine.layouts import MM_MESH_SYS
from models.cluster.archive import recheck_tile
from models.machine.planner import Acc, PlanRefused, expected_acks, plan_fused
from models.vector.archive import doubled_lanes, recheck_doubled
from tb.lib.artifacts import words_to_lanes
from tb.system.host_sequence import SequenceAwaitError, UnitFaultError
from tb.system.bench import SystemTB
from tb.system.mm_mesh_case import (A_BASE, B_BASE, CL, FAULT_TIMEOUT, MAG, ORCH, OUT2_BASE, OUT_BASE, REF_DRAIN,
                                    REF_EPILOGUE, SAT_IN, SAT_OUT, SHAPES, TXN, VC, WORD_MASK, VecModel,
                                    check_words, cluster_after_gemm, describe, frame, inst, make_operands,
                                    node_status_rows, operand_bursts, poison, sentinel_words)


# ==================================================================== scenario 3
@cocotb.test()
@cocotb.parametrize(tiles=[1, 8, 9, 64, 160])
async def test_granules_and_acks(dut, tiles: int) -> None:
    """gm*gn granules FILL -> GEMM -> node drain into the vector core; ceil(gm*gn/8) acks (arg 0) on the
    receiving core's NODE_STATUS slot; Await equality; VDRAIN read-back bit exact, sentinel after it intact."""
    tb = SystemTB(dut, f"test_granules_and_acks/tiles={tiles}")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        gm, gn, nk = SHAPES[tiles]
        rng = tb.np_rng
        ops = make_operands(rng, gm, gn, nk, lo=-64, hi=63, random_scales=True, anchor=42)
        n_acks = cluster.acks_for(tiles)
        peer_word = int(rng.integers(0, 512 - (tiles + 8) + 1))
        # The planner and the cluster model agree on the acks the host must await.
        plan = plan_fused(4 * gm, 4 * gn, 32 * nk, gm, gn, nk, Acc(), MM_MESH_SYS)
        v.check(dict(expected_acks(plan)) == {VC: n_acks}, f"planner awaits {dict(expected_acks(plan))}, "
                                                           f"ceil({tiles}/8) = {n_acks} on {VC} expected")
        # (1) DRAM in bulk: the L1 entry images of both operands.
        await seq.load_words(A_BASE >> 5, ops.a_granules())
        await seq.load_words(B_BASE >> 5, ops.b_granules())
        # A sentinel in the core's L1 from the host (one burst, acknowledged to the orchestrator): the drain
        # must overwrite exactly `tiles` words of it.
        sentinel = sentinel_words(rng, tiles + 8)
        await seq.send_data(VC, cu_data_bursts(VC, ORCH, 0, peer_word, sentinel, flags=1, ack=ORCH), acks=1,
                            what="sentinel into L1")
        await seq.host.clear_sig_done()
        # (2) cluster stage, (3) Await the acks, then the vector stage.
        # preq: the DRAM holds the operands already as MXFP7 entries, so the FILLs ask for no QUANT (units.md C.2)
        program = [cluster.fill(A_BASE, gm * nk, 0, preq=1), cluster.fill(B_BASE, gn * nk, 1, preq=1),
                   cluster.gemm(gm, gn, nk, anchor=ops.anchor),
                   cluster.drain(tiles, addr=32 * peer_word, dnode=1, dst=VC, dbuf=0, dflags=1, dack=ORCH)]
        (instance,) = plan.instances
        v.check((instance.cluster, instance.vector_core) == (CL, VC), f"planner paired {instance}")
        await poison(seq, OUT_BASE, tiles + 8)
        base_cl = (await seq.baseline([CL]))[CL]
        cres = (await seq.run_cluster_stage({instance: program}))[instance]  # receivers: the instance's core
        v.check(cres.instructions == 4 and cres.status.code == SigCode.BATCH_COMPLETE and cres.status.arg == TXN,
                f"cluster stage: {cres.instructions} instructions, final status {describe(cres.status)}")
        base = seq.round.baselines[VC]
        st = (await seq.await_acks({VC: n_acks}))[VC]
        v.check(st.code == SigCode.DATA_RECEIVED and st.arg == 0,
                f"NODE_STATUS{VC} after the acks: {describe(st)}, expected DATA_RECEIVED arg 0 (buf_id)")
        v.check((st.count - base) % 65536 == n_acks, f"ack count delta {(st.count - base) % 65536}, expected {n_acks}")
        await seq.idle(300)  # equality must hold after a quiet period too (no surplus ack)
        later = await seq.node_status(VC)
        v.check(later.count == st.count, f"NODE_STATUS{VC} moved from {st.count} to {later.count} after the acks")
        cl_st = await seq.node_status(CL)
        v.check(cl_st.code == SigCode.BATCH_COMPLETE, f"NODE_STATUS{CL}: {describe(cl_st)} (acks must not land here)")

        words = assemble([f"VDRAIN A0, {peer_word}", "VHALT"])
        descs = {0: Descriptor(OUT_BASE, ((32, tiles + 8),))}
        vres = (await seq.run_vector_stage({VC: (words, descs)}))[VC]
        v.check(vres.status.code == SigCode.BATCH_COMPLETE, f"vector stage: {describe(vres.status)}")
        got = await seq.read_words(OUT_BASE >> 5, tiles + 8)

        # Models: cluster (FILL, GEMM, drain flits) -> vector core (L1, acks, VDRAIN).
        cm = cluster.ClusterModel(CL, MAG)
        fills = [inst(CL, program[0]), inst(CL, program[1])]
        for f, g in zip(fills, (ops.a_granules(), ops.b_granules())):
            cm.execute(f)
            cm.fill_responses(g, f & WORD_MASK)
        cm.execute(inst(CL, program[2]))
        drained = cm.execute(inst(CL, program[3], last=1)).flits
        vm = VecModel()
        vm.feed(cu_data_bursts(VC, ORCH, 0, peer_word, sentinel, flags=1, ack=ORCH))
        vm.acks.clear()
        vm.feed(drained)
        vm.program(words, descs)
        want = vm.read(OUT_BASE >> 5, tiles + 8)
        tile_words = cm.fp16_tiles(tiles)
        v.check(want[:tiles] == tile_words, "models disagree: the vector core model's L1 is not the cluster's tile")
        v.check(vm.acks == {ORCH: n_acks}, f"vector core model acks {vm.acks}, expected {n_acks} to {ORCH}")
        matched = check_words(v, "delivered tile", got[:tiles], tile_words)
        check_words(v, "sentinel after the tile", got[tiles:], sentinel[tiles:])
        landed = sum(g != s for g, s in zip(got, sentinel))
        v.check(landed == tiles, f"{landed} granules landed in L1, {tiles} expected")
        n_desc, n_data = frame(drained)
        v.check((n_desc, n_data) == (n_acks, tiles), f"model drain: {n_desc} descriptors, {n_data} granules; "
                                                     f"{n_acks}, {tiles} expected")
        cl_end = await seq.node_status(CL)
        v.check((cl_end.count - base_cl) % 65536 == 4, f"NODE_STATUS{CL} moved by {(cl_end.count - base_cl) % 65536}"
                                                      f", its 4 completions expected (no ack is credited there)")
        sig = await seq.host.sig_done()
        want_sig = 4 + n_acks + vres.instructions
        v.check(sig == want_sig, f"SIG_DONE {sig}, expected {want_sig} (4 completions + {n_acks} acks + "
                                 f"{vres.instructions} vector completions)")

        ops.record(art, peer_word)
        art.words("obs_tile", got[:tiles])
        art.recheck_with(recheck_tile)
        art.words("exp_tile", tile_words)
        art.words("obs_after", got[tiles:])
        art.words("exp_after", sentinel[tiles:])
        art.count("granules", tiles, landed)
        art.count("acks", n_acks, (st.count - base) % 65536)
        art.count("tile_words_matched", tiles, matched)
        art.count("sig_done", want_sig, sig)
        art.add("node_status", await node_status_rows(seq, [VC, CL]))

    await tb.guard(body, max_cycles=200_000)


# ==================================================================== scenario 7
@cocotb.test()
async def test_fault_cudata_buf(dut) -> None:
    """(7a) A drain into the vector core with buf 1: both bursts rejected, no ack; the host's Await times out
    naming (1,0) and the 2 missing acks; the next RUN faults F_CUDATA; L1 untouched; the RUN after is clean."""
    tb = SystemTB(dut, "test_fault_cudata_buf")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        ops = make_operands(tb.np_rng, 3, 3, 1)
        sentinel = sentinel_words(tb.np_rng, 9)
        await seq.send_data(VC, cu_data_bursts(VC, ORCH, 0, 0, sentinel, flags=1, ack=ORCH), acks=1)
        drain = cluster.drain(9, dnode=1, dst=VC, dbuf=1, dflags=1, dack=ORCH)
        await seq.run_cluster_stage({CL: operand_bursts(ops) + [cluster.gemm(3, 3, 1), drain]}, receivers=[VC])
        base = seq.round.baselines[VC]
        err = None
        try:
            await seq.await_acks({VC: 2}, timeout_cycles=FAULT_TIMEOUT)
        except SequenceAwaitError as exc:
            err = exc
        v.check(err is not None, "Await of 2 acks on (1,0) returned: a rejected burst was acknowledged")
        if err is not None:
            msg = str(err)
            tb.log.info("named failure, as expected: %s", msg)
            v.check(err.coord == VC and err.missing == 2 and err.seen == base,
                    f"AwaitError names {err.coord}, missing {err.missing}, seen {err.seen}; expected {VC}, 2, {base}")
            for part in ("(1,0)", f"expected count {(base + 2) % 65536}", f"seen {base}", "2 signal(s) missing",
                         "timeout"):
                v.check(part in msg, f"the Await failure does not say '{part}': {msg}")
            art.add("error_await", msg)
        fault = None
        try:
            await seq.run_vector_stage({VC: (assemble(["VHALT"]), {})})
        except UnitFaultError as exc:
            fault = exc
        v.check(fault is not None and fault.code == F_CUDATA and "F_CUDATA" in str(fault) and "(1,0)" in str(fault),
                f"the next RUN should fault F_CUDATA on (1,0): {fault}")
        st = await seq.node_status(VC)
        v.check(st.code == SigCode.FAULT and st.arg == F_CUDATA, f"NODE_STATUS{VC}: {describe(st)}, expected "
                                                                  f"FAULT arg {F_CUDATA}")
        # The RUN reported and cleared the fault: the next program runs, and L1 still holds the sentinel.
        words = assemble(["VDRAIN A0, 0", "VHALT"])
        descs = {0: Descriptor(OUT_BASE, ((32, 9),))}
        await poison(seq, OUT_BASE, 9)
        res = (await seq.run_vector_stage({VC: (words, descs)}))[VC]
        v.check(res.status.code == SigCode.BATCH_COMPLETE, f"the RUN after the fault: {describe(res.status)}")
        got = await seq.read_words(OUT_BASE >> 5, 9)
        check_words(v, "L1 after rejected bursts", got, sentinel)
        # The models say the same.
        vm = VecModel()
        vm.feed(cu_data_bursts(VC, ORCH, 0, 0, sentinel, flags=1, ack=ORCH))
        vm.acks.clear()
        vm.feed(cluster_after_gemm(ops).execute(inst(CL, drain)).flits)
        v.check(vm.acks == {} and vm.core.cud_pending, f"model: acks {vm.acks}, pending F_CUDATA {vm.core.cud_pending}")
        v.check(vm.program(assemble(["VHALT"]), {}) == (SigCode.FAULT, F_CUDATA), "model: RUN did not fault")
        ops.record(art, 0)
        art.add("n_acks_awaited", 2, np.int64)  # what a host that ignores the fault waits for
        art.count("acks", sum(vm.acks.values()), (err.seen - base) % 65536 if err else -1)  # the model's count
        art.add("fault_run", fault.code if fault else 0, np.int64)
        art.words("obs_l1", got)
        art.words("exp_l1", sentinel)
        art.add("node_status", await node_status_rows(seq, [VC, CL]))

    await tb.guard(body, max_cycles=100_000)


@cocotb.test()
async def test_fault_dack_zero(dut) -> None:
    """(7b) dack = 0: the planner refuses a machine without an agent, naming both fixes; a hand-built drain
    with dack = 0 lands its data but the acks go to the cluster, which drops them: the receiving core's
    NODE_STATUS count never moves and the host's Await fails naming (1,0)."""
    tb = SystemTB(dut, "test_fault_dack_zero")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        no_agent = dataclasses.replace(MM_MESH_SYS, name="mm_mesh_sys_no_agent", agent=None)
        refusal = None
        try:
            plan_fused(12, 12, 64, 3, 3, 2, Acc(), no_agent)
        except PlanRefused as exc:
            refusal = str(exc)
        # the planner's refusal is a fact of the framework, not of the device (tests/unit/machine/test_programs.py)
        v.setup(refusal is not None, "plan_fused accepted a machine without an agent")
        for part in ("no agent coordinate", "use a machine with an agent"):
            v.setup(refusal is not None and part in refusal, f"the refusal does not name '{part}': {refusal}")
        art.add("error_plan", refusal or "")

        ops = make_operands(tb.np_rng, 3, 3, 2)
        drain = cluster.drain(9, dnode=1, dst=VC, dbuf=0, dflags=1, dack=(0, 0))
        base_cl = (await seq.baseline([CL]))[CL]
        cres = (await seq.run_cluster_stage({CL: operand_bursts(ops) + [cluster.gemm(3, 3, 2), drain]},
                                            receivers=[VC]))[CL]
        base = seq.round.baselines[VC]
        err = None
        try:
            await seq.await_acks({VC: 2}, timeout_cycles=FAULT_TIMEOUT)
        except SequenceAwaitError as exc:
            err = exc
        v.check(err is not None and err.seen == base and err.missing == 2,
                f"Await on (1,0) should time out with the count unmoved at {base}: {err}")
        if err is not None:
            v.check("(1,0)" in str(err) and "2 signal(s) missing" in str(err), f"Await failure text: {err}")
            art.add("error_await", str(err))
        st = await seq.node_status(VC)
        v.check(st.count == base, f"NODE_STATUS{VC} count moved from {base} to {st.count} with dack = 0")
        cst = await seq.node_status(CL)
        v.check((cst.count - base_cl) % 65536 == cres.instructions == 2,
                f"NODE_STATUS{CL} moved by {(cst.count - base_cl) % 65536}, its 2 completions expected (the acks "
                f"addressed to the cluster are dropped there, never forwarded)")
        # The data itself landed: the vector core drains the tile the models predict.
        words = assemble(["VDRAIN A0, 0", "VHALT"])
        descs = {0: Descriptor(OUT_BASE, ((32, 9),))}
        await poison(seq, OUT_BASE, 9)
        await seq.run_vector_stage({VC: (words, descs)})
        got = await seq.read_words(OUT_BASE >> 5, 9)
        cm = cluster_after_gemm(ops)
        drained = cm.execute(inst(CL, drain)).flits
        vm = VecModel()
        vm.feed(drained)
        v.check(vm.acks == {CL: 2}, f"model: acks went to {vm.acks}, expected 2 to the cluster {CL}")
        check_words(v, "tile delivered with dack = 0", got, cm.fp16_tiles(9))
        ops.record(art, 0)
        art.words("obs_tile", got)
        art.recheck_with(recheck_tile)
        art.words("exp_tile", cm.fp16_tiles(9))
        art.count("acks_on_receiver", 0, (st.count - base) % 65536)
        art.count("cluster_signals", 2, (cst.count - base_cl) % 65536)
        art.add("node_status", await node_status_rows(seq, [VC, CL]))

    await tb.guard(body, max_cycles=100_000)


@cocotb.test()
async def test_fault_walk_len(dut) -> None:
    """(7c) A VDRAIN walk of 257 entries and a VFILL walk of 16 x 17 = 272 both fault F_LEN (FAULT arg 5 in
    NODE_STATUS) before a flit leaves; a 256-entry VDRAIN (the limit) runs clean and moves all 256 words."""
    tb = SystemTB(dut, "test_fault_walk_len")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        rng = tb.np_rng
        guard_words = sentinel_words(rng, 8)
        await seq.load_words(OUT_BASE >> 5, guard_words)
        l1 = sentinel_words(rng, 256)
        await seq.send_data(VC, cu_data_bursts(VC, ORCH, 0, 0, l1, flags=1, ack=ORCH, max_len=128), acks=2)
        vm = VecModel({(OUT_BASE >> 5) + i: w for i, w in enumerate(guard_words)})
        vm.feed(cu_data_bursts(VC, ORCH, 0, 0, l1, flags=1, ack=ORCH, max_len=128))
        cases = [
            ("VDRAIN of 257 entries", ["VDRAIN A0, 0", "VHALT"], {0: Descriptor(OUT_BASE, ((32, 257),))}),
            ("VFILL of 16 x 17 entries", ["VFILL A1, 0", "VBAR", "VHALT"],
             {1: Descriptor(OUT_BASE, ((32, 16), (512, 17)))}),
        ]
        for k, (what, lines, descs) in enumerate(cases):
            words = assemble(lines)
            fault = None
            try:
                await seq.run_vector_stage({VC: (words, descs)})
            except UnitFaultError as exc:
                fault = exc
            v.check(fault is not None and fault.code == F_LEN and "F_LEN" in str(fault),
                    f"{what}: expected a FAULT F_LEN named by the host, got {fault}")
            st = await seq.node_status(VC)
            v.check(st.code == SigCode.FAULT and st.arg == F_LEN, f"{what}: NODE_STATUS{VC} {describe(st)}")
            v.check(vm.program(words, descs) == (SigCode.FAULT, F_LEN), f"{what}: the model does not fault F_LEN")
            art.add(f"fault_{k}", fault.code if fault else 0, np.int64)
            art.add(f"error_{k}", str(fault))
        got = await seq.read_words(OUT_BASE >> 5, 8)
        check_words(v, "DRAM under the faulted walks", got, guard_words)
        # The limit itself: 256 entries run.
        words = assemble(["VDRAIN A0, 0", "VHALT"])
        descs = {0: Descriptor(OUT2_BASE, ((32, 256),))}
        await poison(seq, OUT2_BASE, 256)
        res = (await seq.run_vector_stage({VC: (words, descs)}))[VC]
        v.check(res.status.code == SigCode.BATCH_COMPLETE, f"a 256-entry VDRAIN: {describe(res.status)}")
        out = await seq.read_words(OUT2_BASE >> 5, 256)
        vm.program(words, descs)
        check_words(v, "256-entry VDRAIN", out, vm.read(OUT2_BASE >> 5, 256))
        art.words("obs_guard", got)
        art.words("exp_guard", guard_words)
        art.words("obs_walk256", out)
        art.words("exp_walk256", vm.read(OUT2_BASE >> 5, 256))
        art.add("node_status", await node_status_rows(seq, [VC]))

    await tb.guard(body, max_cycles=150_000)


@cocotb.test()
async def test_fault_l1_range(dut) -> None:
    """(7d) A 16-tile drain at L1 word 500: the first burst (500..507) lands and is acknowledged, the second
    (508..515) runs past word 511: rejected, never wrapped, no ack; Await names 1 missing; next RUN F_CUDATA."""
    tb = SystemTB(dut, "test_fault_l1_range")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        rng = tb.np_rng
        ops = make_operands(rng, 4, 4, 1, lo=-64, hi=63)
        low, high = sentinel_words(rng, 8), sentinel_words(rng, 12)
        pre = cu_data_bursts(VC, ORCH, 0, 0, low, flags=1, ack=ORCH) + cu_data_bursts(VC, ORCH, 0, 500, high, flags=1,
                                                                                 ack=ORCH)
        await seq.send_data(VC, pre, acks=2)
        drain = cluster.drain(16, addr=32 * 500, dnode=1, dst=VC, dbuf=0, dflags=1, dack=ORCH)
        await seq.run_cluster_stage({CL: operand_bursts(ops) + [cluster.gemm(4, 4, 1), drain]}, receivers=[VC])
        base = seq.round.baselines[VC]
        err = None
        try:
            await seq.await_acks({VC: cluster.acks_for(16)}, timeout_cycles=FAULT_TIMEOUT)
        except SequenceAwaitError as exc:
            err = exc
        v.check(err is not None and err.missing == 1 and err.seen == (base + 1) % 65536,
                f"Await of 2 acks should time out with 1 seen, 1 missing: {err}")
        if err is not None:
            v.check("(1,0)" in str(err) and "1 signal(s) missing" in str(err), f"Await failure text: {err}")
            art.add("error_await", str(err))
        st = await seq.node_status(VC)
        v.check(st.code == SigCode.DATA_RECEIVED and st.arg == 0, f"NODE_STATUS{VC}: {describe(st)}, expected the "
                                                                  f"accepted burst's DATA_RECEIVED arg 0")
        fault = None
        try:
            await seq.run_vector_stage({VC: (assemble(["VHALT"]), {})})
        except UnitFaultError as exc:
            fault = exc
        v.check(fault is not None and fault.code == F_CUDATA, f"the next RUN should fault F_CUDATA: {fault}")
        words = assemble(["VDRAIN A0, 0", "VDRAIN A1, 500", "VHALT"])
        descs = {0: Descriptor(OUT_BASE, ((32, 8),)), 1: Descriptor(OUT2_BASE, ((32, 12),))}
        await poison(seq, OUT_BASE, 8)
        await poison(seq, OUT2_BASE, 12)
        res = (await seq.run_vector_stage({VC: (words, descs)}))[VC]
        v.check(res.status.code == SigCode.BATCH_COMPLETE, f"the RUN after the fault: {describe(res.status)}")
        got_low = await seq.read_words(OUT_BASE >> 5, 8)
        got_high = await seq.read_words(OUT2_BASE >> 5, 12, settle=False)
        cm = cluster_after_gemm(ops)
        tiles = cm.fp16_tiles(16)
        check_words(v, "L1 words 0..7 (a wrapped burst would land here)", got_low, low)
        check_words(v, "L1 words 500..507 (accepted burst)", got_high[:8], tiles[:8])
        check_words(v, "L1 words 508..511 (rejected burst)", got_high[8:], high[8:])
        vm = VecModel()
        vm.feed(pre)
        vm.acks.clear()
        vm.feed(cm.execute(inst(CL, drain)).flits)
        v.check(vm.acks == {ORCH: 1} and vm.core.cud_pending, f"model: acks {vm.acks}, F_CUDATA {vm.core.cud_pending}")
        ops.record(art, 500)
        art.add("n_acks_awaited", 2, np.int64)  # ceil(16/8): what a host that ignores the fault waits for
        art.count("acks", sum(vm.acks.values()), (err.seen - base) % 65536 if err else -1)  # the model's count
        art.add("fault_run", fault.code if fault else 0, np.int64)
        art.words("obs_l1_low", got_low)
        art.words("exp_l1_low", low)
        art.words("obs_l1_high", got_high)
        art.words("exp_l1_high", tiles[:8] + high[8:])
        art.add("node_status", await node_status_rows(seq, [VC, CL]))

    await tb.guard(body, max_cycles=100_000)


SAT_LANES = [0x78BB, 0x3C00, 0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x0001, 0x03FF,
             0x7800, 0xF800, 0x77FF, 0xC000, 0x5BFF, 0x1234, 0x8ABC, 0x3555]


@cocotb.test()
async def test_fp16_saturation(dut) -> None:
    """(7e) VFILL a word of 0xf8bb lanes (and one of edge values), VLD, VADD v+v, VST, VDRAIN: 0xf8bb doubled
    is 0xfbff (saturated, not -inf); every lane bit exact against the model. Dispatched in chunks of 8."""
    tb = SystemTB(dut, "test_fp16_saturation")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        in_words = [u16_to_word([0xF8BB] * 16), u16_to_word(SAT_LANES)]
        await seq.load_words(SAT_IN >> 5, in_words)
        lines = ["VFILL A0, 200", "VBAR", "VSETI s0, 16", "VSETVL s0", "VSETMODE FLAT"]
        for t in range(2):
            lines += [f"VLD v0, A1+{200 + t}", "VADD v1, v0, v0", f"VST v1, A2+{t}"]
        lines += ["VDRAIN A3, 300", "VHALT"]
        words = assemble(lines)
        descs = {0: Descriptor(SAT_IN, ((32, 2),)), 1: Descriptor(0, ((1, 1),)),
                 2: Descriptor(300, ((1, 1),)), 3: Descriptor(SAT_OUT, ((32, 2),))}
        await poison(seq, SAT_OUT, 2)
        res = (await seq.run_vector_stage({VC: (words, descs)}, chunk=8))[VC]
        last_window = res.instructions - 8 * (res.windows - 1)
        credit = await seq.host.credit()
        v.check(credit == last_window - 1, f"credit after the last window of {last_window}: {credit}, expected "
                                           f"{last_window - 1} (n instructions return n-1 credits)")
        v.check(res.status.code == SigCode.BATCH_COMPLETE, f"the RUN: {describe(res.status)}")
        v.check(res.windows == -(-res.instructions // 8), f"{res.instructions} instructions went out in "
                                                          f"{res.windows} windows, chunks of 8 expected")
        got = await seq.read_words(SAT_OUT >> 5, 2)
        lanes = words_to_lanes(got)
        for lane in range(16):
            v.check(int(lanes[0, lane]) == 0xFBFF, f"0xf8bb doubled in lane {lane} is {int(lanes[0, lane]):#06x}, "
                                                   f"expected 0xfbff (saturated)")
        vm = VecModel({(SAT_IN >> 5) + i: w for i, w in enumerate(in_words)})
        v.check(vm.program(words, descs)[0] == SigCode.BATCH_COMPLETE, "model: the RUN faulted")
        want = vm.read(SAT_OUT >> 5, 2)
        rule = doubled_lanes(words_to_lanes(in_words))
        v.check(np.array_equal(words_to_lanes(want), rule), "the model's VADD v+v differs from FP16 doubling with "
                                                            "saturation")
        checks, errors = compare_fp16_words(want, got, "doubled word")
        v.add_checks(checks, errors)
        art.words("in_words", in_words)
        art.words("obs_doubled", got)
        art.add("exp_doubled", rule)
        art.recheck_with(recheck_doubled)
        art.count("windows", -(-res.instructions // 8), res.windows)
        art.add("node_status", await node_status_rows(seq, [VC]))

    await tb.guard(body, max_cycles=100_000)


# ==================================================================== the reference epilogue, through the host
@cocotb.test()
async def test_reference_epilogue(dut) -> None:
    """Protocol section 7 through the orchestrator (seed section 4): cluster stage (operand bursts, GEMM,
    DRAIN dnode=1 dflags=1 dack=(1,1)), Await ceil(9/8)=2 acks on (1,0), vector stage (VDRAIN; then the
    epilogue, longer than the instruction FIFO, on credit refill); the programs of models/machine/reference_bench.py;
    DRAM bit exact against the models."""
    tb = SystemTB(dut, "test_reference_epilogue")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        gm, gn, nk, n_sub = reference_bench.GM, reference_bench.GN, reference_bench.NK, reference_bench.N_SUB
        ops = make_operands(tb.np_rng, gm, gn, nk)
        plan = plan_fused(4 * gm, 4 * gn, 32 * nk, gm, gn, nk, Acc(), MM_MESH_SYS)
        acks = dict(expected_acks(plan))
        v.check(acks == {VC: 2}, f"planner: await {acks}, expected 2 on {VC}")
        gemm, drain = reference_bench.cluster_instructions(ORCH, pass_a=False)  # pass B, acks to the orchestrator
        await seq.host.clear_sig_done()
        cres = (await seq.run_cluster_stage({CL: operand_bursts(ops) + [gemm, drain]}))[CL]
        v.check(cres.instructions == 2 and cres.flits == 52, f"cluster stage: {cres.flits} flits, "
                                                             f"{cres.instructions} instructions; 50 + 2 expected")
        base = seq.round.baselines[VC]
        st = (await seq.await_acks(acks))[VC]
        v.check(st.code == SigCode.DATA_RECEIVED and st.arg == 0, f"acks: NODE_STATUS{VC} {describe(st)}")
        # vector stage 1: VDRAIN A0 (L1 word 0) -> 0x8000, {32, 9}
        s1, s2 = reference_bench.vdrain_step(n_sub, REF_DRAIN), reference_bench.epilogue_step(n_sub, REF_EPILOGUE)
        await poison(seq, REF_DRAIN, n_sub)
        await poison(seq, REF_EPILOGUE, n_sub)
        r1 = (await seq.run_vector_stage({VC: (s1.words, s1.descriptors)}))[VC]
        drained = await seq.read_words(REF_DRAIN >> 5, n_sub)
        # vector stage 2: the epilogue, v1 = v0 + v0 per word, VDRAIN A3 from L1 word 64; more instructions
        # than the instruction FIFO holds, so it goes out on credit refill
        r2 = (await seq.run_vector_stage({VC: (s2.words, s2.descriptors)}))[VC]
        n2 = len(s2.payloads())
        v.check(r2.instructions == n2 > seq.fifo_depth and r2.windows == 1,
                f"epilogue: {r2.instructions} instructions in {r2.windows} window(s); {n2} (> the FIFO depth "
                f"{seq.fifo_depth}) in 1 on credit refill expected")
        v.check(r2.status.code == SigCode.BATCH_COMPLETE and r2.status.arg == TXN,
                f"epilogue: {describe(r2.status)}")
        credit = await seq.host.credit()
        v.check(credit == seq.fifo_depth - 1, f"credit after {n2} instructions seeded with {seq.fifo_depth}: "
                                              f"{credit}, expected {seq.fifo_depth - 1} ({n2 - 1} refills)")
        doubled = await seq.read_words(REF_EPILOGUE >> 5, n_sub)

        cm = cluster_after_gemm(ops)
        vm = VecModel()
        vm.feed(cm.execute(inst(CL, drain)).flits)
        v.check(vm.acks == {ORCH: 2}, f"model acks {vm.acks}")
        gold = cm.fp16_tiles(n_sub)
        v.check(vm.program(s1.words, s1.descriptors)[0] == SigCode.BATCH_COMPLETE, "model: VDRAIN faulted")
        v.check(vm.program(s2.words, s2.descriptors)[0] == SigCode.BATCH_COMPLETE, "model: epilogue faulted")
        check_words(v, "VDRAIN of the delivered tile", drained, gold)
        check_words(v, "VDRAIN equals the vector core model", drained, vm.read(REF_DRAIN >> 5, n_sub))
        checks, errors = compare_fp16_words(vm.read(REF_EPILOGUE >> 5, n_sub), doubled, "epilogue word")
        v.add_checks(checks, errors)
        rule = doubled_lanes(words_to_lanes(gold))
        v.check(np.array_equal(rule, words_to_lanes(doubled)), "epilogue: not gold doubled lane by lane")
        exact = ops.a.astype(np.int64) @ ops.b.astype(np.int64)
        lanes = words_to_lanes(gold).view(np.float16).astype(np.float64).reshape(n_sub, 4, 4)
        for t in range(n_sub):
            g, h = divmod(t, gn)
            v.check(np.array_equal(lanes[t], exact[4 * g:4 * g + 4, 4 * h:4 * h + 4]),
                    f"sub-tile {t} is not the exact integer product")
        sig = await seq.host.sig_done()
        want_sig = cres.instructions + 2 + r1.instructions + r2.instructions
        v.check(sig == want_sig, f"SIG_DONE {sig}, expected {want_sig}")
        ops.record(art, 0)
        art.words("obs_tile", drained)
        art.recheck_with(recheck_tile)
        art.words("exp_tile", gold)
        art.words("obs_doubled", doubled)
        art.add("exp_doubled", rule)
        art.recheck_with(recheck_doubled)
        art.count("acks", 2, (st.count - base) % 65536)
        art.count("sig_done", want_sig, sig)
        art.add("node_status", await node_status_rows(seq, [VC, CL]))

    await tb.guard(body, max_cycles=200_000)


# ==================================================================== the guard itself
@cocotb.test()
async def test_watchdog_names_a_hang(dut) -> None:
    """Self-test of the system guard: an Await nobody answers, under a 3000-cycle watchdog, must end as the
    named watchdog failure saying what the host was waiting for (and the test passes only then)."""
    tb = SystemTB(dut, "test_watchdog_names_a_hang")

    async def body() -> None:
        seq = await tb.start()
        base = await seq.baseline([VC])
        await seq.await_counts({VC: 1}, base, what="an Await nobody answers", timeout_cycles=10_000_000)

    await tb.guard(body, max_cycles=3_000, expect_failures=(
        "watchdog: the test did not finish within 3000 simulated cycles",
        "an Await nobody answers: awaiting 1 signal(s) at (1,0)"))
