"""What crosses the memory agent's link: request descriptors and the responses units.md M.1/M.2 fix.

Why a module of its own: the event-driven agent (models.mag.model.MagUnit), the
bench's prediction (models.mag.model.MagModel) and the request builders the benches
use must agree on every bit of this, so it is written once, here.

Descriptor (protocol.md §5), the payload of MEM_RD_REQ / MEM_WR_REQ: byte
address [255:216] (40 bits), len [215:208] = beats-1, flags [207:200] (bit 6
STREAM, bit 5 BLAYOUT, bit 4 QUANT; bits 0..3 ignored; bit 7 is not defined by
the spec), count [199:192], peer [191:168] (peer k in [8k+7:8k], a {y,x}
byte), n_peer [167:166], entry_words [165:158]. A write reads only addr and len.

Reads (units.md M.1, M.2):

* plain read (STREAM = QUANT = 0): len+1 beats to the requester, txn echoed,
  rsvd 0, last on the final beat; count, entry_words and the peers ignored;
* entry read (STREAM or QUANT): count = STREAM ? (count, 0 read as 1) : 1;
  ew = 4 if QUANT or entry_words is 0 or > 4, else entry_words; entry i at
  byte addr + i*EB, EB = 256 with QUANT (8 DRAM words through the quantiser
  of models.numerics.mxfp7, BLAYOUT choosing the packing) else 32*ew; every
  response: type 2, src = the agent, txn = (req.txn + i) mod 256, rsvd =
  {0, w[1:0]}, last = (w == ew-1); entries ascending, each to the requester
  then to peer 0, 1, 2 (up to n_peer) with the same words; each entry read
  and converted once.

An address with bit 39 set and bit 38 clear is the staging aperture (M.4);
this agent has no staging, so such a request is dropped without a response.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Callable, Sequence

import numpy as np

from models.noc.flit import FlitType, make_flit
from models.numerics.mxfp7 import ENTRY_DRAM_WORDS, quantise_entries, word_ints

__all__ = [
    "STREAM", "BLAYOUT", "QUANT", "FLAG_UNDEFINED", "WORD_BYTES", "ADDR_MASK", "WORD_MASK", "MAX_WRITE_LEN",
    "MagRequestError", "UndefinedFlags", "OutsideDram", "StagingAperture", "WriteProtocolError",
    "NotForThisAgent", "Coord", "Descriptor", "descriptor_payload", "decode_descriptor", "rd_req", "wr_req",
    "wr_data", "pack_peer", "unpack_peer", "read_responses",
]

Coord = tuple[int, int]

STREAM = 0x40
"""Flags bit 6: an entry read of ``count`` entries."""
BLAYOUT = 0x20
"""Flags bit 5: B packing of the quantised words (matters only with QUANT)."""
QUANT = 0x10
"""Flags bit 4: each entry is 256 bytes of FP16 returned as four MXFP7 words."""
FLAG_UNDEFINED = 0x80
"""Flags bit 7: units.md M.1 defines bits 4..6 and ignores 0..3; bit 7 is not defined."""
WORD_BYTES = 32
"""Bytes per DRAM word (DRAM word = byte address >> 5)."""
ADDR_MASK = (1 << 40) - 1
WORD_MASK = (1 << 256) - 1
MAX_WRITE_LEN = 7
"""A MEM_WR_REQ carries len <= 7 (at most 8 beats)."""


# ---------------------------------------------------------------- named errors
class MagRequestError(ValueError):
    """A flit the memory agent cannot honour as the spec says; never answered with plausible data."""


class UndefinedFlags(MagRequestError):
    """A MEM_RD_REQ whose flags set bit 7, which units.md M.1 does not define."""


class OutsideDram(MagRequestError):
    """A read or write reaching words outside the agent's DRAM (below its base or past its end)."""


class StagingAperture(MagRequestError):
    """A request to the staging aperture (addr[39] = 1, addr[38] = 0): this agent has none (M.4)."""


