"""Module bench of one router: hostile traffic on all five ports, its link monitors and its timing.

The router sits alone in router_harness with a bench endpoint on every port;
all five ports face endpoints, so any destination among the five is legal.
The timing tests measure upstream KohakuTPU's router timing (noc_inport.v,
noc_outport.v): 3 cycles a hop, one flit per cycle per port, and the
round-robin pointer that advances every cycle, granted or not.
"""

from __future__ import annotations

import cocotb

from models.noc.flit import FIELDS

from tb.lib.harness import StallMode, StallPattern, Violation
from tb.noc.bench import NocTB
from tb.noc.patterns import drawn_stalls, make_pairs

HOP_CYCLES = 3  # upstream's hop: input FIFO write, holding register, output register
RR_INPUTS = 5  # the round-robin pointer walks the five inputs, one step a cycle
HOSTILE_IDLE = StallPattern(StallMode.RANDOM, 64)
BURSTY_BUSY = StallPattern(StallMode.BURST, 64)
# stalls="random": each side's mode drawn from the test's seed (tb.noc.patterns.drawn_stalls)
RANDOM_IDLE = {StallMode.NONE: 0, StallMode.RANDOM: 64, StallMode.BURST: 40}
RANDOM_BUSY = {StallMode.NONE: 0, StallMode.RANDOM: 128, StallMode.BURST: 64}


@cocotb.test()
@cocotb.parametrize(
    pattern=["uniform", "hotspot", "self"],
    stalls=["none", "random", "bursts"],
)
async def test_traffic(dut, pattern: str, stalls: str) -> None:
    """Random traffic into all five inputs, free-running, under idle and busy modes drawn from the seed
    (random), or under random idle and bursts of busy on all five outputs (bursts)."""
    tb = NocTB(dut, f"test_traffic/pattern={pattern}/stalls={stalls}")
    pairs = make_pairs(pattern, tb.geometry, tb.rng, 300)
    idle, busy = {"none": (StallPattern(), StallPattern()), "bursts": (HOSTILE_IDLE, BURSTY_BUSY)}.get(stalls) \
        or drawn_stalls(tb.rng, RANDOM_IDLE, RANDOM_BUSY)
    tb.verdict.log.info("stalls: sources idle %s, sinks busy %s", idle, busy)
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


def _capture_cycles(result, port: int) -> list[int]:
    return [r.cycle for r in result.records if r.port == port]


@cocotb.test()
async def test_hop_timing(dut) -> None:
    """Every port sends itself a flit every cycle, nothing stalls: each flit takes exactly HOP_CYCLES from
    its injection to its capture, and every port delivers on consecutive cycles (one flit per cycle per
    port each way; a slower port would queue and lengthen the later latencies)."""
    tb = NocTB(dut, "test_hop_timing")
    v = tb.verdict
    per_port = 100
    pairs = make_pairs("self", tb.geometry, tb.rng, per_port)
    result = await tb.run_traffic(pairs)
    tb.check_clean(result)
    rep = result.report
    v.check(rep.latency_min == rep.latency_max == HOP_CYCLES,
            f"hop latency min/max {rep.latency_min}/{rep.latency_max} cycles, expected exactly {HOP_CYCLES}")
    for port in tb.geometry.endpoints():
        cycles = _capture_cycles(result, port)
        v.check(len(cycles) == per_port and cycles[-1] - cycles[0] == per_port - 1,
                f"port {port}: {len(cycles)} flits delivered over cycles {cycles[:1]}..{cycles[-1:]}, expected "
                f"{per_port} on consecutive cycles")
    tb.log.info("measured: %d flits a port, latency %d..%d cycles, one flit per cycle per port",
                per_port, rep.latency_min, rep.latency_max)
    v.finish()


@cocotb.test()
async def test_round_robin_advances_every_cycle(dut) -> None:
    """North (input 0) and East (input 1) both stream to Local. The pointer moves every cycle, granted or
    not, so of every RR_INPUTS cycles North wins the four whose pointer is at 0, 2, 3 or 4 and East only
    the one at 1: North gets 4 of every 5 grants while both wait (a pointer that moved past the last
    grant would alternate them, 1 of 2)."""
    tb = NocTB(dut, "test_round_robin_advances_every_cycle")
    v = tb.verdict
    g = tb.geometry
    north, east, local = g.port_index((1, 0)), g.port_index((2, 1)), g.port_index((1, 1))
    n = 100
    result = await tb.run_traffic([(north, local)] * n + [(east, local)] * n)
    tb.check_clean(result)
    north_xy = g.port_coord(north)
    by_src = ["N" if (FIELDS["src_x"].extract(r.flit), FIELDS["src_y"].extract(r.flit)) == north_xy else "E"
              for r in result.records if r.port == local]
    north_share = by_src[:n].count("N")
    want = n * (RR_INPUTS - 1) // RR_INPUTS
    v.check(abs(north_share - want) <= 1,
            f"North took {north_share} of the first {n} grants at Local, expected {want} (4 of 5) +- 1")
    cycles = _capture_cycles(result, local)
    v.check(cycles[-1] - cycles[0] == 2 * n - 1, f"Local delivered {2 * n} flits over {cycles[-1] - cycles[0] + 1} "
                                                 f"cycles, expected one a cycle")
    tb.log.info("measured: North %d of the first %d grants at Local while both streamed", north_share, n)
    v.finish()
