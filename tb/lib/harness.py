"""Python side of the Verilog bench harness (rtl/bench/).

The harness owns the clock, reset, stall patterns and bulk stimulus/capture
memories; this module only flips a few control registers and moves files, so a
long run costs Python a handful of awaits instead of one per cycle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import First, ReadOnly, RisingEdge, Timer, with_timeout
from cocotb.utils import get_sim_time

from models.noc.flit import flit_to_hex

NEVER = 0xFFFF_FFFF  # inj_time value of a flit that was never accepted


class StallMode(IntEnum):
    """tb_pattern.v modes for a source's idle cycles or a sink's busy cycles."""

    NONE = 0
    RANDOM = 1  # each cycle with probability level/256
    BURST = 2  # with probability level/256 start a stall of 1..16 cycles
    ALWAYS = 3


@dataclass(frozen=True)
class StallPattern:
    """A stall pattern: mode and level (0..255, a probability in 1/256ths)."""

    mode: StallMode = StallMode.NONE
    level: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.level <= 255:
            raise ValueError(f"stall level {self.level} is outside 0..255 (it is a probability in 1/256ths)")


class Violation(IntEnum):
    """Protocol violations a bench source can commit on purpose (monitor self-tests)."""

    NONE = 0
    WITHDRAW = 1
    CHANGE = 2


class RecorderFault(IntEnum):
    """Faults the capture recorder can inject (scoreboard self-tests)."""

    NONE = 0
    DROP = 1
    DUPLICATE = 2
    MISROUTE = 3
    REORDER = 4
    CORRUPT = 5


@dataclass(frozen=True)
class CaptureRecord:
    """One flit taken by a bench sink."""

    cycle: int
    port: int
    flit: int


@dataclass
class RunOutcome:
    """How a traffic run ended, with what was seen at the end."""

    ended: str  # "done", "stalled" or "timeout"
    cycles: int
    injected: int
    captured: int
    last_event_cycle: int


CLOCK_FROM_COCOTB = "AGSIM_COCOTB_CLOCK"  # tb/run/simulators.py COCOTB_CLOCK_FLAG (Verilator builds)
_cocotb_clocks: dict[Any, Any] = {}  # clock signal handle -> the Task toggling it in the running test


def clock_from_cocotb() -> bool:
    """True on a build whose harness_clock leaves the clock to cocotb (tb/run/simulators.py sets it for
    Verilator, where a clock generated inside the design would let every coroutine that samples at a
    rising edge read the values after that edge)."""
    return os.environ.get(CLOCK_FROM_COCOTB) == "1"


def start_cocotb_clock(handle: Any) -> None:
    """Toggle harness_clock `handle`'s clk from cocotb's own (C++) clock, once per test, when the build
    wants it, with the period the instance was given (its period_ns wire).

    The edges fall where the Verilog clock puts them (rising at PERIOD/2 + k*PERIOD from time 0),
    whenever a test starts: a bench that counts cycles from the simulation time counts the same on
    both simulators (tests/test_sim_parity.py)."""
    if not clock_from_cocotb():
        return
    clk = handle.clk
    task = _cocotb_clocks.get(clk)  # handles hash and compare by the object they name
    if task is not None and not task.done():
        return
    period_ns = int(handle.period_ns.value)

    async def aligned() -> None:
        period_ps = 1000 * period_ns
        phase = round(get_sim_time("ps")) % period_ps  # a test may start between edges, off the ns grid
        if phase:
            await Timer(period_ps - phase, "ps")
        await Clock(clk, period_ns, unit="ns").start(start_high=False)  # until the test ends

    _cocotb_clocks[clk] = cocotb.start_soon(aligned())


class HarnessClock:
    """The clock/reset generator instance u_clk of a harness top."""

    def __init__(self, handle: Any) -> None:
        self.clk = handle.clk
        self.resetn = handle.resetn
        self._rst_req = handle.rst_req
        self.first_reset_ns: int | None = None  # the clock edge a test's first reset started on
        start_cocotb_clock(handle)

    async def reset(self) -> None:
        """Hold reset for the generator's 8 cycles and wait until it is released.

        The same cycles whatever the state: from the next clock edge (a test may
        start anywhere in a cycle), rst_req is seen at the edge after, the
        count restarts at 8 whether the power-on reset is still counting or not,
        and the release comes 9 edges later. A test's cycles are counted from
        `first_reset_ns`, so a test run alone counts what it counts inside its
        bench's full run (tests/test_replay.py)."""
        await RisingEdge(self.clk)
        if self.first_reset_ns is None:
            self.first_reset_ns = int(get_sim_time("ns"))
        self._rst_req.value = 1
        await RisingEdge(self.clk)
        self._rst_req.value = 0
        await RisingEdge(self.resetn)
        await RisingEdge(self.clk)

    def cycles_since_first_reset(self, period_ns: int, fallback_ns: int) -> int:
        """Whole cycles from this test's first reset (or from `fallback_ns` without one) to now."""
        start = self.first_reset_ns if self.first_reset_ns is not None else fallback_ns
        return (int(get_sim_time("ns")) - start) // period_ns


