"""The host's side of a fused RUN on a machine with an orchestrator.

What a real host does, and nothing the hardware would not let it do:

1. **DRAM in bulk** through the DRAM model's backdoor (tb.mag.dram): one file
   exchange per range, never word by word from Python.
   Addresses are the machine's: byte addresses (and word indices, byte >> 5)
   from the machine's ``mem_base`` on, translated here to the DRAM's own
   word index, refused outside the DRAM's window.
2. **Programs** are staged in the orchestrator's staging RAM and dispatched to
   one unit at a time. Credit is never seeded above the units' instruction
   FIFO depth (the machine's ``inst_depth``: 32 on the small machines, 512 on
   fused4, as the compiled plans assume). Only INST_COMPLETE refills it, so a program of n
   instructions whose last one carries last=1 returns n-1 credits; a program
   longer than the staging RAM (or than `chunk` instructions) goes out in
   windows. Each window waits for its instructions' completions on the unit's
   NODE_STATUS count (one baseline per program, equality) before the next one
   is staged, so a refill can never arrive from an earlier dispatch and
   inflate the credit of a later one. Waiting is a bounded number of polls
   spaced in simulated time: Python never wakes per cycle.
3. **Await** per coordinate, per round: the baseline is taken before the
   round's first dispatch; the wait is for ``count == (baseline + n) mod
   2^16`` exactly: a shortfall at the timeout and an overshoot both raise
   :class:`SequenceAwaitError`, whose message names what was awaited, the
   coordinate, the expected and the seen count and how many signals are
   missing (or surplus).
4. **Results** come back from DRAM in bulk. A VDRAIN's RUN retires when its
   last flit has left the core, not when the write has landed, so a read-back
   first waits until every write handed to the mesh has landed (the machine
   top's counter against the DRAM's, tb.system.landing; bounded by
   ``timeout_cycles``, named on expiry). Without a landing check (a top that
   has none) it lets ``settle_cycles`` pass instead: a margin, not a handshake.

The stages of the fused epilogue (seed section 4):

* :meth:`HostSequence.run_cluster_stage` takes the round's baseline on the
  receiving cores, then dispatches every cluster's instruction list;
* :meth:`HostSequence.await_acks` awaits ``{core: n}`` acknowledgements
  against that baseline (``ceil(gm*gn/8)`` per drain, models.machine.planner);
* :meth:`HostSequence.run_vector_stage` dispatches ``{core: (words,
  descriptors)}`` programs (IMEM, DESC, RUN) and waits for them to retire.

Only the final completion of a program is visible in NODE_STATUS (code and
arg are the last signal's), so a FAULT on a program's last instruction (the
RUN) raises :class:`UnitFaultError` naming unit, fault code and name; a fault
on an earlier instruction shows only in the count-based timing, not here.
Units are driven one after another: the orchestrator has one credit counter,
so two dispatches in flight to different units would share refills.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from models.vector import Descriptor, FAULT_NAMES, describe_kick, program_payloads, run_payload
from models.cu.base import SigCode, cu_inst
from models.noc.flit import FIELDS, FlitType
from models.machine.layouts import Machine, UnitKind
from models.orch.host_port import COUNT_MOD, NodeStatus, await_target
from tb.mag.dram import DramBackdoor
from tb.orch.host import AwaitError, Orchestrator
from tb.system.landing import Landing

Coord = tuple[int, int]
Item = int  # a CU_INST payload (< 2**256) or a whole flit (header set)

FIFO_DEPTH = 32  # cu_base's default INST_DEPTH; a machine's own depth is Machine.inst_depth
PAYLOAD_BITS = 256
PAYLOAD_MASK = (1 << PAYLOAD_BITS) - 1
DEFAULT_TXN = 0x40


class SequenceAwaitError(AwaitError):
    """An Await of the host sequence that did not see exactly its count (message names everything)."""

    def __init__(self, what: str, coord: Coord, baseline: int, n: int, seen: int, state: str) -> None:
        super().__init__(coord, baseline, n, seen, state)
        arrived = (seen - baseline) % COUNT_MOD
        self.what = what
        self.arrived = arrived
        self.missing = max(0, n - arrived)
        self.surplus = max(0, arrived - n)
        tail = (f"{self.missing} signal(s) missing" if self.missing else f"{self.surplus} signal(s) surplus")
        self.args = (f"{what}: {self.args[0]}: {tail}",)


class UnitFaultError(AssertionError):
    """A program whose final completion was a FAULT: names the unit, the code and its name."""

    def __init__(self, what: str, unit: Coord, status: NodeStatus, listing: Sequence[str] = ()) -> None:
        self.unit = unit
        self.code = status.arg
        self.status = status
        self.name = FAULT_NAMES.get(status.arg, f"fault 0x{status.arg:02x}")
        program = ("\n  the program it was sent:\n" + "\n".join(listing)) if listing else ""
        super().__init__(f"{what}: unit ({unit[0]},{unit[1]}) retired with FAULT {self.name} "
                         f"(arg {status.arg}), NODE_STATUS count {status.count}{program}")


@dataclass
class ProgramResult:
    """One dispatched program: what went out and what the unit's NODE_STATUS said at the end."""

    unit: Coord
    flits: int
    instructions: int
    windows: int
    baseline: int
    status: NodeStatus
    cycles: int