class WriteProtocolError(MagRequestError):
    """A write the protocol forbids: len > 7, a second open write per source, stray or mis-framed data."""


class NotForThisAgent(MagRequestError):
    """A flit delivered to the agent whose dst is another coordinate."""


# ---------------------------------------------------------------- descriptors
def pack_peer(coord: Coord) -> int:
    """A peer byte: packed coordinate with y first, {y[7:4], x[3:0]}."""
    x, y = coord
    if not (0 <= x <= 15 and 0 <= y <= 15):
        raise ValueError(f"peer coordinate {coord} does not fit 4 bits per axis")
    return (y << 4) | x


def unpack_peer(byte: int) -> Coord:
    """The (x, y) of a peer byte {y[7:4], x[3:0]}."""
    return (byte & 0xF, (byte >> 4) & 0xF)


@dataclass(frozen=True)
class Descriptor:
    """The fields of a MEM_RD_REQ / MEM_WR_REQ payload, and what M.1/M.2 derive from them.

    What is derived is cached on the (frozen) instance: decode_descriptor hands the same instance to every
    request with the same payload, and the agent reads these on each one."""

    addr: int = 0
    len: int = 0
    flags: int = 0
    count: int = 0
    peer: int = 0
    n_peer: int = 0
    entry_words: int = 0

    @cached_property
    def stream(self) -> bool:
        return bool(self.flags & STREAM)

    @cached_property
    def quant(self) -> bool:
        return bool(self.flags & QUANT)

    @cached_property
    def blayout(self) -> bool:
        return bool(self.flags & BLAYOUT)

    @cached_property
    def entry_read(self) -> bool:
        """STREAM or QUANT: an entry read (M.2); otherwise a plain read and len counts."""
        return self.stream or self.quant

    @cached_property
    def staging(self) -> bool:
        """addr[39] set and addr[38] clear: the staging aperture (M.4)."""
        return (self.addr >> 38) & 0b11 == 0b10

    @cached_property
    def word(self) -> int:
        return self.addr >> 5

    @cached_property
    def entries(self) -> int:
        """Entries of an entry read: STREAM ? count (0 read as 1) : 1."""
        return (self.count or 1) if self.stream else 1

    @cached_property
    def entry_size(self) -> int:
        """ew, the response words per entry: 4 with QUANT or when entry_words is 0 or above 4."""
        if self.quant or self.entry_words == 0 or self.entry_words > 4:
            return 4
        return self.entry_words

    @cached_property
    def entry_stride(self) -> int:
        """DRAM words per entry (EB / 32): 8 with QUANT, else ew."""
        return ENTRY_DRAM_WORDS if self.quant else self.entry_size

    def peers(self) -> list[Coord]:
        """The extra destinations of an entry read, in sending order."""
        return [unpack_peer((self.peer >> (8 * k)) & 0xFF) for k in range(self.n_peer)]

    def read_words(self) -> int:
        """DRAM words a read of this descriptor covers."""
        return self.entries * self.entry_stride if self.entry_read else self.len + 1


_DESC_FIELDS = (("addr", 216, 40), ("len", 208, 8), ("flags", 200, 8), ("count", 192, 8),
                ("peer", 168, 24), ("n_peer", 166, 2), ("entry_words", 158, 8))


def descriptor_payload(addr: int, len: int = 0, *, flags: int = 0, count: int = 0,
                       peers: Sequence[Coord] = (), entry_words: int = 0) -> int:
    """The 256-bit payload of a request descriptor (peers: up to three coordinates)."""
    # (`len` is the protocol's field name here, so the builtin is not used in this function.)
    n_peer = sum(1 for _ in peers)
    if n_peer > 3:
        raise ValueError(f"at most three peers fit a descriptor, got {n_peer}")
    peer = 0
    for k, c in enumerate(peers):
        peer |= pack_peer(c) << (8 * k)
    values = {"addr": addr, "len": len, "flags": flags, "count": count, "peer": peer,
              "n_peer": n_peer, "entry_words": entry_words}
    payload = 0
    for name, lsb, width in _DESC_FIELDS:
        v = values[name]
        if not 0 <= v < (1 << width):
            raise ValueError(f"descriptor field {name}={v:#x} does not fit {width} bits")
        payload |= v << lsb
    return payload


