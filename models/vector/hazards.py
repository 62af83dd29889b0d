"""Where upstream hardware would read a stale predicate (units.md V.8 hazard H1, V.9 ANY/ALL).

units.md makes predicates interlocked (normative): a predicated instruction
sees the result of every earlier compare, and so do our model and RTL. The
upstream pipeline does not interlock them, so a user must learn where the real
hardware would compute something else. This module decides, from the dynamic
issue order of one RUN, whether a predicate read falls inside upstream's
stale window, and names it.

The windows (units.md V.8, measured upstream in FLAT mode): the instruction
right after the compare always reads the old bits; with one intervening
single-stage (FLAT) ALU word the read is stale at VL <= 32 and fresh at
VL >= 64; with two intervening instructions it is always fresh. An instruction
that waits for the ALU pipeline to drain (VSETMODE, VHALT, and VLD, VST, VCVT,
VSHUF and VBCAST, which upstream vec_core.v holds until the pipeline is empty)
retires every compare before it. Where the window was not measured (VL 33..63,
one intervening word that is not a FLAT ALU word, a chained compare) we report
the read too, marked "unmeasured": over-reporting is the safe side of a warning
whose purpose is to say "the hardware may differ here".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class IssueClass(str, Enum):
    """How an issued instruction bears on an in-flight compare."""

    DRAINS = "drains"  # waits for the ALU pipeline: every earlier compare has written its predicate
    FLAT_ALU = "flat_alu"  # one single-stage ALU word
    OTHER = "other"  # anything else that neither drains nor was measured


@dataclass(frozen=True)
class Issued:
    pc: int
    word: int
    cls: IssueClass
    writes_p: int | None  # the predicate register a compare writes, else None
    chained: bool = False


@dataclass(frozen=True)
class Hazard:
    """One predicate read inside upstream's stale window."""

    name: str  # "H1" (a predicated write) or "H1-ANYALL" (VRED ANY/ALL's unsynchronised read)
    pc: int
    word: int
    pred: int
    writer_pc: int
    window: str  # "measured" or "unmeasured"
    vl: int

    @property
    def hid(self) -> str:
        """The hazard's id in the reports and the per-id counts ("H1" for both kinds of read)."""
        return "H1"

    def line(self, disassemble) -> str:
        """The HAZARD line the model and the RTL print (the RTL prints the same fields)."""
        return (f"HAZARD H1 pc={self.pc} inst={self.word:08x} ({disassemble(self.word)}) p={self.pred} "
                f"compare_pc={self.writer_pc} vl={self.vl} window={self.window}"
                + (" read=ANY/ALL" if self.name == "H1-ANYALL" else ""))


class PredicateTracker:
    """The issue log of one RUN and the last compare that wrote each predicate register."""

    def __init__(self) -> None:
        self.log: list[Issued] = []
        self.writer: dict[int, int] = {}  # predicate register -> index in log of its last writer

    def reset(self) -> None:
        self.log.clear()
        self.writer.clear()

    def check_read(self, pred: int, pc: int, word: int, vl: int, name: str = "H1") -> Hazard | None:
        """A read of P[pred] by the instruction about to issue at pc: a Hazard if upstream could read it stale."""
        at = self.writer.get(pred)
        if at is None:
            return None
        writer = self.log[at]
        between = self.log[at + 1:]
        if any(i.cls == IssueClass.DRAINS for i in between) or len(between) >= 2:
            return None
        window = "measured"
        if writer.chained:
            window = "unmeasured"
        if len(between) == 1:
            if between[0].cls != IssueClass.FLAT_ALU or 32 < vl < 64:
                window = "unmeasured"
            elif vl >= 64:
                return None
        return Hazard(name, pc, word, pred, writer.pc, window, vl)

    def issue(self, item: Issued) -> None:
        self.log.append(item)
        if item.writes_p is not None:
            self.writer[item.writes_p] = len(self.log) - 1


__all__ = ["Hazard", "IssueClass", "Issued", "PredicateTracker"]
