"""Every bit of a staged instruction flit: its field, and whether the hardware reads it (docs/flit_bits.md).

Why: a single-bit change to a staged flit must either change what the program
computes, be caught (a FAULT, a refusal, an await that never completes), or
touch a bit that provably cannot matter. Deciding which of the three a bit is
needs a map of every bit of every flit kind a compiled bundle stages, taken
from the normative spec (protocol.md, units.md) and, where it is silent, from
the upstream RTL file named in ``source``. This module is that map; it reads
only the flit itself (and, for a vector IMEM word, whether it is a VSETI's
immediate), never a run. tb/fuzz/flit_damage.py flips the bits and checks the
map against the models.

Classes of a bit (:class:`Use`):

* ``READ``: the unit reads it and a change can change what the program does;
* ``IGNORED``: the receiving unit never reads it (a bit outside every field of
  its instruction, or a field its opcode does not use);
* ``OVERRIDDEN``: the loader or the dispatcher replaces it before the unit sees
  it (dst and src, the type bits the loader's OR sets, ``last`` on a kick's
  final flit);
* ``ECHOED``: the unit reads it only to send it back in the completion (txn):
  the host reads NODE_STATUS count and valid, never the echo (units.md §H.3).

Whether the *program* uses what a read bit writes (an IMEM word never fetched,
a descriptor never walked) is not a property of the flit: models/bundle/flit_usage.py
decides that from the whole plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from models.cluster.isa import ADDR_HIGH, ADDR_LOW, INST_FIELDS, Op as MgOp, decode_inst
from models.noc.flit import FIELDS as FLIT_FIELDS
from models.vector import isa

__all__ = ["Use", "Field", "header_fields", "mg_fields", "vc_fields", "word_fields", "flit_kind",
           "check_cover", "fields_of", "FLIT_BITS"]

FLIT_BITS = 288
LOADER_TYPE = 5  # the loader ORs header(type 5, txn 0, last, dst 0, src 0) into every staged payload (units.md §H.2)


class Use(Enum):
    READ = "read"
    IGNORED = "ignored"
    OVERRIDDEN = "overridden"
    ECHOED = "echoed"


@dataclass(frozen=True)
class Field:
    """Bits [msb:lsb] of the 288-bit flit: a name, how the hardware uses them, and the section that says so."""

    name: str
    msb: int
    lsb: int
    use: Use
    source: str

    def bits(self) -> range:
        return range(self.lsb, self.msb + 1)


H2 = "units.md §H.2 (the loader's OR)"
H4 = "units.md §H.4, protocol.md §5 (the dispatcher rewrites dst and src)"
CU_BASE = "protocol.md §1; upstream noc/endpoint/noc_cu_base.v reads src, txn and last of a CU_INST"
V2 = "units.md V.2 (upstream vector/vec_cu.v decodes op, addr/ad/fld, value, word only)"
C1 = "protocol.md §6, units.md C.1 (upstream matmul/mx_cluster_cu.v)"

def header_fields(final: bool) -> list[Field]:
    """The header of a staged flit (its positions: models/noc/flit.py FIELDS); `final`: it is the last flit of
    its kick (the loader sets ``last``)."""
    at = FLIT_FIELDS
    out = [Field(f"hdr.{n}", at[n].msb, at[n].lsb, Use.OVERRIDDEN, H4) for n in ("dst_x", "dst_y", "src_x", "src_y")]
    ty = at["type"]
    for bit in range(ty.msb, ty.lsb - 1, -1):  # type: a bit the loader's OR sets cannot be cleared by the bundle
        forced = LOADER_TYPE >> (bit - ty.lsb) & 1
        out.append(Field(f"hdr.type[{bit - ty.lsb}]", bit, bit, Use.OVERRIDDEN if forced else Use.READ,
                         H2 if forced else "protocol.md §1: a unit drops a type it does not consume"))
    out.append(Field("hdr.txn", at["txn"].msb, at["txn"].lsb, Use.ECHOED,
                     CU_BASE + "; units.md §H.3: the host polls count and valid"))
    out.append(Field("hdr.last", at["last"].msb, at["last"].lsb, Use.OVERRIDDEN if final else Use.READ,
                     H2 if final else CU_BASE + ": BATCH_COMPLETE instead of INST_COMPLETE (no credit back)"))
    out.append(Field("hdr.rsvd", at["rsvd"].msb, at["rsvd"].lsb, Use.IGNORED, CU_BASE))
    return out


# ---------------------------------------------------------------- cluster CU_INST (protocol.md §6, units.md C)
_DEST = ("addr", "dnode", "dst_x", "dst_y", "dbuf", "dflags", "dack_y", "dack_x", "dmesh", "dfin")
_NODE_ONLY = frozenset({"dst_x", "dst_y", "dbuf", "dflags", "dack_y", "dack_x"})


def _mg_reads(op: int, f: dict[str, int]) -> frozenset[str]:
    """The fields opcode `op` reads, given the instruction's other fields (units.md C.2-C.6)."""
    if op == MgOp.FILL:
        return frozenset({"op", "addr", "n", "sel", "preq", "eoff", "fbank", "npeer"})  # peers: per byte below
    if op == MgOp.GEMM:
        base = {"op", "gm", "gn", "nk", "anchor", "acc", "aoff", "boff", "abank", "bbank", "emit"}
        if f["emit"]:
            base |= set(_DEST) - (set() if f["dnode"] else _NODE_ONLY)
        return frozenset(base)
    if op == MgOp.DRAIN:
        # fused or not, a DRAIN loads its own destination into the write port (C.6)
        return frozenset({"op", "n", "fuse", "dmesh"} | set(_DEST) - (set() if f["dnode"] else _NODE_ONLY))
    return frozenset({"op"})


