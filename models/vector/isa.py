"""The vector core's fixed instruction set: opcodes, word fields and encoders.

Everything here is fixed protocol (units.md V.2, V.4, V.8, V.9, V.10, V.11):
the 32 program-word opcodes, the ALU / memory / VCVT / node-VDRAIN / bare word
forms, the CU_INST envelope (IMEM, DESC, RUN) and the fault codes. The encoders
refuse a value that does not fit its field with one line naming the field, its
limit and the value, before anything reaches a simulator. Nothing in this
module executes anything (models.vector.core does).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from enum import IntEnum
from numbers import Integral
from types import MappingProxyType
from typing import Mapping

# ---------------------------------------------------------------- sizes
IMEM_WORDS = 512
L1_WORDS = 512
LANES = 16
VL_MAX = 128
N_VREGS = 16
N_SREGS = 16
N_PREGS = 4
N_DESC = 8
MAX_WALK = 256  # F_LEN above this many VFILL / VDRAIN walk elements
CU_TYPE = 0x5643  # 'VC'
WORD_MASK = (1 << 256) - 1
ADDR_BITS = 40
ADDR_MASK = (1 << ADDR_BITS) - 1
E8_MASK = 0xFFFFFF

# ---------------------------------------------------------------- opcodes (V.8)
OPCODES: Mapping[str, int] = MappingProxyType({
    "VMOV": 0x00, "VNEG": 0x01, "VABS": 0x02, "VADD": 0x03, "VSUB": 0x04, "VMUL": 0x05,
    "VFMA": 0x06, "VFNMA": 0x07, "VMAX": 0x08, "VMIN": 0x09, "VSEL": 0x0A, "VCMPLT": 0x0B,
    "VCMPGT": 0x0C, "VCMPEQ": 0x0D, "VEXP2": 0x0E, "VLOG2": 0x0F, "VINV": 0x10, "VRSQRT": 0x11,
    "VCVT": 0x12, "VRED": 0x13, "VLD": 0x14, "VST": 0x15, "VBCAST": 0x16, "VSHUF": 0x17,
    "VSETVL": 0x18, "VSETMODE": 0x19, "VSETI": 0x1A, "VLOOP": 0x1B, "VBAR": 0x1C, "VFILL": 0x1D,
    "VDRAIN": 0x1E, "VHALT": 0x1F,
})
OPNAMES: Mapping[int, str] = MappingProxyType({v: k for k, v in OPCODES.items()})
ALU_LAST = 0x11  # opcodes 0x00..0x11 are lane ALU operations
CMP_OPS = frozenset({0x0B, 0x0C, 0x0D})
UNARY_OPS = frozenset({0x00, 0x01, 0x02, 0x0E, 0x0F, 0x10, 0x11})  # read a only
A_C_OPS = frozenset({0x03, 0x04})  # VADD, VSUB: a and c
A_B_OPS = frozenset({0x05, 0x08, 0x09, 0x0B, 0x0C, 0x0D})  # VMUL, VMAX, VMIN, compares: a and b
A_B_C_OPS = frozenset({0x06, 0x07, 0x0A})  # VFMA, VFNMA, VSEL

OP_VCVT, OP_VRED, OP_VLD, OP_VST, OP_VBCAST, OP_VSHUF = 0x12, 0x13, 0x14, 0x15, 0x16, 0x17
OP_VSETVL, OP_VSETMODE, OP_VSETI, OP_VLOOP, OP_VBAR, OP_VFILL, OP_VDRAIN, OP_VHALT = range(0x18, 0x20)
MEMORY_OPS = frozenset({OP_VLD, OP_VST, OP_VFILL, OP_VDRAIN})

# source selectors (V.4)
SRC_V, SRC_S, SRC_C, SRC_K = 0, 1, 2, 3
SRC_LETTER = "vsck"

# dtypes of the memory form and of VCVT
DT_FP16, DT_FP32 = 1, 2  # VLD / VST
DT_CVT_ROUND, DT_CVT_RAW = 1, 2  # VCVT: FP16 round trip / raw copy
DT_NAMES = {DT_FP16: "FP16", DT_FP32: "FP32"}


class Mode(IntEnum):
    """VSETMODE values (V.5)."""

    FLAT = 0
    D2 = 1
    D4 = 2
    TREE = 3


CHAIN_DEPTH = {Mode.FLAT: 1, Mode.D2: 2, Mode.D4: 4}


class RedKind(IntEnum):
    """VRED kinds, vc[2:0] (V.9)."""

    SUM = 0
    MAX = 1
    MIN = 2
    SUMSQ = 3
    DOT = 4
    EXPSUM = 5
    ANY = 6
    ALL = 7


class Fault(IntEnum):
    """Fault codes (V.10); the RUN retires as CU_SIGNAL FAULT with arg = the code."""

    F_DTYPE = 1
    F_VSRC = 2
    F_CHAIN = 3
    F_OPCODE = 4
    F_LEN = 5
    F_LOOP = 6
    F_VL = 7
    F_REDVL = 8
    F_CUDATA = 9


FAULT_NAMES: Mapping[int, str] = MappingProxyType({f.value: f.name for f in Fault})

# E8M15 constants K0..K2 (K3 is set by VSETI)
K_CONST = (0x000000, 0x3F8000, 0xBF8000)
E8_ONE = 0x3F8000

# ---------------------------------------------------------------- CU_INST envelope (V.2)
INST_IMEM, INST_DESC, INST_RUN = 1, 2, 3
FLD_BASE = 0  # DESC fld 0: the 40-bit base; fld 1..4: dimension fld-1; fld 5..7: no effect
DESC_HI_SHIFT, DESC_LO_SHIFT = 63, 212  # value = {payload[68:63], payload[245:212]}
STRIDE_MIN, STRIDE_MAX = -(1 << 17), (1 << 17) - 1
BOUND_MAX = 0xFFFF


def _fit(what: str, field: str, value: int, lo: int, hi: int, where: str) -> int:
    """`value` as an int within lo..hi, or a ValueError naming the field, its limit and the value."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{what}: {field} must be an integer, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{what}: {field} = {value} is outside {lo}..{hi} ({where})")
    return value


