"""Unit programs from a plan: shapes, counts against the seed, refusals, and the programs run on the models."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models import cluster
from models import vector
from models.cu.base import SigCode, signal_fields
from models.machine.fused_golden import check_bits, golden_y, vector_stage
from models.machine.kernel_run import run_on_models
from models.machine.layouts import FUSED4, MM_MESH, Machine, UnitKind
from models.numerics import NEG_LOG2E
from models.machine.planner import Acc, Const, Op, Operand, PlanRefused, deal, mul, plan_fused, silu
from models.programs import (
    CONST_SREGS, SEED_CASE, SEED_OURS, UPSTREAM_BROADCAST_BYTES, UPSTREAM_FLITS, build_kernel, build_programs,
    compare_forms, dram_layout, lower_epilogue, operand_images, pack_tiled, program_words, seed_comparison,
    unpack_tiled,
)
from models.vector.memory import CoreWithMemory

SILU = silu(Acc(0))
GATED = mul(Acc(0), silu(Acc(1)))
HOST = FUSED4.agent


def seed_data(rng, accumulators=1, scaled=False):
    m, n, k = SEED_CASE["m"], SEED_CASE["n"], SEED_CASE["k"]
    x = rng.integers(-64, 64, size=(m, k))
    ws = [rng.integers(-64, 64, size=(n, k)) for _ in range(accumulators)]
    if not scaled:
        return x, ws, None, None
    return x, ws, rng.integers(0x68, 0x78, size=(m, k // 32)), [rng.integers(0x68, 0x78, size=(n, k // 32))
                                                                  for _ in ws]


# ---------------------------------------------------------------- shapes
def test_seed_case_cluster_programs() -> None:
    kp = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4)
    p = kp.plan
    assert (p.m, p.n, p.k, len(p.instances), p.span_w) == (32, 32, 64, 2, 32)  # y = x @ w^T is 32 x 32
    pairing = deal([(i.row, i.col) for i in p.instances], FUSED4.vector_cores)
    for ip in kp.instances:
        assert ip.cluster.ops() == ("FILL", "FILL", "GEMM", "DRAIN")
        fa, fb, g, d = ip.cluster.fields()
        assert (fa["sel"], fa["n"], fa["eoff"], fa["addr"]) == (0, 4 * 2, 0, kp.layout.x_fill_addr(ip.row))
        assert (fb["sel"], fb["n"], fb["eoff"], fb["addr"]) == (1, 8 * 2, 0, kp.layout.w_fill_addr(0, ip.col))
        assert (g["gm"], g["gn"], g["nk"], g["anchor"], g["acc"]) == (4, 8, 2, 40, 0)
        assert (d["dnode"], d["n"], d["dbuf"], d["dflags"], d["addr"]) == (1, 32, 0, 1, 0)
        assert (d["dst_x"], d["dst_y"]) == ip.vector.core == pairing[(ip.row, ip.col)]
        assert (d["dack_x"], d["dack_y"]) == FUSED4.agent == (3, 2)
        assert (d["dmesh"], d["dfin"]) == (0, 0)
    assert kp.counts.acks == {(1, 0): 4, (2, 0): 4}  # ceil(32/8) per drain


def test_unfused_drains_to_the_temp() -> None:
    kp = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4, form="unfused")
    for ip in kp.instances:
        d = ip.cluster.fields()[-1]
        assert (d["dnode"], d["n"], d["addr"]) == (0, 32, kp.layout.temp_addr(0, ip.row, ip.col))
    assert dict(kp.counts.acks) == {}


def test_gated_mlp_sweep_drain_sweep_drain_slots_and_acks() -> None:
    kp = build_kernel(32, 32, 32, 8, 8, 1, GATED, FUSED4)  # 2 x 64 sub-tiles into one core
    (ip,) = kp.instances
    assert ip.cluster.ops() == ("FILL", "FILL", "GEMM", "DRAIN", "FILL", "GEMM", "DRAIN")
    drains = [f for f in ip.cluster.fields() if f["op"] == cluster.Op.DRAIN]
    assert [f["addr"] // 32 for f in drains] == [0, 64] == list(kp.plan.slots)
    assert kp.counts.acks == {ip.vector.core: 16}
    assert kp.plan.result_word == 128
    lines = ip.vector.lines
    assert lines[:6] == ("VSETI s0, 128", "VSETI s4, 0xbfb8aa", "VSETVL s0", "VSETMODE FLAT", "VLD v0, A0+0",
                         "VLD v1, A1+0")  # the compiler's prologue, then both slots of chunk 0
    d = ip.vector.descriptors
    assert (d[0].base, d[1].base, d[2].base) == (0, 64, 128)  # slot 0, slot 1, the result after the slots
    assert [ln for ln in lines if ln.startswith("VST")][1] == "VST v7, A2+8"  # chunk 1: the offset is 8c
    assert lines[-2:] == ("VDRAIN A3, 128", "VHALT")


def test_fused_vector_program_has_no_fill_and_constants_only_in_vseti() -> None:
    fused = build_kernel(**SEED_CASE, epilogue=GATED, machine=FUSED4)
    unfused = build_kernel(**SEED_CASE, epilogue=GATED, machine=FUSED4, form="unfused")
    for ip in fused.instances:
        names = ip.vector.mnemonics()
        assert "VFILL" not in names and "VBAR" not in names
        assert names[-2:] == ["VDRAIN", "VHALT"]
    for ip in unfused.instances:
        names = ip.vector.mnemonics()
        assert names.count("VFILL") == 2 and names.index("VBAR") < names.index("VLD")
    for kp in (fused, unfused):
        for ip in kp.instances:
            words = list(ip.vector.words)
            set_s: set[int] = set()
            vl_reg = None
            for pc, w in program_words(words):
                if w.name == "VSETI":
                    assert w.sa != vector.SRC_K  # K3 is never written
                    set_s.add(w.vd)
                    if words[pc + 1] == 128 and w.vd == 0:
                        vl_reg = w.vd
                    else:
                        assert words[pc + 1] == NEG_LOG2E and w.vd == CONST_SREGS[0]  # the only constant here
                elif w.name == "VSETVL":
                    assert w.va == vl_reg  # VL = S0 = 128, set before it is read
                elif w.op <= 0x11:
                    for sel, idx in zip(w.selectors, (w.va, w.vb, w.vc)):
                        if sel == vector.SRC_S:
                            assert idx in set_s  # scalar read only after its VSETI
                        if sel == vector.SRC_K:
                            assert idx in (0, 1, 2)  # built-ins only; K3 holds nothing of ours
            assert vl_reg == 0
        names = [r[0] for r in kp.layout.regions()]
        assert all(n[0] in "xwty" for n in names)  # no constant array anywhere in DRAM


def test_descriptors_and_desc_writes() -> None:
    """The compiler's descriptor order (fills, L1 slots, result, drain); minimal DESC writes are exactly the
    fields each descriptor's instructions read, 'full' all five of every descriptor."""
    kp = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4, form="unfused")
    ip = kp.instances[1]
    d = ip.vector.descriptors
    assert [(u.ad, u.role) for u in ip.vector.uses] == [(0, "fill 0"), (1, "slot 0"), (2, "result"), (3, "drain")]
    assert d[0] == vector.Descriptor(kp.layout.temp_addr(0, ip.row, ip.col), ((32, 32),))
    assert d[1] == vector.Descriptor(0, ((1, 8),))
    assert d[2] == vector.Descriptor(kp.plan.result_word, ((1, 8),)) and kp.plan.result_word == 32
    assert d[3] == vector.Descriptor(kp.layout.y_addr(ip.row, ip.col), ((32, 32),))
    assert [(ad, fld) for ad, fld, _ in ip.vector.desc_writes] == \
        [(0, f) for f in range(5)] + [(1, 0), (1, 1), (2, 0), (2, 1)] + [(3, f) for f in range(5)]
    for ad, fld, value in ip.vector.desc_writes:  # the fixed packing: base 40 bits, dim {stride[33:16], bound}
        assert value == (d[ad].base if fld == 0 else vector.pack_dim(*d[ad].full_dims[fld - 1]))
    assert ip.vector.lines[4:6] == ("VFILL A0, 0", "VBAR")
    assert ip.vector.lines[-2] == "VDRAIN A3, 32"
    fused = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4).instances[0].vector
    assert [(u.ad, u.role) for u in fused.uses] == [(0, "slot 0"), (1, "result"), (2, "drain")]
    full = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4, form="unfused", desc_writes="full")
    assert len(full.instances[1].vector.desc_writes) == 4 * 5
    with pytest.raises(ValueError, match="desc_writes must be one of minimal, full, got 'some'"):
        build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4, desc_writes="some")