A1 = "units.md C.7.3, quirk A1: e = (p + Ea + Eb - anchor - 6 + 63) mod 128, so anchor and anchor ^ 128 agree"
P4_FLAGS = "protocol.md §4: CU_DATA flags bit0 = signal_on_complete, others 0 (units.md V.12 reads flags[0])"
P5_WORD = "protocol.md §5: DRAM word = byte address >> 5 (the MAG reads addr[39:5])"
NODE_OFF = "protocol.md §6: a node drain's descriptor offset is addr[20:5]"


def _mg_addr(name: str, f: dict[str, int], read: bool, src: str) -> list[Field]:
    """The split address {[68:63], [251:218]}: a memory request reads addr[39:5], a node drain addr[20:5]."""
    lo = ADDR_LOW[1]  # flit bit of addr[0]
    if not read:
        return [Field(f"MG.{name}.addr", ADDR_LOW[0], lo, Use.IGNORED, src),
                Field(f"MG.{name}.addr_hi", ADDR_HIGH[0], ADDR_HIGH[1], Use.IGNORED, src)]
    node = f["op"] != MgOp.FILL and f["dnode"]
    out = [Field(f"MG.{name}.addr[4:0]", lo + 4, lo, Use.IGNORED, NODE_OFF if node else P5_WORD)]
    if node:
        return out + [Field(f"MG.{name}.addr[20:5]", lo + 20, lo + 5, Use.READ, NODE_OFF),
                      Field(f"MG.{name}.addr[33:21]", ADDR_LOW[0], lo + 21, Use.IGNORED, NODE_OFF),
                      Field(f"MG.{name}.addr_hi", ADDR_HIGH[0], ADDR_HIGH[1], Use.IGNORED, NODE_OFF)]
    return out + [Field(f"MG.{name}.addr[33:5]", ADDR_LOW[0], lo + 5, Use.READ, P5_WORD),
                  Field(f"MG.{name}.addr_hi", ADDR_HIGH[0], ADDR_HIGH[1], Use.READ, src)]


