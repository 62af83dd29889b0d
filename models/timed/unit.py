"""What a timed unit is to the timed machine: a golden model whose flits carry the edge they enter the mesh.

A router takes a flit into an input FIFO at edge e; it is in the holding register at e+1, in the output
register at e+2 and taken by the next receiver at e+3 (rtl/noc/noc_router.v, upstream's noc_inport.v /
noc_outport.v). A unit's endpoint is such a receiver on its router's Local port, and such a sender into it:

* ``take_at(flit, t)``: ``t`` is the edge the endpoint takes the flit (a receiver's e+3 above);
* each returned :data:`Stamped` pair is (e, event): ``e`` the edge the router's Local input FIFO takes the
  event's flit, i.e. one edge after the unit's output register first holds it (a unit whose output register
  is loaded at edge L offers the flit during the cycle after L and the router takes it at L+1).

A unit sends at most one flit per edge on its link (:class:`OutRegister` keeps that).
"""

from __future__ import annotations

from typing import Protocol

from models.vector.link import Event

Stamped = tuple[int, Event]
# one flit at an endpoint: (cycle, "IN" the endpoint takes it / "OUT" the mesh takes it from it, endpoint, flit)
FlitRecord = tuple[int, str, tuple[int, int], int]


class TimedUnit(Protocol):
    def take_at(self, flit: int, t: int) -> list[Stamped]: ...


NEVER = -(1 << 62)  # an edge before every edge


class OutRegister:
    """A unit's output register, the one flit a cycle it offers its router: at most one flit loaded per edge; a
    flit loaded at ``L`` enters the router at ``L + 1``. ``load(ready)`` gives the first free edge from
    ``ready`` and marks it used, so a flit placed later (a completion, an ack) takes the first edge still free
    instead of queueing behind flits already placed for later edges."""

    def __init__(self) -> None:
        self.used: set[int] = set()
        self.last = NEVER  # the latest edge loaded so far

    def load(self, ready: int) -> int:
        e = ready
        used = self.used
        if e <= self.last:  # the common case (in order) skips the search
            while e in used:
                e += 1
        used.add(e)
        if e > self.last:
            self.last = e
        return e

    def send(self, edge: int) -> int:
        """The edge the router takes a flit that could enter it at ``edge`` (loaded the edge before)."""
        return self.load(edge - 1) + 1


__all__ = ["NEVER", "FlitRecord", "OutRegister", "Stamped", "TimedUnit"]
