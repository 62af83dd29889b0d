"""Golden model of the vector core ('VC'), as units.md §V pins it: the one import for everything VC.

The model is split by role into models/vector/ (docs/vector_core.md describes each):

* ``isa``     - opcodes, word fields, fault codes, the CU_INST envelope and the encoders;
* ``walk``    - descriptors, the walk and the node-drain base record;
* ``asm``     - program text -> words; ``disasm`` - words and CU_INST payloads -> text;
* ``lanes``   - chains of ALU stages and the VRED trees over numpy vectors;
* ``hazards`` - where upstream hardware would read a stale predicate (H1);
* ``chain_hazards`` - where upstream's chains and FP32 stores may differ (H2, H3, H4);
* ``core``    - ``VectorCore``: state, sequencing, faults and the flits it sends;
* ``kernel_clock``, ``timed_core`` - upstream's kernel clock (clients/vec_timing/latency.md rules 1..10) and
  ``TimedVectorCore``, the core with it: every RUN's execute trace and cycle count.

This module re-exports them and adds the helpers benches share (program
flits, CU_DATA bursts, a lane-by-lane checker). Arithmetic comes from
models.numerics (units.md V.6, V.7).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from models.cu.base import CU_DATA_MAX_LEN, cu_data_bursts, cu_inst
from models.numerics import E8M15, encode

from .asm import assemble, assemble_line
from .core import MAG_DEFAULT, Event, Stats, VectorCore
from .lanes import u16_to_word, u32_to_word, word_to_u16, word_to_u32, words_to_u16
from .disasm import describe_kick, describe_payload, disassemble, listing
from .hazards import Hazard
from .isa import (
    CU_TYPE, DT_FP16, DT_FP32, FAULT_NAMES, IMEM_WORDS, K_CONST, L1_WORDS, LANES, MAX_WALK, N_DESC, N_PREGS, N_SREGS,
    N_VREGS, OPCODES, OPNAMES, SRC_C, SRC_K, SRC_S, SRC_V, VL_MAX, Fault, Mode, RedKind, Word, desc_payload,
    desc_value, encode_alu, encode_bare, encode_mem, encode_seti, encode_setmode, encode_setvl, encode_vbcast,
    encode_vcvt, encode_vdrain_node, encode_vloop, encode_vred, encode_vshuf, imem_payload, pack_dim, run_payload,
    unpack_dim,
)
from .walk import Descriptor, node_record, walk_addresses, walk_total
from .kernel_clock import FillMemory, KernelClock
from .timed_core import TimedVectorCore

Coord = tuple[int, int]

F_DTYPE, F_VSRC, F_CHAIN, F_OPCODE, F_LEN, F_LOOP, F_VL, F_REDVL, F_CUDATA = (int(f) for f in Fault)


def e8m15(x: float) -> int:
    """E8M15 pattern of a float (nearest even), e.g. for a VSETI immediate."""
    return int(encode(float(x), E8M15))


def program_payloads(words: Sequence[int], descriptors: Mapping[int, Descriptor] | None = None,
                     base: int = 0, *, wrap: bool = False) -> list[int]:
    """IMEM writes of `words` from IMEM address `base`, then base + four dims of each descriptor (5 DESC each).

    The core's 9-bit pc wraps modulo IMEM_WORDS (docs/vector_core.md), so a program may be loaded across
    the last IMEM word: with `wrap` its addresses run on from word 0, as the pc will fetch them. Without it
    a program that runs past the last word is refused, since a caller that loads from `base` and runs
    elsewhere most likely placed it wrongly. More words than IMEM holds would overwrite their own start and
    are refused either way."""
    if len(words) > IMEM_WORDS:
        raise ValueError(f"{len(words)} words do not fit the {IMEM_WORDS}-word IMEM")
    if not wrap and base + len(words) > IMEM_WORDS:
        raise ValueError(f"{len(words)} words from IMEM address {base} run past word {IMEM_WORDS - 1}")
    out = [imem_payload((base + i) % IMEM_WORDS, w) for i, w in enumerate(words)]
    for ad, d in sorted((descriptors or {}).items()):
        out.extend(desc_payload(ad, fld, v) for fld, v in d.writes())
    return out


def program_flits(unit: Coord, src: Coord, words: Sequence[int], descriptors: Mapping[int, Descriptor],
                  pc: int = 0, *, txn: int = 0x40, run_last: int = 0, base: int = 0,
                  wrap: bool = False) -> list[int]:
    """CU_INSTs that load a program and its descriptors and RUN it from `pc` (the RUN is the last flit).

    `base` and `wrap` place the words as program_payloads does; a program that runs where it is loaded
    passes base=pc, and wrap=True when it may cross IMEM's last word."""
    payloads = program_payloads(words, descriptors, base, wrap=wrap) + [run_payload(pc)]
    return [cu_inst(unit, src, txn, run_last if i == len(payloads) - 1 else 0, p) for i, p in enumerate(payloads)]