# ---------------------------------------------------------------- counts vs the seed
def test_seed_flit_counts_against_94_and_107() -> None:
    """Our totals for the seed case, per DESC policy (SEED_OURS), and how they split per unit and flit kind."""
    for policy in ("minimal", "full"):
        cmp = seed_comparison(desc_writes=policy)
        assert {"fused": cmp.fused.total_flits, "unfused": cmp.unfused.total_flits} == SEED_OURS[policy]
        assert cmp.fused.cluster_flits == cmp.unfused.cluster_flits == 8
    cmp = seed_comparison()
    f, u = cmp.fused, cmp.unfused
    assert (f.vector_imem, f.vector_desc, f.vector_run) == (72, 18, 2)  # 2 x (36 words, 2 + 2 + 5 DESC, RUN)
    assert (u.vector_imem, u.vector_desc, u.vector_run) == (76, 28, 2)  # + VFILL, VBAR; + 5 DESC per core
    assert (f.total_flits - UPSTREAM_FLITS["fused"], u.total_flits - UPSTREAM_FLITS["unfused"]) == (6, 7)
    assert (cmp.flit_saving, UPSTREAM_FLITS["unfused"] - UPSTREAM_FLITS["fused"]) == (14, 13)
    assert UPSTREAM_BROADCAST_BYTES == 32768 and "32768" in cmp.table()