# ---------------------------------------------------------------- word fields
# Every field of a 32-bit program word, [msb, lsb] (units.md V.4): Word decodes by it, and
# models/bundle/flit_bits.py maps a staged word's bits by it. Forms overlap (dt/ad over sa..sc, node over sb).
WORD_FIELDS: Mapping[str, tuple[int, int]] = MappingProxyType({
    "op": (31, 27), "sa": (26, 25), "sb": (24, 23), "sc": (22, 21), "vd": (20, 17), "va": (16, 13),
    "vb": (12, 9), "vc": (8, 5), "pr": (4, 3), "pm": (2, 1),  # ALU form
    "dt": (26, 24), "ad": (23, 21), "off": (13, 0), "start": (8, 0),  # memory form (off is signed)
    "signal": (25, 25), "node": (24, 24), "dst_x": (20, 17), "dst_y": (16, 13), "buf": (12, 9),  # VDRAIN node
    "kind": (7, 5), "mode": (14, 13),  # VRED's kind = vc[2:0], VSETMODE's mode = va[1:0]
})


def _field(name: str) -> cached_property:
    """Word's property for field `name` of WORD_FIELDS: the bits, unsigned, worked out on first reading."""
    msb, lsb = WORD_FIELDS[name]
    mask = (1 << (msb - lsb + 1)) - 1
    return cached_property(lambda self: (self.raw >> lsb) & mask)


