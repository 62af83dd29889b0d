"""Has every posted DRAM write landed? The machine top's counter against the DRAM's own.

Completion is not landing (units.md §H.5): a vector core reports VHALT and a
cluster its DRAIN as soon as the last flit has left the unit, while the
MEM_WR_DATA flits are still crossing the mesh and the memory agent's queues.
A host that relayouts, reads back or re-baselines right then reads stale
data. The protocol gives the host no handshake for it, so the generated
machine top (tb/system/machine_top.py) counts the MEM_WR_DATA flits the endpoints
hand to the mesh (``wr_data_sent``) and the DRAM counts the words it writes
(``dram.wr_words``); every write handed to the mesh has landed exactly when
the two are equal. Both clear on reset; a backdoor load counts in neither.

Waiting is a bounded number of reads spaced in simulated time (Python never
wakes per cycle); a timeout names both counts and how many writes are
outstanding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cocotb.triggers import Timer

from models.bundle.executor import NotLanded


class LandingError(NotLanded):
    """Writes still outstanding: at a landing timeout, or when a DRAM read would see stale data."""


@dataclass(frozen=True)
class LandingState:
    """The two counters at one moment."""

    sent: int  # MEM_WR_DATA flits handed to the mesh since reset
    landed: int  # DRAM words written through the DRAM's port since reset

    @property
    def outstanding(self) -> int:
        return self.sent - self.landed

    def describe(self) -> str:
        return (f"{self.outstanding} write(s) outstanding: {self.sent} MEM_WR_DATA flit(s) handed to the mesh "
                f"(wr_data_sent), {self.landed} DRAM word(s) written (dram.wr_words)")


class Landing:
    """The landing check of one generated machine top (`top` = the harness's ``u_dut``)."""

    def __init__(self, top: Any, *, period_ns: int = 10) -> None:
        if not hasattr(top, "wr_data_sent"):
            raise ValueError(f"{top._name} has no wr_data_sent counter: regenerate it with tb/system/machine_top.py")
        self.top = top
        self.dram = top.dram
        self.period_ns = period_ns

    def state(self) -> LandingState:
        return LandingState(int(self.top.wr_data_sent.value), int(self.dram.wr_words.value))

    def faults_sent(self) -> int:
        """CU_SIGNAL FAULT flits handed to the mesh since reset."""
        return int(self.top.faults_sent.value)

    def check(self, what: str) -> None:
        """Refuse `what` (a DRAM read) while a write is outstanding."""
        st = self.state()
        if st.outstanding:
            raise LandingError(f"{what} refused: {st.describe()}; wait for landing first (units.md §H.5)")

    async def wait(self, timeout_cycles: int, what: str, *, interval: int = 16) -> LandingState:
        """Until every write handed to the mesh has landed; LandingError naming the counts on a timeout.

        A landed count above the sent one cannot happen on a generated top (a
        DRAM write is always a MEM_WR_DATA's) and is reported as such.
        """
        polls = max(1, math.ceil(timeout_cycles / interval))
        for _ in range(polls + 1):
            st = self.state()
            if st.outstanding < 0:
                raise LandingError(f"{what}: the DRAM wrote more words than MEM_WR_DATA flits were sent: "
                                   f"{st.describe()} (a write that does not come from the mesh?)")
            if st.outstanding == 0:
                return st
            await Timer(interval * self.period_ns, "ns")
        raise LandingError(f"{what}: writes did not land within {timeout_cycles} cycles: {self.state().describe()}")


__all__ = ["Landing", "LandingError", "LandingState"]
