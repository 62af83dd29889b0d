"""The orchestrator with its dispatcher's clock: when each kicked flit enters the mesh, when PROG_STAT reads idle.

Why: a round's machine cycles start at its first KICK; the dispatcher reads the staging RAM one 64-bit word a
cycle, five words a flit, so a 128-flit kick is 640 cycles before the last flit leaves. The rules
(rtl/orch/orchestrator.v header, upstream's noc_orchestrator.v at 7703ee8; edge 0 = the edge the KICK's W beat
is taken):

* word k of flit i is read at edge 2 + 5i + k, the flit is pushed into the TX FIFO at 7 + 5i, the output
  register takes it at 8 + 5i, so the router's input FIFO takes it at 9 + 5i (:data:`KICK_TO_ROUTER`);
* run (PROG_STAT[0]) reads 0 from edge 2 + 5 * PROG_LEN;
* a CU_INST is read only while the credit is not 0; an INST_COMPLETE taken at edge t refills one credit and
  a dispatch held for credit reads its next word from t + 1;
* NODE_STATUS is written at the edge a CU_SIGNAL arrives (``take_at``).

The TX FIFO's depth (the fact orch.TX_DEPTH, 2..4096) is accepted and never binds here: the dispatcher
fills it one flit every five cycles and the link empties it one a cycle, so it holds more than one flit only
while the router's input FIFO (512 deep) refuses it, which the mesh model does not do. Measured on the RTL:
every round of the 24 bundles the same at TX_DEPTH=2 as at 16 (docs/machine.md).

Bits, credit and NODE_STATUS are models.orch.event_model.OrchModel's, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from models.orch.event_model import OrchModel
from models.orch.host_port import ProgStat, Reg
from models.vector.link import Event

from .unit import OutRegister, Stamped

FLIT_WORDS = 5        # staging words a flit: one read a cycle
FIRST_WORD = 2        # the kick's W edge to its first word's read
READ_TO_ROUTER = 7    # a flit's first word read to the router's input FIFO taking it (push 5, output 6, link 7)


@dataclass
class TimedOrch(OrchModel):
    """OrchModel whose dispatched flits carry the edge they enter the mesh (module doc)."""

    now: int = 0              # the machine's edge, set by the timed machine before the host reads
    word_at: int = 0          # the edge the dispatcher reads the next flit's first word
    idle_at: int = 0          # run reads 0 from this edge on
    link: OutRegister = field(default_factory=OutRegister)

    def read(self, addr: int) -> int:
        if addr == Reg.PROG_STAT:
            left = self.left + self._unread()
            return ProgStat(left != 0, left, self.credit).encode()
        return super().read(addr)

    def _unread(self) -> int:
        """Flits emitted to the model but whose first word the RTL has not read by `now`."""
        if self.now >= self.idle_at:
            return 0
        return -(-(self.idle_at - self.now) // FLIT_WORDS)

    @property
    def idle(self) -> bool:
        return self.left == 0 and self.now >= self.idle_at

    def write_at(self, addr: int, value: int, edge: int) -> list[Stamped]:
        """A host write acting at `edge` (its W beat); a kick's flits stamped."""
        if addr == Reg.PROG_KICK and not self.left:
            self.word_at = edge + FIRST_WORD
        return self._stamp(self.write(addr, value))

    def _stamp(self, events: list[Event]) -> list[Stamped]:
        out: list[Stamped] = []
        for ev in events:
            out.append((self.link.send(self.word_at + READ_TO_ROUTER), ev))
            self.word_at += FLIT_WORDS
        if events:
            self.idle_at = self.word_at if not self.left else self.word_at + FLIT_WORDS * self.left
        return out

    def take_at(self, flit: int, t: int) -> list[Stamped]:
        """A flit taken at edge `t`; a refilled credit lets a held dispatch read on from t + 1."""
        held = self.left
        if held and self.word_at < t + 1:
            self.word_at = t + 1
        return self._stamp(self.take(flit))


__all__ = ["TimedOrch"]