@dataclass(frozen=True)
class Word:
    """Every field of one 32-bit program word, decoded once (each form reads its own subset).

    A field is worked out on first reading and kept on the (frozen) instance: the vector core takes its
    words from ``word_of``, one instance per distinct word, so a loop body decodes once."""

    raw: int

    op = _field("op")

    @cached_property
    def name(self) -> str:
        return OPNAMES[self.op]

    # ALU form
    sa, sb, sc = _field("sa"), _field("sb"), _field("sc")
    vd, va, vb, vc = _field("vd"), _field("va"), _field("vb"), _field("vc")
    pr, pm = _field("pr"), _field("pm")
    # memory form
    dt, ad = _field("dt"), _field("ad")

    @cached_property
    def off(self) -> int:
        """Signed 14-bit offset of VLD / VST."""
        o = self.raw & 0x3FFF
        return o - ((o & 0x2000) << 1)

    l1_start = _field("start")  # ir[8:0]: the L1 start word of VFILL and VDRAIN (V.11)

    # VDRAIN node form (ir[24] = 1)
    node, signal = _field("node"), _field("signal")
    dst_x, dst_y, buf = _field("dst_x"), _field("dst_y"), _field("buf")

    @cached_property
    def selectors(self) -> tuple[int, int, int]:
        return self.sa, self.sb, self.sc

    @cached_property
    def kind(self) -> int:
        """VRED kind = vc[2:0] (vc[3] is ignored, so 8 acts as SUM)."""
        return self.vc & 7

    @cached_property
    def mode(self) -> int:
        """VSETMODE's mode = va[1:0] = ir[14:13]."""
        return self.va & 3


word_of = lru_cache(maxsize=1 << 12)(Word)
"""The Word of a raw 32-bit program word, one shared instance per value (Word is frozen)."""


# ---------------------------------------------------------------- encoders
def _opcode(op: str | int) -> int:
    if isinstance(op, int):
        return _fit("word", "opcode", op, 0, 0x1F, "5-bit field [31:27]")
    try:
        return OPCODES[op.upper()]
    except KeyError:
        raise ValueError(f"unknown mnemonic {op!r}; known: {', '.join(OPCODES)}") from None


def encode_alu(op: str | int, vd: int = 0, va: int = 0, vb: int = 0, vc: int = 0, sa: int = SRC_V,
               sb: int = SRC_V, sc: int = SRC_V, pr: int = 0, pm: int = 0, bit0: int = 0) -> int:
    """An ALU-form word: op[31:27] sa[26:25] sb[24:23] sc[22:21] vd[20:17] va[16:13] vb[12:9] vc[8:5]
    pr[4:3] pm[2:1] (bit 0 unused)."""
    code = _opcode(op)
    name = OPNAMES[code]
    w = code << 27
    w |= _fit(name, "sa", sa, 0, 3, "2-bit selector [26:25]") << 25
    w |= _fit(name, "sb", sb, 0, 3, "2-bit selector [24:23]") << 23
    w |= _fit(name, "sc", sc, 0, 3, "2-bit selector [22:21]") << 21
    w |= _fit(name, "vd", vd, 0, 15, "4-bit field [20:17]") << 17
    w |= _fit(name, "va", va, 0, 15, "4-bit field [16:13]") << 13
    w |= _fit(name, "vb", vb, 0, 15, "4-bit field [12:9]") << 9
    w |= _fit(name, "vc", vc, 0, 15, "4-bit field [8:5]") << 5
    w |= _fit(name, "pr", pr, 0, 3, "2-bit field [4:3]") << 3
    w |= _fit(name, "pm", pm, 0, 3, "2-bit field [2:1]") << 1
    return w | _fit(name, "bit 0", bit0, 0, 1, "unused bit [0]")


