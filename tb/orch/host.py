"""The host's driver of the orchestrator (rtl/orch/orchestrator.v) over AXI4-Lite.

The host side of every bench that talks to the orchestrator: it stages
instruction flits, starts dispatches, reads the per-node status summary and
implements Await. The register map and encodings come from models.orch.host_port.
Transfers go through one of two masters, chosen by the bench's harness:

* the host engine of the generated machine harnesses (tb/system/host_engine.py,
  :meth:`Orchestrator.on_engine`): a staging upload, a dispatch's five
  writes, a slot's read-back and every poll are one batch each, made in
  Verilog on the cycles the coroutine master makes them;
* cocotbext-axi's AxiLiteMaster (:meth:`Orchestrator.on_pins`), where a test
  exercises the AXI port itself (the ``orch`` bench, byte strobes included).

Await polls NODE_STATUS a bounded number of times, spaced in simulated time
(one AXI read per poll, a wait in between): Python never wakes per cycle.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Iterable, Mapping, Sequence

from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from tb.system import host_engine as engine_cmd
from tb.system.host_engine import HostEngine, Status
from models.orch.host_port import (
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
        self.engine: HostEngine | None = master if isinstance(master, HostEngine) else None
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

    @classmethod
    def on_engine(cls, dut: Any, clk: Any, **kw: Any) -> "Orchestrator":
        """The host engine `u_host` of a generated machine harness (rtl/bench/host_engine.v)."""
        return cls(HostEngine(dut.u_host, clk, period_ns=kw.get("period_ns", 10)), **kw)

    # ---------------------------------------------------------------- words
    async def write(self, addr: int, value: int) -> None:
        """One full 64-bit word (all byte strobes)."""
        if self.engine is not None:
            await self.engine.run([engine_cmd.write(addr, value)], what=f"write of {addr:#x}")
            return
        await self.master.write_qword(addr, value & (2**64 - 1))

    async def write_words(self, words: Sequence[tuple[int, int]], what: str = "writes") -> None:
        """(address, word) pairs one after another, each awaited to its response (one batch on the engine)."""
        if self.engine is not None:
            for k in range(0, len(words), self.engine.depth):
                await self.engine.run([engine_cmd.write(a, v) for a, v in words[k:k + self.engine.depth]], what=what)
            return
        for addr, value in words:
            await self.write(addr, value)

    async def write_bytes(self, addr: int, data: bytes) -> None:
        """Bytes at any address: the master sets wstrb to the lanes they cover (AxiLiteMaster only)."""
        if self.engine is not None:
            raise ValueError("the host engine writes whole 64-bit words only; byte strobes need the AxiLiteMaster "
                             "of Orchestrator.on_pins (the orch bench)")
        await self.master.write(addr, bytes(data))

    async def read(self, addr: int) -> int:
        if self.engine is not None:
            return (await self.engine.run([engine_cmd.read(addr)], what=f"read of {addr:#x}"))[0].value
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
        await self.stage_slots(dict(zip(range(slot, slot + len(flits)), flits)))

    async def stage_slots(self, slots: Mapping[int, int]) -> None:
        """Write every slot's flit (in slot order, five words each, low word first), one write at a time."""
        if not slots:
            return
        if min(slots) < 0 or max(slots) >= self.slots:
            raise ValueError(f"staging slots {min(slots)}..{max(slots)} do not fit 0..{self.slots - 1}")
        words = [(stage_addr(s, 0, self.slots) + WORD_BYTES * k, word)
                 for s in sorted(slots) for k, word in enumerate(flit_to_words(slots[s]))]
        await self.write_words(words, f"staging {len(slots)} slot(s)")

    async def read_stage(self, slot: int) -> int:
        """The flit staged in `slot`, read back word by word."""
        return (await self.read_stages([slot]))[0]

    async def read_stages(self, slots: Sequence[int]) -> list[int]:
        """The flits staged in `slots`, each read as one five-word read (its AR offered behind the previous
        one's, as AxiLiteMaster queues a multi-word read), the slots one after another."""
        if self.engine is not None:
            cmds = [engine_cmd.read(stage_addr(s, 0, self.slots) + WORD_BYTES * k, pipe=k > 0)
                    for s in slots for k in range(STAGE_WORDS)]
            out: list[int] = []
            for i in range(0, len(cmds), self.engine.depth - self.engine.depth % STAGE_WORDS):
                part = cmds[i:i + self.engine.depth - self.engine.depth % STAGE_WORDS]
                out += [r.value for r in await self.engine.run(part, what="staging read-back", results=True)]
            return [words_to_flit(out[i:i + STAGE_WORDS]) for i in range(0, len(out), STAGE_WORDS)]
        return [await self._read_stage_axil(s) for s in slots]

    async def _read_stage_axil(self, slot: int) -> int:
        raw = await self.master.read(stage_addr(slot, 0, self.slots), STAGE_WORDS * WORD_BYTES)
        data = bytes(raw.data)
        return words_to_flit(int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8))

    async def dispatch(self, dst: Coord, base: int, n: int, credit: int) -> None:
        """Send n staged flits from slot `base` to `dst` with `credit` credits.

        Writes PROG_BASE, PROG_LEN, PROG_DST, PROG_CRED, then PROG_KICK, in that order.
        """
        await self.write_words([(Reg.PROG_BASE, base), (Reg.PROG_LEN, n), (Reg.PROG_DST, pack_coord(dst)),
                                (Reg.PROG_CRED, credit), (Reg.PROG_KICK, 1)], f"dispatch to {dst}")

    async def wait_dispatched(self, timeout_cycles: int, *, polls: int = 32) -> ProgStat:
        """Poll PROG_STAT until run is 0; raises AssertionError naming what is left on timeout."""
        stat = await self.prog_stat()
        interval = max(8, math.ceil(timeout_cycles / polls))
        start = self._cycle()
        if self.engine is not None and stat.run and timeout_cycles > 0:
            # the loop below as one poll: wait, read, until run is 0 or the bound
            poll = engine_cmd.Command(engine_cmd.Op.POLL, Reg.PROG_STAT, data=1, want=0, bound=timeout_cycles,
                                      interval=interval, pre=True)
            res = (await self.engine.run([poll], start=start, what="waiting for the dispatch"))[0]
            stat = ProgStat.decode(res.value)
            if res.status is Status.MET:
                return stat
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
        target = await_target(baseline, n)  # refuses an n the 16-bit count cannot express
        interval = max(min_interval, math.ceil(timeout_cycles / max(1, max_polls)))
        start = self._cycle()
        if self.engine is not None:
            return await self._await_engine(coord, n, baseline, target, timeout_cycles, interval, start)
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

    async def _await_engine(self, coord: Coord, n: int, baseline: int, target: int, timeout_cycles: int,
                            interval: int, start: int) -> NodeStatus:
        """await_count's loop as one engine poll: count equal to the target (and valid, unless n is 0),
        stopped at once on an overshoot, a timeout after the read that saw the bound reached."""
        mask, want = (0xFFFF00, baseline << 8) if n == 0 else (0xFFFF01, (target << 8) | 1)
        poll = engine_cmd.Command(engine_cmd.Op.POLL, node_status_addr(coord), data=mask, want=want,
                                  bound=max(0, timeout_cycles), interval=interval, baseline=baseline, expected=n,
                                  ovs=True)
        res = (await self.engine.run([poll], start=start, what=f"await at {coord}"))[0]  # type: ignore[union-attr]
        self.polls += res.reads
        status = NodeStatus.decode(res.value)
        seen = status.count if status.valid else 0
        if res.status is Status.MET:
            return status
        if res.status is Status.OVERSHOOT:
            raise AwaitError(coord, baseline, n, seen, "overshoot")
        raise AwaitError(coord, baseline, n, seen, f"timeout after {timeout_cycles} cycles")

    def _cycle(self) -> int:
        return int(get_sim_time("ns")) // self.period_ns


__all__ = ["AwaitError", "Orchestrator"]
