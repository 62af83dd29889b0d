"""A whole kernel on the unit models: what the host's dispatch of models.programs would leave in DRAM.

The golden run of a :class:`models.programs.KernelPrograms`, with no simulator:
per instance the cluster model (``models.cluster.ClusterModel``) executes its
program, its FILLs served from the DRAM image, its node drains delivered as
the CU_DATA bursts it emits into the paired vector core's model, its memory
drains applied to DRAM; then each vector core's model
(``models.vector.memory.CoreWithMemory``, one shared DRAM) takes its IMEM / DESC /
RUN flits as the host sends them (src = the agent, txn 0x40, ``last`` on the
RUN). The run records every acknowledgement and every completion the units
send to the agent, so a test can compare them with what the program builder
counted, and the output is read back from DRAM like the benches read it.

``stale=True`` first leaves every vector core in a state an earlier program
could have left: descriptors, VL, mode, S registers and K3 all wrong. A
program that sets every field its instructions read (the minimal DESC
policy) must give the same bits anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from models.cluster import ClusterModel, Op, decode_inst
from models.vector import FAULT_NAMES, Mode, N_DESC, N_SREGS, VectorCore
from models.cu.base import SigCode, cu_inst, signal_fields
from models.noc.flit import FIELDS, FlitType
from models.machine.layouts import Coord, Machine
from models.vector.memory import CoreWithMemory

__all__ = ["HOST_TXN", "ModelRun", "leave_stale_state", "run_on_models"]

HOST_TXN = 0x40  # the txn of the host's CU_INST flits (as the compiler's vector payloads carry)
ADDR40 = (1 << 40) - 1
PAYLOAD = (1 << 256) - 1


@dataclass
class ModelRun:
    """What a kernel left: DRAM (word index -> 256-bit word) and the signals that reached the agent."""

    dram: dict[int, int]
    acks: dict[Coord, int] = field(default_factory=dict)  # DATA_RECEIVED per sending (receiving) core
    completions: dict[Coord, int] = field(default_factory=dict)  # INST_ / BATCH_COMPLETE per unit
    faults: list[str] = field(default_factory=list)  # "unit: FAULT name" per FAULT signal
    cores: dict[Coord, CoreWithMemory] = field(default_factory=dict)

    def words(self, first_word: int, n: int) -> list[int]:
        return [self.dram.get(first_word + i, 0) for i in range(n)]

    def y(self, kernel) -> np.ndarray:
        """The kernel's (M, N) FP16 output, read from its y region."""
        from models.programs import unpack_tiled

        p, lay = kernel.plan, kernel.layout
        return unpack_tiled(self.words(lay.y_base >> 5, lay.y_bytes >> 5), p.m, p.n, p.gm, p.gn)


def _src(flit: int) -> Coord:
    return FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit)


def _dst(flit: int) -> Coord:
    return FIELDS["dst_x"].extract(flit), FIELDS["dst_y"].extract(flit)


def leave_stale_state(core: VectorCore) -> None:
    """Every descriptor field, VL, the mode, S1..S15 and K3 as an earlier, unrelated program might leave them."""
    for ad in range(N_DESC):
        core.base[ad] = 0x1234 * (ad + 1)
        core.dims[ad] = [(96, 3), (-5, 7), (512, 2), (3, 0)]
    core.vl, core.mode, core.k3 = 16, int(Mode.D2), 77
    core.s = [0x2A0000 + i for i in range(N_SREGS)]


def _record(run: ModelRun, agent: Coord, events) -> None:
    for ev in events:
        if ev.dst != agent or FIELDS["type"].extract(ev.flit) != FlitType.CU_SIGNAL:
            raise AssertionError(f"a unit sent {ev.flit:#x} to {ev.dst}; only signals to the agent {agent} "
                                 f"are expected here")
        code, arg = signal_fields(ev.flit)
        unit = _src(ev.flit)
        if code == SigCode.DATA_RECEIVED:
            run.acks[unit] = run.acks.get(unit, 0) + 1
        elif code == SigCode.FAULT:
            run.faults.append(f"{unit}: FAULT {FAULT_NAMES.get(arg, arg)}")
        else:
            run.completions[unit] = run.completions.get(unit, 0) + 1


def run_on_models(kernel, machine: Machine, images: Mapping[int, int], *, stale: bool = False) -> ModelRun:
    """Run every cluster program, then every vector program, of `kernel` on the models (module docstring)."""
    agent = machine.agent
    if agent is None:
        raise ValueError(f"machine {machine.name} has no agent: nobody would dispatch or receive the signals")
    run = ModelRun(dict(images))
    run.cores = {ip.vector.core: CoreWithMemory(VectorCore(ip.vector.core, machine.mag), run.dram)
                 for ip in kernel.instances}
    if stale:
        for mem in run.cores.values():
            leave_stale_state(mem.core)
    writes: dict[Coord, list[int]] = {}  # open MEM_WR_REQ per source: [byte address, beats left]
    for ip in kernel.instances:
        cm = ClusterModel(ip.cluster.cluster, machine.mag)
        for k, payload in enumerate(ip.cluster.payloads):
            out = cm.execute(cu_inst(ip.cluster.cluster, agent, HOST_TXN, int(k == len(ip.cluster.payloads) - 1),
                                     payload))
            if out.fault is not None:
                run.faults.append(f"{ip.cluster.cluster}: FAULT {out.fault.name}")
                continue
            run.completions[ip.cluster.cluster] = run.completions.get(ip.cluster.cluster, 0) + 1
            f = decode_inst(payload)
            if f["op"] == Op.FILL:
                cm.fill_responses(run.words(f["addr"] >> 5, 4 * (f["n"] or 1)), payload)
            for flit in out.flits:
                ftype = FIELDS["type"].extract(flit)
                if ftype == FlitType.CU_DATA:
                    dst = _dst(flit)
                    if dst not in run.cores:
                        raise AssertionError(f"a drain to {dst}, which runs no vector program of this kernel")
                    _record(run, agent, run.cores[dst].take(flit))
                elif ftype == FlitType.MEM_WR_REQ:
                    writes[_src(flit)] = [(flit >> 216) & ADDR40, ((flit >> 208) & 0xFF) + 1]
                elif ftype == FlitType.MEM_WR_DATA:  # data binds to its request by source (protocol §5)
                    w = writes[_src(flit)]
                    run.dram[(w[0] & ADDR40) >> 5] = flit & PAYLOAD
                    w[0] += 32
                    w[1] -= 1
                    if not w[1]:
                        del writes[_src(flit)]
    for ip in kernel.instances:
        payloads = ip.vector.payloads()
        mem = run.cores[ip.vector.core]
        for k, p in enumerate(payloads):
            _record(run, agent, mem.take(cu_inst(ip.vector.core, agent, HOST_TXN, int(k == len(payloads) - 1), p)))
        if mem.core.run is not None:
            raise AssertionError(f"the vector program on {ip.vector.core} did not halt (waiting for fills)")
    return run
