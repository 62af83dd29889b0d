"""The memory agent's write-slot wedge monitor (rtl/mag/mag.v) through Icarus, no cocotb (tb/mag/alone.py).

Two writers open a write each, the second's MEM_WR_REQ ahead of the first's data in the write queue.
With one write slot the second request waits for a slot the first write holds until its data, which is
behind that request: upstream's port deadlocks the same way, and ours must say so (an ERROR line naming
WR_SLOTS, mon_err) rather than hang silently. With two slots the same flits complete: two acks, no monitor.
"""

from __future__ import annotations

from pathlib import Path

from models.mag.proto import wr_data, wr_req
from models.noc.flit import FlitType, flit_type
from tb.mag.alone import AloneRun, run_alone

MAG, A, B = (0, 1), (1, 0), (2, 0)
# A's request, B's request, then A's two data beats and B's: B's request holds the one slot A needs
FLITS = [wr_req(MAG, A, 0xA1, 0, 1), wr_req(MAG, B, 0xB1, 256, 1), wr_data(MAG, A, 0, False),
         wr_data(MAG, A, 1, True), wr_data(MAG, B, 0, False), wr_data(MAG, B, 1, True)]


def _run(tmp: Path, slots: int) -> AloneRun:
    return run_alone(tmp, FLITS, [0] * len(FLITS), {"RDQ_DEPTH": 8, "WRQ_DEPTH": 8, "Q_MARGIN": 0,
                                                     "WR_SLOTS": slots}, drain=200)


def _acks(run: AloneRun) -> int:
    return sum(1 for _, f in run.sent if flit_type(f) == FlitType.MEM_WR_ACK)


def test_one_slot_two_writers_is_reported_wedged(tmp_path: Path) -> None:
    run = _run(tmp_path, 1)
    assert run.mon_err and _acks(run) == 0, run.log
    wedge = [line for line in run.log.splitlines() if "write intake wedged" in line]
    assert len(wedge) == 1 and "WR_SLOTS=1" in wedge[0] and "from (2,0)" in wedge[0], run.log


def test_two_slots_complete_both_writes(tmp_path: Path) -> None:
    run = _run(tmp_path, 2)
    assert not run.mon_err and _acks(run) == 2, run.log
    assert "ERROR" not in run.log, run.log
