"""Mesh benches: every traffic pattern, with and without hostile stalls.

Each test injects a few hundred flits from every endpoint, waits for all of
them, and checks delivery exactly once, at the addressed endpoint, payload
intact, in order per (source, destination), latency not below the XY hop
count, no RTL monitor error, no flit left behind.
"""

from __future__ import annotations

import cocotb

from tb.lib.harness import StallMode, StallPattern
from tb.lib.noc_tb import NocTB
from tb.lib.patterns import PATTERNS, drawn_stalls, make_pairs

FLITS_PER_SOURCE = 40
# Hostile: the sources' idle mode and the sinks' busy mode are drawn from the test's seed, so seeds cover
# every pair (the coverage model's idle x backpressure, tb/cover/noc.py); never both NONE. RANDOM: a cycle
# with probability 80/256 (~30 %); BURST: with probability 40/256 a stall of 1..16 cycles starts.
HOSTILE_LEVEL = {StallMode.NONE: 0, StallMode.RANDOM: 80, StallMode.BURST: 40}


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
