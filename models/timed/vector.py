"""The vector core with its endpoint's clock: every flit it sends stamped with the edge it enters the mesh.

Why: the kernel clock (models/vector/kernel_clock.py, held to upstream's cycles on 909 programs) says when
each word of a RUN executes, in kernel counts, given when its VFILL responses land. In a machine those
responses come from the memory agent through the mesh, so here the clock learns them from the responses'
own arrival edges, and the core's flits (VFILL requests, VDRAIN writes and CU_DATA, completions) are placed
at the edges their words give them.

Counts and edges: a RUN's kernel count c is edge ``run0 + c``. The offsets between the endpoint base's
edges and the kernel's (:class:`EndpointTiming`) are the RTL's structure (rtl/cu/cu_base.v,
rtl/vector/vector_core.v, vc_xfer.v, vc_link.v); each says where it comes from.

Bits are the golden VectorCore's (through models.vector.timed_core.TimedVectorCore, which adds the clock).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Mapping

from models.noc.flit import FlitType, flit_type
from models.vector import isa
from models.vector.core import MAG_DEFAULT, Coord, Event, _Run
from models.vector.isa import Word
from models.vector.kernel_clock import FillMemory
from models.vector.timed_core import TimedVectorCore

from .cu_base import CuBaseTiming
from .unit import Stamped

_NOT_YET = 1 << 62  # fills_done while a VFILL's responses are still on their way


class _ArrivalMemory(FillMemory):
    """The kernel clock's memory in a machine: a VFILL's last response is not known when it fires; the core
    learns it from the responses (TimedVector.take_at) before any word that needs it executes."""

    def last_response(self, p: int, n: int) -> int:
        return _NOT_YET


@dataclass(frozen=True)
class EndpointTiming:
    """The vector core's own edges around its endpoint base (the base's are models/timed/cu_base.py's: a
    CU_INST accepted from the cycle after it is taken, the next 2 edges after exec_done, the completion on the
    router 3 after): rtl/vector/vector_core.v's envelope and vc_xfer.v / vc_link.v, each the register stages
    between the two; checked flit by flit against the RTL's flit traces (tests/unit/timed/test_timed_trace.py)."""

    imem_done: int = 1     # IMEM / DESC: acceptance to exec_done ("retires the cycle after acceptance")
    run_start: int = 3     # RUN: acceptance to kernel count 0 (E_DEC, run_start, the sequencer's start)
    halt_done: int = 2     # the RUN's cycle count to exec_done (the sequencer's done, the envelope's exec_done)
    req_lead: int = 4      # a VFILL / VDRAIN's fire count to its first flit entering the router: vc_xfer's go
                           # the cycle after (1), vc_link's queue (2), its send register (3), cu_base's output
                           # register (4); the RTL's flit trace agrees (ops_log2: the RUN's first VFILL request
                           # 21 cycles after its dispatch, as here)
    resp_land: int = 0     # a fill response taken at edge e counts from kernel count e - run0 + resp_land
    ack_lead: int = 3      # a CU_DATA burst's last word taken to its DATA_RECEIVED entering the router


class TimedVector(TimedVectorCore):
    """TimedVectorCore whose flits carry edges (module doc)."""

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT, facts: Mapping[str, int] | None = None,
                 ep: EndpointTiming = EndpointTiming()) -> None:
        super().__init__(coord, mag, facts, _ArrivalMemory())
        self.ep = ep
        self.endpoint = CuBaseTiming()        # the endpoint base (cu_base): accept, retire, its output register
        self.arrivals: deque[int] = deque()  # edges the queued CU_INSTs were taken
        self.run0 = 0                         # kernel count 0 of the current RUN
        self.now = 0
        self.stamps: dict[int, int] = {}      # id(event) -> edge it is ready to enter the router
        self.placed: dict[int, int] = {}      # id(completion) -> its router edge, placed by the base

    # ------------------------------------------------------------ the link
    def take_at(self, flit: int, t: int) -> list[Stamped]:
        self.now = t
        ftype = flit_type(flit)
        if ftype == FlitType.CU_INST:
            self.arrivals.append(t)
        events = self.take(flit)
        stamps, placed, out, register = self.stamps, self.placed, [], self.endpoint.out
        default = t + self.ep.ack_lead
        for ev in events:
            edge = placed.pop(id(ev), None)
            out.append((register.send(stamps.pop(id(ev), default)) if edge is None else edge, ev))
        stamps.clear()
        placed.clear()
        return out

    def _fill_response(self, flit: int) -> list[Event]:
        pending = len(self.fills)
        if self.run is not None and pending == 1:
            # the last response of the outstanding VFILL: the clock learns when the fills land (rule 9)
            self.clock.fills_done = self.now - self.run0 + self.ep.resp_land + self.clock.f["FILL_LAND"]
        return super()._fill_response(flit)

    # ------------------------------------------------------------ the envelope
    def _execute(self, inst: int) -> list[Event]:
        arrived = self.arrivals.popleft() if self.arrivals else self.now
        accept = self.endpoint.accept(self.endpoint.inst_readable(arrived))
        if (inst & isa.WORD_MASK) >> 252 == isa.INST_RUN:
            self.run0 = accept + self.ep.run_start
            return super()._execute(inst)
        events = super()._execute(inst)
        edge = self.endpoint.retire(accept + self.ep.imem_done)
        for ev in events:
            self.placed[id(ev)] = edge
        return events

    def _finish(self, out: list[Event], fault: int | None) -> list[Event]:
        count = self.run_counts[-1] if self.run_counts and self.run_counts[-1] is not None else self.clock.t_next
        events = super()._finish(out, fault)
        self.placed[id(events[-1])] = self.endpoint.retire(self.run0 + count + self.ep.halt_done)
        return events

    # ------------------------------------------------------------ a word's flits
    def _step(self, w: Word, r: _Run, out: list[Event]) -> bool:
        before = len(out)
        fills_done = self.clock.fills_done
        halted = super()._step(w, r, out)
        if w.op == isa.OP_VFILL and len(out) == before:
            self.clock.fills_done = fills_done  # nothing requested: nothing to land
        if len(out) > before and w.op in (isa.OP_VFILL, isa.OP_VDRAIN):
            t = self.clock.trace[-1][1]
            fire = max(t, fills_done) if w.op == isa.OP_VFILL else t
            first = self.run0 + fire + self.ep.req_lead
            gap = self.clock.f["XFER_GAP"]
            stamps = self.stamps
            if w.op == isa.OP_VFILL:
                for j, ev in enumerate(out[before:]):
                    stamps[id(ev)] = first + gap * j
            elif w.node:
                for j, ev in enumerate(out[before:]):
                    stamps[id(ev)] = first + (0 if j == 0 else 1 + gap * (j - 1))
            else:
                for j, ev in enumerate(out[before:]):
                    stamps[id(ev)] = first + gap * (j // 2) + (j % 2)
        return halted


__all__ = ["EndpointTiming", "TimedVector"]
