"""Module bench of the vector core (rtl/vector/vector_core.v): RTL = golden model, case by case.

Every test hands the same flits to the RTL (on rtl/bench/vc_harness.v, with
a real memory agent at (0,1)) and to models/vector (CoreWithMemory), and
tb/vector/bench.py compares every captured flit, the architectural state
after each RUN (L1, V, S, K3, P, VL, mode), the DRAM, the HAZARD reports
(H1..H4, counted per id) and the monitors.
"""

from __future__ import annotations

import cocotb

from models.vector import Descriptor, assemble, cu_data_burst, program_flits, u16_to_word
from tb.vector.hazard_counts import HAZARD_IDS
from tb.vector.bench import HOST, UNIT, VectorTB, compare_state


@cocotb.test()
async def test_smoke_silu(dut) -> None:
    """The compiled linear+SiLU epilogue shape on 32 delivered words, drained to DRAM."""
    b = VectorTB(dut, "test_smoke_silu")
    data = [u16_to_word([b.rng.getrandbits(16) & 0x7BFF | (b.rng.getrandbits(1) << 15) for _ in range(16)])
            for _ in range(32)]
    text = ["VSETI s0, 128", "VSETI s4, 0xbfb8aa", "VSETVL s0", "VSETMODE FLAT"]
    for c in range(4):
        text += [f"VLD v0, A0+{8 * c}", "VMUL v7, v0, s4", "VEXP2 v7, v7", "VADD v7, v7, k1", "VINV v7, v7",
                 "VMUL v7, v0, v7", f"VST v7, A1+{8 * c}"]
    text += ["VDRAIN A2, 32", "VHALT"]
    words = assemble(text)
    descs = {0: Descriptor(0, ((1, 8),)), 1: Descriptor(32, ((1, 8),)), 2: Descriptor(0x8000_1000, ((32, 32),))}
    flits = cu_data_burst(UNIT, HOST, data, off=0) + program_flits(UNIT, HOST, words, descs)
    r = await b.run_case({HOST: flits}, label="silu", words=words)
    b.record(r)
    b.v.finish()


@cocotb.test()
async def test_checkers_fail_on_planted_errors(dut) -> None:
    """Every comparison of the bench reports a wrong value planted in the model after a real run: a V
    element, an L1 lane, S, K3, a P bit, VL, mode, a DRAM word, a captured flit, the count of each hazard id."""
    b = VectorTB(dut, "test_checkers_fail_on_planted_errors")
    data = [u16_to_word([0x3C00 + k for k in range(16)]) for _ in range(8)]
    words = assemble(["VSETI s0, 16", "VSETVL s0", "VLD v0, A0", "VADD v1, v0, v0", "VST v1, A0+8",
                      "VDRAIN A1, 8", "VHALT"])
    descs = {0: Descriptor(0, ((1, 1),)), 1: Descriptor(0x8000_0400, ((32, 1),))}
    flits = cu_data_burst(UNIT, HOST, data) + program_flits(UNIT, HOST, words, descs)
    b.record(await b.run_case({HOST: flits}, label="clean"))
    core = b.model.core
    rtl = b.read_state()

    def plant(what: str, change) -> None:
        snap = core.snapshot()
        change(snap)
        _, errors = compare_state(snap, rtl)
        b.v.check(bool(errors), f"compare_state did not report a planted error in {what}")

    plant("V", lambda s: s["v"].__setitem__((1, 3), s["v"][1, 3] ^ 1))
    plant("L1", lambda s: s["l1"].__setitem__((8, 2), s["l1"][8, 2] ^ 0x8000))
    plant("S", lambda s: s["s"].__setitem__(0, s["s"][0] + 1))
    plant("K3", lambda s: s.__setitem__("k3", s["k3"] ^ 4))
    plant("P", lambda s: s["p"].__setitem__((2, 127), not s["p"][2, 127]))
    plant("VL", lambda s: s.__setitem__("vl", 17))
    plant("mode", lambda s: s.__setitem__("mode", 2))
    word = 0x8000_0400 >> 5
    b.model.dram[word] = b.model.dram.get(word, 0) ^ (1 << 200)
    _, errors = await b._compare_dram()
    b.v.check(bool(errors), "the DRAM comparison did not report a planted word")
    b.model.dram[word] ^= 1 << 200
    core.s[3] ^= 1  # a model now one S register off: the next case must fail on it, and so must a wrong flit
    halt = program_flits(UNIT, HOST, assemble(["VHALT"]), {}, run_last=1)
    run = await b.run_case({HOST: halt}, label="planted S")
    b.v.check(any("S3" in e for e in run.errors), "run_case did not report the planted S3")
    core.s[3] ^= 1
    for hid in HAZARD_IDS:  # the RTL now seems to have reported one report of this id that the model did not
        b.rtl_hazards[hid] -= 1
        run = await b.run_case({HOST: halt}, label=f"planted {hid}")
        named = [e for e in run.errors if "HAZARD" in e]
        b.v.check(len(named) == 1 and named[0].endswith(f"HAZARD {hid} reports: RTL 1, model 0"),
                  f"run_case did not report the planted {hid} count alone: {named}")
    core.coord = (1, 2)  # every predicted flit now names another source: each captured flit must differ
    run = await b.run_case({HOST: halt}, label="planted flit")
    b.v.check(any("WRONG" in e for e in run.errors), "run_case did not report a wrong captured flit")
    core.coord = UNIT
    b.v.finish()


