"""Fused kernels end to end on mm_mesh, the bench as the agent (scenarios 4, 5, 8).

Each test builds the programs from a plan (models/programs/), runs the host
sequence (tb/system/kernel_bench.py) and checks y bit for bit against the golden
model and within the stated float64 bound; fused and unfused forms of one
kernel must give the same bits.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models.machine.fused_golden import random_case
from models.machine.layouts import MM_MESH
from models.machine.planner import Acc, Const, Op, mul, silu
from models.programs import build_kernel
from tb.mag.dram import DramBackdoor
from tb.system.kernel_bench import run_kernel_as_agent
from tb.noc.bench import NocTB

AGENT = MM_MESH.agent


async def _run(tb: NocTB, dut, kernel, case):
    return await run_kernel_as_agent(tb, DramBackdoor(dut.u_dut.dram, tb.clock.clk), kernel, case, AGENT)


@cocotb.test()
async def test_fused_linear_silu(dut) -> None:
    """Scenario 4: y = silu(x @ w^T) fused: no VFILL in the vector program; bit exact; same as unfused."""
    tb = NocTB(dut, "test_fused_linear_silu")
    v = tb.verdict
    gm, gn, nk = 4, 4, 2
    m, n, k = 4 * gm, 4 * gn, 32 * nk
    case = random_case(np.random.default_rng(tb.seed), m, n, k, kind="scaled")
    fused = build_kernel(m, n, k, gm, gn, nk, silu(Acc()), MM_MESH, form="fused")
    v.check(not any("VFILL" in line for inst in fused.instances for line in inst.vector.lines),
            "the fused vector program contains a VFILL")
    res_f = await _run(tb, dut, fused, case)
    unfused = build_kernel(m, n, k, gm, gn, nk, silu(Acc()), MM_MESH, form="unfused")
    res_u = await _run(tb, dut, unfused, case)
    v.check(np.array_equal(res_f.y, res_u.y), "fused and unfused outputs differ")
    tb.log.info("fused: %s cycles, %s flits; unfused: %s cycles, %s flits",
                res_f.cycles, res_f.flits, res_u.cycles, res_u.flits)
    tb.finish()


@cocotb.test()
async def test_gated_mlp(dut) -> None:
    """Scenario 5: up(x) * silu(gate(x)): two sweeps, first drain lifted, slots at r*span_w, 16 acks."""
    tb = NocTB(dut, "test_gated_mlp")
    v = tb.verdict
    gm, gn, nk = 8, 8, 1
    m, n, k = 4 * gm, 4 * gn, 32 * nk
    case = random_case(np.random.default_rng(tb.seed), m, n, k, accumulators=2, kind="scaled")
    kernel = build_kernel(m, n, k, gm, gn, nk, mul(Acc(0), silu(Acc(1))), MM_MESH, form="fused")
    v.check(kernel.plan.slots == (0, 64), f"slots {kernel.plan.slots}, expected (0, 64) = r * span_w")
    ops = kernel.instances[0].cluster.ops()
    v.check(ops.index("DRAIN") < len(ops) - 1 - ops[::-1].index("GEMM"),
            f"the first drain is not lifted above the second sweep: {ops}")
    res = await _run(tb, dut, kernel, case)
    v.check(res.acks == {MM_MESH.vector_cores[0]: 16}, f"acks {res.acks}, expected 16 (2 x 64 sub-tiles)")
    tb.finish()


# Random epilogues, each with its vector-stage tolerance in FP16 ulps: SiLU's
# is the stated one (None); scaling by a power of two and ReLU are exact in
# E8M15 and stored by one rounding of an exactly representable value (0.5).
EPILOGUES = {
    "silu": (silu(Acc()), None),
    "scale": (mul(Acc(), Const(0.5)), 0.5),
    "relu": (Op("max", (Acc(), Const(0.0))), 0.5),
}


@cocotb.test()
@cocotb.parametrize(trial=[0, 1, 2])
async def test_constrained_random_fused(dut, trial: int) -> None:
    """Scenario 8: random legal shapes, epilogues and operand kinds; fused output bit exact."""
    tb = NocTB(dut, f"test_constrained_random_fused/trial={trial}")
    rng = np.random.default_rng(tb.seed)
    while True:  # draw until the tile stays small (<= 16 sub-tiles keeps a trial short)
        gm, gn, nk = int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 3))
        if gm * gn <= 16:
            break
    name = list(EPILOGUES)[int(rng.integers(0, len(EPILOGUES)))]
    kind = ["integer", "scaled", "mixed"][int(rng.integers(0, 3))]
    m, n, k = 4 * gm, 4 * gn, 32 * nk
    tb.log.info("trial %d: gm=%d gn=%d nk=%d epilogue=%s operands=%s", trial, gm, gn, nk, name, kind)
    case = random_case(rng, m, n, k, kind=kind)
    expr, ulps = EPILOGUES[name]
    kernel = build_kernel(m, n, k, gm, gn, nk, expr, MM_MESH, form="fused")
    await run_kernel_as_agent(tb, DramBackdoor(dut.u_dut.dram, tb.clock.clk), kernel, case, AGENT, ulps)
    tb.finish()
