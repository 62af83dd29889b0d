"""A whole machine of timed golden models, and a host that spends the RTL host's cycles: a bundle's rounds timed.

Why: the golden machine (models/machine/event_model.py) judges every bit but keeps no clock; with each unit's
timed twin (models/timed/*), the routers' registers (network.py) and the orchestrator's dispatcher (orch.py)
on one clock, and a host that spends the cycles the RTL's host does, the executor's own round stamps
(models/bundle/round_timing.py) give host and machine cycles per round comparable with an RTL run's and with
upstream's timing_rtl.json.

The host (:class:`TimedHost`): one AXI-Lite transfer at a time, :data:`AXI_CYCLES` each (upstream's plain
host, clients/README.md; the same figure tests/unit/bundle/test_client_timing.py holds to upstream's host
cycles); a write acts at the edge it is issued; a poll reads back to back, each read seeing the machine as
it is one edge after the read is issued (the orchestrator loads the read data one edge after AR).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from models.bundle.executor import NotLanded, PollFailed, describe_poll, stage_writes
from models.bundle.loader import Poll
from models.bundle.round_budget import DeliveryBudget
from models.machine.event_model import Factory, MachineModel, ModelHost, _type_name
from models.machine.layouts import Machine, UnitKind
from models.noc.flit import FlitType, flit_type

from .network import TimedMesh
from .orch import TimedOrch
from .unit import FlitRecord, Stamped

AXI_CYCLES = 4  # one AXI-Lite transfer of upstream's host (AW, W, B or AR, R)
_MEM_WR_DATA = int(FlitType.MEM_WR_DATA)


class TimedMachine(MachineModel):
    """MachineModel on a clock: units' flits stamped, carried by a TimedMesh, delivered at their edges."""

    orch_model = TimedOrch
    orch: TimedOrch

    def __init__(self, machine: Machine, unit_models: Mapping[UnitKind, Factory]) -> None:
        super().__init__(machine, unit_models)
        self.mesh = TimedMesh(machine.geometry, self._arrive, self._accept, self._wake)
        self.now = 0
        # set to a list to record every flit as the RTL top's flit trace does (models/timed/trace.py):
        # (edge, "IN" an endpoint takes it / "OUT" the mesh takes it from an endpoint, endpoint, flit)
        self.trace: list[FlitRecord] | None = None
        self._intakes = {c: u.intake_edge for c, u in self.units.items() if hasattr(u, "intake_edge")}
        for coord, unit in self.units.items():
            if hasattr(unit, "wake"):  # a unit with work of its own (the agent's writes): it asks to be called
                unit.schedule = lambda edge, c=coord: self.mesh.wake(edge, c)

    # ------------------------------------------------------------ network
    def _send_stamped(self, src: tuple[int, int], stamped: list[Stamped]) -> None:
        if self.trace is not None:
            self.trace += [(edge - 1, "OUT", src, ev.flit) for edge, ev in stamped]  # offered the cycle before
        for edge, ev in stamped:
            if flit_type(ev.flit) == _MEM_WR_DATA:
                self.wr_data_sent += 1
            self.mesh.send(edge, src, ev.flit)

    def _arrive(self, edge: int, dst: tuple[int, int], flit: int) -> None:
        if self.trace is not None:
            self.trace.append((edge - 1, "IN", dst, flit))  # offered the cycle before it is taken
        self.steps += 1
        self.delivered[_type_name(flit_type(flit))] += 1
        if dst == self.orch.own:
            self.orch.now = edge
            self._send_stamped(dst, self.orch.take_at(flit, edge))
            return
        unit = self.units.get(dst)
        if unit is None:
            self.errors.append(f"undeliverable flit to {dst} (no endpoint there)")
            return
        self._send_stamped(dst, unit.take_at(flit, edge))

    def _accept(self, dst: tuple[int, int], edge: int) -> int:
        """The edge `dst` takes a flit offered from `edge` (a unit with an intake that can be busy says)."""
        intake = self._intakes.get(dst)
        return intake(edge) if intake is not None else edge

    def _wake(self, edge: int, coord: tuple[int, int]) -> None:
        self._send_stamped(coord, self.units[coord].wake(edge))

    def advance(self, edge: int) -> None:
        """Everything in the machine up to and including `edge`."""
        self.mesh.advance(edge)
        self.now = max(self.now, edge)
        self.orch.now = self.now

    def quiet_at(self) -> int | None:
        """The edge of the next event, or None when nothing is in flight."""
        return self.mesh.next_edge()

    def host_write(self, addr: int, value: int, edge: int) -> None:
        self.advance(edge)
        self._send_stamped(self.orch.own, self.orch.write_at(addr, value, edge))


class TimedHost(ModelHost):
    """executor.Host on a TimedMachine: its clock is the machine's; a transfer costs AXI_CYCLES (module doc)."""

    def __init__(self, mm: TimedMachine, budget: DeliveryBudget | None = None) -> None:
        super().__init__(mm, budget)
        self.tm = mm
        self.clock = 0

    async def read(self, addr: int) -> int:
        self.tm.advance(self.clock + 1)
        self.clock += AXI_CYCLES
        return self.tm.read(addr)

    async def write(self, addr: int, value: int) -> None:
        self.tm.host_write(addr, value, self.clock + 1)
        self.clock += AXI_CYCLES

    async def stage(self, slots: Mapping[int, int]) -> None:
        for addr, word in stage_writes(slots, self.slots):
            await self.write(addr, word)

    async def poll(self, cmd: Poll, what: str) -> int:
        tm = self.tm
        while True:
            sample = self.clock + 1
            tm.advance(sample)
            value = tm.read(cmd.addr)
            if value & cmd.mask == cmd.want:
                self.clock += AXI_CYCLES
                return value
            nxt = tm.quiet_at()
            if nxt is None:
                waiting = "; ".join(tm.waiting()) or "no unit waits for anything"
                raise PollFailed(f"{what}: {describe_poll(cmd, value, 'the timed machine went quiet')}; {waiting}")
            # nothing changes before the next event: skip the reads that would see the same
            reads = max(1, -(-(nxt - sample) // AXI_CYCLES))
            self.clock += AXI_CYCLES * reads

    async def wait_landed(self, what: str) -> None:
        tm = self.tm
        while True:
            nxt = tm.quiet_at()
            if nxt is None:
                break
            tm.advance(nxt)
        self.clock = max(self.clock, tm.now + 1)
        epoch = getattr(tm.mag, "new_epoch", None)
        if epoch is not None:
            epoch()
        if tm.outstanding_writes:
            raise NotLanded(f"{what}: {tm.outstanding_writes} write(s) never landed "
                            f"({tm.wr_data_sent} MEM_WR_DATA sent, {tm.words_written} DRAM words written)")

    async def read_dram(self, addr: int, nbytes: int) -> np.ndarray:
        return self.tm.dump(addr, nbytes)

    def cycle(self) -> int:
        return self.clock


__all__ = ["AXI_CYCLES", "TimedHost", "TimedMachine"]
