"""Programs compiled by the public KohakuTPU compiler (clients/bundles), unmodified, on the RTL fused4 machine.

One test per bundle. Each runs the bundle's plan through the orchestrator's
AXI host exactly as upstream's loader does (models.bundle.executor's round loop on
tb.bundle.rtl_run's RTL host: baselines at load time, every slot staged, seed /
kick / await, landing after every round, the host relayouts, the final
readback), and judges it (models.bundle.judge):

* every output region bit for bit equal to upstream's RTL (``expected_rtl.npz``;
  select_lt_m32n64: ``expected.npz``, units.md H1) and to the machine model's
  run (models.machine.event_model, the same loop on the golden models);
* per round, each awaited node's baseline and final count as upstream's run
  observed them, every await met by exact equality (no surplus once the writes
  landed), the signals per node the plan awaits, the flits staged read back
  equal to the bundle's;
* every lane each kernel produced within the float64 error bound derived from its
  own instruction stream around float64 evaluated on the values it read (the
  RTL's own image at every kernel boundary, models.bundle.kernel_judge), and a
  single kernel's outputs around the bundle's float64 math (models.bundle.lane_bound,
  models.bundle.bound; a program the analysis cannot follow fails by name);
* no FAULT signal on the mesh (the top's ``faults_sent``), no RTL monitor
  error, the HAZARD reports of the vector cores equal to the model's, per id
  (H1..H4; compiled code meets only H1);
* each round's host and machine cycles within their targets of upstream
  RTL's (``timing_rtl.json``: machine ±10 %, host ±5 %), and, in
  ``test_timing_against_upstream`` after the bundles, the machine cycles
  summed over them within ±3 % (models/bundle/timing.py); with timing
  overrides (a what-if: ``python -m tb.client run --timing FACT=VALUE``, the
  set in TIMING_ENV) they are compared with upstream's, not judged;
* reported, not judged: lanes that differ from upstream's Python models
  (``expected.npz``), cycles and wall seconds per bundle.

Each bundle runs under limits derived from the program (tb/bundle/cycle_limits.py:
a margin over its timing_rtl.json, or an estimate from its plan), never a fixed
watchdog: the whole test's limit, and a poll bound per round. A bundle stopped
part way (its limit, a failed poll, an exception) still writes its report: the
rounds it finished, the cycles and checks so far (tb.client prints them), and
the machine model's own named failure of the same plan when its child has one
(a runaway program: which core, round and pc). The golden child is closed on
every way out (tb/bundle/golden_ahead.py).

Eight self-tests show the host's bounds and
refusals fire by name on the RTL: a DRAM read of a line whose write has not
landed is caught as an error; a poll that never matches names the node,
baseline, expected and seen counts and the node's last signal; a multicast
FILL whose leader never sends is named with its committed entries; a write
that never lands ends the landing wait naming the outstanding count; a staged
slot that no longer holds what was staged is named when the round's slots are
read back; a bundle stopped by a deliberately tiny cycle limit names the limit,
where it came from and how to raise it, and reports the round it finished; a
hang under the derived limits is named by its poll, before the test's limit; a
program whose VHALT became another word is named by the RTL's poll and by the
machine model's runaway watchdog.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from enum import Enum
from pathlib import Path
from typing import Mapping, Sequence

import cocotb
import numpy as np
from cocotb.triggers import RisingEdge

from models.bundle import timing as bundle_timing
from models.bundle.golden import Golden
from models.bundle.hazard_reference import note_hazards
from models.bundle.reader import Bundle, bundle_names
from models.bundle.lane_bound import remember
from models.bundle.judge import check_count, judge, lanes_vs_models, reference
from models.bundle.models_beside import ModelsBeside
from models.bundle.report import BundleReport, format_bound, format_program
from models.bundle.executor import compare_observed, expected_signals
from models.noc.flit import FlitType, make_flit
from models.machine.event_model import ModelRun
from models.machine.unit_timing import TIMING_ENV, canonical, from_canonical
from models.orch.host_port import Reg, pack_coord, stage_addr
from models.vector.disasm import disassemble
from tb.bundle.cycle_limits import MAX_CYCLES_ENV, CycleLimits, limits_for
from tb.bundle.rtl_run import RtlBundleRunner, RtlRun, Timeouts
from tb.bundle.golden_ahead import GoldenAhead
from tb.vector.hazard_counts import HAZARD_IDS, count_errors, model_counts
from tb.system.landing import LandingError
from tb.bundle.plan_faults import await_one_more, damaged_copy, orphan_follower, vhalt_replaced
from tb.system.bench import PERIOD_NS, SystemTB

# The bundles to run: every one of clients/bundles, or the directories `python -m tb.client run` names
# (CLIENT_BUNDLES_ENV, os.pathsep-separated absolute paths; the command refuses duplicate names first).
CLIENT_BUNDLES_ENV = "AGSIM_CLIENT_BUNDLES"
# the timing overrides the machine was built with (tb/run/runner.py; "" for upstream's timing): a what-if run,
# whose timing is compared with upstream's, not judged
WHAT_IF = canonical(from_canonical(os.environ.get(TIMING_ENV, "")))


def _bundle_paths() -> dict[str, str]:
    raw = os.environ.get(CLIENT_BUNDLES_ENV, "")
    if not raw.strip():
        return {n: n for n in bundle_names()}
    return {Path(p).name: p for p in raw.split(os.pathsep) if p}


# how long a run stopped part way waits for the machine model to say why in its own words (a runaway program
# ends there within about a second of its start; a long healthy plan is not waited for past this)
GOLDEN_WAIT_S = 10.0

# each bundle's rounds timed beside upstream's, as the bundles of this run finish (test_timing_against_upstream)
TIMED: dict[str, bundle_timing.BundleTiming] = {}

# an Enum, so cocotb names each test after its bundle (it numbers plain strings longer than 10 characters)
BundleName = Enum("BundleName", _bundle_paths())


def _client(tb: SystemTB, b: Bundle, limits: CycleLimits | None = None) -> RtlBundleRunner:
    return RtlBundleRunner(tb.dut.u_dut, tb.host, tb.dram, tb.landing, tb.machine, period_ns=PERIOD_NS,
                           timeouts=Timeouts.for_bundle(b, limits))


def _model(tb: SystemTB, golden: GoldenAhead, b: Bundle) -> Golden:
    """The bundle on the machine model (same loop, golden units), computed beside the simulator
    (tb/bundle/golden_ahead.py); a refusal or a model error is a failure. Its derived bound is taken too, and
    the timed models' rounds (the RTL's second clock)."""
    g = golden.result()
    remember(b, g.bound)
    if g.model is not None:
        note_hazards(b, g.model.hazards)  # which expected set is normative follows from the models' run (H1)
    tb.verdict.check(not g.model_error, f"machine model: {g.model_error}")
    tb.verdict.check(not g.timed_error, f"timed models: {g.timed_error}")
    return g


def _beside_models(tb: SystemTB, b: Bundle, run: RtlRun, golden: Golden) -> ModelsBeside | None:
    """The RTL's rounds held to the timed golden models' (models/bundle/models_beside.py): logged and judged
    with upstream's targets; None when the models gave no rounds (their failure is already a check)."""
    if golden.timed is None:
        return None
    res = run.result
    beside = ModelsBeside.of(b.name, [r.unit for r in res.rounds], [r.timing for r in res.rounds], golden.timed)
    tb.log.info("REPORT %s %s", b.name, beside.line().strip())
    tb.verdict.add_checks(len(beside.rtl) + 1, beside.failures())
    return beside


