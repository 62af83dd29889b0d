"""The cluster's CU_INST: field positions, encoder and decoder, the faults, and instruction builders.

Field positions are fixed protocol (protocol.md §6, units.md C.1); every field
keeps its position under every opcode. The builders (:func:`fill`,
:func:`gemm`, :func:`drain`) refuse a value that does not fit its field, naming
the field and its limit, and with ``strict`` (their default) also what the
unit would fault on, naming the fault, so a program that would fault is
caught where it is written.

The fault codes are ours (docs/cluster.md): upstream's cluster has none; where
upstream would hang or wrap into undefined storage we retire the instruction
at once with a named FAULT instead (units.md is silent on cluster faults).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Mapping, Sequence

Coord = tuple[int, int]

CU_TYPE = 0x4D47  # 'MG'
N_BUFFERS = 3
WBURST = 8  # granules per drain burst (and beats per memory write): protocol.md §4
L1_ENTRIES = 512  # per side: two banks of 256 (units.md C.4, the production build GA = GB = 512)
BANK_ENTRIES = 256
ENTRY_GRANULES = 4
L1_GRANULES = L1_ENTRIES * ENTRY_GRANULES  # 2048 per side: CU_DATA's entry = off[10:2] spans both banks
ACC_TILES = 256
FILL_MAX = 255  # n >= 256 hangs upstream (units.md C.2): ours faults FILL_RANGE instead
PEER_GRANULES = 2 * ACC_TILES  # buf 2 reach, in granules
GRANULE_BYTES = 32
ANCHOR_NEUTRAL = 40
MAX_PEERS = 3


class Op(IntEnum):
    FILL = 1
    GEMM = 2
    DRAIN = 3


class Fault(IntEnum):
    """FAULT codes (CU_SIGNAL arg) of the cluster: ours, docs/cluster.md."""

    OPCODE = 0x04  # opcode not 1..3 (the code cu_null and the vector core use)
    FILL_RANGE = 0x10  # FILL n > 255: upstream's 8-bit entry counter never reaches n and the FILL hangs
    GEMM_RANGE = 0x11  # gm*gn > 256: more sub-tiles than the accumulator holds
    DRAIN_RANGE = 0x12  # DRAIN n > 256
    REMOTE = 0x13  # DRAIN, or emitting GEMM, with dmesh or dfin != 0 (remote-mesh drains are not modelled)
    FUSE = 0x14  # fused DRAIN of n sub-tiles with fewer emitted: upstream waits for them forever


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
    "peers": (167, 144),
    "npeer": (143, 142),
    "preq": (141, 141),
    "eoff": (140, 133),
    "aoff": (132, 125),
    "boff": (124, 117),
    "emit": (116, 116),
    "fuse": (115, 115),
    "abank": (114, 114),
    "bbank": (113, 113),
    "fbank": (112, 112),
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
_LOW_W = ADDR_LOW[0] - ADDR_LOW[1] + 1


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
    payload = 0
    for name, v in dict(fields, op=op).items():
        msb, lsb = INST_FIELDS[name]
        width = msb - lsb + 1
        v = int(v)
        if not 0 <= v < (1 << width):
            raise _field_error(name, width, v)
        payload |= v << lsb
    addr = int(addr)
    if not 0 <= addr < (1 << ADDR_BITS):
        raise _field_error("addr", ADDR_BITS, addr)
    payload |= (addr & ((1 << _LOW_W) - 1)) << ADDR_LOW[1]
    payload |= (addr >> _LOW_W) << ADDR_HIGH[1]
    return payload


def decode_inst(payload: int) -> dict[str, int]:
    """Every field of a CU_INST payload (raw values: n = 0 stays 0)."""
    out = {name: (payload >> lsb) & ((1 << (msb - lsb + 1)) - 1) for name, (msb, lsb) in INST_FIELDS.items()}
    out["addr"] = ((payload >> ADDR_LOW[1]) & ((1 << _LOW_W) - 1)) | (((payload >> ADDR_HIGH[1]) & 0x3F) << _LOW_W)
    return out


def one(v: int) -> int:
    """Fields whose 0 reads as 1 (n, gm, gn, nk)."""
    return v if v else 1


def emits(f: Mapping[str, int]) -> bool:
    """Whether a GEMM sends its sub-tiles: emit set and the last K block is not a LOAD (units.md C.6)."""
    return bool(f["emit"]) and not (one(f["nk"]) == 1 and not f["acc"])


def remote(f: Mapping[str, int]) -> bool:
    """A remote-mesh drain: dmesh or dfin nonzero (protocol.md §6: both 0 for a local drain). Upstream sends
    such a memory drain to another mesh (matmul/mx_cluster_cu.v: txn = dfin, rsvd = {1, dmesh}); ours does
    not model other meshes and faults REMOTE rather than write locally what upstream writes elsewhere."""
    return bool(f["dmesh"] or f["dfin"])


def fault_of(payload: int) -> Fault | None:
    """The fault the unit retires this instruction with, from the instruction alone, or None.

    (A fused DRAIN's FUSE fault depends on what was emitted before it: ClusterCore decides that one.)
    """
    f = decode_inst(payload)
    op = f["op"]
    if op == Op.FILL:
        return Fault.FILL_RANGE if one(f["n"]) > FILL_MAX else None
    if op == Op.GEMM:
        if one(f["gm"]) * one(f["gn"]) > ACC_TILES:
            return Fault.GEMM_RANGE
        return Fault.REMOTE if f["emit"] and remote(f) else None
    if op == Op.DRAIN:
        if remote(f):
            return Fault.REMOTE
        return Fault.DRAIN_RANGE if one(f["n"]) > ACC_TILES else None
    return Fault.OPCODE


def fault_reason(fault: Fault, f: Mapping[str, int]) -> str:
    """Why `f` faults `fault`, with the limit."""
    n = one(f["n"])
    if fault == Fault.FILL_RANGE:
        return f"FILL n={n} must be <= {FILL_MAX} (upstream's 8-bit entry count never reaches n >= 256: it hangs)"
    if fault == Fault.GEMM_RANGE:
        return f"gm*gn={one(f['gm']) * one(f['gn'])} must be <= {ACC_TILES} (accumulator sub-tiles)"
    if fault == Fault.DRAIN_RANGE:
        return f"DRAIN n={n} must be <= {ACC_TILES} (accumulator sub-tiles)"
    if fault == Fault.REMOTE:
        return "dmesh and dfin must be 0 (remote-mesh drains are not modelled)"
    if fault == Fault.FUSE:
        return f"a fused DRAIN of {n} sub-tiles needs {n} emitted by the GEMMs before it"
    return f"opcode {f['op']} (only 1 FILL, 2 GEMM, 3 DRAIN)"


def _strict(payload: int, strict: bool) -> int:
    if strict:
        fault = fault_of(payload)
        if fault is not None:
            raise ValueError(f"this instruction would fault {fault.name} (0x{int(fault):02x}): "
                             f"{fault_reason(fault, decode_inst(payload))}; pass strict=False to build it anyway")
    return payload


def peer_field(peers: Sequence[Coord]) -> tuple[int, int]:
    """(peers, npeer) fields of a FILL multicast list: peer k = {y,x} byte at [8k+7:8k] of the field."""
    if len(peers) > MAX_PEERS:
        raise ValueError(f"a FILL lists at most {MAX_PEERS} peers (npeer is 2 bits); got {len(peers)}")
    value = 0
    for k, (x, y) in enumerate(peers):
        if not (0 <= x < 16 and 0 <= y < 16):
            raise ValueError(f"peer {k} {(x, y)}: coordinates are 4 bits")
        value |= (y << 4 | x) << (8 * k)
    return value, len(peers)


def fill(addr: int, n: int, sel: int, eoff: int = 0, *, preq: int = 0, fbank: int = 0,
         peers: Sequence[Coord] = (), strict: bool = True) -> int:
    """FILL payload: n entries from byte address `addr` into L1A (sel 0) or L1B (sel 1) at entries
    {fbank, eoff + e mod 256}; `preq` when the operand is already MXFP7 in DRAM (no QUANT); `peers`
    (x, y) the multicast group."""
    pv, npeer = peer_field(peers)
    return _strict(encode_inst(Op.FILL, addr=addr, n=n, sel=sel, eoff=eoff, preq=preq, fbank=fbank, peers=pv,
                               npeer=npeer), strict)


def _destination(addr: int, dnode: int, dst: Coord, dbuf: int, dflags: int, dack: Coord,
                 dmesh: int) -> dict[str, int]:
    return dict(addr=addr, dnode=dnode, dst_x=dst[0], dst_y=dst[1], dbuf=dbuf, dflags=dflags, dack_x=dack[0],
                dack_y=dack[1], dmesh=dmesh)


def gemm(gm: int, gn: int, nk: int, *, anchor: int = ANCHOR_NEUTRAL, acc: int = 0, aoff: int = 0, boff: int = 0,
         abank: int = 0, bbank: int = 0, emit: int = 0, addr: int = 0, dnode: int = 0, dst: Coord = (0, 0),
         dbuf: int = 0, dflags: int = 0, dack: Coord = (0, 0), dmesh: int = 0, strict: bool = True) -> int:
    """GEMM payload: sweep gm x gn sub-tiles over nk K blocks from L1A {abank, aoff..} and L1B {bbank, boff..};
    with `emit`, the sub-tiles leave as FP16 to the destination fields (as a DRAIN's; dack is (x, y))."""
    return _strict(encode_inst(Op.GEMM, gm=gm, gn=gn, nk=nk, anchor=anchor, acc=acc, aoff=aoff, boff=boff,
                               abank=abank, bbank=bbank, emit=emit,
                               **_destination(addr, dnode, dst, dbuf, dflags, dack, dmesh)), strict)


def drain(n: int, *, addr: int = 0, dnode: int = 0, dst: Coord = (0, 0), dbuf: int = 0, dflags: int = 0,
          dack: Coord = (0, 0), fuse: int = 0, dmesh: int = 0, strict: bool = True) -> int:
    """DRAIN payload: n sub-tiles to memory (dnode 0) or to node `dst` (dnode 1); dack is (x, y); `fuse`
    waits for n sub-tiles emitted by the GEMMs before it and sends nothing itself."""
    return _strict(encode_inst(Op.DRAIN, n=n, fuse=fuse, **_destination(addr, dnode, dst, dbuf, dflags, dack,
                                                                         dmesh)), strict)
