"""The cluster CU with a clock: :class:`TimedCluster`, the golden ClusterCore whose every flit carries its edge.

Why: ``ClusterCore.take(flit)`` (models/cluster/core.py) gives every flit the cluster sends bit for bit, but
completes a GEMM or a DRAIN inside the ``take`` that starts it and keeps no clock. ``TimedCluster.take_at(flit,
t)`` keeps those bits (it calls the golden ``take``) and stamps each returned flit with the edge the router's
Local input FIFO takes it (the contract of models/timed/unit.py), from the RTL's rules below, so a machine
model gets the cluster's cycles without running the RTL. The numbers are "next free edge" values per
resource (the instruction slot, the sweep, the array, the drain queue, the write port, the send register, the
base's output register), not a cycle-by-cycle simulation: a GEMM of 65280 commands costs O(1) unless it
emits (then O(gm*gn)).

Edges: edge e ends cycle e; a register written at edge e is seen in cycle e+1. ``A`` below is the edge the
sequencer accepts an instruction (inst_ready written, the op state entered), ``X`` the edge exec_done is
written. The timing facts (ISSUE_LAT, CASCADE_LAT, ACU_STAGES, REUSE_MIN, DQ_DEPTH, DQ_LIMIT) are
models/machine/unit_timing.py's CLUSTER_FACTS, overridable by key ("cluster.CASCADE_LAT"); SW_LEN =
ISSUE_LAT + CASCADE_LAT + 1.

The rules, each with its RTL file (docs/cluster.md "Timing" is their table):

* cu_base (rtl/cu/cu_base.v, models/timed/cu_base.py): a CU_INST taken at t is readable in cycle t+1; one
  instruction at a time, the next accepted at X+2 at the earliest; the completion queued at X+1, in the
  output register at X+2, on the router at X+3; a receive flit taken at t is poppable at t+1, one a cycle;
  the output register loads one flit an edge, completions first, then the unit's send register.
* accept (rtl/cluster/cluster_cu.v S_IDLE, "arrival order"): A >= max(t+1, X_prev+2, the edge after the last
  receive flit that arrived before the CU_INST was popped, the edge after a pending ADD_PEER pair applied).
* faults (cluster_cu.v): F_OPCODE retires from S_IDLE (X = A+1), every other fault from its op state
  (X = A+2); a fused DRAIN's F_FUSE after its wait, as a fused DRAIN.
* FILL (rtl/cluster/cl_fill.v, cluster_cu.v S_FILL): a leader's MEM_RD_REQ in the send register at A+1
  (on the router at A+3); MEM_RD_RESP popped from A+1 on (one that arrives before is held: popped at A+1 of
  the next FILL, and everything behind it waits); the n-th word 3 popped at edge p commits there; X =
  max(p, request's load) + 2. So a FILL's completion follows its responses' arrival edges.
* GEMM (cluster_cu.v S_GEMM/S_GWAIT, rtl/cluster/cl_sweep.v): gemm_start G = the first edge >= A+1 whose
  cycle finds the array free: the previous sweep stopped issuing (sweep_busy low) when gm*gn >= REUSE_MIN,
  the whole array idle (gemm_busy low) when smaller; an emitting GEMM also needs the drain queue empty and
  the write port quiet. X = G+3 (retired on start). The sweep: first command at G+2, one a cycle, K outermost;
  with nk > 1 and gm*gn < REUSE_MIN, ceil(REUSE_MIN/(gm*gn)) - 1 idle cycles after each; held while DQ_LIMIT
  drain-queue granules are outstanding (its pace counter frozen too). sweep_busy low from I_last + SW_LEN + 1,
  gemm_busy low from I_last + SW_LEN + ACU_STAGES + REUSE_MIN + 1 (I_last its last issue edge).
* DRAIN (cluster_cu.v S_DRAIN/S_DWAIT, rtl/cluster/cl_drain.v): drain_start S = the first edge >= A+1 with
  gemm_busy low, the drain queue empty and the write port quiet; EMIT k at S+2+k (OP_SEND: every other cycle,
  two granules each), held while DQ_LIMIT granules are issued and not collected; each EMIT puts a command on
  the accumulator the cycle after it (gemm_busy: + ACU_STAGES + REUSE_MIN + 1). A granule is readable at the
  queue's head D + ACU_STAGES + 4 (OP_SEND: D + ACU_STAGES + 3 and + 4), an emitting GEMM's ADD_EMIT granule
  at I + SW_LEN + ACU_STAGES + 3. Retires when its last flit has left: X = (the edge the base took it) + 2,
  i.e. 22 + 10 n/8 after S for n a multiple of 8. A fused DRAIN starts at A+1 and retires once the sweep has
  stopped issuing, the drain queue is empty and the write port quiet (X = max(S+2, those) + 1).
* write port (rtl/cluster/cl_wport.v): two banks of 8; a granule collected at the first edge >= its
  readable cycle, one an edge, not while the collecting bank is full; a bank handed over at the first edge
  after it is full (or, the last one, after the transfer's last granule) once the sender is idle; the
  descriptor in the send register the edge after, each data flit one edge after the one before (each when
  the send register is free): 10 cycles per full burst. Every burst's flits through cluster_cu's send
  register, then cu_base's output register: a flit loaded into the send register at L is on the router at
  L+2 when nothing else holds the base.
* CU_DATA (rtl/cluster/cl_rx.v): the burst's last data flit popped at p queues its DATA_RECEIVED at p, in
  the send register at p+1, on the router at p+3. An accepted buf-2 granule pair (ADD_PEER) popped at p is
  applied at the first edge >= p+1 where no sweep issues and the drain queue is empty; it occupies the
  accumulator the cycle after (gemm_busy as a drain command), blocks the next pair's second granule and the
  next instruction's accept until the edge after.

Not modelled (the approximations, each bounded or rare):

* the send register's priority (acks, then the FILL request, then the write port) and the base's
  (completions first) between flits computed in different passes: a flit placed later takes the first free
  edge instead of displacing one already placed (a completion or ack that meets an emitting GEMM's burst
  comes out up to one burst, 9 edges, late where the RTL would delay the burst one edge);
* back pressure: the router is assumed to take every flit the edge after the output register loads it, so
  the receive FIFO's depth (RECV_DEPTH) and the 4-deep ack queue never fill, and ``t`` (given by the caller)
  carries any input back pressure;
* an ADD_PEER pair's wait on an accepted GEMM or DRAIN that has not yet started (only the sweep and the drain
  queue are tested), and the held RD_RESP's interaction with the arrival-order stamp beyond "a held head lets
  an instruction pass";
* CU_CTRL replies: the golden model does not make them (models/cu/base.py does), so none are returned;
  :meth:`models.timed.cu_base.CuBaseTiming.ctrl_reply` times one for a caller that does.
* Across calls, a flit returned by a later ``take_at`` may carry an edge before one returned earlier (the
  write port's flits are returned when their instruction runs, ahead of time); within one call the stamps
  never decrease, and no two flits of the unit share an edge.
"""

