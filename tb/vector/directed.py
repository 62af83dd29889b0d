"""Directed vector-core cases: one per opcode 00..1F, one per fault code 1..9 (units.md V.8, V.10), and for
each upstream hazard H2, H3, H4 a program that must report it and its safe twin that must not (V.8).

Each case is a short program with the set-up it needs; the module bench runs
it on the RTL and on the golden model and compares everything after the RUN
(tb/vector/bench.py). A common prologue first fills L1 words 0..63 with FP16
data that includes the special values, and loads V0..V3 from it at VL 128.
Pure Python (no cocotb), so the table is also checked by the unit tests.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping

from models.vector import Descriptor, node_record
from tb.vector.hazard_counts import HAZARD_IDS

Coord = tuple[int, int]

DRAM = 0x8000_0000  # the bench DRAM's first byte address (vc_harness BAY_DRAM_BASE)
SPECIAL_FP16 = (0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00,
                0x5A00, 0xD640, 0x3555, 0x4248)


@dataclass(frozen=True)
class Directed:
    """One directed case: program text, its descriptors, and what it needs around it."""

    name: str
    lines: tuple[str, ...]
    descriptors: Mapping[int, Descriptor] = field(default_factory=dict)
    dram: Mapping[int, int] = field(default_factory=dict)  # byte address -> word, for VFILL
    bursts_before: tuple[tuple[Coord, int, int, int], ...] = ()  # (source, L1 offset, words, buf) sent before the RUN
    targets: str = ""  # the opcode or fault this case is for
    pc: int = 0  # IMEM address of the first word and of the RUN (the program wraps past 511)
    reports: Mapping[str, int] | None = None  # HAZARD reports by id the case must make (None: not checked)


def fp16_words(rng: random.Random, n: int) -> list[int]:
    """n L1 words of FP16 values: specials and ordinary numbers of both signs over a wide range."""
    out = []
    for _ in range(n):
        lanes = [rng.choice(SPECIAL_FP16) if rng.random() < 0.2 else
                 (rng.getrandbits(1) << 15) | rng.randint(0x0400, 0x7BFF) for _ in range(16)]
        out.append(sum(v << (16 * i) for i, v in enumerate(lanes)))
    return out


PROLOGUE = ("VSETI s0, 128", "VSETVL s0", "VSETMODE FLAT", "VLD v0, A7", "VLD v1, A7+8", "VLD v2, A7+16",
            "VLD v3, A7+24", "VSETI s1, 0x3fc000", "VSETI s2, 3", "VSETI s3, 0xc0a000", "VSETI k3, 0x400000",
            "VHALT")
PROLOGUE_DESC = {7: Descriptor(0, ((1, 8),))}

L1W = Descriptor(0, ((1, 8),))            # 8 consecutive L1 words from 0
OUT = Descriptor(256, ((1, 8),))          # 8 consecutive L1 words from 256


def _alu(op: str, operands: str, extra: tuple[str, ...] = ()) -> Directed:
    return Directed(op, (f"{op} v5, {operands}", f"{op} v6, {operands} !p0", *extra, "VST v5, A0", "VST v6, A0+8",
                         "VHALT"), {0: OUT}, targets=op)


# upstream hazards (V.8): a D4 chain writing v6 and a chain of the same stage settings reading it
_D4_STAGES = ("VMUL {d}, c0, c0 [c=k0]", "VADD {d}, c0, k1 [b=k0]", "VMAX {d}, c0, s3 [c=k0]")
_D4_WRITER = ("VSUB v6, v2, s1",) + tuple(t.format(d="v6") for t in _D4_STAGES)
_D4_READER = ("VADD v7, v6, v1",) + tuple(t.format(d="v7") for t in _D4_STAGES)
_D2_A = ("VADD v5, v0, v1", "VMUL v5, c0, s1 [c=k0]")
_D2_B = ("VADD v6, v2, v3", "VSUB v6, c0, s3 [b=k0]")  # stage 1 differs from _D2_A's: op and S register
_TAIL = ("VSETMODE FLAT", "VST v5, A0", "VST v6, A0+8", "VHALT")
_STORE32 = Descriptor(256, ((1, 16),))


def _reports(**n: int) -> dict[str, int]:
    return {hid: n.get(hid, 0) for hid in HAZARD_IDS}


def hazard_cases() -> list[Directed]:
    """H2, H3 and H4 reported, and their safe twins (a draining word between, an FP16 store) not."""
    return [
        Directed("H2", ("VSETMODE D2", *_D2_A, *_D2_B, *_TAIL), {0: OUT}, targets="H2", reports=_reports(H2=1)),
        Directed("H2_DRAINED", ("VSETMODE D2", *_D2_A, "VSHUF v7, v0, s2", *_D2_B, *_TAIL), {0: OUT},
                 targets="H2", reports=_reports()),
        Directed("H3", ("VST v0, A0, FP32", "VHALT"), {0: _STORE32}, targets="H3", reports=_reports(H3=1)),
        Directed("H3_FP16", ("VST v0, A0", "VHALT"), {0: _STORE32}, targets="H3", reports=_reports()),
        Directed("H4", ("VSETMODE D4", *_D4_WRITER, *_D4_READER, "VSETMODE FLAT", "VST v6, A0", "VST v7, A0+8",
                        "VHALT"), {0: OUT}, targets="H4", reports=_reports(H4=1)),
        Directed("H4_DRAINED", ("VSETMODE D4", *_D4_WRITER, "VSETMODE D4", *_D4_READER, "VSETMODE FLAT",
                                "VST v6, A0", "VST v7, A0+8", "VHALT"), {0: OUT}, targets="H4", reports=_reports()),
    ]


def directed_cases() -> list[Directed]:
    """The whole table, in opcode order, then the faults."""
    cases = [
        _alu("VMOV", "s1"), _alu("VNEG", "v0"), _alu("VABS", "v1"), _alu("VADD", "v0, v1"),
        _alu("VSUB", "v1, k3"), _alu("VMUL", "v0, v2"), _alu("VFMA", "v0, v1, v2"), _alu("VFNMA", "v2, s1, v3"),
        _alu("VMAX", "v0, v1"), _alu("VMIN", "v2, v3"), _alu("VSEL", "v0, v1, v2"),
        Directed("VCMPLT", ("VCMPLT p1, v0, v1", "VMOV v5, v2 ?p1", "VMOV v5, v3 !p1", "VST v5, A0", "VHALT"),
                 {0: OUT}, targets="VCMPLT"),
        Directed("VCMPGT", ("VSETI s4, 40", "VSETVL s4", "VCMPGT p2, v0, s1", "VSETI s4, 128", "VSETVL s4",
                            "VMOV v5, v1 ?p2", "VST v5, A0", "VHALT"), {0: OUT}, targets="VCMPGT"),
        Directed("VCMPEQ", ("VCMPEQ p3, v0, v0", "VADD v4, v0, k0", "VADD v4, v4, k1", "VMUL v5, v4, v1 !p3",
                            "VST v5, A0", "VHALT"), {0: OUT}, targets="VCMPEQ"),
        _alu("VEXP2", "v0"), _alu("VLOG2", "v1"), _alu("VINV", "v2"), _alu("VRSQRT", "v3"),
        Directed("VCVT", ("VMUL v4, v0, s1", "VCVT v5, v4, FP16", "VCVT v6, v4, RAW", "VST v5, A0, FP32",
                          "VST v6, A0+16, FP32", "VHALT"), {0: Descriptor(256, ((1, 32),))}, targets="VCVT"),
        Directed("VRED", ("VSETMODE TREE", "VRED.SUM s4, v0", "VRED.MAX s5, v1", "VRED.MIN s6, v2",
                          "VRED.SUMSQ s7, v3, v3", "VRED.DOT s8, v0, v1", "VSETMODE FLAT", "VCMPLT p1, v0, v1", "VSETMODE TREE", "VRED.ANY s9", "VRED.ALL s10",
                          "VSETI s11, 48", "VSETVL s11", "VRED.EXPSUM s12, v2, v6", "VSETMODE FLAT",
                          "VBCAST v5, s4", "VST v5, A0", "VST v6, A0+8", "VHALT"), {0: OUT}, targets="VRED"),
        Directed("VLD", ("VLD v5, A1, FP32", "VLD v6, A2", "VST v5, A0", "VST v6, A0+8", "VHALT"),
                 {0: OUT, 1: Descriptor(2, ((1, 2), (-1, 3), (5, 2))),       # FP32: 16 steps over a 3-D walk
                  2: Descriptor(510, ((3, 4), (0, 2)), )}, targets="VLD"),     # wraps past word 511, stride 0
        Directed("VST", ("VST v0, A1, FP32", "VST v1, A2-5", "VHALT"),
                 {1: Descriptor(300, ((1, 4), (-8, 4))), 2: Descriptor(5, ((2, 8),))}, targets="VST"),
        Directed("VBCAST", ("VBCAST s4, v3", "VSETI s5, 37", "VSETVL s5", "VBCAST v5, s4", "VBCAST v6, s1",
                            "VST v5, A0", "VST v6, A0+8", "VHALT"), {0: OUT}, targets="VBCAST"),
        Directed("VSHUF", ("VSETI s4, 5", "VSHUF v5, v0, s4", "VSETI s4, 0x12f", "VSHUF v6, v1, s4", "VST v5, A0",
                           "VST v6, A0+8", "VHALT"), {0: OUT}, targets="VSHUF"),
        Directed("VSETVL", ("VSETI s4, 21", "VSETVL s4", "VADD v5, v0, v1", "VLD v6, A0", "VST v5, A0+8",
                            "VSETI s4, 128", "VSETVL s4", "VHALT"), {0: OUT}, targets="VSETVL"),
        Directed("VSETMODE", ("VSETMODE D2", "VMUL v5, v0, v1", "VADD v5, c0, s1 [b=k0]", "VSETMODE D4",
                              "VSUB v6, v2, s1", "VMUL v6, c0, c0 [c=k0]", "VCMPGT p2, c0, k1 [c=k0]",
                              "VMAX v6, c0, s3 ?p2 [c=k0]",
                              "VSETMODE FLAT", "VST v5, A0", "VST v6, A0+8", "VHALT"), {0: OUT},
                 targets="VSETMODE"),
        Directed("VSETI", ("VSETI k3, 0xc00000", "VSETI s6, 0x7fc000", "VADD v5, v0, k3", "VMUL v6, v1, s6",
                           "VST v5, A0", "VST v6, A0+8", "VHALT"), {0: OUT}, targets="VSETI"),
        Directed("VLOOP", ("VSETI s4, 3", "VMOV v5, v0", "VLOOP s4, 2", "VADD v5, v5, v1", "VMUL v5, v5, s1",
                           "VSETI s4, 0", "VLOOP s4, 1", "VADD v5, v5, k1", "VLOOP s4, 0", "VST v5, A0", "VHALT"),
                 {0: OUT}, targets="VLOOP"),
        Directed("VBAR", ("VFILL A3, 300", "VBAR", "VLD v5, A1", "VST v5, A0", "VHALT"),
                 {0: OUT, 1: Descriptor(300, ((1, 8),)), 3: Descriptor(DRAM + 0x800, ((32, 8),))},
                 dram={DRAM + 0x800 + 32 * i: (0x1111 * (i + 1)) << (16 * i) for i in range(8)}, targets="VBAR"),
        Directed("VFILL", ("VFILL A3, 500", "VBAR", "VFILL A4, 0", "VHALT"),
                 {3: Descriptor(DRAM + 0x1000, ((32, 4), (-128, 5))), 4: Descriptor(DRAM + 0x2000, ((64, 3),))},
                 dram={a: (a * 0x9E3779B97F4A7C15) & ((1 << 256) - 1) for a in
                       [DRAM + 0x1000 + 32 * i - 128 * j for i in range(4) for j in range(5)]
                       + [DRAM + 0x2000 + 64 * i for i in range(3)]},
                 targets="VFILL"),
        Directed("VDRAIN", ("VST v0, A0", "VST v1, A0+8", "VDRAIN A5, 256", "VDRAIN A6, 260, node=(1,2), buf=0, sig",
                            "VDRAIN A2, 256, node=(2,1), buf=3", "VHALT"),
                 {0: OUT, 5: Descriptor(DRAM + 0x3000, ((32, 4), (256, 2), (-64, 2))),
                  6: Descriptor(node_record(12, ack=(1, 0)), ((7, 5),)),
                  2: Descriptor(node_record(0x40, fin=(3, 2), mesh=1), ((1, 3),))}, targets="VDRAIN"),
        Directed("VHALT", ("VADD v5, v0, v0", "VHALT", "VADD v5, v5, v5"), {}, targets="VHALT"),
        # ---- the 9-bit pc wraps modulo 512: a chain gathered across 511 -> 0, a VSETI whose immediate is word 0
        Directed("WRAP_CHAIN", ("VSETMODE D4", "VSUB v6, v2, s1", "VMUL v6, c0, c0 [c=k0]", "VCMPGT p2, c0, k1 [c=k0]",
                                  "VMAX v6, c0, s3 ?p2 [c=k0]", "VSETMODE FLAT", "VST v6, A0", "VHALT"), {0: OUT},
                 targets="pc wrap", pc=509),
        Directed("WRAP_SETI", ("VSETI s5, 0xc0a000", "VBCAST v5, s5", "VST v5, A0", "VHALT"), {0: OUT},
                 targets="pc wrap", pc=511),
        # ---- faults (V.10)
        Directed("F_DTYPE", ("VLD v5, A0, dt=3", "VHALT"), {0: OUT}, targets="F_DTYPE"),
        Directed("F_VSRC", ("VSETMODE D2", "VADD v5, v0, k1", "VMUL v5, c0, v1", "VHALT"), {}, targets="F_VSRC"),
        Directed("F_CHAIN", ("VSETMODE FLAT", "VEXP2 v5, v0 [b=c0]", "VHALT"), {}, targets="F_CHAIN"),
        Directed("F_OPCODE", ("VSETMODE TREE", "VADD v5, v0, v1", "VHALT"), {}, targets="F_OPCODE"),
        Directed("F_LEN", ("VDRAIN A5, 0", "VHALT"), {5: Descriptor(0, ((32, 300), (1, 300)))}, targets="F_LEN"),
        Directed("F_LOOP", ("VSETI s4, 2", "VLOOP s4, 3", "VADD v5, v0, v0", "VLOOP s4, 1", "VHALT", "VHALT"), {},
                 targets="F_LOOP"),
        Directed("F_VL", ("VSETI s4, 0x800080", "VSETVL s4", "VHALT"), {}, targets="F_VL"),
        Directed("F_REDVL", ("VSETMODE FLAT", "VSETI s4, 40", "VSETVL s4", "VRED.SUM s5, v0", "VHALT"), {},
                 targets="F_REDVL"),
        Directed("F_CUDATA", ("VADD v5, v0, v0", "VHALT"), {}, bursts_before=(((1, 0), 0, 4, 1),),
                 targets="F_CUDATA"),
    ]
    return cases + hazard_cases()


CASES = {c.name: c for c in directed_cases()}

__all__ = ["CASES", "DRAM", "Directed", "L1W", "OUT", "PROLOGUE", "PROLOGUE_DESC", "directed_cases", "fp16_words",
           "hazard_cases"]
