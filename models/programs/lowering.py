"""Epilogue lowering: an epilogue tree to one 8-word chunk's ALU lines, registers allocated.

Constants: the E8M15 patterns of 0.0, 1.0 and -1.0 are the built-ins K0, K1,
K2; every other constant (and SiLU/sigmoid's -log2(e), ``NEG_LOG2E``) goes into
a scalar register by VSETI, never into DRAM, in **both** forms. So the unfused
form needs no broadcast constant arrays and none are counted; the seed's
broadcast arrays were the compiler's unfused encoding of folded constants,
reported apart as ``UPSTREAM_BROADCAST_BYTES`` (models.programs.comparison)
and not charged to ours (charging them would credit fusion with a saving that
comes from an encoding choice the unfused form can make too). K3 is never
written (VSETI with sa = 3 would write it; our programs name S registers
only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.vector import K_CONST, N_SREGS, N_VREGS, e8m15
from models.numerics import NEG_LOG2E
from models.machine.planner import ELEMENTWISE, FIXES, Acc, Const, Expr, Op, Operand, leaves

from .layout import _refuse

CONST_SREGS = tuple(range(4, N_SREGS)) + (1, 2, 3)  # constants from S4 up, as the compiler; then S1..S3
FIRST_TEMP_VREG = 7  # results and temporaries from v7 up (the compiler's), loads in v0..


@dataclass(frozen=True)
class Lowered:
    """One chunk's epilogue: loads, ALU lines, the result register; constants as scalars."""

    slots: tuple[int, ...]  # accumulator slots read, loaded into v0.. in this order
    scalars: tuple[tuple[int, int], ...]  # (scalar register, E8M15 pattern), set once by VSETI
    body: tuple[str, ...]  # ALU lines, in execution order
    result: int  # vector register holding the result
    vregs: int  # vector registers used at peak

    def alu_ops(self) -> int:
        return len(self.body)


_BUILTIN = {int(p): f"k{i}" for i, p in enumerate(K_CONST)}
_BINARY = {"add": "VADD", "sub": "VSUB", "mul": "VMUL", "max": "VMAX", "min": "VMIN"}
_UNARY = {"exp2": "VEXP2", "inv": "VINV", "neg": "VNEG"}


def const_pattern(value: float) -> int:
    """The E8M15 pattern of a constant (nearest even), refusing what is not a finite number."""
    if not math.isfinite(float(value)):
        raise _refuse(f"constant {value!r} is not finite", "fold it away or write it as a finite number")
    return e8m15(float(value))


def _temp_rank(reg: int) -> tuple[bool, int]:
    """Allocation order of vector registers: v7.. first (the compiler's temporaries), then the rest."""
    return reg < FIRST_TEMP_VREG, reg


def lower_epilogue(expr: Expr) -> Lowered:
    """Lower an epilogue tree to one chunk's ALU lines (register allocation, constants as sources).

    Registers as the public compiler assigns them: accumulator r's chunk is
    loaded into v0, v1, ... (slot order), results and temporaries take v7 up
    (then the other free registers), an operation whose operand dies here
    writes over it, constants go into S4 up (S0 holds VL; then S1..S3).
    Identical subtrees are computed once. SiLU is VMUL t = x * -log2(e),
    VEXP2, VADD K1, VINV, VMUL t = x * t (the compiler's five words); sigmoid
    is the first four. Refuses an operand leaf, an unknown operation, more
    constants than scalar registers or more live values than vector registers.
    """
    for leaf in leaves(expr):
        if isinstance(leaf, Operand) or not isinstance(leaf, (Acc, Const)):
            raise _refuse(f"epilogue leaf {leaf!r} is neither an accumulator nor a constant", FIXES)
    uses: dict[Expr, int] = {}

    def count(e: Expr) -> None:
        uses[e] = uses.get(e, 0) + 1
        if uses[e] == 1 and isinstance(e, Op):
            if e.name not in ELEMENTWISE:
                raise _refuse(f"epilogue operation '{e.name}' has no vector-core lowering (known: "
                              f"{', '.join(sorted(ELEMENTWISE))})", "express it with the known operations")
            if len(e.args) != ELEMENTWISE[e.name]:
                raise _refuse(f"'{e.name}' takes {ELEMENTWISE[e.name]} operand(s), got {len(e.args)}",
                              "fix the expression")
            for a in e.args:
                count(a)

    count(expr)
    slots = tuple(sorted({leaf.slot for leaf in leaves(expr) if isinstance(leaf, Acc)}))
    if len(slots) > N_VREGS:
        raise _refuse(f"the epilogue reads {len(slots)} accumulators, more than the {N_VREGS} vector registers",
                      FIXES)
    scalars: dict[int, int] = {}  # pattern -> sreg

    def source_of_const(pattern: int) -> str:
        if pattern in _BUILTIN:
            return _BUILTIN[pattern]
        if pattern not in scalars:
            if len(scalars) == len(CONST_SREGS):
                raise _refuse(f"the epilogue needs more than {len(CONST_SREGS)} distinct constants (scalar "
                              f"registers S1..S15; S0 holds VL)", f"fold constants together, or {FIXES}")
            scalars[pattern] = CONST_SREGS[len(scalars)]
        return f"s{scalars[pattern]}"

    owner: dict[Expr, int] = {Acc(s): i for i, s in enumerate(slots)}  # the loads come first, in slot order
    free = sorted(set(range(N_VREGS)) - set(owner.values()), key=_temp_rank)
    left = dict(uses)
    body: list[str] = []
    peak = len(owner)

    def alloc() -> int:
        nonlocal peak
        if not free:
            raise _refuse(f"the epilogue needs more than {N_VREGS} vector registers live at once",
                          f"simplify the expression, or {FIXES}")
        r = free.pop(0)
        peak = max(peak, N_VREGS - len(free))
        return r

    def release(e: Expr) -> None:
        left[e] -= 1
        if left[e] == 0 and e in owner:
            free.append(owner.pop(e))
            free.sort(key=_temp_rank)

    memo: dict[Expr, str] = {}

    def ev(e: Expr) -> str:
        if e in memo:
            return memo[e]
        if isinstance(e, Acc):
            src = f"v{owner[e]}"
        elif isinstance(e, Const):
            src = source_of_const(const_pattern(e.value))
        else:
            srcs = [ev(a) for a in e.args]
            if e.name in ("silu", "sigmoid"):
                x = srcs[0]
                s = source_of_const(NEG_LOG2E)
                vd = alloc()  # x is read again by SiLU's last step: never write over it
                d = f"v{vd}"
                body.extend([f"VMUL {d}, {x}, {s}", f"VEXP2 {d}, {d}", f"VADD {d}, {d}, k1", f"VINV {d}, {d}"])
                if e.name == "silu":
                    body.append(f"VMUL {d}, {x}, {d}")
                for a in e.args:
                    release(a)
            else:
                for a in e.args:
                    release(a)
                vd = alloc()
                d = f"v{vd}"
                if e.name in _BINARY:
                    body.append(f"{_BINARY[e.name]} {d}, {srcs[0]}, {srcs[1]}")
                else:
                    body.append(f"{_UNARY[e.name]} {d}, {srcs[0]}")
            owner[e] = vd
            src = d
        memo[e] = src
        return src

    res = ev(expr)
    if not res.startswith("v"):  # a bare constant: materialise it
        vd = alloc()
        body.append(f"VMOV v{vd}, {res}")
        res = f"v{vd}"
    return Lowered(slots, tuple((r, p) for p, r in sorted(scalars.items(), key=lambda t: CONST_SREGS.index(t[1]))),
                   tuple(body), int(res[1:]), peak)