from __future__ import annotations

from collections import deque
from typing import Mapping

from models.cluster.core import BASE_TYPES, MAG_DEFAULT, ClusterCore
from models.cluster.isa import Buf, Coord, Fault, Op, decode_inst, emits, fault_of, one
from models.machine.unit_timing import CLUSTER_FACTS, check_overrides
from models.noc.flit import FlitType, flit_src, flit_type
from models.vector.link import Event

from .cu_base import NEVER, CuBaseTiming, SendPath
from .unit import Stamped

PAYLOAD = (1 << 256) - 1
WBURST = 8


def cluster_facts(overrides: Mapping[str, int] | None = None) -> dict[str, int]:
    """The cluster's timing facts by name (``CASCADE_LAT``: 17, ...), upstream's with `overrides` applied.

    `overrides` are keyed as machine descriptions key them ("cluster.CASCADE_LAT"); a key that is not a
    cluster fact, a value out of the fact's range, or a combination the RTL refuses at elaboration (cl_sweep:
    REUSE_MIN <= 15; cl_drain: 2 <= DQ_LIMIT <= DQ_DEPTH - 4) raises ValueError in one line."""
    vals = {f.name: f.value for f in CLUSTER_FACTS}
    if overrides:
        check_overrides("TimedCluster", overrides)
        for key, v in overrides.items():
            unit, _, name = key.partition(".")
            if unit != "cluster":
                raise ValueError(f"TimedCluster: timing '{key}' is a fact of unit '{unit}', not of the cluster; "
                                 f"give cluster.* facts ({', '.join(sorted('cluster.' + n for n in vals))})")
            vals[name] = v
    if vals["REUSE_MIN"] > 15:
        raise ValueError(f"TimedCluster: cluster.REUSE_MIN={vals['REUSE_MIN']}: the RTL's pace and busy tail "
                         "are 4 bits (rtl/cluster/cl_sweep.v refuses > 15)")
    if not 2 <= vals["DQ_LIMIT"] <= vals["DQ_DEPTH"] - 4:
        raise ValueError(f"TimedCluster: cluster.DQ_LIMIT={vals['DQ_LIMIT']} with DQ_DEPTH={vals['DQ_DEPTH']}: "
                         "need 2 <= DQ_LIMIT <= DQ_DEPTH - 4 (rtl/cluster/cl_drain.v: room for the granules "
                         "issued while the limit is seen)")
    return vals


