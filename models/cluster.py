"""Golden model of the cluster CU (rtl/units/cluster_cu.v), plain Python/numpy.

What it knows, and the RTL must agree with bit for bit:

* the CU_INST encoding (protocol section 6): :func:`encode_inst` and the
  helpers :func:`fill`, :func:`gemm`, :func:`drain` refuse a value that does not
  fit its field, naming the field and its limit; with ``strict`` (the default
  of the helpers) they also refuse what the unit would fault on, naming the
  fault;
* L1 images: entries of four granules built from int7 blocks and E5M3 scales
  (:func:`a_entries`, :func:`b_entries`; bit layout in models/numerics/layout.py)
  and the CU_DATA bursts that carry them (:func:`cu_data_bursts`);
* the GEMM sweep order and tile numbering (:func:`sweep_order`), with the
  values from the project's numerics (models/numerics/cluster.py);
* the DRAIN flit sequences, to memory and to a node (:meth:`ClusterModel.drain`),
  the FILL request and the memory agent's responses to it, and the
  acknowledgements a receiver owes (:func:`acks_for`);
* what the cluster does as a CU_DATA receiver (:meth:`ClusterModel.receive`),
  including the known divergence: a rejected burst is still acknowledged.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Iterable, Mapping, Sequence

import numpy as np

from models.cu_base import (  # noqa: F401  (CU_DATA encoders re-exported for the benches)
    SigCode, completion, cu_data_bursts, cu_data_descriptor, cu_data_fields, signal_flit)
from models.flit import FlitType, flit_field, make_flit
from models.numerics.cluster import acc_add, emit_granule, gemm_entry
from models.numerics.layout import pack_a_entry, pack_b_entry

Coord = tuple[int, int]

CU_TYPE = 0x4D47  # 'MG'
N_BUFFERS = 3
WBURST = 8  # granules per drain burst (and beats per memory write)
L1_ENTRIES = 512  # per side (CU_DATA entry = off[10:2])
ENTRY_GRANULES = 4
L1_GRANULES = L1_ENTRIES * ENTRY_GRANULES  # 2048 per side
ACC_TILES = 256
FILL_MAX = 255  # entries per FILL (the 8-bit count; and eoff + n <= 256, the txn tag space)
PEER_GRANULES = 2 * ACC_TILES  # buf 2 reach, in granules
GRANULE_BYTES = 32
ANCHOR_NEUTRAL = 40


class Op(IntEnum):
    FILL = 1
    GEMM = 2
    DRAIN = 3


class Fault(IntEnum):
    """FAULT codes (CU_SIGNAL arg) of the cluster."""

    OPCODE = 0x04  # opcode not 1..3
    FILL_RANGE = 0x10  # FILL n > 255 or eoff + n > 256
    GEMM_RANGE = 0x11  # gm*gn > 256 or an L1 index past entry 511
    DRAIN_RANGE = 0x12  # DRAIN n > 256
    REMOTE = 0x13  # DRAIN with dmesh != 0 (remote-mesh drain not modelled)


class Buf(IntEnum):
    L1A = 0
    L1B = 1
    ACC = 2


# CU_INST payload fields: name -> (msb, lsb). addr is split (see ADDR_*).
INST_FIELDS: Mapping[str, tuple[int, int]] = {
    "op": (255, 252),
    "n": (217, 202),
    "sel": (201, 201),
    "acc": (200, 200),
    "gm": (199, 192),
    "gn": (191, 184),
    "nk": (183, 176),
    "anchor": (175, 168),
    "eoff": (140, 133),
    "aoff": (132, 125),
    "boff": (124, 117),
    "emit": (116, 116),
    "fuse": (115, 115),
    "dnode": (111, 111),
    "dst_x": (110, 107),
    "dst_y": (106, 103),
    "dbuf": (102, 95),
    "dflags": (94, 87),
    "dack_y": (86, 83),
    "dack_x": (82, 79),
    "dmesh": (78, 77),
    "dfin": (76, 69),
}
ADDR_BITS = 40  # full byte address = {[68:63], [251:218]}
ADDR_LOW = (251, 218)
ADDR_HIGH = (68, 63)


def _field_error(name: str, width: int, value: int, extra: str = "") -> ValueError:
    return ValueError(f"CU_INST field '{name}' is {width} bits wide (0..{(1 << width) - 1}); got {value}{extra}")


def encode_inst(op: int, *, addr: int = 0, **fields: int) -> int:
    """The CU_INST payload for `op` with the given fields (others 0).

    Refuses an unknown field name and any value that does not fit its field,
    with a message naming the field and its limit.
    """
    unknown = set(fields) - set(INST_FIELDS)
    if unknown:
        raise TypeError(f"unknown CU_INST field(s): {', '.join(sorted(unknown))}; "
                        f"known: addr, {', '.join(INST_FIELDS)}")
    values = dict(fields, op=op)
    payload = 0
    for name, v in values.items():
        msb, lsb = INST_FIELDS[name]
        width = msb - lsb + 1
        v = int(v)
        if not 0 <= v < (1 << width):
            raise _field_error(name, width, v)
        payload |= v << lsb
    addr = int(addr)
    if not 0 <= addr < (1 << ADDR_BITS):
        raise _field_error("addr", ADDR_BITS, addr)
    low_w = ADDR_LOW[0] - ADDR_LOW[1] + 1
    payload |= (addr & ((1 << low_w) - 1)) << ADDR_LOW[1]
    payload |= (addr >> low_w) << ADDR_HIGH[1]
    return payload


def decode_inst(payload: int) -> dict[str, int]:
    """Every field of a CU_INST payload (raw values: n=0 stays 0)."""
    out = {name: (payload >> lsb) & ((1 << (msb - lsb + 1)) - 1) for name, (msb, lsb) in INST_FIELDS.items()}
    low_w = ADDR_LOW[0] - ADDR_LOW[1] + 1
    out["addr"] = ((payload >> ADDR_LOW[1]) & ((1 << low_w) - 1)) | (((payload >> ADDR_HIGH[1]) & 0x3F) << low_w)
    return out


def _one(v: int) -> int:
    """Fields whose 0 reads as 1 (n, gm, gn, nk)."""
    return v if v else 1


def fault_of(payload: int) -> Fault | None:
    """The fault the unit retires this instruction with, or None."""
    f = decode_inst(payload)
    op = f["op"]
    n = _one(f["n"])
    if op == Op.FILL:
        if n > FILL_MAX or f["eoff"] + n > 256:
            return Fault.FILL_RANGE
    elif op == Op.GEMM:
        gm, gn, nk = _one(f["gm"]), _one(f["gn"]), _one(f["nk"])
        if gm * gn > ACC_TILES or f["aoff"] + gm * nk > L1_ENTRIES or f["boff"] + gn * nk > L1_ENTRIES:
            return Fault.GEMM_RANGE
    elif op == Op.DRAIN:
        if f["dmesh"]:
            return Fault.REMOTE
        if n > ACC_TILES:
            return Fault.DRAIN_RANGE
    else:
        return Fault.OPCODE
    return None


def _strict(payload: int, strict: bool) -> int:
    if strict:
        fault = fault_of(payload)
        if fault is not None:
            f = decode_inst(payload)
            raise ValueError(f"this instruction would fault {fault.name} (0x{int(fault):02x}): "
                             f"{_fault_reason(fault, f)}; pass strict=False to build it anyway")
    return payload


def _fault_reason(fault: Fault, f: Mapping[str, int]) -> str:
    n = _one(f["n"])
    if fault == Fault.FILL_RANGE:
        return f"FILL n={n} with eoff={f['eoff']}: n must be <= {FILL_MAX} and eoff + n <= 256 (entry tags are 8 bits)"
    if fault == Fault.GEMM_RANGE:
        gm, gn, nk = _one(f["gm"]), _one(f["gn"]), _one(f["nk"])
        return (f"gm*gn={gm * gn} must be <= {ACC_TILES}, aoff+gm*nk={f['aoff'] + gm * nk} and "
                f"boff+gn*nk={f['boff'] + gn * nk} must be <= {L1_ENTRIES} (L1 entries per side)")
    if fault == Fault.DRAIN_RANGE:
        return f"DRAIN n={n} must be <= {ACC_TILES} (accumulator sub-tiles)"
    if fault == Fault.REMOTE:
        return "dmesh must be 0 (remote-mesh drains are not modelled)"
    return f"opcode {f['op']} (only 1 FILL, 2 GEMM, 3 DRAIN)"


def fill(addr: int, n: int, sel: int, eoff: int = 0, *, strict: bool = True) -> int:
    """FILL payload: n entries from byte address `addr` into L1A (sel 0) or L1B (sel 1) at eoff."""
    return _strict(encode_inst(Op.FILL, addr=addr, n=n, sel=sel, eoff=eoff), strict)


def gemm(gm: int, gn: int, nk: int, *, anchor: int = ANCHOR_NEUTRAL, acc: int = 0, aoff: int = 0, boff: int = 0,
         emit: int = 0, strict: bool = True) -> int:
    """GEMM payload: sweep gm x gn sub-tiles over nk K blocks."""
    return _strict(encode_inst(Op.GEMM, gm=gm, gn=gn, nk=nk, anchor=anchor, acc=acc, aoff=aoff, boff=boff,
                               emit=emit), strict)


def drain(n: int, *, addr: int = 0, dnode: int = 0, dst: Coord = (0, 0), dbuf: int = 0, dflags: int = 0,
          dack: Coord = (0, 0), fuse: int = 0, dmesh: int = 0, strict: bool = True) -> int:
    """DRAIN payload: n sub-tiles to memory (dnode 0) or to node `dst` (dnode 1); dack is (x, y)."""
    return _strict(encode_inst(Op.DRAIN, addr=addr, n=n, dnode=dnode, dst_x=dst[0], dst_y=dst[1], dbuf=dbuf,
                               dflags=dflags, dack_x=dack[0], dack_y=dack[1], fuse=fuse, dmesh=dmesh), strict)


# ---------------------------------------------------------------- L1 images
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


def acks_for(n_granules: int) -> int:
    """Acknowledgements a receiver owes for a node drain of n granules with dflags bit 0: ceil(n/8)."""
    return -(-n_granules // WBURST)


def data_received(dst: Coord, src: Coord, buf: int, txn: int = 0) -> int:
    """The CU_SIGNAL DATA_RECEIVED a receiver sends (code 0x03, arg = buf_id, last 1)."""
    return signal_flit(dst, src, SigCode.DATA_RECEIVED, buf, txn)


# ---------------------------------------------------------------- the sweep
@dataclass(frozen=True)
class Command:
    """One accumulator command of a GEMM sweep."""

    kb: int
    g: int
    h: int
    a_entry: int  # L1A entry index
    b_entry: int  # L1B entry index
    tile: int  # accumulator sub-tile g*gn + h
    load: bool  # LOAD (kb == 0 and not acc) else ADD


def sweep_order(gm: int, gn: int, nk: int, *, aoff: int = 0, boff: int = 0, acc: int = 0) -> list[Command]:
    """The sweep: for kb < nk: for g < gm: for h < gn (K outermost); 0 reads as 1."""
    gm, gn, nk = _one(gm), _one(gn), _one(nk)
    return [Command(kb, g, h, aoff + g * nk + kb, boff + h * nk + kb, g * gn + h, kb == 0 and not acc)
            for kb in range(nk) for g in range(gm) for h in range(gn)]


# ---------------------------------------------------------------- accumulator formats on the wire
def send_granules(tile: np.ndarray) -> tuple[int, int]:
    """OP_SEND of one sub-tile: two granules, granule h holds elements 8h..8h+7 at [(e%8)*32 +: 22]."""
    flat = [int(v) & 0x3FFFFF for v in np.asarray(tile).reshape(16)]
    lo = sum(v << (32 * e) for e, v in enumerate(flat[:8]))
    hi = sum(v << (32 * e) for e, v in enumerate(flat[8:]))
    return lo, hi


def unpack_send(lo: int, hi: int) -> np.ndarray:
    """Two OP_SEND granules -> the 4x4 accumulator patterns they carry."""
    vals = [(lo >> (32 * e)) & 0x3FFFFF for e in range(8)] + [(hi >> (32 * e)) & 0x3FFFFF for e in range(8)]
    return np.array(vals, dtype=np.uint32).reshape(4, 4)


# ---------------------------------------------------------------- the unit
@dataclass
class Outcome:
    """What one instruction made the cluster send: flits (in order) and the completion."""

    flits: list[int]
    completion: int
    fault: Fault | None


class ClusterModel:
    """State (L1A, L1B, accumulator) and behaviour of one cluster at `coord`.

    L1 and the accumulator start as zero (the RTL clears them at time 0 and
    reset leaves them alone).
    """

    def __init__(self, coord: Coord = (1, 1), mag: Coord = (0, 1)) -> None:
        self.coord = coord
        self.mag = mag
        self.l1 = {Buf.L1A: [0] * L1_GRANULES, Buf.L1B: [0] * L1_GRANULES}
        self.acc = np.zeros((ACC_TILES, 4, 4), dtype=np.uint32)

    # ------------------------------------------------ CU_DATA into the cluster
    def receive(self, flits: Sequence[int]) -> list[int]:
        """Apply inbound CU_DATA bursts (descriptor + data, one source, in order); return the acks sent.

        A burst is rejected (data counted out and dropped, nothing written,
        never wrapped) for buf > 2, off+len past the buffer, and for buf 2 an
        odd off or an odd count; it is acknowledged (flags bit 0) either way.
        """
        acks: list[int] = []
        i = 0
        while i < len(flits):
            desc = flits[i]
            if flit_field(desc, "type") != FlitType.CU_DATA:
                i += 1
                continue
            buf, off, count, flags, (ack_x, ack_y) = cu_data_fields(desc)
            ln = count - 1
            src = (flit_field(desc, "src_x"), flit_field(desc, "src_y"))
            data = [f & ((1 << 256) - 1) for f in flits[i + 1:i + 2 + ln]]
            if len(data) != ln + 1:
                raise ValueError(f"burst at flit {i} announces {ln + 1} data flits, {len(data)} follow")
            if self.burst_ok(buf, off, ln):
                if buf in (Buf.L1A, Buf.L1B):
                    for k, g in enumerate(data):
                        self.l1[Buf(buf)][off + k] = g
                else:
                    for k in range(0, len(data), 2):
                        t = (off + k) // 2
                        peer = unpack_send(data[k], data[k + 1])
                        self.acc[t] = np.asarray(acc_add(self.acc[t], peer), dtype=np.uint32)
            if flags & 1:
                dst = (ack_x, ack_y) if (ack_x or ack_y) else src
                acks.append(data_received(dst, self.coord, buf, flit_field(desc, "txn")))
            i += ln + 2
        return acks

    @staticmethod
    def burst_ok(buf: int, off: int, ln: int) -> bool:
        """Whether an inbound burst of len `ln` at granule `off` of `buf` is accepted."""
        end = off + ln
        if buf in (Buf.L1A, Buf.L1B):
            return end < L1_GRANULES
        if buf == Buf.ACC:
            return off % 2 == 0 and ln % 2 == 1 and end < PEER_GRANULES
        return False

    # ------------------------------------------------ instructions
    def execute(self, inst: int) -> Outcome:
        """Run one CU_INST flit (FILL must then be completed with :meth:`fill_responses`)."""
        payload = inst & ((1 << 256) - 1)
        fault = fault_of(payload)
        if fault is not None:
            return Outcome([], completion(self.coord, inst, True, int(fault)), fault)
        f = decode_inst(payload)
        op = f["op"]
        if op == Op.FILL:
            flits = [self.fill_request(f)]
        elif op == Op.GEMM:
            self.run_gemm(f)
            flits = []
        else:
            flits = self.drain(f)
        return Outcome(flits, completion(self.coord, inst, False, 0), None)

    def fill_request(self, f: Mapping[str, int]) -> int:
        """The MEM_RD_REQ of a FILL: STREAM, count n, entry_words 4, len 3, txn eoff, last 1."""
        n = _one(f["n"])
        payload = f["addr"] << 216 | 3 << 208 | 0x40 << 200 | n << 192 | 4 << 158
        return make_flit(self.mag, self.coord, FlitType.MEM_RD_REQ, f["eoff"], 1, payload)

    def fill_responses(self, words: Sequence[int], inst_payload: int) -> list[int]:
        """The MEM_RD_RESP flits the memory agent sends for a FILL reading `words` (4n of them).

        Also applies them to L1, as the cluster would. Entry i word w carries
        txn = eoff + i, rsvd = w, last on w == 3.
        """
        f = decode_inst(inst_payload)
        n = _one(f["n"])
        if len(words) != 4 * n:
            raise ValueError(f"a FILL of {n} entries reads {4 * n} words, got {len(words)}")
        side = Buf.L1B if f["sel"] else Buf.L1A
        out = []
        for i in range(n):
            for w in range(4):
                entry = f["eoff"] + i
                self.l1[side][4 * entry + w] = int(words[4 * i + w])
                out.append(make_flit(self.coord, self.mag, FlitType.MEM_RD_RESP, entry, int(w == 3),
                                 int(words[4 * i + w]), rsvd=w))
        return out

    def run_gemm(self, f: Mapping[str, int]) -> None:
        """The sweep, batched per K block (tiles are distinct within one kb)."""
        cmds = sweep_order(f["gm"], f["gn"], f["nk"], aoff=f["aoff"], boff=f["boff"], acc=f["acc"])
        by_kb: dict[int, list[Command]] = {}
        for c in cmds:
            by_kb.setdefault(c.kb, []).append(c)
        for kb in sorted(by_kb):
            group = by_kb[kb]
            a = np.array([[self.l1[Buf.L1A][4 * c.a_entry + w] for w in range(4)] for c in group], dtype=object)
            b = np.array([[self.l1[Buf.L1B][4 * c.b_entry + w] for w in range(4)] for c in group], dtype=object)
            tiles = [c.tile for c in group]
            load = np.array([c.load for c in group])
            out = gemm_entry(a, b, f["anchor"], self.acc[tiles], ~load)
            self.acc[tiles] = np.asarray(out, dtype=np.uint32)

    def drain(self, f: Mapping[str, int]) -> list[int]:
        """The flits of a DRAIN, in the order they leave the cluster."""
        n = _one(f["n"])
        send = bool(f["dnode"]) and f["dbuf"] == Buf.ACC
        granules: list[int] = []
        for t in range(n):
            if send:
                granules.extend(send_granules(self.acc[t]))
            else:
                granules.append(int(emit_granule(self.acc[t])))
        flits: list[int] = []
        for b, q0 in enumerate(range(0, len(granules), WBURST)):
            chunk = granules[q0:q0 + WBURST]
            if f["dnode"]:
                dst = (f["dst_x"], f["dst_y"])
                off = ((f["addr"] >> 5) + q0) & 0xFFFF
                payload = (f["dbuf"] << 248 | off << 232 | (len(chunk) - 1) << 224 | f["dflags"] << 216
                           | f["dack_y"] << 212 | f["dack_x"] << 208)
                flits.append(make_flit(dst, self.coord, FlitType.CU_DATA, b, 0, payload))
                flits.extend(make_flit(dst, self.coord, FlitType.CU_DATA, b, int(k == len(chunk) - 1), g)
                             for k, g in enumerate(chunk))
            else:
                addr = (f["addr"] + GRANULE_BYTES * q0) & ((1 << ADDR_BITS) - 1)
                flits.append(make_flit(self.mag, self.coord, FlitType.MEM_WR_REQ, b, 0,
                                   addr << 216 | (len(chunk) - 1) << 208))
                flits.extend(make_flit(self.mag, self.coord, FlitType.MEM_WR_DATA, b, int(k == len(chunk) - 1), g)
                             for k, g in enumerate(chunk))
        return flits

    # ------------------------------------------------ views
    def fp16_tiles(self, n: int) -> list[int]:
        """OP_EMIT granules of sub-tiles 0..n-1 (what a node drain delivers, in order)."""
        return [int(emit_granule(self.acc[t])) for t in range(n)]


def drain_shape(n: int, *, send: bool = False) -> tuple[int, int]:
    """(granules, descriptors) of a DRAIN of n sub-tiles: n (2n for OP_SEND) granules, ceil(/8) bursts."""
    g = _one(n) * (2 if send else 1)
    return g, acks_for(g)


def split_by_type(flits: Iterable[int]) -> dict[int, list[int]]:
    """Flits grouped by type, order kept (for counting descriptors and data)."""
    out: dict[int, list[int]] = {}
    for f in flits:
        out.setdefault(flit_field(f, "type"), []).append(f)
    return out
