"""Scenario 6: fused vs unfused at 32x64 @ 32x64 (gm=4, gn=8, nk=2) on the four-core machine.

Both forms run through the orchestrator with the host sequence of the
fused-epilogue design (cluster stage; Await the acks on each receiving core;
vector stage). They must give the same y, bit exact against the golden model,
and the test prints one table for both: instruction flits dispatched, DRAM
bytes read and written, temp bytes and simulated cycles. The DRAM saving
must equal 2*M*N*2 bytes.

The reference column is the public compiler's count for the same kernel
(protocol §9, read from its bundles by models/bundle/flit_ledger.py); ours is what
models/programs/ builds (SEED_OURS), and docs/machine.md's "Scenario 6, flit by
flit" (the same block as models/programs/comparison.py's docstring) explains
every flit of difference, unit by unit and role by role.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models.machine.fused_golden import check_bits, golden_y, random_case
from models.machine.layouts import FUSED4
from models.machine.planner import Acc, silu
from models.programs import UPSTREAM_FLITS, build_kernel, operand_images, unpack_tiled
from tb.system.bench import SystemTB

M, N, K, GM, GN, NK = 32, 32, 64, 4, 8, 2


async def _run_form(tb: SystemTB, seq, kernel, case) -> dict:
    """Dispatch one form; return what the comparison table needs."""
    plan, layout = kernel.plan, kernel.layout
    image = operand_images(layout, case["x"], case["ws"], x_scales=case["x_scales"], w_scales=case["w_scales"])
    words = sorted(image)
    await seq.load_words(words[0], [image.get(w, 0) for w in range(words[0], words[-1] + 1)])
    c0 = tb.cycle()
    rd0, wr0 = tb.dram.traffic_bytes()
    results = []
    programs = {where: list(prog.cluster.payloads) for where, prog in zip(plan.instances, kernel.instances)}
    results += (await seq.run_cluster_stage(programs)).values()
    if kernel.form == "fused":
        await seq.await_acks(dict(kernel.counts.acks))
    for where, prog in zip(plan.instances, kernel.instances):
        results.append(await seq.run_program(where.vector_core, prog.vector.payloads(),
                                             what=f"vector stage on {where.vector_core}"))
    # Measured on the machine: the completions each unit credited to its NODE_STATUS
    # slot, one per CU_INST it executed (the acks of the receiving cores were
    # taken before each program's baseline).
    flits = sum((r.status.count - r.baseline) % 0x10000 for r in results)
    out = await seq.read_words(layout.y_base // 32, layout.y_bytes // 32)
    rd1, wr1 = tb.dram.traffic_bytes()
    return {"y": unpack_tiled(out, plan.m, plan.n, plan.gm, plan.gn), "flits": flits,
            "cycles": tb.cycle() - c0, "counts": kernel.counts, "read": rd1 - rd0, "written": wr1 - wr0}


@cocotb.test()
async def test_fused_vs_unfused(dut) -> None:
    """Same output from both forms; the table of flits, DRAM bytes, temp bytes and cycles."""
    tb = SystemTB(dut, "test_fused_vs_unfused")

    async def body() -> None:
        seq = await tb.start()
        v, art = tb.verdict, tb.artifacts
        case = random_case(tb.np_rng, M, N, K, kind="scaled")
        epilogue = silu(Acc())
        gold = golden_y(case["x"], case["ws"], epilogue, x_scales=case["x_scales"], w_scales=case["w_scales"])
        rows = {}
        for form in ("fused", "unfused"):
            kernel = build_kernel(M, N, K, GM, GN, NK, epilogue, FUSED4, form=form)
            r = await _run_form(tb, seq, kernel, case)
            mism = check_bits(gold, r["y"])
            v.add_checks(gold.size, [f"{form}: {e}" for e in mism[:10]])
            c = kernel.counts
            v.check((r["read"], r["written"]) == (c.dram_read, c.dram_written),
                    f"{form}: DRAM traffic measured {r['read']} B read / {r['written']} B written, the program "
                    f"builder counted {c.dram_read} / {c.dram_written}")
            v.check(r["flits"] == kernel.counts.total_flits,
                    f"{form}: the units completed {r['flits']} instructions, the program builder counted "
                    f"{kernel.counts.total_flits}")
            rows[form] = r
            art.add(f"obs_y_{form}", r["y"].astype(np.uint16))
            art.add(f"exp_y_{form}", gold.astype(np.uint16))
            art.count(f"flits_{form}", kernel.counts.total_flits, r["flits"])
        v.check(np.array_equal(rows["fused"]["y"], rows["unfused"]["y"]), "fused and unfused outputs differ")
        f, u = rows["fused"], rows["unfused"]
        saving = (u["read"] + u["written"]) - (f["read"] + f["written"])  # measured by the DRAM model
        v.check(saving == 2 * M * N * 2, f"DRAM saving {saving} bytes, expected 2*M*N*2 = {2 * M * N * 2}")
        art.count("dram_saving", 2 * M * N * 2, saving)
        art.add("x", np.asarray(case["x"], np.int8))
        art.add("w", np.asarray(case["ws"][0], np.int8))
        header = f"{'form':8s} {'inst flits':>10s} {'reference':>9s} {'DRAM read':>9s} {'written':>8s} " \
                 f"{'temp B':>7s} {'cycles':>7s}"
        lines = [header]
        for form, r in rows.items():
            c = r["counts"]
            lines.append(f"{form:8s} {r['flits']:10d} {UPSTREAM_FLITS[form]:9d} {r['read']:9d} "
                         f"{r['written']:8d} {c.temp_bytes:7d} {r['cycles']:7d}")
        lines.append(f"DRAM saving {saving} B = 2*M*N*2; every flit of difference from the reference is explained "
                     f"in docs/machine.md, 'Scenario 6, flit by flit' (python -m models.bundle.flit_ledger)")
        for line in lines:
            tb.log.info("REPORT %s", line)

    await tb.guard(body, max_cycles=400_000)
