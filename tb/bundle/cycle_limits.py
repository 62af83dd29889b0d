"""How many simulated cycles a compiled bundle may take on the RTL, derived from the program itself.

Why: a bundle is a whole program; a whole-model one runs millions of cycles
(a 256-token flash attention: 56 rounds, 3.04 M machine cycles on upstream's
RTL). A fixed watchdog fails such a program although nothing in it is wrong,
and a fixed poll bound is unrelated to how long a round really takes. So both
bounds come from the program, in this one place (pure Python, unit-tested in
tests/unit/bundle/test_cycle_limits.py):

* **per round**, an upstream-equivalent figure: with ``timing_rtl.json``,
  upstream RTL's own round (host_cycles, machine_cycles); without it, an
  estimate from the plan that is above every round measured so far
  (:data:`EST_MACHINE_PER_FLIT` cycles per flit kicked, :data:`EST_HOST_PER_SLOT`
  per slot staged; models/bundle/round_budget.py, whose figures the golden
  models' delivery budget starts from too);
* **the round's share of the test's limit**: ``margin x`` (host + machine), plus
  the round's poll bound (below: room for one await that never comes, so a
  hang is named by its poll before the whole test's watchdog fires, even in
  the first round), plus an allowance for what our host does beyond upstream's
  (:func:`host_allowance`: the landing wait and the after-reads, the staged
  slots' read-back, the relayouts);
* **the whole test** (tb.system.bench.SystemTB.guard's watchdog): the rounds'
  shares summed, plus :data:`SETUP_ALLOWANCE` for reset, CAPS, the image load
  and the final readback;
* **one poll** (tb.bundle.rtl_run.RtlHost.poll, the hang detector): ``margin x``
  the round's machine cycles plus :data:`POLL_ALLOWANCE`. One await waits at
  most the round's machine cycles (first KICK to the last await met), so a
  round that stops making progress ends as a named poll failure after about
  twice its expected time, long before the whole test's limit.

The margin is :data:`DEFAULT_MARGIN` unless ``AGSIM_CYCLE_MARGIN=<factor>`` says
otherwise (it scales the round and poll figures, not the allowances);
``AGSIM_MAX_CYCLES=<cycles>`` replaces the whole test's limit outright (the
polls keep theirs). ``python -m tb.client run --cycle-margin X / --max-cycles N``
passes them to the bench. A bad value is refused in one line (:func:`overrides`).

Measured (``python -m tb.client run clients/bundles/*/ clients/scale/*/
clients/model/*/ --sim verilator``, 24 bundles, 145 rounds): our rounds take
upstream's round total plus 124 to 2,592 cycles, 16 a staged slot (the
read-back: five reads of a slot) and up to about 800 more (the landing wait,
the after-reads; a relayout, DRAM by backdoor, a few cycles); our machine
cycles are 0.998 to 1.006 of upstream's; reset to the first round and the last
round to the end of the readback take 19 cycles.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping

from models.bundle.loader import plan_rounds
from models.bundle.reader import Bundle
from models.bundle.round_budget import (DEFAULT_MARGIN, EST_HOST_PER_SLOT, EST_MACHINE_PER_FLIT, POLL_ALLOWANCE,
                                       estimated_round, poll_bound, upstream_rounds)
from tb.run.options import BadInput

MARGIN_ENV = "AGSIM_CYCLE_MARGIN"  # factor over upstream's (or the estimated) cycles
MAX_CYCLES_ENV = "AGSIM_MAX_CYCLES"  # the whole test's limit in cycles, replacing the derived one

# Our host's work beyond upstream's in a round, which upstream's timing_rtl.json does not count:
READBACK_PER_SLOT = 32  # the staged slots read back after the awaits: 16 cycles a slot measured, doubled
ROUND_ALLOWANCE = 5_000  # the landing wait and the after-reads: up to ~800 measured; 2,805 is the latest
#                           landing upstream's own replay saw (clients/scale/README.md, mlp_silu), kept with room
RELAYOUT_ALLOWANCE = 1_000  # one host relayout (DRAM read and write by backdoor): a few cycles measured
SETUP_ALLOWANCE = 1_000  # reset, CAPS, the image load, the final landing and readback: 19 cycles measured


def _num(n: int) -> str:
    return f"{n:,}"


def overrides(env: Mapping[str, str] | None = None) -> tuple[float | None, int | None]:
    """AGSIM_CYCLE_MARGIN and AGSIM_MAX_CYCLES from `env` (default os.environ): (margin, max cycles), None
    where not given; BadInput in one line for a value that is not a factor >= 1 or a whole number >= 1."""
    env = os.environ if env is None else env
    raw_m = env.get(MARGIN_ENV, "").strip()
    raw_c = env.get(MAX_CYCLES_ENV, "").strip().replace("_", "").replace(",", "")
    margin = cycles = None
    if raw_m:
        try:
            margin = float(raw_m)
        except ValueError:
            margin = math.nan
        if not (math.isfinite(margin) and margin >= 1.0):
            raise BadInput(f"{MARGIN_ENV}={raw_m!r} is not a factor of at least 1 over upstream's cycles; write "
                           f"e.g. {MARGIN_ENV}=3 (the default is {DEFAULT_MARGIN:g}), or set {MAX_CYCLES_ENV}=<cycles>")
    if raw_c:
        if not raw_c.isdigit() or int(raw_c) < 1:
            raise BadInput(f"{MAX_CYCLES_ENV}={env.get(MAX_CYCLES_ENV, '').strip()!r} is not a number of cycles; "
                           f"write e.g. {MAX_CYCLES_ENV}=10000000, or leave it out for the limit derived from the "
                           f"bundle")
        cycles = int(raw_c)
    return margin, cycles


def check_overrides(env: Mapping[str, str] | None = None) -> None:
    """Refuse bad overrides before anything runs (tb.run.regress, tb.client)."""
    overrides(env)


def override_env(margin: str | None, max_cycles: str | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment entries that carry a command line's ``--cycle-margin`` / ``--max-cycles`` to the bench
    (empty for what is not given), after checking them with what `env` (default os.environ) already sets:
    BadInput in one line before anything runs."""
    given = {k: v for k, v in ((MARGIN_ENV, margin), (MAX_CYCLES_ENV, max_cycles)) if v is not None}
    overrides({**(os.environ if env is None else env), **given})
    return given


