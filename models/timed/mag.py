"""The memory agent with its clock: every read response and write ack stamped with the edge it enters the mesh.

Why: the agent is the machine's one memory port (fused4: MEM_PORTS 1), so its service times are most of a
round's cycles: a vector core's VFILL words leave it every 12 cycles, a cluster's QUANT FILL one entry every 20,
VDRAIN words are acknowledged every 14. :class:`TimedMag` is :class:`models.mag.model.MagUnit` (every bit of
every answer is the golden model's ``take``) plus those times, from the agent's timing facts
(models/machine/unit_timing.py: MAG_FACTS, DRAM_FACTS; overrides by their keys, "mag.QUANT_LAT": 12).

Edges (models/timed/unit.py): ``take_at(flit, t)``, ``t`` the edge the agent's endpoint takes the flit (its
push into an intake queue); each stamp is the edge the router's Local input FIFO takes the flit, one edge
after the agent's output register is loaded with it (``noc_out_busy`` is taken as never high: the router's
back-pressure is the network model's). The state is a few "next free edge" numbers and short lists of
committed edges, no cycle loop: a request costs O(beats).

Rules, each as the RTL has it (T: the edge a request leaves the read queue; LA, LR, LW, LB: the port's
AR/R/W/B FIFO latencies; LAT, G: the DRAM's RD_LATENCY, RD_INTERVAL; QL: QUANT_LAT):

* intake (rtl/mag/mag.v, rtl/noc/noc_fifo.v): a flit pushed at t is at the queue's head from the next cycle,
  so it leaves the queue at t + 1 at the earliest; each queue pops at most one flit an edge, in order. Reads
  (MEM_RD_REQ) and writes (MEM_WR_REQ, MEM_WR_DATA) have separate queues. Other types are dropped, no time.
* reads strictly one at a time in arrival order (mag.v ``take_rd_*``): a plain read leaves the queue when the
  entry engine is idle and the plain read / write machine (``st``) is idle; an entry read (STREAM or QUANT)
  when the entry engine is idle and no plain read is in flight (a write transaction does not hold it back);
  a staging-aperture read (non-strict only) leaves under the entry read's condition and is dropped.
* the DRAM port (rtl/mag/mag_port.v, rtl/mag/mag_dram.v): an AR register set at edge A is taken (handshake)
  at A + 2; the RAM is asked for word k at h_k = H + 1 + LA + k*G (no earlier than G after its previous
  request, and only while fewer than R_FIFO_DEPTH + 2 words are asked and not consumed); the word is takeable
  by the engine at h_k + LAT + LR + 1, one a cycle. At the defaults a single-beat read's beat is taken at
  T + 11. The adapter: an AW set at I wins over an AR set at I or I + 1 (the AR's handshake moves to I + 4);
  an AR set at I - 1 wins over the AW (the AW's handshake moves from I + 2 to I + 3).
* a plain read (mag.v ``st`` = S_RD): one burst of len + 1 beats; each beat is loaded into the output register
  the edge it is taken (stamp + 1); the machine is idle again the edge after the last beat.
* an entry read (rtl/mag/mag_entry.v): the first entry's AR is set at T, each next entry's at its
  predecessor's last beat; 8 beats an entry with QUANT, else ew. Beats are taken while the engine fills: from
  T + 1 (T + 2 with QUANT: the quantiser's re-arm cycle), after a hand-over X from X + 1 (X + 2 with QUANT).
  The hand-over X to the emit buffer is the later of (last beat + 1) without QUANT or (8th beat + QL + 3) with
  QUANT (registered beat, QL edges, done, q_rdy) and the edge after the buffer's previous entry has left. The
  buffer loads the output register from X + 1, one flit an edge, ew words to the requester then to each
  peer, and has the register first (acks wait). The engine is idle the edge after its last flit.
  At the defaults: 20 cycles a QUANT entry, 8 + 6 + 20n from the take of an n-entry run to the next take.
* writes (rtl/mag/mag_write.v, mag.v ``st`` = S_WR): a MEM_WR_REQ that opens a write needs one of WR_SLOTS
  slots (the queue's head waits until one is free: freed the edge after the ack, usable the edge after
  that); a write whose last data beat leaves the queue at D is ready at D + 1; ready writes are issued one at
  a time in ready order when ``st`` is idle: the AW register set at I, its handshake W = I + 2, the B pulse
  W + 1 + N with N = max(LA + 1, 2 + LW) + 1 + LB + beats - 1, the ack loaded into the output register at
  W + N + 2 or the first edge after that the emit buffer leaves free; ``st`` is idle again the edge after
  the ack. At the defaults: 13 + beats cycles a write (14 single-beat, 21 for 8 beats).

What is not modelled, or differs from the RTL:

* the intake's back-pressure (``noc_in_busy`` at RDQ_DEPTH / WRQ_DEPTH - Q_MARGIN flits): take_at takes
  every flit at the ``t`` it is given; :meth:`TimedMag.intake_edge` answers the first edge at which the RTL
  would take the next flit, and the timed mesh (models/timed/network.py) offers no flit before it.
* writes waiting for their turn: with a machine's scheduler attached (``schedule``, set by
  models/timed/machine.py), a ready write is not committed when its last beat arrives: it waits, and the
  machine wakes the agent at the edge it would issue (``wake``); a plain read taken before that edge, at the
  head when the write would issue, goes first, as rtl/mag/mag.v takes it (``_issue_before``). A
  slot-opening MEM_WR_REQ's pop is taken from the waiting writes' would-be acks (``_pending_frees``): a read
  that later goes first delays that slot on the RTL, not here. Without a scheduler (a bench feeding flits
  alone) every write is committed at once, in ready order.
* other later arrivals: take_at stamps a read's answers when it is taken, so the remaining arbitrations are
  decided for what was committed first. The RTL decides a few of them for a flit that arrives later, so a
  stamp differs from the RTL by the loser's wait: (b) a write that becomes ready while a plain read committed
  earlier waits for the entry engine issues in the RTL and delays that read; here it issues in that gap only
  if its whole transaction fits before the read, else after the read; (c) an emit buffer flit wanting an
  edge already given to an ack goes first in the RTL (the ack waits); here the emit waits one edge; (d) an
  AR and an AW set within one edge of each other when the later-committed one would win the adapter (see
  above): the earlier-committed keeps its handshake.
* the router's back-pressure on the agent's output (``noc_out_busy``) is not seen: the output register is
  taken as free every edge.
* stamps are non-decreasing within one returned list; across calls they are not: an ack is stamped in the
  gap between two entries' emits of an entry read returned by an earlier call, as the RTL sends it, so a
  caller must order this unit's flits by their stamps (the output register's one flit an edge is kept by the
  rules).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from types import MappingProxyType
from typing import Mapping

from models.machine.unit_timing import DRAM_FACTS, FACTS, MAG_FACTS, check_overrides
from models.mag.model import DramImage, MagUnit
from models.mag.proto import Coord, decode_descriptor
from models.noc.flit import FIELDS, FlitType, flit_src, flit_type

from .unit import Stamped

__all__ = ["TimedMag", "AGENT_FACTS"]

AGENT_FACTS: tuple[str, ...] = tuple(f.key for f in MAG_FACTS + DRAM_FACTS)
_PAYLOAD = FIELDS["payload"]
_NEVER = 1 << 62


class TimedMag(MagUnit):
    """MagUnit whose answers carry the edge they enter the mesh (module docstring: the rules and the gaps).

    ``facts`` overrides the agent's timing facts by key ("mag.QUANT_LAT", "dram.RD_LATENCY", ...); a key that
    is no fact of the agent or its DRAM, or a value outside the fact's limits, is refused (ValueError).
    """

    def __init__(self, coord: Coord, dram: DramImage | None = None, *, base: int = 0,
                 facts: Mapping[str, int] | None = None, words: int = 65536, strict: bool = True) -> None:
        over = dict(facts or {})
        check_overrides(f"TimedMag{tuple(coord)}", over)
        foreign = sorted(k for k in over if FACTS[k].unit not in ("mag", "dram"))
        if foreign:
            raise ValueError(f"TimedMag{tuple(coord)}: {', '.join(foreign)} is no timing fact of the memory agent "
                             f"or its DRAM; give one of {', '.join(AGENT_FACTS)}")
        v = {k: over.get(k, FACTS[k].value) for k in AGENT_FACTS}
        for q in ("RDQ_DEPTH", "WRQ_DEPTH"):  # mag.v's own elaboration checks beyond the facts' limits
            if v[f"mag.{q}"] > 1024 or v["mag.Q_MARGIN"] >= v[f"mag.{q}"]:
                raise ValueError(f"TimedMag{tuple(coord)}: mag.{q}={v[f'mag.{q}']} with mag.Q_MARGIN="
                                 f"{v['mag.Q_MARGIN']}: rtl/mag/mag.v needs a depth of at most 1024 and "
                                 "Q_MARGIN below it")
        super().__init__(coord, dram, base=base, words=words, strict=strict)
        self.facts: Mapping[str, int] = MappingProxyType(v)
        la, lr, lw, lb = (v[f"mag.{k}"] for k in ("AR_FIFO_LAT", "R_FIFO_LAT", "W_FIFO_LAT", "B_FIFO_LAT"))
        self._la = la
        self._g = v["dram.RD_INTERVAL"]
        self._word_to_take = v["dram.RD_LATENCY"] + lr + 1   # DRAM request edge -> the engine can take the word
        self._rbuf = v["mag.R_FIFO_DEPTH"] + 2                # R FIFO + skid: words asked and not consumed
        self._ql = v["mag.QUANT_LAT"]
        self._b_base = max(la + 1, 2 + lw) + 1 + lb           # mag_port.v B_BASE
        self._slots_n = v["mag.WR_SLOTS"]
        self._rd_mark = v["mag.RDQ_DEPTH"] - v["mag.Q_MARGIN"]
        self._wr_mark = v["mag.WRQ_DEPTH"] - v["mag.Q_MARGIN"]

        self._t = -1                 # the last edge a flit was taken
        self._rd_pop = -1            # the read queue's last pop
        self._wq_pop = -1            # the write queue's last pop
        self._eng_free = 0           # the entry engine idle (no request, nothing to emit) from this edge
        self._plain_free = 0         # the last plain read's last beat + 1
        self._st_free = 0            # st idle after every committed plain read and write
        self._gaps: list[list[int]] = []       # [from, to): st idle before a committed plain read
        self._wr_free = 0            # the last write's ack + 1 (writes issue in ready order)
        self._dram_free = 0          # the DRAM takes its next read request from this edge
        self._aw_sets: list[int] = []          # edges write AW registers are set (I)
        self._ar_sets: set[int] = set()        # edges entry AR registers are set (A)
        self._emits: list[tuple[int, int]] = []  # [first, last] output-register load edges of the emit buffer
        self._acks: set[int] = set()           # output-register load edges of acks
        self._slot: dict[Coord, int] = {}      # a writer's open write -> its slot
        self._held: dict[int, int] = {}        # slot -> the edge a request waiting for it can pop (_NEVER: open)
        self._next_slot = 0
        # writes ready and not yet issued, in ready order: (ready edge, beats, the ack event, slot); with a
        # machine's scheduler attached (``schedule``), a write is issued only once no read can go first
        self._pending: deque[tuple[int, int, object, int]] = deque()
        self.schedule = None  # set by a timed machine: schedule(edge) calls wake(edge) at that edge
        self._calls: set[int] = set()  # edges a wake is asked for and not yet made
        self._rq_pops: list[int] = []          # pop edges of queued flits (for intake_edge)
        self._wq_pops: list[int] = []

    # ------------------------------------------------------------ the link
    def take_at(self, flit: int, t: int) -> list[Stamped]:
        """The flit taken at edge ``t`` -> every flit it causes, with the edge the router takes it."""
        if t <= self._t:
            raise ValueError(f"TimedMag{self.coord}: a flit taken at edge {t} after one at edge {self._t}; the "
                             "endpoint takes one flit an edge, in order")
        ftype = flit_type(flit)
        src = flit_src(flit)
        d = decode_descriptor(_PAYLOAD.extract(flit)) if ftype in (FlitType.MEM_RD_REQ, FlitType.MEM_WR_REQ) \
            else None
        was_open = self.open.get(src)
        done_before = was_open.done if was_open is not None else 0
        events = self.take(flit)          # the bits; raises (strict) before any time is committed
        self._t = t
        self._prune(t)
        if ftype == FlitType.MEM_RD_REQ:
            assert d is not None
            before = self._issue_before(self._read_pop(t, d))
            return before + self._rd_timed(t, d, events)
        if ftype in (FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA):
            return self._write_flit(t, ftype, src, d, was_open, done_before, events)
        return []

    # ------------------------------------------------------------ writes waiting for their turn
    def _read_pop(self, t: int, d) -> int:
        """The edge a read taken at ``t`` leaves the read queue, as things stand (nothing committed)."""
        if d.entry_read and not d.staging:
            return max(t + 1, self._rd_pop + 1, self._eng_free, self._plain_free)
        return max(t + 1, self._rd_pop + 1, self._eng_free, self._st_free)

    def _issue_before(self, edge: int) -> list[Stamped]:
        """Issue every waiting write whose issue edge comes before ``edge`` (a read at the head at a write's
        issue edge goes first: rtl/mag/mag.v takes a plain read before a ready write)."""
        out: list[Stamped] = []
        pending = self._pending
        while pending:
            ready, beats, ev, slot = pending[0]
            at = self._place(ready, beats)[0]
            if at >= edge:
                if self.schedule is not None:
                    self._call_back(at)
                return out
            pending.popleft()
            out.append(self._issue_pending(ready, beats, ev, slot))
        return out

    def _issue_pending(self, ready: int, beats: int, ev, slot: int) -> Stamped:
        L = self._issue(ready, beats)
        self._held[slot] = L + 2
        return (L + 1, ev)

    def wake(self, edge: int) -> list[Stamped]:
        """The machine's call at ``edge``: the waiting writes whose issue edge has come are issued."""
        self._calls.discard(edge)
        return self._issue_before(edge + 1)

    def _call_back(self, edge: int) -> None:
        """Ask the machine to wake the agent at ``edge`` (once: an edge already asked for is not asked again)."""
        if edge not in self._calls:
            self._calls.add(edge)
            self.schedule(edge)


    def intake_edge(self, e: int) -> int:
        """The first edge from ``e`` at which the agent's endpoint takes a flit (``noc_in_busy`` low in the
        cycle before: fewer than RDQ_DEPTH / WRQ_DEPTH - Q_MARGIN flits in each intake queue), given the flits
        taken so far. take_at does not check it."""
        def free(pops: list[int], mark: int) -> int:
            left = len(pops) - bisect_right(pops, e - 1)   # flits queued in cycle e - 1
            return e if left < mark else pops[len(pops) - mark] + 1
        return max(e, free(self._rq_pops, self._rd_mark), free(self._wq_pops, self._wr_mark))

    # ------------------------------------------------------------ reads
    def _rd_timed(self, t: int, d, events) -> list[Stamped]:
        if d.staging or not d.entry_read:
            if d.staging:                  # take_rd_x: dropped (non-strict), the engines untouched
                T = max(t + 1, self._rd_pop + 1, self._eng_free, self._plain_free)
                self._pop_read(T)
                return []
            return self._plain(t, d.len + 1, events)
        return self._entries(t, d, events)

    def _pop_read(self, T: int) -> None:
        self._rd_pop = T
        self._rq_pops.append(T)

    def _plain(self, t: int, beats: int, events) -> list[Stamped]:
        T = max(t + 1, self._rd_pop + 1, self._eng_free, self._st_free)
        if T > self._st_free:
            self._gaps.append([self._st_free, T])
        self._pop_read(T)
        takes = self._burst(T + 2, beats, T + 1)
        self._plain_free = self._st_free = takes[-1] + 1
        assert len(takes) == len(events)
        return [(c + 1, ev) for c, ev in zip(takes, events)]

    def _entries(self, t: int, d, events) -> list[Stamped]:
        T = max(t + 1, self._rd_pop + 1, self._eng_free, self._plain_free)
        self._pop_read(T)
        quant = d.quant
        flits = (1 + d.n_peer) * d.entry_size
        a = T                                   # the entry's AR register set
        ready = T + 2 if quant else T + 1       # beats taken from (fill_ready)
        e_free = self._eng_free                 # the emit buffer free (e_act low the cycle before)
        stamps: list[int] = []
        acks = self._acks
        for _ in range(d.entries):
            self._ar_sets.add(a)
            takes = self._burst(self._ar_handshake(a), d.entry_stride, ready)
            last = takes[-1]
            x = max(last + (self._ql + 3 if quant else 1), e_free)     # load_emit
            e = x + 1
            first = e
            for _ in range(flits):
                while e in acks:
                    e += 1
                stamps.append(e + 1)
                e += 1
            self._emits.append((first, e - 1))
            e_free = e
            a = last
            ready = x + 2 if quant else x + 1
        self._eng_free = e_free
        assert len(stamps) == len(events)
        return list(zip(stamps, events))

    def _ar_handshake(self, a: int) -> int:
        """The edge the port takes an AR register set at ``a`` (an AW set at a or a - 1 goes first)."""
        for i in self._aw_sets:
            if i <= a < i + 2:
                return i + 4
        return a + 2

    def _burst(self, h: int, beats: int, ready: int) -> list[int]:
        """Edges the engine takes the beats of a burst whose AR handshake is at ``h``, taking from ``ready``."""
        g, lat, rbuf = self._g, self._word_to_take, self._rbuf
        q = max(h + 1 + self._la, self._dram_free)
        takes: list[int] = []
        prev = ready - 1
        for k in range(beats):
            if k:
                q += g
                if k >= rbuf and q <= takes[k - rbuf]:
                    q = takes[k - rbuf] + 1
            c = q + lat
            prev = c if c > prev else prev + 1
            takes.append(prev)
        self._dram_free = q + g
        return takes

    # ------------------------------------------------------------ writes
    def _write_flit(self, t: int, ftype: int, src: Coord, d, was_open, done_before: int,
                    events) -> list[Stamped]:
        p = max(t + 1, self._wq_pop + 1)
        if ftype == FlitType.MEM_WR_REQ:
            assert d is not None
            if was_open is None and not d.staging:       # opens a write: needs a slot
                p = self._slot_for(src, p)
            self._pop_write(p)
            return []
        self._pop_write(p)
        if was_open is None or done_before != was_open.beats - 1 or was_open.discard:
            return []                                   # not a write's last beat into the DRAM
        slot = self._slot.pop(src)
        assert len(events) == 1
        if self.schedule is None:  # no machine to call back: issued at once, in ready order
            return [self._issue_pending(p + 1, was_open.beats, events[0], slot)]
        self._pending.append((p + 1, was_open.beats, events[0], slot))
        self._call_back(self._place(*self._pending[0][:2])[0])
        return []

    def _pop_write(self, p: int) -> None:
        self._wq_pop = p
        self._wq_pops.append(p)

    def _pending_frees(self) -> dict[int, int]:
        """The edge each waiting write's slot would be usable again if the waiting writes issued one after
        another from now, no read between them (a slot-opening request's pop is taken from these: a read that
        goes first later delays the slot in the RTL, not here)."""
        out: dict[int, int] = {}
        st = max(self._st_free, self._wr_free)
        for ready, beats, _, slot in self._pending:
            i = max(ready, st)
            st = self._transaction(i, beats) + 1
            out[slot] = st + 1
        return out

    def _slot_for(self, src: Coord, p: int) -> int:
        """The edge a slot-opening MEM_WR_REQ at the head from ``p`` pops (a slot free in the cycle before)."""
        frees = self._pending_frees() if self._pending else {}
        held = sorted(frees.get(slot, r) for slot, r in self._held.items() if frees.get(slot, r) > p)
        if len(held) >= self._slots_n:
            r = held[len(held) - self._slots_n]
            if r >= _NEVER:
                raise RuntimeError(f"TimedMag{self.coord}: the write intake wedges: a MEM_WR_REQ from {src} waits "
                                   f"for one of the WR_SLOTS={self._slots_n} slots, all held by writes whose data "
                                   "is queued behind it (rtl/mag/mag_write.v reports the same)")
            p = r
        slot = self._next_slot
        self._next_slot += 1
        self._held[slot] = _NEVER
        self._slot[src] = slot
        return p

    def _place(self, ready: int, beats: int) -> tuple[int, int]:
        """Where a write ready from ``ready`` would issue now: (issue edge, ack load edge); nothing committed."""
        i, L, _ = self._slot_in_time(ready, beats)
        return i, L

    def _slot_in_time(self, ready: int, beats: int) -> tuple[int, int, list[int] | None]:
        """(issue edge, ack load edge, the idle gap before a committed plain read it fits in, or None: after
        every committed plain read and write)."""
        i0 = max(ready, self._wr_free)
        for gap in self._gaps:
            if gap[1] <= i0:
                continue
            i = max(i0, gap[0])
            L = self._transaction(i, beats)
            if L + 1 <= gap[1]:
                return i, L, gap
        i = max(i0, self._st_free)
        return i, self._transaction(i, beats), None

    def _issue(self, ready: int, beats: int) -> int:
        """Commit a write ready (in the ready queue) from edge ``ready``: the edge its ack is loaded."""
        i, L, gap = self._slot_in_time(ready, beats)
        if gap is not None:
            self._gaps.append([L + 1, gap[1]])
            gap[1] = i
            self._gaps = sorted(g for g in self._gaps if g[1] > g[0])
        else:
            self._st_free = L + 1
        return self._commit(i, L)

    def _commit(self, i: int, L: int) -> int:
        self._aw_sets.append(i)
        self._acks.add(L)
        self._wr_free = L + 1
        return L

    def _transaction(self, i: int, beats: int) -> int:
        """A write issued at ``i``: the edge its ack can be loaded into the output register."""
        w = i + 3 if i - 1 in self._ar_sets else i + 2
        e = w + self._b_base + beats + 1          # W + N + 2
        for first, last in self._emits:
            if first <= e <= last:
                e = last + 1
        return e

    # ------------------------------------------------------------ bookkeeping
    def _prune(self, t: int) -> None:
        """Forget what no answer computed from edge t + 1 on can meet."""
        lo = t - 8
        if self._aw_sets and self._aw_sets[0] < lo:
            self._aw_sets = [i for i in self._aw_sets if i >= lo]
        if len(self._ar_sets) > 64:
            self._ar_sets = {a for a in self._ar_sets if a >= lo}
        if self._emits and self._emits[0][1] < lo:
            self._emits = [e for e in self._emits if e[1] >= lo]
        if len(self._acks) > 64:
            self._acks = {a for a in self._acks if a >= lo}
        if self._gaps and self._gaps[0][1] <= t:
            self._gaps = [g for g in self._gaps if g[1] > t]
        for slot in [s for s, r in self._held.items() if r <= t]:
            del self._held[slot]
        for pops in (self._rq_pops, self._wq_pops):
            k = bisect_right(pops, t - 1)
            if k > 256:
                del pops[:k]
