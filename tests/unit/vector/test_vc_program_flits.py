"""models.vector.program_flits: the one builder of a program's CU_INSTs, held against the spec's encoders.

A program that runs at `pc` near the end of IMEM is loaded across word 511 -> 0, as the 9-bit pc fetches
it (docs/vector_core.md): the directed WRAP cases of the module bench rely on it. The expected flits are
built here from tests/unit/vector/vc_spec.py's own payload and flit encoders, so a wrong wrap (or none)
cannot agree with both.
"""

from __future__ import annotations

import pytest

import models.vector
from models.vector import Descriptor, VectorCore, assemble, e8m15, program_flits
from tests.unit.vector.vc_spec import HOST, T_INST, UNIT, mkflit, p_desc, p_dim, p_imem, p_run

WORDS = assemble(["VSETI s5, 1.5", "VSETVL s5", "VHALT"])  # 4 words: the VSETI's immediate is the second
DESCS = {3: Descriptor(0x100, ((2, 4),))}


def spec_flits(addresses: list[int], pc: int, *, txn: int = 0x40, last: int = 1) -> list[int]:
    """IMEM writes of WORDS at `addresses`, A3's base and four dims, RUN at `pc` (`last` on the RUN alone)."""
    payloads = [p_imem(a, w) for a, w in zip(addresses, WORDS, strict=True)]
    payloads += [p_desc(3, 0, 0x100), p_desc(3, 1, p_dim(2, 4))] + [p_desc(3, f, p_dim(0, 1)) for f in (2, 3, 4)]
    payloads.append(p_run(pc))
    return [mkflit(UNIT, HOST, T_INST, txn, last if i == len(payloads) - 1 else 0, p) for i, p in enumerate(payloads)]


def test_a_program_at_510_is_loaded_across_the_end_of_imem() -> None:
    flits = program_flits(UNIT, HOST, WORDS, DESCS, 510, run_last=1, base=510, wrap=True)
    assert flits == spec_flits([510, 511, 0, 1], 510)
    core = VectorCore(UNIT)
    for f in flits:
        core.take(f)
    assert [core.imem[a] for a in (510, 511, 0, 1)] == WORDS
    assert core.s[5] == e8m15(1.5)  # the VSETI at 511 took its immediate from word 0


def test_a_wrong_wrap_is_caught() -> None:
    """Loaded from 510 as if IMEM had no end, or wrapping at the wrong depth, the flits are not the spec's."""
    right = spec_flits([510, 511, 0, 1], 510)
    assert program_flits(UNIT, HOST, WORDS, DESCS, 510, run_last=1, base=510, wrap=True) == right
    with pytest.raises(ValueError, match="4 words from IMEM address 510 run past word 511"):
        program_flits(UNIT, HOST, WORDS, DESCS, 510, base=510)  # without wrap a crossing program is refused
    assert program_flits(UNIT, HOST, WORDS, DESCS, 510, run_last=1) == spec_flits([0, 1, 2, 3], 510) != right
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(models.vector, "IMEM_WORDS", 511)
        assert program_flits(UNIT, HOST, WORDS, DESCS, 510, run_last=1, base=510, wrap=True) != right


def test_words_that_do_not_fit_imem_are_refused_even_with_wrap() -> None:
    with pytest.raises(ValueError, match="513 words do not fit the 512-word IMEM"):
        program_flits(UNIT, HOST, [0] * 513, {}, 0, wrap=True)
