"""Fault foci: a legal prefix, the trigger of one fault code 1..9 (its variants and precedence in turn),
then dead words that must never run. Each is a ``Focus`` (builder.py)."""

from __future__ import annotations

from models.vector import (
    DT_FP16, L1_WORDS, LANES, N_DESC, SRC_C, SRC_V, VL_MAX, Descriptor, Fault, Mode, encode_alu, encode_bare,
    encode_mem, encode_vcvt, encode_vdrain_node, encode_vloop,
)
from models.vector import isa

from .builder import Builder
from .spec import reads
from .values import data_word, e8_value


def _prefix(b: Builder) -> None:
    """Legal instructions before a fault trigger: the fault must be raised with this state, not at reset."""
    b.fill_random(b.rng.randint(1, 5))


def focus_f_dtype(b: Builder, k: int) -> str:
    """F_DTYPE: VLD, VST or VCVT with dt not 1 or 2."""
    _prefix(b)
    dt = b.rng.choice((0, 3, 4, 5, 6, 7))
    which = ("VLD", "VST", "VCVT")[k % 3]
    if which == "VCVT":
        word = encode_vcvt(b.reg(), b.reg(), dt)
    else:
        word = encode_mem(which, b.rng.randrange(N_DESC), b.rng.randint(-20, 20), b.reg(), dt)
    b.fault_now(Fault.F_DTYPE, [word])
    return f"fault F_DTYPE ({which} dt {dt})"


VSRC_PLAN = ((Mode.D2, 1, False), (Mode.D4, 3, False), (Mode.D4, 2, True), (Mode.D2, 1, True),
             (Mode.D4, 1, False), (Mode.D4, 3, True), (Mode.D4, 2, False), (Mode.D4, 1, True))


def focus_f_vsrc(b: Builder, k: int) -> str:
    """F_VSRC: a gathered stage with a V selector, read or unread; a V stage before a non-ALU stage wins."""
    rng = b.rng
    mode, at, unread = VSRC_PLAN[k % len(VSRC_PLAN)]
    _prefix(b)
    b.emit(b.mode_to(mode))
    depth = isa.CHAIN_DEPTH[mode]
    ops = [b.alu_op(True) for _ in range(depth)]
    words = [b.alu_word(op, k2 == 0) for k2, op in enumerate(ops)]
    g = isa.Word(words[at])
    sels = [SRC_C if s == SRC_V else s for s in g.selectors]
    slots = [i for i, rd in enumerate(reads(g.op)) if not rd] if unread else [0]
    if unread and not slots:
        ops[at] = 0x00  # VMOV reads only a
        slots = [1, 2]
    sels[rng.choice(slots)] = SRC_V
    words[at] = b.alu_word(ops[at], False, sa=sels[0], sb=sels[1], sc=sels[2])
    if at + 1 < depth and rng.random() < 0.4:
        words[at + 1] = encode_mem("VLD", 0, 0, 0, DT_FP16)  # later, non-ALU: F_VSRC comes first
    b.fault_now(Fault.F_VSRC, words)
    return f"fault F_VSRC ({Mode(b.mode).name} stage {at}{' unread operand' if unread else ''})"


