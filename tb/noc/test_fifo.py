"""Module bench of noc_fifo: a Python model in lock step, and its monitor.

The FIFO is driven cycle by cycle from Python on purpose (a careless writer and
reader must be expressible), which is fine for these short runs; long runs in
this project never await every edge.
"""

from __future__ import annotations

import os
import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from tb.lib.harness import HarnessClock
from tb.lib.verdict import Verdict, begin_test


def _tb(dut, name: str) -> tuple[HarnessClock, Verdict, random.Random]:
    verdict = begin_test(os.environ.get("AGSIM_BENCH", "fifo"), name, dut._log)
    return HarnessClock(dut.u_clk), verdict, random.Random(verdict.seed)


async def _step(dut, push: bool, pop: bool, din: int) -> None:
    """Drive one cycle's inputs away from the clock edge, then let the edge happen."""
    await FallingEdge(dut.u_clk.clk)
    dut.push.value = int(push)
    dut.pop.value = int(pop)
    dut.din.value = din
    await RisingEdge(dut.u_clk.clk)


@cocotb.test()
async def test_random_against_model(dut) -> None:
    """Random careful push/pop for 3000 cycles: order, full and empty match a model."""
    clock, v, rng = _tb(dut, "test_random_against_model")
    await clock.reset()
    depth = int(dut.DEPTH.value)
    model: deque[int] = deque()
    for cycle in range(3000):
        await FallingEdge(dut.u_clk.clk)
        v.check(bool(int(dut.full.value)) == (len(model) == depth), f"cycle {cycle}: full flag wrong")
        v.check(bool(int(dut.empty.value)) == (len(model) == 0), f"cycle {cycle}: empty flag wrong")
        if model:
            v.check(int(dut.dout.value) == model[0], f"cycle {cycle}: head {int(dut.dout.value):#x} != {model[0]:#x}")
        push = rng.random() < 0.55 and len(model) < depth
        pop = rng.random() < 0.5 and len(model) > 0
        din = rng.getrandbits(288)
        dut.push.value = int(push)
        dut.pop.value = int(pop)
        dut.din.value = din
        await RisingEdge(dut.u_clk.clk)
        if pop:
            model.popleft()
        if push:
            model.append(din)
    await _step(dut, False, False, 0)
    v.cycles = 3000
    v.check(int(dut.mon_err.value) == 0, "monitor fired on legal traffic")
    v.finish()


@cocotb.test()
async def test_monitor_write_while_full(dut) -> None:
    """A writer that ignores full must raise mon_err, and no stored flit may change."""
    clock, v, rng = _tb(dut, "test_monitor_write_while_full")
    await clock.reset()
    depth = int(dut.DEPTH.value)
    stored = [rng.getrandbits(288) for _ in range(depth)]
    for word in stored:
        await _step(dut, True, False, word)
    v.check(int(dut.mon_err.value) == 0, "monitor fired before the fault")
    await _step(dut, True, False, rng.getrandbits(288))  # the violation
    await _step(dut, False, False, 0)
    v.check(int(dut.mon_err.value) == 1, "write while full did not raise mon_err")
    for word in stored:
        await FallingEdge(dut.u_clk.clk)
        v.check(int(dut.dout.value) == word, "a stored flit was overwritten by the refused write")
        dut.pop.value = 1
        await RisingEdge(dut.u_clk.clk)
    await _step(dut, False, False, 0)
    v.cycles = 2 * depth + 4
    v.finish()


@cocotb.test()
async def test_monitor_pop_while_empty(dut) -> None:
    """A reader that pops an empty FIFO must raise mon_err."""
    clock, v, _ = _tb(dut, "test_monitor_pop_while_empty")
    await clock.reset()
    await _step(dut, False, False, 0)
    v.check(int(dut.mon_err.value) == 0, "monitor fired before the fault")
    await _step(dut, False, True, 0)
    await _step(dut, False, False, 0)
    v.check(int(dut.mon_err.value) == 1, "pop while empty did not raise mon_err")
    await clock.reset()
    v.check(int(dut.mon_err.value) == 0, "reset did not clear the sticky monitor flag")
    v.cycles = 12
    v.finish()
