"""What a bench or a program builder puts into a cluster, and the shapes of what comes out.

* L1 images: entries of four granules built from int7 blocks and E5M3 scales
  (:func:`a_entries`, :func:`b_entries`; bit layout in models/numerics/layout.py,
  units.md C.4), flattened by :func:`granules_of` for CU_DATA bursts;
* the memory agent's answer to a FILL (:func:`fill_responses_for`, units.md M.2:
  entry i as four MEM_RD_RESP, txn = eoff + i mod 256, rsvd = the word, last on
  word 3), to the requester or to a multicast peer;
* OP_SEND's two granules per sub-tile (:func:`send_granules`; the split is
  ours, units.md §U.3 leaves it open);
* counts a receiver owes or a drain makes (:func:`acks_for`, :func:`drain_shape`).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from models.cu.base import SigCode, signal_flit
from models.noc.flit import FlitType, flit_field, make_flit
from models.numerics.layout import pack_a_entry, pack_b_entry

from .isa import ENTRY_GRANULES, WBURST, Coord, decode_inst, one


def a_entries(a, scales) -> list[list[int]]:
    """L1A entries of an A operand for a GEMM: A (4*gm x 32*nk) int7, scales (4*gm x nk) E5M3.

    Entry g*nk + kb holds rows 4g..4g+3, K 32kb..32kb+31 (the sweep's aoff-relative index).
    """
    a = np.asarray(a)
    s = np.asarray(scales)
    rows, k = a.shape
    if rows % 4 or k % 32 or s.shape != (rows, k // 32):
        raise ValueError(f"A must be (4*gm, 32*nk) with scales (4*gm, nk); got {a.shape} and {s.shape}")
    gm, nk = rows // 4, k // 32
    blocks = a.reshape(gm, 4, nk, 32).transpose(0, 2, 1, 3)  # (g, kb, 4, 32)
    sc = s.reshape(gm, 4, nk).transpose(0, 2, 1)  # (g, kb, 4)
    ent = pack_a_entry(blocks, sc)  # (g, kb, 4) granules
    return [[int(x) for x in ent[g, kb]] for g in range(gm) for kb in range(nk)]


def b_entries(b, scales) -> list[list[int]]:
    """L1B entries of a B operand: B (32*nk x 4*gn) int7, scales (nk x 4*gn) E5M3.

    Entry h*nk + kb holds K 32kb..32kb+31, columns 4h..4h+3.
    """
    b = np.asarray(b)
    s = np.asarray(scales)
    k, cols = b.shape
    if cols % 4 or k % 32 or s.shape != (k // 32, cols):
        raise ValueError(f"B must be (32*nk, 4*gn) with scales (nk, 4*gn); got {b.shape} and {s.shape}")
    nk, gn = k // 32, cols // 4
    blocks = b.reshape(nk, 32, gn, 4).transpose(2, 0, 1, 3)  # (h, kb, 32, 4)
    sc = s.reshape(nk, gn, 4).transpose(1, 0, 2)  # (h, kb, 4)
    ent = pack_b_entry(blocks, sc)
    return [[int(x) for x in ent[h, kb]] for h in range(gn) for kb in range(nk)]


def granules_of(entries: Sequence[Sequence[int]]) -> list[int]:
    """Entries -> the flat granule list (entry e word w at 4e + w)."""
    return [int(g) for e in entries for g in e]


def fill_responses_for(words: Sequence[int], inst_payload: int, dst: Coord, mag: Coord) -> list[int]:
    """The MEM_RD_RESP flits the memory agent sends `dst` for a FILL reading `words` (4 per entry).

    Entry i word w: txn = (eoff + i) mod 256, rsvd = w, last on w == 3 (units.md M.2); the same flits go
    to the leader and to each multicast peer.
    """
    f = decode_inst(inst_payload)
    n = one(f["n"])
    if len(words) != ENTRY_GRANULES * n:
        raise ValueError(f"a FILL of {n} entries reads {ENTRY_GRANULES * n} words, got {len(words)}")
    return [make_flit(dst, mag, FlitType.MEM_RD_RESP, (f["eoff"] + i) & 0xFF, int(w == 3),
                      int(words[ENTRY_GRANULES * i + w]), rsvd=w)
            for i in range(n) for w in range(ENTRY_GRANULES)]


def acks_for(n_granules: int) -> int:
    """Acknowledgements a receiver owes for a node drain of n granules with dflags bit 0: ceil(n/8)."""
    return -(-n_granules // WBURST)


def data_received(dst: Coord, src: Coord, buf: int, txn: int = 0) -> int:
    """The CU_SIGNAL DATA_RECEIVED a receiver sends (code 0x03, arg = buf_id, last 1)."""
    return signal_flit(dst, src, SigCode.DATA_RECEIVED, buf, txn)


def send_granules(tile: np.ndarray) -> tuple[int, int]:
    """OP_SEND of one sub-tile: two granules, granule h holds lanes 8h..8h+7 at [(e%8)*32 +: 22] (ours)."""
    flat = [int(v) & 0x3FFFFF for v in np.asarray(tile).reshape(16)]
    lo = sum(v << (32 * e) for e, v in enumerate(flat[:8]))
    hi = sum(v << (32 * e) for e, v in enumerate(flat[8:]))
    return lo, hi


def unpack_send(lo: int, hi: int) -> np.ndarray:
    """Two OP_SEND granules -> the 4x4 accumulator patterns they carry."""
    vals = [(lo >> (32 * e)) & 0x3FFFFF for e in range(8)] + [(hi >> (32 * e)) & 0x3FFFFF for e in range(8)]
    return np.array(vals, dtype=np.uint32).reshape(4, 4)


def drain_shape(n: int, *, send: bool = False) -> tuple[int, int]:
    """(granules, descriptors) of a DRAIN of n sub-tiles: n (2n for OP_SEND) granules, ceil(/8) bursts."""
    g = one(n) * (2 if send else 1)
    return g, acks_for(g)


def split_by_type(flits: Iterable[int]) -> dict[int, list[int]]:
    """Flits grouped by type, order kept (for counting descriptors and data)."""
    out: dict[int, list[int]] = {}
    for f in flits:
        out.setdefault(flit_field(f, "type"), []).append(f)
    return out