def test_dram_saving_is_2MN2() -> None:
    cmp = seed_comparison()
    m, n = SEED_CASE["m"], SEED_CASE["n"]
    assert cmp.dram_saving == 2 * m * n * 2 == 4096
    assert (cmp.fused.temp_bytes, cmp.unfused.temp_bytes) == (0, 2048)  # "no temp against a 2 KB one"
    assert (cmp.fused.x_read, cmp.fused.w_read, cmp.fused.y_written) == (2048, 4096, 2048)
    assert cmp.fused.dram_read + 2048 == cmp.unfused.dram_read
    gated = compare_forms(*(build_kernel(**SEED_CASE, epilogue=GATED, machine=FUSED4, form=f)
                            for f in ("fused", "unfused")))
    assert gated.dram_saving == 2 * (2 * m * n * 2)  # one temp per accumulator


def test_counts_follow_the_programs() -> None:
    kp = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4)
    c = kp.counts
    assert c.total_flits == sum(len(ip.cluster.payloads) + len(ip.vector.payloads()) for ip in kp.instances)
    status = c.node_status_counts()  # completions + acks share NODE_STATUS
    for ip in kp.instances:
        assert status[ip.vector.core] == len(ip.vector.payloads()) + 4
        assert status[ip.cluster.cluster] == 4


# ---------------------------------------------------------------- refusals
NO_AGENT = Machine("noagent", 2, 1, {(0, 1): UnitKind.MAG, (1, 0): UnitKind.VECTOR, (2, 1): UnitKind.CLUSTER})


@pytest.mark.parametrize("args,machine,match", [
    ((64, 64, 64, 4, 4, 2, SILU), MM_MESH, "instances but 1 vector cores"),
    ((64, 128, 64, 16, 32, 2, SILU), MM_MESH, "> 256"),
    ((64, 64, 64, 16, 16, 2, SILU), MM_MESH, "exceeds L1_SAFE"),
    ((32, 96, 64, 8, 24, 2, SILU), FUSED4, "measured-bad band"),
    ((16, 16, 64, 4, 4, 2, mul(Acc(), Operand("bias"))), MM_MESH, "neither an accumulator"),
    ((12, 12, 64, 3, 3, 2, SILU), NO_AGENT, "no agent coordinate"),
])
@pytest.mark.parametrize("form", ["fused", "unfused"])
def test_planner_refusals_pass_through(args, machine, match, form) -> None:
    with pytest.raises(PlanRefused, match=match) as info:
        build_kernel(*args, machine, form=form)
    text = str(info.value)
    fix = "use a machine with an agent" if machine is NO_AGENT else "two stages with a temp"
    assert fix in text, text


