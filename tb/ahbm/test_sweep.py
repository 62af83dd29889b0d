"""The cocotb half of the AHBM sweeps (run by tb.ahbm.decode_sweep and tb.ahbm.launch_sweep, not by regress).

One test, one point: a launch on the d=128 CUBE (the ahbm_llama bench's top, built by the sweep), through
the same driver, kernel and scoreboard as tb/ahbm/test_ahbm.py (tb/ahbm/case.py, tb/ahbm/kernel.py):
every request's O bit exact against the reference kernel and within tolerance of float64, counts against
the prediction. The point comes from the environment:

  AHBM_SWEEP_TILE      keys per tile (default 64)
  AHBM_SWEEP_B         decode requests in the launch (default 1), each COUNTER tokens, ids REQUEST_ID + r
  AHBM_SWEEP_COUNTER   the requests' context in tokens (default COUNTER, 4,096); the build's WORDS must hold
                       it (tb.ahbm.launch_sweep.slice_words' plan; a slice holds at most 2**18 words with
                       byte addresses, 2**24 with ADDR_SHIFT 6: tb/ahbm/layer.py sizes its builds)
  AHBM_SWEEP_PREFILL   "seq,q_block": a prefill of seq positions on one PE instead of decode
  AHBM_SWEEP_TRACE     1: also write every PE's activity log (the timeline picture)
  AHBM_SWEEP_OUT       the JSON line's file (default sweep_t<tile>.json in the build folder)

It writes one JSON line: the CUBE's parameters, the kernels' first and last cycle (the first rank's PE
clock when they started and when the last PE was idle: tb/ahbm/case.run_launch), the verdict, every PE's raw counters (CubeTB.counters) and,
traced, the activity logs. The sweep drivers turn the counters into their tables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cocotb

from models.ahbm.batch import Request
from tb.ahbm.case import GROUPS, launch_case, report_polls, save_and_finish, score
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import begin_test
from tb.ahbm.decode_sweep import COUNTER, N_PES, REQUEST_ID, point_metrics


def point_requests() -> tuple[list[Request], int, str]:
    """(requests, N, name) of the point the environment names."""
    tile = int(os.environ.get("AHBM_SWEEP_TILE", "64"))
    prefill = os.environ.get("AHBM_SWEEP_PREFILL", "").strip()
    if prefill:
        seq, q_block = (int(x) for x in prefill.split(","))
        return [Request(seq, 0, seq, 0, q_block)], 1, f"prefill_sweep.s{seq}.qb{q_block}.t{tile}"
    b = int(os.environ.get("AHBM_SWEEP_B", "1"))
    counter = int(os.environ.get("AHBM_SWEEP_COUNTER", str(COUNTER)))
    reqs = [Request(counter, counter - 1, 1, REQUEST_ID + r) for r in range(b)]
    ctx = "" if counter == COUNTER else f".s{counter}"  # the default's name as it always was
    return reqs, N_PES, f"decode_sp_sweep.b{b}{ctx}.t{tile}"


@cocotb.test()
async def sweep_point(dut) -> None:
    """One sweep point, scored; the PEs' counters (and activity logs) written as one JSON line."""
    tile = int(os.environ.get("AHBM_SWEEP_TILE", "64"))
    requests, n, name = point_requests()
    out = Path(os.environ.get("AHBM_SWEEP_OUT", f"sweep_t{tile}.json"))
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm_sweep"), name, dut._log)
    case = await launch_case(dut, v, requests, tile, n)
    cube, lp = case.cube, case.batch.first
    d = cube.p["D"]
    art = Artifacts(v.test)
    score(v, case, art, name)
    pes = [lp.pe_of(r) for r in range(n)]
    counters = [cube.counters(p) for p in pes]
    for p, c in zip(pes, counters):
        v.check(c["cnt_comp"] > 0 and c["cyc_last"] > c["cyc_first"],
                f"{name}: PE {p} ran no composite span (cnt_comp {c['cnt_comp']}, cyc_first {c['cyc_first']}, "
                f"cyc_last {c['cyc_last']}): its cycles per tile cannot be measured")
    logs = {}
    if os.environ.get("AHBM_SWEEP_TRACE") == "1":
        for p in pes:
            log, wrapped = cube.activity_log(p)
            v.check(not wrapped, f"{name}: PE {p}'s activity log wrapped: the timeline would miss its start")
            logs[str(p)] = log
    metrics = None
    if not v.failures and n == N_PES and requests[0].tq == 1 and len(requests) == 1:
        metrics = point_metrics(counters, cube.p["DMA_BW"], d, tile)
    rec = {**v.meta(), "tile": tile, "counter": requests[0].counter, "q_start": requests[0].q_start, "n": n,
           "groups": GROUPS, "request_id": requests[0].request_id, "requests": [r.__dict__ for r in requests],
           "params": cube.p, "launch_cycles": case.cycles, "start": case.start, "end": case.end, "pes": pes,
           "counters": counters, "metrics": metrics, "activity": logs,
           "polls": {k: sum(getattr(r, k) for r in case.runs) for k in
                     ("pop_polls", "pop_misses", "misses_covered", "misses_in_flight", "misses_idle")}}
    out.write_text(json.dumps(rec) + "\n")
    report_polls(dut, name, case)
    save_and_finish(v, art)
