"""Python side of the host engine (rtl/bench/host_engine.v): AXI4-Lite traffic in batches.

Why: a coroutine bus master wakes Python several times per bus beat; the engine
makes the beats in Verilog on the same cycles, and Python wakes twice per batch
(the rising edge it starts on, the engine's ``done``). A batch is a list of
:class:`Command`; it goes to the engine as one ``$readmemh`` file, as the DRAM
backdoor's loads do (tb/mag/dram.py), and its results come back as the last
command's registers or, for several reads, one ``$writememh`` file.

Timing (the module header of host_engine.v has the cycle by cycle story): the
first command is offered after the first rising edge following the call, as a
coroutine master's channel offers it; a poll counts its cycles from the clock
when it was asked (``start``, default now), so the cycles a caller sees are the
ones tb/orch/host.py and tb/bundle/rtl_run.py saw with cocotbext-axi's AxiLiteMaster
(equal per handshake: rtl/bench/axil_trace.v, docs/orch.md "Host timing").

Failures are named, never a hang nor plausible data: a batch longer than the
queue is refused before anything is sent; a command the engine does not know
and a batch that does not finish within its bound (derived from its commands)
raise :class:`HostEngineError` naming the command and the engine's state.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from cocotb.triggers import First, RisingEdge, Timer
from cocotb.utils import get_sim_time


class Op(enum.IntEnum):
    """The engine's commands (host_engine.v's op field)."""

    WRITE = 1
    READ = 2
    POLL = 3


class Status(enum.IntEnum):
    """How a command ended (host_engine.v's result status)."""

    PENDING = 0
    DONE = 1
    MET = 2
    TIMEOUT = 3
    OVERSHOOT = 4


class EngineFault(enum.IntEnum):
    """The engine's error codes (its ``err`` register)."""

    NONE = 0
    OVERFLOW = 1
    UNKNOWN_OP = 2
    LATE = 3


FAULT_TEXT = {
    EngineFault.OVERFLOW: "the batch is longer than the engine's queue (nothing was sent)",
    EngineFault.UNKNOWN_OP: "a command the engine does not know (the batch stopped there)",
    EngineFault.LATE: "a poll's wait before its first read is shorter than the cycles since it was asked",
}

# (field, low bit, width) of the 256-bit command word; the module header of host_engine.v is the reference
FIELDS: tuple[tuple[str, int, int], ...] = (
    ("op", 252, 4), ("pipe", 251, 1), ("ovs", 250, 1), ("final", 249, 1), ("pre", 248, 1),
    ("addr", 232, 16), ("data", 168, 64), ("want", 104, 64), ("bound", 72, 32), ("interval", 56, 16),
    ("resolution", 40, 16), ("baseline", 24, 16), ("expected", 8, 16),
)
OPS = frozenset(int(op) for op in Op)
WORD_DIGITS = 64
RESULT_DIGITS = 32
WRITE_BUDGET = 16  # cycles a WRITE or READ may take in the bound of a batch (4 measured)


class HostEngineError(AssertionError):
    """A batch the engine refused or did not finish (the message names the command and the state)."""


@dataclass(frozen=True)
class Command:
    """One engine command; the fields a command does not use stay 0."""

    op: int
    addr: int
    data: int = 0  # WRITE: the 64-bit word; POLL: the mask
    want: int = 0
    bound: int = 0
    interval: int = 0
    resolution: int = 0
    baseline: int = 0
    expected: int = 0
    pipe: bool = False
    ovs: bool = False
    final: bool = False
    pre: bool = False

    def word(self) -> int:
        """The command word; a field wider than its slot is refused in one line."""
        out = 0
        for name, lo, width in FIELDS:
            value = int(getattr(self, name))
            if not 0 <= value < 1 << width:
                op = Op(self.op).name if self.op in OPS else self.op
                raise ValueError(f"host engine command {op} at {self.addr}: {name}={value} does not fit {width} bits "
                                 f"(0..{(1 << width) - 1})")
            out |= value << lo
        return out

    def budget(self) -> int:
        """Cycles this command may take at most in a healthy batch (the bound of a batch is their sum)."""
        if self.op != Op.POLL:
            return WRITE_BUDGET
        longest_gap = max(self.interval, self.bound // self.resolution if self.resolution else 0)
        return self.bound + 2 * longest_gap + (self.interval if self.pre else 0) + 4 * WRITE_BUDGET


def write(addr: int, value: int) -> Command:
    return Command(Op.WRITE, addr, data=value & (2**64 - 1))


def read(addr: int, *, pipe: bool = False) -> Command:
    return Command(Op.READ, addr, pipe=pipe)


@dataclass(frozen=True)
class Result:
    """What a command left: the last value read (0 for a write), reads made by a poll, its status."""

    value: int
    reads: int
    status: Status

    @classmethod
    def parse(cls, word: int) -> "Result":
        return cls(word & (2**64 - 1), word >> 96, Status((word >> 88) & 0xFF))


XZ_TEXT = "a value read from a register or staging slot never written since power-up"


def hex_lines(words: Sequence[int]) -> str:
    """The $readmemh text of command words, one a line."""
    return "".join(f"{w:0{WORD_DIGITS}x}\n" for w in words)


def encode(commands: Sequence[Command]) -> str:
    """The $readmemh text of a batch."""
    return hex_lines([c.word() for c in commands])


def parse_results(text: str, n: int) -> list[Result]:
    """The $writememh text of a batch's results."""
    words = [ln for ln in (raw.strip() for raw in text.splitlines()) if ln and not ln.startswith(("//", "@"))]
    if len(words) < n:
        raise HostEngineError(f"host engine result file holds {len(words)} words, {n} were asked for")
    if any(c in "xXzZ" for w in words[:n] for c in w):
        raise HostEngineError(f"host engine results hold x/z bits: {XZ_TEXT}")
    return [Result.parse(int(w, 16)) for w in words[:n]]


class HostEngine:
    """The engine instance `handle` (a generated harness's ``u_host``) clocked by `clk`."""

    def __init__(self, handle: Any, clk: Any, *, period_ns: int = 10, workdir: Path | None = None,
                 queue_file: str = "host_engine_cmds.hex", result_file: str = "host_engine_results.hex") -> None:
        self.h = handle
        self.clk = clk
        self.period_ns = period_ns
        self.depth = int(handle.DEPTH.value)
        workdir = workdir or Path(os.getcwd())
        self.queue_file = workdir / queue_file
        self.result_file = workdir / result_file
        self.batches = 0  # batches run (Python's wake-ups are about twice this)
        handle.go.value = 0  # a batch a failed test left raised would restart after the next reset

    def cycle(self) -> int:
        return int(get_sim_time("ns")) // self.period_ns

    async def run(self, commands: Sequence[Command], *, start: int | None = None, what: str = "host engine batch",
                  results: bool = False) -> list[Result]:
        """Run a batch; the last command's result, or (``results``) every command's.

        ``start``: the clock when the caller was asked (default now), from which a first POLL counts.
        """
        n = len(commands)
        if not 1 <= n <= self.depth:
            raise HostEngineError(f"{what}: {n} commands; the host engine's queue holds 1..{self.depth} "
                                  f"(split the batch, or raise DEPTH of rtl/bench/host_engine.v)")
        self.queue_file.write_text(encode(commands))
        asked = self.cycle() if start is None else start
        await RisingEdge(self.clk)
        bound = sum(c.budget() for c in commands) + 64
        return await self._go([c.op for c in commands], n, self.cycle() - asked, what, results, bound)

    async def run_raw(self, words: Sequence[int], count: int, *, bound: int, what: str) -> list[Result]:
        """A batch given as raw command words and a count of the caller's choosing (the engine's own checks
        are what a test of it wants to see fire)."""
        self.queue_file.write_text(hex_lines(words))
        await RisingEdge(self.clk)
        return await self._go([w >> 252 for w in words], count, 0, what, False, bound)

    async def _go(self, ops: Sequence[int], n: int, lead: int, what: str, results: bool, bound: int) -> list[Result]:
        h = self.h
        h.count.value = n
        h.lead.value = lead
        h.go.value = 1
        self.batches += 1
        try:
            return await self._wait(ops, n, what, results, bound)
        finally:
            h.go.value = 0  # rearms the engine (a failed batch is ended by the next reset)

    async def _wait(self, ops: Sequence[int], n: int, what: str, results: bool, bound: int) -> list[Result]:
        h = self.h
        fired = await First(RisingEdge(h.done), Timer(bound * self.period_ns, "ns"))
        if not int(h.done.value) or isinstance(fired, Timer):
            cp = int(h.cp.value)
            op = ops[cp] if cp < len(ops) else 0
            raise HostEngineError(f"{what}: the host engine did not finish its batch of {n} command(s) within "
                                  f"{bound} cycles: at command {cp} ({Op(op).name if op in OPS else op}), "
                                  f"{int(h.last_reads.value)} read(s) made by the command before; the "
                                  f"orchestrator never answered, or a poll's bound is wrong")
        err = EngineFault(int(h.err.value))
        if err is not EngineFault.NONE:
            idx = int(h.err_idx.value)
            detail = f"count {n}, queue {self.depth}" if err is EngineFault.OVERFLOW else f"command {idx}"
            raise HostEngineError(f"{what}: host engine fault {err.name}: {FAULT_TEXT[err]} ({detail})")
        if results:
            return await self._dump(n)
        value = h.last_value.value
        if not value.is_resolvable:
            raise HostEngineError(f"{what}: the value read holds x/z bits ({value}): {XZ_TEXT}")
        return [Result(int(value), int(h.last_reads.value), Status(int(h.last_status.value)))]

    async def _dump(self, n: int) -> list[Result]:
        self.h.dump_req.value = 1
        await RisingEdge(self.h.dump_ack)
        self.h.dump_req.value = 0
        return parse_results(self.result_file.read_text(), n)


__all__ = ["Command", "EngineFault", "HostEngine", "HostEngineError", "Op", "Result", "Status", "encode",
           "parse_results", "read", "write"]
