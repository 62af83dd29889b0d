"""The orchestrator as an event model: host registers, staging RAM, dispatcher and credit, untimed.

Behaviour of rtl/orch/orchestrator.v (its header is the reference), with the
encodings of models.orch.host_port and its ``SummaryModel`` for NODE_STATUS / SIG_DONE:

* host writes: PROG_DST / PROG_LEN / PROG_BASE hold values; a PROG_CRED write
  SETS the credit; any PROG_KICK write starts a dispatch unless one is running
  or PROG_BASE + PROG_LEN runs past the staging RAM (both: the kick is
  ignored and the error recorded, as the RTL's monitor prints it); a SIG_DONE
  write clears it; STAGE words merge into the slot;
* dispatch: slot by slot from PROG_BASE, dst rewritten to PROG_DST and src to
  the orchestrator's own coordinate, every other bit as staged; one credit per
  CU_INST pushed (at credit 0 the next CU_INST waits), other types free;
* inbound: every CU_SIGNAL addressed here counts in NODE_STATUS[src] whatever
  its code; only INST_COMPLETE (code 0) gives a credit back (an overflow past
  0xFFFF is recorded and the credit stays); other types are dropped.

"Flits left" counts flits not yet read out of the staging RAM; here a flit is
read and handed to the network in one step, untimed, so PROG_STAT's run bit is
``left != 0`` exactly when the dispatcher waits for credit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.cu.base import SigCode, signal_fields
from models.noc.flit import FlitType, flit_dst, flit_src, flit_type
from models.orch.host_port import (
    CREDIT_MAX, NODE_STATUS_BASE, STAGE_BASE, STAGE_STRIDE, STAGE_WORDS, WORD_MASK, Caps, ProgStat, Reg,
    SummaryModel, is_cu_inst, rewrite_header, unpack_coord, words_to_flit,
)
from models.vector.link import Event

Coord = tuple[int, int]


@dataclass
class OrchModel:
    """One orchestrator at `own` with `slots` staging slots."""

    own: Coord
    slots: int
    summary: SummaryModel = field(init=False)
    stage: list[list[int]] = field(init=False)
    dst: int = 0
    length: int = 0
    base: int = 0
    credit: int = 0
    left: int = 0  # flits of the running dispatch not yet emitted
    ptr: int = 0
    errors: list[str] = field(default_factory=list)  # what the RTL's monitors would print
    faults: list[tuple[Coord, int]] = field(default_factory=list)  # (source, fault code) of every FAULT
    dispatched: int = 0
    inst_pushed: int = 0
    version: int = 0  # counts what may change what the host reads (host writes, flits taken): a poll re-reads then

    def __post_init__(self) -> None:
        self.summary = SummaryModel(self.own)
        self.stage = [[0] * STAGE_WORDS for _ in range(self.slots)]

    # ------------------------------------------------------------ host port
    def read(self, addr: int) -> int:
        """The 64-bit word the host reads at `addr` (unmapped offsets read 0)."""
        if STAGE_BASE <= addr < STAGE_BASE + self.slots * STAGE_STRIDE:
            slot, word = divmod((addr - STAGE_BASE) // 8, STAGE_WORDS)
            value = self.stage[slot][word]
            return value & 0xFFFF_FFFF if word == STAGE_WORDS - 1 else value
        if NODE_STATUS_BASE <= addr < NODE_STATUS_BASE + 256 * 8:
            return self.summary.status(unpack_coord((addr - NODE_STATUS_BASE) // 8)).encode()
        regs = {Reg.CAPS: Caps(288, 4, self.slots, self.own).encode(), Reg.PROG_DST: self.dst,
                Reg.PROG_LEN: self.length, Reg.PROG_BASE: self.base, Reg.PROG_CRED: self.credit,
                Reg.PROG_STAT: ProgStat(self.left != 0, self.left, self.credit).encode(),
                Reg.SIG_DONE: self.summary.sig_done}
        return regs.get(addr, 0)

    def write(self, addr: int, value: int) -> list[Event]:
        """A full-word host write; returns the flits a kick makes the dispatcher send at once."""
        self.version += 1
        value &= WORD_MASK
        if STAGE_BASE <= addr < STAGE_BASE + self.slots * STAGE_STRIDE:
            slot, word = divmod((addr - STAGE_BASE) // 8, STAGE_WORDS)
            self.stage[slot][word] = value & 0xFFFF_FFFF if word == STAGE_WORDS - 1 else value
        elif addr == Reg.PROG_DST:
            self.dst = value & 0xFF
        elif addr == Reg.PROG_LEN:
            self.length = value & 0xFFFF
        elif addr == Reg.PROG_BASE:
            self.base = value & 0xFFFF
        elif addr == Reg.PROG_CRED:
            self.credit = value & 0xFFFF
            return self.emit()
        elif addr == Reg.SIG_DONE:
            self.summary.sig_done = 0
        elif addr == Reg.PROG_KICK:
            return self._kick()
        return []

    def _kick(self) -> list[Event]:
        if self.left:
            self.errors.append(f"the host kicked a dispatch while one is running ({self.left} flits left); "
                               f"kick ignored")
            return []
        if self.base + self.length > self.slots:
            self.errors.append(f"the host kicked a dispatch past the staging RAM: PROG_BASE={self.base} + "
                               f"PROG_LEN={self.length} > {self.slots} slots; not started")
            return []
        self.ptr, self.left = self.base, self.length
        return self.emit()

    # ------------------------------------------------------------ dispatcher
    def emit(self) -> list[Event]:
        """Every flit the dispatcher can send now (it stops at a CU_INST when the credit is 0)."""
        out: list[Event] = []
        target = unpack_coord(self.dst)
        while self.left:
            flit = words_to_flit(self.stage[self.ptr])
            if is_cu_inst(flit):
                if self.credit == 0:
                    break
                self.credit -= 1
                self.inst_pushed += 1
            out.append(Event(target, rewrite_header(flit, target, self.own)))
            self.ptr += 1
            self.left -= 1
            self.dispatched += 1
        return out

    # ------------------------------------------------------------ inbound
    def take(self, flit: int) -> list[Event]:
        """One flit the mesh delivers here; returns the flits a refilled credit releases."""
        self.version += 1
        dst = flit_dst(flit)
        if dst != self.own:
            self.errors.append(f"the NoC delivered a flit addressed to {dst} to the orchestrator at {self.own}")
            return []
        if flit_type(flit) != FlitType.CU_SIGNAL:
            self.summary.accept(flit)  # counted as dropped
            return []
        self.summary.accept(flit)
        code, arg = signal_fields(flit)
        src = flit_src(flit)
        if code == SigCode.FAULT:
            self.faults.append((src, arg))
        if code != SigCode.INST_COMPLETE:
            return []
        if self.credit == CREDIT_MAX:
            self.errors.append(f"credit overflow: an INST_COMPLETE from {src} arrived at credit 0xffff (more "
                               f"completions than credits given)")
            return []
        self.credit += 1
        return self.emit()

    @property
    def idle(self) -> bool:
        """No dispatch running (PROG_STAT[0] == 0)."""
        return self.left == 0


__all__ = ["OrchModel"]
