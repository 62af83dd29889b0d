"""Assembler: vector-core program text -> 32-bit words, in the syntax the disassembler prints.

Syntax, one instruction a line (comments after ``#`` or ``;``)::

    VADD v1, v0, k1            ALU: vd then the operands the op reads (a; a, c; a, b; a, b, c)
    VMUL v7, v0, s4 ?p0        ... predicated: ?pN writes where P[N] is set (pm 1), !pN where clear (pm 2)
    VCMPLT p0, v0, v1          compares write P[pr]: the first operand names it
    VEXP2 v7, v7 [c=k1 pm=3]   attributes set fields the short form does not show
    VRED.SUM s1, v7            VRED.<kind> s_dest[, v_a[, v_b]]   (kinds SUM MAX MIN SUMSQ DOT EXPSUM ANY ALL)
    VLD v0, A1+8[, FP32]       VST v7, A4-2      (the offset is signed, in L1 words)
    VFILL A0, 64               VDRAIN A2, 32     (the number is the L1 start word, ir[8:0])
    VDRAIN A3, 0, node=(1,0), buf=0, sig         a drain to a node (the descriptor base is the record)
    VSETI s4, 0xbfb8aa         VSETI k3, 16      (two words: the VSETI and its 24-bit immediate)
    VSETVL s0   VSETMODE TREE   VLOOP s2, 5   VBCAST v2, s4   VBCAST s1, v3   VSHUF v1, v2, s3
    VCVT v1, v2, FP16|RAW   VBAR   VHALT   .word 0x12345678
    ... [+0x10]                bits no field of the opcode reads, ORed into the word

Sources are vN (vector, chain heads only), sN (scalar), cN (the previous chain
stage) and kN (constant K[N mod 4]). A value that does not fit its field is
refused with the line number, the field, its limit and the value.
"""

from __future__ import annotations

import re
from typing import Iterable

from . import isa
from .isa import (
    A_B_C_OPS, A_B_OPS, A_C_OPS, ALU_LAST, CMP_OPS, IMEM_WORDS, OPCODES, SRC_LETTER, UNARY_OPS, RedKind,
)

_SRC = re.compile(r"^([vsck])(\d+)$", re.I)
_REG = re.compile(r"^([vsp])(\d+)$", re.I)
_MEM = re.compile(r"^a(\d+)\s*(?:([+-])\s*(0x[0-9a-f]+|\d+))?$", re.I)
_ATTRS = re.compile(r"\[([^\]]*)\]")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?e[+-]?\d+)$", re.I)


