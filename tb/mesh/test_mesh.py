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
from tb.lib.patterns import PATTERNS, make_pairs

FLITS_PER_SOURCE = 40
# Hostile: sources idle ~30% of cycles; sinks busy in bursts of 1..16 cycles.
HOSTILE_IDLE = StallPattern(StallMode.RANDOM, 80)
HOSTILE_BUSY = StallPattern(StallMode.BURST, 40)


@cocotb.test()
@cocotb.parametrize(pattern=list(PATTERNS), hostile=[False, True])
async def test_traffic(dut, pattern: str, hostile: bool) -> None:
    """One pattern, free-running or under random idle and backpressure."""
    tb = NocTB(dut, f"test_traffic/pattern={pattern}/hostile={hostile}")
    pairs = make_pairs(pattern, tb.geometry, tb.rng, FLITS_PER_SOURCE)
    result = await tb.run_traffic(
        pairs,
        idle=HOSTILE_IDLE if hostile else StallPattern(),
        backpressure=HOSTILE_BUSY if hostile else StallPattern(),
    )
    tb.check_clean(result)
    tb.verdict.finish()
