"""The counts of one built form: host flits, DRAM bytes, acknowledgements, completions.

Counted from the programs themselves, never from how they were built: the
cluster's FILLs and DRAINs from their decoded CU_INST fields (x and w_r bytes
read, temp bytes written, the SIG_DATA_RECEIVED acks a fused drain earns its
receiver), the vector programs' VFILL and VDRAIN bytes from the walk totals of
the descriptors those words name, the flits from the payloads each program
sends (IMEM words, DESC writes, the RUN).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

from models.cluster import Op, acks_for
from models.vector import OPCODES
from models.machine.layouts import Coord
from models.machine.planner import Plan

from .emission import InstancePrograms, VectorProgram, program_words
from .layout import ENTRY_BYTES, WORD_BYTES


@dataclass(frozen=True)
class Counts:
    """What one form of the kernel costs: host flits, DRAM bytes, acknowledgements, completions."""

    form: str
    cluster_flits: int
    vector_imem: int
    vector_desc: int
    vector_run: int
    x_read: int
    w_read: int
    temp_written: int
    temp_read: int
    y_written: int
    temp_bytes: int
    acks: Mapping[Coord, int]  # SIG_DATA_RECEIVED per receiving core, to await before RUN
    completions: Mapping[Coord, int]  # one per CU_INST, per unit

    @property
    def vector_flits(self) -> int:
        return self.vector_imem + self.vector_desc + self.vector_run

    @property
    def total_flits(self) -> int:
        return self.cluster_flits + self.vector_flits

    @property
    def dram_read(self) -> int:
        return self.x_read + self.w_read + self.temp_read

    @property
    def dram_written(self) -> int:
        return self.temp_written + self.y_written

    @property
    def dram_total(self) -> int:
        return self.dram_read + self.dram_written

    def node_status_counts(self) -> dict[Coord, int]:
        """What NODE_STATUS counts per unit over the round (acks and completions share it)."""
        out = dict(self.completions)
        for c, n in self.acks.items():
            out[c] = out.get(c, 0) + n
        return out


def _vector_bytes(prog: VectorProgram, op: str) -> int:
    """DRAM bytes the program's `op` (VFILL or VDRAIN, to memory) moves: its descriptors' walk totals."""
    code = OPCODES[op]
    descs = prog.descriptors
    return sum(descs[w.ad].total * WORD_BYTES for _, w in program_words(prog.words) if w.op == code and not w.node)


def _count(plan: Plan, form: str, instances: Sequence[InstancePrograms]) -> Counts:
    x_read = w_read = temp_written = 0
    acks: dict[Coord, int] = {}
    completions: dict[Coord, int] = {}
    for ip in instances:
        completions[ip.cluster.cluster] = completions.get(ip.cluster.cluster, 0) + len(ip.cluster.payloads)
        completions[ip.vector.core] = completions.get(ip.vector.core, 0) + len(ip.vector.payloads())
        for f in ip.cluster.fields():
            n = f["n"] or 1
            if f["op"] == Op.FILL:
                if f["sel"]:
                    w_read += n * ENTRY_BYTES
                else:
                    x_read += n * ENTRY_BYTES
            elif f["op"] == Op.DRAIN:
                if f["dnode"]:
                    if f["dflags"] & 1:
                        dst = (f["dst_x"], f["dst_y"])
                        acks[dst] = acks.get(dst, 0) + acks_for(n)
                else:
                    temp_written += n * WORD_BYTES
    temp_read = sum(_vector_bytes(ip.vector, "VFILL") for ip in instances)
    y_written = sum(_vector_bytes(ip.vector, "VDRAIN") for ip in instances)
    return Counts(
        form=form,
        cluster_flits=sum(len(ip.cluster.payloads) for ip in instances),
        vector_imem=sum(ip.vector.flits["imem"] for ip in instances),
        vector_desc=sum(ip.vector.flits["desc"] for ip in instances),
        vector_run=sum(ip.vector.flits["run"] for ip in instances),
        x_read=x_read, w_read=w_read, temp_written=temp_written, temp_read=temp_read, y_written=y_written,
        temp_bytes=temp_written, acks=MappingProxyType(acks), completions=MappingProxyType(completions),
    )
