"""The timing of the shared compute-unit endpoint base (rtl/cu/cu_base.v), as "next free edge" numbers.

Every compute unit (the vector core, the cluster) sits behind cu_base, so the edges below are common to
their timed twins (models/timed/cluster.py uses them; a vector-core twin uses the same class). Edges count
clock edges; a register written at edge e is seen in cycle e+1, and edge e ends cycle e (models.timed).

The base's rules, each from cu_base.v (and noc_fifo.v, the FIFOs it instantiates: a flit pushed at edge t is
at the head in cycle t+1):

* **instruction FIFO** (``INST_DEPTH``): a CU_INST the endpoint takes at edge ``t`` is readable (inst_valid)
  in cycle ``t+1``; a unit whose ready answers in that cycle accepts it at edge ``t+1`` at the earliest
  (:meth:`CuBaseTiming.inst_readable`).
* **one instruction at a time**: inst_valid only while none is in flight. The unit raises exec_done (a
  register written at edge ``X``); the base clears in_flight at ``X+1``, so the next instruction is
  readable in cycle ``X+2`` and accepted at edge ``X+2`` at the earliest ("next instruction accepted 2
  edges after exec_done", docs/cluster.md "Timing"; :attr:`CuBaseTiming.next_accept`).
* **completion queue** (16 deep): the completion is queued at ``X+1``, loaded into the output register at
  ``X+2`` (first, before anything else) and taken by the router at ``X+3`` ("the completion on the link 3
  cycles after it"; :meth:`CuBaseTiming.retire`).
* **CU_CTRL**: a request taken at ``t`` is pending from cycle ``t+1``; the reply is loaded at ``t+1`` when
  no completion waits, the router takes it at ``t+2`` (:meth:`CuBaseTiming.ctrl_reply`).
* **receive FIFO** (``RECV_DEPTH``): any other flit taken at ``t`` is at the unit's receive head in cycle
  ``t+1``; the unit pops one a cycle (:meth:`CuBaseTiming.recv_readable`).
* **output register**, one, held until taken: per edge it loads, in priority order, a completion, the
  CU_CTRL reply, or the unit's send_flit; the router takes a flit loaded at ``L`` at ``L+1`` (the stamp of
  models.timed.unit). A unit's send register loaded at edge ``S`` (send_valid from cycle ``S+1``) is taken
  into the output register at the first free edge from ``S+1``, and the unit may load its send register
  again at that same edge (:class:`SendPath`).

What is not modelled (the caller's or the network's business): back pressure from the router (the output
register is assumed taken the edge after it loads unless another of this unit's flits holds that edge),
the input's busy (a full FIFO, a pending CU_CTRL reply: ``t`` is given by the caller), and a full
completion queue (16 retirements not yet sent cannot happen without back pressure). Priority is kept
between flits placed in one pass; a flit placed later never displaces one already placed (it takes the
first free edge instead, so a completion computed after a unit's burst was placed can come out behind the
burst's flit, at most a burst later, where the RTL would have delayed the burst by one cycle).

API (all numbers are edges):

``CuBaseTiming(inst_depth=32, recv_depth=8)``
    ``inst_readable(t)``  first edge a unit can accept a CU_INST the endpoint took at ``t`` (``t+1``);
    ``accept(ready)``     the edge the next instruction is accepted, given the unit's own earliest edge
                          ``ready``: ``max(ready, next_accept)``; marks it in flight;
    ``retire(x)``         the unit's exec_done register written at edge ``x``: queues the completion,
                          sets ``next_accept = x + 2`` and returns the router's edge for the completion;
    ``recv_readable(t)``  first edge a unit can pop a receive flit the endpoint took at ``t`` (``t+1``);
    ``ctrl_reply(t)``     the router's edge for the reply to a CU_CTRL taken at ``t``;
    ``out``               the :class:`OutRegister` (shared by the base's own flits and the unit's).
``SendPath(base)``        the unit's one send register in front of the base:
    ``send(ready)``       a unit flit that could be loaded into the send register at edge ``ready``:
                          returns ``(load, stamp)``: the edge it is loaded (``>= ready``, after the previous
                          flit left the register) and the router's edge. A burst whose next flit follows the
                          previous one's load (a write port's W_DATA state) calls ``send(load + 1)``.
"""

from __future__ import annotations

from .unit import NEVER, OutRegister


class CuBaseTiming:
    """The edges of rtl/cu/cu_base.v for one unit (see the module docstring for the rules and the API)."""

    SIG_DEPTH = 16

    def __init__(self, inst_depth: int = 32, recv_depth: int = 8) -> None:
        if inst_depth < 2 or recv_depth < 1:
            raise ValueError(f"cu_base: INST_DEPTH={inst_depth} RECV_DEPTH={recv_depth}: need INST_DEPTH >= 2 "
                             "and RECV_DEPTH >= 1 (rtl/cu/cu_base.v)")
        self.inst_depth = inst_depth
        self.recv_depth = recv_depth
        self.out = OutRegister()
        self.next_accept = NEVER  # first edge the next instruction may be accepted (exec_done + 2)
        self.in_flight_since: int | None = None  # the accept edge of the instruction in flight
        self.retired = 0

    @staticmethod
    def inst_readable(t: int) -> int:
        """A CU_INST pushed into the instruction FIFO at ``t`` is at its head in cycle ``t + 1``."""
        return t + 1

    @staticmethod
    def recv_readable(t: int) -> int:
        """A flit pushed into the receive FIFO at ``t`` is at its head in cycle ``t + 1``."""
        return t + 1

    def accept(self, ready: int) -> int:
        """The edge the unit accepts its next instruction, the unit's own conditions holding from edge
        ``ready`` (inst_readable included): none in flight, the previous exec_done 2 edges back."""
        a = ready if ready >= self.next_accept else self.next_accept
        self.in_flight_since = a
        return a

    def retire(self, exec_done: int) -> int:
        """exec_done written at ``exec_done``: the completion's router edge (``exec_done + 3`` when free)."""
        self.in_flight_since = None
        self.next_accept = exec_done + 2
        self.retired += 1
        return self.out.load(exec_done + 2) + 1

    def ctrl_reply(self, t: int) -> int:
        """A CU_CTRL taken at ``t``: its reply's router edge (``t + 2`` when the output register is free)."""
        return self.out.load(t + 1) + 1


class SendPath:
    """A unit's send register (send_valid / send_flit) in front of cu_base's output register."""

    def __init__(self, base: CuBaseTiming) -> None:
        self.base = base
        self.free = NEVER  # first edge the send register can load again (the base took the previous flit)

    def send(self, ready: int) -> tuple[int, int]:
        """(send-register load edge, router edge) of a flit the unit has ready from edge ``ready``."""
        load = ready if ready >= self.free else self.free
        took = self.base.out.load(load + 1)
        self.free = took
        return load, took + 1


__all__ = ["NEVER", "CuBaseTiming", "OutRegister", "SendPath"]