def test_own_refusals_name_limit_and_fix() -> None:
    with pytest.raises(PlanRefused, match=r"FILL reaches entries 0\.\.255.*fix: retile"):
        build_kernel(32, 4, 32 * 33, 8, 1, 33, SILU, FUSED4)  # gm*nk = 264 L1A entries
    deep = Acc(0)
    for d in range(1, 18):  # each level holds one register while the next is computed
        left = Acc(0)
        for _ in range(d):
            left = Op("neg", (left,))
        deep = Op("add", (left, deep))
    with pytest.raises(PlanRefused, match="more than 16 vector registers.*fix"):
        lower_epilogue(deep)
    many = Acc(0)
    for i in range(16):
        many = Op("add", (many, Const(3.0 + i)))
    with pytest.raises(PlanRefused, match="more than 15 distinct constants.*S0 holds VL.*fix"):
        lower_epilogue(many)
    assert len(lower_epilogue(Op("add", (Op("add", (Acc(0), Const(3.0))), Const(4.0)))).scalars) == 2
    with pytest.raises(PlanRefused, match="not finite.*fix"):
        lower_epilogue(Op("mul", (Acc(0), Const(float("inf")))))
    long = Acc(0)
    for _ in range(6):
        long = silu(long)
    with pytest.raises(PlanRefused, match="does not assemble.*512-word IMEM.*fix"):
        build_kernel(32, 64, 32, 8, 16, 1, long, FUSED4)  # 16 chunks x 32 words
    plan = plan_fused(**SEED_CASE, epilogue=SILU, machine=FUSED4)
    shared = dataclasses.replace(plan, instances=tuple(dataclasses.replace(i, vector_core=(1, 0))
                                                       for i in plan.instances))
    with pytest.raises(PlanRefused, match="injective.*retile"):
        build_programs(shared, SILU, FUSED4)
    with pytest.raises(PlanRefused, match="made for machine fused4"):
        build_programs(plan, SILU, MM_MESH)
    with pytest.raises(PlanRefused, match="reads accumulator 1 but the plan has 1"):
        build_programs(plan, GATED, FUSED4)
    with pytest.raises(PlanRefused, match="past 2\\^40"):
        dram_layout(plan, base=1 << 40)
    four = Op("add", (Op("add", (Acc(0), Acc(1))), Op("add", (Acc(2), Acc(3)))))
    with pytest.raises(PlanRefused, match="unfused program needs 10 descriptors.*the core has 8.*fix"):
        build_kernel(16, 16, 32, 2, 2, 1, four, FUSED4, form="unfused")
    assert build_kernel(16, 16, 32, 2, 2, 1, four, FUSED4).counts.acks  # fused: 4 slots + result + drain fit


# ---------------------------------------------------------------- the programs on the unit models
@pytest.mark.parametrize("epi,acc,scaled", [(SILU, 1, False), (SILU, 1, True), (GATED, 2, True)])
def test_programs_run_on_the_models_and_match_the_golden(epi, acc, scaled) -> None:
    """Both forms on the unit models, from a stale core state: y equals the golden model bit for bit, the acks
    and completions are the ones the program builder counted, and fused equals unfused."""
    rng = np.random.default_rng(5)
    x, ws, xs, wss = seed_data(rng, acc, scaled)
    want = golden_y(x, ws, epi, x_scales=xs, w_scales=wss)
    outs = []
    for form in ("fused", "unfused"):
        kp = build_kernel(**SEED_CASE, epilogue=epi, machine=FUSED4, form=form)
        images = operand_images(kp.layout, x, ws, x_scales=xs, w_scales=wss)
        run = run_on_models(kp, FUSED4, images, stale=True)
        assert run.faults == []
        assert run.acks == dict(kp.counts.acks)
        assert run.completions == dict(kp.counts.completions)
        y = run.y(kp)
        assert check_bits(want, y) == []
        outs.append(y)
    assert np.array_equal(outs[0], outs[1])  # fused and unfused are bit-identical


