"""Foci of program flow: the init case (all state defined), VLOOPs, a program across IMEM 511 -> 0,
and everything legal mixed. Each is a ``Focus`` (builder.py)."""

from __future__ import annotations

from models.vector import DT_FP16, DT_FP32, VL_MAX, Descriptor, Mode, encode_alu, encode_seti

from .builder import Builder
from .tracking import MAX_WORDS, NoRoom, NoSlot
from .units import CMP
from .values import data_word, e8_value


def focus_init(b: Builder, k: int) -> str:
    """All state defined: L1 by two 256-word bursts, V by VLDs at VL 128, S and K3 by VSETI, P by compares."""
    rng = b.rng
    for off in (0, 256):
        b.burst(off, [data_word(rng) for _ in range(256)], flags=rng.randrange(2), ack=b.ack_target())
    b.max_words = MAX_WORDS + 4
    b.emit(b.u_setmode(Mode.FLAT) + b.u_setvl(VL_MAX))
    ad = b.new_slot(Descriptor(0, ((1, 16),)))
    for v in range(16):
        b.emit(b.u_vld(DT_FP16 if v % 2 else DT_FP32, v, ad, 16 * v))
    for s in range(16):
        b.emit(b.seti_raw(s, e8_value(rng)))
    b.emit(encode_seti(e8_value(rng), k3=True))
    for p in range(4):
        b.emit([encode_alu(rng.choice(CMP), va=rng.randrange(16), vb=rng.randrange(16), pr=p)])
    b.pr_known = b.pm_known = True
    return "init: L1, V, S, P, K3 defined"


def focus_loop(b: Builder, k: int) -> str:
    """VLOOPs with counts 0..5 and bodies 0..6 on a schedule, sometimes one that never closes (falls through)."""
    rng = b.rng
    b.prologue()
    count, length = k % 6, (k * 3 + 1) % 7
    label = [f"VLOOP count {count} body {length}"]
    try:
        b.emit(b.u_loop(count, length))
        if b.loop == "idle" and b.room > 14:
            count, length = rng.randint(0, 5), rng.randint(0, 6)
            misaligned = rng.random() < 0.3
            b.emit(b.u_loop(count, length, misaligned))
            label.append(f"then count {count} body {length}" + (" (never closes)" if misaligned else ""))
    except (NoRoom, NoSlot):
        pass
    return ", ".join(label)


def focus_pcwrap(b: Builder, k: int) -> str:
    """A program placed across IMEM word 511 -> 0: fetch, VSETI immediates and chains wrap the pc."""
    b.wrap_pc = True
    b.fill_random(b.rng.randint(6, 12))
    return "pc wraps 511 -> 0"


def focus_mixed(b: Builder, k: int) -> str:
    """Everything legal, in random order and modes."""
    b.fill_random(b.rng.randint(10, 20))
    return f"mixed (ends in {Mode(b.mode).name}, VL {b.vl})"
