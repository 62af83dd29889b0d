"""Golden model of the vector core (rtl/units/vector_core.v), pure Python + numpy.

Three parts:

* the **assembler**: mnemonics -> 32-bit program words in the protocol's
  encodings (ALU form, memory form, VSETI + immediate word), with refusals
  that name the field and its limit; ``disassemble`` goes back;
* **descriptors** and the CU_INST envelope (IMEM / DESC / RUN payloads, the
  packing of a dim's {stride, bound} and of a node target into DESC's 34-bit
  value);
* ``VectorCore``: the core's state and behaviour, untimed: it takes the flits
  the core receives in the order the core takes them and returns the flits it
  sends (completions included, as cu_base sends them), bit for bit. Arithmetic
  and conversions come from models.numerics.

docs/vector_core.md states every semantic decision; this module and the RTL
implement the same ones.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from models.cu_base import (
    CU_DATA_MAX_LEN, SigCode, completion, cu_data_bursts, cu_data_fields, cu_inst, signal_payload)
from models.flit import FIELDS, FlitType, make_flit

Coord = tuple[int, int]

# ---------------------------------------------------------------- constants
L1_WORDS = 512
IMEM_WORDS = 512
LANES = 16
VL_MAX = 128
N_VREGS = 16
N_SREGS = 16
N_DESC = 8
MAX_WALK = 256  # F_LEN above this many VFILL/VDRAIN entries
CU_TYPE = 0x5643  # 'VC'
MAG_DEFAULT: Coord = (0, 1)

OPCODES: dict[str, int] = {
    "VMOV": 0x00, "VNEG": 0x01, "VABS": 0x02, "VADD": 0x03, "VSUB": 0x04, "VMUL": 0x05,
    "VFMA": 0x06, "VFNMA": 0x07, "VMAX": 0x08, "VMIN": 0x09, "VSEL": 0x0A, "VCMPLT": 0x0B,
    "VCMPGT": 0x0C, "VCMPEQ": 0x0D, "VEXP2": 0x0E, "VLOG2": 0x0F, "VINV": 0x10, "VRSQRT": 0x11,
    "VCVT": 0x12, "VRED": 0x13, "VLD": 0x14, "VST": 0x15, "VBCAST": 0x16, "VSHUF": 0x17,
    "VSETVL": 0x18, "VSETMODE": 0x19, "VSETI": 0x1A, "VLOOP": 0x1B, "VBAR": 0x1C, "VFILL": 0x1D,
    "VDRAIN": 0x1E, "VHALT": 0x1F,
}
OPNAMES = {v: k for k, v in OPCODES.items()}

# Which operands each arithmetic opcode reads (a is always read).
READS_B = {"VMUL", "VFMA", "VFNMA", "VMAX", "VMIN"}
READS_C = {"VADD", "VSUB", "VFMA", "VFNMA"}
ALU_MAX_OPCODE = 0x10  # opcodes 00..10 are ALU form (the core's lanes)

# Source selectors
SRC_V, SRC_S, SRC_CHAIN, SRC_K = 0, 1, 2, 3
# dtypes of the memory form
DT_FP16, DT_FP32 = 1, 2
# VSETMODE modes
MODES = {"FLAT": 0, "D2": 1, "D4": 2, "TREE": 3}
# VSETI targets (field [26:25])
SETI_K3, SETI_S = 0, 1

# Fault codes (protocol section 6, plus F_RANGE, ours)
F_DTYPE, F_VSRC, F_CHAIN, F_OPCODE, F_LEN, F_LOOP, F_VL, F_REDVL, F_CUDATA = range(1, 10)
F_RANGE = 10
FAULT_NAMES = {1: "F_DTYPE", 2: "F_VSRC", 3: "F_CHAIN", 4: "F_OPCODE", 5: "F_LEN", 6: "F_LOOP",
               7: "F_VL", 8: "F_REDVL", 9: "F_CUDATA", 10: "F_RANGE"}

# CU_INST envelope opcodes
INST_IMEM, INST_DESC, INST_RUN = 1, 2, 3
FLD_BASE, FLD_TARGET = 0, 5

# E8M15 constants K0..K2
K_CONST = (0x000000, 0x3F8000, 0xBF8000)

# What rtl/units/vc_alu.v, vc_cvt16.v and vc_cvt32.v wire today. The model
# faults exactly where the RTL does (F_OPCODE / F_DTYPE) for what is not wired.
# What this model can compute (the arithmetic of models.numerics).
MODEL_OPS = frozenset({"VMOV", "VNEG", "VABS", "VADD", "VSUB", "VMUL", "VFMA", "VFNMA", "VMAX",
                       "VMIN", "VEXP2", "VINV"})
MODEL_DTYPES = frozenset({DT_FP16, DT_FP32})
RTL_WIRED_OPS = MODEL_OPS
RTL_WIRED_DTYPES = MODEL_DTYPES

WORD_MASK = (1 << 256) - 1
ADDR_MASK = (1 << 40) - 1


def _check(name: str, field_name: str, value: int, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{name}: {field_name} must be an integer, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}: {field_name} {value} is outside {lo}..{hi} ({what})")
    return value


# ================================================================ assembler
def encode_alu(op: str, vd: int = 0, va: int = 0, vb: int = 0, vc: int = 0,
               sa: int = SRC_V, sb: int = SRC_V, sc: int = SRC_V, pr: int = 0, pm: int = 0) -> int:
    """An ALU-form word: opcode[31:27] sa[26:25] sb[24:23] sc[22:21] vd[20:17]
    va[16:13] vb[12:9] vc[8:5] pr[4:3] pm[2:1]."""
    code = _opcode(op)
    w = code << 27
    w |= _check(op, "sa", sa, 0, 3, "2-bit selector sa[26:25]") << 25
    w |= _check(op, "sb", sb, 0, 3, "2-bit selector sb[24:23]") << 23
    w |= _check(op, "sc", sc, 0, 3, "2-bit selector sc[22:21]") << 21
    w |= _check(op, "vd", vd, 0, 15, "4-bit field vd[20:17]") << 17
    w |= _check(op, "va", va, 0, 15, "4-bit field va[16:13]") << 13
    w |= _check(op, "vb", vb, 0, 15, "4-bit field vb[12:9]") << 9
    w |= _check(op, "vc", vc, 0, 15, "4-bit field vc[8:5]") << 5
    w |= _check(op, "pr", pr, 0, 3, "2-bit field pr[4:3]") << 3
    w |= _check(op, "pm", pm, 0, 3, "2-bit field pm[2:1]") << 1
    return w


def encode_mem(op: str, ad: int, off: int = 0, vd: int = 0, dtype: int = 0) -> int:
    """A memory-form word: opcode[31:27] dtype[26:24] ad[23:21] vd[20:17] off[13:0] (signed)."""
    code = _opcode(op)
    w = code << 27
    w |= _check(op, "dtype", dtype, 0, 7, "3-bit field dtype[26:24]") << 24
    w |= _check(op, "ad", ad, 0, 7, "3-bit descriptor index ad[23:21]") << 21
    w |= _check(op, "vd", vd, 0, 15, "4-bit field vd[20:17]") << 17
    w |= _check(op, "off", off, -8192, 8191, "signed 14-bit field off[13:0]") & 0x3FFF
    return w


def encode_seti(value: int, target: int = SETI_K3, sreg: int = 0) -> list[int]:
    """VSETI: the word (target [26:25]: 0 K3, 1 S[vd]) and the 24-bit immediate word."""
    _check("VSETI", "target", target, 0, 1, "0 = K3, 1 = a scalar register")
    w = OPCODES["VSETI"] << 27 | target << 25 | _check("VSETI", "scalar register", sreg, 0, 15,
                                                         "4-bit field vd[20:17]") << 17
    return [w, _check("VSETI", "immediate", value, 0, (1 << 24) - 1, "24-bit immediate word [23:0]")]


def encode_setmode(mode: str | int) -> int:
    m = MODES.get(mode.upper()) if isinstance(mode, str) else mode
    if m is None:
        raise ValueError(f"VSETMODE: mode {mode!r} is not one of {', '.join(MODES)}")
    return OPCODES["VSETMODE"] << 27 | _check("VSETMODE", "mode", m, 0, 3, "2-bit field [26:25]") << 25


def _opcode(op: str) -> int:
    try:
        return OPCODES[op.upper()]
    except KeyError:
        raise ValueError(f"unknown mnemonic {op!r}; known: {', '.join(OPCODES)}") from None


def e8m15(x: float) -> int:
    """E8M15 pattern of a float (nearest even), for VSETI immediates."""
    from models.numerics import E8M15, encode
    return int(encode(float(x), E8M15))


_SRC_RE = re.compile(r"^([vskc])(\d+)$", re.I)
_MEM_RE = re.compile(r"^a(\d+)\s*(?:([+-])\s*(\d+|0x[0-9a-f]+))?$", re.I)
_SRC_KIND = {"v": SRC_V, "s": SRC_S, "c": SRC_CHAIN, "k": SRC_K}


def _src(op: str, name: str, text: str) -> tuple[int, int]:
    m = _SRC_RE.match(text.strip())
    if not m:
        raise ValueError(f"{op}: operand {name} {text!r} is not vN, sN, kN or cN")
    return _SRC_KIND[m.group(1).lower()], int(m.group(2))


def _vreg(op: str, name: str, text: str) -> int:
    m = _SRC_RE.match(text.strip())
    if not m or m.group(1).lower() != "v":
        raise ValueError(f"{op}: {name} {text!r} must be a vector register vN")
    return int(m.group(2))


def _memref(op: str, text: str) -> tuple[int, int]:
    m = _MEM_RE.match(text.strip())
    if not m:
        raise ValueError(f"{op}: {text!r} is not a descriptor reference An or An+off")
    off = int(m.group(3), 0) if m.group(3) else 0
    return int(m.group(1)), (-off if m.group(2) == "-" else off)


def _number(op: str, text: str) -> int:
    t = text.strip()
    if re.match(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?e[+-]?\d+)$", t, re.I):
        return e8m15(float(t))
    try:
        return int(t, 0)
    except ValueError:
        raise ValueError(f"{op}: immediate {text!r} is neither an integer nor a float") from None


def assemble_line(line: str) -> list[int]:
    """One instruction -> its word(s). Syntax (comments after '#' or ';'):

    ALU   ``VADD v1, v0, v0`` (vd, a, c); ``VMUL vd, a, b``; ``VFMA vd, a, b, c``;
          ``VMOV/VNEG/VABS/VEXP2/VINV vd, a``; ``VMAX/VMIN vd, a, b``; sources
          are vN, sN (scalar), kN (constant), cN (chain); a trailing ``?pN``
          (write where P[N] set) or ``!pN`` (where clear) predicates it
    mem   ``VLD v0, A1+3[, FP16|FP32]``, ``VST v1, A2+3[, FP16|FP32]``,
          ``VFILL A0+off``, ``VDRAIN A3+off`` (off = first L1 word)
    misc  ``VSETI 16`` (K3), ``VSETI s3, 1.5`` (a float is encoded as E8M15),
          ``VSETVL``, ``VSETMODE FLAT``, ``VBAR``, ``VHALT``
    """
    text = re.split(r"[#;]", line, maxsplit=1)[0].strip()
    if not text:
        return []
    parts = text.split(None, 1)
    op = parts[0].upper()
    args = [a.strip() for a in parts[1].split(",")] if len(parts) > 1 else []
    code = _opcode(op)
    if op in ("VLD", "VST"):
        if len(args) not in (2, 3):
            raise ValueError(f"{op}: expected 'vN, An+off[, FP16|FP32]', got {text!r}")
        vd = _vreg(op, "vd", args[0])
        ad, off = _memref(op, args[1])
        dt = {"FP16": DT_FP16, "FP32": DT_FP32}.get(args[2].upper() if len(args) == 3 else "FP16")
        if dt is None:
            raise ValueError(f"{op}: dtype {args[2]!r} is not FP16 or FP32")
        return [encode_mem(op, ad, off, vd, dt)]
    if op in ("VFILL", "VDRAIN"):
        if len(args) != 1:
            raise ValueError(f"{op}: expected 'An+off', got {text!r}")
        ad, off = _memref(op, args[0])
        return [encode_mem(op, ad, off)]
    if op == "VSETI":
        if len(args) == 1:
            return encode_seti(_number(op, args[0]))
        if len(args) == 2:
            tgt = args[0].strip().lower()
            if tgt == "k3":
                return encode_seti(_number(op, args[1]))
            kind, n = _src(op, "target", tgt)
            if kind != SRC_S:
                raise ValueError(f"{op}: target {args[0]!r} must be k3 or a scalar register sN")
            return encode_seti(_number(op, args[1]), SETI_S, n)
        raise ValueError(f"{op}: expected 'VSETI imm' or 'VSETI sN|k3, imm'")
    if op == "VSETMODE":
        if len(args) != 1:
            raise ValueError("VSETMODE: expected one mode (FLAT, D2, D4, TREE)")
        return [encode_setmode(args[0])]
    if op in ("VSETVL", "VBAR", "VHALT"):
        if args:
            raise ValueError(f"{op} takes no operands, got {text!r}")
        return [code << 27]
    if code > ALU_MAX_OPCODE and not args:
        return [code << 27]  # e.g. VLOOP / VRED with every field 0
    # ALU form (and the generic ALU-form syntax of the remaining opcodes)
    pm = pr = 0
    if args:
        last = args[-1].split()
        if len(last) == 2 and re.match(r"^[?!]p\d+$", last[1], re.I):
            args[-1] = last[0]
            pm = 1 if last[1][0] == "?" else 2
            pr = _check(op, "pr", int(last[1][2:]), 0, 3, "2-bit field pr[4:3]")
    shape = {"VMOV": 2, "VNEG": 2, "VABS": 2, "VEXP2": 2, "VINV": 2, "VLOG2": 2, "VRSQRT": 2,
             "VADD": 3, "VSUB": 3, "VMUL": 3, "VMAX": 3, "VMIN": 3, "VFMA": 4, "VFNMA": 4}.get(op, 4)
    if len(args) != shape:
        raise ValueError(f"{op}: expected {shape} operands (vd first), got {len(args)} in {text!r}")
    vd = _vreg(op, "vd", args[0])
    a = _src(op, "a", args[1])
    b = c = (SRC_V, 0)
    if op in READS_C and op not in READS_B:
        c = _src(op, "c", args[2])
    elif shape >= 3:
        b = _src(op, "b", args[2])
    if shape == 4:
        c = _src(op, "c", args[3])
    return [encode_alu(op, vd, a[1], b[1], c[1], a[0], b[0], c[0], pr, pm)]


def assemble(program: str | Iterable[str]) -> list[int]:
    """A program (text, or lines) -> words, in order."""
    lines = program.splitlines() if isinstance(program, str) else list(program)
    out: list[int] = []
    for n, line in enumerate(lines, 1):
        try:
            out.extend(assemble_line(line))
        except ValueError as exc:
            raise ValueError(f"line {n}: {exc}") from None
    if len(out) > IMEM_WORDS:
        raise ValueError(f"program of {len(out)} words does not fit the {IMEM_WORDS}-word IMEM")
    return out


def disassemble(word: int) -> str:
    """A readable form of one word (ALU or memory form by opcode)."""
    op = OPNAMES[(word >> 27) & 0x1F]
    if op in ("VLD", "VST", "VFILL", "VDRAIN"):
        off = word & 0x3FFF
        off -= (off & 0x2000) << 1
        ad, vd, dt = (word >> 21) & 7, (word >> 17) & 0xF, (word >> 24) & 7
        ref = f"A{ad}{off:+d}" if off else f"A{ad}"
        return f"{op} v{vd}, {ref}, dtype {dt}" if op in ("VLD", "VST") else f"{op} {ref}"
    if op in ("VSETVL", "VBAR", "VHALT", "VSETI", "VSETMODE"):
        return op
    f = lambda s, n: "vsck"[s] + str(n)  # noqa: E731
    sa, sb, sc = (word >> 25) & 3, (word >> 23) & 3, (word >> 21) & 3
    vd, va, vb, vc = (word >> 17) & 15, (word >> 13) & 15, (word >> 9) & 15, (word >> 5) & 15
    return f"{op} v{vd}, {f(sa, va)}, {f(sb, vb)}, {f(sc, vc)} pr={(word >> 3) & 3} pm={(word >> 1) & 3}"


# ================================================================ descriptors
def pack_dim(stride: int, bound: int) -> int:
    """A dim's DESC value: {stride[33:10] signed 24-bit, bound[9:0]} (bound 0 reads as 1)."""
    _check("DESC", "stride", stride, -(1 << 23), (1 << 23) - 1, "signed 24-bit field value[33:10]")
    _check("DESC", "bound", bound, 0, 1023, "10-bit field value[9:0]; 0 reads as 1")
    return (stride & 0xFFFFFF) << 10 | bound


