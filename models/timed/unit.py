"""What a timed unit is to the timed machine: a golden model whose flits carry the edge they enter the mesh.

A router takes a flit into an input FIFO at edge e; it is in the holding register at e+1, in the output
register at e+2 and taken by the next receiver at e+3 (rtl/noc/noc_router.v, upstream's noc_inport.v /
noc_outport.v). A unit's endpoint is such a receiver on its router's Local port, and such a sender into it:

* ``take_at(flit, t)``: ``t`` is the edge the endpoint takes the flit (a receiver's e+3 above);
* each returned :data:`Stamped` pair is (e, event): ``e`` the edge the router's Local input FIFO takes the
  event's flit, i.e. one edge after the unit's output register first holds it (a unit whose output register
  is loaded at edge L offers the flit during the cycle after L and the router takes it at L+1).

A unit sends at most one flit per edge on its link (:class:`OutLink` keeps that); the stamps of one unit's
flits never decrease in the order returned (the link is first in, first out).
"""

from __future__ import annotations

from typing import Protocol

from models.vector.link import Event

Stamped = tuple[int, Event]


class TimedUnit(Protocol):
    def take_at(self, flit: int, t: int) -> list[Stamped]: ...


class OutLink:
    """A unit's one outbound link: a flit ready at edge ``e`` enters the router at the first free edge from e."""

    def __init__(self) -> None:
        self.free = 0  # the first edge at which the link can take another flit

    def send(self, e: int) -> int:
        """The edge a flit ready at ``e`` enters the router; the link is busy at that edge."""
        at = e if e >= self.free else self.free
        self.free = at + 1
        return at


__all__ = ["OutLink", "Stamped", "TimedUnit"]
