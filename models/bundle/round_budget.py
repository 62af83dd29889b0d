"""What a round of a compiled program may cost, derived from the program: upstream's cycles, and the models'
flit deliveries.

Why: a bundle is a whole program, and a whole-model one is long; a fixed limit fails a long program although
nothing in it is wrong. The RTL's cycle limits (tb/bundle/cycle_limits.py) and the golden models' watchdog
against a network that never goes quiet (models.machine.event_model.ModelHost) both start from one figure per
round, upstream's machine cycles: ``timing_rtl.json``'s when the bundle has it, else an upper estimate from the
plan (:data:`EST_MACHINE_PER_FLIT` cycles a flit kicked, :data:`EST_HOST_PER_SLOT` host cycles a slot staged).

**The models' delivery budget.** The golden models have no clock: they deliver flits, one at a time, until
the host's condition holds or nothing moves. What bounds a healthy round's deliveries is the hardware: every
delivery is a flit taken by an endpoint's input link, which takes at most one flit a cycle, so a round that
upstream's RTL ran in M machine cycles delivered at most M flits per endpoint. One wait of the host (a poll,
the landing wait) may deliver at most the round's poll bound (:func:`poll_bound`) x endpoints flits; more is
a livelock, and the run ends named (the round, the budget and how it was reached). The bound depends on the
program's work, not on the machine's timing facts, which change the cycles and not the flits.

Measured over all 24 bundles of clients/ (docs/bundle.md, "The models' watchdogs"): the busiest wait of each
used 0.20 % to 0.87 % of its budget; tests/unit/bundle/test_round_budget.py keeps three of them under a tenth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.bundle.loader import RoundProgram, plan_rounds
from models.bundle.reader import Bundle
from models.machine.layouts import Machine
from models.vector.runaway import RunBudget

# Without timing_rtl.json, an upper estimate of upstream's round from the plan. Measured over the 145 rounds
# of clients/bundles, clients/scale and clients/model: at most 2,548 machine cycles a flit kicked (a vector
# round of llm_block1_l64d64 whose 8 instructions run 20,384 cycles) and 24.5 host cycles a slot staged
# (the baseline reads included); the estimate takes the next power of two above each.
EST_MACHINE_PER_FLIT = 4_096
EST_HOST_PER_SLOT = 32

# A round's poll bound: the cycles one await may wait, on the RTL (tb/bundle/cycle_limits.py, whose margin a
# run may raise) and, at the default margin, the cycles behind the models' delivery budget.
# Twice upstream's figures: our machine's rounds measured 0.998..1.006 of upstream's and the timing judge
# fails a round beyond 1.10, so a healthy run uses about half of it; a slower, still healthy design (a
# changed unit's timing) has room to be measured and judged before the watchdog ends it.
DEFAULT_MARGIN = 2.0
POLL_ALLOWANCE = 10_000  # added to a poll's bound: the PROG_STAT wait of a kick, a met await seen up to
#                          1/256 of its wait late (Timeouts.resolution), and short rounds (680 cycles) kept
#                          well clear of their bound


def poll_bound(machine_cycles: int, margin: float = DEFAULT_MARGIN) -> int:
    """The cycles one await of a round of `machine_cycles` (upstream's, or the estimate) may wait."""
    return math.ceil(margin * machine_cycles) + POLL_ALLOWANCE


def estimated_round(staged: int, flits: int) -> tuple[int, int]:
    """(host, machine) cycles standing in for upstream's round without timing_rtl.json: an upper estimate."""
    return EST_HOST_PER_SLOT * staged, EST_MACHINE_PER_FLIT * flits


def upstream_rounds(b: Bundle, programs: list[RoundProgram] | None = None) -> list[tuple[int, int]]:
    """(host, machine) cycles of each round in plan order: timing_rtl.json's, or the plan's estimate."""
    programs = plan_rounds(b) if programs is None else programs
    timing = b.timing_rtl
    if timing is not None:
        return [(t.host_cycles, t.machine_cycles) for t in timing[:len(programs)]]
    return [estimated_round(len(p.stage), sum(len(k.flits) for k in p.round.kicks)) for p in programs]


@dataclass(frozen=True)
class DeliveryBudget:
    """The most flits one wait of the host may deliver in each round (plan order) of one bundle."""

    bundle: str
    timed: bool  # the cycles are timing_rtl.json's (else the plan's estimate)
    endpoints: int
    machine_cycles: tuple[int, ...]

    @classmethod
    def of(cls, b: Bundle, machine: Machine) -> "DeliveryBudget":
        return cls(b.name, b.timing_rtl is not None, len(machine.units),
                   tuple(m for _, m in upstream_rounds(b)))

    def _cycles(self, position: int) -> int:
        """Upstream's machine cycles of the round at `position` (past the last round: the largest)."""
        if position < len(self.machine_cycles):
            return self.machine_cycles[position]
        return max(self.machine_cycles, default=0)

    def for_round(self, position: int) -> int:
        """The budget of a wait in the round at `position`: its poll bound, a flit a cycle per endpoint."""
        return poll_bound(self._cycles(position)) * self.endpoints

    def run_budget(self, position: int) -> RunBudget:
        """The most instructions a vector RUN started in the round at `position` may execute: its poll bound,
        since each instruction retires in at least one cycle (models/vector/runaway.py)."""
        figure = "timing_rtl.json's" if self.timed else "the plan's estimated"
        return RunBudget(poll_bound(self._cycles(position)),
                         f"the round's poll bound, {DEFAULT_MARGIN:g} x {figure} {self._cycles(position):,} machine "
                         f"cycles + {POLL_ALLOWANCE:,}")

    def why(self, position: int) -> str:
        """How the round's budget was reached, for the watchdog's message."""
        figure = "timing_rtl.json's" if self.timed else f"the plan's estimated ({EST_MACHINE_PER_FLIT:,} a flit kicked)"
        where = "the largest round's" if position >= len(self.machine_cycles) else f"round {position}'s"
        return (f"{DEFAULT_MARGIN:g} x {figure} {self._cycles(position):,} machine cycles ({where}) + "
                f"{POLL_ALLOWANCE:,}, x {self.endpoints} endpoints, each taking at most one flit a cycle")


__all__ = ["DEFAULT_MARGIN", "DeliveryBudget", "POLL_ALLOWANCE", "EST_HOST_PER_SLOT", "EST_MACHINE_PER_FLIT",
           "estimated_round", "poll_bound", "upstream_rounds"]