class _Transfer:
    """One transfer through the drain queue and the write port (cl_drain.v's queue, cl_wport.v): granules
    added in order with the cycle each is readable at the queue's head; the collection edges ``c`` (the
    queue's pops), and the router edge of every flit, descriptor first per burst, in ``stamps``."""

    __slots__ = ("send", "c", "floor", "idle", "handed", "stamps", "quiet")

    def __init__(self, send: SendPath) -> None:
        self.send = send
        self.c: list[int] = []  # collection edge of each granule
        self.floor = NEVER  # the collecting bank was handed over: the next granule from this edge
        self.idle = NEVER  # the sender is idle from this cycle
        self.handed = 0  # granules in banks already handed over
        self.stamps: list[int] = []
        self.quiet = NEVER  # the write port is quiet (nothing collected, nothing in the send register) from here

    def add(self, readable: int) -> None:
        c = self.c
        if len(c) == self.handed + WBURST:  # the collecting bank is full: hand it over first
            self._hand(WBURST)
        e = readable
        if c and e <= c[-1]:
            e = c[-1] + 1
        if e < self.floor:
            e = self.floor
        c.append(e)

    def _hand(self, k: int) -> None:
        hand = self.c[-1] + 1  # full (or the last granule taken) is seen the cycle after its collection
        if hand < self.idle:
            hand = self.idle
        self.floor = hand + 1
        self.handed += k
        load, stamp = self.send.send(hand + 1)  # the descriptor
        self.stamps.append(stamp)
        for _ in range(k):
            load, stamp = self.send.send(load + 1)
            self.stamps.append(stamp)
        self.idle = load + 1
        self.quiet = self.send.free + 1

    def finish(self) -> None:
        if len(self.c) > self.handed:
            self._hand(len(self.c) - self.handed)

    @property
    def empty_from(self) -> int:
        """The first cycle the drain queue holds none of this transfer's granules."""
        return self.c[-1] + 1 if self.c else NEVER