def _int(what: str, text: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not an integer") from None


def _source(op: str, name: str, text: str) -> tuple[int, int]:
    m = _SRC.match(text.strip())
    if not m:
        raise ValueError(f"{op}: operand {name} {text!r} is not vN, sN, cN or kN")
    return SRC_LETTER.index(m.group(1).lower()), int(m.group(2))


def _reg(op: str, name: str, text: str, letter: str) -> int:
    m = _REG.match(text.strip())
    if not m or m.group(1).lower() != letter:
        raise ValueError(f"{op}: {name} {text!r} must be {letter}N")
    return int(m.group(2))


def _immediate(op: str, text: str) -> int:
    t = text.strip()
    if _FLOAT.match(t):
        from models.numerics import E8M15, encode

        return int(encode(float(t), E8M15))
    return _int(f"{op} immediate", t)


def _split(text: str) -> tuple[str, list[str], dict[str, str], int]:
    """(mnemonic, operands, attributes, extra bits) of one line."""
    extra = 0
    attrs: dict[str, str] = {}
    for group in _ATTRS.findall(text):
        for item in group.split():
            if item.startswith("+"):
                extra |= _int("extra bits", item[1:])
            elif "=" in item:
                k, v = item.split("=", 1)
                attrs[k.lower()] = v
            else:
                raise ValueError(f"attribute {item!r} is not name=value or +0xBITS")
    text = _ATTRS.sub("", text).strip()
    parts = text.split(None, 1)
    ops = [a.strip() for a in re.split(r",(?![^(]*\))", parts[1])] if len(parts) > 1 else []
    return parts[0].upper(), ops, attrs, extra


def _alu(op: str, args: list[str], attrs: dict[str, str]) -> int:
    code = OPCODES[op]
    pm = pr = 0
    if args:
        last = args[-1].split()
        if len(last) == 2 and re.match(r"^[?!]p\d$", last[1], re.I):
            args[-1] = last[0]
            pm, pr = (1 if last[1][0] == "?" else 2), int(last[1][2:])
    if code in CMP_OPS:
        names = ["p", "a", "b"]
    elif code in UNARY_OPS:
        names = ["vd", "a"]
    elif code in A_C_OPS:
        names = ["vd", "a", "c"]
    elif code in A_B_OPS:
        names = ["vd", "a", "b"]
    else:
        assert code in A_B_C_OPS
        names = ["vd", "a", "b", "c"]
    if len(args) != len(names):
        raise ValueError(f"{op}: expected {len(names)} operands ({', '.join(names)}), got {len(args)}")
    f = {"vd": 0, "a": (0, 0), "b": (0, 0), "c": (0, 0)}
    for name, text in zip(names, args):
        if name == "vd":
            f["vd"] = _reg(op, "vd", text, "v")
        elif name == "p":
            pr = _reg(op, "predicate", text, "p")
        else:
            f[name] = _source(op, name, text)
    for k, v in attrs.items():
        if k in ("a", "b", "c"):
            f[k] = _source(op, k, v)
        elif k == "vd":
            f["vd"] = _int("vd", v)
        elif k == "pm":
            pm = _int("pm", v)
        elif k == "pr":
            pr = _int("pr", v)
        elif k != "bit0":
            raise ValueError(f"{op}: unknown attribute {k!r} (known: a, b, c, vd, pm, pr, bit0)")
    (sa, va), (sb, vb), (sc, vc) = f["a"], f["b"], f["c"]
    return isa.encode_alu(code, f["vd"], va, vb, vc, sa, sb, sc, pr, pm, _int("bit0", attrs.get("bit0", "0")))


def _memory(op: str, args: list[str], attrs: dict[str, str]) -> int:
    if op in ("VLD", "VST"):
        if len(args) not in (2, 3):
            raise ValueError(f"{op}: expected 'vN, An[+off][, FP32|dt=N]'")
        m = _MEM.match(args[1])
        if not m:
            raise ValueError(f"{op}: {args[1]!r} is not a descriptor reference An or An+off")
        off = _int("off", m.group(3)) if m.group(3) else 0
        dt = isa.DT_FP16
        if len(args) == 3:
            t = args[2].upper()
            dt = {"FP16": isa.DT_FP16, "FP32": isa.DT_FP32}.get(t) or _int("dt", t.split("=", 1)[-1])
        return isa.encode_mem(op, int(m.group(1)), -off if m.group(2) == "-" else off, _reg(op, "register", args[0], "v"),
                              dt)
    # VFILL / VDRAIN: An, start[, node=(x,y), buf=N, sig]
    if len(args) < 2:
        raise ValueError(f"{op}: expected 'An, L1 start word'")
    ad = _int("descriptor", args[0].strip()[1:]) if args[0].strip().upper().startswith("A") else None
    if ad is None:
        raise ValueError(f"{op}: {args[0]!r} is not a descriptor An")
    start = _int("L1 start word", args[1])
    opts = {}
    for a in args[2:]:
        k, _, v = a.partition("=")
        opts[k.strip().lower()] = v.strip()
    if op == "VDRAIN" and "node" in opts:
        xy = re.match(r"^\((\d+)\s*,\s*(\d+)\)$", opts["node"])
        if not xy:
            raise ValueError(f"VDRAIN: node={opts['node']!r} is not (x,y)")
        return isa.encode_vdrain_node(ad, start, (int(xy.group(1)), int(xy.group(2))),
                                      _int("buf", opts.get("buf", "0")), int("sig" in opts))
    if opts:
        raise ValueError(f"{op}: unexpected options {', '.join(opts)}")
    return isa.encode_mem(op, ad, start)


def assemble_line(line: str) -> list[int]:
    """One instruction -> its word(s) (two for VSETI); [] for a blank or comment line."""
    text = re.split(r"[#;]", line, maxsplit=1)[0].strip()
    if not text:
        return []
    op, args, attrs, extra = _split(text)
    if op == ".WORD":
        return [_int(".word", args[0]) & 0xFFFF_FFFF]
    base, _, kind = op.partition(".")
    if base not in OPCODES:
        raise ValueError(f"unknown mnemonic {base!r}; known: {', '.join(OPCODES)}")
    code = OPCODES[base]
    words: list[int]
    if code <= ALU_LAST:
        words = [_alu(base, args, attrs)]
    elif code in isa.MEMORY_OPS:
        words = [_memory(base, args, attrs)]
    elif code == isa.OP_VRED:
        if kind.upper() not in RedKind.__members__:
            raise ValueError(f"VRED: kind {kind!r} is not one of {', '.join(RedKind.__members__)} (write VRED.SUM ...)")
        k = RedKind[kind.upper()]
        regs = [_reg(op, "destination", args[0], "s")] + [_reg(op, "source", a, "v") for a in args[1:]]
        want = 1 if k in (RedKind.ANY, RedKind.ALL) else 2 if k <= RedKind.MIN else 3
        if len(regs) != want:
            raise ValueError(f"VRED.{k.name}: expected {want} operand(s), got {len(regs)}")
        regs += [0] * (3 - len(regs))
        words = [isa.encode_vred(k, regs[0], regs[1], regs[2], _int("pr", attrs.get("pr", "0")))]
    elif code == isa.OP_VCVT:
        dt = {"FP16": isa.DT_CVT_ROUND, "RAW": isa.DT_CVT_RAW}.get(args[2].upper()) if len(args) == 3 else None
        if dt is None:
            if len(args) != 3 or not args[2].lower().startswith("dt="):
                raise ValueError("VCVT: expected 'vD, vA, FP16|RAW|dt=N'")
            dt = _int("dt", args[2].split("=", 1)[1])
        words = [isa.encode_vcvt(_reg(op, "vd", args[0], "v"), _reg(op, "va", args[1], "v"), dt)]
    elif code == isa.OP_VBCAST:
        if len(args) != 2:
            raise ValueError("VBCAST: expected 'vD, sA' (S to V) or 'sD, vA' (element 0 to S)")
        if args[0].strip().lower().startswith("v"):
            words = [isa.encode_vbcast(_reg(op, "vd", args[0], "v"), _reg(op, "source", args[1], "s"), to_vector=True)]
        else:
            words = [isa.encode_vbcast(_reg(op, "sd", args[0], "s"), _reg(op, "source", args[1], "v"),
                                       to_vector=False)]
    elif code == isa.OP_VSHUF:
        words = [isa.encode_vshuf(_reg(op, "vd", args[0], "v"), _reg(op, "va", args[1], "v"),
                                  _reg(op, "shift", args[2], "s"))]
    elif code == isa.OP_VSETVL:
        words = [isa.encode_setvl(_reg(op, "S register", args[0], "s"))]
    elif code == isa.OP_VSETMODE:
        if len(args) != 1:
            raise ValueError("VSETMODE: expected one mode (FLAT, D2, D4, TREE)")
        words = [isa.encode_setmode(args[0].strip())]
    elif code == isa.OP_VSETI:
        if len(args) != 2:
            raise ValueError("VSETI: expected 'sN, value' or 'k3, value'")
        tgt = args[0].strip().lower()
        value = _immediate(op, args[1])
        words = isa.encode_seti(value, k3=True) if tgt == "k3" else isa.encode_seti(value,
                                                                                     sreg=_reg(op, "target", tgt, "s"))
    elif code == isa.OP_VLOOP:
        words = [isa.encode_vloop(_reg(op, "count", args[0], "s"), _int("VLOOP body", args[1]))]
    else:
        if args:
            raise ValueError(f"{op} takes no operands")
        words = [isa.encode_bare(code)]
    words[0] |= extra
    return words


def assemble(program: str | Iterable[str]) -> list[int]:
    """A program (text or lines) -> words in order; errors name the line."""
    lines = program.splitlines() if isinstance(program, str) else list(program)
    out: list[int] = []
    for n, line in enumerate(lines, 1):
        try:
            out.extend(assemble_line(line))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"line {n} ({line.strip()!r}): {exc}") from None
    if len(out) > IMEM_WORDS:
        raise ValueError(f"a program of {len(out)} words does not fit the {IMEM_WORDS}-word IMEM")
    return out


__all__ = ["assemble", "assemble_line"]
