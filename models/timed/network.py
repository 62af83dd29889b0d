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

What is not modelled (stated so a difference can be placed): the round-robin pointer that rotates every
cycle (contending flits here are granted first come, first served, in the order they reached their holding
registers; ties by the order they were sent), and back-pressure from a full input FIFO or a busy endpoint
(the machine's FIFOs are 512 deep; the memory agent's intake busy is the agent's own model).

Events are processed in edge order (a heap), so every register is reserved in the order of the edges that
use it.
"""

from __future__ import annotations

import heapq
from typing import Callable

from models.noc.flit import flit_dst
from models.noc.mesh import MeshGeometry, Port

Coord = tuple[int, int]
Deliver = Callable[[int, Coord, int], None]  # (edge the endpoint takes it, destination, flit)

_HOP = 0     # a flit taken into a router's input FIFO
_ARRIVE = 1  # an endpoint takes a flit


class TimedMesh:
    """The routers of `mesh` as registers with edges; :meth:`send` puts a flit in, :meth:`advance` moves time."""

    def __init__(self, mesh: MeshGeometry, deliver: Deliver) -> None:
        self.mesh = mesh
        self.deliver = deliver
        self.heap: list[tuple[int, int, int, Coord, int, int]] = []  # (edge, seq, kind, router/dst, port, flit)
        self.seq = 0
        self.hold_free: dict[tuple[Coord, int], int] = {}  # (router, input port) -> edge its holding register reloads
        self.out_free: dict[tuple[Coord, int], int] = {}   # (router, output port) -> edge its register reloads
        self.now = 0
        self._entry: dict[Coord, tuple[Coord, int]] = {}
        self._route: dict[tuple[Coord, Coord], tuple[int, Coord | None, int]] = {}
        self.in_flight = 0

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
        self.in_flight += 1

    def _push(self, edge: int, kind: int, where: Coord, port: int, flit: int) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (edge, self.seq, kind, where, port, flit))

    def next_edge(self) -> int | None:
        """The edge of the next thing that happens in the mesh, or None when it is empty."""
        return self.heap[0][0] if self.heap else None

    def advance(self, until: int) -> None:
        """Move every flit through every register up to and including edge `until`."""
        heap = self.heap
        while heap and heap[0][0] <= until:
            edge, _, kind, where, port, flit = heapq.heappop(heap)
            self.now = edge
            if kind == _ARRIVE:
                self.in_flight -= 1
                self.deliver(edge, where, flit)
                continue
            dst = flit_dst(flit)
            out, nxt, nxt_in = self._next(where, dst)
            hkey, okey = (where, port), (where, out)
            hold = edge + 1
            free = self.hold_free.get(hkey, 0)
            if free > hold:
                hold = free
            grant = hold + 1
            free = self.out_free.get(okey, 0)
            if free > grant:
                grant = free
            self.hold_free[hkey] = grant
            self.out_free[okey] = grant + 1
            if nxt is None:
                self._push(grant + 1, _ARRIVE, dst, 0, flit)
            else:
                self._push(grant + 1, _HOP, nxt, nxt_in, flit)


_OPPOSITE = {Port.N: Port.S, Port.S: Port.N, Port.E: Port.W, Port.W: Port.E}

__all__ = ["TimedMesh"]