def mg_fields(payload: int) -> list[Field]:
    """The payload bits [255:0] of a cluster CU_INST, by field, read or ignored under its opcode."""
    f = decode_inst(payload)
    reads = _mg_reads(f["op"], f)
    name = MgOp(f["op"]).name if f["op"] in set(MgOp) else f"op{f['op']}"
    src = C1 + ("; C.6: DRAIN does not read anchor" if f["op"] == MgOp.DRAIN else "")
    out: list[Field] = []
    for fname, (msb, lsb) in INST_FIELDS.items():
        if fname == "peers" and f["op"] == MgOp.FILL:  # peer k is read when k < npeer (C.3)
            for k in range(3):
                use = Use.READ if k < f["npeer"] else Use.IGNORED
                out.append(Field(f"MG.{name}.peer{k}", lsb + 8 * k + 7, lsb + 8 * k, use, C1 + ", C.3: npeer bytes"))
            continue
        if fname == "anchor" and fname in reads:  # the conversion's exponent is taken modulo 128 (C.7.3, quirk A1)
            out += [Field(f"MG.{name}.anchor[7]", msb, msb, Use.IGNORED, A1),
                    Field(f"MG.{name}.anchor[6:0]", msb - 1, lsb, Use.READ, src)]
            continue
        if fname == "dflags" and fname in reads:  # carried into the CU_DATA descriptor, whose receiver reads [0]
            out += [Field(f"MG.{name}.dflags[7:1]", msb, lsb + 1, Use.IGNORED, P4_FLAGS),
                    Field(f"MG.{name}.dflags[0]", lsb, lsb, Use.READ, P4_FLAGS)]
            continue
        out.append(Field(f"MG.{name}.{fname}", msb, lsb, Use.READ if fname in reads else Use.IGNORED, src))
    out += _mg_addr(name, f, "addr" in reads, src)
    out.append(Field(f"MG.{name}.unused", ADDR_HIGH[1] - 1, 0, Use.IGNORED, C1 + ": no field below bit 63"))
    return out


# ---------------------------------------------------------------- vector core CU_INST (units.md V.2, V.4)
V4 = "units.md V.4 (upstream vector/vec_core.v)"


def _alu_word(w: isa.Word, pre: str) -> list[Field]:
    """An ALU word (00..11) in FLAT mode: selectors always checked (V.4); a register field only as its operand
    is read; a K selector reads its field mod 4; vd unless a compare; pr only under a predicate."""
    cmp = w.op in isa.CMP_OPS
    reads = {"a": True, "b": w.op in isa.A_B_OPS | isa.A_B_C_OPS, "c": w.op in isa.A_C_OPS | isa.A_B_C_OPS}
    out = [_w(pre, "op", Use.READ, V4)]
    for sel, opnd in (("sa", "a"), ("sb", "b"), ("sc", "c")):
        msb = W[sel][0]
        if reads[opnd]:
            out.append(Field(f"{pre}.{sel}", msb, msb - 1, Use.READ, V4 + ": all three selectors are checked"))
        else:  # an operand the op does not read: its selector matters only as C (F_CHAIN in FLAT, V.10)
            out += _only_value(f"{pre}.{sel}", msb, (w.raw >> (msb - 1)) & 3, isa.SRC_C,
                               f"units.md V.4, V.10: {w.name} reads no {opnd}; its selector faults only as C")
    out.append(_w(pre, "vd", Use.IGNORED if cmp else Use.READ, "units.md V.8: a compare ignores vd"))
    for opnd, sel, reg in (("a", w.sa, "va"), ("b", w.sb, "vb"), ("c", w.sc, "vc")):
        msb = W[reg][0]
        if not reads[opnd]:
            out.append(Field(f"{pre}.{reg}", msb, msb - 3, Use.IGNORED, f"units.md V.6.2: {w.name} reads no {opnd}"))
        elif sel == isa.SRC_K:
            out.append(Field(f"{pre}.{reg}[3:2]", msb, msb - 1, Use.IGNORED, "units.md V.4: K reads the field mod 4"))
            out.append(Field(f"{pre}.{reg}[1:0]", msb - 2, msb - 3, Use.READ, V4))
        else:
            out.append(Field(f"{pre}.{reg}", msb, msb - 3, Use.READ, V4))
    out.append(_w(pre, "pr", Use.READ if cmp or w.pm else Use.IGNORED, "units.md V.4: pr under pm != 0"))
    out.append(_w(pre, "pm", Use.IGNORED if cmp else Use.READ, "units.md V.8: a compare ignores pm"))
    out.append(Field(f"{pre}.unused", 0, 0, Use.IGNORED, V4 + ": [0] unused"))
    return out