class EndpointBank:
    """Drives tb_ep_bank: bulk load, seeded stall patterns, run, bulk dump.

    Files are exchanged through the simulator's working directory, which is the
    test's own build folder, so parallel runs never share them.
    """

    def __init__(self, handle: Any, clk: Any, num_ports: int, workdir: Path | None = None) -> None:
        self.h = handle
        self.clk = clk
        self.num_ports = num_ports
        self.workdir = workdir or Path(os.getcwd())
        self.inj_depth = int(handle.INJ_DEPTH.value) if hasattr(handle, "INJ_DEPTH") else 65536
        self.cap_depth = int(handle.CAP_DEPTH.value) if hasattr(handle, "CAP_DEPTH") else 65536
        self._total = 0

    # ---------------------------------------------------------------- setup
    def configure(
        self,
        seed: int,
        idle: StallPattern = StallPattern(),
        backpressure: StallPattern = StallPattern(),
        quiet_limit: int = 10_000,
        violation: Violation = Violation.NONE,
        fault: RecorderFault = RecorderFault.NONE,
        fault_index: int = 0,
        fault_port: int = 0,
    ) -> None:
        """Set every control register before a run (values take effect at start; the stall patterns
        restart from `seed` at the next clock edge, so what ran before does not leak into this run)."""
        h = self.h
        h.seed.value = seed & 0xFFFF_FFFF
        h.reseed.value = 1 - int(h.reseed.value)  # the stall patterns restart from this seed (tb_pattern.v)
        h.idle_mode.value = int(idle.mode)
        h.idle_level.value = idle.level
        h.bp_mode.value = int(backpressure.mode)
        h.bp_level.value = backpressure.level
        h.quiet_limit.value = quiet_limit
        h.violate.value = int(violation)
        h.fault_mode.value = int(fault)
        h.fault_index.value = fault_index
        h.fault_port.value = fault_port

    async def begin(self, clock: HarnessClock, *, reset: bool, seed: int, **config: Any) -> None:
        """The one order every bench follows before a run: configure (seed, stall modes, faults), then reset
        when asked; the caller then loads and runs. With the stall patterns reloading their seed at each
        configure (tb_pattern.v), a test's stalls depend on its own seed and modes only: it replays
        alone exactly as inside its bench's full run (tests/test_replay.py)."""
        self.configure(seed=seed, **config)
        if reset:
            await clock.reset()

    async def load(self, streams: Mapping[int, Sequence[int]]) -> list[tuple[int, int]]:
        """Hand every port's flit list to the harness in one $readmemh.

        Returns the (port, flit) of each global injection slot, in slot order, so
        inj_time can be matched back after the run.
        """
        bad = [p for p in streams if not 0 <= p < self.num_ports]
        if bad:
            raise ValueError(f"ports {bad} do not exist (this harness has {self.num_ports} ports)")
        total = sum(len(s) for s in streams.values())
        if total > self.inj_depth:
            raise ValueError(
                f"{total} flits exceed the harness injection memory of {self.inj_depth} "
                f"(INJ_DEPTH); split the run or raise INJ_DEPTH in tb/run/benches.py"
            )
        slots: list[tuple[int, int]] = []
        meta: list[str] = []
        lines: list[str] = []
        for port in range(self.num_ports):
            flits = list(streams.get(port, ()))
            meta.append(f"{len(slots):08x}{len(flits):08x}")
            for flit in flits:
                slots.append((port, flit))
                lines.append(flit_to_hex(flit))
        (self.workdir / "inj_meta.hex").write_text("\n".join(meta) + "\n")
        (self.workdir / "inj.hex").write_text("\n".join(lines) + "\n" if lines else "0\n")
        self._total = total
        self.h.inj_total.value = total
        self.h.expect_total.value = total
        await RisingEdge(self.clk)
        self.h.load_req.value = 1
        await RisingEdge(self.h.load_ack)
        self.h.load_req.value = 0
        await RisingEdge(self.clk)
        return slots

    # ---------------------------------------------------------------- run
    async def run(self, expect_total: int, timeout_cycles: int, period_ns: int = 10) -> RunOutcome:
        """Start the sources and wait for done, a stall, or the simulated-time bound."""
        self.h.expect_total.value = expect_total
        self.h.start.value = 1
        ended = "done"
        try:
            await with_timeout(
                First(RisingEdge(self.h.done), RisingEdge(self.h.stalled)),
                timeout_cycles * period_ns,
                "ns",
            )
            await ReadOnly()
            if int(self.h.stalled.value):
                ended = "stalled"
        except TimeoutError:
            ended = "timeout"
        await RisingEdge(self.clk)
        return self.status(ended)

    async def settle(self, cycles: int, period_ns: int = 10) -> None:
        """Let the machine run on after done so a surplus flit has time to show up."""
        await Timer(cycles * period_ns, "ns")
        await RisingEdge(self.clk)

    def status(self, ended: str) -> RunOutcome:
        h = self.h
        return RunOutcome(
            ended=ended,
            cycles=int(h.cycle.value),
            injected=int(h.inj_count.value),
            captured=int(h.cap_count.value),
            last_event_cycle=int(h.last_event.value),
        )

    async def stop(self) -> None:
        self.h.start.value = 0
        await RisingEdge(self.clk)

    async def clear_captures(self) -> None:
        """Between runs: empty the capture memory and its counts (a long run sequence without a reset)."""
        self.h.cap_clear.value = 1
        await RisingEdge(self.clk)
        self.h.cap_clear.value = 0
        await RisingEdge(self.clk)

    # ---------------------------------------------------------------- results
    async def dump(self) -> tuple[list[CaptureRecord], list[int]]:
        """Write the capture and injection-time memories out and read them back (busy.hex, written with
        them, is read by `busy_cycles`)."""
        self.h.dump_req.value = 1
        await RisingEdge(self.h.dump_ack)
        self.h.dump_req.value = 0
        await RisingEdge(self.clk)
        captured = int(self.h.cap_count.value)
        records = [self._record(line) for line in _hex_lines(self.workdir / "cap.hex")][:captured]
        times = [int(line, 16) for line in _hex_lines(self.workdir / "inj_time.hex")][: self._total] if self._total else []
        return records, times

    def busy_cycles(self) -> list[int]:
        """Per port, the cycles its source offered a flit while the DUT's input was busy (its FIFO full),
        from the last `dump`."""
        return [int(line, 16) for line in _hex_lines(self.workdir / "busy.hex")]

    @staticmethod
    def _record(line: str) -> CaptureRecord:
        value = int(line, 16)
        return CaptureRecord(cycle=value >> 296, port=(value >> 288) & 0xFF, flit=value & ((1 << 288) - 1))


def _hex_lines(path: Path) -> Iterable[str]:
    """Data lines of a $writememh file (skips '//' address comments and blanks)."""
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("//"):
            yield line


__all__ = [
    "NEVER",
    "CaptureRecord",
    "EndpointBank",
    "HarnessClock",
    "RecorderFault",
    "RunOutcome",
    "StallMode",
    "StallPattern",
    "Violation",
]
