"""The two judges of the timing-corpus replay, fed doctored values: the functional comparison
(tb/vector/vec_timing/compare.py) fails on a wrong DRAM line, completion, CU_DATA flit, a line written outside the
drain and a harness error; the timing judge (tb/vector/vec_timing/judge.py) fails on a wrong cycle count and on a
trace mismatch, naming the first differing word; the set targets; the memory rhythm check; the log layouts."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from models.vector.disasm import disassemble
from tb.vector.vec_timing.compare import compare
from tb.vector.vec_timing.judge import judge_program, median, nearest_rank, summarize
from tb.vector.vec_timing.observed import (
    Observed, RunLog, Signal, our_counts, parse_runs, parse_signals, parse_trace, parse_writes, response_schedule,
    rhythm_errors,
)
from tb.vector.vec_timing.records import HOST, Record, load_set


@pytest.fixture(scope="module")
def micro() -> dict[str, Record]:
    return {r.id: r for r in load_set("micro")}


@pytest.fixture(scope="module")
def random_set() -> dict[str, Record]:
    return {r.id: r for r in load_set("random")}


def as_upstream(rec: Record) -> Observed:
    """What the harness would record for a core that did exactly what upstream's did."""
    res = rec.result
    sigs = [Signal(s.at, HOST, (rec.cu_inst[i] >> 260) & 0xFF, s.code, s.arg) for i, s in enumerate(res.sigs)]
    counts = dict(rec.timed_runs())
    runs = [RunLog(t.at, t.at + counts.get(k, 1), k not in counts, counts.get(k, 1)) for k, t in enumerate(res.trace)]
    return Observed(sigs=sigs, runs=runs, trace=[list(t.words) for t in res.trace], drained=list(res.dram_drained),
                    writes=[(rec.drain_line0 + k, v) for k, v in enumerate(res.dram_drained)],
                    cu_data_out=list(res.cu_data_out), request_cycles=[], response_cycles=[])


# ---------------------------------------------------------------- functional
def test_functional_compare_passes_what_upstream_produced(micro, random_set) -> None:
    for rec in (micro["m.vdrain.VDRAIN.node.n8.drain.vl16"], micro["m.vdrain.VDRAIN.mem.n16.drain.vl64"],
                random_set["r000"], next(r for r in random_set.values() if r.result.faults)):
        checks, errors = compare(rec, as_upstream(rec))
        assert errors == [] and checks > 20, (rec.id, errors)


def test_functional_compare_fails_on_a_wrong_dram_line(micro) -> None:
    rec = micro["m.vdrain.VDRAIN.mem.n16.drain.vl64"]
    obs = as_upstream(rec)
    obs.drained[5] ^= 1 << 77
    _, errors = compare(rec, obs)
    assert errors == [f"{rec.id}: DRAM line {rec.drain_line0 + 5}: {obs.drained[5]:064x}, upstream "
                      f"{rec.result.dram_drained[5]:064x}"]


def test_functional_compare_fails_on_completions_flits_stray_writes_and_harness_errors(micro, random_set) -> None:
    rec = micro["m.vdrain.VDRAIN.node.n8.drain.vl16"]
    obs = as_upstream(rec)
    obs.sigs[3] = replace(obs.sigs[3], code=4, arg=2)  # an IMEM write that faulted
    obs.cu_data_out[2] ^= 1
    obs.writes.append((7, 1))  # a line outside the drain changed
    obs.harness_err = 1 << 2
    _, errors = compare(rec, obs)
    text = "\n".join(errors)
    assert "completion 3: code 0x04 arg 0x2, upstream code 0x00 arg 0x0" in text
    assert "1 FAULT completions, upstream 0" in text
    assert "CU_DATA flit 2:" in text
    assert "DRAM lines outside the drain changed: 7 = " in text
    assert "harness error bit 2: MEM_WR_DATA without an open write" in text
    # a RUN's INST_COMPLETE arg is its count: timing, not function; but the probe must read what the wire says
    obs = as_upstream(rec)
    run = rec.run_flits()[1]
    obs.sigs[run] = replace(obs.sigs[run], arg=obs.sigs[run].arg + 9)
    _, errors = compare(rec, obs)
    assert errors == [f"{rec.id}: RUN 1: the probe read count {obs.runs[1].result} (fault 0), the wire carried "
                      f"{obs.sigs[run].arg}"]
    obs.runs[1] = replace(obs.runs[1], result=obs.sigs[run].arg)
    assert compare(rec, obs)[1] == []
    rec = random_set["r000"]  # BATCH_COMPLETE: its arg (the txn) is functional
    obs = as_upstream(rec)
    obs.sigs[-1] = replace(obs.sigs[-1], arg=obs.sigs[-1].arg + 1)
    assert [e for e in compare(rec, obs)[1] if "completion" in e]


