"""The cocotb half of the speed benchmark (run by tb.perf.compare, not by regress).

One long free-running uniform-random run on the mesh_4x4 bench: every Local
endpoint sends TOTAL_FLITS / 16 flits to uniformly chosen other endpoints, no
idle cycles, no backpressure, full scoreboard. The inj.hex / inj_meta.hex it
leaves in its working folder are the stimulus of the pure-Verilog run.
"""

from __future__ import annotations

import os
import time

import cocotb

from tb.noc.bench import NocTB

# flits in all (tb/perf/compare.py PERF_FLITS), spread evenly over the 16 Local endpoints of mesh_4x4
TOTAL_FLITS = int(os.environ.get("AGSIM_PERF_FLITS", "20000"))


def per_source_uniform(endpoints: list[int], rng, per_source: int) -> list[tuple[int, int]]:
    """Exactly `per_source` flits from every endpoint, each to a uniformly chosen other one.

    Round-major (one flit per source per round) so the order in which flits are
    listed never starves a source.
    """
    others = {src: [e for e in endpoints if e != src] or [src] for src in endpoints}
    return [(src, rng.choice(others[src])) for _ in range(per_source) for src in endpoints]


@cocotb.test()
async def test_uniform(dut) -> None:
    """TOTAL_FLITS flits of uniform random traffic, free-running, scored end to end."""
    tb = NocTB(dut, "test_uniform")
    endpoints = tb.geometry.endpoints()
    pairs = per_source_uniform(endpoints, tb.rng, TOTAL_FLITS // len(endpoints))
    t0 = time.perf_counter()
    result = await tb.run_traffic(pairs)
    t1 = time.perf_counter()
    tb.check_clean(result)
    tb.log.info("perf: run_traffic %.2fs (stimulus, load, simulate, dump, scoreboard), "
                "checks %.3fs, %d flits, %d cycles",
                t1 - t0, time.perf_counter() - t1, result.expected, result.outcome.cycles)
    tb.verdict.finish()