def unpack_dim(value: int) -> tuple[int, int]:
    stride = (value >> 10) & 0xFFFFFF
    stride -= (stride & 0x800000) << 1
    return stride, value & 0x3FF


@dataclass(frozen=True)
class NodeTarget:
    """Where a VDRAIN on this descriptor goes instead of memory (DESC fld 5)."""

    dst: Coord
    buf: int = 0
    flags: int = 0
    ack: Coord = (0, 0)  # (x, y); (0, 0) = the receiver answers the source

    def value(self) -> int:
        """{node[33]=1, 0[32], buf[31:24], dst_y[23:20], dst_x[19:16], flags[15:8], ack_y[7:4], ack_x[3:0]}."""
        for name, v in (("dst x", self.dst[0]), ("dst y", self.dst[1]), ("ack x", self.ack[0]),
                        ("ack y", self.ack[1])):
            _check("DESC target", name, v, 0, 15, "4-bit coordinate")
        _check("DESC target", "buf", self.buf, 0, 255, "8-bit field [31:24]")
        _check("DESC target", "flags", self.flags, 0, 255, "8-bit field [15:8]")
        return (1 << 33 | self.buf << 24 | self.dst[1] << 20 | self.dst[0] << 16 | self.flags << 8
                | self.ack[1] << 4 | self.ack[0])


