"""Flit damage (docs/flit_bits.md): the bit map, the program rule, and a seeded sample of flips on a real bundle.

The sample test is the bench's claim: no bit the map calls read passes silently, and no bit it calls harmless
changes anything. The planted-model test shows the classifier would say so: a cluster model that ignores
``anchor`` (the hardware reads it, units.md C.6) makes anchor flips pass, and they are reported as silent.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from models.bundle.flit_bits import Field, Use, check_cover, fields_of
from models.bundle.flit_usage import plan_trace, staged_flits, unused_flip
from models.bundle.judge import image_failures
from models.bundle.reader import BUNDLES, Bundle
from models.cluster import ClusterCore
from models.cluster.isa import INST_FIELDS
from models.machine.event_model import UNIT_MODELS, run_bundle
from models.machine.layouts import FUSED4, UnitKind
from models.mag.model import MagUnit
from models.noc.flit import FlitType, make_flit
from models.vector import isa
from models.vector.core import VectorCore
from tb.fuzz.flit_damage import OUTCOMES, Flip, credit_covered, damage, format_table, main, run_once

BUNDLE = BUNDLES / "linear_relu_m32k64n32"  # clusters and vector cores, 78 flits of every kind


def test_every_flit_of_a_bundle_is_mapped_bit_for_bit() -> None:
    """Each staged flit's fields cover bits 0..287 exactly once (check_cover inside fields_of)."""
    flits = staged_flits(Bundle(BUNDLE).meta)
    for f in flits:
        assert sum(len(fld.bits()) for fld in fields_of(f.unit, f.value, f.final)) == 288


def test_a_gap_or_an_overlap_in_the_map_is_refused() -> None:
    head = [Field("a", 287, 1, Use.READ, "")]
    with pytest.raises(ValueError, match=r"flit bits \[0\]"):
        check_cover(head)
    with pytest.raises(ValueError, match="flit bit 1 is in both a and b"):
        check_cover(head + [Field("b", 1, 0, Use.READ, "")])


def test_the_program_rule_knows_an_unused_descriptor_from_a_used_one() -> None:
    """A DESC flit for a descriptor no walk names is unused; the same bit of a walked descriptor is not."""
    flits = staged_flits(Bundle(BUNDLE).meta)
    clean = plan_trace(flits)
    desc = [i for i, f in enumerate(flits) if f.unit == "VC" and f.value >> 252 & 0xF == isa.INST_DESC]
    base = next(i for i in desc if (flits[i].value >> 246) & 7 == 0 and (flits[i].value >> 249) & 7 == 0)
    assert not unused_flip(flits, base, 212 + 6, clean)  # A0.base bit 6: the VLD walks move
    ad_bit = 249 + 2  # A0 -> A4, which no walk of the program names; but A0 then keeps its reset base 0 ...
    assert unused_flip(flits, base, ad_bit, clean) == ((flits[base].value >> 212) & ((1 << 34) - 1) == 0)
    assert unused_flip(flits, base, 100, clean)  # ... and a bit of no field moves nothing


def test_the_program_rule_leaves_out_words_that_do_nothing() -> None:
    """linear_relu's vector program (per core: VSETI S0 128, VSETI, VSETVL S0, VSETMODE FLAT, then VLD V0 ...):
    its VSETVL sets the VL in force, so it does nothing, and so does a VINV V0 put in its place (V0 is loaded
    whole before it is read) or a VBAR (no fill outstanding); turned into a VSETI it changes S0 (read)."""
    flits = staged_flits(Bundle(BUNDLE).meta)
    clean = plan_trace(flits)
    vsetvl = next(i for i, f in enumerate(flits) if f.unit == "VC" and f.value & 0xFFFF_FFFF == 0xC0000000)
    assert isa.word_of(flits[vsetvl].value & 0xFFFF_FFFF ^ 1 << 30).name == "VINV"
    assert unused_flip(flits, vsetvl, 30, clean)  # VINV V0, dead
    assert isa.word_of(flits[vsetvl].value & 0xFFFF_FFFF ^ 1 << 29).name == "VBAR"
    assert unused_flip(flits, vsetvl, 29, clean)
    assert isa.word_of(flits[vsetvl].value & 0xFFFF_FFFF ^ 1 << 28).name == "VSETI"
    assert not unused_flip(flits, vsetvl, 28, clean)
    vabs = next(i for i, f in enumerate(flits) if f.unit == "VC" and f.value & 0xFFFF_FFFF == 0x100E0000)
    assert not unused_flip(flits, vabs, 17, clean)  # its vd: the VADD after it reads V7, not V6


