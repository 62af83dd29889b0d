"""Bench vec_timing: upstream's vector-core timing corpus (clients/vec_timing/) replayed on our core.

rtl/bench/vt_harness.v feeds each record's flits to the core at (3,3) the
way upstream's bench did and plays its memory; tb/vector/vec_timing/ loads the
corpus, drives the harness, and judges the result in two labelled halves:

* FUNCTIONAL (always enforced): completions, FAULT count, drained DRAM and the
  other DRAM lines, node-drain CU_DATA flits, the bench's own health
  (tb/vector/vec_timing/compare.py) and the memory's response rhythm;
* TIMING (enforced): each RUN's cycle count and per-word execute times against
  upstream's, a summary line per set and its target (tb/vector/vec_timing/judge.py):
  every micro program within ±2 cycles; random programs' relative error median
  ≤ 2 %, 95th percentile ≤ 10 %. A set that misses its target fails the test.

Which records: AGSIM_VT_SELECT = `subset` (the default, `make test`: per micro
group and per random class the record with the fewest upstream bench cycles),
`all` (the 909 programs; `make bench` through tb/perf/vec_timing.py) or a
regular expression of record ids (e.g. 'm[.]vfill[.]'). AGSIM_VT_OUT names a
JSON file for the per-program figures.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import cocotb

from tb.vector.vec_timing.compare import compare
from tb.vector.vec_timing.judge import ProgramTiming, judge_program, summarize
from tb.vector.vec_timing.observed import our_counts, refusal, rhythm_errors
from tb.vector.vec_timing.records import SETS, CorpusError, load_corpus, select
from tb.vector.vec_timing.sim import VtHarness
from tb.lib.verdict import begin_test

SELECT_ENV = "AGSIM_VT_SELECT"
OUT_ENV = "AGSIM_VT_OUT"
SHOWN_ERRORS = 3  # functional errors logged per record (the verdict keeps the first 20 in all)


def _json_program(t: ProgramTiming, functional_errors: list[str]) -> dict[str, object]:
    return {
        "id": t.id, "set": t.set, "exact": t.exact, "rel_error": t.rel_error, "abs_error": t.abs_error,
        "runs": [{"pc": r.pc, "ours": r.ours, "upstream": r.upstream,
                  "first_diff": r.first_diff.describe() if r.first_diff else None} for r in t.runs],
        "functional_errors": functional_errors,
    }


@cocotb.test()
async def test_corpus(dut) -> None:
    """Every selected record: functional comparison and timing judge, both enforced."""
    verdict = begin_test(os.environ.get("AGSIM_BENCH", "vec_timing"), "test_corpus", dut._log)
    log = dut._log
    h = VtHarness(dut)
    try:
        records = select(load_corpus(), os.environ.get(SELECT_ENV, ""))
    except CorpusError as e:
        verdict.setup(False, str(e))
    refused = [msg for msg in (refusal(r, h.limits) for r in records) if msg]
    verdict.setup(not refused, f"{len(refused)} of {len(records)} records do not fit the harness, the first: "
                               f"{refused[0] if refused else ''}")
    log.info("replaying %d records (%s=%r)", len(records), SELECT_ENV, os.environ.get(SELECT_ENV, "subset"))
    timings: list[ProgramTiming] = []
    out: list[dict[str, object]] = []
    for rec in records:
        obs = await h.run(rec)
        checks, errors = compare(rec, obs)
        rhythm = rhythm_errors(obs, h.params["MEM_FIRST"], h.params["MEM_INTERVAL"])
        verdict.add_checks(checks + 1, errors + [f"{rec.id}: harness: {e}" for e in rhythm])
        verdict.cycles += obs.cycles
        for e in (errors + rhythm)[:SHOWN_ERRORS]:
            log.error("FUNCTIONAL %s", e)
        if any(obs.hazards.values()):
            log.info("%s: HAZARD reports of the core %s", rec.id, obs.hazards)
        t = judge_program(rec, our_counts(rec, obs), obs.trace)
        timings.append(t)
        out.append(_json_program(t, errors + rhythm))
        log.info("TIMING %s %s", "exact" if t.exact else "differs", t.describe())
    summaries = {}
    for name in SETS:
        programs = [t for t in timings if t.set == name]
        if not programs:
            continue
        s = summaries[name] = summarize(name, programs)
        log.info("TIMING %s", s.line())
        verdict.check(s.met, f"TIMING {name}: " + "; ".join(s.failures))
    functional = "FUNCTIONAL: " + ("all records match" if not verdict.failures else
                                   f"{len(verdict.failures)} mismatches")
    log.info("%s (%d records, %d checks)", functional, len(records), verdict.checks)
    path = os.environ.get(OUT_ENV)
    if path:
        Path(path).write_text(json.dumps({
            "records": len(records), "checks": verdict.checks, "functional_failures": len(verdict.failures),
            "sim_cycles": verdict.cycles,
            "summaries": {n: {"line": s.line(), "met": s.met} for n, s in summaries.items()},
            "programs": out}, indent=1))
    verdict.finish()


@cocotb.test()
async def test_checkers_fail_on_planted_errors(dut) -> None:
    """The functional comparison catches a difference that flows through the simulation: a random VFILL
    program run on a DRAM image with one bit changed per line drains other lines than upstream's (the clean run
    matches, its reads answered on upstream's rhythm). The judges on doctored values: tests/unit/test_vec_timing_*."""
    verdict = begin_test(os.environ.get("AGSIM_BENCH", "vec_timing"), "test_checkers_fail_on_planted_errors",
                         dut._log)
    h = VtHarness(dut)
    rec = next(r for r in load_corpus(sets=("random",)) if r.label == "vfill")
    obs = await h.run(rec)
    verdict.cycles += obs.cycles
    _, errors = compare(rec, obs)
    verdict.check(not errors, f"the clean run of {rec.id} differs: {errors[:2]}")
    verdict.check(bool(obs.request_cycles) and not rhythm_errors(obs, h.params["MEM_FIRST"], h.params["MEM_INTERVAL"]),
                  f"{rec.id}: {len(obs.request_cycles)} reads, or responses off upstream's rhythm")
    planted = dataclasses.replace(rec, dram_lines=tuple(v ^ (1 << 3) for v in rec.dram_lines))
    obs = await h.run(planted)
    verdict.cycles += obs.cycles
    _, errors = compare(planted, obs)
    verdict.check(any("DRAM line" in e for e in errors), f"a changed DRAM image was not seen in the drain: {errors}")
    verdict.finish()
