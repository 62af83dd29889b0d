"""Testbench class of the orchestrator benches (harness rtl/bench/orch_harness.v).

The orchestrator sits on the Local port of router (OX,OY) of a small mesh whose
other Local ports are bench endpoints (u_bank); one more bank port (DIRECT) can
be wired straight to the orchestrator instead. The host is an AxiLiteMaster on
the harness's s_axil_* pins (tb.orch.host.Orchestrator), created on first use so
a test can also drive those pins itself.

The bank cannot react to what it receives: each run injects a preloaded list
per port. Runs here are started and stopped by hand (the bank's `done` flag is
one-shot per reset) and the host decides when a run is over by polling the
orchestrator, as a real host would.

Every test body runs under `guard`: a simulated-time watchdog whose expiry is a
named failure, and a verdict written whatever happens.
"""

from __future__ import annotations

import os
import random
from typing import Any, Awaitable, Callable, Mapping, Sequence

from cocotb.triggers import RisingEdge, SimTimeoutError, Timer, with_timeout
from cocotb.utils import get_sim_time

from models.noc.flit import pack_fields
from models.noc.mesh import MeshGeometry
from models.orch.host_port import Coord
from tb.lib.harness import (
    CaptureRecord,
    EndpointBank,
    HarnessClock,
    StallPattern,
    Violation,
)
from tb.orch.host import Orchestrator
from tb.lib.verdict import begin_test

PERIOD_NS = 10


class OrchTB:
    """One test on orch_harness: clock, bank, host, verdict."""

    def __init__(self, dut: Any, test_name: str) -> None:
        self.dut = dut
        self.log = dut._log
        self.bench_name = os.environ.get("AGSIM_BENCH", "orch") or "orch"
        nx, ny = int(dut.NX.value), int(dut.NY.value)
        self.geometry = MeshGeometry(nx, ny)
        self.own: Coord = (int(dut.OX.value), int(dut.OY.value))
        self.slots = int(dut.STAGE_SLOTS.value)
        self.direct_port = nx * ny
        self.clock = HarnessClock(dut.u_clk)
        self.bank = EndpointBank(dut.u_bank, self.clock.clk, nx * ny + 1)
        self.verdict = begin_test(self.bench_name, test_name, self.log)
        self.seed, self.run_seed = self.verdict.seed, self.verdict.run_seed
        self.rng = random.Random(self.seed)
        self._host: Orchestrator | None = None
        self._start_ns = 0

    # ---------------------------------------------------------------- parts
    @property
    def host(self) -> Orchestrator:
        if self._host is None:
            self._host = Orchestrator.on_pins(self.dut, self.clock.clk, self.clock.resetn,
                                              period_ns=PERIOD_NS, slots=self.slots, log=self.log)
        return self._host

    def port(self, coord: Coord) -> int:
        """Bank port of the endpoint at `coord` (a mesh Local endpoint other than the orchestrator)."""
        if coord == self.own:
            raise ValueError(f"{coord} is the orchestrator, not a bench endpoint")
        return self.geometry.port_index(coord)

    def random_flit(self, ftype: int) -> int:
        """A flit to stage with junk routing fields (dispatch must replace them) and random everything else."""
        r = self.rng
        return pack_fields({"dst_x": r.getrandbits(4), "dst_y": r.getrandbits(4), "src_x": r.getrandbits(4),
                            "src_y": r.getrandbits(4), "type": ftype, "txn": r.getrandbits(8),
                            "last": r.getrandbits(1), "rsvd": r.getrandbits(3), "payload": r.getrandbits(256)})

    def nodes(self) -> list[Coord]:
        """Coordinates of the bench endpoints on the mesh."""
        return [c for c in self.geometry.routers() if c != self.own]

    @property
    def mon_err(self) -> int:
        return int(self.dut.mon_err.value)

    @property
    def mesh_mon_err(self) -> int:
        return int(self.dut.mesh_mon_err.value)

    def cycle(self) -> int:
        return int(self.dut.u_bank.cycle.value)

    # ---------------------------------------------------------------- control
    async def reset(self, *, direct: bool = False) -> None:
        """Reset everything; `direct` wires the orchestrator to the DIRECT bank port."""
        self.dut.direct.value = int(direct)
        self.bank.h.start.value = 0
        await self.bank.begin(self.clock, reset=True, seed=self.seed)

    async def start_bank(self, streams: Mapping[int, Sequence[int]], *, idle: StallPattern = StallPattern(),
                         backpressure: StallPattern = StallPattern(),
                         violation: Violation = Violation.NONE) -> list[tuple[int, int]]:
        """Load each port's flits and start injecting them (stops a previous run first)."""
        if int(self.bank.h.start.value):
            await self.bank.stop()
        await self.bank.begin(self.clock, reset=False, seed=self.seed, idle=idle, backpressure=backpressure,
                              violation=violation)
        slots = await self.bank.load(streams)
        self.bank.h.start.value = 1
        return slots

    async def wait_injected(self, total: int, timeout_cycles: int, step: int = 50) -> bool:
        """Wait (coarse Timer steps) until the bank has injected `total` flits since reset."""
        for _ in range(max(1, timeout_cycles // step)):
            if int(self.bank.h.inj_count.value) >= total:
                return True
            await Timer(step * PERIOD_NS, "ns")
        return int(self.bank.h.inj_count.value) >= total

    async def wait_captured(self, total: int, timeout_cycles: int, step: int = 50) -> bool:
        """Wait (coarse Timer steps) until the bank has captured `total` flits since reset."""
        for _ in range(max(1, timeout_cycles // step)):
            if int(self.bank.h.cap_count.value) >= total:
                return True
            await Timer(step * PERIOD_NS, "ns")
        return int(self.bank.h.cap_count.value) >= total

    async def idle(self, cycles: int) -> None:
        await Timer(cycles * PERIOD_NS, "ns")
        await RisingEdge(self.clock.clk)

    async def captures(self) -> list[CaptureRecord]:
        """Every flit the bank's sinks took since reset, with port and cycle."""
        records, _ = await self.bank.dump()
        return records

    async def inject_times(self) -> list[int]:
        """The cycle the device took each flit the bank injected since reset (NEVER if it was not)."""
        _, times = await self.bank.dump()
        return times

    async def stamps(self, *events: str) -> tuple[int, ...]:
        """The bank cycles orch_harness stamped at the last of each event: a handshake on AXI channel aw,
        w, b, ar or r, or run_low (the first edge PROG_STAT's run bit is low after a dispatch ran). Read one
        cycle on, so a stamp taken at the edge the caller woke on has landed."""
        await self.idle(1)
        return tuple(int(getattr(self.dut, f"{e}_at").value) for e in events)

    # ---------------------------------------------------------------- watchdog and verdict
    async def guard(self, body: Callable[[], Awaitable[None]], max_cycles: int) -> None:
        """Run `body` under a simulated-time watchdog, then write the verdict (raises on failure)."""
        self._start_ns = int(get_sim_time("ns"))
        try:
            await with_timeout(body(), max_cycles * PERIOD_NS, "ns")
        except SimTimeoutError:
            self.verdict.check(False, f"watchdog: the test did not finish within {max_cycles} cycles")
        except AssertionError as exc:
            self.verdict.check(False, f"{type(exc).__name__}: {exc}")
        self.verdict.cycles += self.clock.cycles_since_first_reset(PERIOD_NS, self._start_ns)
        self.verdict.finish()
