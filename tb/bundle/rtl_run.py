"""Run a compiled bundle (clients/) on the RTL machine, through the orchestrator's AXI host port.

The round loop is models.bundle.executor's, the same one the machine model runs; this
module is its host on the RTL (:class:`RtlHost`):

* host registers through tb.orch.host.Orchestrator (on the generated harness:
  the host engine, tb/system/host_engine.py, one batch per upload, read-back and
  poll); the staged slots uploaded five 64-bit words per flit, low
  word first, one write at a time as upstream's measuring host did, and
  (``verify_stage``) read back and compared once the round's awaits are met
  (before its landing wait, outside the round's timed host cycles: upstream's
  host read nothing back), so "the flits staged" is measured, not assumed;
* each Poll is one engine POLL: a bounded number of reads spaced in simulated time, bounded by
  the round's own poll bound (:class:`Timeouts` with the bundle's limits,
  tb/bundle/cycle_limits.py: a margin over the round's machine cycles); on expiry
  it names the node, the baseline, the expected and seen counts and the
  node's last code/arg (models.bundle.executor.describe_poll), what the units
  still wait for (:func:`rtl_waiting`: a cluster's FILL, leader or follower,
  and its committed entries) and what the bound is made of; an await that
  overshoots fails at once;
* DRAM by backdoor (tb.mag.dram) at the DRAM's window: the bundle's machine
  addresses minus the machine's ``mem_base``; a DRAM read while a write is
  outstanding is refused (tb.system.landing), and landing is awaited after every
  round, bounded and named.

:class:`RtlBundleRunner` runs one bundle and gathers what the bench judges beside
the executor's result: the FAULT signals the mesh carried, the HAZARD reports
of the vector cores (by id, H1..H4), DRAM traffic and cycles. It holds the
rounds as they finish (``partial``), so a run stopped part way can say where it
was (:meth:`RtlBundleRunner.where`, for the watchdog's message) and report what
it did (:meth:`RtlBundleRunner.partial_report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NoReturn

import numpy as np
from cocotb.utils import get_sim_time

from models.bundle.reader import Bundle, Round
from models.bundle.executor import ExecResult, PollFailed, describe_poll, execute
from models.bundle.loader import Poll
from models.bundle.report import BundleReport, call_rows, round_rows
from models.machine.layouts import Machine
from tb.bundle.cycle_limits import CycleLimits, limits_for
from tb.mag.dram import DramBackdoor
from tb.vector.hazard_counts import delta, rtl_counts
from tb.orch.host import Orchestrator
from tb.system.host_engine import Command, Op, Status
from tb.system.landing import Landing


@dataclass(frozen=True)
class Timeouts:
    """Bounds in cycles: one poll, the landing wait; the least idle cycles between two reads of a poll (0:
    back to back, each read issued as the previous one returns, as upstream's measuring host polled).
    ``resolution``: a poll that has waited w cycles leaves at least w // resolution idle cycles between
    reads, so a long wait costs few reads (chosen when Python ran every read; kept, so the cycles stay the
    ones measured) and a met await is seen at most 1/resolution of its wait late (0.4 %); short waits
    (kicks, 680-cycle rounds) stay back to back. ``limits``: a bundle's limits (tb/bundle/cycle_limits.py),
    which give each round's poll its own bound and name its derivation when it expires; without them every
    poll has ``poll``."""

    poll: int = 100_000
    landing: int = 20_000
    interval: int = 0
    resolution: int = 256
    limits: CycleLimits | None = None

    @classmethod
    def for_bundle(cls, b: Bundle, limits: CycleLimits | None = None) -> "Timeouts":
        """Each round's poll bound from the bundle's own figures (tb/bundle/cycle_limits.py; `limits`, or
        derived here with the environment's overrides)."""
        return cls(limits=limits if limits is not None else limits_for(b))

    def poll_bound(self, position: int) -> int:
        """The bound of a poll in the round at `position` (plan order)."""
        return self.limits.poll_bound(position) if self.limits is not None else self.poll


class RtlHost:
    """models.bundle.executor.Host on the RTL machine (see the module doc)."""

    def __init__(self, host: Orchestrator, dram: DramBackdoor, landing: Landing, machine: Machine, *,
                 period_ns: int = 10, timeouts: Timeouts = Timeouts(), verify_stage: bool = True,
                 waiting: Callable[[], list[str]] = list) -> None:
        if host.engine is None:
            raise ValueError("RtlHost polls through the host engine: give it Orchestrator.on_engine(...) on a "
                             "generated machine harness, not an AxiLiteMaster")
        self.host, self.dram, self.landing, self.machine = host, dram, landing, machine
        self.engine = host.engine
        self.waiting = waiting  # what the units still wait for, in words (named when a poll times out)
        self.period_ns = period_ns
        self.timeouts = timeouts
        self.verify_stage = verify_stage
        self.slots = machine.stage_slots
        self.polls = 0
        self.stage_errors: list[str] = []
        self.unverified: dict[int, int] = {}  # slots staged this round, read back after its awaits
        self.doing = "idle"
        self.position: Callable[[], int] = lambda: 0  # the round's place in plan order (its poll bound)

    async def read(self, addr: int) -> int:
        return await self.host.read(addr)

    async def write(self, addr: int, value: int) -> None:
        await self.host.write(addr, value)

    async def stage(self, slots: Mapping[int, int]) -> None:
        """Upload every slot (in runs of consecutive slots); they are read back after the round's awaits."""
        self.doing = f"staging {len(slots)} slot(s)"
        await self.host.stage_slots(slots)
        if self.verify_stage:
            self.unverified.update(slots)

    async def _verify_staged(self) -> None:
        """Read back every slot staged since the last check (the staging RAM keeps them until the next
        round's upload) and record each that differs from what was staged."""
        order = sorted(self.unverified)
        for s, got in zip(order, await self.host.read_stages(order)):
            if got != self.unverified[s]:
                self.stage_errors.append(f"staging slot {s} reads back {got:#074x}, staged "
                                         f"{self.unverified[s]:#074x}")
        self.unverified.clear()

    async def poll(self, cmd: Poll, what: str) -> int:
        """Read until ``value & mask == want``, at most the round's poll bound (PollFailed names everything).

        One engine POLL (rtl/bench/host_engine.v): read; met, or (an await) an overshoot, ends it; past
        the bound one more read names the value; else the next read after max(interval, elapsed //
        resolution) idle cycles."""
        self.doing = f"{what}: polling {cmd.name} for {cmd.want:#x}"
        start = self.cycle()
        t = self.timeouts
        node = cmd.node is not None
        word = Command(Op.POLL, cmd.addr, data=cmd.mask, want=cmd.want, bound=t.poll_bound(self.position()),
                       interval=t.interval,
                       resolution=t.resolution, baseline=cmd.baseline if node else 0,
                       expected=cmd.expected if node else 0, ovs=node, final=True)
        res = (await self.engine.run([word], start=start, what=what))[0]
        self.polls += res.reads
        if res.status is Status.MET:
            return res.value
        if res.status is Status.OVERSHOOT:
            raise PollFailed(f"{what}: {describe_poll(cmd, res.value, 'overshoot: more signals than awaited')}")
        self._timed_out(cmd, what, res.value, start)

    def _timed_out(self, cmd: Poll, what: str, value: int, start: int) -> NoReturn:
        waiting = "; ".join(self.waiting()) or "no unit reports waiting for anything"
        limits = self.timeouts.limits
        bound = "" if limits is None else f"; {limits.poll_note(self.position())}"
        raise PollFailed(f"{what}: {describe_poll(cmd, value, f'timeout after {self.cycle() - start} cycles')}; "
                         f"{waiting}{bound}")

    async def wait_landed(self, what: str) -> None:
        """After a round's awaits (models.bundle.executor): its staged slots read back, then its writes landed."""
        self.doing = f"{what}: reading the staged slots back"
        await self._verify_staged()
        self.doing = f"{what}: waiting for the posted writes to land"
        await self.landing.wait(self.timeouts.landing, what)

    async def read_dram(self, addr: int, nbytes: int) -> np.ndarray:
        """`nbytes` at machine address `addr`; refused while a write is outstanding."""
        self.landing.check(f"DRAM read of {nbytes} bytes at {addr:#x}")
        return await self.dram.read_bytes(self.machine.dram_offset(addr, nbytes), nbytes)

    async def write_dram(self, addr: int, data: np.ndarray) -> None:
        self.doing = f"loading {np.asarray(data).nbytes} DRAM bytes at {addr:#x}"
        await self.dram.load_bytes(self.machine.dram_offset(addr, np.asarray(data).nbytes), data)

    def cycle(self) -> int:
        return int(get_sim_time("ns")) // self.period_ns

    def dram_traffic(self) -> tuple[int, int]:
        """(bytes read, bytes written) through the DRAM's ports so far (the RTL's counters)."""
        return self.dram.traffic_bytes()


@dataclass
class RtlRun:
    """A bundle on the RTL machine: the executor's result and what the machine's counters say."""

    result: ExecResult
    faults_sent: int = 0
    hazards: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)  # core -> reports by id
    dram_read: int = 0
    dram_written: int = 0
    wr_data_sent: int = 0
    polls: int = 0
    stage_errors: list[str] = field(default_factory=list)

    @property
    def image(self) -> np.ndarray:
        assert self.result.image is not None
        return self.result.image


def rtl_waiting(top: Any, machine: Machine) -> list[str]:
    """What the RTL units still wait for, read from their state (the clusters' FILL: cl_fill's active,
    committed, n8 and leads), in the words of models.cluster's ``waiting_on``."""
    out = []
    for x, y in machine.clusters:
        fill = getattr(top, f"u_cluster_{x}_{y}").u_fill
        if int(fill.active.value):
            role = "leader" if int(fill.leads.value) else "follower (the group's leader sends the request)"
            out.append(f"cluster ({x},{y}): FILL as {role} waiting for MEM_RD_RESP, {int(fill.committed.value)} of "
                       f"{int(fill.n8.value)} entries committed")
    return out


class RtlBundleRunner:
    """Runs bundles on one RTL machine (a generated top `top`, e.g. the harness's ``u_dut``)."""

    def __init__(self, top: Any, host: Orchestrator, dram: DramBackdoor, landing: Landing, machine: Machine,
                 **host_options: Any) -> None:
        self.top = top
        self.machine = machine
        host_options.setdefault("waiting", lambda: rtl_waiting(top, machine))
        self.rtl = RtlHost(host, dram, landing, machine, **host_options)
        self.rounds: list[Round] = []  # the plan's rounds of the bundle being run
        self.partial: ExecResult | None = None  # its rounds as they finish (the whole result once run returns)
        self.started = 0  # the cycle its image load began

    def cycles(self) -> int:
        """Cycles since the bundle's image load began (0 before a bundle started)."""
        return self.rtl.cycle() - self.started if self.partial is not None else 0

    def where(self) -> str:
        """The round and step the host is in, in words (a watchdog's message names it)."""
        if self.partial is None:
            return f"no bundle yet ({self.rtl.doing})"
        done, n = len(self.partial.rounds), len(self.rounds)
        if done < n:
            r = self.rounds[done]
            return f"round {r.index} ({r.name}, {r.unit}), {done} of {n} round(s) finished; step: {self.rtl.doing}"
        return f"the final readback, all {n} round(s) finished; step: {self.rtl.doing}"

    def _hazards(self) -> dict[tuple[int, int], dict[str, int]]:
        return {c: rtl_counts(int(getattr(self.top, f"hazards_{c[0]}_{c[1]}").value))
                for c in self.machine.vector_cores}

    def partial_report(self, b: Bundle, failures: list[str], checks: int, wall_s: float) -> BundleReport:
        """What a run stopped part way did (a watchdog, a failed poll, an exception): the rounds it finished as
        rows, the cycles so far and the checks made. Its outputs were never read back, so no lanes are counted
        and no bound is judged; the report says so (``bound_note``, ``extra``)."""
        res = self.partial if self.partial is not None else ExecResult(b.name)
        n = len(self.rounds) or len(b.rounds)
        note = (f"the run stopped after {len(res.rounds)} of {n} round(s), before its outputs were read back"
                if res.image is None else f"the run finished its {n} round(s); judging it stopped (see the failures)")
        return BundleReport(b.name, "rtl", False, list(failures[:20]), round_rows(res, True), self.cycles(), wall_s,
                            checks, sum(r.nbytes // 2 for r in b.outputs.values()), bound_note=note,
                            extra={"finished": False, "rounds_finished": len(res.rounds), "rounds": n},
                            upstream_timing=None if b.timing_rtl is None else [t.to_json() for t in b.timing_rtl],
                            calls=call_rows(b))

    async def run(self, b: Bundle) -> RtlRun:
        """Every round of `b` through the loader (models.bundle.executor.execute); the machine's counters around it."""
        h = self.rtl
        hz0, f0 = self._hazards(), h.landing.faults_sent()
        rd0, wr0 = h.dram.traffic_bytes()
        partial = self.partial = ExecResult(b.name)
        self.rounds, self.started = b.rounds, h.cycle()
        h.position = lambda: len(partial.rounds)  # the rounds finished: the running round's place in plan order
        res = await execute(b, h, self.machine, partial)
        rd1, wr1 = h.dram.traffic_bytes()
        hz1 = self._hazards()
        hz = {c: delta(hz1[c], hz0[c]) for c in hz1}
        return RtlRun(res, h.landing.faults_sent() - f0, {c: n for c, n in hz.items() if any(n.values())},
                      rd1 - rd0, wr1 - wr0, h.landing.state().sent, h.polls, list(h.stage_errors))


__all__ = ["RtlBundleRunner", "RtlHost", "RtlRun", "Timeouts", "rtl_waiting"]
