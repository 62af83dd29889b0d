"""The vector core's side of the link (units.md V.11, V.12), as a mixin of models.vector.core.VectorCore:
the flits of VFILL and VDRAIN (to memory and to a node), inbound CU_DATA bursts and fill responses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from models.cu.base import SigCode, signal_payload
from models.noc.flit import FIELDS, FlitType

from . import isa
from .isa import L1_WORDS, MAX_WALK, WORD_MASK, Fault, Word
from .lanes import word_to_u16
from .walk import walk_addresses, walk_total
from .words import WordFault

Coord = tuple[int, int]
DRAIN_WR_TXN = 0x01  # VDRAIN to memory: MEM_WR_REQ / MEM_WR_DATA txn (V.11)


@dataclass
class Event:
    """One flit the core sends: (destination, flit). ``wild_arg``: the CU_SIGNAL arg is the cycle count."""

    dst: Coord
    flit: int
    wild_arg: bool = False


class TakesFlits:
    """``take_all`` for a unit's event model: its ``take(flit)`` applied in order, the events joined."""

    def take(self, flit: int) -> list["Event"]:
        raise NotImplementedError

    def take_all(self, flits: Iterable[int]) -> list["Event"]:
        out: list[Event] = []
        for f in flits:
            out.extend(self.take(f))
        return out


@dataclass
class _Burst:
    """The one open inbound CU_DATA burst (V.12)."""

    src: Coord
    left: int
    ptr: int
    drop: bool
    sig: bool
    ack_dst: Coord
    buf: int



class LinkMixin:
    """VectorCore's inbound CU_DATA and fill responses, and the flits of VFILL / VDRAIN."""

    def _cu_data(self, flit: int) -> list[Event]:
        """Inbound CU_DATA (V.12): one open burst, framed by count; a rejected or interleaved burst is
        dropped, unacknowledged, and leaves F_CUDATA pending."""
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        pl = flit & WORD_MASK
        b = self.burst
        if b is None:  # a descriptor
            buf, off, ln = (pl >> 248) & 0xFF, (pl >> 232) & 0xFFFF, (pl >> 224) & 0xFF
            ack = (pl >> 208) & 0xFF
            bad = buf != 0 or off + ln >= L1_WORDS
            if bad:
                self.cud_pending = True
            self.burst = _Burst(src, ln + 1, off & 0x1FF, bad, bool((pl >> 216) & 1) and not bad,
                                (ack & 0xF, ack >> 4) if ack else src, buf)
            return []
        alien = src != b.src
        if not b.drop and not alien:
            self.l1[b.ptr] = word_to_u16(pl)
        if alien:
            b.drop, b.sig = True, False
            self.cud_pending = True
        b.ptr = (b.ptr + 1) % L1_WORDS
        b.left -= 1
        if b.left:
            return []
        self.burst = None
        if b.sig:
            return [self._flit(b.ack_dst, FlitType.CU_SIGNAL, 0, 1, signal_payload(SigCode.DATA_RECEIVED, b.buf))]
        return []

    def _fill_response(self, flit: int) -> list[Event]:
        txn = FIELDS["txn"].extract(flit)
        if txn not in self.fills:
            self.protocol_errors.append(f"MEM_RD_RESP txn {txn:#04x} matches no outstanding VFILL request: dropped")
            return []
        self.l1[self.fills.pop(txn)] = word_to_u16(flit & WORD_MASK)
        if self.run is not None and not self.fills:
            return self._resume() + self._drain_queue()
        return []

    # ------------------------------------------------------------ VFILL / VDRAIN (V.11)
    def _transfer(self, w: Word, out: list[Event]) -> None:
        dims = tuple(self.dims[w.ad])
        total = walk_total(tuple(b for _, b in dims))
        if total > MAX_WALK:
            raise WordFault(Fault.F_LEN)
        start = w.l1_start
        l1 = [(start + n) % L1_WORDS for n in range(total)]
        if w.op == isa.OP_VFILL:
            for n, addr in enumerate(walk_addresses(self.base[w.ad], dims, total)):
                self.fills[l1[n] & 0xFF] = l1[n]
                out.append(self._flit(self.mag, FlitType.MEM_RD_REQ, l1[n], 1, addr << 216))
            return
        if w.node:
            rec = self.base[w.ad]
            fin = (rec >> 26) & 0xFF
            txn, rsvd = (fin, 0b100 | (rec >> 24) & 3) if fin else (0, 0)
            dst = (w.dst_x, w.dst_y)
            desc = (w.buf << 248 | (rec & 0xFFFF) << 232 | (total - 1) << 224 | w.signal << 216
                    | ((rec >> 16) & 0xFF) << 208)
            out.append(self._flit(dst, FlitType.CU_DATA, txn, 0, desc, rsvd))
            for n, addr in enumerate(l1):
                out.append(self._flit(dst, FlitType.CU_DATA, txn, int(n == total - 1), self.l1_word(addr), rsvd))
            return
        for n, addr in enumerate(walk_addresses(self.base[w.ad], dims, total)):
            out.append(self._flit(self.mag, FlitType.MEM_WR_REQ, DRAIN_WR_TXN, 0, addr << 216))
            out.append(self._flit(self.mag, FlitType.MEM_WR_DATA, DRAIN_WR_TXN, 1, self.l1_word(l1[n])))


__all__ = ["DRAIN_WR_TXN", "Event", "LinkMixin"]