# ================================================================ directed: one case per opcode and per fault
from tb.vector.directed import CASES, PROLOGUE, PROLOGUE_DESC, fp16_words  # noqa: E402


@cocotb.test()
@cocotb.parametrize(case=list(CASES))
async def test_directed(dut, case: str) -> None:
    """One opcode or one fault: the prologue fills L1 and V0..V3, then the case runs on RTL and model."""
    b = VectorTB(dut, f"test_directed/case={case}")
    d = CASES[case]
    pro = assemble(PROLOGUE)
    flits = cu_data_burst(UNIT, HOST, fp16_words(b.rng, 64), off=0) + program_flits(UNIT, HOST, pro, PROLOGUE_DESC)
    b.record(await b.run_case({HOST: flits}, label="prologue", words=pro))
    words = assemble(d.lines)
    flits = []
    for src, off, n, buf in d.bursts_before:
        flits += cu_data_burst(UNIT, src, fp16_words(b.rng, n), off=off, buf=buf)
    flits += program_flits(UNIT, HOST, words, d.descriptors, d.pc, base=d.pc, wrap=True)
    res = await b.run_case({HOST: flits}, dram=d.dram, label=case, words=words)
    b.record(res)
    if d.reports is not None:  # hazard cases: the reports the program must (and must not) make, RTL = model
        b.v.check(res.hazards == dict(d.reports), f"HAZARD reports {res.hazards}, the case wants {dict(d.reports)}")
    b.v.finish()


# ================================================================ compiled programs, unmodified
from enum import Enum  # noqa: E402

from models.bundle.reader import Bundle, bundle_names  # noqa: E402
from models.noc.flit import FIELDS, FlitType  # noqa: E402
from models.vector.replay import output_mismatches, replay_refusal  # noqa: E402

REPLAYABLE = [n for n in bundle_names() if replay_refusal(Bundle(n)) is None]
# an Enum, so cocotb names each test after its bundle (it numbers plain strings longer than 10 characters)
BundleName = Enum("BundleName", {n: n for n in REPLAYABLE})


def _reroute(flits, dst, src) -> list[int]:
    """A dispatched flit re-addressed to the bench's core and host (every other bit unchanged)."""
    route = dst[0] << 284 | dst[1] << 280 | src[0] << 276 | src[1] << 272
    return [(f & ~(0xFFFF << 272)) | route for f in flits]


@cocotb.test()
@cocotb.parametrize(bundle=list(BundleName))
async def test_compiled_bundle(dut, bundle: BundleName) -> None:
    """The public compiler's vector program of a bundle, flit for flit as dispatched, on the RTL core:
    RTL = model after every kick, and the output lanes equal upstream RTL's (the hazard bundle: upstream's
    models', with each H1 occurrence reported; no bundle meets H2, H3 or H4)."""
    bundle = bundle.value
    b = VectorTB(dut, f"test_compiled_bundle/bundle={bundle}")
    bun = Bundle(bundle)
    await b.start()
    image = bun.image.copy()
    final = bun.expected_rtl["dram_final"]
    for r in bun.regions:
        if r.kind == "temp":
            lo = r.addr - bun.image_base
            image[lo:lo + r.nbytes] = final[lo:lo + r.nbytes]
    dram = bun.words(image)
    hazards = dict.fromkeys(HAZARD_IDS, 0)
    for rnd in bun.rounds:
        if rnd.unit != "VC":
            continue
        for k, kick in enumerate(rnd.kicks):
            flits = _reroute(kick.dispatched(bun.agent), UNIT, HOST)
            res = await b.run_case({HOST: flits}, dram=dram, label=f"round {rnd.index} kick {k}")
            dram = {}
            hazards = {hid: hazards[hid] + res.hazards[hid] for hid in HAZARD_IDS}
            b.record(res)
    got = await b.dram.read_bytes(bun.image_base - b.dram_base, len(image))
    which = "models" if bundle == "select_lt_m32n64" else "rtl"
    for name, bad in output_mismatches(bun, got, which).items():
        b.v.check(len(bad) == 0, f"output {name}: {len(bad)} FP16 lanes differ from upstream's {which} "
                                 f"(first slots {list(bad[:5])})")
    b.v.check((hazards["H1"] > 0) == (bundle == "select_lt_m32n64"), f"{hazards['H1']} HAZARD H1 reports")
    b.v.check(hazards["H2"] == hazards["H3"] == hazards["H4"] == 0, f"HAZARD reports {hazards}: compiled code "
                                                                   "emits no chain and no FP32 store")
    b.tb.log.info("bundle %s: HAZARD reports %s", bundle, hazards)
    b.v.finish()


