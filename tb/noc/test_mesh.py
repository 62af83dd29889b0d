"""Mesh benches: every traffic pattern, with and without hostile stalls, and one saturating hotspot.

Each test injects flits from every endpoint, waits for all of them, and
checks delivery exactly once, at the addressed endpoint, payload intact, in
order per (source, destination), latency not below the XY hop count, no RTL
monitor error, no flit left behind.
"""

from __future__ import annotations

import cocotb

from models.noc import traffic
from tb.lib.harness import StallMode, StallPattern
from tb.noc.bench import NocTB
from tb.noc.patterns import PATTERNS, drawn_stalls, make_pairs

FLITS_PER_SOURCE = 40
# Hostile: the sources' idle mode and the sinks' busy mode are drawn from the test's seed, so seeds cover
# every pair (the coverage model's idle x backpressure, tb/cover/noc.py); never both NONE. RANDOM: a cycle
# with probability 80/256 (~30 %); BURST: with probability 40/256 a stall of 1..16 cycles starts.
HOSTILE_LEVEL = {StallMode.NONE: 0, StallMode.RANDOM: 80, StallMode.BURST: 40}
# The saturated hotspot's flits a source, in FIFOs: on mesh_4x4 (32-deep) 4 filled every source's FIFO in
# each of seeds 1..4, where the patterns' 40 flits a source filled one endpoint's in two seeds.
SATURATE_FIFOS = 4


@cocotb.test()
@cocotb.parametrize(pattern=list(PATTERNS), hostile=[False, True])
async def test_traffic(dut, pattern: str, hostile: bool) -> None:
    """One pattern, free-running or under idle and backpressure patterns drawn from the seed."""
    tb = NocTB(dut, f"test_traffic/pattern={pattern}/hostile={hostile}")
    pairs = make_pairs(pattern, tb.geometry, tb.rng, FLITS_PER_SOURCE)
    idle, busy = drawn_stalls(tb.rng, HOSTILE_LEVEL, HOSTILE_LEVEL) if hostile else (StallPattern(), StallPattern())
    tb.verdict.log.info("stalls: sources idle %s, sinks busy %s", idle, busy)
    result = await tb.run_traffic(pairs, idle=idle, backpressure=busy)
    tb.check_clean(result)
    tb.verdict.finish()


@cocotb.test()
async def test_saturated_hotspot(dut) -> None:
    """Every endpoint sends to one endpoint more flits than the FIFOs on its way can hold: the back-pressure
    must reach the sources (their own input FIFOs fill; the coverage model's `filled` and `... x fifo_full`,
    which the patterns' 40 flits a source cannot reach behind 32-deep FIFOs) and still lose nothing.

    Each source sends SATURATE_FIFOS x FIFO_DEPTH flits; the stall pair is drawn from the seed, quiet
    included. Whether the FIFOs filled is the coverage model's to say, not this test's: the share of the
    one sink each source gets depends on the routers' arbitration."""
    tb = NocTB(dut, "test_saturated_hotspot")
    per_source = SATURATE_FIFOS * int(tb.bench.parameters["FIFO_DEPTH"])
    pairs = traffic.hotspot(tb.geometry, tb.rng, per_source)
    idle, busy = drawn_stalls(tb.rng, HOSTILE_LEVEL, HOSTILE_LEVEL, quiet=True)
    tb.verdict.log.info("%d flits a source to one endpoint; stalls: sources idle %s, sinks busy %s",
                        per_source, idle, busy)
    result = await tb.run_traffic(pairs, idle=idle, backpressure=busy)
    tb.check_clean(result)
    tb.verdict.finish()