@dataclass(frozen=True)
class Descriptor:
    """Base and four (stride, bound) dims, dim 1 fastest; optional node target.

    VLD/VST: base and strides count L1 words; VFILL/VDRAIN: bytes of DRAM
    (the L1 side of a fill/drain is contiguous from the word's ``off``); a
    node drain sends its walk's entries to granule ``base[15:0]`` of the node.
    """

    base: int = 0
    dims: tuple[tuple[int, int], ...] = ((0, 1),)
    target: Optional[NodeTarget] = None

    def __post_init__(self) -> None:
        _check("DESC", "base", self.base, 0, (1 << 34) - 1, "34-bit field value[33:0]")
        if len(self.dims) > 4:
            raise ValueError(f"DESC: {len(self.dims)} dims given; a descriptor has 4")
        for s, b in self.dims:
            pack_dim(s, b)
        if self.target is not None and self.base > 0xFFFF:
            raise ValueError(f"DESC: a node drain's base is the destination granule offset, "
                             f"16 bits; {self.base} does not fit")

    @property
    def full_dims(self) -> list[tuple[int, int]]:
        return list(self.dims) + [(0, 1)] * (4 - len(self.dims))

    def values(self) -> list[tuple[int, int]]:
        """(fld, value) of the six DESC writes that set this descriptor completely."""
        return ([(FLD_BASE, self.base)] + [(k + 1, pack_dim(s, b)) for k, (s, b) in enumerate(self.full_dims)]
                + [(FLD_TARGET, self.target.value() if self.target else 0)])

    def entries(self) -> int:
        return math.prod(max(b, 1) for _, b in self.full_dims)

    def walk(self, n: Optional[int] = None) -> list[int]:
        """Offsets of the first n entries (all of them by default), dim 1 fastest."""
        dims = [(s, max(b, 1)) for s, b in self.full_dims]
        total = self.entries() if n is None else n
        out = []
        for i in range(total):
            off, rest = 0, i
            for k, (s, b) in enumerate(dims):
                idx = rest % b if k < 3 else rest
                rest //= b
                off += idx * s
            out.append(off)
        return out


