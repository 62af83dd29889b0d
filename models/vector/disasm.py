"""Disassembler: program words and CU_INST payloads of the vector core as readable text.

Every failure message that names an instruction and every listing of a program
goes through here, so a word always reads the same way. The text is the
assembler's syntax (models.vector.asm), and ``assemble(disassemble(w)) == w`` for
every 32-bit word: operands an opcode's short form does not show are written as
``[name=value]`` attributes when they are not the default, and bits no field of
the opcode reads are written as ``[+0x...]``.
"""

from __future__ import annotations

from typing import Sequence

from . import isa
from .isa import (
    A_B_C_OPS, A_B_OPS, A_C_OPS, ALU_LAST, CMP_OPS, OPNAMES, SRC_LETTER, SRC_S, UNARY_OPS, Mode, RedKind, Word,
)


def operand(sel: int, idx: int) -> str:
    return f"{SRC_LETTER[sel]}{idx}"


def _alu_text(w: Word) -> str:
    """ALU words 0x00..0x11: the operands the op reads, the others as attributes when not v0."""
    a, b, c = operand(w.sa, w.va), operand(w.sb, w.vb), operand(w.sc, w.vc)
    attrs: list[str] = []
    if w.op in CMP_OPS:
        text = f"{w.name} p{w.pr}, {a}, {b}"
        hidden = {"c": c}
        if w.vd:
            attrs.append(f"vd={w.vd}")
        if w.pm:
            attrs.append(f"pm={w.pm}")
    else:
        if w.op in UNARY_OPS:
            shown, hidden = [a], {"b": b, "c": c}
        elif w.op in A_C_OPS:
            shown, hidden = [a, c], {"b": b}
        elif w.op in A_B_OPS:
            shown, hidden = [a, b], {"c": c}
        else:
            assert w.op in A_B_C_OPS
            shown, hidden = [a, b, c], {}
        text = f"{w.name} v{w.vd}, " + ", ".join(shown)
        if w.pm:
            text += f" {'?' if w.pm == 1 else '!'}p{w.pr}"
            if w.pm == 3:
                attrs.append("pm=3")
        elif w.pr:
            attrs.append(f"pr={w.pr}")
    attrs = [f"{k}={v}" for k, v in hidden.items() if v != "v0"] + attrs
    if w.raw & 1:
        attrs.append("bit0=1")
    return text + (f" [{' '.join(attrs)}]" if attrs else "")


def _mem_ref(ad: int, off: int) -> str:
    return f"A{ad}{off:+d}" if off else f"A{ad}"


def _core_text(w: Word, imm: int | None) -> str:
    """The text of a word without the unread-bits attribute."""
    op = w.op
    if op <= ALU_LAST:
        return _alu_text(w)
    if op == isa.OP_VCVT:
        dt = {isa.DT_CVT_ROUND: "FP16", isa.DT_CVT_RAW: "RAW"}.get(w.dt, f"dt={w.dt}")
        return f"VCVT v{w.vd}, v{w.va}, {dt}"
    if op == isa.OP_VRED:
        k = RedKind(w.kind)
        text = f"VRED.{k.name} s{w.vd}"
        if k in (RedKind.SUM, RedKind.MAX, RedKind.MIN):
            text += f", v{w.va}"
        elif k in (RedKind.SUMSQ, RedKind.DOT, RedKind.EXPSUM):
            text += f", v{w.va}, v{w.vb}"
        return text + (f" [pr={w.pr}]" if w.pr else "")
    if op in (isa.OP_VLD, isa.OP_VST):
        dt = {isa.DT_FP16: "", isa.DT_FP32: ", FP32"}.get(w.dt, f", dt={w.dt}")
        return f"{w.name} v{w.vd}, {_mem_ref(w.ad, w.off)}{dt}"
    if op == isa.OP_VBCAST:
        return f"VBCAST v{w.vd}, s{w.va}" if w.sa == SRC_S else f"VBCAST s{w.vd}, v{w.va}"
    if op == isa.OP_VSHUF:
        return f"VSHUF v{w.vd}, v{w.va}, s{w.vb}"
    if op == isa.OP_VSETVL:
        return f"VSETVL s{w.va}"
    if op == isa.OP_VSETMODE:
        return f"VSETMODE {Mode(w.mode).name}"
    if op == isa.OP_VSETI:
        target = "k3" if w.sa == isa.SRC_K else f"s{w.vd}"
        return f"VSETI {target}, " + (f"{imm & isa.E8_MASK:#08x}" if imm is not None else "<next word>")
    if op == isa.OP_VLOOP:
        return f"VLOOP s{w.va}, {w.vb}"
    if op == isa.OP_VFILL:
        return f"VFILL A{w.ad}, {w.l1_start}"
    if op == isa.OP_VDRAIN:
        text = f"VDRAIN A{w.ad}, {w.l1_start}"
        if w.node:
            text += f", node=({w.dst_x},{w.dst_y}), buf={w.buf}" + (", sig" if w.signal else "")
        return text
    return w.name  # VBAR, VHALT