def _only_value(name: str, msb: int, value: int, special: int, why: str) -> list[Field]:
    """A 2-bit field whose only effect is whether it equals `special`: a bit is read when flipping it makes
    or unmakes that value."""
    out = []
    for b in (1, 0):
        read = value == special or value ^ (1 << b) == special
        out.append(Field(f"{name}[{b}]", msb - 1 + b, msb - 1 + b, Use.READ if read else Use.IGNORED, why))
    return out


# The fields (isa.WORD_FIELDS) each non-ALU opcode reads; every other bit of the word is ignored (V.4, V.8, V.9,
# V.11).
_WORD_READS: dict[int, tuple[str, ...]] = {
    isa.OP_VCVT: ("dt", "vd", "va"),
    isa.OP_VRED: ("vd", "va", "vb", "kind", "pr"),
    isa.OP_VLD: ("dt", "ad", "vd", "off"),
    isa.OP_VST: ("dt", "ad", "vd", "off"),
    isa.OP_VBCAST: ("sa", "vd", "va"),
    isa.OP_VSHUF: ("vd", "va", "vb"),
    isa.OP_VSETVL: ("va",),
    isa.OP_VSETMODE: ("mode",),
    isa.OP_VLOOP: ("va", "vb"),
    isa.OP_VBAR: (),
    isa.OP_VHALT: (),
    isa.OP_VFILL: ("ad", "start"),
}
W = isa.WORD_FIELDS


def _w(pre: str, name: str, use: Use, source: str) -> Field:
    """Word field `name` (its bits from isa.WORD_FIELDS) of the word named `pre`."""
    msb, lsb = W[name]
    return Field(f"{pre}.{name}", msb, lsb, use, source)


def _other_word(w: isa.Word, pre: str) -> list[Field]:
    special: list[Field] = []
    if w.op == isa.OP_VSETI:  # sa == 3 writes K3, else S[vd] (V.8): only whether sa is 3 is read
        special = _only_value(f"{pre}.sa", W["sa"][0], w.sa, isa.SRC_K,
                              "units.md V.8: VSETI reads only whether sa == 3")
        reads: tuple[str, ...] = ("vd",) if w.sa != isa.SRC_K else ()
    elif w.op in (isa.OP_VLD, isa.OP_VST):  # an L1 walk keeps addr[8:0] (V.3): off[13:9] adds a multiple of 512
        msb, lsb = W["off"]
        special = [Field(f"{pre}.off[13:9]", msb, lsb + 9, Use.IGNORED, "units.md V.3: L1 walks use addr[8:0], "
                                                                         "wrapping modulo 512"),
                   Field(f"{pre}.off[8:0]", lsb + 8, lsb, Use.READ, V4)]
        reads = ("dt", "ad", "vd")
    elif w.op == isa.OP_VDRAIN:  # node form ir[24] (V.4, V.11)
        reads = ("node", "ad", "start") + (("signal", "dst_x", "dst_y", "buf") if w.node else ())
    elif w.op == isa.OP_VRED and w.kind not in (isa.RedKind.SUMSQ, isa.RedKind.DOT, isa.RedKind.EXPSUM):
        reads = tuple(r for r in _WORD_READS[w.op] if r != "vb")  # vb: SUMSQ, DOT, EXPSUM only (V.9)
    else:
        reads = _WORD_READS[w.op]
    out = [_w(pre, "op", Use.READ, V4)] + [_w(pre, n, Use.READ, V4) for n in reads]
    out += special
    covered = {b for f in out for b in f.bits()}
    bit = W["op"][1] - 1  # below the opcode
    while bit >= 0:  # the gaps, as runs of ignored bits
        if bit in covered:
            bit -= 1
            continue
        top = bit
        while bit >= 0 and bit not in covered:
            bit -= 1
        out.append(Field(f"{pre}.unused[{top}:{bit + 1}]", top, bit + 1, Use.IGNORED,
                         f"units.md V.4/V.8: {w.name} reads no other bit"))
    return out


def word_fields(word: int, immediate: bool) -> list[Field]:
    """The 32 bits of one IMEM word (payload [31:0]): an instruction by its opcode, or a VSETI immediate."""
    if immediate:
        return [Field("VC.IMEM.imm[23:0]", 23, 0, Use.READ, "units.md V.8: VSETI's immediate is [23:0]"),
                Field("VC.IMEM.imm[31:24]", 31, 24, Use.IGNORED, "units.md V.8: VSETI's immediate is [23:0]")]
    w = isa.word_of(word)
    pre = f"VC.IMEM.{w.name}"
    return _alu_word(w, pre) if w.op <= isa.ALU_LAST else _other_word(w, pre)


