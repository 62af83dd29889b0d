"""Where upstream hardware could compute something else around chains and FP32 stores (units.md V.8 H2-H4).

Our model and RTL compute the normative result in every case below; this
module only names the places where upstream's pipeline may not, so a user of
a program learns it (one ``HAZARD`` line each, counted in the run's verdict).
The rules, from the dynamic issue order of one RUN (docs/vector_core.md
"Hazards"):

* **H2** - upstream keeps the settings of chain stages 1..D-1 in one set of
  registers. A D2/D4 chain head gathered after an earlier chain head, with no
  draining word between them, whose gathered stage settings differ from the
  earlier chain's may run the earlier chain's tail with the new settings. The
  settings of stage k >= 1 are its op, its three selectors and, for each S or
  K operand, the register number (K: ``field mod 4``) and the value read at
  the gather. Only the most recent chain's settings are held, so the new
  chain is compared with the chain right before it.
* **H3** - every VST with dt = 2: upstream writes elements 0..7 and then 8..15
  of chunk c to walk element 2c and leaves 2c+1 unwritten, so walk elements
  0 .. 2*nchunk-1 may differ.
* **H4** - a D4 chain at VL 113..128 issues 32 beats and upstream's 5-bit
  pending-beat count of its destination wraps to 0. Until the next draining
  word, every word that reads that register (an ALU word's V-selected
  operand, VBCAST V->S's source) may read its old contents. A chain whose
  last stage is a compare writes a predicate, which upstream does not count
  (that read is H1's business).

A *draining* word is one units.md V.8 names as waiting for the ALU pipeline:
VSETMODE, VHALT, VLD, VST, VCVT, VSHUF and VBCAST S->V. A RUN starts with
nothing in flight. Faulting words report nothing (the RUN ends there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from . import isa
from .isa import CMP_OPS, LANES, SRC_K, SRC_S, Word

H4_MIN_VL = 113  # 8 chunks: 8 x 4 stages = 32 beats, the 5-bit count wraps (units.md V.8 H4)
H4_DEPTH = 4

StageKey = tuple[int, ...]


@dataclass(frozen=True)
class ChainHazard:
    """One H2, H3 or H4 report: the word it names and the fields that identify it."""

    hid: str  # "H2", "H3" or "H4"
    pc: int
    word: int
    detail: str  # the identifying fields, as printed after the disassembly (the RTL prints the same)

    def line(self, disassemble: Callable[[int], str]) -> str:
        """The HAZARD line of the model (the RTL prints the same fields, without the disassembly)."""
        return f"HAZARD {self.hid} pc={self.pc} inst={self.word:08x} ({disassemble(self.word)}) {self.detail}"


def draining(w: Word) -> bool:
    """A word that waits for the ALU pipeline to drain (units.md V.8 H2)."""
    if w.op == isa.OP_VBCAST:
        return w.sa == SRC_S
    return w.op in (isa.OP_VSETMODE, isa.OP_VHALT, isa.OP_VLD, isa.OP_VST, isa.OP_VCVT, isa.OP_VSHUF)


def stage_key(g: Word, s: Sequence[int], k3: int) -> StageKey:
    """A gathered stage's settings: op, selectors, then (register number, value) of each S/K operand
    (0, 0 for a C operand)."""
    key = [g.op, g.sa, g.sb, g.sc]
    for sel, idx in zip(g.selectors, (g.va, g.vb, g.vc)):
        if sel == SRC_S:
            key += [idx, s[idx]]
        elif sel == SRC_K:
            key += [idx & 3, k3 if idx & 3 == 3 else isa.K_CONST[idx & 3]]
        else:
            key += [0, 0]
    return tuple(key)


def v_reads(w: Word) -> list[int]:
    """The vector registers a non-draining word reads: an ALU word's V-selected operands, VBCAST V->S's va."""
    if w.op <= isa.ALU_LAST:
        return [idx for sel, idx in zip(w.selectors, (w.va, w.vb, w.vc)) if sel == isa.SRC_V]
    if w.op == isa.OP_VBCAST and w.sa != SRC_S:
        return [w.va]
    return []


def fp32_store(pc: int, w: Word, vl: int, nchunk: int) -> ChainHazard:
    """H3 of a VST with dt = 2 at VL `vl` (`nchunk` chunks): walk elements 0 .. 2*nchunk-1 may differ
    upstream."""
    return ChainHazard("H3", pc, w.raw, f"vl={vl} walk=0..{2 * nchunk - 1}")


@dataclass
class ChainTracker:
    """Since the last draining word of this RUN: the last chain's stage settings and the destinations of
    32-beat chains."""

    prev_pc: int | None = None
    prev_stages: tuple[StageKey, ...] = ()
    unguarded: dict[int, int] = field(default_factory=dict)  # V register -> pc of the 32-beat chain writing it

    def reset(self) -> None:
        self.prev_pc = None
        self.prev_stages = ()
        self.unguarded.clear()

    def read(self, pc: int, w: Word) -> ChainHazard | None:
        """H4 when the word at pc reads a register a 32-beat chain writes (the lowest such register)."""
        hit = sorted(r for r in v_reads(w) if r in self.unguarded)
        if not hit:
            return None
        r = hit[0]
        return ChainHazard("H4", pc, w.raw, f"v={r} chain_pc={self.unguarded[r]}")

    def chain(self, pc: int, w: Word, stages: Sequence[StageKey], vl: int, dest: int | None) -> ChainHazard | None:
        """A chain head issuing with the settings of its stages 1..D-1 (`dest`: the V register it writes, None
        for a compare): H2 if they differ from the previous chain's. Records the chain."""
        depth = len(stages) + 1
        report = None
        if self.prev_pc is not None and len(self.prev_stages) == len(stages):
            differ = [k + 1 for k, (a, b) in enumerate(zip(self.prev_stages, stages)) if a != b]
            if differ:
                report = ChainHazard("H2", pc, w.raw, f"prev_pc={self.prev_pc} depth={depth} "
                                                      f"stages={''.join(map(str, differ))}")
        self.prev_pc, self.prev_stages = pc, tuple(stages)
        if depth == H4_DEPTH and vl >= H4_MIN_VL and dest is not None:
            self.unguarded[dest] = pc
        return report


def chain_dest(last: Word) -> int | None:
    """The V register a chain's last stage writes, None for a compare (a predicate write)."""
    return None if last.op in CMP_OPS else last.vd


__all__ = ["ChainHazard", "ChainTracker", "H4_DEPTH", "H4_MIN_VL", "chain_dest", "draining", "fp32_store",
           "stage_key", "v_reads"]