@dataclass
class Round:
    """One round's Await baselines (taken before its first dispatch)."""

    baselines: dict[Coord, int] = field(default_factory=dict)


def fmt(coord: Coord) -> str:
    """(x,y) as the failure messages write it."""
    return f"({coord[0]},{coord[1]})"


def is_flit(item: int) -> bool:
    return int(item) >> PAYLOAD_BITS != 0


def flit_type(flit: int) -> int:
    return FIELDS["type"].extract(flit)


class HostSequence:
    """The host sequence library over one orchestrator (`host`) and the machine's DRAM (`dram`)."""

    def __init__(self, host: Orchestrator, dram: DramBackdoor, machine: Machine, *, period_ns: int = 10,
                 slots: int = 256, fifo_depth: Optional[int] = None, txn: int = DEFAULT_TXN,
                 timeout_cycles: int = 50_000, poll_cycles: int = 32, settle_cycles: int = 200,
                 landing: Optional[Landing] = None, log: Any = None) -> None:
        fifo_depth = machine.inst_depth if fifo_depth is None else fifo_depth
        if not 1 <= fifo_depth <= machine.inst_depth:
            raise ValueError(f"credit {fifo_depth} is outside 1..{machine.inst_depth}, the instruction FIFO depth "
                             f"of machine {machine.name}'s units (inst_depth in models/machine/layouts.py); seed at most that")
        orch = machine.coords(UnitKind.ORCH)
        if len(orch) != 1:
            raise ValueError(f"machine {machine.name} needs exactly one orchestrator for a host, has {len(orch)}")
        self.host = host
        self.dram = dram
        self.machine = machine
        self.own: Coord = orch[0]
        self.period_ns = period_ns
        self.slots = slots
        self.fifo_depth = fifo_depth
        self.txn = txn
        self.timeout_cycles = timeout_cycles
        self.poll_cycles = poll_cycles
        self.settle_cycles = settle_cycles
        self.landing = landing
        self.log = log
        self.round = Round()
        self.doing = "idle"  # what the host is doing now (named by a watchdog)
        self.history: list[dict[str, Any]] = []

    # ================================================================ (1), (4) DRAM in bulk
    def dram_byte(self, byte_addr: int, n: int = 1) -> int:
        """The DRAM's own byte offset of machine byte address `byte_addr`; all `n` bytes must fit its window."""
        return self.machine.dram_offset(byte_addr, n)

    async def load_words(self, word: int, words: Sequence[int]) -> None:
        """Whole 256-bit words from machine word `word` (byte address >> 5) on (one backdoor transfer)."""
        self.doing = f"loading {len(words)} DRAM words at word {word:#x}"
        await self.dram.load_words(self.dram_byte(word << 5, 32 * len(words)) >> 5, list(words))

    async def load_bytes(self, byte_addr: int, data: Any) -> None:
        """Bytes at machine byte address `byte_addr`."""
        self.doing = f"loading DRAM bytes at {byte_addr:#x}"
        n = data.nbytes if isinstance(data, np.ndarray) else len(data)
        await self.dram.load_bytes(self.dram_byte(byte_addr, n), data)

    async def landed(self, what: str) -> None:
        """Every write handed to the mesh has landed (or, without a landing check, the settle margin passed)."""
        if self.landing is None:
            await self.idle(self.settle_cycles)
            return
        self.doing = f"{what}: waiting for the posted writes to land"
        await self.landing.wait(self.timeout_cycles, what)

    async def read_words(self, word: int, n: int, *, settle: bool = True) -> list[int]:
        """`n` words from machine word `word`, once the writes have landed (see the module doc)."""
        if settle:
            await self.landed(f"reading {n} DRAM words at word {word:#x}")
        self.doing = f"reading {n} DRAM words at word {word:#x}"
        return await self.dram.read_words(self.dram_byte(word << 5, 32 * n) >> 5, n)

    async def read_bytes(self, byte_addr: int, n: int, *, settle: bool = True) -> np.ndarray:
        """`n` bytes from machine byte address `byte_addr`, once the writes have landed."""
        if settle:
            await self.landed(f"reading {n} DRAM bytes at {byte_addr:#x}")
        return await self.dram.read_bytes(self.dram_byte(byte_addr, n), n)

    # ================================================================ programs
    def instruction_flits(self, unit: Coord, items: Sequence[Item], *, txn: Optional[int] = None,
                          last: bool = True) -> list[int]:
        """Payloads become CU_INST flits (src = the orchestrator, txn, last=1 on the final payload if `last`);
        whole flits (a staged CU_DATA burst, a hand-built CU_INST) are kept as they are."""
        txn = self.txn if txn is None else txn
        payload_idx = [i for i, it in enumerate(items) if not is_flit(it)]
        final = payload_idx[-1] if (payload_idx and last) else -1
        return [int(it) if is_flit(it) else cu_inst(unit, self.own, txn, int(i == final), int(it))
                for i, it in enumerate(items)]

    async def run_program(self, unit: Coord, items: Sequence[Item], *, chunk: Optional[int] = None,
                          allow_fault: bool = False, timeout_cycles: Optional[int] = None,
                          what: str = "program", last: bool = True) -> ProgramResult:
        """Stage and dispatch `items` to `unit`, then wait until all its instructions have completed.

        Credit per window = min(FIFO depth, the window's CU_INSTs). Windows are
        at most the staging RAM long and, with `chunk`, at most `chunk`
        CU_INSTs (chunk <= the FIFO depth: no refill is relied on). Raises
        SequenceAwaitError (completions missing at the timeout, or surplus)
        and UnitFaultError (final completion a FAULT, unless `allow_fault`).
        """
        if chunk is not None and not 1 <= chunk <= self.fifo_depth:
            raise ValueError(f"chunk {chunk} must be 1..{self.fifo_depth} (the instruction FIFO depth)")
        flits = self.instruction_flits(unit, items, last=last)
        n_inst = sum(flit_type(f) == FlitType.CU_INST for f in flits)
        timeout = timeout_cycles or self.timeout_cycles
        t0 = self._cycle()
        base = (await self.host.baseline([unit]))[unit]
        windows = self._windows(flits, chunk)
        done = 0
        status = await self.host.read_node_status(unit)
        for k, window in enumerate(windows):
            n_w = sum(flit_type(f) == FlitType.CU_INST for f in window)
            self.doing = f"{what}: staging window {k + 1}/{len(windows)} ({len(window)} flits) for {fmt(unit)}"
            await self.host.stage(0, window)
            self.doing = f"{what}: dispatching window {k + 1}/{len(windows)} to {fmt(unit)}"
            await self.host.dispatch(unit, 0, len(window), min(self.fifo_depth, n_w))
            done += n_w
            if done:
                status = await self._await(f"{what}: completions of {fmt(unit)}", unit, done, base, timeout)
            await self.host.wait_dispatched(timeout, polls=max(1, timeout // self.poll_cycles))
        result = ProgramResult(unit, len(flits), n_inst, len(windows), base, status, self._cycle() - t0)
        self.history.append({"what": what, "unit": unit, "flits": len(flits), "instructions": n_inst,
                             "windows": len(windows), "baseline": base, "count": status.count,
                             "code": status.code, "arg": status.arg, "cycles": result.cycles})
        self.doing = "idle"
        if n_inst and status.valid and status.code == SigCode.FAULT and not allow_fault:
            listing = (describe_kick([f & PAYLOAD_MASK for f in flits])
                       if unit in self.machine.vector_cores else [])
            raise UnitFaultError(what, unit, status, listing)
        return result

    def _windows(self, flits: list[int], chunk: Optional[int]) -> list[list[int]]:
        out: list[list[int]] = []
        cur: list[int] = []
        insts = 0
        for f in flits:
            is_inst = flit_type(f) == FlitType.CU_INST
            if cur and (len(cur) == self.slots or (chunk is not None and is_inst and insts == chunk)):
                out.append(cur)
                cur, insts = [], 0
            cur.append(f)
            insts += is_inst
        if cur:
            out.append(cur)
        return out

    async def send_data(self, unit: Coord, flits: Sequence[int], *, acks: int = 0,
                        timeout_cycles: Optional[int] = None, what: str = "host data") -> NodeStatus:
        """Dispatch staged CU_DATA bursts (no CU_INST: no credit) to `unit`; await `acks` acknowledgements.

        The orchestrator rewrites src to itself, so the bursts must carry
        ack = the orchestrator (or 0: answered to the source, the orchestrator
        too) for their acks to be counted here.
        """
        if any(flit_type(f) == FlitType.CU_INST for f in flits):
            raise ValueError("send_data carries CU_DATA bursts only; use run_program for instructions")
        timeout = timeout_cycles or self.timeout_cycles
        base = (await self.host.baseline([unit]))[unit]
        for k in range(0, len(flits), self.slots):
            window = list(flits[k:k + self.slots])
            self.doing = f"{what}: dispatching {len(window)} data flits to {fmt(unit)}"
            await self.host.stage(0, window)
            await self.host.dispatch(unit, 0, len(window), 0)
            await self.host.wait_dispatched(timeout, polls=max(1, timeout // self.poll_cycles))
        status = await self.host.read_node_status(unit)
        if acks:
            status = await self._await(f"{what}: acks of {fmt(unit)}", unit, acks, base, timeout)
        self.doing = "idle"
        return status

    # ================================================================ (3) Await
    async def baseline(self, coords: Iterable[Coord]) -> dict[Coord, int]:
        return await self.host.baseline(list(coords))

    async def await_counts(self, expected: Mapping[Coord, int], baselines: Mapping[Coord, int], *,
                           what: str = "Await", timeout_cycles: Optional[int] = None) -> dict[Coord, NodeStatus]:
        """Await every coordinate (one shared budget); SequenceAwaitError names the first that fails."""
        timeout = timeout_cycles or self.timeout_cycles
        start = self._cycle()
        out: dict[Coord, NodeStatus] = {}
        for coord, n in expected.items():
            if coord not in baselines:
                raise ValueError(f"{what}: no baseline for {fmt(coord)}: take it before the round's first dispatch")
            left = max(1, timeout - (self._cycle() - start))
            out[coord] = await self._await(what, coord, n, baselines[coord], left)
        return out

    async def _await(self, what: str, coord: Coord, n: int, base: int, timeout: int) -> NodeStatus:
        self.doing = f"{what}: awaiting {n} signal(s) at {fmt(coord)} (baseline {base}, target {await_target(base, n)})"
        try:
            return await self.host.await_count(coord, n, base, timeout, max_polls=max(1, timeout // self.poll_cycles),
                                               min_interval=self.poll_cycles)
        except AwaitError as exc:
            raise SequenceAwaitError(what, exc.coord, exc.baseline, exc.n, exc.seen, exc.state) from None

    # ================================================================ the fused stages
    async def begin_round(self, receivers: Iterable[Coord]) -> Round:
        """A new round: its Await baselines on `receivers`, read before anything is dispatched."""
        self.round = Round(await self.baseline(receivers))
        return self.round

    async def run_cluster_stage(self, programs: Mapping[Any, Sequence[Item]], *,
                                receivers: Optional[Iterable[Coord]] = None, chunk: Optional[int] = None,
                                allow_fault: bool = False) -> dict[Any, ProgramResult]:
        """Seed step 1: take the round's baselines on the receiving cores, then dispatch each instance's
        cluster instruction list and wait for its completions.

        A key is a cluster coordinate or a planner instance (models.machine.planner.Instance: its `cluster`
        runs the list, its `vector_core` is a receiver). Receivers default to the instances' vector
        cores, else every vector core of the machine.
        """
        if receivers is None:
            paired = [k.vector_core for k in programs if hasattr(k, "vector_core")]
            receivers = paired or self.machine.vector_cores
        await self.begin_round(dict.fromkeys(receivers))
        out = {}
        for key, items in programs.items():
            unit = key.cluster if hasattr(key, "cluster") else key
            out[key] = await self.run_program(unit, items, chunk=chunk, allow_fault=allow_fault,
                                              what=f"cluster stage on {fmt(unit)}")
        return out

    async def await_acks(self, expected: Mapping[Coord, int], *, timeout_cycles: Optional[int] = None
                         ) -> dict[Coord, NodeStatus]:
        """Seed step 2: on each receiving core, exactly `n` acknowledgements since the round's baseline."""
        return await self.await_counts(expected, self.round.baselines, what="await acks",
                                       timeout_cycles=timeout_cycles)

    async def run_vector_stage(self, programs: Mapping[Coord, tuple[Sequence[int], Mapping[int, Descriptor]]],
                               *, pc: int = 0, chunk: Optional[int] = None, allow_fault: bool = False,
                               timeout_cycles: Optional[int] = None) -> dict[Coord, ProgramResult]:
        """Seed step 3: per core, IMEM writes of the words, then base and dims 1..4 of every descriptor (the
        fixed packing of models.vector.program_payloads: every field a walk reads), then RUN (last=1)."""
        out = {}
        for core, (words, descs) in programs.items():
            payloads = program_payloads(list(words), dict(descs)) + [run_payload(pc)]
            out[core] = await self.run_program(core, payloads, chunk=chunk, allow_fault=allow_fault,
                                               timeout_cycles=timeout_cycles, what=f"vector stage on {fmt(core)}")
        return out

    # ================================================================ helpers
    async def node_status(self, coord: Coord) -> NodeStatus:
        return await self.host.read_node_status(coord)

    async def idle(self, cycles: int) -> None:
        if cycles > 0:
            await Timer(cycles * self.period_ns, "ns")

    def _cycle(self) -> int:
        return int(get_sim_time("ns")) // self.period_ns


__all__ = ["FIFO_DEPTH", "HostSequence", "ProgramResult", "Round", "SequenceAwaitError", "UnitFaultError",
           "fmt"]
