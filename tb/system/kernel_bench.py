"""Run a whole (fused or unfused) kernel on a machine where the bench plays the agent.

The host sequence of the fused-epilogue design, with the bench's endpoint bank
as the agent: load the operands into DRAM in bulk; dispatch every instance's
cluster program; wait for every completion and, for the fused form, every
acknowledgement the receiving cores owe (equality: a surplus fails as surely
as a shortfall); then dispatch the vector programs; read y back in bulk and
compare it with the golden model bit for bit and with float64 within the
stated bound.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from models.cu.base import SigCode, cu_inst, signal_fields
from models.noc.flit import FlitType, flit_field
from models.machine.fused_bounds import end_to_end_failures
from models.machine.fused_golden import check_bits, golden_y
from models.programs import KernelPrograms, operand_images, unpack_tiled
from tb.mag.dram import DramBackdoor
from tb.noc.bench import NocTB

TXN = 0x40
LAND_CYCLES = 500  # a memory DRAIN retires when its flits leave, not when they land


@dataclass
class KernelResult:
    """What a kernel run produced, for checks and for artifacts.npz."""

    y: np.ndarray  # (M, N) FP16 bit patterns read back from DRAM
    golden: np.ndarray
    acks: dict[tuple[int, int], int] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    cycles: dict[str, int] = field(default_factory=dict)
    flits: dict[str, int] = field(default_factory=dict)


def _src(flit: int) -> tuple[int, int]:
    return flit_field(flit, "src_x"), flit_field(flit, "src_y")


async def _load_dram(dram: DramBackdoor, image: dict[int, int]) -> None:
    """One bulk load per run of consecutive words."""
    words = sorted(image)
    start = 0
    for i in range(1, len(words) + 1):
        if i == len(words) or words[i] != words[i - 1] + 1:
            first = words[start]
            await dram.load_words(first, [image[w] for w in words[start:i]])
            start = i


async def run_kernel_as_agent(tb: NocTB, dram: DramBackdoor, kernel: KernelPrograms, case: dict,
                              agent: tuple[int, int], vector_ulps: float | None = None) -> KernelResult:
    """Run `kernel` on tb's machine with the bench at `agent`, and check y. Checks go to tb.verdict.

    vector_ulps: the vector stage's tolerance for the float64 check when the
    epilogue has no stated one in models.machine.fused_bounds (e.g. 0.5 for an exact one).
    """
    v = tb.verdict
    plan, layout = kernel.plan, kernel.layout
    port = tb.geometry.port_index(agent)
    await tb.reset()
    await _load_dram(dram, operand_images(layout, case["x"], case["ws"], x_scales=case["x_scales"],
                                          w_scales=case["w_scales"]))

    # ---- cluster stage (no reset from here on: the DRAM image must stay)
    pairs = list(zip(plan.instances, kernel.instances))  # placement, programs
    stage1 = [cu_inst(where.cluster, agent, TXN, 0, p) for where, prog in pairs for p in prog.cluster.payloads]
    want_acks = dict(kernel.counts.acks)
    expect = len(stage1) + sum(want_acks.values())
    run1 = await tb.run_streams({port: stage1}, expect_total=expect, reset=False)
    v.check(run1.outcome.ended == "done", f"cluster stage ended by {run1.outcome.ended}")
    got_acks = Counter(_src(r.flit) for r in run1.records if flit_field(r.flit, "type") == FlitType.CU_SIGNAL
                       and signal_fields(r.flit)[0] == SigCode.DATA_RECEIVED)
    for core, n in want_acks.items():
        v.check(got_acks.get(core, 0) == n, f"core {core}: {got_acks.get(core, 0)} acks, expected {n}")
    v.check(set(got_acks) <= set(want_acks), f"acks from cores that were not drained into: {dict(got_acks)}")
    faults = [f"{_src(r.flit)} fault arg {signal_fields(r.flit)[1]}" for r in run1.records
              if flit_field(r.flit, "type") == FlitType.CU_SIGNAL and signal_fields(r.flit)[0] == SigCode.FAULT]
    if kernel.form == "unfused":
        await tb.bank.settle(LAND_CYCLES)

    # ---- vector stage
    stage2 = [cu_inst(where.vector_core, agent, TXN, 0, p) for where, prog in pairs for p in prog.vector.payloads()]
    run2 = await tb.run_streams({port: stage2}, expect_total=len(stage2), reset=False)
    v.check(run2.outcome.ended == "done", f"vector stage ended by {run2.outcome.ended}")
    faults += [f"{_src(r.flit)} fault arg {signal_fields(r.flit)[1]}" for r in run2.records
               if flit_field(r.flit, "type") == FlitType.CU_SIGNAL and signal_fields(r.flit)[0] == SigCode.FAULT]
    v.check(not faults, f"units faulted: {faults}")
    await tb.bank.settle(LAND_CYCLES)

    words = await dram.read_words(layout.y_base // 32, layout.y_bytes // 32)
    y = unpack_tiled(words, plan.m, plan.n, plan.gm, plan.gn)
    gold = golden_y(case["x"], case["ws"], kernel.epilogue, x_scales=case["x_scales"], w_scales=case["w_scales"])
    mismatches = check_bits(gold, y)
    v.add_checks(y.size, mismatches[:10])
    bound = end_to_end_failures(y, case["x"], case["ws"], kernel.epilogue, x_scales=case["x_scales"],
                                w_scales=case["w_scales"], vector_ulps=vector_ulps)
    v.add_checks(y.size, bound)
    v.check(run1.mon_err == run2.mon_err == 0, "an RTL monitor raised mon_err")
    art = tb.artifacts
    tag = kernel.form
    art.add("x", np.asarray(case["x"], np.int8))
    for r, w in enumerate(case["ws"]):
        art.add(f"w{r}", np.asarray(w, np.int8))
    art.add("shape", np.array([plan.m, plan.n, plan.k, plan.gm, plan.gn, plan.nk], np.int64))
    art.add(f"exp_y_{tag}", gold.astype(np.uint16))
    art.add(f"obs_y_{tag}", y.astype(np.uint16))
    for core, n in want_acks.items():
        art.count(f"acks_{tag}_{core[0]}_{core[1]}", n, got_acks.get(core, 0))
    # measured: the completions the units sent back, one per instruction they executed
    done = sum(1 for r in run1.records + run2.records if flit_field(r.flit, "type") == FlitType.CU_SIGNAL
               and signal_fields(r.flit)[0] in (SigCode.INST_COMPLETE, SigCode.BATCH_COMPLETE))
    v.check(done == kernel.counts.total_flits == len(stage1) + len(stage2),
            f"{done} completions for {len(stage1) + len(stage2)} instructions dispatched "
            f"(the program builder counted {kernel.counts.total_flits})")
    art.count(f"flits_{tag}", kernel.counts.total_flits, done)
    return KernelResult(y=y, golden=gold, acks=dict(got_acks), faults=faults,
                        cycles={"cluster_stage": run1.outcome.cycles, "vector_stage": run2.outcome.cycles},
                        flits={"cluster": len(stage1), "vector": len(stage2)})
