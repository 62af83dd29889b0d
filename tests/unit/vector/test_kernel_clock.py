"""The golden vector core's kernel clock (models/vector/kernel_clock.py, timed_core.py) against upstream's
own cycles: every executed word's execute count and every RUN's count of the 909 programs of
clients/vec_timing, at upstream's timing facts; a wrong fact fails; an override moves the count as its rule
says."""

from __future__ import annotations

import pytest

from models.vector.kernel_clock import KernelClock
from models.vector.memory import CoreWithMemory
from models.vector.timed_core import TimedVectorCore
from tb.vector.vec_timing.judge import ProgramTiming, judge_program
from tb.vector.vec_timing.records import CORE, Record, load_corpus

MAG = (0, 1)  # any coordinate but the core's and the bench host's (0, 0)


@pytest.fixture(scope="module")
def corpus() -> list[Record]:
    return load_corpus()


def timed(rec: Record, facts: dict[str, int] | None = None) -> tuple[ProgramTiming, TimedVectorCore]:
    """The record's flits on a timed golden core whose memory is a DRAM beside it, judged as the RTL's run."""
    core = TimedVectorCore(CORE, MAG, facts)
    mem = CoreWithMemory(core)
    for i, word in enumerate(rec.dram_lines):
        mem.dram[rec.dram_line0 + i] = word
    mem.take_all(rec.flits())
    return judge_program(rec, core.run_counts, core.run_traces), core


def test_every_word_and_run_of_the_corpus_keeps_upstreams_clock(corpus: list[Record]) -> None:
    words = runs = 0
    wrong = []
    for rec in corpus:
        verdict, core = timed(rec)
        words += sum(len(t) for t in core.run_traces)
        runs += len(verdict.timed)
        if not verdict.exact:
            wrong.append(verdict.describe())
    assert len(corpus) == 909 and not wrong, wrong[:5]
    upstream_words = sum(len(run.words) for rec in corpus for run in rec.result.trace)
    assert words == upstream_words and runs == sum(len(rec.timed_runs()) for rec in corpus)


def test_a_wrong_fact_fails_the_corpus(corpus: list[Record]) -> None:
    """FETCH 5 instead of 4: the second word of every RUN executes a cycle late (the check can fail)."""
    exact = sum(timed(rec, {"FETCH": 5})[0].exact for rec in corpus)
    assert exact < len(corpus) // 10


def test_an_override_moves_a_run_as_its_rule_says(corpus: list[Record]) -> None:
    """A RUN of 8 independent VADDs at VL 16 (rule 3): each executes 1 + nc + FETCH after the one before, so a
    fetch of 2 instead of 4 brings the last one 7 x 2 cycles sooner; VHALT ends PIPE_DRAIN after the last
    beat (rule 1), so the count is 14 cycles less."""
    rec = next(r for r in corpus if r.id == "m.alu.VADD.indep8.vl16")
    (base, _), (fast, _) = timed(rec), timed(rec, {"vector.FETCH": 2})
    assert base.runs[-1].ours == base.runs[-1].upstream == 126
    assert fast.runs[-1].ours == 126 - 7 * 2


def test_an_unknown_fact_or_a_value_outside_its_limits_is_refused() -> None:
    with pytest.raises(ValueError, match="timing 'vector.FECTH' names no timing fact"):
        KernelClock({"vector.FECTH": 2})
    with pytest.raises(ValueError, match=r"timing vector.FETCH=0 is outside 1..64 cycles"):
        KernelClock({"FETCH": 0})
