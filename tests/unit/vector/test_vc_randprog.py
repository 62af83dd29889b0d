"""The vector core's random-program generator (tb/vector/vc_rand/): replay, coverage, timing rules.

The coverage test runs 300 cases on the golden model and asserts on the model's
own Stats (every opcode, every fault code, every mode, ...) and on the
coverage model (tb/cover/vector.py), so a generator change that stops
reaching something fails here, by name, before any RTL runs.
"""

from __future__ import annotations

import pytest

from models.cu.base import SigCode, cu_inst
from models.noc.flit import FIELDS, FlitType
from models.vector import (
    Descriptor, F_CUDATA, FAULT_NAMES, Fault, Mode, assemble, program_flits, run_payload,
)
from models.vector import isa
from tb.cover import vector as vector_cover
from tb.cover.report import closure_text
from tb.vector.vc_rand import (
    DEFAULT_GEOMETRY, FOCI, MAX_WORDS, MIN_WORDS, Burst, CaseState, Geometry, RunawayProgram, make_case, mem_walk,
    new_model, predict, run_fault, run_result, run_sequence, sequence, state_before, timing_violations,
)

SEED = 2024
N = 300
G = DEFAULT_GEOMETRY


def _key(case):
    """Everything a bench sends for a case, as one comparable value."""
    return (case.focus, case.label, case.pc, case.words, case.inst, case.bursts, dict(case.dram),
            case.descriptors, case.expect_fault, case.vl_after, case.mode_after)


@pytest.fixture(scope="module")
def ran():
    """300 cases of one sequence, predicted on one TracingCore, each RUN checked against the generator."""
    return run_sequence(SEED, N)


# ---------------------------------------------------------------- replay
def test_same_seed_same_sequence_other_seed_other_sequence() -> None:
    a = [_key(c) for c in sequence(7, 40)]
    assert a == [_key(c) for c in sequence(7, 40)]
    b = [_key(c) for c in sequence(8, 40)]
    assert sum(x != y for x, y in zip(a, b)) > 30


@pytest.mark.parametrize("index", [0, 1, 23, 24, 57])
def test_a_case_replays_from_seed_and_index_alone(index: int) -> None:
    whole = list(sequence(5, index + 1))
    assert _key(make_case(5, index)) == _key(whole[index])
    assert state_before(5, index).next_index == index


def test_cases_are_made_in_order() -> None:
    state = CaseState()
    make_case(1, 0, state)
    with pytest.raises(ValueError, match="before case 1, not case 2"):
        make_case(1, 2, state)


def test_every_focus_once_per_round() -> None:
    n = len(FOCI)
    foci = [c.focus for c in sequence(3, 1 + 2 * n)]
    assert foci[0] == "init"
    assert sorted(foci[1:1 + n]) == sorted(FOCI) == sorted(foci[1 + n:])


# ---------------------------------------------------------------- the model agrees with the generator
def test_every_run_ends_as_the_generator_built_it(ran) -> None:
    """run_sequence raised already if a fault code, VL, mode or descriptor differed; the intents are varied."""
    _, cases = ran
    faults = {c.expect_fault for c in cases}
    assert faults == {None, *range(1, 10)}
    assert {c.mode_after for c in cases} == set(range(4))
    assert len({c.vl_after for c in cases}) > 30


def test_predict_returns_what_the_core_sent() -> None:
    model = new_model()
    cases = list(sequence(11, 30))
    for case in cases:
        events = predict(model, case)
        # one completion per CU_INST, to the host, the RUN's last among them
        done = [e for e in events if e.dst == G.host and FIELDS["type"].extract(e.flit) == FlitType.CU_SIGNAL
                and (e.flit >> 248) & 0xFF != SigCode.DATA_RECEIVED]
        assert len(done) == len(case.inst)
        code, arg = run_result(events, case)
        assert FIELDS["txn"].extract(done[-1].flit) == case.run_txn
        if case.expect_fault is None:
            assert code in (SigCode.INST_COMPLETE, SigCode.BATCH_COMPLETE)
        else:
            assert (code, arg) == (SigCode.FAULT, case.expect_fault)
    assert all(e.dst in (G.mag, *G.node_targets) for e in model.sent)


def test_predict_refuses_a_model_elsewhere() -> None:
    case = make_case(1, 0)
    with pytest.raises(ValueError, match="the case expects"):
        predict(new_model((2, 2)), case)


