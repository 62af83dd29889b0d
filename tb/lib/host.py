"""The host's driver of the orchestrator (rtl/orch/orchestrator.v) over AXI4-Lite.

The host side of every bench that talks to the orchestrator: it stages
instruction flits, starts dispatches, reads the per-node status summary and
implements Await. Transfers go through cocotbext-axi's AxiLiteMaster; the
register map and encodings come from models.orch.

Await polls NODE_STATUS a bounded number of times, spaced in simulated time
(one AXI read per poll, a Timer in between): Python never wakes per cycle.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Iterable, Mapping, Sequence

from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from models.orch import (
    STAGE_SLOTS_DEFAULT,
    STAGE_WORDS,
    AwaitState,
    Caps,
    Coord,
    NodeStatus,
    ProgStat,
    Reg,
    await_message,
    await_state,
    await_target,
    flit_to_words,
    node_status_addr,
    pack_coord,
    stage_addr,
    words_to_flit,
)

WORD_BYTES = 8


class AwaitError(AssertionError):
    """An Await that ended without seeing exactly the expected count."""

    def __init__(self, coord: Coord, baseline: int, n: int, seen: int, state: str) -> None:
        super().__init__(await_message(coord, baseline, n, seen, state))
        self.coord = coord
        self.baseline = baseline
        self.n = n
        self.expected = await_target(baseline, n)
        self.seen = seen
        self.state = state


class Orchestrator:
    """Host-side driver of one orchestrator behind an AXI4-Lite master.

    `master` is anything with cocotbext-axi's AxiLiteMaster interface
    (`read(addr, n)`, `write(addr, data)`, `read_qword`, `write_qword`).
    """

    def __init__(self, master: Any, *, period_ns: int = 10, slots: int = STAGE_SLOTS_DEFAULT, log: Any = None):
        self.master = master
        self.period_ns = period_ns
        self.slots = slots
        self.log = log
        self.polls = 0  # NODE_STATUS polls made by Await (a bench can bound them)

    @classmethod
    def on_pins(cls, dut: Any, clk: Any, resetn: Any, prefix: str = "s_axil", *, verbose: bool = False,
                **kw: Any) -> "Orchestrator":
        """An AxiLiteMaster on the `prefix`_* pins of `dut` (reset active low).

        The master logs every transfer at INFO; that goes to WARNING unless `verbose`.
        """
        from cocotbext.axi import AxiLiteBus, AxiLiteMaster

        logging.getLogger(f"cocotb.{dut._name}.{prefix}").setLevel(logging.INFO if verbose else logging.WARNING)
        master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, prefix), clk, resetn, reset_active_level=False)
        return cls(master, **kw)

    # ---------------------------------------------------------------- words
    async def write(self, addr: int, value: int) -> None:
        """One full 64-bit word (all byte strobes)."""
        await self.master.write_qword(addr, value & (2**64 - 1))

    async def write_bytes(self, addr: int, data: bytes) -> None:
        """Bytes at any address: the master sets wstrb to the lanes they cover."""
        await self.master.write(addr, bytes(data))

    async def read(self, addr: int) -> int:
        return int(await self.master.read_qword(addr))

    # ---------------------------------------------------------------- registers
    async def caps(self) -> Caps:
        return Caps.decode(await self.read(Reg.CAPS))

    async def prog_stat(self) -> ProgStat:
        return ProgStat.decode(await self.read(Reg.PROG_STAT))

    async def credit(self) -> int:
        return await self.read(Reg.PROG_CRED) & 0xFFFF

    async def sig_done(self) -> int:
        return await self.read(Reg.SIG_DONE)

    async def clear_sig_done(self) -> None:
        await self.write(Reg.SIG_DONE, 0)

    async def read_node_status(self, coord: Coord) -> NodeStatus:
        return NodeStatus.decode(await self.read(node_status_addr(coord)))

    # ---------------------------------------------------------------- staging and dispatch
    async def stage(self, slot: int, flits: Sequence[int]) -> None:
        """Write flits into consecutive staging slots from `slot`, one 64-bit word write at a time.

        One write in flight, each awaited to its response, as the host that measured upstream's timing
        (bundles' timing_rtl.json: about 4 cycles a write) did: with the orchestrator's AW, W, B slave a
        write then takes 4 cycles (the next AW is offered the cycle after B), so a round's host cycles
        compare with upstream's. A pipelined burst would take 3.
        """
        if not flits:
            return
        if slot < 0 or slot + len(flits) > self.slots:
            raise ValueError(f"staging slots {slot}..{slot + len(flits) - 1} do not fit 0..{self.slots - 1}")
        addr = stage_addr(slot, 0, self.slots)
        for flit in flits:
            for word in flit_to_words(flit):
                await self.write(addr, word)
                addr += WORD_BYTES

    async def read_stage(self, slot: int) -> int:
        """The flit staged in `slot`, read back word by word."""
        raw = await self.master.read(stage_addr(slot, 0, self.slots), STAGE_WORDS * WORD_BYTES)
        data = bytes(raw.data)
        return words_to_flit(int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8))

    async def dispatch(self, dst: Coord, base: int, n: int, credit: int) -> None:
        """Send n staged flits from slot `base` to `dst` with `credit` credits.

        Writes PROG_BASE, PROG_LEN, PROG_DST, PROG_CRED, then PROG_KICK, in that order.
        """
        await self.write(Reg.PROG_BASE, base)
        await self.write(Reg.PROG_LEN, n)
        await self.write(Reg.PROG_DST, pack_coord(dst))
        await self.write(Reg.PROG_CRED, credit)
        await self.write(Reg.PROG_KICK, 1)

    async def wait_dispatched(self, timeout_cycles: int, *, polls: int = 32) -> ProgStat:
        """Poll PROG_STAT until run is 0; raises AssertionError naming what is left on timeout."""
        stat = await self.prog_stat()
        interval = max(8, math.ceil(timeout_cycles / polls))
        start = self._cycle()
        while stat.run:
            if self._cycle() - start >= timeout_cycles:
                raise AssertionError(f"dispatch still running after {timeout_cycles} cycles: "
                                     f"{stat.left} flits left, credit {stat.credit}")
            await Timer(interval * self.period_ns, "ns")
            stat = await self.prog_stat()
        return stat

    # ---------------------------------------------------------------- Await
    async def baseline(self, coords: Iterable[Coord]) -> dict[Coord, int]:
        """This round's baseline count per coordinate (0 for a node never heard from)."""
        out: dict[Coord, int] = {}
        for c in coords:
            s = await self.read_node_status(c)
            out[c] = s.count if s.valid else 0
        return out

    async def await_count(self, coord: Coord, n: int, baseline: int, timeout_cycles: int,
                          *, max_polls: int = 64, min_interval: int = 16) -> NodeStatus:
        """Wait until NODE_STATUS[coord].count == (baseline + n) mod 2^16.

        Polls at most about `max_polls` + 1 times, spaced evenly over
        `timeout_cycles` of simulated time (never closer than `min_interval`
        cycles). Raises AwaitError naming the coordinate, the expected and the
        seen count on a timeout, and at once on an overshoot (more signals than
        awaited: equality is the rule).
        """
        await_target(baseline, n)  # refuses an n the 16-bit count cannot express
        interval = max(min_interval, math.ceil(timeout_cycles / max(1, max_polls)))
        start = self._cycle()
        while True:
            status = await self.read_node_status(coord)
            self.polls += 1
            seen = status.count if status.valid else 0
            state = await_state(seen, baseline, n)
            if state is AwaitState.DONE and (status.valid or n == 0):
                return status
            if state is AwaitState.OVERSHOOT:
                raise AwaitError(coord, baseline, n, seen, "overshoot")
            if self._cycle() - start >= timeout_cycles:
                raise AwaitError(coord, baseline, n, seen, f"timeout after {timeout_cycles} cycles")
            await Timer(interval * self.period_ns, "ns")

    async def await_round(self, expected: Mapping[Coord, int], baselines: Mapping[Coord, int],
                          timeout_cycles: int, **kw: Any) -> dict[Coord, NodeStatus]:
        """Await every coordinate of a round (one shared time budget, in coordinate order)."""
        start = self._cycle()
        out: dict[Coord, NodeStatus] = {}
        for coord, n in expected.items():
            left = max(1, timeout_cycles - (self._cycle() - start))
            out[coord] = await self.await_count(coord, n, baselines.get(coord, 0), left, **kw)
        return out

    def _cycle(self) -> int:
        return int(get_sim_time("ns")) // self.period_ns


__all__ = ["AwaitError", "Orchestrator"]
