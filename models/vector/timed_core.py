"""A vector core model that keeps upstream's kernel clock: every RUN's execute trace and cycle count.

Why: the golden vector core (core.py) computes what a RUN does and nothing of when; this subclass hands
each executed word to a KernelClock (kernel_clock.py), which applies the timing rules, and keeps each RUN's
count (the one upstream's core reports in its completion) and each word's execute count. The words' results,
and the completion flits (whose count argument stays "wild"), are the golden core's, unchanged.
"""

from __future__ import annotations

from typing import Mapping

from . import isa
from .core import MAG_DEFAULT, Coord, Event, VectorCore, _Run
from .isa import IMEM_WORDS, Mode, Word, word_of
from .kernel_clock import FillMemory, KernelClock
from .walk import walk_total
from .words import WordFault


class TimedVectorCore(VectorCore):
    """VectorCore with a kernel clock: `run_counts` (None for a RUN that faulted) and `run_traces` (pc,
    execute count) per RUN, in order."""

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT, facts: Mapping[str, int] | None = None,
                 memory: FillMemory = FillMemory()) -> None:
        self.clock = KernelClock(facts, memory)
        self.run_counts: list[int | None] = []
        self.run_traces: list[list[tuple[int, int]]] = []
        super().__init__(coord, mag)

    def _start_run(self, inst: int, pc: int) -> list[Event]:
        self.clock.start()
        self.run_traces.append(self.clock.trace)
        self.run_counts.append(None)
        return super()._start_run(inst, pc)

    def _step(self, w: Word, r: _Run, out: list[Event]) -> bool:
        pc, nc = r.pc, (self.vl + 15) // 16  # the word's VL: a VSETVL changes it for the words after it
        depth, last, n = 1, None, 0
        if w.op <= isa.ALU_LAST and self.mode != Mode.TREE:
            depth = isa.CHAIN_DEPTH[Mode(self.mode)]
            last = word_of(self.imem[(pc + depth - 1) % IMEM_WORDS])
        elif w.op in (isa.OP_VFILL, isa.OP_VDRAIN):
            n = walk_total(tuple(b for _, b in self.dims[w.ad]))
        try:
            halted = super()._step(w, r, out)
        except WordFault:
            self.clock.trace.append((pc, self.clock.t_next))  # it entered execute, then faulted
            raise
        self.clock.word(pc, w, nc, depth=depth, last=last, n=n)
        if halted:
            self.run_counts[-1] = self.clock.halt_count()
        return halted


__all__ = ["TimedVectorCore"]