def test_stale_state_matters_without_the_minimal_writes() -> None:
    """The stale-state run above proves something: drop the DESC writes of the drain's dims 2..4 and the
    same stale core drains a different walk."""
    rng = np.random.default_rng(5)
    x, ws, _, _ = seed_data(rng)
    kp = build_kernel(**SEED_CASE, epilogue=SILU, machine=FUSED4)
    ip = kp.instances[0]
    drain = ip.vector.use("drain").ad
    trimmed = dataclasses.replace(ip.vector, desc_writes=tuple(w for w in ip.vector.desc_writes
                                                               if not (w[0] == drain and w[1] >= 2)))
    bad = dataclasses.replace(kp, instances=(dataclasses.replace(ip, vector=trimmed),) + kp.instances[1:])
    images = operand_images(kp.layout, x, ws)
    good = run_on_models(kp, FUSED4, images, stale=True)
    stale = run_on_models(bad, FUSED4, images, stale=True)
    assert check_bits(golden_y(x, ws, SILU), good.y(kp)) == []
    assert check_bits(good.y(kp), stale.y(kp)) != []


def test_reference_machine_mm_mesh() -> None:
    rng = np.random.default_rng(9)
    x, w = rng.integers(-4, 4, size=(12, 64)), rng.integers(-4, 4, size=(12, 64))
    epi = Op("add", (Acc(0), Acc(0)))  # the §7 epilogue: doubling
    kp = build_kernel(12, 12, 64, 3, 3, 2, epi, MM_MESH)
    assert kp.counts.acks == {(1, 0): 2}
    run = run_on_models(kp, MM_MESH, operand_images(kp.layout, x, [w]))
    assert run.faults == [] and run.acks == {(1, 0): 2}
    assert check_bits(golden_y(x, [w], epi), run.y(kp)) == []


def test_every_operation_lowers_to_what_the_golden_computes() -> None:
    a, b = Acc(0), Acc(1)
    epi = Op("max", (Op("sub", (a, Const(0.5))),
                     Op("min", (Op("neg", (b,)), Op("add", (Op("exp2", (Const(-1.25),)),
                                                            Op("mul", (Op("inv", (a,)), Op("sigmoid", (b,))))))))))
    low = lower_epilogue(epi)
    assert sorted({line.split()[0] for line in low.body}) == sorted(
        ["VMAX", "VSUB", "VMIN", "VNEG", "VADD", "VEXP2", "VMUL", "VINV"])
    rng = np.random.default_rng(3)
    h = rng.integers(0, 0x7C00, size=(2, 8 * 16)) | (rng.integers(0, 2, size=(2, 8 * 16)) << 15)
    mem = CoreWithMemory(vector.VectorCore((1, 0)))
    for s in range(2):
        for i in range(8):
            mem.core.write_l1(s * 8 + i, vector.u16_to_word(h[s, 16 * i:16 * i + 16]))
    text = ["VSETI s0, 128"] + [f"VSETI s{r}, {p:#x}" for r, p in low.scalars] + ["VSETVL s0", "VSETMODE FLAT"]
    text += [f"VLD v{i}, A0+{8 * s}" for i, s in enumerate(low.slots)] + list(low.body)
    text += [f"VST v{low.result}, A0+16", "VHALT"]
    flits = vector.program_flits((1, 0), HOST, vector.assemble(text), {0: vector.Descriptor(0, ((1, 8),))})
    events = mem.take_all(flits)
    assert not [e for e in events if signal_fields(e.flit)[0] == SigCode.FAULT]
    got = np.concatenate([vector.word_to_u16(mem.core.l1_word(16 + i)) for i in range(8)])
    assert check_bits(vector_stage(epi, [h[0], h[1]]), got) == []


