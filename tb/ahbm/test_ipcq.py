"""Module bench of the AHBM IPCQ fabric: ipcq_mesh (2x4 by default) behind ipcq_harness.

Every PE pushes seeded packets to hashed neighbour directions, word by word,
holding each word until taken; every queue is popped by a checker that starts a
packet only when pkt_avail is high, under seeded stalls. All cycles run in
Verilog; Python sets controls, awaits done/stalled once and reads the counters.
Monitor self-tests pass only if mon_err rose.
"""

from __future__ import annotations

import os

import cocotb
from cocotb.triggers import ClockCycles, First, RisingEdge, SimTimeoutError, Timer, with_timeout

from models.ahbm.ipcq import MeshShape, expected_traffic, score_links
from tb.lib.harness import HarnessClock
from tb.lib.verdict import Verdict, begin_test

PERIOD_NS = 10  # harness_clock's default period

BENCH = os.environ.get("AGSIM_BENCH", "ipcq")


class IpcqTB:
    def __init__(self, dut, name: str) -> None:
        self.dut = dut
        self.v: Verdict = begin_test(BENCH, name, dut._log)
        self.clock = HarnessClock(dut.u_clk)
        self.shape = MeshShape(int(dut.R.value), int(dut.C.value))
        self.depth = int(dut.DEPTH.value)
        self.max_len = int(dut.MAXLEN.value)
        self.nl = self.shape.num_pe * 4

    async def setup(self, npkt: int, idle=(0, 0), bp=(0, 0), fault: int = 0, depth: int | None = None) -> None:
        """Controls for one run; `depth` is every queue's run-time capacity (the build's DEPTH if None)."""
        d = self.dut
        d.start.value = 0
        d.cfg_depth.value = self.depth if depth is None else depth
        d.seed.value = self.v.seed
        d.npkt.value = npkt
        d.idle_mode.value, d.idle_level.value = idle
        d.bp_mode.value, d.bp_level.value = bp
        d.fault.value = 0
        await self.clock.reset()
        self.v.check(int(d.mon_err.value) == 0, "mon_err set right after reset")
        d.fault.value = fault      # only once out of reset, so a fault never leaks into the reset
        d.start.value = 1

    def _field(self, sig, width: int) -> list[int]:
        raw = int(sig.value)
        mask = (1 << width) - 1
        return [(raw >> (i * width)) & mask for i in range(self.nl)]

    async def run_traffic(self, npkt: int, idle=(0, 0), bp=(0, 0), max_cycles: int = 400_000,
                          depth: int | None = None) -> dict:
        # the model refuses impossible traffic (npkt, packet length) before anything is simulated
        expected = expected_traffic(self.shape, self.v.seed, npkt, self.max_len)
        await self.setup(npkt, idle, bp, depth=depth)
        d = self.dut
        v = self.v
        try:
            await with_timeout(First(RisingEdge(d.done), RisingEdge(d.stalled)), max_cycles * 10, "ns")
        except SimTimeoutError:
            v.check(False, f"TIMEOUT: neither done nor stalled within {max_cycles} cycles")
        await RisingEdge(d.u_clk.clk)
        v.cycles = int(d.cycles.value)
        if int(d.stalled.value):
            v.check(False, f"STALLED after {v.cycles} cycles: generators done={int(d.gen_done.value):#x}, "
                           f"queues idle={int(d.chk_idle.value):#x}")
        rx = self._field(d.rx_count_flat, 16)
        n, errors = score_links(self.shape, expected, rx, self._field(d.err_flat, 8), self._field(d.serr_flat, 8))
        v.add_checks(n, errors)
        words = self._field(d.words_flat, 16)
        for (p, dd), pkts in expected.items():
            want = sum(n + 1 for _, _, n in pkts) & 0xFFFF
            v.check(words[p * 4 + dd] == want,
                    f"PE {p} dir {dd}: popped {words[p * 4 + dd]} words, model framed {want} (mod 2^16)")
        v.check(sum(rx) == self.shape.num_pe * npkt, f"{sum(rx)} packets delivered, {self.shape.num_pe * npkt} sent")
        seen = int(d.avail_seen.value)
        for (p, dd), pkts in expected.items():
            if pkts:
                v.check(bool(seen >> (p * 4 + dd) & 1), f"PE {p} dir {dd}: pkt_avail never rose though packets came")
        v.check(int(d.mon_err.value) == 0, "an RTL monitor fired on legal traffic (see ERROR lines)")
        return {"rx": rx, "blk": self._field(d.blk_flat, 16)}


@cocotb.test()
async def test_traffic_free(dut) -> None:
    """No stalls: every packet delivered exactly once, in order, intact."""
    tb = IpcqTB(dut, "test_traffic_free")
    await tb.run_traffic(npkt=300)
    tb.v.finish()


