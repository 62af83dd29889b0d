"""The mesh with the routers' timing: each flit carried router by router, each register's edge counted.

Why: on the ideal network of the golden machine (models/machine/event_model.py) a flit arrives the moment it
is sent; the RTL's mesh takes three edges a router and one flit a cycle on each port, and that is part of
every round's cycles. The rules (rtl/noc/noc_router.v, timed as upstream's noc_inport.v / noc_outport.v):

* a flit taken into a router's input FIFO at edge e is in that input's holding register at e+1 at the
  earliest; the holding register takes the FIFO's head only once its own flit has been granted (it reloads
  the edge it is granted), so flits of one input leave in order, one an edge;
* a held flit is granted into its output port's register at the first edge from e+2 at which that register
  is free (the register reloads the edge its flit is taken); the next receiver (a router's input FIFO, or
  the endpoint) takes it one edge later: three edges a router when nothing contends;
* routing is models.noc.mesh.MeshGeometry's, the RTL's X-first rule.

* an endpoint that is busy (``accept``: the memory agent's full intake) leaves its flit in the last output
  register; the flits that follow for the same endpoint wait behind it.

What is not modelled (stated so a difference can be placed): the round-robin pointer that rotates every
cycle (contending flits here are granted first come, first served, in the order they reached their holding
registers; ties by the order they were sent); back-pressure from a full input FIFO (the machine's FIFOs are
512 deep); and a held output register's effect on the routers behind it (flits already granted towards a
busy endpoint wait at the endpoint, not in the holding registers they would block).

Events are processed in edge order (a heap), so every register is reserved in the order of the edges that
use it.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import Callable

from models.noc.flit import flit_dst
from models.noc.mesh import MeshGeometry, Port

Coord = tuple[int, int]
Deliver = Callable[[int, Coord, int], None]  # (edge the endpoint takes it, destination, flit)
Accept = Callable[[Coord, int], int]  # (endpoint, edge its flit is offered) -> the edge the endpoint takes it
Wake = Callable[[int, Coord], None]   # (edge, endpoint): a unit's own work due at that edge

_WAKE = 0    # a unit's own work (before the flits of the same edge: it sees what arrived before that edge)
_HOP = 1     # a flit taken into a router's input FIFO
_TAKE = 2    # a flit offered to an endpoint from its router's output register


class TimedMesh:
    """The routers of `mesh` as registers with edges; :meth:`send` puts a flit in, :meth:`advance` moves time."""

    def __init__(self, mesh: MeshGeometry, deliver: Deliver, accept: Accept | None = None,
                 wake: Wake | None = None) -> None:
        self.mesh = mesh
        self.deliver = deliver
        self.accept = accept
        self.on_wake = wake
        self.inputs: dict[tuple[Coord, int], deque[tuple[int, int]]] = {}  # input FIFO -> (edge in, flit) not granted
        self.held: dict[tuple[Coord, int], int] = {}  # ejection register -> grant edge of the flit it holds, untaken
        self.waiting: dict[tuple[Coord, int], list[tuple[Coord, int]]] = {}  # held register -> inputs waiting on it
        self.heap: list[tuple[int, int, int, Coord, int, int]] = []  # (edge, kind, seq, router/dst, port, flit)
        self.seq = itertools.count(1)  # ties of one edge and kind: the order they were pushed
        self.hold_free: dict[tuple[Coord, int], int] = {}  # (router, input port) -> edge its holding register reloads
        self.out_free: dict[tuple[Coord, int], int] = {}   # (router, output port) -> edge its register reloads
        self._entry: dict[Coord, tuple[Coord, int]] = {}
        self._route: dict[tuple[Coord, Coord], tuple[int, Coord | None, int]] = {}

    def entry(self, endpoint: Coord) -> tuple[Coord, int]:
        got = self._entry.get(endpoint)
        if got is None:
            router, port = self.mesh.entry_port(endpoint)
            got = self._entry[endpoint] = (router, int(port))
        return got

    def _next(self, router: Coord, dst: Coord) -> tuple[int, Coord | None, int]:
        """(output port, next router or None when the flit leaves to the endpoint, the next router's input)."""
        key = (router, dst)
        got = self._route.get(key)
        if got is None:
            port = self.mesh.output_port(router, dst)
            nxt = self.mesh.neighbour(router, port)
            if port is Port.L or not self.mesh.is_router(nxt):
                got = (int(port), None, 0)
            else:
                got = (int(port), nxt, int(_OPPOSITE[port]))
            self._route[key] = got
        return got

    def send(self, edge: int, src: Coord, flit: int) -> None:
        """`src`'s endpoint offers `flit`; its router's input FIFO takes it at `edge`."""
        router, port = self.entry(src)
        self._push(edge, _HOP, router, port, flit)

    def _push(self, edge: int, kind: int, where: Coord, port: int, flit: int) -> None:
        heapq.heappush(self.heap, (edge, kind, next(self.seq), where, port, flit))

    def wake(self, edge: int, unit: Coord) -> None:
        """Call the machine back at `edge` for `unit`'s own work (before the flits of that edge)."""
        self._push(edge, _WAKE, unit, 0, 0)

    def next_edge(self) -> int | None:
        """The edge of the next thing that happens in the mesh, or None when it is empty."""
        return self.heap[0][0] if self.heap else None

    def advance(self, until: int) -> None:
        """Move every flit through every register up to and including edge `until`."""
        heap = self.heap
        while heap and heap[0][0] <= until:
            edge, kind, _, where, port, flit = heapq.heappop(heap)
            if kind == _HOP:  # into an input FIFO: granted in order, behind the flits before it
                key = (where, port)
                q = self.inputs.get(key)
                if q is None:
                    q = self.inputs[key] = deque()
                q.append((edge, flit))
                if len(q) == 1:
                    self._grant(key)
            elif kind == _TAKE:
                self._take(edge, where, port, flit)
            elif self.on_wake is not None:
                self.on_wake(edge, where)

    def _grant(self, key: tuple[Coord, int]) -> None:
        """Grant the head of input `key` (and the flits behind it) to their outputs, as far as they can go now:
        a head whose output register holds a flit its endpoint has not taken waits for that take."""
        q = self.inputs[key]
        router = key[0]
        held, hold_free, out_free, heap, seq = self.held, self.hold_free, self.out_free, self.heap, self.seq
        while q:
            edge, flit = q[0]
            dst = flit_dst(flit)
            out, nxt, nxt_in = self._next(router, dst)
            okey = (router, out)
            if okey in held:  # the register's flit waits for its endpoint: so does this input
                waiting = self.waiting.setdefault(okey, [])
                if key not in waiting:
                    waiting.append(key)
                return
            hold = edge + 1
            free = hold_free.get(key, 0)
            if free > hold:
                hold = free
            grant = hold + 1
            free = out_free.get(okey, 0)
            if free > grant:
                grant = free
            q.popleft()
            hold_free[key] = grant
            if nxt is None:  # to the endpoint: the register holds it until the endpoint takes it
                held[okey] = grant
                heapq.heappush(heap, (grant + 1, _TAKE, next(seq), dst, out, flit))
            else:
                out_free[okey] = grant + 1
                heapq.heappush(heap, (grant + 1, _HOP, next(seq), nxt, nxt_in, flit))

    def _take(self, edge: int, dst: Coord, out: int, flit: int) -> None:
        """The endpoint `dst` is offered `flit` from its router's output register from `edge`."""
        take = edge if self.accept is None else self.accept(dst, edge)
        if take > edge:  # busy: the flit stays in the register
            self._push(take, _TAKE, dst, out, flit)
            return
        router = self.entry(dst)[0]
        okey = (router, out)
        del self.held[okey]
        self.out_free[okey] = edge  # the register reloads the edge its flit is taken
        self.deliver(edge, dst, flit)
        for key in self.waiting.pop(okey, ()):
            self._grant(key)


_OPPOSITE = {Port.N: Port.S, Port.S: Port.N, Port.E: Port.W, Port.W: Port.E}

__all__ = ["TimedMesh"]