class TimedCluster(ClusterCore):
    """ClusterCore with a clock: ``take_at(flit, t) -> [(edge, Event)]`` (models.timed.unit.TimedUnit).

    The bits are the golden model's (``take``); this class adds each flit's edge by the rules of the module
    docstring. ``facts`` overrides the cluster's timing facts by key ("cluster.CASCADE_LAT": 27)."""

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT,
                 facts: Mapping[str, int] | None = None) -> None:
        self.facts = cluster_facts(facts)
        fx = self.facts
        self._il = fx["ISSUE_LAT"]
        self._sw_len = fx["ISSUE_LAT"] + fx["CASCADE_LAT"] + 1
        self._acu = fx["ACU_STAGES"]
        self._reuse = fx["REUSE_MIN"]
        self._limit = fx["DQ_LIMIT"]
        super().__init__(coord, mag)

    def reset(self) -> None:
        super().reset()
        self.base = CuBaseTiming()
        self.send_path = SendPath(self.base)
        self._inst_t: deque[tuple[int, int]] = deque()  # per queued CU_INST: (taken edge, receive pops it waits for)
        self._rx_t: deque[int] = deque()  # per pending receive flit: its taken edge
        self._rx_pop = NEVER  # the last receive flit's pop edge
        self._cur_pop = NEVER
        self._fill_open = NEVER  # responses may be popped from this edge (the FILL's start cycle)
        self._fill_req = NEVER  # the FILL request's send-register load edge
        self._sweep_free = NEVER  # first cycle sweep_busy is low
        self._array_free = NEVER  # first cycle gemm_busy is low
        self._wp_quiet = NEVER  # first cycle the write port is quiet
        self._dq_empty = NEVER  # first cycle the drain queue is empty (d_out == 0)
        self._dq_release = NEVER  # first cycle fewer than DQ_LIMIT granules are outstanding
        self._peer_free = NEVER  # no ADD_PEER pair pending from this edge
        self._out: list[Stamped] = []
        self.last_accept = NEVER  # the accept edge of the latest instruction (for inspection)

    # ------------------------------------------------------------ the contract
    def take_at(self, flit: int, t: int) -> list[Stamped]:
        """The golden answer to `flit`, taken by the endpoint at edge `t`, each flit with its router edge."""
        ftype = flit_type(flit)
        if ftype == FlitType.CU_INST:
            self._inst_t.append((t, self._rx_pop))
        elif ftype not in BASE_TYPES:
            self._rx_t.append(t)
        self._out = []
        events = self.take(flit)
        out = self._out
        if len(out) != len(events):
            raise AssertionError(f"TimedCluster: {len(events)} flits from the golden model, {len(out)} stamped")
        out.sort(key=lambda p: p[0])
        return out

    def _stamp(self, edges: list[int], events: list[Event]) -> None:
        if len(edges) != len(events):
            raise AssertionError(f"TimedCluster: {len(events)} flits from the golden model, {len(edges)} timed")
        self._out.extend(zip(edges, events))

    # ------------------------------------------------------------ receive
    def _receive(self, flit: int) -> list[Event]:
        t = self._rx_t.popleft()
        ftype = flit_type(flit)
        pop = self.base.recv_readable(t)
        if pop <= self._rx_pop:
            pop = self._rx_pop + 1
        if ftype == FlitType.MEM_RD_RESP:
            pop = max(pop, self._fill_open)
        elif ftype == FlitType.CU_DATA:
            b = self.burst
            if b is not None and not b.bad and b.buf == Buf.ACC and b.off % 2 and flit_src(flit) == b.src:
                pop = max(pop, self._peer_free)  # the pair's second granule waits for the pending pair
        self._rx_pop = self._cur_pop = pop
        events = super()._receive(flit)
        if not events:
            return events
        if ftype == FlitType.MEM_RD_RESP:  # the FILL's n-th entry: its completion
            x = max(pop, self._fill_req) + 2
            self._stamp([self.base.retire(x)], events)
        else:  # DATA_RECEIVED, queued at the pop edge
            self._stamp([self.send_path.send(pop + 1)[1]], events)
        return events

    def _land(self, buf: int, off: int, data: int) -> None:
        super()._land(buf, off, data)
        if buf == Buf.ACC and off % 2:  # an ADD_PEER pair, applied when no sweep issues and the queue is empty
            p = max(self._cur_pop + 1, self._sweep_free, self._dq_empty)
            self._peer_free = p + 1
            self._array_free = max(self._array_free, p + self._acu + self._reuse + 2)

    # ------------------------------------------------------------ instructions
    def _execute(self, inst: int) -> list[Event]:
        t, rx_before = self._inst_t.popleft()
        a = self.base.accept(max(self.base.inst_readable(t), rx_before + 1, self._peer_free))
        self.last_accept = a
        payload = inst & PAYLOAD
        f = decode_inst(payload)
        fault = fault_of(payload)
        events = super()._execute(inst)
        if fault is not None:
            self._stamp([self.base.retire(a + 1 if fault == Fault.OPCODE else a + 2)], events)
        elif f["op"] == Op.FILL:
            self._fill_open = a + 1
            if events:  # the leader's request
                load, stamp = self.send_path.send(a + 1)
                self._fill_req = load
                self._stamp([stamp], events)
            else:
                self._fill_req = NEVER
        elif f["op"] == Op.GEMM:
            self._stamp(self._gemm(a, f), events)
        elif f["fuse"]:
            s = a + 1
            x = max(s + 2, self._sweep_free, self._dq_empty, self._wp_quiet) + 1
            self._stamp([self.base.retire(x)], events)
        else:
            self._stamp(self._drain(a, f), events)
        return events

    def _gemm(self, a: int, f: Mapping[str, int]) -> list[int]:
        """The router edges of an accepted GEMM's flits: its emitted bursts, then its completion."""
        gm, gn, nk = one(f["gm"]), one(f["gn"]), one(f["nk"])
        tiles = gm * gn
        commands = tiles * nk
        reuse = self._reuse
        emitting = emits(f)
        g = max(a + 1, self._sweep_free if tiles >= reuse else self._array_free)
        if emitting:
            g = max(g, self._dq_empty, self._wp_quiet)
        completion = self.base.retire(g + 3)
        step = 1 if nk <= 1 or tiles >= reuse else -(-reuse // tiles)  # cycles from one issue to the next
        first = max(g + 2, self._dq_release)  # the previous transfer's granules may still hold the sweep
        stamps: list[int] = []
        if not emitting:
            last = first + (commands - 1) * step
        else:
            tr = _Transfer(self.send_path)
            lead = commands - tiles  # commands before the last (emitting) K block: never held
            prev = first + (lead - 1) * step if lead else None
            readable = self._sw_len + self._acu + 3
            counted_at = self._il + 1  # an ADD_EMIT counts toward d_out at its issue edge + ISSUE_LAT + 1
            limit = self._limit
            issued: list[int] = []
            n_counted = n_popped = 0
            c = tr.c
            x = first if prev is None else prev + 1
            for _ in range(tiles):
                countdown = 0 if prev is None else step - 1
                while True:  # cycle x: held while d_out >= DQ_LIMIT (the pace counter frozen too)
                    while n_counted < len(issued) and issued[n_counted] + counted_at <= x - 1:
                        n_counted += 1
                    while n_popped < len(c) and c[n_popped] <= x - 1:
                        n_popped += 1
                    if n_counted - n_popped < limit:
                        if countdown == 0:
                            break
                        countdown -= 1
                    x += 1
                issued.append(x)
                tr.add(x + readable)
                prev = x
                x += 1
            last = prev
            tr.finish()
            stamps = tr.stamps
            self._wp_quiet = tr.quiet
            self._dq_empty = tr.empty_from
            self._dq_release = c[tiles - limit] + 1 if tiles >= limit else NEVER
        self._sweep_free = last + self._sw_len + 1
        self._array_free = max(self._array_free, last + self._sw_len + self._acu + reuse + 1)
        return stamps + [completion]

    def _drain(self, a: int, f: Mapping[str, int]) -> list[int]:
        """The router edges of an accepted explicit DRAIN's flits, then its completion."""
        s = max(a + 1, self._array_free, self._dq_empty, self._wp_quiet)
        n = one(f["n"])
        send = bool(f["dnode"]) and f["dbuf"] == Buf.ACC
        tr = _Transfer(self.send_path)
        c = tr.c
        limit, acu = self._limit, self._acu
        gap = 2 if send else 1
        x = s + 2
        issued = n_popped = 0
        d = x
        for _ in range(n):
            while True:  # cycle x: held while DQ_LIMIT granules are issued and not collected
                while n_popped < len(c) and c[n_popped] <= x - 1:
                    n_popped += 1
                if issued - n_popped < limit:
                    break
                x += 1
            d = x
            if send:
                tr.add(d + acu + 3)
                tr.add(d + acu + 4)
                issued += 2
            else:
                tr.add(d + acu + 4)
                issued += 1
            x = d + gap
        tr.finish()
        self._array_free = max(self._array_free, d + acu + self._reuse + 2)
        self._wp_quiet = tr.quiet
        self._dq_empty = tr.empty_from
        self._dq_release = NEVER  # the DRAIN retires after its last granule left the queue
        x_done = max(s + 2, tr.quiet, tr.empty_from) + 1
        return tr.stamps + [self.base.retire(x_done)]


__all__ = ["TimedCluster", "cluster_facts"]