def encode_mem(op: str | int, ad: int, off: int = 0, vd: int = 0, dt: int = 0) -> int:
    """A memory-form word: op[31:27] dt[26:24] ad[23:21] vd[20:17] off[13:0] (signed for VLD / VST).

    For VFILL / VDRAIN `off` is the L1 start word, ir[8:0] (0..511)."""
    code = _opcode(op)
    name = OPNAMES[code]
    w = code << 27 | _fit(name, "dt", dt, 0, 7, "3-bit field [26:24]") << 24
    w |= _fit(name, "ad", ad, 0, 7, "3-bit descriptor index [23:21]") << 21
    w |= _fit(name, "vd", vd, 0, 15, "4-bit field [20:17]") << 17
    if code in (OP_VFILL, OP_VDRAIN):
        return w | _fit(name, "L1 start word", off, 0, L1_WORDS - 1, "9-bit field ir[8:0]")
    return w | (_fit(name, "off", off, -(1 << 13), (1 << 13) - 1, "signed 14-bit field [13:0]") & 0x3FFF)


def encode_vdrain_node(ad: int, start: int, dst: tuple[int, int], buf: int = 0, signal: int = 0) -> int:
    """VDRAIN in the node form (ir[24] = 1): signal[25], dst_x[20:17], dst_y[16:13], buf[12:9], start[8:0]."""
    w = OP_VDRAIN << 27 | 1 << 24 | _fit("VDRAIN", "signal", signal, 0, 1, "bit [25]") << 25
    w |= _fit("VDRAIN", "ad", ad, 0, 7, "3-bit descriptor index [23:21]") << 21
    w |= _fit("VDRAIN", "dst_x", dst[0], 0, 15, "4-bit field [20:17]") << 17
    w |= _fit("VDRAIN", "dst_y", dst[1], 0, 15, "4-bit field [16:13]") << 13
    w |= _fit("VDRAIN", "buf", buf, 0, 15, "4-bit field [12:9]") << 9
    return w | _fit("VDRAIN", "L1 start word", start, 0, L1_WORDS - 1, "9-bit field [8:0]")


def encode_vcvt(vd: int, va: int, dt: int) -> int:
    """VCVT: dt[26:24] (1 FP16 round trip, 2 raw copy), vd[20:17], va[16:13]."""
    return (OP_VCVT << 27 | _fit("VCVT", "dt", dt, 0, 7, "3-bit field [26:24]") << 24
            | _fit("VCVT", "vd", vd, 0, 15, "4-bit field [20:17]") << 17
            | _fit("VCVT", "va", va, 0, 15, "4-bit field [16:13]") << 13)


def encode_seti(value: int, *, sreg: int | None = None, k3: bool = False) -> list[int]:
    """VSETI and its immediate word: sa = 3 writes K3, otherwise S[vd] (V.8)."""
    if (sreg is None) == (not k3):
        raise ValueError("VSETI: name exactly one target, a scalar register (sreg=) or K3 (k3=True)")
    word = encode_alu(OP_VSETI, vd=0 if k3 else sreg, sa=SRC_K if k3 else SRC_V)
    return [word, _fit("VSETI", "immediate", value, 0, E8_MASK, "24-bit immediate in the next word's [23:0]")]


def encode_setvl(sreg: int) -> int:
    """VSETVL: VL = S[va] (raw 24-bit integer)."""
    return encode_alu(OP_VSETVL, va=sreg)


def encode_setmode(mode: str | int) -> int:
    """VSETMODE: mode = va[1:0] = ir[14:13]."""
    m = Mode[mode.upper()] if isinstance(mode, str) and mode.upper() in Mode.__members__ else mode
    if isinstance(m, str):
        raise ValueError(f"VSETMODE: mode {mode!r} is not one of {', '.join(Mode.__members__)}")
    return encode_alu(OP_VSETMODE, va=_fit("VSETMODE", "mode", int(m), 0, 3, "2-bit field ir[14:13]"))


def encode_vloop(count_sreg: int, body: int) -> int:
    """VLOOP: count = S[va], body = the vb words after it (0..15)."""
    return encode_alu(OP_VLOOP, va=count_sreg, vb=_fit("VLOOP", "body length", body, 0, 15, "4-bit field vb"))


