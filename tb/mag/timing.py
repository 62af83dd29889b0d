"""The memory agent's service times, derived from its timing parameters, and the judge of measured ones.

rtl/mag/mag.v serves requests as upstream's memory port does (KohakuTPU at 7703ee8,
src/kohakuaccel/mas/core/mag_mem_port.v), behind upstream's DRAM port and verification AXI RAM
(rtl/mag/mag_port.v, mag_dram.v). :class:`MagTiming` turns one harness's parameters into the
cycle counts that design implies, edge by edge as the RTL headers describe them; at upstream's values
they are upstream's figures: a single-beat plain read every 12 cycles (measured on upstream's fused4:
a vector core's VFILL words arrive every 12), 20 cycles per QUANT entry and 8 + 6 + 20n from the take
of an n-entry run to the next take, about 14 cycles per single-beat write and 21 per 8-beat one.
The module benches measure the intervals on the agent's own links and judge them with
:func:`interval_errors`; nothing here is read back from a simulation it judges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from models.noc.flit import FIELDS, FlitType

TIMING_PARAMETERS = ("RD_LATENCY", "AR_FIFO_LAT", "R_FIFO_LAT", "W_FIFO_LAT", "B_FIFO_LAT", "QUANT_LAT")
PORT_EDGES = 3      # the engine's AR/AW register to the port's FIFO write: request register, grant, push
SKID_EDGES = 1      # the R skid between the port and the engine
QUANT_TURN = 4      # after the quantiser's done: latch (q_rdy), hand-over, re-arm, then the first beat


@dataclass(frozen=True)
class MagTiming:
    """One agent's timing parameters (mag_harness.v / mag.v / mag_port.v / mag_dram.v)."""

    rd_latency: int = 1     # mag_dram RD_LATENCY (axi_ram: the first beat the cycle after AR)
    ar_lat: int = 3         # mag_port AR_FIFO_LAT (also the AW crossing)
    r_lat: int = 3          # mag_port R_FIFO_LAT
    w_lat: int = 3          # mag_port W_FIFO_LAT
    b_lat: int = 3          # mag_port B_FIFO_LAT
    quant_lat: int = 8      # mag QUANT_LAT (mx_quant: done 8 edges after the 8th beat)

    @classmethod
    def of_harness(cls, dut: Any) -> "MagTiming":
        """The parameters a mag_harness top was built with."""
        values = [int(getattr(dut, name).value) for name in TIMING_PARAMETERS]
        return cls(*values)

    @property
    def first_beat(self) -> int:
        """Edges from an engine's take (its AR register set) to the edge it takes the burst's first beat."""
        return PORT_EDGES + self.ar_lat + self.rd_latency + self.r_lat + SKID_EDGES

    @property
    def plain_period(self) -> int:
        """Single-beat plain reads back to back: the beat is taken, the next request the cycle after."""
        return self.first_beat + 1

    @property
    def quant_entry_period(self) -> int:
        """Between two QUANT entries of a run (one DRAM word a cycle): 8 beats, then the later of the
        quantiser's turn-around and the next burst's first beat (its AR left with the 8th beat)."""
        return max(1 + self.quant_lat + QUANT_TURN, self.first_beat) + 7

    def quant_emit_edge(self) -> int:
        """Edges from an entry's 8th beat to its first response flit in the output register."""
        return 1 + self.quant_lat + QUANT_TURN - 1

    def quant_run(self, entries: int, peers: int = 0) -> int:
        """Take of an n-entry QUANT run to the take of the next request: the next one waits until the
        last entry has left the emit buffer (4 flits to each of 1 + peers destinations)."""
        last_beat = self.first_beat + 7 + self.quant_entry_period * (entries - 1)
        return last_beat + self.quant_emit_edge() + 4 * (1 + peers)

    def write_period(self, beats: int) -> int:
        """Writes back to back: issue, AW through the port (3 + AR FIFO), W from the cycle after AW as the
        W FIFO delivers, B the cycle after the last W, the B FIFO and the port's pulse, the ack, the next
        issue the cycle after."""
        first_w = max(self.ar_lat + 1, 2 + self.w_lat)
        return PORT_EDGES + first_w + (beats - 1) + 1 + self.b_lat + 2


def entry_first_flits(out: Sequence[tuple[int, int]], dst: tuple[int, int]) -> list[int]:
    """Cycles of the first word (rsvd 0) of each read response the agent sent to `dst`, in order: one per
    entry of an entry read, from `out`'s (cycle, flit) pairs."""
    keys = ("dst_x", "dst_y", "type", "rsvd")
    return [c for c, f in out if tuple(FIELDS[k].extract(f) for k in keys) == (*dst, FlitType.MEM_RD_RESP, 0)]


def interval_errors(what: str, cycles: Sequence[int], expected: Sequence[int]) -> list[str]:
    """One line per interval between consecutive `cycles` that differs from `expected` (one per interval),
    and one if the counts disagree; empty when every interval is as expected."""
    got = [b - a for a, b in zip(cycles, cycles[1:])]
    if len(got) != len(expected):
        return [f"{what}: {len(got)} intervals measured, {len(expected)} expected (cycles {list(cycles)})"]
    return [f"{what}: interval {i} ({cycles[i]} -> {cycles[i + 1]}) is {g} cycles, expected {e}"
            for i, (g, e) in enumerate(zip(got, expected)) if g != e]


__all__ = ["MagTiming", "TIMING_PARAMETERS", "entry_first_flits", "interval_errors"]