@dataclass(frozen=True)
class RoundLimit:
    """One round: its upstream-equivalent figures, our host's allowance, its share of the limit, its poll bound."""

    index: int
    name: str
    unit: str
    host: int  # upstream's host cycles (or the estimate)
    machine: int  # upstream's machine cycles (or the estimate)
    staged: int
    relayouts: int
    allowance: int  # our host's work beyond upstream's (host_allowance)
    share: int  # margin x (host + machine) + poll + allowance
    poll: int  # margin x machine + POLL_ALLOWANCE


def host_allowance(staged: int, relayouts: int) -> int:
    """Cycles our host spends in a round beyond upstream's host (see the constants)."""
    return ROUND_ALLOWANCE + READBACK_PER_SLOT * staged + RELAYOUT_ALLOWANCE * relayouts


@dataclass(frozen=True)
class CycleLimits:
    """A bundle's cycle limits: the whole test's, and one per round (see the module doc)."""

    bundle: str
    source: str  # "timing_rtl.json" or the estimate's description
    timed: bool  # whether the figures are upstream's (timing_rtl.json)
    margin: float
    margin_given: bool  # AGSIM_CYCLE_MARGIN set
    rounds: tuple[RoundLimit, ...]
    derived: int  # the sum of the rounds' shares plus SETUP_ALLOWANCE
    max_cycles: int | None = None  # AGSIM_MAX_CYCLES, which replaces `derived`

    @property
    def total(self) -> int:
        """The whole test's limit in cycles."""
        return self.max_cycles if self.max_cycles is not None else self.derived

    @property
    def upstream(self) -> int:
        return sum(r.host + r.machine for r in self.rounds)

    def poll_bound(self, position: int) -> int:
        """The poll bound of the round at `position` in plan order (past the last: the largest)."""
        if position < len(self.rounds):
            return self.rounds[position].poll
        return max((r.poll for r in self.rounds), default=POLL_ALLOWANCE)

    def derivation(self) -> str:
        """How `derived` was reached, in words and figures."""
        allowance = sum(r.allowance for r in self.rounds)
        staged = sum(r.staged for r in self.rounds)
        relayouts = sum(r.relayouts for r in self.rounds)
        polls = sum(r.poll for r in self.rounds)
        figure = (f"timing_rtl.json's {_num(self.upstream)} cycles" if self.timed
                  else f"{_num(self.upstream)} cycles estimated from the plan ({self.source})")
        return (f"{self.margin:g}x {figure} + {_num(polls)} for one poll bound a round (a hang is named by its "
                f"poll first) + {_num(allowance)} for our host's work beyond upstream's ({len(self.rounds)} "
                f"round(s) x {_num(ROUND_ALLOWANCE)} for landing and the after-reads, {_num(staged)} staged slot(s) "
                f"x {READBACK_PER_SLOT} for their read-back, {relayouts} relayout(s) x {_num(RELAYOUT_ALLOWANCE)}) "
                f"+ {_num(SETUP_ALLOWANCE)} for reset, image load and readback")

    def how_to_raise(self) -> str:
        """The overrides, named so a person can act on them."""
        now = f"now {self.margin:g}" + ("" if self.margin_given else ", the default")
        return (f"if the program only needs longer, raise it with {MARGIN_ENV}=<factor> ({now}) or "
                f"{MAX_CYCLES_ENV}=<cycles> (python -m tb.client run --cycle-margin X / --max-cycles N)")

    def describe(self) -> str:
        """The limit and where it came from (logged when a bundle starts, and in the watchdog's message)."""
        if self.max_cycles is not None:
            return (f"{_num(self.total)} simulated cycles, from {MAX_CYCLES_ENV}={self.max_cycles} (derived from the "
                    f"bundle it would be {_num(self.derived)} = {self.derivation()})")
        return f"{_num(self.total)} simulated cycles = {self.derivation()}"

    def watchdog(self, where: str) -> str:
        """The failure when the whole test's limit fires; `where`: the round and step the host was in."""
        return (f"watchdog: bundle {self.bundle} did not finish within its limit of {self.describe()} (host was in "
                f"{where}); {self.how_to_raise()}")

    def poll_note(self, position: int) -> str:
        """What a poll's bound is made of (appended to a poll timeout's message)."""
        if position >= len(self.rounds):  # a poll after the last round (none today): the largest bound
            return f"the poll's bound: {_num(self.poll_bound(position))} cycles"
        r = self.rounds[position]
        figure = "timing_rtl.json's" if self.timed else "the plan's estimated"
        return (f"the poll's bound: {_num(r.poll)} cycles = {self.margin:g}x {figure} {_num(r.machine)} machine "
                f"cycles of round {r.index} + {_num(POLL_ALLOWANCE)}; if the round only needs longer, raise it with "
                f"{MARGIN_ENV}=<factor>")