def _judge(tb: SystemTB, b: Bundle, run: RtlRun, model: ModelRun | None, t0: float,
           beside: ModelsBeside | None = None) -> None:
    """Every check of the module doc on one finished run; the run's report into the artifacts."""
    v = tb.verdict
    lanes = sum(r.nbytes // 2 for r in b.outputs.values())
    v.add_checks(check_count(b, run.result), judge(b, run.result))
    v.add_checks(len(run.result.rounds), run.stage_errors[:10])
    v.check(run.faults_sent == 0, f"{run.faults_sent} FAULT signal(s) crossed the mesh")
    rtl_hz = {hid: sum(n[hid] for n in run.hazards.values()) for hid in HAZARD_IDS}
    if model is not None:
        v.add_checks(lanes, _vs_model(b, run.image, model.image))
        v.check(not model.faults, f"the machine model saw FAULT signals {model.faults}")
        v.check(not model.errors, f"the machine model recorded errors: {model.errors[:5]}")
        v.add_checks(len(HAZARD_IDS), [f"{e} (per core {run.hazards})"
                                       for e in count_errors(rtl_hz, model_counts(model.hazards))])
        for hz in model.hazards:
            v.report(f"HAZARD {hz.hid}", hz.line(disassemble))
    diff = lanes_vs_models(b, run.image)
    tb.log.info("REPORT %s: lanes differing from upstream's Python models (expected.npz, not judged): %s; "
                "reference %s", b.name, diff, reference(b))
    art = tb.artifacts
    for name, reg in b.outputs.items():
        lo = reg.addr - b.image_base
        art.add(f"obs_{name}", run.image[lo:lo + reg.nbytes].view(np.uint16))
        if reference(b) != "none":
            want = (b.expected_models if reference(b) == "models" else b.expected_rtl)["dram_final"]
            art.add(f"exp_{name}", want[lo:lo + reg.nbytes].view(np.uint16))
        elif model is not None:
            art.add(f"exp_{name}", model.image[lo:lo + reg.nbytes].view(np.uint16))  # the only bit-exact judge
        art.add(f"n_lanes_vs_models_{name}", np.int64(diff[name]))
    want = expected_signals(b)
    for node, k in run.result.signals().items():
        art.count(f"signals_{node[0]}_{node[1]}", want.get(node, 0), k)
    _time(tb, b, run)
    report = BundleReport.of_run(b, run.result, "rtl", v.failures, time.monotonic() - t0, v.checks,
                                 {**{f"hazards_{hid.lower()}": n for hid, n in rtl_hz.items()}, "polls": run.polls, "dram_read": run.dram_read,
                                  "dram_written": run.dram_written, "wr_data_sent": run.wr_data_sent,
                                  "timing_overrides": WHAT_IF,
                                  **({"models_beside": beside.to_json()} if beside is not None else {})})
    art.add("report_json", json.dumps(report.to_json()))
    if report.bound_note:
        tb.log.warning("NOTE %s: %s", b.name, report.bound_note)
    for line in [format_bound(report), *format_program(report)]:
        tb.log.info("%s:%s", b.name, line)


def _time(tb: SystemTB, b: Bundle, run: RtlRun) -> None:
    """The run's rounds timed beside upstream's (models/bundle/timing.py): logged, kept for
    test_timing_against_upstream, and the per-round targets checked."""
    res = run.result
    timing = bundle_timing.compare(b.name, [r.unit for r in res.rounds], [r.timing for r in res.rounds], b.timing_rtl)
    TIMED[b.name] = timing
    if not timing.compared:
        tb.log.info("REPORT %s timing: %s", b.name, timing.note)
        return
    if WHAT_IF:  # the machine ran other timing facts than upstream's: compared, not judged
        tb.log.info("REPORT %s timing what-if (%s): machine cycles %d ours / %d upstream's, speed-up %s", b.name,
                    WHAT_IF, timing.machine_ours, timing.machine_upstream,
                    bundle_timing.speed_up(timing.machine_ours, timing.machine_upstream))
        return
    worst = timing.worst
    assert worst is not None
    tb.log.info("REPORT %s timing: machine cycles %d ours / %d upstream, ratio %.3f, worst round %d ratio %.3f; "
                "per round (host, machine) ours/upstream: %s", b.name, timing.machine_ours, timing.machine_upstream,
                timing.machine_ratio, worst.round, worst.machine_ratio,
                ", ".join(f"r{p.round} ({p.ours.host_cycles}/{p.upstream.host_cycles}, "
                          f"{p.ours.machine_cycles}/{p.upstream.machine_cycles})" for p in timing.pairs))
    tb.verdict.add_checks(2 * len(timing.pairs), bundle_timing.judge_rounds(timing))


def _vs_model(b: Bundle, rtl: np.ndarray, model: np.ndarray) -> list[str]:
    out = []
    for name, reg in b.outputs.items():
        lo = reg.addr - b.image_base
        bad = np.flatnonzero(rtl[lo:lo + reg.nbytes].view(np.uint16) != model[lo:lo + reg.nbytes].view(np.uint16))
        if len(bad):
            out.append(f"output {name}: {len(bad)} FP16 lane(s) differ between the RTL and the machine model "
                       f"(first slots {list(map(int, bad[:5]))})")
    return out


async def _run_bundle(dut, test: str, b: Bundle, env: Mapping[str, str] | None = None, *, golden: bool = True,
                      expect: Sequence[str] = (), check_partial: bool = False, mon_err_ok: bool = False) -> None:
    """`b` end to end under its cycle limits (tb/bundle/cycle_limits.py; the overrides of `env`, default the
    environment); a run stopped part way writes the report of what it did (its finished rounds, the cycles and
    checks so far). `golden`: compute the machine model's run beside it; `expect`, `check_partial`: a self-test
    that must fail with these texts and leave a partial report of at least one round; `mon_err_ok`: an RTL
    monitor's error is part of what the self-test provokes."""
    tb = SystemTB(dut, test)
    tb.expect_mon_err = mon_err_ok
    t0 = time.monotonic()
    limits = limits_for(b, env)  # a bad override is refused here, before the machine starts
    ahead = GoldenAhead(b, tb.machine.name, Path.cwd() / "golden") if golden else None  # runs while the RTL does
    runner: list[RtlBundleRunner] = []  # the client, once the host exists (after reset)

    def where() -> str:
        return runner[0].where() if runner else "the machine's start (reset, CAPS)"

    async def body() -> None:
        await tb.start()
        tb.log.info("%s: cycle limit %s", b.name, limits.describe())
        client = _client(tb, b, limits)
        runner.append(client)
        tb.doing = where  # the watchdogs name the round and the client's step
        run = await client.run(b)
        assert ahead is not None, "a bundle that runs to its end is judged against the machine model"
        golden = _model(tb, ahead, b)
        _judge(tb, b, run, golden.model, t0, _beside_models(tb, b, run, golden))
        rounds = ", ".join(f"r{r.index}={r.cycles}" for r in run.result.rounds)
        tb.log.info("REPORT %s: %d cycles (%s), %.1f s wall, %d polls, DRAM %d B read / %d B written, "
                    "%d MEM_WR_DATA", b.name, run.result.cycles, rounds, time.monotonic() - t0, run.polls,
                    run.dram_read, run.dram_written, run.wr_data_sent)

    def unfinished() -> None:
        """The finished rounds' counts checked against upstream's run, and the partial report written."""
        if "report_json" in tb.artifacts.arrays:
            return  # the run finished and _judge wrote the whole report; what failed came after
        if not runner:
            return  # the machine never started: nothing ran to report
        v, client = tb.verdict, runner[0]
        said = ahead.finished(GOLDEN_WAIT_S) if ahead is not None else None
        if said is not None and said.model_error:  # the models' own named failure of the same plan, when ready
            v.check(False, f"the machine model on the same plan: {said.model_error}")
        if client.partial is not None:
            v.add_checks(len(client.partial.rounds), client.partial.problems + compare_observed(client.partial))
        rep = client.partial_report(b, v.failures, v.checks, time.monotonic() - t0)
        tb.artifacts.add("report_json", json.dumps(rep.to_json()))
        tb.log.info("REPORT %s stopped: %d of %d round(s) finished, %d cycles, %d checks", b.name, len(rep.rows),
                    rep.extra["rounds"], rep.cycles, rep.checks)
        if check_partial:
            v.check(len(rep.rows) > 0 and rep.cycles > 0 and rep.checks > 0,
                    f"the partial report holds {len(rep.rows)} round(s), {rep.cycles} cycles, {rep.checks} checks; "
                    f"expected the rounds finished, the cycles and the checks so far")

    try:
        await tb.guard(body, max_cycles=limits.total, expect_failures=expect,
                       watchdog=lambda: limits.watchdog(where()), unfinished=unfinished)
    finally:
        if ahead is not None:
            ahead.close()  # however the run ended, its golden child ends with it (tb/bundle/golden_ahead.py)


@cocotb.test()
@cocotb.parametrize(bundle=list(BundleName))
async def test_bundle(dut, bundle: BundleName) -> None:
    """One compiled bundle, unmodified, end to end on fused4 through the host (see the module doc)."""
    b = Bundle(bundle.value)
    b.check()  # a bundle its format does not allow fails here, in one line, before the machine starts
    await _run_bundle(dut, f"test_bundle/bundle={b.name}", b)


@cocotb.test()
async def test_timing_against_upstream(dut) -> None:
    """The timing judge over every bundle this run timed (models/bundle/timing.py): per round the machine
    cycles within 10 % and the host cycles within 5 % of upstream's, the machine cycles summed within 3 %.
    Its verdict is logged, and a missed target fails the test."""
    tb = SystemTB(dut, "test_timing_against_upstream")

    async def body() -> None:
        verdict = bundle_timing.judge(TIMED.values(), what_if=WHAT_IF)
        for line in verdict.lines():
            tb.log.info("REPORT %s", line)
        tb.verdict.add_checks(1 + verdict.rounds * 2, verdict.reasons)

    await tb.guard(body, max_cycles=10)


async def _until_sent(tb: SystemTB, n: int, bound: int = 200) -> None:
    """Until `n` MEM_WR_DATA flits have been handed to the mesh (a short wait, bounded, cycle by cycle)."""
    for _ in range(bound):
        if tb.landing.state().sent >= n:
            return
        await RisingEdge(tb.clock.clk)
    raise AssertionError(f"the dispatched MEM_WR_DATA did not reach the mesh within {bound} cycles")


@cocotb.test()
async def test_unlanded_read_is_refused(dut) -> None:
    """A DRAM read of a line whose posted write has not landed is caught as an error, then reads the new data
    once the write landed: the host's landing check works on the RTL, not only in the model."""
    tb = SystemTB(dut, "test_unlanded_read_is_refused")
    b = Bundle("ops_log2_m32n64")

    async def body() -> None:
        await tb.start()
        v, m = tb.verdict, tb.machine
        client = _client(tb, b)
        addr = m.mem_base + 0x40
        word = int.from_bytes(bytes(range(1, 33)), "little")
        await client.rtl.write_dram(addr, np.zeros(32, np.uint8))
        # one posted write from the orchestrator: MEM_WR_REQ (addr, len 0) then its MEM_WR_DATA (protocol §5)
        flits = [make_flit(m.mag, tb.orch, FlitType.MEM_WR_REQ, 0x5A, 0, addr << 216),
                 make_flit(m.mag, tb.orch, FlitType.MEM_WR_DATA, 0x5A, 1, word)]
        await tb.host.stage(0, flits)
        for reg, value in ((Reg.PROG_DST, pack_coord(m.mag)), (Reg.PROG_BASE, 0), (Reg.PROG_LEN, 2),
                           (Reg.PROG_KICK, 1)):
            await tb.host.write(reg, value)
        await _until_sent(tb, tb.landing.state().sent + 1)
        st = tb.landing.state()
        v.check(st.outstanding == 1, f"the write should be in flight: {st.describe()}")
        try:
            await client.rtl.read_dram(addr, 32)
            v.check(False, "a DRAM read of an unlanded line was not refused")
        except LandingError as exc:
            v.check("1 write(s) outstanding" in str(exc), f"the refusal does not name the outstanding write: {exc}")
            tb.log.info("refused as it must be: %s", exc)
        await client.rtl.wait_landed("the test's write")
        got = await client.rtl.read_dram(addr, 32)
        v.check(int.from_bytes(got.tobytes(), "little") == word, "the landed write reads back wrong")

    await tb.guard(body, max_cycles=50_000)


async def _planted(dut, test: str, b: Bundle, expect: list[str]) -> None:
    """Run `b` (with a planted plan error) under a 6,000-cycle poll bound; pass only if it fails with `expect`."""
    tb = SystemTB(dut, test)

    async def body() -> None:
        await tb.start()
        client = RtlBundleRunner(tb.dut.u_dut, tb.host, tb.dram, tb.landing, tb.machine, period_ns=PERIOD_NS,
                           timeouts=Timeouts(poll=6_000))
        await client.run(b)

    await tb.guard(body, max_cycles=60_000, expect_failures=expect)


@cocotb.test()
async def test_cycle_limit_names_itself(dut) -> None:
    """A bundle stopped by its cycle limit, here a deliberately tiny AGSIM_MAX_CYCLES (linear_relu_m32k64n32
    runs 5,497 cycles, its round 0 ends near 1,600): the failure names the limit, where it came from, the round
    and step the host was in and how to raise it; the partial report holds the round finished, the cycles and
    the checks so far."""
    b = Bundle("linear_relu_m32k64n32")
    await _run_bundle(dut, "test_cycle_limit_names_itself", b, {MAX_CYCLES_ENV: "3000"}, golden=False,
                      check_partial=True, expect=[
        "watchdog: bundle linear_relu_m32k64n32 did not finish within its limit of 3,000 simulated cycles, from "
        "AGSIM_MAX_CYCLES=3000 (derived from the bundle it would be 47,080 = 2x timing_rtl.json's "
        "4,208 cycles + ",
        "(host was in round 1 (",
        "1 of 2 round(s) finished; step: ",
        "; if the program only needs longer, raise it with AGSIM_CYCLE_MARGIN=<factor> (now 2, the default) or "
        "AGSIM_MAX_CYCLES=<cycles> (python -m tb.client run --cycle-margin X / --max-cycles N)"])


@cocotb.test()
async def test_hang_is_named_by_its_poll(dut) -> None:
    """A round that stops making progress (an await that can never be met) under the bundle's derived limits
    ends as the named poll failure, at its round's poll bound (2x its 4,844 machine cycles + 10,000), before
    the whole test's limit (38,592), and the failure says what the bound is made of."""
    b = Bundle("ops_log2_m32n64")
    await_one_more(b)
    await _run_bundle(dut, "test_hang_is_named_by_its_poll", b, {}, golden=False, expect=[
        "await at node (1,0): expected count 45 (baseline 0 + 45), seen 44 (44 signal(s) since the baseline); "
        "the node's last signal: BATCH_COMPLETE arg=0x00000040 count=44; timeout after ",
        "; the poll's bound: 19,688 cycles = 2x timing_rtl.json's 4,844 machine cycles of round 0 + 10,000; if the "
        "round only needs longer, raise it with AGSIM_CYCLE_MARGIN=<factor>"])


@cocotb.test()
async def test_runaway_program_is_named_on_both_sides(dut) -> None:
    """A vector program whose VHALT became another word (a copy of ops_log2_m32n64 with its bundle.json so
    edited, tb/bundle/plan_faults.py): the RTL runs on until the round's poll bound names the await; the
    machine model, in the golden child, names the runaway (core, round, pc) and the run reports it; the child
    is closed with the run."""
    folder = Path.cwd() / "damaged" / "ops_log2_no_vhalt"
    if folder.exists():
        shutil.rmtree(folder)
    b = Bundle(damaged_copy("ops_log2_m32n64", folder, vhalt_replaced))
    # past its program the core fetches IMEM words no flit wrote: unreset state (units.md V.1), zeros on
    # Verilator, x on Icarus, so how many more completions it signals and whether its garbage writes trip the
    # memory agent's monitors depend on the simulator, as on the hardware they depend on what IMEM held
    await _run_bundle(dut, "test_runaway_program_is_named_on_both_sides", b, {}, mon_err_ok=True, expect=[
        "await at node (1,0): expected count 44 (baseline 0 + 44), seen ",
        "; timeout after ",
        "the machine model on the same plan: Runaway: bundle ops_log2_no_vhalt round 0 (log2:0, VC): vector core "
        "(1,0): the RUN from pc 0 never reached VHALT"])


@cocotb.test()
async def test_poll_timeout_names_the_node(dut) -> None:
    """An await that can never be met ends at the poll's bound, naming node, counts and the last signal."""
    b = Bundle("ops_log2_m32n64")
    await_one_more(b)
    await _planted(dut, "test_poll_timeout_names_the_node", b, [
        "await at node (1,0): expected count 45 (baseline 0 + 45), seen 44 (44 signal(s) since the baseline); "
        "the node's last signal: BATCH_COMPLETE arg=0x00000040 count=44; timeout after"])


@cocotb.test()
async def test_orphan_follower_is_named(dut) -> None:
    """A multicast FILL whose leader never sends (the follower lists a group its leader does not): the
    await ends at the poll's bound naming the node and the follower's FILL with its committed entries."""
    b = Bundle("matmul_m32k64n32")
    n = orphan_follower(b, (2, 1), (1, 1))
    await _planted(dut, "test_orphan_follower_is_named", b, [
        "await at node (2,1): expected count 4 (baseline 0 + 4), seen 0 (0 signal(s) since the baseline); the "
        "node's last signal: no signal yet; timeout after",
        f"cluster (2,1): FILL as follower (the group's leader sends the request) waiting for MEM_RD_RESP, 0 of "
        f"{n} entries committed"])


@cocotb.test()
async def test_landing_timeout_names_the_outstanding_writes(dut) -> None:
    """A MEM_WR_DATA the memory agent drops (no open write: its monitor fires) never lands; the landing wait
    ends at its bound naming the count."""
    tb = SystemTB(dut, "test_landing_timeout_names_the_outstanding_writes")
    tb.expect_mon_err = True  # the memory agent reports the orphan data flit

    async def body() -> None:
        await tb.start()
        m = tb.machine
        client = RtlBundleRunner(tb.dut.u_dut, tb.host, tb.dram, tb.landing, m, period_ns=PERIOD_NS,
                           timeouts=Timeouts(landing=2_000))
        await tb.host.stage(0, [make_flit(m.mag, tb.orch, FlitType.MEM_WR_DATA, 0x5A, 1, 0x1234)])
        for reg, value in ((Reg.PROG_DST, pack_coord(m.mag)), (Reg.PROG_BASE, 0), (Reg.PROG_LEN, 1),
                           (Reg.PROG_KICK, 1)):
            await tb.host.write(reg, value)
        await _until_sent(tb, 1)  # landing counts what has left for the mesh (after the awaits: everything)
        await client.rtl.wait_landed("an orphan write")
        tb.verdict.check(tb.mon_err == 1, "the memory agent did not report the orphan MEM_WR_DATA")

    await tb.guard(body, max_cycles=20_000, expect_failures=[
        "an orphan write: writes did not land within 2000 cycles: 1 write(s) outstanding: 1 MEM_WR_DATA flit(s) "
        "handed to the mesh (wr_data_sent), 0 DRAM word(s) written (dram.wr_words)"])


@cocotb.test()
async def test_stage_readback_names_a_difference(dut) -> None:
    """The round's staged slots are read back after its awaits (outside its timed host cycles): a slot whose
    word was overwritten since it was staged is named, once."""
    tb = SystemTB(dut, "test_stage_readback_names_a_difference")

    async def body() -> None:
        await tb.start()
        v, m = tb.verdict, tb.machine
        client = RtlBundleRunner(tb.dut.u_dut, tb.host, tb.dram, tb.landing, m, period_ns=PERIOD_NS)
        slots = {s: make_flit(m.mag, tb.orch, FlitType.CU_INST, s, 0, 0x1000 + s) for s in (3, 4, 5)}
        await client.rtl.stage(slots)
        await tb.host.write(stage_addr(4, 2, m.stage_slots), 0xBAD)  # slot 4 no longer holds its flit
        await client.rtl.wait_landed("a round with one slot overwritten")
        errors = list(client.rtl.stage_errors)
        v.check(len(errors) == 1 and errors[0].startswith("staging slot 4 reads back"),
                f"the read-back found {errors}, expected slot 4 named once")
        await client.rtl.wait_landed("the next round, nothing staged")
        v.check(client.rtl.stage_errors == errors, "slots of an earlier round were read back again")

    await tb.guard(body, max_cycles=10_000)