# ---------------------------------------------------------------- timing
def test_the_judge_passes_upstream_and_fails_a_wrong_count(micro) -> None:
    rec = micro["m.alu.VADD.dep8.vl64"]
    obs = as_upstream(rec)
    good = judge_program(rec, our_counts(rec, obs), obs.trace)
    assert good.exact and good.rel_error == 0 and summarize("micro", [good]).met
    counts = our_counts(rec, obs)
    for delta, within in ((2, True), (-3, False)):
        t = judge_program(rec, [counts[0], counts[1] + delta], obs.trace)
        assert not t.exact and t.abs_error == abs(delta) and t.within(2) == within
        s = summarize("micro", [good, t])
        assert s.met == within and s.exact == 1 and s.within == 1 + within
        if not within:
            assert s.failures[0].startswith(f"1 of 2 programs off by more than ±2 cycles, first {rec.id}: ")
            assert f"RUN 1 (pc 128): {counts[1] - 3} vs {counts[1]}" in s.failures[0]
    missing = judge_program(rec, [counts[0], None], obs.trace)  # a RUN of ours that never reported
    assert missing.abs_error == math.inf and not summarize("micro", [missing]).met


def test_the_judge_fails_a_trace_mismatch_and_names_the_first_word(micro) -> None:
    rec = micro["m.alu.VADD.dep8.vl64"]
    obs = as_upstream(rec)
    trace = [list(t) for t in obs.trace]
    pc, t = trace[1][3]
    trace[1][3] = (pc, t + 1)
    trace[1][5] = (trace[1][5][0], trace[1][5][1] + 7)  # a later difference is not the one named
    judged = judge_program(rec, our_counts(rec, obs), trace)
    assert not judged.exact and judged.abs_error == 0
    diff = judged.runs[1].first_diff
    assert diff is not None and (diff.index, diff.ours, diff.upstream) == (3, (pc, t + 1), (pc, t))
    assert diff.describe() == f"word 3: ours pc {pc} at t={t + 1}, upstream pc {pc} at t={t} ({disassemble(rec.imem[pc])})"
    assert pc == 131 and diff.text.startswith("VADD v11, v10")
    assert judged.runs[0].first_diff is None
    short = judge_program(rec, our_counts(rec, obs), [trace[0], trace[1][:2]])  # ours ends early
    assert short.runs[1].first_diff.index == 2 and short.runs[1].first_diff.ours is None


def test_random_targets_on_known_errors(random_set) -> None:
    recs = list(random_set.values())[:20]
    programs = []
    for k, rec in enumerate(recs):  # relative errors 0 %, 0.5 %, ..., 9.5 %
        up = rec.timed_runs()[0][1]
        obs = as_upstream(rec)
        programs.append(judge_program(rec, [None] * (len(rec.runs) - 1) + [round(up * (1 + k / 200))], obs.trace))
    rel = [p.rel_error for p in programs]
    s = summarize("random", programs)
    assert s.median == median(rel) and s.p95 == nearest_rank(rel, 0.95) == sorted(rel)[18]
    assert not s.met and "median relative error" in s.failures[0]  # median about 4.75 % > 2 %
    assert s.worst is programs[19] and s.line().startswith("random: 20 programs, 1 exact, ")
    assert summarize("random", programs[:6]).met  # 0 .. 2.5 %: median 1.25 %, p95 2.5 %
    assert median([3.0, 1.0, 2.0, 10.0]) == 2.5 and nearest_rank([1, 2, 3, 4], 0.95) == 4
    assert not summarize("random", []).met


# ---------------------------------------------------------------- the harness's memory rhythm and its logs
def test_response_schedule_and_its_check() -> None:
    # one taken into an empty queue: presented 5 cycles later; queued ones: every 4 cycles
    assert response_schedule([10, 13, 16, 19, 60], 5, 4) == [15, 19, 23, 27, 65]
    assert response_schedule([10, 15], 5, 4) == [15, 19]  # taken in the cycle the first was presented
    assert response_schedule([10, 16], 5, 4) == [15, 21]  # the queue was empty again
    obs = Observed([], [], [], [], [], [], request_cycles=[10, 13], response_cycles=[15, 19])
    assert rhythm_errors(obs, 5, 4) == []
    obs.response_cycles = [15, 20]
    assert rhythm_errors(obs, 5, 4) == ["read response 1 presented at cycle 20, upstream's rhythm says 19 (request "
                                        "taken at 13)"]
    obs.response_cycles = [15]
    assert rhythm_errors(obs, 5, 4) == ["1 read responses presented for 2 single-line requests"]


def test_log_layouts() -> None:
    # vt_harness: sig {cycle 32, dst {x,y} 8, txn 8, code 8, arg 32}; run {start, end, 7'b0, fault, result};
    # trace {RUN 8, 7'b0, pc 9, cycles 32}; wlog {line 16, data 256}
    assert parse_signals([(1234 << 56) | (0x00 << 48) | (0x40 << 40) | (0x04 << 32) | 7]) == [
        Signal(1234, (0, 0), 0x40, 4, 7)]
    assert parse_runs([(5 << 72) | (99 << 40) | (1 << 32) | 3, (6 << 72) | (0xFFFF_FFFF << 40)]) == [
        RunLog(5, 99, True, 3), RunLog(6, None, False, 0)]
    assert parse_trace([(1 << 48) | (130 << 32) | 9, (2 << 48) | (4 << 32) | 2, 0], 2) == ([[(130, 9)], [(4, 2)]], 1)
    assert parse_writes([(1024 << 256) | 5]) == [(1024, 5)]