def focus_f_chain(b: Builder, k: int) -> str:
    """F_CHAIN: a FLAT word or a chain head with a C selector (unread too); C in the head beats V in a stage."""
    rng = b.rng
    mode = (Mode.FLAT, Mode.D2, Mode.D4)[k % 3]
    b.emit(b.mode_to(mode))
    _prefix(b)
    b.emit(b.mode_to(mode, again=0))
    depth = isa.CHAIN_DEPTH[Mode(b.mode)]
    op = b.alu_op(depth > 1) if (k // 3) % 2 == 0 else 0x00
    head = b.alu_word(op, True)
    sels = list(isa.Word(head).selectors)
    unread = (k // 3) % 2 == 1  # VMOV then: C on b or c, which it does not read
    slot = rng.choice([i for i, rd in enumerate(reads(op)) if rd != unread])
    sels[slot] = SRC_C
    words = [b.alu_word(op, True, sa=sels[0], sb=sels[1], sc=sels[2])]
    for _ in range(depth - 1):
        words.append(b.alu_word(b.alu_op(True), False, **({"sa": SRC_V} if rng.random() < 0.3 else {})))
    b.fault_now(Fault.F_CHAIN, words)
    return f"fault F_CHAIN ({Mode(b.mode).name} head, C in operand {'abc'[slot]})"


def focus_f_opcode(b: Builder, k: int) -> str:
    """F_OPCODE: VRED kind 0..5 outside TREE (VL % 16 = 0), an ALU word in TREE (with C: still F_OPCODE),
    a gathered stage with a non-ALU opcode (ours; before a later V stage)."""
    rng = b.rng
    variant = k % 3
    _prefix(b)
    if variant == 0:
        b.emit(b.mode_to(Mode((k // 3) % 3)))
        if b.vl % LANES:
            b.emit(b.u_setvl(16 * rng.randint(1, 8)))
        word = encode_alu("VRED", vd=b.reg(), va=b.reg(), vb=b.reg(), vc=rng.randrange(6) | 8 * rng.randrange(2))
        b.fault_now(Fault.F_OPCODE, [word])
        return f"fault F_OPCODE (VRED in {Mode(b.mode).name})"
    if variant == 1:
        b.emit(b.mode_to(Mode.TREE, again=0))
        force = {"sa": SRC_C} if (k // 3) % 2 else {}
        b.fault_now(Fault.F_OPCODE, [b.alu_word(b.alu_op(False), True, **force)])
        return "fault F_OPCODE (ALU word in TREE" + (", with a C selector)" if force else ")")
    mode = rng.choice((Mode.D2, Mode.D4))
    b.emit(b.mode_to(mode, again=0))
    depth = isa.CHAIN_DEPTH[mode]
    at = rng.randrange(1, depth)
    words = [b.alu_word(b.alu_op(True), j == 0) for j in range(depth)]
    bad = GATHERED_BAD[(k // 3) % len(GATHERED_BAD)]
    words[at] = bad
    if at + 1 < depth and rng.random() < 0.5:
        words[at + 1] = b.alu_word(0x03, False, sa=SRC_V)  # later V stage: F_OPCODE comes first
    b.fault_now(Fault.F_OPCODE, words)
    return f"fault F_OPCODE ({isa.Word(bad).name} gathered as stage {at} of {mode.name})"


GATHERED_BAD = (encode_mem("VLD", 0, 0, 1, DT_FP16), encode_bare("VHALT"), encode_alu("VSETI", vd=3),
                encode_bare("VBAR"), encode_vcvt(1, 2, 2), encode_vloop(0, 1), encode_alu("VRED", vc=6))
LEN_BOUNDS = ((257,), (17, 16), (256, 256), (16, 16, 16, 16), (65535, 65535), (0x8000, 2), (0, 300),
              (2, 2, 2, 33), (4096, 16, 1, 1))


def focus_f_len(b: Builder, k: int) -> str:
    """F_LEN: VFILL, VDRAIN or node VDRAIN with total > 256, products capped at 65535 included."""
    which = ("VFILL", "VDRAIN", "node")[k % 3]
    bounds = LEN_BOUNDS[(k // 3) % len(LEN_BOUNDS)]  # every (instruction, bounds) pair within 27 rounds
    dims = tuple((32 * b.rng.randint(-3, 3), bd) for bd in bounds)
    ad = b.new_slot(Descriptor(b.rng.getrandbits(34), dims))  # before the prefix takes the free slots
    _prefix(b)
    start = b.rng.randrange(L1_WORDS)
    word = (encode_vdrain_node(ad, start, b.rng.choice(b.geo.node_targets)) if which == "node"
            else encode_mem(which, ad, start))
    b.fault_now(Fault.F_LEN, [word])
    return f"fault F_LEN ({which}, bounds {bounds})"


def focus_f_loop(b: Builder, k: int) -> str:
    """F_LOOP: a VLOOP inside a loop body, or after a loop whose end a VSETI immediate or chain stepped over."""
    rng = b.rng
    variant = k % 3
    b.allow_loops = False  # a 0-word loop of the prefix could leave a loop active (see u_loop)
    if variant == 2:
        b.emit(b.mode_to(rng.choice((Mode.D2, Mode.D4)), again=0))
    elif b.mode == Mode.TREE and b.chance(0.5):
        b.emit(b.leave_tree())
    _prefix(b)
    b.emit(b.flush())
    s = b.reg()
    if variant == 0:  # nested
        inner = b.body(rng.randint(0, 3))
        after = rng.randint(0, 2)
        tail = b.body(after)
        words = b.seti_raw(s, rng.randint(0, 5)) + [encode_vloop(s, len(inner) + 1 + after)] + inner
        b.emit(words)
        b.fault_now(Fault.F_LOOP, [encode_vloop(b.reg(), rng.randint(0, 4))] + tail)
        return "fault F_LOOP (nested VLOOP)"
    if variant == 2 and b.mode in (Mode.D2, Mode.D4):
        chain = b.u_alu()
        body = b.body(rng.randint(0, 2))
        vb = len(body) + rng.randint(1, len(chain) - 1)
        b.emit(b.seti_raw(s, rng.randint(2, 5)) + [encode_vloop(s, vb)] + body + chain)
        what = "a chain"
    else:
        body = b.body(rng.randint(0, 2))
        imm = b.seti_raw(b.reg(), e8_value(rng))
        b.emit(b.seti_raw(s, rng.randint(2, 5)) + [encode_vloop(s, len(body) + 1)] + body + imm)
        what = "a VSETI immediate"
    b.loop = "open"
    b.fill_random(rng.randint(0, 2), transfers=False)
    b.fault_now(Fault.F_LOOP, b.flush() + b.seti_raw(s, 1) + [encode_vloop(s, 1)])
    return f"fault F_LOOP (loop end stepped over by {what}, later VLOOP)"


VL_BAD = (0, 129, 0x800080, 0x100, 0x110, 0xFFFFFF, 200)  # F_VL: 0, > 128, also when the low byte is legal


def focus_f_vl(b: Builder, k: int) -> str:
    """F_VL: VSETVL of 0, 129, 0x800080 and other values above 128 (some with a legal low byte)."""
    value = VL_BAD[k % len(VL_BAD)]
    _prefix(b)
    s = b.reg()
    b.fault_now(Fault.F_VL, b.seti_raw(s, value) + [encode_alu("VSETVL", va=s)])
    return f"fault F_VL (S = {value:#x})"


def focus_f_redvl(b: Builder, k: int) -> str:
    """F_REDVL: VRED kind 0..5 at a ragged VL, in TREE and (precedence over F_OPCODE) in other modes."""
    rng = b.rng
    _prefix(b)
    target = Mode.TREE if k % 2 == 0 else rng.choice((Mode.FLAT, Mode.D2, Mode.D4))
    b.emit(b.mode_to(target, again=0))
    vl = rng.choice([v for v in range(1, VL_MAX) if v % LANES])
    b.emit(b.u_setvl(vl))
    word = encode_alu("VRED", vd=b.reg(), va=b.reg(), vb=b.reg(), vc=rng.randrange(6) | 8 * rng.randrange(2))
    b.fault_now(Fault.F_REDVL, [word])
    return f"fault F_REDVL (VL {vl}, {target.name})"


def focus_f_cudata(b: Builder, k: int) -> str:
    """F_CUDATA: a rejected (buf != 0, off + len >= 512) or interleaved burst before the RUN: the RUN faults
    before its first instruction (an accepted, acknowledged burst may come first)."""
    rng = b.rng
    variant = k % 5
    words = lambda n: [data_word(rng) for _ in range(n)]  # noqa: E731
    if variant == 4 or rng.random() < 0.2:
        n = rng.randint(1, 8)
        b.burst(rng.randrange(L1_WORDS - n + 1), words(n), flags=1, ack=b.ack_target())
    n = rng.randint(2, 12)
    if variant == 0:
        b.burst(rng.randrange(L1_WORDS - n), words(n), buf=rng.randint(1, 255), flags=1)
        what = "buf != 0"
    elif variant == 1:
        b.burst(L1_WORDS + 1 - n, words(n), flags=1)  # off + len = 512 exactly
        what = "off + len = 512"
    elif variant == 2:
        b.burst(rng.randint(L1_WORDS, 0xFF00), words(n), flags=1)
        what = "off >= 512"
    else:
        at = rng.randrange(n - 1) if variant == 3 else n - 1
        src = rng.choice(("host", "peer0"))
        intruder = "peer0" if src == "host" else "host"  # another coordinate, whatever the geometry
        b.burst(rng.randrange(L1_WORDS - n + 1), words(n), src=src, flags=1, intruder_at=at, intruder=intruder,
                intruder_word=data_word(rng))
        what = f"interleaved at data flit {at} of {n}"
    b.runs = False
    b.fill_random(rng.randint(3, 8))
    b.fault = int(Fault.F_CUDATA)
    return f"fault F_CUDATA ({what})"
