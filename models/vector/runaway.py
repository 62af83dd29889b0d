"""The vector core model's watchdog: a RUN that can no longer reach VHALT ends by name.

Why: the hardware has no watchdog of its own (units.md V.2: a RUN retires at
VHALT or a fault, nothing else), so a program whose VHALT became another word
runs on forever on the RTL until the bench's poll bound ends it. The model runs
a whole RUN inside one delivery of the network, so no delivery limit of the
machine model can see it; without a bound of its own it spins silently and its
list of outbound flits grows without end. The bound is derived from the
program, never a fixed count a long legitimate program could meet:

* control flow inside a RUN only goes forward (modulo the 512-word IMEM, as
  the 9-bit program counter wraps) except for VLOOP's repeats, which are
  bounded by construction (one level, the count fixed when VLOOP issues);
* so the model measures the **travel** of the program counter outside the
  repeats: the words advanced since the RUN began, with each loop-back
  returning it to where it stood at the body's top (however many words a
  repeat covers: VSETI's two, a chain's depth);
* a RUN that halts travels less than one lap of IMEM (from its start pc to
  its VHALT); one whose travel passes :data:`LAP` has gone past its own start
  again without meeting VHALT, and ends as :class:`Runaway`.

A loop of count 2**24 still runs its 2**24 repeats (the hardware would); only
going round IMEM is refused. Ours, documented in docs/bundle.md ("The models'
watchdogs"): a program that goes round IMEM once and then halts (possible only
by landing on a word it stepped over on the first lap) would pass on the RTL
and is named here as a runaway.
"""

from __future__ import annotations

from .isa import IMEM_WORDS

LAP = IMEM_WORDS  # travel past this: the pc has come round to where the RUN began, no loop repeating


class Runaway(AssertionError):
    """A RUN that went round IMEM without reaching VHALT (the hardware would run forever)."""

    def __init__(self, node: tuple[int, int], start_pc: int, pc: int, executed: int, repeats: int,
                 travel: int) -> None:
        self.node, self.start_pc, self.pc, self.executed = node, start_pc, pc, executed
        super().__init__(
            f"vector core ({node[0]},{node[1]}): the RUN from pc {start_pc} never reached VHALT: its program "
            f"counter travelled {travel} words outside VLOOP's repeats, past the {LAP}-word lap of IMEM (the "
            f"budget of a RUN that halts: it travels less than one lap from its start pc to its VHALT; loop "
            f"repeats are not counted, their VLOOP counts bound them), now at pc {pc} after {executed} "
            f"instruction(s) ({repeats} loop repeat(s)); the hardware would run on forever (the RTL has no "
            f"watchdog: its bench ends it at the round's poll bound); check that the program ends with VHALT and "
            f"that its IMEM flits were all written")


__all__ = ["LAP", "Runaway"]