def encode_vred(kind: int | str, sd: int, va: int = 0, vb: int = 0, pr: int = 0) -> int:
    """VRED: S[vd] = reduction of kind vc[2:0] over V[va] (and V[vb] for DOT / SUMSQ; EXPSUM's vector
    destination is vb)."""
    k = RedKind[kind.upper()] if isinstance(kind, str) else RedKind(kind)
    return encode_alu(OP_VRED, vd=sd, va=va, vb=vb, vc=int(k), pr=pr)


def encode_vbcast(dst: int, src: int, *, to_vector: bool) -> int:
    """VBCAST: to_vector (sa = 1): V[dst] = S[src] in every lane; else S[dst] = V[src][0]."""
    return encode_alu(OP_VBCAST, vd=dst, va=src, sa=SRC_S if to_vector else SRC_V)


def encode_vshuf(vd: int, va: int, shift_sreg: int) -> int:
    """VSHUF: lane i of V[vd] = lane (i + S[vb][3:0]) mod 16 of V[va], chunk by chunk."""
    return encode_alu(OP_VSHUF, vd=vd, va=va, vb=shift_sreg)


def encode_bare(op: str | int) -> int:
    """VBAR / VHALT (no other field is read)."""
    code = _opcode(op)
    if code not in (OP_VBAR, OP_VHALT):
        raise ValueError(f"{OPNAMES[code]} is not a bare word (only VBAR and VHALT are)")
    return code << 27


# ---------------------------------------------------------------- CU_INST payloads (V.2)
def imem_payload(addr: int, word: int) -> int:
    """IMEM: addr [251:243], word [31:0]."""
    _fit("IMEM", "addr", addr, 0, IMEM_WORDS - 1, "9-bit field [251:243]")
    _fit("IMEM", "word", word, 0, (1 << 32) - 1, "32-bit field [31:0]")
    return INST_IMEM << 252 | addr << 243 | word


def desc_payload(ad: int, fld: int, value: int) -> int:
    """DESC: ad [251:249], fld [248:246], value = {[68:63], [245:212]} (40 bits)."""
    _fit("DESC", "ad", ad, 0, N_DESC - 1, "3-bit field [251:249]")
    _fit("DESC", "fld", fld, 0, 7, "3-bit field [248:246]")
    _fit("DESC", "value", value, 0, ADDR_MASK, "40-bit value {[68:63], [245:212]}")
    return (INST_DESC << 252 | ad << 249 | fld << 246 | (value & ((1 << 34) - 1)) << DESC_LO_SHIFT
            | (value >> 34) << DESC_HI_SHIFT)


def desc_value(payload: int) -> int:
    """The 40-bit value of a DESC payload: {payload[68:63], payload[245:212]}."""
    return ((payload >> DESC_HI_SHIFT) & 0x3F) << 34 | (payload >> DESC_LO_SHIFT) & ((1 << 34) - 1)


def run_payload(pc: int) -> int:
    """RUN: pc [251:243]."""
    _fit("RUN", "pc", pc, 0, IMEM_WORDS - 1, "9-bit field [251:243]")
    return INST_RUN << 252 | pc << 243


def pack_dim(stride: int, bound: int) -> int:
    """A dimension's DESC value: stride = value[33:16] (18-bit two's complement), bound = value[15:0]."""
    _fit("DESC", "stride", stride, STRIDE_MIN, STRIDE_MAX, "18-bit two's complement value[33:16]")
    _fit("DESC", "bound", bound, 0, BOUND_MAX, "16-bit field value[15:0]; 0 reads as 1")
    return (stride & 0x3FFFF) << 16 | bound


def unpack_dim(value: int) -> tuple[int, int]:
    """(stride, bound) of a dimension's DESC value (bits [39:34] are ignored)."""
    stride = (value >> 16) & 0x3FFFF
    return stride - ((stride & 0x20000) << 1), value & 0xFFFF


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations", "dataclass",
                                                                                 "IntEnum", "Integral",
                                                                                 "Mapping", "MappingProxyType",
                                                                                 "cached_property", "lru_cache")]