def test_constants_use_builtins_and_dedupe() -> None:
    low = lower_epilogue(Op("add", (Op("mul", (Acc(0), Const(1.0))), Op("mul", (Acc(0), Const(-1.0))))))
    assert low.scalars == () and "k1" in low.body[0] and "k2" in low.body[1]
    low = lower_epilogue(Op("mul", (silu(Acc(0)), Const(-1.4426950408889634))))  # equals -log2(e) in E8M15
    assert low.scalars == ((4, NEG_LOG2E),)  # constants from S4 up, as the compiler
    low = lower_epilogue(Op("add", (silu(Acc(0)), silu(Acc(0)))))  # common subexpression computed once
    assert len(low.body) == 6
    low = lower_epilogue(Const(2.5))
    assert low.body == ("VMOV v7, s4",)
    low = lower_epilogue(silu(Acc(0)))  # the compiler's five SiLU words, results in v7
    assert low.body == ("VMUL v7, v0, s4", "VEXP2 v7, v7", "VADD v7, v7, k1", "VINV v7, v7", "VMUL v7, v0, v7")
    assert lower_epilogue(GATED).body[-1] == "VMUL v7, v0, v7"  # up * silu(gate), in place


def test_tiled_layout_round_trip() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 1 << 16, size=(32, 32), dtype=np.uint16)
    words = pack_tiled(y, 4, 8)
    assert np.array_equal(unpack_tiled(words, 32, 32, 4, 8), y)
    # word 0 is sub-tile (g=0, h=0) of instance 0: rows 0..3, cols 0..3, lane 4r + c
    assert list(vector.word_to_u16(words[0])) == list(y[:4, :4].reshape(16))
    assert list(vector.word_to_u16(words[32])) == list(y[16:20, 0:4].reshape(16))  # instance (1, 0)


def test_determinism() -> None:
    a = build_kernel(**SEED_CASE, epilogue=GATED, machine=FUSED4, form="unfused")
    b = build_kernel(**SEED_CASE, epilogue=GATED, machine=FUSED4, form="unfused")
    for ia, ib in zip(a.instances, b.instances):
        assert ia.cluster.payloads == ib.cluster.payloads
        assert ia.vector.payloads() == ib.vector.payloads()
    assert a.counts == b.counts and a.layout == b.layout


@pytest.mark.parametrize("kind", ["integer", "scaled", "mixed"])
@pytest.mark.parametrize("name", ["silu", "scale", "relu"])
def test_fused_kernels_bench_cases_on_the_models(name: str, kind: str) -> None:
    """What tb/system/test_fused_kernels.py runs (its epilogues and tolerances, a shape it can draw), on the
    models, through the same checks: bit exact to the golden model and within the end-to-end bound."""
    from models.machine.fused_bounds import end_to_end_failures
    from models.machine.fused_golden import random_case
    from tb.system.test_fused_kernels import EPILOGUES

    expr, ulps = EPILOGUES[name]
    gm, gn, nk = 3, 4, 2
    case = random_case(np.random.default_rng(17), 4 * gm, 4 * gn, 32 * nk, kind=kind)
    ys = []
    for form in ("fused", "unfused"):
        kp = build_kernel(4 * gm, 4 * gn, 32 * nk, gm, gn, nk, expr, MM_MESH, form=form)
        images = operand_images(kp.layout, case["x"], case["ws"], x_scales=case["x_scales"],
                                w_scales=case["w_scales"])
        run = run_on_models(kp, MM_MESH, images, stale=True)
        assert run.faults == [] and run.acks == dict(kp.counts.acks)
        y = run.y(kp)
        gold = golden_y(case["x"], case["ws"], expr, x_scales=case["x_scales"], w_scales=case["w_scales"])
        assert check_bits(gold, y) == []
        assert end_to_end_failures(y, case["x"], case["ws"], expr, x_scales=case["x_scales"],
                                   w_scales=case["w_scales"], vector_ulps=ulps) == []
        ys.append(y)
    assert np.array_equal(ys[0], ys[1])
