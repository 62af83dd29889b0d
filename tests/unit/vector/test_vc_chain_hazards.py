"""The model's reports of upstream hazards H2, H3 and H4 (models/vector/chain_hazards.py, units.md V.8).

Each hazard has a program that must report it (with the line's fields checked)
and the safe variant that must not: a draining word between the chains (H2,
H4), an FP16 store (H3). The expected fields are derived by hand from the
program text (pc of each word, the stage that differs, the walk of a store at
the VL set), never copied from a run. A report never changes a result: the
final state of each reporting program equals that of its safe twin where the
twin only adds a draining word that computes nothing.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.vector.chain_hazards import ChainTracker, draining, stage_key, v_reads
from models.vector.isa import Word
from models.vector import assemble, disassemble
from tb.vector.hazard_counts import model_counts
from tb.vector.directed import PROLOGUE, PROLOGUE_DESC, hazard_cases
from tests.unit.vector.vc_spec import Rig, retired

# pc 0..4 of every program: VL 128 (VSETI is two words), then v0/v1 hold data from S registers
SETUP = ["VSETI s9, 128", "VSETVL s9", "VSETI s1, 0x3fc000", "VSETI s2, 0x400000"]  # words 0..6
P0 = 7  # pc of the first word after SETUP


def run(lines: list[str]) -> Rig:
    rig = Rig()
    retired(rig.go(assemble(SETUP + lines)))
    return rig


def reports(rig: Rig, hid: str) -> list[str]:
    return [h.line(disassemble) for h in rig.core.hazards if h.hid == hid]


# ================================================================ H2
CHAIN_A = ["VADD v5, v0, v1", "VMUL v5, c0, s1 [c=k0]"]
CHAIN_B = ["VADD v6, v0, v1", "VSUB v6, c0, s1 [b=k0]"]  # stage 1: another op


def test_h2_back_to_back_chains_with_other_stage_settings_report():
    rig = run(["VSETMODE D2"] + CHAIN_A + CHAIN_B + ["VSETMODE FLAT", "VHALT"])
    # VSETMODE at P0, chain A at P0+1..P0+2, chain B at P0+3..P0+4
    lines = reports(rig, "H2")
    assert len(lines) == 1
    assert lines[0].startswith(f"HAZARD H2 pc={P0 + 3} inst=")
    assert lines[0].endswith(f"prev_pc={P0 + 1} depth=2 stages=1")


def test_h2_a_draining_word_between_the_chains_reports_nothing():
    for drain in ("VSHUF v7, v0, s1", "VLD v7, A0", "VST v7, A0", "VCVT v7, v0, RAW", "VBCAST v7, s1",
                  "VSETMODE D2"):
        rig = run(["VSETMODE D2"] + CHAIN_A + [drain] + CHAIN_B + ["VSETMODE FLAT", "VHALT"])
        assert reports(rig, "H2") == [], drain


def test_h2_equal_settings_report_nothing_and_k_numbers_count_mod_4():
    same = ["VADD v6, v2, v3", "VMUL v6, c0, s1 [c=k4]"]  # k4 is K0: the settings equal chain A's
    rig = run(["VSETMODE D2"] + CHAIN_A + same + ["VSETMODE FLAT", "VHALT"])
    assert reports(rig, "H2") == []


def test_h2_a_scalar_value_changed_between_the_chains_is_a_difference():
    rig = run(["VSETMODE D2"] + CHAIN_A + ["VSETI s1, 0x3f8000"] + CHAIN_A + ["VSETMODE FLAT", "VHALT"])
    # chain A at P0+1, VSETI at P0+3..P0+4, chain A again at P0+5: same words, S1 read as another value
    assert [line.split("(")[0] for line in reports(rig, "H2")] == [f"HAZARD H2 pc={P0 + 5} inst="
                                                                   f"{assemble(CHAIN_A)[0]:08x} "]


def test_h2_d4_names_every_differing_stage():
    a = ["VSUB v6, v2, s1", "VMUL v6, c0, c0 [c=k0]", "VADD v6, c0, k1 [b=k0]", "VMAX v6, c0, s2 [c=k0]"]
    b = ["VSUB v7, v2, s1", "VMUL v7, c0, c0 [c=k0]", "VSUB v7, c0, k1 [b=k0]", "VMAX v7, c0, s1 [c=k0]"]
    rig = run(["VSETMODE D4"] + a + b + ["VSETMODE FLAT", "VHALT"])
    assert reports(rig, "H2")[0].endswith(f"prev_pc={P0 + 1} depth=4 stages=23")


# ================================================================ H3
def test_h3_every_fp32_store_reports_its_walk():
    rig = Rig()
    words = assemble(["VSETI s9, 40", "VSETVL s9", "VST v0, A0, FP32", "VST v1, A0+32", "VHALT"])
    retired(rig.go(words, {0: (100, [(1, 64)])}))
    # VL 40: 3 chunks, 6 walk elements (2 per chunk); the FP16 store at pc 4 reports nothing
    assert reports(rig, "H3") == [f"HAZARD H3 pc=3 inst={words[3]:08x} ({disassemble(words[3])}) vl=40 walk=0..5"]


# ================================================================ H4
D4_CHAIN = ["VSUB v6, v2, s1", "VMUL v6, c0, c0 [c=k0]", "VADD v6, c0, k1 [b=k0]", "VMAX v6, c0, s2 [c=k0]"]
READER = ["VADD v8, v3, v6", "VMUL v8, c0, s1 [c=k0]", "VADD v8, c0, k1 [b=k0]", "VMAX v8, c0, s2 [c=k0]"]


@pytest.mark.parametrize("vl, reported", [(128, True), (113, True), (112, False), (64, False)])
def test_h4_a_reader_of_a_32_beat_chain_destination(vl, reported):
    rig = Rig()
    words = assemble([f"VSETI s9, {vl}", "VSETVL s9", "VSETI s1, 0x3fc000", "VSETI s2, 0x400000", "VSETMODE D4"]
                     + D4_CHAIN + READER + ["VSETMODE FLAT", "VHALT"])
    retired(rig.go(words))
    # the chain at P0+1, the reader at P0+5 reads v6 as its c operand
    want = [f"HAZARD H4 pc={P0 + 5} inst={words[P0 + 5]:08x} ({disassemble(words[P0 + 5])}) v=6 chain_pc={P0 + 1}"]
    assert reports(rig, "H4") == (want if reported else [])


def test_h4_a_draining_word_between_reports_nothing_and_the_result_is_the_same():
    hazard = run(["VSETMODE D4"] + D4_CHAIN + READER + ["VSETMODE FLAT", "VHALT"])
    safe = run(["VSETMODE D4"] + D4_CHAIN + ["VSETMODE D4"] + READER + ["VSETMODE FLAT", "VHALT"])
    assert len(reports(hazard, "H4")) == 1 and reports(safe, "H4") == []
    assert np.array_equal(hazard.core.v, safe.core.v)  # a report changes no result


def test_h4_a_vbcast_to_s_reads_and_a_compare_chain_has_no_vector_destination():
    rig = run(["VSETMODE D4"] + D4_CHAIN + ["VBCAST s3, v6", "VSETMODE FLAT", "VHALT"])
    assert [line.split(" inst")[0] for line in reports(rig, "H4")] == [f"HAZARD H4 pc={P0 + 5}"]
    cmp_chain = D4_CHAIN[:3] + ["VCMPGT p1, c0, s2 [c=k0]"]
    rig = run(["VSETMODE D4"] + cmp_chain + READER + ["VSETMODE FLAT", "VHALT"])
    assert reports(rig, "H4") == []


# ================================================================ the tracker alone
def test_tracker_rules_by_hand():
    w = Word(assemble(["VADD v1, v2, s3 [b=k0 c=v4]"])[0])  # VADD's short form names a and c
    assert v_reads(w) == [2, 4] and not draining(w)
    assert v_reads(Word(assemble(["VNEG v1, v2"])[0])) == [2, 0, 0]  # every V-selected field, read by the op or not
    assert draining(Word(assemble(["VBCAST v1, s2"])[0])) and not draining(Word(assemble(["VBCAST s1, v2"])[0]))
    assert stage_key(Word(assemble(["VMUL v1, c0, s3 [c=k7]"])[0]), [0, 0, 0, 0x123456] + [0] * 12, 0x777) == (
        0x05, 2, 1, 3, 0, 0, 3, 0x123456, 3, 0x777)
    t = ChainTracker()
    assert t.chain(10, w, [(1,)], 128, 1) is None  # the first chain: nothing to differ from
    assert t.chain(12, w, [(2,)], 128, 1).detail == "prev_pc=10 depth=2 stages=1"
    assert t.read(14, w) is None  # a D2 chain never leaves a register unguarded
    t.chain(20, w, [(2,), (2,), (2,)], 113, 4)
    assert t.read(24, w).detail == "v=4 chain_pc=20"
    t.reset()
    assert t.read(25, w) is None


# ================================================================ the module bench's directed hazard cases
@pytest.mark.parametrize("case", hazard_cases(), ids=lambda c: c.name)
def test_directed_hazard_cases_report_what_they_claim_on_the_model(case):
    """tb/vector/directed.py's hazard cases, after its prologue, report exactly their `reports` here too
    (the module bench then checks RTL = model)."""
    rig = Rig()
    retired(rig.go(assemble(PROLOGUE), {ad: (d.base, d.dims) for ad, d in PROLOGUE_DESC.items()}))
    rig.core.hazards.clear()
    retired(rig.go(assemble(case.lines), {ad: (d.base, d.dims) for ad, d in case.descriptors.items()}, pc=case.pc))
    assert model_counts(rig.core.hazards) == case.reports


# ================================================================ the benches' per-id comparison
def test_rtl_bus_unpacks_by_id_and_the_comparison_names_the_id_that_differs():
    from tb.vector.hazard_counts import count_errors, delta, model_counts, rtl_counts

    bus = 4 << 96 | 3 << 64 | 2 << 32 | 1  # {H4, H3, H2, H1}
    assert rtl_counts(bus) == {"H1": 1, "H2": 2, "H3": 3, "H4": 4}
    assert delta(rtl_counts(bus), rtl_counts(0xFFFF_FFFF << 32)) == {"H1": 1, "H2": 3, "H3": 3, "H4": 4}
    rig = run(["VSETMODE D2"] + CHAIN_A + CHAIN_B + ["VSETMODE FLAT", "VHALT"])
    model = model_counts(rig.core.hazards)
    assert model == {"H1": 0, "H2": 1, "H3": 0, "H4": 0}
    assert count_errors(rtl_counts(1 << 32), model) == []  # the RTL's bus with one H2 agrees
    # an H2 missed and an H3 invented: the totals agree, the ids do not
    wrong = {**model, "H2": 0, "H3": 1}
    assert count_errors(wrong, model) == ["HAZARD H2 reports: RTL 0, model 1", "HAZARD H3 reports: RTL 1, model 0"]
