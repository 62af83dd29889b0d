"""The vector core's assembler, disassembler, encoders and hazard reports (models/vector/__init__.py,
models/vector/isa.py, models/vector/hazards.py): the example words of protocol.md §6 both ways, a disassemble /
assemble round trip of random words, program text, the model's encoders against our own V.4 / V.2 field
encoders (units.md V.2, V.3, V.4, V.11 node records), describe_payload of each CU_INST kind (V.2), and the
H1 hazard reports (units.md V.8 H1).

Stimuli, our own encoders and the checkers come from tests/unit/vector/vc_spec.py, whose note on independence
applies here: every control expectation is computed from the spec text, only element values come from
models.numerics (e8m15, e8m15_cvt), and model state is set and read through the core's attributes.
A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import random

import pytest

from models.vector import isa as vc_isa
from models.vector import assemble, assemble_line, describe_payload, disassemble, node_record
from tests.unit.vector.vc_spec import (
    S, C, K, VMOV, VADD, VMUL, VFMA, VCMPLT, VCMPGT, VCMPEQ, VBCAST, VSHUF, VSETI, alu, vld, vst, vcvt, vfill,
    vdrain_node, W_BAR, W_HALT, vseti, vsetvl, vsetmode, vloop, vred, pro, p_imem, p_desc, p_run, p_dim, retired, Rig,
)


# ================================================================ assembler / disassembler / encoders
EXAMPLES = [(0xF8000000, "VHALT"), (0xE0000000, "VBAR"), (0xE8000000, "VFILL A0, 0"),
            (0x18020000, "VADD v1, v0, v0"), (0xA1200000, "VLD v0, A1"), (0xA9420000, "VST v1, A2"),
            (0xF0000000, "VDRAIN A0, 0")]


@pytest.mark.parametrize("word, text", EXAMPLES)
def test_protocol_example_words(word, text):
    assert disassemble(word) == text
    assert assemble_line(text) == [word]


def test_disassemble_assemble_round_trip_random_words():
    rng = random.Random(2024)
    bad = []
    for _ in range(20000):
        w = rng.getrandbits(32)
        if (w >> 27) == VSETI:
            imm = rng.getrandbits(32)
            text = disassemble(w, imm)
            got = assemble_line(text)
            if got != [w, imm & 0xFFFFFF]:
                bad.append((w, text, got))
            continue
        text = disassemble(w)
        got = assemble_line(text)
        if got != [w]:
            bad.append((w, text, got))
    assert not bad, f"{len(bad)} words do not round-trip, e.g. " + "; ".join(
        f"{w:08x} -> {t!r} -> {[hex(x) for x in g]}" for w, t, g in bad[:5])


def test_assemble_program_text():
    text = """
        VSETI s15, 20     ; VL
        VSETVL s15
        VSETMODE D2
        VMUL v9, v1, s4
        VFMA v5, c0, s4, s6 ?p3
        VLD v0, A1-7, FP32
        VRED.SUM s1, v7
        VDRAIN A3, 0, node=(1,2), buf=5, sig
        VHALT
    """
    assert assemble(text) == (vseti(20, 15) + [vsetvl(15), vsetmode(1), alu(VMUL, vd=9, va=1, vb=4, sb=S),
                                               alu(VFMA, vd=5, va=0, vb=4, vc=6, sa=C, sb=S, sc=S, pr=3, pm=1),
                                               vld(0, 1, -7, 2), vred(0, 1, 7),
                                               vdrain_node(3, 0, (1, 2), 5, 1), W_HALT])


def test_model_encoders_match_the_spec_fields():
    rng = random.Random(5)
    for _ in range(300):
        f = dict(vd=rng.randrange(16), va=rng.randrange(16), vb=rng.randrange(16), vc=rng.randrange(16),
                 sa=rng.randrange(4), sb=rng.randrange(4), sc=rng.randrange(4), pr=rng.randrange(4),
                 pm=rng.randrange(4))
        op = rng.randrange(0x12)
        assert vc_isa.encode_alu(op, **f) == alu(op, **f)
        off, ad, vd, dt = rng.randrange(-8192, 8192), rng.randrange(8), rng.randrange(16), rng.randrange(8)
        assert vc_isa.encode_mem("VLD", ad, off, vd, dt) == vld(vd, ad, off, dt)
        assert vc_isa.encode_mem("VST", ad, off, vd, dt) == vst(vd, ad, off, dt)
        start = rng.randrange(512)
        assert vc_isa.encode_mem("VFILL", ad, start) == vfill(ad, start)
        dst, buf, sig = (rng.randrange(16), rng.randrange(16)), rng.randrange(16), rng.randrange(2)
        assert vc_isa.encode_vdrain_node(ad, start, dst, buf, sig) == vdrain_node(ad, start, dst, buf, sig)
        value = rng.getrandbits(40)
        fld = rng.randrange(8)
        assert vc_isa.desc_payload(ad, fld, value) == p_desc(ad, fld, value)
        assert vc_isa.desc_value(p_desc(ad, fld, value)) == value
        stride, bound = rng.randrange(-(1 << 17), 1 << 17), rng.randrange(1 << 16)
        assert vc_isa.pack_dim(stride, bound) == p_dim(stride, bound)
        assert vc_isa.unpack_dim(p_dim(stride, bound) | rng.getrandbits(6) << 34) == (stride, bound)
        assert vc_isa.imem_payload(start, value & 0xFFFFFFFF) == p_imem(start, value & 0xFFFFFFFF)
        assert vc_isa.run_payload(start) == p_run(start)
    assert vc_isa.encode_seti(0x123456, sreg=3) == vseti(0x123456, 3)
    assert vc_isa.encode_seti(0x654321, k3=True) == vseti(0x654321, 0, K)
    assert vc_isa.encode_setvl(7) == vsetvl(7) and vc_isa.encode_setmode("TREE") == vsetmode(3)
    assert vc_isa.encode_vloop(2, 9) == vloop(2, 9) and vc_isa.encode_vred("DOT", 1, 2, 3, 1) == vred(4, 1, 2, 3, 1)
    assert vc_isa.encode_vbcast(3, 4, to_vector=True) == alu(VBCAST, vd=3, va=4, sa=S)
    assert vc_isa.encode_vbcast(3, 4, to_vector=False) == alu(VBCAST, vd=3, va=4)
    assert vc_isa.encode_vshuf(1, 2, 3) == alu(VSHUF, vd=1, va=2, vb=3) and vc_isa.encode_vcvt(1, 2, 1) == vcvt(1, 2, 1)
    assert vc_isa.encode_bare("VHALT") == W_HALT and vc_isa.encode_bare("VBAR") == W_BAR
    assert node_record(0x123, ack=(5, 3), fin=(6, 9), mesh=2) == 0x123 | 0x35 << 16 | 2 << 24 | 0x96 << 26
    with pytest.raises(ValueError, match="vd"):
        vc_isa.encode_alu(VADD, vd=16)
    with pytest.raises(ValueError, match="off"):
        vc_isa.encode_mem("VLD", 0, 8192)


def test_describe_payload_each_cu_inst_kind():
    t = describe_payload(p_imem(17, 0x18020000))
    assert "17" in t and "18020000" in t and "VADD v1, v0, v0" in t
    t = describe_payload(p_desc(5, 0, 0xC5_4321_0FE0))
    assert "A5" in t and "0xc543210fe0" in t.lower()
    t = describe_payload(p_desc(2, 1, p_dim(-32, 0) | 0x3F << 34))
    assert "A2" in t and "-32" in t and "bound 0" in t and "ignored" in t
    for fld in (5, 6, 7):
        assert "no effect" in describe_payload(p_desc(1, fld, 99))
    assert "33" in describe_payload(p_run(33)) and "RUN" in describe_payload(p_run(33))
    for op in [0] + list(range(4, 16)):
        assert "no effect" in describe_payload(op << 252 | 12345)


# ================================================================ hazards (models/vector/hazards.py, V.8 H1)
def _hz(rig):
    return [(h.name, h.pc, h.writer_pc, h.pred, h.window, h.vl) for h in rig.core.hazards]


def test_h1_compare_then_predicated_read_is_reported_measured():
    rig = Rig()
    retired(rig.go([alu(VCMPLT, va=1, vb=2, pr=1), alu(VMOV, vd=5, va=3, pr=1, pm=1), W_HALT]))
    assert _hz(rig) == [("H1", 1, 0, 1, "measured", 128)]
    assert rig.core.hazards[0].word == alu(VMOV, vd=5, va=3, pr=1, pm=1)


def test_h1_two_intervening_instructions_report_nothing():
    rig = Rig()
    retired(rig.go(pro(vl=16) + [alu(VCMPLT, va=1, vb=2), alu(VADD, vd=6, va=1, vc=1), alu(VADD, vd=6, va=1, vc=1),
                                 alu(VMOV, vd=5, va=3, pm=2), W_HALT]))
    assert _hz(rig) == []


@pytest.mark.parametrize("vl, reported", [(16, True), (32, True), (64, False), (128, False)])
def test_h1_one_intervening_flat_alu_word(vl, reported):
    rig = Rig()
    retired(rig.go(pro(vl=vl) + [alu(VCMPEQ, va=1, vb=2, pr=2), alu(VADD, vd=6, va=1, vc=1),
                                 alu(VMOV, vd=5, va=3, pr=2, pm=1), W_HALT]))
    assert _hz(rig) == ([("H1", 5, 3, 2, "measured", vl)] if reported else [])


@pytest.mark.parametrize("between", ["VLD", "VSETMODE"])
def test_h1_draining_instruction_in_between_clears_it(between):
    rig = Rig()
    w = vld(7, 0) if between == "VLD" else vsetmode(0)
    retired(rig.go([alu(VCMPLT, va=1, vb=2), w, alu(VMOV, vd=5, va=3, pm=1), W_HALT]))
    assert _hz(rig) == []


def test_h1_any_all_right_after_a_compare():
    rig = Rig()
    retired(rig.go([alu(VCMPGT, va=1, vb=2, pr=3), vred(6, 4, pr=0), W_HALT]))
    assert _hz(rig) == [("H1-ANYALL", 1, 0, 3, "measured", 128)]
