"""The cocotb half of the AHBM decode sweep (run by tb.perf.ahbm_sweep, not by regress).

One test: one decode-with-SP launch on the d=128 CUBE (the ahbm_llama bench's
top and parameters, PREFETCH set per build by the sweep), N = 8 PEs, G = 8,
a context of tb.perf.ahbm_sweep.COUNTER tokens, through the same driver,
kernel and scoreboard as tb/system/test_ahbm.py (tb/lib/ahbm_case.py) (O bit exact against the
reference kernel and within tolerance of float64, counts against the
prediction). The tile size is a kernel argument, read from AHBM_SWEEP_TILE.

It then writes one JSON line to AHBM_SWEEP_OUT (default: sweep_t<tile>.json in
the build folder): the CUBE's parameters, the launch's total cycles, the
verdict and every PE's raw counters (Cube.counters). The sweep driver turns the
counters into the table's metrics (tb.perf.ahbm_sweep.point_metrics); the
same metrics are in the line too, for a reader of the file alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb

from models.ahbm import batch as bt
from tb.lib.ahbm_case import launch_case, save_and_finish, score
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import begin_test
from tb.perf.ahbm_sweep import COUNTER, GROUPS, N_PES, REQUEST_ID, point_metrics


@cocotb.test()
async def decode_sp_sweep_point(dut) -> None:
    """Decode with SP (N=8, depth-3 tree) over a >= 4096-token context at one tile size, scored;
    the PEs' counters written as one JSON line."""
    tile = int(os.environ.get("AHBM_SWEEP_TILE", "64"))
    out = Path(os.environ.get("AHBM_SWEEP_OUT", f"sweep_t{tile}.json"))
    name = f"decode_sp_sweep.t{tile}"
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm_sweep"), name, dut._log)
    q_start = COUNTER - 1
    case = await launch_case(dut, v, [bt.Request(COUNTER, q_start, 1, REQUEST_ID)], tile=tile, n=N_PES)
    cube, lp = case.cube, case.batch.first
    d = cube.p["D"]
    art = Artifacts(v.test)
    score(v, case, art, name)

    counters = [cube.counters(lp.pe_of(r)) for r in range(N_PES)]
    pes = [lp.pe_of(r) for r in range(N_PES)]
    for p, c in zip(pes, counters):
        v.check(c["cnt_comp"] > 0 and c["cyc_last"] > c["cyc_first"],
                f"{name}: PE {p} ran no composite span (cnt_comp {c['cnt_comp']}, cyc_first {c['cyc_first']}, "
                f"cyc_last {c['cyc_last']}): its cycles per tile cannot be measured")
        v.check(c["dma_busy"] > 0, f"{name}: PE {p} counted no DMA transfer cycle")
    metrics = None
    if not v.failures:
        metrics = point_metrics(counters, cube.p["DMA_BW"], d, tile)
    rec = {**v.meta(), "tile": tile, "counter": COUNTER, "q_start": q_start, "n": N_PES, "groups": GROUPS,
           "request_id": REQUEST_ID, "params": cube.p, "launch_cycles": v.cycles, "pes": pes,
           "counters": counters, "metrics": metrics}
    out.write_text(json.dumps(rec) + "\n")
    if metrics is not None:
        dut._log.info("REPORT %s: PREFETCH=%d tile=%d: %.1f cycles/tile (roofline %d, ratio %.3f), DMA %.1f%% "
                      "of peak over the span, compute hidden %.1f%%, launch %d cycles", name,
                      cube.p["PREFETCH"], tile, metrics["cyc_per_tile"], metrics["roofline"], metrics["ratio"],
                      100 * metrics["dma_frac"], 100 * metrics["hidden_frac"], v.cycles)
    save_and_finish(v, art)