def disassemble(word: int, imm: int | None = None) -> str:
    """One program word as text (``imm``: the word after a VSETI, if known)."""
    from .asm import assemble_line  # the canonical text must assemble back to the same bits

    w = Word(word & 0xFFFF_FFFF)
    text = _core_text(w, imm)
    probe = text if w.op != isa.OP_VSETI else text.replace("<next word>", "0")
    extra = w.raw ^ assemble_line(probe)[0]
    return text + (f" [+{extra:#x}]" if extra else "")


def listing(words: Sequence[int], base: int = 0) -> list[str]:
    """A program as ``pc: word  text`` lines; a VSETI's immediate is shown on its own line."""
    out: list[str] = []
    k = 0
    while k < len(words):
        w = words[k]
        if Word(w).op == isa.OP_VSETI and k + 1 < len(words):
            out.append(f"{base + k:4d}: {w:08x}  {disassemble(w, words[k + 1])}")
            out.append(f"{base + k + 1:4d}: {words[k + 1]:08x}  (immediate)")
            k += 2
            continue
        out.append(f"{base + k:4d}: {w:08x}  {disassemble(w)}")
        k += 1
    return out


def describe_payload(payload: int, imem: Sequence[int] | None = None) -> str:
    """One CU_INST payload for the vector core (V.2) as text."""
    op = (payload >> 252) & 0xF
    if op == isa.INST_IMEM:
        addr, word = (payload >> 243) & 0x1FF, payload & 0xFFFF_FFFF
        return f"IMEM[{addr}] = {word:08x}  {disassemble(word)}"
    if op == isa.INST_DESC:
        ad, fld, value = (payload >> 249) & 7, (payload >> 246) & 7, isa.desc_value(payload)
        if fld == isa.FLD_BASE:
            return f"DESC A{ad}.base = {value:#x}"
        if 1 <= fld <= 4:
            stride, bound = isa.unpack_dim(value)
            hi = " (bits [39:34] ignored)" if value >> 34 else ""
            return f"DESC A{ad}.dim{fld} = stride {stride} bound {bound}{hi}"
        return f"DESC A{ad}.fld{fld} = {value:#x} (no effect)"
    if op == isa.INST_RUN:
        return f"RUN pc={(payload >> 243) & 0x1FF}"
    return f"CU_INST op {op} (no effect)"


def program_from(imem: Sequence[int], pc: int, limit: int = 512) -> list[int]:
    """The words from `pc` up to and including the first VHALT (a static walk: loops are not followed)."""
    out: list[int] = []
    while len(out) < limit:
        w = imem[(pc + len(out)) % len(imem)]
        out.append(w)
        if Word(w).op == isa.OP_VHALT:
            break
    return out


def describe_kick(payloads: Sequence[int], imem: list[int] | None = None) -> list[str]:
    """A listing of CU_INST payloads sent to one core, in the form of the compiler's program.txt: each
    payload decoded, and after each RUN the program it runs (from the IMEM those payloads built on `imem`)."""
    mem = list(imem) if imem is not None else [0] * isa.IMEM_WORDS
    out: list[str] = []
    for p in payloads:
        op = (p >> 252) & 0xF
        addr = (p >> 243) & 0x1FF
        before = mem[(addr - 1) % isa.IMEM_WORDS]
        if op == isa.INST_IMEM and Word(before).op == isa.OP_VSETI:  # data, not an instruction
            out.append(f"  IMEM[{addr}] = {p & 0xFFFF_FFFF:08x}  (immediate {p & isa.E8_MASK:#08x} of the VSETI "
                       f"at {(addr - 1) % isa.IMEM_WORDS})")
        else:
            out.append("  " + describe_payload(p))
        if op == isa.INST_IMEM:
            mem[addr] = p & 0xFFFF_FFFF
        elif op == isa.INST_RUN:
            pc = (p >> 243) & 0x1FF
            out += ["      " + line for line in listing(program_from(mem, pc), pc)]
    if imem is not None:
        imem[:] = mem
    return out


def main(argv: Sequence[str]) -> int:
    """`python -m models.vector.disasm WORD...` disassembles program words (hex); `--bundle NAME` lists every
    vector-core kick of a compiled bundle."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m models.vector.disasm", description=main.__doc__)
    ap.add_argument("words", nargs="*", help="32-bit program words in hex")
    ap.add_argument("--bundle", help="a bundle of clients/bundles")
    args = ap.parse_args(argv)
    if args.bundle:
        from models.bundle.reader import Bundle

        b = Bundle(args.bundle)
        mems: dict[tuple[int, int], list[int]] = {}
        for rnd in b.rounds:
            for kick in rnd.kicks:
                if rnd.unit != "VC":
                    continue
                print(f"-- round {rnd.index} kick {list(kick.node)} (VC) {len(kick.flits)} flits")
                mem = mems.setdefault(kick.node, [0] * isa.IMEM_WORDS)
                print("\n".join(describe_kick([f & ((1 << 256) - 1) for f in kick.flits], mem)))
        return 0
    for text in args.words:
        w = int(text, 16)
        print(f"{w:08x}  {disassemble(w)}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))


__all__ = ["describe_kick", "describe_payload", "disassemble", "listing", "operand", "program_from"]