# ---------------------------------------------------------------- coverage
def test_300_cases_close_every_item_a_bench_run_must(ran) -> None:
    """The coverage model (tb/cover/vector.py) on 300 cases: every item but the walk cross closed, and the
    model's own Stats agree (every opcode, fault code, mode, VRED kind, both chain depths)."""
    model, _ = ran
    st = model.core.stats
    cov = vector_cover.measure(model)
    assert vector_cover.bench_holes(cov) == [], closure_text(cov)
    assert vector_cover.item(cov, "opcode").hit == 32 and vector_cover.item(cov, "fault").hit == 9
    assert {f"VSETMODE.{m.name}" for m in Mode} <= set(st.executed)
    assert {f"VRED.{k}" for k in ("SUM", "MAX", "MIN", "SUMSQ", "DOT", "EXPSUM", "ANY", "ALL")} <= set(st.executed)
    assert st.chains[2] > 50 and st.chains[4] > 50
    assert {"VLOOP", "VDRAIN", "VDRAIN.node", "VFILL", "VBAR", "VHALT", "VSETI.K3", "VCVT"} <= set(st.executed)


def test_coverage_counts_what_ran(ran) -> None:
    """Bin hits are counts of the model's history: issued words (a chain once) by opcode, faulted RUNs by
    code."""
    model, cases = ran
    cov = vector_cover.measure(model)
    st = model.core.stats
    opcodes = dict(vector_cover.item(cov, "opcode").bins)
    assert sum(opcodes.values()) == len(model.core.trace) > 10 * N
    assert opcodes["VHALT"] == st.executed["VHALT"] and opcodes["VFILL"] == st.executed["VFILL"]
    faults = dict(vector_cover.item(cov, "fault").bins)
    assert sum(faults.values()) == sum(c.expect_fault is not None for c in cases)
    assert faults[FAULT_NAMES[F_CUDATA]] == sum(c.expect_fault == F_CUDATA for c in cases)
    assert faults["F_LOOP"] == st.faults["F_LOOP"]
    modes = dict(vector_cover.item(cov, "mode").bins)
    assert sum(modes.values()) == len(model.core.trace)
    text = closure_text(cov, "vector")
    assert text.splitlines()[1].startswith("  vector: ") and "opcode" in text


def test_a_model_without_a_log_is_refused() -> None:
    from models.vector.core import VectorCore
    from models.vector.memory import CoreWithMemory

    plain = CoreWithMemory(VectorCore(G.unit, G.mag))
    for case in sequence(1, 3):
        predict(plain, case)
    with pytest.raises(TypeError, match="keeps no log to sample"):
        vector_cover.measure(plain)


def test_a_hole_is_named_and_a_bench_run_fails_on_it() -> None:
    """Three cases leave holes: bench_holes names them by item and bin (the checker fails on a short run)."""
    model, _ = run_sequence(SEED, 3)
    cov = vector_cover.measure(model)
    holes = vector_cover.bench_holes(cov)
    unhit = {f"{i.name.split('.', 1)[1]}:{b}" for i in cov.items for b, n in i.bins
             if n == 0 and i.name.split(".", 1)[1] not in vector_cover.REGRESSION_ONLY}
    assert set(holes) == unhit and len(holes) == len(unhit)  # every zero bin named once, nothing else
    ran = {isa.OPNAMES[isa.Word(x.word).op] for x in model.core.trace}
    assert {h.split(":", 1)[1] for h in holes if h.startswith("opcode:")} == set(isa.OPNAMES.values()) - ran
    assert any(h.startswith("fault:") for h in holes) and any(h.startswith("goals:") for h in holes)


# ---------------------------------------------------------------- the timing rules
def test_the_timing_rules_hold_on_what_executed(ran) -> None:
    model, _ = ran
    assert timing_violations(model) == []


def test_fill_sources_and_drain_destinations_are_disjoint(ran) -> None:
    _, cases = ran
    fill_words = {a >> 5 for c in cases for a in c.dram}
    drain_words = set()
    for c in cases:
        assert all(G.in_fill(a) and a % 32 == 0 for a in c.dram)
        for w in map(isa.Word, c.words):
            if w.op == isa.OP_VDRAIN and not w.node and c.descriptors[w.ad].total <= isa.MAX_WALK:
                walk = mem_walk(c.descriptors[w.ad])
                drain_words.update(a >> 5 for a in walk)
    assert fill_words and drain_words and not fill_words & drain_words
    # the windows are where every executed walk went, not just what the generator meant
    trace = ran[0].core.trace
    assert all(G.in_fill(a) for x in trace if isa.Word(x.word).op == isa.OP_VFILL for a in x.mem)
    assert all(G.in_drain(a) for x in trace if isa.Word(x.word).op == isa.OP_VDRAIN for a in x.mem)


def test_programs_are_short_and_bursts_come_between_runs(ran) -> None:
    _, cases = ran
    assert all(len(c.words) <= MAX_WORDS + 4 for c in cases)
    assert sum(len(c.words) >= MIN_WORDS for c in cases) > 0.95 * N
    for c in cases:
        assert isa.INST_RUN == c.inst[-1][2] >> 252 and c.inst[-1][2] == run_payload(c.pc)
        imem = {(p >> 243) & 0x1FF: p & 0xFFFF_FFFF for _, _, p in c.inst if p >> 252 == isa.INST_IMEM}
        assert [imem[(c.pc + i) % 512] for i in range(len(c.words))] == list(c.words)
    assert any(c.pc + len(c.words) > 512 for c in cases)  # the pc-wrap focus


