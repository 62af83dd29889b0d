"""A vector core model with a memory agent beside it: what a program does to L1, DRAM and the link.

``CoreWithMemory`` owns one ``VectorCore`` and a sparse DRAM of 32-byte words
(byte address >> 5, protocol §5). It answers the core's plain MEM_RD_REQ at
once (one MEM_RD_RESP per beat, txn echoed, ``last`` on the final beat, as a
memory agent does, units.md M.1), applies MEM_WR_REQ + MEM_WR_DATA to the DRAM,
and records every flit the core sends, in order. Benches use it to predict a
run; the bundle replay uses it to run compiled programs on the golden model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.noc.flit import FIELDS, FlitType, make_flit

from .core import Coord, Event, VectorCore

ADDR40 = (1 << 40) - 1
PAYLOAD = (1 << 256) - 1


@dataclass
class CoreWithMemory:
    """A VectorCore whose memory traffic is served by a DRAM held here."""

    core: VectorCore
    dram: dict[int, int] = field(default_factory=dict)  # word index (byte >> 5) -> 256-bit word
    sent: list[Event] = field(default_factory=list)  # every flit the core sent, in order
    _writes: dict[Coord, list[int]] = field(default_factory=dict)  # open MEM_WR_REQ per source: [addr, beats left]

    def read_word(self, byte_addr: int) -> int:
        return self.dram.get((byte_addr & ADDR40) >> 5, 0)

    def write_word(self, byte_addr: int, word: int) -> None:
        self.dram[(byte_addr & ADDR40) >> 5] = word & PAYLOAD

    def take(self, flit: int) -> list[Event]:
        """Deliver one flit to the core; serve its memory requests until it is quiet. Returns the events
        that did not go to the memory agent (completions, acknowledgements, CU_DATA to nodes)."""
        out: list[Event] = []
        queue = list(self.core.take(flit))
        while queue:
            ev = queue.pop(0)
            self.sent.append(ev)
            if ev.dst != self.core.mag:
                out.append(ev)
                continue
            queue.extend(self._memory(ev.flit))
        return out

    def take_all(self, flits) -> list[Event]:
        out: list[Event] = []
        for f in flits:
            out.extend(self.take(f))
        return out

    def _memory(self, flit: int) -> list[Event]:
        ftype = FIELDS["type"].extract(flit)
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        addr = (flit >> 216) & ADDR40
        if ftype == FlitType.MEM_RD_REQ:
            beats = ((flit >> 208) & 0xFF) + 1
            txn = FIELDS["txn"].extract(flit)
            back: list[Event] = []
            for k in range(beats):
                resp = make_flit(src, self.core.mag, FlitType.MEM_RD_RESP, txn, int(k == beats - 1),
                                 self.read_word(addr + 32 * k))
                back.extend(self.core.take(resp))
            return back
        if ftype == FlitType.MEM_WR_REQ:  # data binds to its request by source (protocol §5)
            self._writes[src] = [addr, ((flit >> 208) & 0xFF) + 1]
        elif ftype == FlitType.MEM_WR_DATA:
            w = self._writes[src]
            self.write_word(w[0], flit & PAYLOAD)
            w[0] += 32
            w[1] -= 1
            if not w[1]:
                del self._writes[src]
        return []


__all__ = ["CoreWithMemory"]