def cu_data_burst(dst: Coord, src: Coord, words: Sequence[int], *, off: int = 0, buf: int = 0, flags: int = 0,
                  ack: Coord = (0, 0), txn: int = 0) -> list[int]:
    """One CU_DATA burst: a descriptor then one data flit per word (last on the final one)."""
    if not 1 <= len(words) <= CU_DATA_MAX_LEN:
        raise ValueError(f"a CU_DATA burst carries 1..{CU_DATA_MAX_LEN} data flits, got {len(words)}")
    return cu_data_bursts(dst, src, buf, off, words, flags=flags, ack=ack, txn=txn)


def compare_fp16_words(expected: Sequence[int], got: Sequence[int], what: str = "word",
                       limit: int = 10) -> tuple[int, list[str]]:
    """(checks, errors): per 256-bit word and per FP16 lane, bit for bit; a missing or extra word fails."""
    errors: list[str] = []
    checks = 0
    for i in range(max(len(expected), len(got))):
        if i >= len(got) or i >= len(expected):
            checks += 1
            errors.append(f"{what} {i}: missing (expected {expected[i]:#066x})" if i >= len(got)
                          else f"{what} {i}: extra {got[i]:#066x}")
            continue
        e, g = word_to_u16(expected[i]), word_to_u16(got[i])
        for lane in range(LANES):
            checks += 1
            if e[lane] != g[lane]:
                errors.append(f"{what} {i} lane {lane}: expected {int(e[lane]):#06x}, got {int(g[lane]):#06x}")
    if len(errors) > limit:
        errors = errors[:limit] + [f"... {len(errors) - limit} more"]
    return checks, errors


__all__ = [
    "CU_TYPE", "DT_FP16", "DT_FP32", "Descriptor", "Event", "FAULT_NAMES", "FillMemory", "KernelClock", "TimedVectorCore", "F_CHAIN", "F_CUDATA", "F_DTYPE", "F_LEN",
    "F_LOOP", "F_OPCODE", "F_REDVL", "F_VL", "F_VSRC", "Fault", "Hazard", "IMEM_WORDS", "K_CONST", "L1_WORDS",
    "LANES", "MAG_DEFAULT", "MAX_WALK", "Mode", "N_DESC", "N_PREGS", "N_SREGS", "N_VREGS", "OPCODES", "OPNAMES",
    "RedKind", "SRC_C", "SRC_K", "SRC_S", "SRC_V", "Stats", "VL_MAX", "VectorCore", "Word", "assemble",
    "assemble_line", "compare_fp16_words", "cu_data_burst", "desc_payload", "desc_value", "describe_kick", "describe_payload",
    "disassemble", "e8m15", "encode_alu", "encode_bare", "encode_mem", "encode_seti", "encode_setmode",
    "encode_setvl", "encode_vbcast", "encode_vcvt", "encode_vdrain_node", "encode_vloop", "encode_vred",
    "encode_vshuf", "imem_payload", "listing", "node_record", "pack_dim", "program_flits", "program_payloads",
    "run_payload", "u16_to_word", "u32_to_word", "unpack_dim", "walk_addresses", "walk_total", "word_to_u16", "words_to_u16",
    "word_to_u32",
]
