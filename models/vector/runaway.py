"""The vector core model's watchdog: a RUN that will not reach VHALT ends by name, never one the RTL finishes.

Why: the hardware has no watchdog of its own (units.md V.2: a RUN retires at VHALT or a fault, nothing else),
so a program whose VHALT became another word runs on forever on the RTL until the bench's poll bound ends it.
The model runs a RUN inside one delivery of the network (until it waits for a fill), so no delivery limit of
the machine model can see it; without a bound of its own it spins silently and its list of outbound flits
grows without end. Two rules end it, and neither ends a RUN that the RTL would finish within its round:

* **a repeated control state.** Inside a RUN nothing but the program's own words moves the program counter
  (forward, wrapping at the 512-word IMEM, and back by VLOOP's repeats), and what the RUN does next (which
  word, whether it faults: V.10) depends only on the pc, VL, the mode, the scalar registers, K3, the loop
  level, the fills outstanding and a pending F_CUDATA; IMEM and the descriptors cannot change during a RUN
  (CU_INST queues behind it), and what a fill response or an accepted burst brings is data (L1), not control.
  The model measures the pc's **travel** outside VLOOP's repeats; each time it passes another lap of IMEM it
  records that state. The same state at two laps means the RUN goes round for ever;
* **an instruction budget.** A RUN whose state keeps changing (a scalar counted up on every lap) may still
  halt or fault later. Each instruction retires in at least one cycle, so a RUN the RTL finishes within its
  round's poll bound executes at most that many instructions: the budget of a RUN is the poll bound of the
  round it started in (models/bundle/round_budget.py, set by the machine model's host per round), and
  :data:`DEFAULT_RUN_BUDGET` when no bundle gives a round (the model alone).

One case the first rule cannot see the RTL's way, documented in docs/bundle.md ("The models' watchdogs"): a
burst that would fault the core (F_CUDATA) but reaches it only after its state repeated; the RTL would then
end the RUN with that fault, the model names it a runaway (a program without VHALT fails either way).
"""

from __future__ import annotations

from typing import NamedTuple

from .isa import IMEM_WORDS

LAP = IMEM_WORDS  # the travel of one lap of IMEM: each lap passed, the RUN's control state is recorded
DEFAULT_RUN_BUDGET = 5_000_000  # instructions of a RUN when no bundle's round gives a budget (the model alone)


class RunBudget(NamedTuple):
    """The most instructions one RUN may execute, and where that figure comes from (for the message)."""

    words: int
    why: str


DEFAULT_BUDGET = RunBudget(DEFAULT_RUN_BUDGET, f"the model's fixed {DEFAULT_RUN_BUDGET:,} (no bundle gave a "
                                               f"round)")


class Runaway(AssertionError):
    """A RUN that will not reach VHALT (the hardware would run on until its bench's poll bound)."""

    def __init__(self, node: tuple[int, int], start_pc: int, pc: int, executed: int, repeats: int,
                 reason: str) -> None:
        self.node, self.start_pc, self.pc, self.executed = node, start_pc, pc, executed
        super().__init__(
            f"vector core ({node[0]},{node[1]}): the RUN from pc {start_pc} never reached VHALT: {reason}; now at "
            f"pc {pc} after {executed:,} instruction(s) ({repeats:,} loop repeat(s)); the hardware would run on "
            f"(the RTL has no watchdog: its bench ends it at the round's poll bound); check that the program "
            f"ends with VHALT and that its IMEM flits were all written")


def repeated(lap: int, first_lap: int, travel: int) -> str:
    """The reason of a RUN whose control state came back."""
    return (f"its control state (pc, VL, mode, scalars, K3, loop, fills) at lap {lap} of IMEM (a travel of "
            f"{travel:,} words outside VLOOP's repeats) is the one it had at lap {first_lap}: it would go "
            f"round IMEM for ever")


def over_budget(budget: RunBudget) -> str:
    """The reason of a RUN that executed more instructions than its round allows."""
    return (f"it executed more than {budget.words:,} instructions, its budget = {budget.why} (each "
            f"instruction retires in at least one cycle)")


__all__ = ["DEFAULT_BUDGET", "DEFAULT_RUN_BUDGET", "LAP", "RunBudget", "Runaway", "over_budget", "repeated"]