def vc_fields(payload: int, immediate: bool = False) -> list[Field]:
    """The payload bits [255:0] of a vector-core CU_INST (units.md V.2); `immediate`: an IMEM flit that writes a
    VSETI's immediate word."""
    op = payload >> 252
    out = [Field("VC.op", 255, 252, Use.READ, V2)]
    if op == isa.INST_IMEM:
        out += [Field("VC.IMEM.addr", 251, 243, Use.READ, V2),
                Field("VC.IMEM.unused", 242, 32, Use.IGNORED, V2)]
        out += word_fields(payload & 0xFFFF_FFFF, immediate)
    elif op == isa.INST_DESC:
        fld = (payload >> 246) & 7
        what = "base" if fld == 0 else f"dim{fld - 1}" if fld <= 4 else "none"
        out += [Field("VC.DESC.ad", 251, 249, Use.READ, V2), Field("VC.DESC.fld", 248, 246, Use.READ, V2)]
        if fld == 0:
            out.append(Field("VC.DESC.base[33:0]", 245, 212, Use.READ, V2))
        elif fld <= 4:
            out += [Field(f"VC.DESC.{what}.stride", 245, 228, Use.READ, V2 + ": stride = value[33:16]"),
                    Field(f"VC.DESC.{what}.bound", 227, 212, Use.READ, V2 + ": bound = value[15:0]")]
        else:
            out.append(Field("VC.DESC.value (fld 5..7)", 245, 212, Use.IGNORED, V2 + ": fld 5..7 no effect"))
        out.append(Field("VC.DESC.unused", 211, 69, Use.IGNORED, V2))
        out.append(Field("VC.DESC.base[39:34]" if fld == 0 else f"VC.DESC.value[39:34] ({what})", 68, 63,
                         Use.READ if fld == 0 else Use.IGNORED, V2 + ": [68:63] ignored for dimensions"))
        out.append(Field("VC.DESC.unused", 62, 0, Use.IGNORED, V2))
    elif op == isa.INST_RUN:
        out += [Field("VC.RUN.pc", 251, 243, Use.READ, V2), Field("VC.RUN.unused", 242, 0, Use.IGNORED, V2)]
    else:
        out.append(Field(f"VC.op{op}.payload", 251, 0, Use.IGNORED, V2 + ": ops 0, 4..15 have no effect"))
    return out


def flit_kind(unit: str, payload: int, immediate: bool = False) -> str:
    """The flit's kind for the tables: 'MG FILL', 'VC IMEM', 'VC IMEM imm', 'VC DESC', 'VC RUN', ..."""
    op = (payload >> 252) & 0xF
    if unit == "MG":
        return f"MG {MgOp(op).name}" if op in set(MgOp) else f"MG op{op}"
    name = {isa.INST_IMEM: "IMEM", isa.INST_DESC: "DESC", isa.INST_RUN: "RUN"}.get(op, f"op{op}")
    return f"VC {name}{' imm' if immediate else ''}"


def check_cover(fields: list[Field]) -> list[Field]:
    """`fields` if they cover bits 0..287 exactly once each; else ValueError naming the bits (a table bug)."""
    seen: dict[int, str] = {}
    for f in fields:
        for b in f.bits():
            if b in seen:
                raise ValueError(f"flit bit {b} is in both {seen[b]} and {f.name}")
            seen[b] = f.name
    missing = sorted(set(range(FLIT_BITS)) - set(seen))
    if missing:
        raise ValueError(f"flit bits {missing[:8]}... are in no field")
    return fields


def fields_of(unit: str, flit: int, final: bool, immediate: bool = False) -> list[Field]:
    """Every bit of one staged flit of a kick to a unit of kind `unit` ('MG' or 'VC'), by field."""
    payload = flit & ((1 << 256) - 1)
    body = mg_fields(payload) if unit == "MG" else vc_fields(payload, immediate)
    return check_cover(header_fields(final) + body)