def test_credit_rule_needs_a_seed_that_covers_the_round() -> None:
    meta = {"plan": [{"kind": "round", "steps": [{"op": "seed", "credits": 4}, {"op": "kick", "nflits": 4}]},
                     {"kind": "round", "steps": [{"op": "seed", "credits": 3}, {"op": "kick", "nflits": 4}]}]}
    assert credit_covered(meta) == {0}


def test_a_seeded_sample_has_no_silent_pass() -> None:
    """400 flips across every kind of linear_relu_m32k64n32: every read bit FAILS, FAULTS or STOPS, every
    harmless one PASSES, and each of the catching outcomes occurs."""
    report = damage(BUNDLE, sample=400, seed=3)
    counts = report.counts()
    assert len(report.results) == 400
    assert set(counts) == {"MG FILL", "MG GEMM", "MG DRAIN", "VC IMEM", "VC IMEM imm", "VC DESC", "VC RUN"}
    assert [r.flip for r in report.silent] == [], format_table(report)
    assert [r.flip for r in report.contradictions] == [], format_table(report)
    seen = {r.outcome for r in report.results}
    assert seen >= {"FAILED", "FAULT", "STOPPED", "PASSED"} and seen <= set(OUTCOMES)


def test_a_thousand_read_bits_each_change_the_outcome_or_are_caught() -> None:
    """The issue's measure: a seeded 1,150 of the bits the static map calls read (at least 1,000 still read
    once the program rule has looked: some descriptors are never used), across every kind, flipped one at a
    time; none passes silently (each FAILS, FAULTS, STOPS, or is MASKED: the machine's writes or end state
    differ from the undamaged run's)."""
    report = damage(BUNDLE, sample=1150, seed=11, keep=lambda f: f.cls == "read")
    read = [r for r in report.results if r.flip.cls == "read"]  # the program rule refines a few to unused/credit
    assert len(report.results) == 1150 and len(read) >= 1000, format_table(report)
    assert len(report.counts()) == 7  # every flit kind of the bundle
    assert [r.flip for r in report.silent] == [], format_table(report)
    assert [r.flip for r in report.contradictions] == [], format_table(report)
    assert all(r.outcome != "PASSED" for r in read)


class AnchorBlind(ClusterCore):
    """A planted defect: a cluster that reads anchor as 40 whatever the instruction says."""

    def _execute(self, inst: int) -> list:
        lsb = INST_FIELDS["anchor"][1]
        return super()._execute(inst & ~(0xFF << lsb) | 40 << lsb)


def test_a_model_that_ignores_a_read_field_is_caught_as_a_silent_pass() -> None:
    """Every anchor bit of both GEMMs: on the planted model the read bits pass and are reported silent; on the
    golden models none is."""
    units = {**UNIT_MODELS, UnitKind.CLUSTER: lambda c, mm: AnchorBlind(c, mm.machine.mag)}

    def anchor(f: Flip) -> bool:
        return f.field.startswith("MG.GEMM.anchor")

    planted = damage(BUNDLE, runner=partial(run_once, units=units), keep=anchor)
    assert len(planted.results) == 16
    assert {(r.flip.field, r.outcome) for r in planted.silent} == {("MG.GEMM.anchor[6:0]", "PASSED")}
    assert len(planted.silent) == 14
    golden = damage(BUNDLE, keep=anchor)
    assert golden.silent == [] and golden.contradictions == []
    assert {r.flip for r in golden.results} == {r.flip for r in planted.results}