# The slowest a healthy simulator runs the fused4 machine, simulated cycles per wall second: Icarus ran the
# bundle corpus at about 1,000 (docs/bundle.md) and a loaded 2-core machine halves that; Verilator at 25,000 to
# 50,000. A quarter of the slowest seen, so the wall-clock backstop (a hung simulator, tb/run/benches.py
# max_wall_s) never fires on a long program that is only slow.
SLOWEST_CYCLES_PER_S = {"icarus": 250, "verilator": 2_500}


def wall_backstop_s(bundles: list[Bundle], sim: str, table_s: float,
                    env: Mapping[str, str] | None = None) -> float:
    """The wall-clock backstop in seconds for one simulator process running `bundles` one after another:
    the table's (an hour) or, for long programs, their derived cycle limits at the slowest healthy rate of
    `sim`, whichever is larger."""
    need = sum(limits_for(b, env).total for b in bundles) / SLOWEST_CYCLES_PER_S.get(sim, 250)
    return max(float(table_s), float(math.ceil(need)))


def limits_for(b: Bundle, env: Mapping[str, str] | None = None) -> CycleLimits:
    """The bundle's limits (module doc), with the overrides of `env` (default os.environ; BadInput if bad)."""
    margin_env, max_cycles = overrides(env)
    margin = DEFAULT_MARGIN if margin_env is None else margin_env
    programs = plan_rounds(b)
    rounds = []
    for prog, (host, machine) in zip(programs, upstream_rounds(b, programs)):  # timing_rtl.json's or estimated
        rnd = prog.round
        staged, relayouts = len(prog.stage), len(prog.relayouts)
        allowance = host_allowance(staged, relayouts)
        poll = poll_bound(machine, margin)
        rounds.append(RoundLimit(rnd.index, rnd.name, rnd.unit, host, machine, staged, relayouts, allowance,
                                 math.ceil(margin * (host + machine)) + poll + allowance, poll))
    timed = b.timing_rtl is not None
    source = ("timing_rtl.json" if timed else
              f"{EST_MACHINE_PER_FLIT:,} machine cycles a flit kicked, {EST_HOST_PER_SLOT} host cycles a slot "
              f"staged; no timing_rtl.json")
    return CycleLimits(b.name, source, timed, margin, margin_env is not None, tuple(rounds),
                       sum(r.share for r in rounds) + SETUP_ALLOWANCE, max_cycles)


__all__ = ["CycleLimits", "DEFAULT_MARGIN", "MARGIN_ENV", "MAX_CYCLES_ENV", "POLL_ALLOWANCE", "RoundLimit",
           "SLOWEST_CYCLES_PER_S", "check_overrides", "estimated_round", "host_allowance", "limits_for",
           "override_env", "overrides", "wall_backstop_s"]