def test_node_drains_never_go_to_the_core_or_the_memory_agent(ran) -> None:
    model, _ = ran
    dsts = {x.node_dst for x in model.core.trace if x.node_dst is not None}
    assert dsts and dsts <= set(G.node_targets)


def test_the_checker_sees_a_broken_rule() -> None:
    """timing_violations is not vacuous: a VLD of unordered fill words, a drain onto a fill source, a fault
    with fills in flight and a drain to the core itself are all reported."""
    model = new_model()
    descs = {0: Descriptor(0x40, ((32, 4),)), 1: Descriptor(3, ((1, 1),)), 2: Descriptor(0x40, ((32, 2),)),
             3: Descriptor(0, ((0, 2),))}
    text = f"""VFILL A0, 0
               VLD v1, A1
               VBAR
               VDRAIN A2, 8
               VDRAIN A3, 0, node=({G.unit[0]},{G.unit[1]})
               VFILL A0, 100
               VSETI s0, 0
               VSETVL s0
               VHALT"""
    model.take_all(program_flits(G.unit, G.host, assemble(text), descs))
    errors = timing_violations(model)
    assert any("pc 1: VLD touches L1 words [3]" in e for e in errors), errors  # A1: one word, repeated
    assert any("DRAM words are VFILL sources and VDRAIN destinations" in e for e in errors), errors
    assert any("VDRAIN to node" in e for e in errors), errors
    assert any("F_VL:0x0 raised with VFILL responses in flight" in e for e in errors), errors


def test_a_runaway_program_raises_instead_of_hanging() -> None:
    model = new_model()
    model.core.step_limit = 500
    words = assemble("VSETI s0, 0xffffff\nVLOOP s0, 1\nVMOV v0, v1\nVHALT")
    with pytest.raises(RunawayProgram, match="more than 500 instructions"):
        model.take_all(program_flits(G.unit, G.host, words, {}))


# ---------------------------------------------------------------- bursts
def test_bursts_rejected_interleaved_and_accepted() -> None:
    ok = Burst(511, (1,))
    assert not ok.rejected and not ok.poisons
    assert Burst(510, (1, 2, 3)).rejected  # off + len = 512
    assert Burst(0, (1,), buf=1).rejected
    mixed = Burst(10, (1, 2, 3), src="peer1", intruder_at=1, intruder="peer0", intruder_word=9)
    assert mixed.poisons and not mixed.rejected
    flits = mixed.flits(G)
    srcs = [(FIELDS["src_x"].extract(f), FIELDS["src_y"].extract(f)) for f in flits]
    assert srcs == [G.peers[1], G.peers[1], G.peers[0], G.peers[1]]
    assert [FIELDS["last"].extract(f) for f in flits] == [0, 0, 0, 1]


def test_a_poisoned_burst_faults_the_next_run_before_its_first_instruction() -> None:
    model = new_model()
    for case in sequence(4, 120):
        events = predict(model, case)
        if any(b.poisons for b in case.bursts):
            assert run_fault(events, case) == F_CUDATA == case.expect_fault
            assert model.core.fault_log[-1].variant.startswith("F_CUDATA:run-start:")
    assert FAULT_NAMES[F_CUDATA] == "F_CUDATA"


def test_cu_inst_envelope_is_from_the_host(ran) -> None:
    _, cases = ran
    case = next(c for c in cases if c.bursts and c.index)
    flits = case.inst_flits()
    assert flits == [cu_inst(G.unit, G.host, t, last, p) for t, last, p in case.inst]
    assert case.streams() == {G.host: case.data_flits() + flits}
    assert case.describe().splitlines()[0].startswith(f"case {case.index} of seed {SEED}: ")


# ---------------------------------------------------------------- other benches
@pytest.mark.parametrize("base, words", [(0, 512), (2**40 - 32 * 600, 1200)])
def test_walks_stay_in_another_dram_window(base: int, words: int) -> None:
    """A smaller DRAM, and one straddling the 40-bit wrap: every executed walk is inside, coverage holds."""
    geo = Geometry(unit=(2, 1), host=(2, 0), mag=(0, 0), peers=((3, 1),), dram_base=base, dram_words=words)
    model, cases = run_sequence(9, N, geometry=geo)
    assert all(geo.in_fill(a) for c in cases for a in c.dram)
    for x in model.core.trace:
        op = isa.Word(x.word).op
        assert all(geo.in_fill(a) if op == isa.OP_VFILL else geo.in_drain(a) for a in x.mem)
    assert vector_cover.bench_holes(vector_cover.measure(model)) == []
    assert timing_violations(model) == []


def test_a_dram_too_small_for_a_256_word_fill_is_refused() -> None:
    with pytest.raises(ValueError, match="even number of words >= 512"):
        Geometry(dram_words=256)