@lru_cache(maxsize=1 << 14)
def decode_descriptor(payload: int) -> Descriptor:
    """The descriptor fields of a request payload (every request the agent takes is decoded here).

    Cached: a Descriptor is frozen, and programs request the same few thousand descriptors again and again
    (a kernel's loop re-reads its tiles), so most requests find theirs already made."""
    return Descriptor(**{name: (payload >> lsb) & ((1 << width) - 1) for name, lsb, width in _DESC_FIELDS})


def rd_req(mag: Coord, src: Coord, txn: int, addr: int, len: int = 0, *, stream: bool = False,
           quant: bool = False, blayout: bool = False, flags: int | None = None, count: int = 0,
           entry_words: int = 0, peers: Sequence[Coord] = ()) -> int:
    """A MEM_RD_REQ flit from ``src`` to the agent at ``mag`` (``flags`` overrides the three named bits)."""
    if flags is None:
        flags = (STREAM if stream else 0) | (QUANT if quant else 0) | (BLAYOUT if blayout else 0)
    payload = descriptor_payload(addr, len, flags=flags, count=count, peers=peers, entry_words=entry_words)
    return make_flit(mag, src, FlitType.MEM_RD_REQ, txn, 1, payload)


def wr_req(mag: Coord, src: Coord, txn: int, addr: int, len: int) -> int:
    """A MEM_WR_REQ flit (len = beats-1; the protocol allows 0..7); last is 0 on a write descriptor."""
    return make_flit(mag, src, FlitType.MEM_WR_REQ, txn, 0, descriptor_payload(addr, len))


def wr_data(mag: Coord, src: Coord, word: int, last: bool, txn: int = 0) -> int:
    """A MEM_WR_DATA flit carrying one 256-bit word."""
    return make_flit(mag, src, FlitType.MEM_WR_DATA, txn, int(last), word & WORD_MASK)


# ---------------------------------------------------------------- responses
Fetch = Callable[[int, int], list[int]]  # (first DRAM word, n) -> n words


def read_responses(mag: Coord, src: Coord, txn: int, d: Descriptor, first: int,
                   fetch: Fetch) -> list[tuple[Coord, int]]:
    """Every (destination, MEM_RD_RESP) a read of ``d`` from ``src`` causes, in sending order.

    ``first`` is the DRAM word index of the descriptor's address (the caller
    owns the address window); ``fetch`` reads words, once per entry (or once
    for a plain read), so a multicast entry is read and converted once.
    """
    if not d.entry_read:
        n = d.len + 1
        return [(src, make_flit(src, mag, FlitType.MEM_RD_RESP, txn, int(i == n - 1), w))
                for i, w in enumerate(fetch(first, n))]
    stride, ew = d.entry_stride, d.entry_size
    raw = [fetch(first + i * stride, stride) for i in range(d.entries)]
    if d.quant:
        entry_bytes = np.frombuffer(b"".join(int(w).to_bytes(WORD_BYTES, "little") for e in raw for w in e),
                                    dtype=np.uint8).reshape(d.entries, WORD_BYTES * ENTRY_DRAM_WORDS)
        words = word_ints(quantise_entries(entry_bytes, d.blayout))
    else:
        words = raw
    out: list[tuple[Coord, int]] = []
    for i, entry in enumerate(words):
        for dst in [src] + d.peers():
            out.extend((dst, make_flit(dst, mag, FlitType.MEM_RD_RESP, txn + i, int(w == ew - 1), value,
                                       rsvd=w & 0b11))
                       for w, value in enumerate(entry))
    return out
