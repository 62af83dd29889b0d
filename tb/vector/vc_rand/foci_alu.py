"""Foci of ALU work: FLAT words over every opcode, D2/D4 chains, TREE reductions (VRED, ANY/ALL),
transcendentals on crafted ranges, and the register moves (VBCAST, VSHUF, VCVT, VSETI, VSETVL).
Each is a ``Focus`` (builder.py)."""

from __future__ import annotations

from models.vector import DT_FP32, L1_WORDS, LANES, SRC_S, SRC_V, VL_MAX, Descriptor, Mode, encode_alu
from models.vector import isa

from .builder import Builder, vl_any
from .spec import ADDR_MOD
from .units import ALU_OPS, CMP, TRANSC
from .values import E8_SPECIALS, pack_lanes, transc_value


def focus_flat(b: Builder, k: int) -> str:
    """FLAT ALU words over every opcode, predicated writes pm 0..3, compares, VSEL, at a random (ragged) VL."""
    b.emit(b.mode_to(Mode.FLAT) + b.u_setvl(vl_any(b)))
    b.prologue()
    for i in range(b.rng.randint(8, 16)):
        if b.room < 6:
            break
        op = ALU_OPS[(k * 5 + i) % len(ALU_OPS)] if b.chance(0.5) else b.alu_op(False)
        b.emit(b.u_alu([op], [{"pm": (k + i) % 4}]))
        if b.chance(0.2):
            b.emit(b.u_vst())
    return f"FLAT ALU + predicates at VL {b.vl}"


def _focus_chain(b: Builder, k: int, mode: Mode) -> str:
    """D2/D4 chains: compares feeding VSEL on C, compares last (P writes), the SiLU shape; pm 0..3 in turn."""
    b.emit(b.mode_to(mode))
    if b.chance(0.6):
        b.emit(b.u_setvl(vl_any(b)))
    b.prologue()
    for i in range(b.rng.randint(3, 8)):
        if b.room < 9:
            break
        if b.chance(0.6):
            ops, force = b.chain_pattern()
            force[-1] = {**force[-1], "pm": (k + i) % 4}
            b.emit(b.u_alu(ops, force))
        else:
            b.emit(b.u_alu())
        if b.chance(0.3):
            b.emit(b.rng.choice((b.u_vst, b.u_anyall, b.u_vld))())
    return f"chain {mode.name} + predicates at VL {b.vl}"


def focus_chain2(b: Builder, k: int) -> str:
    return _focus_chain(b, k, Mode.D2)


def focus_chain4(b: Builder, k: int) -> str:
    return _focus_chain(b, k, Mode.D4)


def focus_hazards(b: Builder, k: int) -> str:
    """Upstream hazards H2-H4 (units.md V.8): chains back to back (stage settings equal or not), the
    destination of a D4 chain at VL 113..128 read by the next chain or a VBCAST V->S, a draining word between
    them now and then, and FP32 stores."""
    rng = b.rng
    b.emit(b.mode_to(Mode.D4 if k % 2 == 0 else Mode.D2))
    b.emit(b.u_setvl(rng.randint(113, VL_MAX) if b.chance(0.7) else vl_any(b)))
    b.prologue()
    depth = isa.CHAIN_DEPTH[Mode(b.mode)]
    writes = [op for op in ALU_OPS if op not in CMP]
    for _ in range(rng.randint(2, 5)):
        if b.room < 2 * depth + 6:
            break
        dest = b.reg()
        ops = [b.alu_op(True) for _ in range(depth - 1)] + [rng.choice(writes)]
        first = b.u_alu(ops, [{} for _ in range(depth - 1)] + [{"vd": dest}])
        b.emit(first)
        pick = rng.randrange(5)
        if pick == 0:  # a draining word between: nothing to report
            b.emit(rng.choice((b.u_vld, b.u_vst, lambda: b.u_vshuf(False), b.u_vcvt))())
        elif pick == 1:  # the same stage settings with another head: H4 alone at VL 113..128 in D4
            b.emit([b.alu_word(b.alu_op(False), True, sa=SRC_V, va=dest)] + first[1:])
        elif pick == 2:  # VBCAST V->S of the destination
            b.emit([encode_alu("VBCAST", vd=b.reg(), va=dest, sa=rng.choice((SRC_V, 2, 3)))])
        else:  # a chain reading it on a random operand
            x = rng.choice("abc")
            b.emit(b.u_alu(None, [{f"v{x}": dest, f"s{x}": SRC_V}] + [{} for _ in range(depth - 1)]))
    if b.chance(0.6):
        b.emit(b.u_vst(DT_FP32))
    return f"hazards H2-H4: {Mode(b.mode).name} chains at VL {b.vl}"