def test_the_command_prints_the_table_and_refuses_bad_input(capsys) -> None:
    assert main([str(BUNDLE), "--sample", "0"]) == 2
    assert "refused: --sample 0" in capsys.readouterr().err
    assert main(["/nonexistent"]) == 2
    assert main([str(BUNDLE), "--sample", "14", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "| kind | flips | read |" in out and "| all | 14 |" in out


def test_a_byte_written_outside_the_outputs_fails_the_verdict() -> None:
    b = Bundle(BUNDLE)
    image = run_bundle(b).image.copy()
    assert image_failures(b, image) == []
    temp = next(r for r in b.regions if r.kind != "output")
    image[temp.addr - b.image_base] ^= 1
    assert image_failures(b, image) == [f"image: 1 byte(s) outside the output regions differ from upstream's rtl "
                                        f"dram_final (first at {temp.addr:#x}, region {temp.name} ({temp.kind}))"]


def _write(mag: MagUnit, src: tuple[int, int], addr: int) -> None:
    mag.take(make_flit(mag.coord, src, FlitType.MEM_WR_REQ, 1, 0, addr << 216))
    mag.take(make_flit(mag.coord, src, FlitType.MEM_WR_DATA, 1, 1, 7))


def test_two_sources_writing_one_word_in_one_round_is_a_race() -> None:
    mag = MagUnit((0, 1), base=0)
    _write(mag, (1, 0), 0x40)
    _write(mag, (1, 0), 0x40)  # the same source twice: ordered by the protocol
    assert mag.errors == []
    mag.new_epoch()
    _write(mag, (2, 0), 0x40)  # a later round: ordered by the host
    assert mag.errors == []
    _write(mag, (1, 0), 0x40)
    assert mag.errors == ["write race: DRAM word 0x40 written by (2, 0) and by (1, 0) with nothing ordering them "
                          "(one round); which lands last is up to timing"]


def test_a_write_outside_the_loaded_memory_is_reported() -> None:
    mag = MagUnit((0, 1), base=0)
    _write(mag, (1, 0), 0x1000)  # nothing loaded yet: no check
    mag.allow(0, 4)  # words 0..3
    _write(mag, (1, 0), 0x60)
    assert len(mag.errors) == 0
    _write(mag, (1, 0), 0x80)
    assert mag.errors == ["write outside the loaded memory: DRAM word 0x80 written by (1, 0) lies in no image the "
                          "host loaded"]


def test_a_run_into_unwritten_imem_is_reported() -> None:
    core = VectorCore((1, 0), (0, 1))
    agent = (0, 0)
    core.take(make_flit((1, 0), agent, FlitType.CU_INST, 0, 0, isa.imem_payload(4, 0xF8000000)))  # VHALT at 4
    core.take(make_flit((1, 0), agent, FlitType.CU_INST, 0, 1, isa.run_payload(4)))
    assert core.undefined_reads == []
    core.take(make_flit((1, 0), agent, FlitType.CU_INST, 0, 1, isa.run_payload(2)))  # words 2, 3 never written
    assert core.undefined_reads == ["a RUN fetched IMEM word 2, which no IMEM flit has written since reset "
                                    "(units.md V.1: IMEM is not reset; the hardware runs whatever it holds)"]


def test_a_predicated_write_on_a_never_written_predicate_is_reported() -> None:
    core = VectorCore((1, 0), (0, 1))
    agent = (0, 0)
    program = [isa.encode_alu("VMUL", vd=1, va=0, vb=0, pm=2, pr=3), 0xF8000000]  # V1 = V0 * V0 where !P3
    for addr, word in enumerate(program):
        core.take(make_flit((1, 0), agent, FlitType.CU_INST, 0, 0, isa.imem_payload(addr, word)))
    core.take(make_flit((1, 0), agent, FlitType.CU_INST, 0, 1, isa.run_payload(0)))
    assert core.undefined_reads == ["pc 0: VMUL is predicated on P3, which no compare has written since reset "
                                    "(units.md V.1: P is not reset)"]


def test_machine_model_is_unchanged_by_the_damage_harness() -> None:
    """The harness's watched machine gives the plain machine model's run on the undamaged bundle."""
    b = Bundle(BUNDLE)
    assert run_once(b, FUSED4).outcome == "PASSED"
    assert np.array_equal(run_bundle(b).image, b.expected_rtl["dram_final"])