# ---------------------------------------------------------------- CU_INST payloads
def imem_payload(addr: int, word: int) -> int:
    _check("IMEM", "addr", addr, 0, IMEM_WORDS - 1, "9-bit field [251:243]")
    _check("IMEM", "word", word, 0, (1 << 32) - 1, "32-bit field [31:0]")
    return INST_IMEM << 252 | addr << 243 | word


def desc_payload(ad: int, fld: int, value: int) -> int:
    _check("DESC", "ad", ad, 0, 7, "3-bit field [251:249]")
    _check("DESC", "fld", fld, 0, 7, "3-bit field [248:246]")
    _check("DESC", "value", value, 0, (1 << 34) - 1, "34-bit field [245:212]")
    return INST_DESC << 252 | ad << 249 | fld << 246 | value << 212


def run_payload(pc: int) -> int:
    _check("RUN", "pc", pc, 0, IMEM_WORDS - 1, "9-bit field [251:243]")
    return INST_RUN << 252 | pc << 243


def program_payloads(words: Sequence[int], descriptors: dict[int, Descriptor] | None = None,
                     base: int = 0) -> list[int]:
    """IMEM writes of `words` from `base`, then the complete DESC writes of each descriptor."""
    if base + len(words) > IMEM_WORDS:
        raise ValueError(f"{len(words)} words from IMEM address {base} run past word {IMEM_WORDS - 1}")
    out = [imem_payload(base + i, w) for i, w in enumerate(words)]
    for ad, d in sorted((descriptors or {}).items()):
        out.extend(desc_payload(ad, fld, v) for fld, v in d.values())
    return out