# ================================================================ constrained-random: RTL = model, program by program
import os  # noqa: E402
from pathlib import Path  # noqa: E402

from tb.cover import vector as vector_cover  # noqa: E402
from tb.cover.report import closure_text  # noqa: E402
from tb.vector.vc_rand import CaseState, make_case, new_model  # noqa: E402

RANDOM_PROGRAMS_ENV = "AGSIM_VC_PROGRAMS"  # make bench raises it (tb/perf/vc_random.py); make test: the default
RANDOM_STATS_ENV = "AGSIM_VC_STATS_OUT"  # where the benchmark wants the measured numbers (JSON)
# A shard of a regression (tb.farm, VC_PROGRAMS=): cases FIRST.. of the generator seed, made from the state of a
# freshly reset core (the generator's CaseState positioned at FIRST), so every shard runs alone and replays
# alone; its coverage is judged on the union of the shards (tb.farm), not per shard
RANDOM_FIRST_ENV = "AGSIM_VC_FIRST"
RANDOM_PROGRAMS = 300


@cocotb.test()
async def test_random_programs(dut) -> None:
    """Constrained-random programs (tb/vector/vc_rand/), one after another on one core whose state
    carries over, every other one under hostile stalls: after every RUN the RTL equals the model in every
    flit, L1, V, S, K3, P, VL, mode, DRAM and hazard report. Coverage is measured on the model (tb/cover/
    vector.py) and must close every item a run of this length closes (all 32 opcodes, every fault, modes,
    chain positions, VRED kinds ...; tb.cover.vector.bench_holes)."""
    n = int(os.environ.get(RANDOM_PROGRAMS_ENV, RANDOM_PROGRAMS))
    shard = RANDOM_FIRST_ENV in os.environ
    first = int(os.environ.get(RANDOM_FIRST_ENV, "0"))
    b = VectorTB(dut, "test_random_programs")
    b.model = new_model()
    seed = b.tb.seed
    state = CaseState(next_index=first)
    cycles = 0
    hazards = dict.fromkeys(HAZARD_IDS, 0)
    for i in range(first, first + n):
        case = make_case(seed, i, state)
        res = await b.run_case(case.streams(), dram=case.dram, label=f"{i} of generator seed {seed} ({case.label})",
                               words=case.words, hostile=bool(i % 2))
        cycles += sum(res.run_cycles)
        hazards = {hid: hazards[hid] + res.hazards[hid] for hid in HAZARD_IDS}
        b.record(res)
        if res.errors:
            b.tb.log.error("%s", case.describe())
            b.tb.log.error("replay it on the model: state = tb.vector.vc_rand.CaseState(next_index=%d), then "
                           "tb.vector.vc_rand.make_case(%d, k, state) for k = %d..%d", first, seed, first, i)
            break
    await b.check_dram_now()
    cov = vector_cover.measure(b.model)
    gaps = vector_cover.bench_holes(cov)
    if not shard:  # a shard's coverage is judged on the union of the shards, by tb.farm
        b.v.check(not gaps, f"coverage not reached in {n} programs: {gaps}")
    stats = b.model.core.stats
    b.tb.log.info("random programs: %d run, %d instructions executed, %d RUN cycles (RTL), %d faults %s",
                  stats.runs, stats.instructions, cycles, sum(stats.faults.values()), dict(stats.faults))
    b.tb.log.info("HAZARD reports in %d programs, RTL = model per RUN: %s", stats.runs, hazards)
    b.tb.log.info("coverage:\n%s", closure_text(cov, f"vector core, {stats.runs} programs"))
    out = os.environ.get(RANDOM_STATS_ENV)
    if out:
        import json

        Path(out).write_text(json.dumps({
            "seed": seed, "first": first, "programs": stats.runs, "instructions": stats.instructions,
            "run_cycles": cycles, "faults": dict(stats.faults),
            "opcodes": vector_cover.item(cov, "opcode").hit,
            "missing": gaps, "hazards": hazards, "checks": b.v.checks, "failures": b.v.failures[:5], "sim_cycles": b.v.cycles}))
    b.v.finish()
