"""The vector core's kernel clock: when each word of a RUN executes and the RUN's cycle count, in upstream's
cycles, from the vector timing facts (models/machine/unit_timing.py), without simulating cycles.

Why: the golden models give every answer bit for bit but kept no clock; a model that keeps the RTL's clock
answers timing questions (what if the fetch took 2 cycles?) at model speed. The vector core's time is a
function of the words it executes: clients/vec_timing/latency.md states it as rules 1..10, measured on
upstream's RTL, and rtl/vector/vc_timing.v implements the same rules on the RTL. This is their third form:
one call per executed word (:meth:`KernelClock.word`), each rule applied to the clock's state:

* ``t_next``: the earliest count the next word may execute (a word executes at it: rule 2's fetch is in
  every word's own ``next``);
* ``drain``: the count from which the lane pipeline reads empty (the last beat + PIPE_DRAIN, rule 5);
* ``ready[r]``: the count from which a beat may name V[r] (the scoreboard, rule 4; a chain whose beats wrap
  the PEND_BITS counter sets nothing: hazard H4);
* ``fills_done``: when the last VFILL response counts as landed (rule 9): the memory's answer to the
  requests (:class:`FillMemory`; the corpus bench's memory by default) + FILL_LAND.

Checked against upstream's own cycles, every word's execute count and every RUN's count, on the 909
programs of clients/vec_timing (tests/unit/vector/test_kernel_clock.py), at the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from models.machine.unit_timing import VECTOR_FACTS, check_overrides

from . import isa

@dataclass(frozen=True)
class FillMemory:
    """How the memory answers a VFILL: the last of its n responses is taken `first + interval x (n - 1)` counts
    after the word fires. The default is the memory of upstream's vec_timing bench (one response every 4
    cycles; rule 9's fills_done = p + 13 + 4n with FILL_LAND 5); in a machine the network and the memory
    agent decide it."""

    first: int = 12
    interval: int = 4

    def last_response(self, p: int, n: int) -> int:
        return p + self.first + self.interval * (max(n, 1) - 1)


class KernelClock:
    """One core's kernel counts through a RUN (module doc). `facts` overrides vector facts by name ("FETCH": 2,
    or "vector.FETCH": 2), checked as a machine's overrides are (models/machine/unit_timing.py); every other
    fact is upstream's."""

    def __init__(self, facts: Mapping[str, int] | None = None, memory: FillMemory = FillMemory()) -> None:
        given = {f"vector.{key.removeprefix('vector.')}": value for key, value in (facts or {}).items()}
        check_overrides("vector core", given)  # a fact that does not exist, or a value outside its limits
        self.f = {fact.name: given.get(fact.key, fact.value) for fact in VECTOR_FACTS}
        self.memory = memory
        self.start()

    def start(self) -> None:
        """A RUN starts: its first word executes at FIRST_T (rule 1); nothing pending."""
        self.t_next = self.f["FIRST_T"]
        self.drain = 0
        self.fills_done = 0
        self.ready = [0] * 16
        self.trace: list[tuple[int, int]] = []  # (pc, execute count) of every word executed

    # ------------------------------------------------------------ one word
    def word(self, pc: int, w: isa.Word, nc: int, *, depth: int = 1, last: isa.Word | None = None,
             n: int = 0) -> int:
        """The word at `pc` executes (`nc` chunks at its VL; an ALU word: `depth` stages whose last word is
        `last`; VFILL / VDRAIN: `n` lines / words). Returns its execute count; the clock moves on."""
        f, t = self.f, self.t_next
        self.trace.append((pc, t))
        op = w.op
        if op <= isa.ALU_LAST:
            self._alu(t, w, last or w, nc, depth)
            return t
        p = max(t, self.drain)
        if op == isa.OP_VSETMODE:
            self.t_next = p + f["FETCH"]
        elif op == isa.OP_VLD:
            self.t_next = p + f["PORT_SETUP"] + (f["LD32_CHUNK"] if w.dt == isa.DT_FP32 else f["LD16_CHUNK"]) * nc
        elif op == isa.OP_VST:
            self.t_next = p + f["PORT_SETUP"] + (f["ST32_CHUNK"] if w.dt == isa.DT_FP32 else f["ST16_CHUNK"]) * nc
        elif op in (isa.OP_VCVT, isa.OP_VSHUF):
            self.t_next = p + f["PORT_SETUP"] + f["XFORM_CHUNK"] * nc
        elif op == isa.OP_VBCAST:
            s_to_v = w.sa == isa.SRC_S  # S -> V: whole chunks; V -> S: one element
            self.t_next = p + (f["PORT_SETUP"] + f["XFORM_CHUNK"] * nc if s_to_v else f["V2S_T"])
        elif op == isa.OP_VRED and w.kind not in (isa.RedKind.ANY, isa.RedKind.ALL):
            beats = 2 * nc if w.kind >= isa.RedKind.SUMSQ else nc  # SUMSQ, DOT, EXPSUM: two beats a chunk
            self.drain = max(t + beats + f["PIPE_DRAIN"], self.drain) + f["PIPE_DRAIN"]
            self.t_next = self.drain - f["PIPE_DRAIN"] + f["RED_TAIL"]
        elif op == isa.OP_VSETI:
            self.t_next = t + f["SETI_T"]
        elif op == isa.OP_VBAR:
            self.t_next = max(t + 1, self.fills_done) + f["BAR_TAIL"]
        elif op == isa.OP_VFILL:
            fire = max(t, self.fills_done)  # one VFILL outstanding at a time
            self.t_next = fire + f["FILL_SETUP"] + f["XFER_GAP"] * n
            self.fills_done = self.memory.last_response(fire, n) + f["FILL_LAND"]
        elif op == isa.OP_VDRAIN:
            extra = f["NODE_EXTRA"] if w.node and n >= 2 else 0
            self.t_next = t + f["DRAIN_SETUP"] + extra + f["XFER_GAP"] * n
        else:  # VSETVL, VLOOP, VRED ANY / ALL, VHALT (its count: halt_count)
            self.t_next = t + f["FETCH"]
        return t

    def _alu(self, t: int, head: isa.Word, last: isa.Word, nc: int, depth: int) -> None:
        """Rules 3, 4 and 6: the beats issue once the head's three sources and the last stage's destination
        are ready; the last stage's destination is ready RAW_LAT (+ STAGE_LAT a further stage) after the last
        beat, unless it is a compare or the beats wrap the pending counter (H4)."""
        f = self.f
        r = self.ready
        b0 = max(t + 1 + f["FETCH"] * (depth - 1), r[head.va], r[head.vb], r[head.vc], r[last.vd])
        beats = nc * depth
        last_beat = b0 + beats - 1
        self.t_next = b0 + beats + f["FETCH"]
        self.drain = last_beat + f["PIPE_DRAIN"]
        wraps = beats % (1 << f["PEND_BITS"]) == 0
        if last.op not in isa.CMP_OPS and not wraps:
            r[last.vd] = last_beat + f["RAW_LAT"] + f["STAGE_LAT"] * (depth - 1)

    def halt_count(self) -> int:
        """The RUN's cycle count at VHALT (rule 1): its execute count + 1, the pipeline drained, the fills
        landed, + HALT_TAIL. Call after :meth:`word` of the VHALT."""
        t = self.trace[-1][1]
        return max(t + 1, self.drain, self.fills_done) + self.f["HALT_TAIL"]


__all__ = ["FillMemory", "KernelClock"]