@cocotb.test()
async def test_traffic_random_stalls(dut) -> None:
    """Random pusher idles and burst pop stalls: blocking pushes lose nothing."""
    tb = IpcqTB(dut, "test_traffic_random_stalls")
    res = await tb.run_traffic(npkt=600, idle=(1, 70), bp=(2, 60))
    tb.v.check(sum(res["blk"]) > 0, "no push ever blocked: the full-queue case was not exercised")
    tb.v.finish()


@cocotb.test()
async def test_traffic_slow_receivers(dut) -> None:
    """Receivers stalled ~80% of cycles: queues sit full, pushers block for long runs."""
    tb = IpcqTB(dut, "test_traffic_slow_receivers")
    res = await tb.run_traffic(npkt=200, bp=(1, 205))
    blocked_links = sum(1 for b in res["blk"] if b > 0)
    busy_links = sum(1 for n in res["rx"] if n > 0)
    tb.v.check(2 * blocked_links >= busy_links, f"only {blocked_links} of {busy_links} links ever blocked a pusher")
    tb.v.finish()


@cocotb.test()
async def test_traffic_run_time_depth(dut) -> None:
    """Every queue at a run-time capacity of 3 words on the DEPTH build: each queue is full at 3 (the checker
    compares pkt_avail with its own count of queued words against 3 every cycle), pushers block there, and
    nothing is lost. The AHBM tight-queue bench runs its cases this way on the deep-queue build."""
    tb = IpcqTB(dut, "test_traffic_run_time_depth")
    tb.v.check(tb.depth > 3, f"the bench's DEPTH {tb.depth} leaves no room below it for a run-time depth of 3")
    res = await tb.run_traffic(npkt=200, bp=(1, 205), depth=3)
    tb.v.check(sum(res["blk"]) > 0, "no push ever blocked at a run-time depth of 3")
    tb.v.finish()


async def _monitor_case(dut, name: str, fault: int, npkt: int, bp, what: str, expect_chk: bool = False,
                        depth: int | None = None) -> None:
    tb = IpcqTB(dut, name)
    await tb.setup(npkt, bp=bp, fault=fault, depth=depth)
    # stop the faulty traffic soon after the monitor fires (its ERROR lines are expected)
    await First(RisingEdge(dut.mon_err), Timer(400 * PERIOD_NS, "ns"))  # one event, not 400
    await ClockCycles(dut.u_clk.clk, 4 if expect_chk else 1)
    if expect_chk:   # the harness's own packet checker must have caught the bad packet too
        tb.v.check(sum(tb._field(dut.err_flat, 8)) > 0, "the harness checker did not flag the malformed packet")
    dut.start.value = 0
    dut.fault.value = 0
    dut.cfg_depth.value = tb.depth
    tb.v.cycles = int(dut.cycles.value)
    tb.v.check(int(dut.mon_err.value) == 1, f"{what} did not raise mon_err within 400 cycles")
    await tb.clock.reset()
    tb.v.check(int(dut.mon_err.value) == 0, "reset did not clear the sticky mon_err")
    tb.v.finish()


@cocotb.test()
async def test_monitor_push_ignores_ready(dut) -> None:
    """PE 0 treats a held word as taken while its neighbour's queue is full."""
    await _monitor_case(dut, "test_monitor_push_ignores_ready", 1, 40, (3, 0), "a pusher ignoring ready")


@cocotb.test()
async def test_monitor_pop_empty(dut) -> None:
    """PE 0's E-queue popper raises ready on an empty queue."""
    await _monitor_case(dut, "test_monitor_pop_empty", 2, 0, (0, 0), "a pop of an empty queue")


@cocotb.test()
async def test_monitor_bad_framing(dut) -> None:
    """PE 0 marks last on every header whatever its LEN."""
    await _monitor_case(dut, "test_monitor_bad_framing", 3, 8, (0, 0), "a packet whose last disagrees with LEN",
                        expect_chk=True)


@cocotb.test()
async def test_monitor_push_to_edge(dut) -> None:
    """PE 0 (north-west corner) offers a word towards North: the mesh reports it."""
    await _monitor_case(dut, "test_monitor_push_to_edge", 4, 0, (0, 0), "a push towards a missing neighbour")


@cocotb.test()
async def test_monitor_depth_out_of_range(dut) -> None:
    """A run-time depth past the build's DEPTH (its storage): every queue reports it."""
    await _monitor_case(dut, "test_monitor_depth_out_of_range", 0, 0, (0, 0), "a run-time depth of DEPTH + 1",
                        depth=int(dut.DEPTH.value) + 1)