# ================================================================ lanes <-> words
def word_to_u16(word: int) -> np.ndarray:
    """A 256-bit word -> its 16 lanes (lane i = bits [16i+15:16i])."""
    return np.array([(word >> (16 * i)) & 0xFFFF for i in range(16)], dtype=np.uint16)


def u16_to_word(lanes) -> int:
    return sum(int(v) << (16 * i) for i, v in enumerate(np.asarray(lanes).astype(np.int64)))


def word_to_u32(word: int) -> np.ndarray:
    """A 256-bit word -> its 8 FP32 elements (element j = bits [32j+31:32j])."""
    return np.array([(word >> (32 * j)) & 0xFFFF_FFFF for j in range(8)], dtype=np.uint32)


def u32_to_word(elems) -> int:
    return sum(int(v) << (32 * j) for j, v in enumerate(np.asarray(elems).astype(np.int64)))


# ================================================================ the core
@dataclass
class _Burst:
    src: Coord
    left: int
    addr: int
    bad: bool
    sig: bool
    ack: int
    buf: int
    txn: int


@dataclass
class Event:
    """One flit the core sends: (destination, flit)."""

    dst: Coord
    flit: int


class VectorCore:
    """The vector core's architectural behaviour, untimed, bit-exact.

    ``take(flit)`` hands it one inbound flit in the order the core takes it
    and returns the flits the core sends because of it (completions
    included). A RUN blocked on outstanding fills (VBAR, VHALT) resumes when
    ``take`` delivers the last of their MEM_RD_RESP. Instructions arriving
    while a RUN is in flight wait, as in cu_base's FIFO.
    """

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT,
                 wired_ops: Iterable[str] = RTL_WIRED_OPS,
                 wired_dtypes: Iterable[int] = RTL_WIRED_DTYPES) -> None:
        self.coord = coord
        self.mag = mag
        self.wired_ops = frozenset(o.upper() for o in wired_ops)
        self.wired_dtypes = frozenset(wired_dtypes)
        bad = (self.wired_ops - MODEL_OPS) | {f"dtype {d}" for d in self.wired_dtypes - MODEL_DTYPES}
        if bad:
            raise ValueError(f"the model cannot compute {sorted(bad)}")
        self.imem = [0] * IMEM_WORDS
        self.l1 = [0] * L1_WORDS
        self.vr = np.zeros((N_VREGS, VL_MAX), dtype=np.uint32)
        self.reset()

    def reset(self) -> None:
        """What resetn clears (IMEM, L1 and the vector registers are memories and keep their contents)."""
        self.sr = [0] * N_SREGS
        self.k3 = 0
        self.vl = 16
        self.base = [0] * N_DESC
        self.dims = [[0] * 4 for _ in range(N_DESC)]
        self.target = [0] * N_DESC
        self.fills: dict[int, int] = {}  # tag -> L1 word
        self.fptr = 0
        self.cud_fault = False
        self.burst: Optional[_Burst] = None
        self.discard: Optional[tuple[Coord, int]] = None
        self.queue: list[int] = []
        self.running: Optional[dict] = None  # {"inst": flit, "pc": int, "wait": str}

    # ------------------------------------------------------------ helpers
    def write_l1(self, addr: int, word: int) -> None:
        self.l1[addr] = word & WORD_MASK

    def _flit(self, dst: Coord, ftype: int, txn: int, last: int, payload: int) -> Event:
        return Event(dst, make_flit(dst, self.coord, ftype, txn, last, payload))

    # ------------------------------------------------------------ inbound
    def take(self, flit: int) -> list[Event]:
        """One inbound flit; returns what the core sends because of it."""
        ftype = FIELDS["type"].extract(flit)
        if ftype == FlitType.CU_INST:
            self.queue.append(flit)
            return self._drain_queue()
        if ftype == FlitType.CU_DATA:
            return self._cu_data(flit)
        if ftype == FlitType.MEM_RD_RESP:
            return self._fill_response(flit)
        return []  # every other type is dropped

    def take_all(self, flits: Iterable[int]) -> list[Event]:
        out: list[Event] = []
        for f in flits:
            out.extend(self.take(f))
        return out

    def _cu_data(self, flit: int) -> list[Event]:
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        pl = flit & WORD_MASK
        b = self.burst
        if b is not None and src == b.src:  # data of the open burst
            out = []
            if not b.bad:
                self.l1[b.addr] = pl
            b.addr += 1
            b.left -= 1
            if b.left == 0:
                self.burst = None
                if b.sig and not b.bad:
                    dst = b.src if b.ack == 0 else (b.ack & 0xF, b.ack >> 4)
                    out.append(self._flit(dst, FlitType.CU_SIGNAL, b.txn, 1,
                                          signal_payload(SigCode.DATA_RECEIVED, b.buf)))
            return out
        if self.discard is not None and src == self.discard[0]:
            left = self.discard[1] - 1
            self.discard = (src, left) if left else None
            return []
        buf, off, count, _, _ = cu_data_fields(flit)
        ln = count - 1
        if b is not None:  # a second sender mid-burst: both bursts are faulted
            b.bad = True
            self.cud_fault = True
            if self.discard is None:
                self.discard = (src, ln + 1)
            return []
        bad = buf != 0 or off + ln > L1_WORDS - 1
        if bad:
            self.cud_fault = True
        self.burst = _Burst(src, ln + 1, off, bad, bool((pl >> 216) & 1), (pl >> 208) & 0xFF, buf,
                            FIELDS["txn"].extract(flit))
        return []

    def _fill_response(self, flit: int) -> list[Event]:
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        tag = FIELDS["txn"].extract(flit)
        if src != self.mag or tag not in self.fills:
            return []
        self.l1[self.fills.pop(tag)] = flit & WORD_MASK
        if self.running is not None and not self.fills:
            out = self._resume()
            return out + self._drain_queue()
        return []

    # ------------------------------------------------------------ instructions
    def _drain_queue(self) -> list[Event]:
        out: list[Event] = []
        while self.queue and self.running is None:
            out.extend(self._execute(self.queue.pop(0)))
        return out

    def _done(self, inst: int, fault: int | None, result: int = 0) -> list[Event]:
        flit = completion(self.coord, inst, fault is not None, fault if fault is not None else result)
        return [Event((FIELDS["src_x"].extract(inst), FIELDS["src_y"].extract(inst)), flit)]

    def _execute(self, inst: int) -> list[Event]:
        pl = inst & WORD_MASK
        op = pl >> 252
        if op == INST_IMEM:
            self.imem[(pl >> 243) & 0x1FF] = pl & 0xFFFF_FFFF
            return self._done(inst, None)
        if op == INST_DESC:
            ad, fld, value = (pl >> 249) & 7, (pl >> 246) & 7, (pl >> 212) & ((1 << 34) - 1)
            if fld == FLD_BASE:
                self.base[ad] = value
            elif 1 <= fld <= 4:
                self.dims[ad][fld - 1] = value
            elif fld == FLD_TARGET:
                self.target[ad] = value
            else:
                return self._done(inst, F_OPCODE)
            return self._done(inst, None)
        if op == INST_RUN:
            if self.cud_fault:
                self.cud_fault = False
                return self._done(inst, F_CUDATA)
            self.running = {"inst": inst, "pc": (pl >> 243) & 0x1FF}
            return self._resume()
        return self._done(inst, F_OPCODE)

    def _resume(self) -> list[Event]:
        """Run the program until VHALT, a fault, or a wait on outstanding fills."""
        r = self.running
        assert r is not None
        out: list[Event] = []
        while True:
            pc = r["pc"]
            if pc >= IMEM_WORDS:
                return self._finish(out, F_OPCODE)
            w = self.imem[pc]
            name = OPNAMES[w >> 27]
            if name in ("VBAR", "VHALT") and self.fills:
                return out  # resumed by the last fill response
            if name == "VHALT":
                return self._finish(out, None, pc)
            fault = self._step(name, w, pc, out)
            if fault:
                return self._finish(out, fault)

    def _finish(self, out: list[Event], fault: int | None, result: int = 0) -> list[Event]:
        inst = self.running["inst"]
        self.running = None
        return out + self._done(inst, fault, result)

    def _step(self, name: str, w: int, pc: int, out: list[Event]) -> int:
        r = self.running
        code = w >> 27
        if code <= ALU_MAX_OPCODE:
            fault = self._alu(name, w)
            if not fault:
                r["pc"] = pc + 1
            return fault
        if name in ("VLD", "VST"):
            fault = self._ldst(name, w)
        elif name in ("VFILL", "VDRAIN"):
            fault = self._transfer(name, w, out)
        elif name == "VSETVL":
            if not 1 <= self.k3 <= VL_MAX:
                return F_VL
            self.vl = self.k3
            fault = 0
        elif name == "VSETMODE":
            fault = F_OPCODE if (w >> 25) & 3 else 0
        elif name == "VSETI":
            if pc == IMEM_WORDS - 1:
                return F_OPCODE
            imm = self.imem[pc + 1] & 0xFFFFFF
            tgt = (w >> 25) & 3
            if tgt == SETI_K3:
                self.k3 = imm
            elif tgt == SETI_S:
                self.sr[(w >> 17) & 15] = imm
            else:
                return F_VSRC
            r["pc"] = pc + 2
            return 0
        elif name == "VBAR":
            fault = 0
        else:
            return F_OPCODE
        if not fault:
            r["pc"] = pc + 1
        return fault

    # ------------------------------------------------------------ ALU
    def _operand(self, sel: int, idx: int) -> np.ndarray:
        if sel == SRC_V:
            return self.vr[idx].astype(np.int64)
        if sel == SRC_S:
            return np.full(VL_MAX, self.sr[idx], dtype=np.int64)
        return np.full(VL_MAX, K_CONST[idx] if idx < 3 else self.k3, dtype=np.int64)

    def _alu(self, name: str, w: int) -> int:
        from models.numerics import e8m15 as ar

        sa, sb, sc = (w >> 25) & 3, (w >> 23) & 3, (w >> 21) & 3
        vd, va, vb, vc = (w >> 17) & 15, (w >> 13) & 15, (w >> 9) & 15, (w >> 5) & 15
        pm = (w >> 1) & 3
        if name not in self.wired_ops:
            return F_OPCODE
        rb, rc = name in READS_B, name in READS_C
        if pm == 3:
            return F_VSRC
        if sa == SRC_CHAIN or (rb and sb == SRC_CHAIN) or (rc and sc == SRC_CHAIN):
            return F_CHAIN
        if (sa == SRC_K and va > 3) or (rb and sb == SRC_K and vb > 3) or (rc and sc == SRC_K and vc > 3):
            return F_VSRC
        a, b, c = self._operand(sa, va), self._operand(sb, vb), self._operand(sc, vc)
        fn = {"VMOV": lambda: ar.vmov(a), "VNEG": lambda: ar.vneg(a), "VABS": lambda: ar.vabs(a),
              "VADD": lambda: ar.vadd(a, c), "VSUB": lambda: ar.vsub(a, c), "VMUL": lambda: ar.vmul(a, b),
              "VFMA": lambda: ar.vfma(a, b, c), "VFNMA": lambda: ar.vfnma(a, b, c),
              "VMAX": lambda: ar.vmax(a, b), "VMIN": lambda: ar.vmin(a, b),
              "VEXP2": lambda: ar.vexp2(a), "VINV": lambda: ar.vinv(a)}[name]
        res = np.asarray(fn(), dtype=np.uint32)
        mask = np.arange(VL_MAX) < self.vl
        if pm == 1:
            mask[:] = False  # P registers are all zero: no compare opcode is implemented
        self.vr[vd] = np.where(mask, res, self.vr[vd])
        return 0

    # ------------------------------------------------------------ memory form
    def _walker(self, ad: int) -> Descriptor:
        dims = tuple(unpack_dim(v) for v in self.dims[ad])
        return Descriptor(self.base[ad], dims, None)

    def _ldst(self, name: str, w: int) -> int:
        from models.numerics import e8m15_to_fp16, e8m15_to_fp32, fp16_to_e8m15, fp32_to_e8m15

        dtype, ad, vd = (w >> 24) & 7, (w >> 21) & 7, (w >> 17) & 15
        off = w & 0x3FFF
        off -= (off & 0x2000) << 1
        if dtype not in (DT_FP16, DT_FP32) or dtype not in self.wired_dtypes:
            return F_DTYPE
        epw = 16 if dtype == DT_FP16 else 8
        need = -(-self.vl // epw)
        d = self._walker(ad)
        if d.entries() < need:
            return F_VL
        for i, wo in enumerate(d.walk(need)):
            la = self.base[ad] + off + wo
            if not 0 <= la < L1_WORDS:
                return F_RANGE
            first = i * epw  # element index of the word's first element
            n = min(epw, self.vl - first)
            if name == "VLD":
                if dtype == DT_FP16:
                    vals = fp16_to_e8m15(word_to_u16(self.l1[la]))
                else:
                    vals = fp32_to_e8m15(word_to_u32(self.l1[la]))
                self.vr[vd, first:first + n] = np.asarray(vals, dtype=np.uint32)[:n]
            else:
                elems = self.vr[vd, first:first + n]
                if dtype == DT_FP16:
                    lanes = word_to_u16(self.l1[la])
                    lanes[:n] = np.asarray(e8m15_to_fp16(elems), dtype=np.uint16)
                    self.l1[la] = u16_to_word(lanes)
                else:
                    words = word_to_u32(self.l1[la])
                    words[:n] = np.asarray(e8m15_to_fp32(elems), dtype=np.uint32)
                    self.l1[la] = u32_to_word(words)
        return 0

    def _transfer(self, name: str, w: int, out: list[Event]) -> int:
        ad = (w >> 21) & 7
        off = w & 0x3FFF
        off -= (off & 0x2000) << 1
        d = self._walker(ad)
        n = d.entries()
        if n > MAX_WALK:
            return F_LEN
        if off < 0 or off + n - 1 > L1_WORDS - 1:
            return F_RANGE
        addrs = [(self.base[ad] + wo) & ADDR_MASK for wo in d.walk()]
        tgt = self.target[ad]
        if name == "VFILL":
            for i, addr in enumerate(addrs):
                tag = self.fptr
                assert tag not in self.fills, "the untimed model never has 256 fills outstanding"
                self.fills[tag] = off + i
                self.fptr = (self.fptr + 1) & 0xFF
                out.append(self._flit(self.mag, FlitType.MEM_RD_REQ, tag, 1, addr << 216))
        elif tgt >> 33:
            dst = ((tgt >> 16) & 0xF, (tgt >> 20) & 0xF)
            desc = ((tgt >> 24) & 0xFF) << 248 | (self.base[ad] & 0xFFFF) << 232 | (n - 1) << 224 | \
                   ((tgt >> 8) & 0xFF) << 216 | (tgt & 0xFF) << 208
            out.append(self._flit(dst, FlitType.CU_DATA, 0, 0, desc))
            for i in range(n):
                out.append(self._flit(dst, FlitType.CU_DATA, i, int(i == n - 1), self.l1[off + i]))
        else:
            for i, addr in enumerate(addrs):
                out.append(self._flit(self.mag, FlitType.MEM_WR_REQ, i, 0, addr << 216))
                out.append(self._flit(self.mag, FlitType.MEM_WR_DATA, i, 1, self.l1[off + i]))
        return 0


# ================================================================ flit builders for benches
def cu_data_burst(dst: Coord, src: Coord, words: Sequence[int], *, off: int = 0, buf: int = 0,
                  flags: int = 0, ack: Coord = (0, 0), txn: int = 0) -> list[int]:
    """One CU_DATA burst: a descriptor then one data flit per word (last on the final one)."""
    if not 1 <= len(words) <= CU_DATA_MAX_LEN:
        raise ValueError(f"a CU_DATA burst carries 1..{CU_DATA_MAX_LEN} data flits, got {len(words)}")
    return cu_data_bursts(dst, src, buf, off, words, flags=flags, ack=ack, txn=txn)


def program_flits(unit: Coord, src: Coord, words: Sequence[int], descriptors: dict[int, Descriptor],
                  pc: int = 0, *, txn: int = 0x40, run_last: int = 0, base: int = 0) -> list[int]:
    """CU_INSTs that load a program and its descriptors, then RUN it (the RUN is the last flit)."""
    payloads = program_payloads(words, descriptors, base) + [run_payload(pc)]
    return [cu_inst(unit, src, txn, run_last if i == len(payloads) - 1 else 0, p)
            for i, p in enumerate(payloads)]


__all__ = [
    "ALU_MAX_OPCODE", "CU_TYPE", "DT_FP16", "DT_FP32", "Descriptor", "Event", "FAULT_NAMES",
    "F_CHAIN", "F_CUDATA", "F_DTYPE", "F_LEN", "F_LOOP", "F_OPCODE", "F_RANGE", "F_REDVL", "F_VL",
    "F_VSRC", "L1_WORDS", "compare_fp16_words", "MODEL_DTYPES", "MODEL_OPS", "NodeTarget", "OPCODES", "RTL_WIRED_DTYPES",
    "RTL_WIRED_OPS", "VectorCore", "assemble", "assemble_line", "cu_data_burst", "desc_payload",
    "disassemble", "e8m15", "encode_alu", "encode_mem", "encode_seti", "encode_setmode",
    "imem_payload", "pack_dim", "program_flits", "program_payloads", "run_payload", "unpack_dim",
    "u16_to_word", "u32_to_word", "word_to_u16", "word_to_u32",
]


# ================================================================ checkers
def compare_fp16_words(expected: Sequence[int], got: Sequence[int], what: str = "word",
                       limit: int = 10) -> tuple[int, list[str]]:
    """(checks, errors): per 256-bit word and per FP16 lane, bit for bit; a missing or extra word fails."""
    errors: list[str] = []
    checks = 0
    for i in range(max(len(expected), len(got))):
        if i >= len(got):
            checks += 1
            errors.append(f"{what} {i}: missing (expected {expected[i]:#066x})")
            continue
        if i >= len(expected):
            checks += 1
            errors.append(f"{what} {i}: extra {got[i]:#066x}")
            continue
        e, g = word_to_u16(expected[i]), word_to_u16(got[i])
        for lane in range(16):
            checks += 1
            if e[lane] != g[lane]:
                errors.append(f"{what} {i} lane {lane}: expected {int(e[lane]):#06x}, got {int(g[lane]):#06x}")
    if len(errors) > limit:
        errors = errors[:limit] + [f"... {len(errors) - limit} more"]
    return checks, errors