def focus_tree(b: Builder, k: int) -> str:
    """Every VRED kind 0..5 at two VLs of the schedule (all eight multiples of 16 every four rounds), ANY/ALL."""
    vls = [16 * (1 + (2 * k + j) % 8) for j in range(2)]
    b.prologue()
    if b.mode == Mode.TREE:
        b.emit(b.leave_tree())
    b.emit(b.u_alu())  # the pm EXPSUM uses (D5) comes from this RUN
    b.emit(b.u_setmode(Mode.TREE))
    for vl in vls:
        b.emit(b.u_setvl(vl))
        kinds = list(range(6))
        b.rng.shuffle(kinds)
        for kind in kinds:
            b.emit(b.u_vred(kind))
        b.emit(b.u_anyall())
        if b.chance(0.5):
            b.emit([encode_alu("VBCAST", vd=b.reg(), va=b.reg(), sa=SRC_S)] + b.u_vst())
    if b.chance(0.4):
        b.emit(b.leave_tree())
    return f"TREE VRED all kinds at VL {vls[0]}, {vls[1]} + ANY/ALL"


def focus_transc(b: Builder, k: int) -> str:
    """Transcendentals on crafted FP32 operands (D1 range, saturation, zeros, negatives, powers of 2 and 4)."""
    rng = b.rng
    b.emit(b.mode_to(Mode.FLAT) + b.u_setvl(VL_MAX if rng.random() < 0.7 else vl_any(b)))
    n = 2 * -(-b.vl // LANES)
    off = rng.randrange(L1_WORDS - n + 1)
    b.burst(off, [pack_lanes([transc_value(rng) for _ in range(8)], 32) for _ in range(n)], src="host",
            flags=rng.randrange(2), ack=b.ack_target())
    delta = rng.randint(-5, 5)  # base + off lands on the burst, mod 512 (base sometimes 512 * r higher)
    ad = b.new_slot(Descriptor((off - delta + L1_WORDS * rng.randint(0, 3)) % ADDR_MOD, ((1, n),)))
    src = b.reg()
    other = lambda: (src + rng.randint(1, 15)) % 16  # noqa: E731  (results never overwrite the operand)
    b.emit(b.u_vld(DT_FP32, src, ad, delta))
    ops = list(TRANSC)
    rng.shuffle(ops)
    for op in ops + [rng.choice(TRANSC)]:
        b.emit(b.u_alu([op], [{"sa": SRC_V, "va": src, "vd": other(), "pm": rng.choice((0, 0, 1, 2))}]))
    s = b.reg()  # the SiLU shape: x * -log2(e), then VEXP2
    b.emit(b.seti_raw(s, 0xBFB8AA) + b.u_alu([0x05], [{"sa": SRC_V, "va": src, "sb": SRC_S, "vb": s, "vd": src}]))
    b.emit(b.u_alu([0x0E], [{"sa": SRC_V, "va": src, "vd": other()}]))
    for _ in range(2):
        s = b.reg()
        b.emit(b.seti_raw(s, rng.choice(E8_SPECIALS + (0x434800, 0xC34800, 0x43C000))))
        b.emit(b.u_alu([rng.choice(TRANSC)], [{"sa": SRC_S, "va": s}]))
    b.emit(b.u_vst())
    return f"transcendentals on crafted ranges at VL {b.vl}"


def focus_misc(b: Builder, k: int) -> str:
    """VBCAST both ways, VSHUF by many shifts, VCVT dt 1 and 2, VSETI to S and K3, VSETVL ragged."""
    rng = b.rng
    b.emit(b.u_setvl(rng.randint(1, VL_MAX)))
    steps = [b.u_vbcast, b.u_vbcast, lambda: b.u_vshuf(shift=k * 5 % 16), b.u_vshuf, b.u_vcvt, b.u_vcvt,
             b.u_seti, b.u_seti, b.u_setvl, b.u_vld, b.u_vst]
    rng.shuffle(steps)
    for fn in steps:
        if b.room < 6:
            break
        b.emit(fn())
    return f"VBCAST/VSHUF/VCVT/VSETI at VL {b.vl}"
