"""The flits a cluster originates: a leading FILL's request and the write port's bursts.

* :func:`fill_request` (units.md C.2, fixed protocol): one MEM_RD_REQ to the
  memory agent, txn = eoff, last 1; addr, len 3, flags {0, STREAM, BLAYOUT =
  sel, QUANT = !preq, 0000}, count n[7:0], the peer list and its count,
  entry_words 0 (meaning 4);
* :func:`leads` (units.md C.3): a FILL leads when its own {y,x} byte is below
  every listed peer byte; npeer 0 always leads; a cluster listing itself never;
* :func:`write_port` (protocol.md §6, units.md C.6): a DRAIN's or an emitting
  GEMM's granules in bursts of at most 8 to the destination fields: memory
  (MEM_WR_REQ at addr + 32q, len k-1, then k MEM_WR_DATA) or a node (CU_DATA
  descriptor {dbuf, addr[20:5] + q, k-1, dflags, dack}, then k data flits).
  The txn of every flit of burst b is b mod 256 (ours: nothing reads it).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from models.noc.flit import FlitType, make_flit

from .isa import ADDR_BITS, GRANULE_BYTES, WBURST, Coord, one

STREAM, BLAYOUT, QUANT = 0x40, 0x20, 0x10
FILL_LEN = 3  # ignored by the memory agent on the entry path (units.md C.2)


def fill_flags(f: Mapping[str, int]) -> int:
    """0x50 (A) / 0x70 (B) with QUANT, 0x40 / 0x60 with preq."""
    return STREAM | (BLAYOUT if f["sel"] else 0) | (0 if f["preq"] else QUANT)


def fill_request(f: Mapping[str, int], coord: Coord, mag: Coord) -> int:
    """The one MEM_RD_REQ a leading FILL sends."""
    payload = (f["addr"] << 216 | FILL_LEN << 208 | fill_flags(f) << 200 | (one(f["n"]) & 0xFF) << 192
               | f["peers"] << 168 | f["npeer"] << 166)  # entry_words [165:158] = 0: four words
    return make_flit(mag, coord, FlitType.MEM_RD_REQ, f["eoff"], 1, payload)


def own_byte(coord: Coord) -> int:
    return coord[1] << 4 | coord[0]


def listed_peers(f: Mapping[str, int]) -> list[int]:
    """The {y,x} bytes of the first npeer peers (peer k at [8k+7:8k] of the field)."""
    return [(f["peers"] >> (8 * k)) & 0xFF for k in range(f["npeer"])]


def leads(coord: Coord, f: Mapping[str, int]) -> bool:
    """Whether this FILL sends the request (units.md C.3)."""
    own = own_byte(coord)
    return all(own < p for p in listed_peers(f))


def write_port(granules: Sequence[int], f: Mapping[str, int], coord: Coord, mag: Coord) -> list[int]:
    """The flits of `granules` sent to the destination fields of `f`, in the order they leave."""
    flits: list[int] = []
    for b, q0 in enumerate(range(0, len(granules), WBURST)):
        chunk = granules[q0:q0 + WBURST]
        txn = b & 0xFF
        last = len(chunk) - 1
        if f["dnode"]:
            dst = (f["dst_x"], f["dst_y"])
            off = ((f["addr"] >> 5) + q0) & 0xFFFF
            desc = (f["dbuf"] << 248 | off << 232 | last << 224 | f["dflags"] << 216 | f["dack_y"] << 212
                    | f["dack_x"] << 208)
            flits.append(make_flit(dst, coord, FlitType.CU_DATA, txn, 0, desc))
            flits.extend(make_flit(dst, coord, FlitType.CU_DATA, txn, int(k == last), int(g))
                         for k, g in enumerate(chunk))
        else:
            addr = (f["addr"] + GRANULE_BYTES * q0) & ((1 << ADDR_BITS) - 1)
            flits.append(make_flit(mag, coord, FlitType.MEM_WR_REQ, txn, 0, addr << 216 | last << 208))
            flits.extend(make_flit(mag, coord, FlitType.MEM_WR_DATA, txn, int(k == last), int(g))
                         for k, g in enumerate(chunk))
    return flits
