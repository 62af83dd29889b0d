"""Testbench class shared by every NoC bench (router, mesh, checker).

Looks its handles up once, resets through the Verilog clock generator, runs one
traffic scenario end to end (bulk load -> run -> dump -> scoreboard) and turns
the outcome into checks on a Verdict. The watchdog is threefold: the harness's
quiet-cycle detector (`stalled`), a simulated-time bound per run, and a
wall-clock bound per test enforced between simulated-time slices.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence


from models.noc.flit import describe_flit
from models.noc.mesh import MeshGeometry
from tb.run.benches import Bench, get_bench
from tb.cover import noc as noc_cover
from tb.lib.harness import (
    NEVER,
    CaptureRecord,
    EndpointBank,
    HarnessClock,
    RecorderFault,
    RunOutcome,
    StallPattern,
    Violation,
)
from tb.noc.scoreboard import FlitScoreboard, ScoreboardReport
from tb.noc.stimulus import build_streams, count_flits
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import begin_test
from tb.run.options import wall_budget

PERIOD_NS = 10
SETTLE_CYCLES = 200  # cycles run after `done` to catch a surplus flit


@dataclass
class StreamRun:
    """What one bulk run produced: what was sent (and when), and what was captured."""

    outcome: RunOutcome
    slots: list[tuple[int, int]]  # (port, flit) per injection slot
    inject_times: list[int]  # cycle each slot was accepted, NEVER if it was not
    records: list[CaptureRecord]
    sent: int
    expected_captures: int
    mon_err: int


@dataclass
class TrafficResult:
    """Everything one traffic run produced, for checks and self-tests."""

    outcome: RunOutcome
    report: ScoreboardReport
    records: list[CaptureRecord]
    expected: int
    mon_err: int


class NocTB:
    """A bench on a harness top with u_clk, u_bank and (optionally) a DUT mon_err."""

    def __init__(self, dut: Any, test_name: str) -> None:
        self.dut = dut
        self.log = dut._log
        self.bench: Bench = get_bench(os.environ.get("AGSIM_BENCH", ""))
        if self.bench.shape is None:
            raise ValueError(f"bench {self.bench.name} has no endpoint geometry in tb/run/benches.py")
        s = self.bench.shape
        self.geometry = MeshGeometry(s.nx, s.ny, s.edge_mask)
        self.clock = HarnessClock(dut.u_clk)
        self.bank = EndpointBank(dut.u_bank, self.clock.clk, self.geometry.num_ports)
        self.mon_err = dut.mon_err
        self.verdict = begin_test(self.bench.name, test_name, self.log)
        self.seed, self.run_seed = self.verdict.seed, self.verdict.run_seed
        self.rng = random.Random(self.seed)
        self.artifacts = Artifacts(self.verdict.test)

    async def reset(self) -> None:
        await self.clock.reset()

    async def run_streams(
        self,
        streams: Mapping[int, Sequence[int]],
        *,
        expect_total: int | None = None,
        idle: StallPattern = StallPattern(),
        backpressure: StallPattern = StallPattern(),
        violation: Violation = Violation.NONE,
        fault: RecorderFault = RecorderFault.NONE,
        fault_index: int = 0,
        fault_port: int = 0,
        quiet_limit: int = 5_000,
        max_cycles: int | None = None,
        reset: bool = True,
        clear: bool = False,
    ) -> StreamRun:
        """Reset, inject each port's flits, wait until `expect_total` flits were
        captured (default: as many as were sent) or a watchdog fired, dump.

        Benches whose device consumes flits and answers with others (a compute
        unit, the memory agent) call this and check the answers themselves.
        With reset=False the machine keeps its state from the previous run (a
        host sequence in phases); only this run's captures are returned. With
        clear=True as well, the bank's capture memory is emptied first, so any
        number of runs fit in it.
        """
        total = count_flits(streams)
        expect = total if expect_total is None else expect_total
        before, start_cycle = 0, 0
        if not reset:
            if clear:
                await self.bank.clear_captures()
            now = self.bank.status("continue")
            before, start_cycle = now.captured, now.cycles
        await self.bank.begin(
            self.clock, reset=reset, seed=self.seed, idle=idle, backpressure=backpressure, quiet_limit=quiet_limit,
            violation=violation, fault=fault, fault_index=fault_index, fault_port=fault_port,
        )
        slots = await self.bank.load(streams)
        bound = max_cycles or max(20_000, 200 * max(total, expect))
        outcome = await self._run_sliced(before + expect, bound, wall_budget(self.bench.name))
        if outcome.ended == "done":
            await self.bank.settle(SETTLE_CYCLES, PERIOD_NS)
            outcome = self.bank.status("done")
        records, times = await self.bank.dump()
        records = records[before:]
        mon_err = int(self.mon_err.value)
        await self.bank.stop()
        self.verdict.cycles += outcome.cycles - start_cycle
        not_sent = [(p, f) for (p, f), t in zip(slots, times) if t == NEVER]
        if outcome.ended != "done" or not_sent:
            self._explain_hang(outcome, total, not_sent)
        return StreamRun(outcome, slots, times, records, total, expect, mon_err)

    async def run_traffic(self, pairs: Iterable[tuple[int, int]], **options: Any) -> TrafficResult:
        """Inject `pairs` (source, destination), wait for every flit, and score them."""
        streams = build_streams(self.geometry, pairs, self.rng)
        run = await self.run_streams(streams, **options)
        self._sample_coverage(run, options)
        board = FlitScoreboard(self.geometry)
        for (port, flit), t in zip(run.slots, run.inject_times):
            if t != NEVER:
                board.expect(port, flit, t)
        for rec in run.records:
            board.observe(rec.port, rec.flit, rec.cycle)
        return TrafficResult(run.outcome, board.finish(), run.records, run.sent, run.mon_err)

    def _sample_coverage(self, run: StreamRun, options: Mapping[str, Any]) -> None:
        """The run into the bench's coverage model (tb/cover/noc.py): delivered flits, stall modes, full FIFOs."""
        geo = self.geometry
        busy = self.bank.busy_cycles()
        ends = geo.endpoints()
        noc_cover.sample_run(self.bench.name, [geo.port_coord(p) for p in ends],
                             ((r.flit, geo.port_coord(r.port)) for r in run.records),
                             options.get("idle", StallPattern()).mode.name,
                             options.get("backpressure", StallPattern()).mode.name,
                             [(geo.port_coord(p), busy[p]) for p in ends])

    async def _run_sliced(self, total: int, bound_cycles: int, wall_limit_s: float) -> RunOutcome:
        """Run in simulated-time slices so a wall-clock bound can end a slow run."""
        t0 = time.monotonic()
        slice_cycles = 20_000  # between slices the wall-clock bound is checked
        left = bound_cycles
        while True:
            step = min(slice_cycles, left)
            outcome = await self.bank.run(total, step, PERIOD_NS)
            left -= step
            if outcome.ended != "timeout":
                return outcome
            if left <= 0:
                return outcome
            if time.monotonic() - t0 > wall_limit_s:
                outcome.ended = "wall-timeout"
                return outcome

    def _explain_hang(self, outcome: RunOutcome, total: int, not_sent: list) -> None:
        """Name what was outstanding when a run did not finish."""
        self.log.error(
            "run ended by %s at cycle %d: %d/%d flits injected, %d captured, last event at cycle %d",
            outcome.ended, outcome.cycles, outcome.injected, total, outcome.captured, outcome.last_event_cycle,
        )
        by_port: dict[int, int] = {}
        for port, _ in not_sent:
            by_port[port] = by_port.get(port, 0) + 1
        for port, n in sorted(by_port.items()):
            self.log.error("  endpoint %s still had %d flit(s) it could not inject; first: %s",
                           self.geometry.port_coord(port), n,
                           describe_flit(next(f for p, f in not_sent if p == port)))

    def finish(self) -> None:
        """Save this test's entry in artifacts.npz (inputs, outputs, counts and the verdict's meta),
        then give the verdict. System benches end with this; NoC benches may call verdict.finish()."""
        v = self.verdict
        self.artifacts.save(v.meta(machine=self.bench.machine or ""))
        v.finish()

    def check_clean(self, result: TrafficResult) -> None:
        """The standard end-of-run checks: verdict, counts, scoreboard, monitors."""
        v = self.verdict
        v.check(result.outcome.ended == "done",
                f"run ended by {result.outcome.ended} with {result.outcome.captured}/{result.expected} flits captured")
        v.check(result.outcome.injected == result.expected,
                f"{result.outcome.injected} of {result.expected} flits were injected")
        v.check(result.outcome.captured == result.expected,
                f"{result.outcome.captured} flits captured, {result.expected} expected (surplus or shortfall)")
        v.add_checks(result.report.checks, list(result.report.errors))
        v.check(result.mon_err == 0, "an RTL assertion monitor raised mon_err (see ERROR lines above)")
        self.log.info("scoreboard: %s", result.report.summary())
