"""The protocol §7 reference bench on the models: the fixed encodings, and exactly its 163 checks, all passing."""

from __future__ import annotations

import numpy as np
import pytest

from models import vector
from models.machine.reference_bench import (
    EPILOGUE_ADDR, N_SUB, PROTOCOL_WORDS, REFERENCE_CHECKS, RESULT_WORD, VDRAIN_ADDR, ReferenceChecks, doubled,
    epilogue_step, run_on_models, vdrain_step,
)


def test_programs_are_packed_as_the_protocol_packs_them() -> None:
    for text, word in PROTOCOL_WORDS.items():
        assert vector.assemble_line(text) == [word], text
    drain, epi = vdrain_step(), epilogue_step()
    assert list(drain.words) == [PROTOCOL_WORDS["VDRAIN A0, 0"], PROTOCOL_WORDS["VHALT"]]
    assert drain.descriptors == {0: vector.Descriptor(VDRAIN_ADDR, ((32, N_SUB),))}
    w = list(epi.words)
    assert w[:4] == vector.encode_seti(16, sreg=0) + [vector.encode_setvl(0), vector.encode_setmode("FLAT")]
    for t in range(N_SUB):
        assert w[4 + 3 * t:7 + 3 * t] == [PROTOCOL_WORDS["VLD v0, A1"] | t, PROTOCOL_WORDS["VADD v1, v0, v0"],
                                          PROTOCOL_WORDS["VST v1, A2"] | t]
    assert w[-2:] == [vector.encode_mem("VDRAIN", 3, RESULT_WORD), PROTOCOL_WORDS["VHALT"]]
    assert epi.descriptors == {1: vector.Descriptor(0, ((1, 1),)), 2: vector.Descriptor(64, ((1, 1),)),
                               3: vector.Descriptor(EPILOGUE_ADDR, ((32, N_SUB),))}
    # the DESC values the flits carry: A0 dim 1 = {stride 32 [33:16], bound 9 [15:0]}
    d = [vector.describe_payload(p) for p in drain.payloads()]
    assert "DESC A0.base = 0x8000" in d and "DESC A0.dim1 = stride 32 bound 9" in d
    assert vector.pack_dim(32, 9) == 32 << 16 | 9
    assert len(epi.payloads()) == len(w) + 5 * 3 + 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_reference_makes_163_checks_and_passes_on_the_models(seed: int) -> None:
    ref, seen = run_on_models(np.random.default_rng(seed))
    assert ref.made == REFERENCE_CHECKS
    assert ref.failed == []
    assert seen["vector drain"] == [seen["gold"][t] for t in range(N_SUB)]


def test_the_checks_fail_one_by_one() -> None:
    """A wrong lane is one failed check of 163, named."""
    _, seen = run_on_models(np.random.default_rng(4))
    gold = seen["gold"]
    out = list(seen["epilogue"])
    lanes = vector.word_to_u16(out[3]).copy()
    lanes[5] ^= 1
    out[3] = vector.u16_to_word(lanes)
    ref = ReferenceChecks()
    ref.pass_a(2, [0] * N_SUB)
    ref.pass_b([], False)
    ref.vector_drain(True, [gold[t] for t in range(N_SUB)], gold)
    ref.epilogue(True, False, out, gold)
    assert ref.made == REFERENCE_CHECKS
    assert len(ref.failed) == 3 and ref.failed[-1].startswith("epilogue: word 3 lane 5")
    assert ref.failed[:2] == ["pass B: acks arrived", "pass B: 0 acks, expected 2"]
    assert doubled(0x8000) == 0x8000 and doubled(0x3C00) == 0x4000
