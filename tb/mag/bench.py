"""Testbench class for the memory agent on rtl/bench/mag_harness.v.

The geometry and the memory window come from the harness's own parameters
(NX, NY, EDGE_MASK, MAG_X, MAG_Y, BASE), so this class needs no entry of its own in tb/run/benches.py (the
bench name, when the table has one, only sets the wall-clock bound). A run is:
reset, bulk load of every bank port's flits, start, wait until the number of
responses models.mag.model predicted has been captured (or a watchdog fires), settle
to catch a surplus, bulk dump; the DRAM is loaded and read through its
backdoor (tb/mag/dram.py) and keeps its contents across runs (reset does not
clear it), so a test can write in one run and read back in the next.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from models.noc.flit import describe_flit
from models.mag.model import WORD_BYTES, DramImage, MagModel, Prediction
from models.noc.mesh import Coord, MeshGeometry
from tb.mag.dram import DramBackdoor
from tb.lib.harness import NEVER, CaptureRecord, EndpointBank, HarnessClock, RunOutcome, StallPattern
from tb.mag.mxfp7_stim import random_entries
from tb.lib.verdict import begin_test
from tb.run.options import wall_budget

PERIOD_NS = 10
SETTLE_CYCLES = 200


@dataclass
class MagRun:
    """One run: what ended it, what was captured, whether a monitor fired."""

    outcome: RunOutcome
    prediction: Prediction
    records: list[CaptureRecord]
    not_sent: list[tuple[int, int]]
    mon_err: int
    inject_times: list[tuple[int, int, int]]  # (port, flit, cycle) of every accepted injection
    dram_words: tuple[int, int]               # words the DRAM read and wrote through its ports


class AgentWatch:
    """The agent's own link, recorded by the harness (mag_harness.v `ag_*`) from `start` to `stop`: each
    flit it puts out (the cycle it is taken, counted from the start) and the most flits its read queue held
    (u_mag.rq_n). The harness records in Verilog, so no Python wakes every cycle."""

    DEPTH = 1024  # mag_harness.v AG_DEPTH

    def __init__(self, dut: Any) -> None:
        self.dut = dut
        self.out: list[tuple[int, int]] = []
        self.max_rq = 0
        dut.ag_arm.value = 1

    async def stop(self) -> None:
        """Disarm and read what was recorded; more flits than the record holds is a bench error."""
        d = self.dut
        n = int(d.ag_n.value)
        if n >= self.DEPTH:
            raise RuntimeError(f"the agent put out {n} or more flits while watched; the harness records "
                               f"{self.DEPTH} (raise AG_DEPTH in mag_harness.v and AgentWatch.DEPTH)")
        self.out = [(int(d.ag_cyc[i].value), int(d.ag_flit[i].value)) for i in range(n)]
        self.max_rq = int(d.ag_rq_peak.value)
        d.ag_arm.value = 0


class MagTB:
    """Memory agent bench: bank ports as sources and peers, a model of agent and DRAM.

    Build it with ``await MagTB.create(dut, name)``, which also clears the DRAM.
    """

    def __init__(self, dut: Any, test_name: str) -> None:
        self.dut = dut
        self.log = dut._log
        self.bench_name = os.environ.get("AGSIM_BENCH") or "mag"
        self.max_wall_s = wall_budget(self.bench_name)
        nx, ny = int(dut.NX.value), int(dut.NY.value)
        self.mag: Coord = (int(dut.MAG_X.value), int(dut.MAG_Y.value))
        edge = int(dut.EDGE_MASK.value)
        plain = MeshGeometry(nx, ny, MeshGeometry.all_edges(nx, ny))
        self.mag_port = plain.port_index(self.mag)
        if self.mag_port >= plain.num_routers:
            edge |= 1 << (self.mag_port - plain.num_routers)
        self.geometry = MeshGeometry(nx, ny, edge)
        self.ports = [p for p in self.geometry.endpoints() if p != self.mag_port]
        self.coords = {p: self.geometry.port_coord(p) for p in self.ports}
        self.clock = HarnessClock(dut.u_clk)
        self.bank = EndpointBank(dut.u_bank, self.clock.clk, self.geometry.num_ports)
        self.dram = DramBackdoor(dut.dram, self.clock.clk)
        self.base = int(dut.BASE.value)   # byte address of DRAM word 0 (the agent's memory window)
        self.model = MagModel(self.mag, DramImage(self.dram.words), base=self.base)
        self.verdict = begin_test(self.bench_name, test_name, self.log)
        self.seed, self.run_seed = self.verdict.seed, self.verdict.run_seed
        self.rng = random.Random(self.seed)
        self.log.info("agent at %s (port %d), sources %s", self.mag, self.mag_port,
                      [self.coords[p] for p in self.ports])

    @classmethod
    async def create(cls, dut: Any, test_name: str) -> "MagTB":
        """A bench whose DRAM and model both start all zero (tests share one simulator)."""
        tb = cls(dut, test_name)
        await tb.dram.load_words(0, [0] * tb.dram.words)
        return tb

    # ------------------------------------------------------------ DRAM
    def byte(self, word: int) -> int:
        """The machine byte address of DRAM word ``word`` (the backdoor and the model index words from 0)."""
        return self.base + WORD_BYTES * word

    async def load_random(self, first_word: int, n_words: int) -> None:
        """Fill a word range with random data, in the DRAM and in the model."""
        words = [self.rng.getrandbits(256) for _ in range(n_words)]
        await self.dram.load_words(first_word, words)
        self.model.dram.load_words(first_word, words)

    async def load_fp16_entries(self, first_word: int, n_entries: int) -> None:
        """Fill 8*n_entries words with FP16 entries built to exercise QUANT (tb/mag/mxfp7_stim.py)."""
        raw = random_entries(np.random.default_rng(self.rng.getrandbits(64)), n_entries).reshape(-1)
        await self.dram.load_bytes(WORD_BYTES * first_word, raw)
        self.model.dram.load_bytes(WORD_BYTES * first_word, raw.tobytes())

    async def check_dram(self, first_word: int, n_words: int, what: str) -> None:
        """Read a range back through the backdoor and compare with the model, word by word."""
        got = await self.dram.read_words(first_word, n_words)
        want = self.model.dram.words(first_word, n_words)
        bad = [i for i in range(n_words) if got[i] != want[i]]
        errors = [f"{what}: {len(bad)} DRAM word(s) differ from the model, first at word {first_word + bad[0]:#x}: "
                  f"got {got[bad[0]]:#066x} want {want[bad[0]]:#066x}"] if bad else []
        self.verdict.add_checks(n_words, errors)

    # ------------------------------------------------------------ runs
    def watch_agent(self) -> AgentWatch:
        """Start sampling the agent's output link and read queue (before `run`; `await watch.stop()` after)."""
        return AgentWatch(self.dut)

    async def run(
        self,
        sent: Mapping[int, Sequence[int]],
        *,
        idle: StallPattern = StallPattern(),
        backpressure: StallPattern = StallPattern(),
        quiet_limit: int = 3_000,
        max_cycles: int | None = None,
    ) -> MagRun:
        """Send each bank port's flits to the agent; wait for the predicted responses."""
        bad = [p for p in sent if p not in self.coords]
        if bad:
            raise ValueError(f"ports {bad} are not bench sources of this harness (sources: {self.ports})")
        prediction = self.model.run({self.coords[p]: list(f) for p, f in sent.items()})
        if prediction.total > self.bank.cap_depth:
            raise ValueError(f"{prediction.total} predicted responses exceed the harness capture memory of "
                             f"{self.bank.cap_depth} (CAP_DEPTH); split the run or raise CAP_DEPTH")
        total_in = sum(len(f) for f in sent.values())
        await self.bank.begin(self.clock, reset=True, seed=self.seed, idle=idle, backpressure=backpressure,
                              quiet_limit=quiet_limit)
        slots = await self.bank.load(sent)
        bound = max_cycles or max(20_000, 50 * (total_in + prediction.total))
        outcome = await self._run_sliced(prediction.total, bound)
        if outcome.ended == "done":
            await self.bank.settle(SETTLE_CYCLES, PERIOD_NS)
            outcome = self.bank.status("done")
        records, times = await self.bank.dump()
        mon_err = int(self.dut.mon_err.value)
        dram_words = (int(self.dut.dram.rd_words.value), int(self.dut.dram.wr_words.value))
        await self.bank.stop()
        self.verdict.cycles += outcome.cycles
        not_sent = [(p, f) for (p, f), t in zip(slots, times) if t == NEVER]
        injected = [(p, f, t) for (p, f), t in zip(slots, times) if t != NEVER]
        if outcome.ended != "done" or not_sent:
            self.log.error("run ended by %s at cycle %d: %d/%d flits injected, %d/%d responses captured, "
                           "last event at cycle %d", outcome.ended, outcome.cycles, outcome.injected, total_in,
                           outcome.captured, prediction.total, outcome.last_event_cycle)
            for p, f in not_sent[:5]:
                self.log.error("  not injected from %s: %s", self.geometry.port_coord(p), describe_flit(f))
        return MagRun(outcome, prediction, records, not_sent, mon_err, injected, dram_words)

    async def _run_sliced(self, expect: int, bound_cycles: int) -> RunOutcome:
        t0 = time.monotonic()
        left = bound_cycles
        while True:
            step = min(20_000, left)
            outcome = await self.bank.run(expect, step, PERIOD_NS)
            left -= step
            if outcome.ended != "timeout" or left <= 0:
                return outcome
            if time.monotonic() - t0 > self.max_wall_s:
                outcome.ended = "wall-timeout"
                return outcome

    def check(self, run: MagRun, *, expect_monitor: bool = False) -> None:
        """The end-of-run checks: finished, everything sent, responses as predicted, monitors."""
        v = self.verdict
        p = run.prediction
        v.check(run.outcome.ended == "done",
                f"run ended by {run.outcome.ended}: {run.outcome.captured}/{p.total} responses captured")
        v.check(not run.not_sent, f"{len(run.not_sent)} flit(s) were never taken by the mesh/agent")
        report = p.check((self.geometry.port_coord(r.port), r.cycle, r.flit) for r in run.records)
        v.add_checks(report.checks, report.errors)
        # DRAM traffic: each entry is read once whatever its peers (units.md M.2), each beat written once.
        v.check(run.dram_words == (p.words_read, p.words_written),
                f"DRAM words read/written {run.dram_words}, the model predicts ({p.words_read}, {p.words_written})")
        if expect_monitor:
            v.check(run.mon_err == 1, "a protocol violation was sent but no monitor raised mon_err: "
                    + "; ".join(p.violations))
        else:
            v.check(run.mon_err == 0, "an RTL monitor raised mon_err (see ERROR lines above)")
        self.log.info("%d responses predicted, %d captured, %d checks, %d error(s); predicted violations: %s",
                      p.total, len(run.records), report.checks, len(report.errors), p.violations or "none")


__all__ = ["AgentWatch", "MagRun", "MagTB"]
