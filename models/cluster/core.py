"""The cluster CU as an event model: ``ClusterCore.take(flit) -> list[Event]``, untimed and bit exact.

``take`` hands the unit one inbound flit in the order the unit's port takes it
and returns what the unit sends because of it (completions included, as
cu_base sends them), each an ``Event(dst, flit)`` (models.vector.link.Event), so a
machine-level model can route flits between the units' models. The rules are
the RTL's (rtl/cluster/cluster_cu.v, docs/cluster.md); what crosses the link
follows units.md §C:

* **instructions**: a CU_INST queue, one instruction in flight. GEMM and DRAIN
  complete within the ``take`` that starts them (timing is not modelled); a
  FILL stays in flight until it has committed n entries, and instructions
  behind it wait;
* **receive order** (ours, as the RTL): an instruction starts only after every
  flit that arrived before it has been applied, except that an RD_RESP at the
  head of the receive queue outside a FILL is **held** (units.md C.3): it blocks
  the receive queue, CU_DATA included, an instruction may start past it, and
  the next FILL consumes it;
* **FILL** (C.2-C.4): a leader (C.3) sends the one MEM_RD_REQ; leader and
  followers accept RD_RESP of any origin; each word lands in one collecting
  register at its rsvd[1:0], word 3 commits the four to L1 entry {fbank, txn}
  of side sel; the FILL retires after n commits;
* **GEMM** (C.5, C.6): entries {abank, (aoff + g*nk + kb) mod 256} and {bbank,
  (boff + h*nk + kb) mod 256}; with emit (and a last K block that is not a
  LOAD) the sub-tiles leave as FP16 through the write port with the GEMM's own
  destination fields, and are credited to the emitted count;
* **DRAIN**: OP_EMIT / OP_SEND through the write port; with fuse it sends
  nothing and claims n emitted sub-tiles (fewer: FAULT FUSE, where upstream
  waits forever);
* **completions**: FILL, GEMM and DRAIN report exec_result = the running count
  of retired FILL/GEMM/DRAIN (C.6); a faulted instruction is not counted;
* **CU_DATA** (protocol §4): one open burst framed by count into L1A, L1B or the
  accumulator (ADD_PEER, the C.7.4 add); a rejected burst (bad buf, past the
  buffer, an odd peer offset or count, or interleaved by a second source) is
  counted out, never wrapped, and still acknowledged.

CU_CTRL is answered by the endpoint base (models/cu/base.py), MEM_WR_ACK and
ERROR are dropped there; neither reaches this model's state. Anything else
the unit cannot use is taken and dropped (counted in ``dbg``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from models.cu.base import completion, cu_data_fields
from models.noc.flit import FIELDS, FlitType, flit_dst, flit_src, flit_type
from models.numerics.cluster import acc_add, emit_granules, gemm_entry
from models.vector.link import Event, TakesFlits

from .flits import fill_request, leads, write_port
from .images import data_received, send_granules, unpack_send
from .isa import (
    ACC_TILES, BANK_ENTRIES, ENTRY_GRANULES, L1_GRANULES, PEER_GRANULES, Buf, Coord, Fault, Op, decode_inst, emits,
    fault_of, one,
)

PAYLOAD = (1 << 256) - 1
MAG_DEFAULT: Coord = (0, 1)
BASE_TYPES = frozenset({FlitType.CU_CTRL, FlitType.MEM_WR_ACK, FlitType.ERROR})  # cu_base answers or drops them


@dataclass
class _Fill:
    """The FILL in flight."""

    inst: int
    f: Mapping[str, int]
    committed: int = 0


@dataclass
class _Burst:
    """The one open inbound CU_DATA burst."""

    src: Coord
    buf: int
    off: int
    left: int
    bad: bool
    sig: bool
    ack_dst: Coord
    txn: int


def burst_ok(buf: int, off: int, ln: int) -> bool:
    """Whether an inbound burst of len `ln` at granule `off` of `buf` is accepted (never wrapped)."""
    end = off + ln
    if buf in (Buf.L1A, Buf.L1B):
        return end < L1_GRANULES
    if buf == Buf.ACC:
        return off % 2 == 0 and ln % 2 == 1 and end < PEER_GRANULES
    return False


def l1_entry(bank: int, off: int) -> int:
    """L1 entry {bank, off mod 256}: the 8-bit offset wraps within its bank (units.md C.5)."""
    return (bank & 1) * BANK_ENTRIES + (off % BANK_ENTRIES)


def gemm_tiles(f: Mapping[str, int]) -> list[int]:
    """The accumulator sub-tiles a GEMM sweeps, g-major (tile g * gn + h)."""
    gn = one(f["gn"])
    return [g * gn + h for g in range(one(f["gm"])) for h in range(gn)]


def gemm_blocks(f: Mapping[str, int]) -> list[tuple[int, list[int], list[int], bool]]:
    """Per K block kb of a GEMM (C.5): (kb, the L1A entry of each tile, the L1B entry of each tile, whether the
    block adds to the accumulator rather than loads it), tiles in :func:`gemm_tiles` order."""
    gm, gn, nk = one(f["gm"]), one(f["gn"]), one(f["nk"])
    return [(kb, [l1_entry(f["abank"], f["aoff"] + g * nk + kb) for g in range(gm) for _ in range(gn)],
             [l1_entry(f["bbank"], f["boff"] + h * nk + kb) for _ in range(gm) for h in range(gn)],
             kb > 0 or bool(f["acc"])) for kb in range(nk)]


class ClusterCore(TakesFlits):
    """One cluster at `coord` whose memory agent is at `mag`: its state and its answer to every inbound flit.

    L1 and the accumulator start as zero (the RTL clears them at time 0 and reset leaves them alone).
    ``notes`` collects what the RTL prints as a note line (a sender's fault the unit survives).
    """

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT) -> None:
        self.coord = coord
        self.mag = mag
        self.notes: list[str] = []
        self.l1 = {Buf.L1A: [0] * L1_GRANULES, Buf.L1B: [0] * L1_GRANULES}
        self.acc = np.zeros((ACC_TILES, 4, 4), dtype=np.uint32)
        self.reset()

    def reset(self) -> None:
        """Reset: queues, the FILL, the open burst and the counters cleared; L1 and the accumulator kept."""
        self.queue: deque[int] = deque()  # CU_INST waiting
        self.pending: deque[int] = deque()  # receive flits not yet applied (behind a held RD_RESP)
        self.fill: _Fill | None = None
        self.burst: _Burst | None = None
        self.collect = [0] * ENTRY_GRANULES  # the FILL's collecting register
        self.peer_lo = 0  # first granule of an ADD_PEER pair
        self.retired = 0  # FILL/GEMM/DRAIN retired: the exec_result of the next one is this + 1
        self.emitted = 0  # sub-tiles emitted by GEMMs and not yet claimed by a fused DRAIN
        self.dbg = {"dropped": 0, "rejected": 0, "acks": 0, "granules": 0}  # the RTL's dbg_ctr fields

    # ------------------------------------------------------------ inbound
    def take(self, flit: int) -> list[Event]:
        """One inbound flit; returns what the unit sends because of it, in the order it leaves."""
        ftype = flit_type(flit)
        if ftype == FlitType.CU_INST:
            self.queue.append(flit)
        elif ftype not in BASE_TYPES:
            self.pending.append(flit)
        return self._pump()

    @property
    def held(self) -> bool:
        """An RD_RESP outside a FILL blocks the receive queue (units.md C.3)."""
        return bool(self.pending) and self.fill is None and \
            flit_type(self.pending[0]) == FlitType.MEM_RD_RESP

    def waiting_on(self) -> str | None:
        """What keeps this cluster from retiring its instruction, in words (a poll that times out names it)."""
        x, y = self.coord
        if self.fill is not None:
            n = one(self.fill.f["n"])
            role = "leader" if leads(self.coord, self.fill.f) else "follower (the group's leader sends the request)"
            return (f"cluster ({x},{y}): FILL as {role} waiting for MEM_RD_RESP, {self.fill.committed} of {n} "
                    f"entries committed")
        if self.held:
            return f"cluster ({x},{y}): a MEM_RD_RESP outside any FILL holds its receive queue"
        return None

    def busy_with(self) -> str | None:
        """The work this cluster still has, in words, or None when idle (see ``busy``)."""
        if not self.busy:
            return None
        x, y = self.coord
        return self.waiting_on() or (f"cluster ({x},{y}): {len(self.queue)} CU_INST queued, {len(self.pending)} "
                                     f"received flit(s) pending")

    @property
    def busy(self) -> bool:
        """A FILL is in flight, or instructions or receive flits wait."""
        return self.fill is not None or bool(self.queue) or bool(self.pending)

    def _pump(self) -> list[Event]:
        out: list[Event] = []
        moved = True
        while moved:
            moved = False
            while self.pending and not self.held:
                out.extend(self._receive(self.pending.popleft()))
                moved = True
            if self.fill is None and self.queue:
                out.extend(self._execute(self.queue.popleft()))
                moved = True
        return out

    def _receive(self, flit: int) -> list[Event]:
        ftype = flit_type(flit)
        if ftype == FlitType.MEM_RD_RESP:
            return self._fill_word(flit)
        if ftype == FlitType.CU_DATA:
            return self._cu_data(flit)
        self.dbg["dropped"] += 1
        return []

    # ------------------------------------------------------------ FILL responses (C.4)
    def _fill_word(self, flit: int) -> list[Event]:
        fl = self.fill
        assert fl is not None
        w = FIELDS["rsvd"].extract(flit) & 3
        self.collect[w] = flit & PAYLOAD
        if w != ENTRY_GRANULES - 1:
            return []
        side = Buf.L1B if fl.f["sel"] else Buf.L1A
        entry = l1_entry(fl.f["fbank"], FIELDS["txn"].extract(flit))
        self.l1[side][ENTRY_GRANULES * entry:ENTRY_GRANULES * (entry + 1)] = list(self.collect)
        self.dbg["granules"] += ENTRY_GRANULES
        fl.committed += 1
        if fl.committed < one(fl.f["n"]):
            return []
        self.fill = None
        return self._retire(fl.inst)

    # ------------------------------------------------------------ CU_DATA (protocol §4)
    def _cu_data(self, flit: int) -> list[Event]:
        src = flit_src(flit)
        b = self.burst
        if b is None:  # no burst open: a descriptor
            buf, off, count, flags, ack = cu_data_fields(flit)
            ok = burst_ok(buf, off, count - 1)
            if not ok:
                self.notes.append(f"CU_DATA burst from {src} rejected (buf {buf} off {off} len {count - 1})")
            self.burst = _Burst(src, buf, off, count, not ok, bool(flags & 1), ack if ack != (0, 0) else src,
                                FIELDS["txn"].extract(flit))
            return []
        if src != b.src:
            self.dbg["dropped"] += 1
            b.bad = True
            self.notes.append(f"CU_DATA from {src} while a burst from {b.src} is open: dropped, the burst rejected")
            return []
        if not b.bad:
            self._land(b.buf, b.off, flit & PAYLOAD)
        b.off += 1
        b.left -= 1
        if b.left:
            return []
        self.burst = None
        if b.bad:
            self.dbg["rejected"] += 1
        if not b.sig:
            return []
        self.dbg["acks"] += 1
        return [Event(b.ack_dst, data_received(b.ack_dst, self.coord, b.buf, b.txn))]

    def _land(self, buf: int, off: int, data: int) -> None:
        self.dbg["granules"] += 1
        if buf in (Buf.L1A, Buf.L1B):
            self.l1[Buf(buf)][off] = data
        elif off % 2 == 0:
            self.peer_lo = data
        else:
            t = off // 2
            self.acc[t] = np.asarray(acc_add(self.acc[t], unpack_send(self.peer_lo, data)), dtype=np.uint32)

    # ------------------------------------------------------------ instructions
    def _retire(self, inst: int) -> list[Event]:
        self.retired += 1
        return [self._completion(inst, None, self.retired & 0xFFFF_FFFF)]

    def _completion(self, inst: int, fault: Fault | None, result: int) -> Event:
        dst = flit_src(inst)
        return Event(dst, completion(self.coord, inst, fault is not None, int(fault) if fault is not None else result))

    def _execute(self, inst: int) -> list[Event]:
        payload = inst & PAYLOAD
        f = decode_inst(payload)
        fault = fault_of(payload)
        if fault is None and f["op"] == Op.DRAIN and f["fuse"] and self.emitted < one(f["n"]):
            fault = Fault.FUSE
        if fault is not None:
            name = Op(f["op"]).name if f["op"] in tuple(Op) else f"opcode {f['op']}"
            self.notes.append(f"{name} faults {fault.name}")
            return [self._completion(inst, fault, 0)]
        if f["op"] == Op.FILL:
            self.fill = _Fill(inst, f)
            return [Event(self.mag, fill_request(f, self.coord, self.mag))] if leads(self.coord, f) else []
        if f["op"] == Op.GEMM:
            out = self.sweep(f)
        elif f["fuse"]:
            self.emitted -= one(f["n"])
            out = []
        else:
            out = self.drain_flits(f)
        return [self._event(x) for x in out] + self._retire(inst)

    def _event(self, flit: int) -> Event:
        return Event(flit_dst(flit), flit)

    def sweep(self, f: Mapping[str, int]) -> list[int]:
        """A GEMM's sweep on the accumulator; returns the flits it emits (none unless emit, C.6).

        Batched: no K block's product (the LOAD of its entry pairs) reads the accumulator, so every block's is
        made in one call; the adds then run in K order, each over all tiles at once (the tiles of one kb are
        distinct, so the g/h order inside it changes nothing).
        """
        tiles = gemm_tiles(f)
        blocks = gemm_blocks(f)
        a = np.array([[self.entry(Buf.L1A, e) for e in a_idx] for _, a_idx, _, _ in blocks], dtype=object)
        b = np.array([[self.entry(Buf.L1B, e) for e in b_idx] for _, _, b_idx, _ in blocks], dtype=object)
        products = gemm_entry(a, b, f["anchor"])  # (K blocks, tiles, 4, 4)
        acc = self.acc[tiles]
        for (_, _, _, add), prod in zip(blocks, products):
            acc = acc_add(acc, prod) if add else prod
        self.acc[tiles] = acc
        if not emits(f):
            return []
        self.emitted += len(tiles)
        return write_port(emit_granules(self.acc[tiles]), f, self.coord, self.mag)

    def drain_flits(self, f: Mapping[str, int]) -> list[int]:
        """The flits of a (non-fused) DRAIN: OP_SEND for a node drain into buf 2, OP_EMIT otherwise."""
        n = one(f["n"])
        if f["dnode"] and f["dbuf"] == Buf.ACC:
            granules = [g for t in range(n) for g in send_granules(self.acc[t])]
        else:
            granules = emit_granules(self.acc[np.arange(n)])
        return write_port(granules, f, self.coord, self.mag)

    # ------------------------------------------------------------ views
    def entry(self, side: Buf, e: int) -> list[int]:
        """The four granules of L1 entry `e` of `side`."""
        return self.l1[side][ENTRY_GRANULES * e:ENTRY_GRANULES * (e + 1)]

    def fp16_tiles(self, n: int) -> list[int]:
        """OP_EMIT granules of sub-tiles 0..n-1 (what a node drain delivers, in order)."""
        return emit_granules(self.acc[np.arange(n)])


__all__ = ["BASE_TYPES", "ClusterCore", "Event", "MAG_DEFAULT", "burst_ok", "gemm_blocks", "gemm_tiles", "l1_entry"]
