"""The orchestrator's assertion monitors (rtl/orch/orchestrator.v), each fed the misuse it must report.

Bench orch_monitors, on the orch bench's top (orch_harness: the orchestrator on
(1,1) of a 2x2 mesh, a DIRECT bank port wired straight to it): a host that
breaks an AXI handshake, kicks past the staging RAM or while a dispatch runs,
more INST_COMPLETE than credits, a flit delivered to the wrong node, an
output held busy too long. Each test runs under a simulated-time watchdog and
ends with one verdict.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from models.cu.base import SigCode, signal_flit
from models.noc.flit import FlitType
from models.orch.host_port import Reg
from tb.lib.harness import StallMode, StallPattern
from tb.orch.bench import OrchTB


async def _drive(dut, **pins: int) -> None:
    """Set host pins between clock edges, then let one rising edge happen."""
    await FallingEdge(dut.u_clk.clk)
    for name, value in pins.items():
        getattr(dut, f"s_axil_{name}").value = value
    await RisingEdge(dut.u_clk.clk)


@cocotb.test()
async def test_monitor_axi_handshake(dut) -> None:
    """A host that drops VALID before READY, or changes the payload while waiting, is reported."""
    tb = OrchTB(dut, "test_monitor_axi_handshake")  # pins driven directly: no AxiLiteMaster here

    async def body() -> None:
        v = tb.verdict
        # AW: the first address is taken; with no W data the second one waits, then is withdrawn.
        await tb.reset()
        await _drive(dut, awvalid=1, awaddr=Reg.PROG_LEN, bready=1)
        await _drive(dut, awvalid=1, awaddr=Reg.PROG_DST)
        v.check(int(dut.s_axil_awready.value) == 0, "AWREADY should be low with a write address pending")
        await _drive(dut, awvalid=1)
        v.check(tb.mon_err == 0, "monitor fired while the host held AWVALID")
        await _drive(dut, awvalid=0)
        await _drive(dut)
        v.check(tb.mon_err == 1, "AWVALID dropped before AWREADY did not raise mon_err")
        await _drive(dut, wvalid=1, wdata=3, wstrb=0xFF)   # finish the write cleanly
        await _drive(dut, wvalid=0)
        await tb.idle(5)
        v.check(tb.mon_err == 1, "mon_err is not sticky")

        # W: a write goes through (W is taken only the cycle after its AW); the next data beat, with no
        # address, waits and its data changes under it.
        await tb.reset()
        v.check(tb.mon_err == 0, "reset did not clear mon_err")
        await _drive(dut, awvalid=1, awaddr=Reg.PROG_LEN, wvalid=1, wdata=1, wstrb=0xFF, bready=1)
        await _drive(dut, awvalid=0, wvalid=1, wdata=1)
        await _drive(dut, wvalid=1, wdata=2)
        await _drive(dut, wvalid=1, wdata=2)
        v.check(tb.mon_err == 0, "monitor fired while the host held W steady")
        await _drive(dut, wvalid=1, wdata=5)
        await _drive(dut, wvalid=0)
        v.check(tb.mon_err == 1, "W payload changed while waiting did not raise mon_err")

        # AR: with RREADY low the first read's data waits; the second address is withdrawn.
        # The orchestrator's own R channel must hold steady meanwhile (no error from its side).
        await tb.reset()
        await _drive(dut, arvalid=1, araddr=Reg.CAPS, rready=0)
        await _drive(dut, arvalid=1, araddr=Reg.SIG_DONE)
        for _ in range(3):
            await _drive(dut)
        v.check(tb.mon_err == 0, "monitor fired while RVALID waited for RREADY (legal)")
        await _drive(dut, arvalid=0)
        await _drive(dut)
        v.check(tb.mon_err == 1, "ARVALID dropped before ARREADY did not raise mon_err")
        await _drive(dut, rready=1)
        await _drive(dut, rready=0)

    await tb.guard(body, 2_000)


@cocotb.test()
async def test_monitor_dispatch_misuse(dut) -> None:
    """A kick past the staging RAM, or while a dispatch runs, is reported and ignored."""
    tb = OrchTB(dut, "test_monitor_dispatch_misuse")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        await h.dispatch((2, 2), tb.slots - 6, 10, 10)
        await tb.idle(100)
        stat = await h.prog_stat()
        v.check(tb.mon_err == 1, "a dispatch past the staging RAM did not raise mon_err")
        v.check(not stat.run and stat.left == 0, f"a refused dispatch started anyway: {stat}")
        v.check(int(tb.bank.h.cap_count.value) == 0, "a refused dispatch sent flits")

        await tb.reset()
        v.check(tb.mon_err == 0, "reset did not clear mon_err")
        staged = [tb.random_flit(FlitType.CU_INST) for _ in range(4)]
        await h.stage(0, staged)
        await h.dispatch((2, 2), 0, 4, 1)
        await tb.idle(100)
        v.check(tb.mon_err == 0, "monitor fired on a legal stalled dispatch")
        await h.write(Reg.PROG_KICK, 1)
        await tb.idle(20)
        stat = await h.prog_stat()
        v.check(tb.mon_err == 1, "a kick while running did not raise mon_err")
        v.check(stat.run and stat.left == 3, f"the second kick changed the running dispatch: {stat}")

    await tb.guard(body, 5_000)


@cocotb.test()
async def test_monitor_noc_misuse(dut) -> None:
    """Credit overflow, a misaddressed inbound flit and an output held busy too long are reported."""
    tb = OrchTB(dut, "test_monitor_noc_misuse")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        # More INST_COMPLETE than credits: overflow at 0xffff.
        await tb.reset()
        await h.write(Reg.PROG_CRED, 0xFFFF)
        await tb.start_bank({tb.port((2, 1)): [signal_flit(tb.own, (2, 1), SigCode.INST_COMPLETE, 0)]})
        await h.await_count((2, 1), 1, 0, 1_000)
        v.check(tb.mon_err == 1, "credit overflow did not raise mon_err")
        v.check(await h.credit() == 0xFFFF, "credit wrapped past 0xffff")

        # A flit for someone else delivered to the orchestrator (direct port): reported, not counted.
        await tb.reset(direct=True)
        stray = signal_flit((2, 2), (2, 1), SigCode.FAULT, 9)
        await tb.start_bank({tb.direct_port: [stray]})
        v.check(await tb.wait_injected(1, 500), "the stray flit was not taken")
        await tb.idle(10)
        v.check(tb.mon_err == 1, "a misaddressed inbound flit did not raise mon_err")
        v.check(await h.sig_done() == 0 and not (await h.read_node_status((2, 1))).valid,
                "a misaddressed signal was summarised")

        # The direct sink never takes the flit: past BUSY_LIMIT cycles the NoC side is reported.
        await tb.reset(direct=True)
        tb.bank.configure(seed=tb.seed, backpressure=StallPattern(StallMode.ALWAYS, 0))
        await h.stage(0, [tb.random_flit(FlitType.CU_CTRL)])
        await h.dispatch((3, 3), 0, 1, 0)
        limit = int(dut.BUSY_LIMIT.value)
        await tb.idle(limit // 2)
        v.check(tb.mon_err == 0, "busy-limit monitor fired early")
        await tb.idle(limit // 2 + 50)
        v.check(tb.mon_err == 1, f"an output held busy for over {limit} cycles did not raise mon_err")
        tb.bank.configure(seed=tb.seed)

    await tb.guard(body, 10_000)
