"""Impossible-turn monitor self-test (bench router_turn: North and East face 'routers').

A flit arriving on a port that faces a neighbouring router and then turning
from Y to X cannot happen under XY routing; the router must report it.
"""

from __future__ import annotations

import cocotb

from tb.noc.bench import NocTB


@cocotb.test()
async def test_legal_traffic_is_quiet(dut) -> None:
    """Traffic entering only on endpoint-facing ports passes with no monitor error."""
    tb = NocTB(dut, "test_legal_traffic_is_quiet")
    g = tb.geometry
    router_sides = {g.port_index((1, 0)), g.port_index((2, 1))}
    others = [p for p in g.endpoints() if p not in router_sides]
    pairs = [(s, tb.rng.choice(g.endpoints())) for _ in range(50) for s in others]
    result = await tb.run_traffic(pairs)
    tb.check_clean(result)
    tb.verdict.finish()


@cocotb.test()
async def test_y_to_x_turn_is_reported(dut) -> None:
    """A flit from North (a router side) asking for East (a router side) raises mon_err."""
    tb = NocTB(dut, "test_y_to_x_turn_is_reported")
    g = tb.geometry
    pairs = [(g.port_index((1, 0)), g.port_index((2, 1)))]
    result = await tb.run_traffic(pairs)
    v = tb.verdict
    v.check(result.mon_err == 1, "an impossible Y-to-X turn did not raise mon_err")
    v.check(result.report.passed, "the flit itself should still be delivered: "
            + "; ".join(result.report.errors[:3]))
    v.finish()


@cocotb.test()
async def test_u_turn_is_reported(dut) -> None:
    """A flit from North (a router side) asking to go back North raises mon_err."""
    tb = NocTB(dut, "test_u_turn_is_reported")
    g = tb.geometry
    north = g.port_index((1, 0))
    result = await tb.run_traffic([(north, north)])
    tb.verdict.check(result.mon_err == 1, "an impossible U-turn did not raise mon_err")
    tb.verdict.finish()


@cocotb.test()
async def test_turn_into_edge_endpoint_is_legal(dut) -> None:
    """From North (a router side) out West to an edge endpoint is an ejection: no error.

    This is the last hop of a route to an east/west edge endpoint after the
    Y leg (clamped X, then Y, then the outward hop); the monitor must allow it.
    """
    tb = NocTB(dut, "test_turn_into_edge_endpoint_is_legal")
    g = tb.geometry
    result = await tb.run_traffic([(g.port_index((1, 0)), g.port_index((0, 1)))] * 5)
    tb.check_clean(result)
    tb.verdict.finish()
