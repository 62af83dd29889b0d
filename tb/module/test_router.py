"""Module bench of one router: hostile traffic on all five ports, and its link monitors.

The router sits alone in router_harness with a bench endpoint on every port;
all five ports face endpoints, so any destination among the five is legal.
"""

from __future__ import annotations

import cocotb

from tb.lib.harness import StallMode, StallPattern, Violation
from tb.lib.noc_tb import NocTB
from tb.lib.patterns import make_pairs

HOSTILE_IDLE = StallPattern(StallMode.RANDOM, 64)
HOSTILE_BUSY = StallPattern(StallMode.RANDOM, 128)
BURSTY_BUSY = StallPattern(StallMode.BURST, 64)


@cocotb.test()
@cocotb.parametrize(
    pattern=["uniform", "hotspot", "self"],
    stalls=["none", "random", "bursts"],
)
async def test_traffic(dut, pattern: str, stalls: str) -> None:
    """Random traffic into all five inputs with random busy on all five outputs."""
    tb = NocTB(dut, f"test_traffic/pattern={pattern}/stalls={stalls}")
    pairs = make_pairs(pattern, tb.geometry, tb.rng, 300)
    idle = {"none": StallPattern(), "random": HOSTILE_IDLE, "bursts": HOSTILE_IDLE}[stalls]
    busy = {"none": StallPattern(), "random": HOSTILE_BUSY, "bursts": BURSTY_BUSY}[stalls]
    result = await tb.run_traffic(pairs, idle=idle, backpressure=busy)
    tb.check_clean(result)
    tb.verdict.finish()


@cocotb.test()
@cocotb.parametrize(violation=[Violation.WITHDRAW, Violation.CHANGE])
async def test_link_monitor_catches_sender(dut, violation: Violation) -> None:
    """A source that withdraws or changes a held flit must raise the router's mon_err."""
    tb = NocTB(dut, f"test_link_monitor_catches_sender/violation={violation.name}")
    # Everything to one port under heavy busy, so flits are certainly held.
    pairs = make_pairs("hotspot", tb.geometry, tb.rng, 30)
    result = await tb.run_traffic(pairs, backpressure=StallPattern(StallMode.RANDOM, 200),
                                  violation=violation)
    v = tb.verdict
    v.check(result.mon_err == 1, f"{violation.name}: the link monitor did not raise mon_err")
    if violation == Violation.CHANGE:
        # The changed flit is delivered with a payload nobody sent: the scoreboard must see it.
        v.check(not result.report.passed, "a flit changed in flight passed the scoreboard")
    else:
        # A withdrawn flit is re-offered unchanged, so nothing is lost.
        v.check(result.report.passed, "a withdrawn-and-reoffered flit upset the scoreboard: "
                + "; ".join(result.report.errors[:3]))
    v.finish()
