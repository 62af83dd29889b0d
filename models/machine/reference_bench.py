"""The reference peer-drain bench of protocol §7, as data: its instructions, its two vector programs, its 163 checks.

One place for what the reference bench sends and checks, so the cocotb benches
(tb/system/test_mm_mesh_ref.py, where the bench plays the agent, and
tb/system/test_mm_mesh_sys.py's test_reference_epilogue, through the
orchestrator) and the model-level test (tests/unit/machine/test_reference_bench.py,
:func:`run_on_models`) run the same flits and make the same checks.

The vector programs are encoded exactly as the fixed protocol packs them
(units.md V.2, V.4, V.11): A0 = base 0x8000, dim {stride 32, bound 9} (the
drain of L1 words 0..8 to DRAM); the epilogue ``VSETI s0, 16`` /
``VSETVL s0`` (VL = S0 = 16: one L1 word per VLD / VST) / ``VSETMODE FLAT``,
then per sub-tile t ``VLD v0, A1+t`` / ``VADD v1, v0, v0`` / ``VST v1, A2+t``,
``VDRAIN A3, 64`` (L1 words 64..72 to DRAM) and ``VHALT``, with A1 base 0
{1, 1}, A2 base 64 {1, 1}, A3 base 0x8800 {32, 9}. :data:`PROTOCOL_WORDS` pins
the example words of protocol §6 the programs contain. Every descriptor a
program names gets all five DESC writes (base, dims 1..4): the bench runs after
other tests without a reset of the descriptors, and a walk reads every dim.

The 163 checks (:class:`ReferenceChecks`): pass A: data arrived, 9 granules,
2 descriptors (3); pass B: acks arrived, 2 acks, ack arg = 0, no vector fault
(4); vector drain: retired, then each of 9 DRAM words equal to gold bit for bit
(1 + 9); epilogue: retired, no fault, each of 9 x 16 FP16 lanes equal to gold
doubled (1 + 1 + 144).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from models.cluster import (
    ANCHOR_NEUTRAL,
    ClusterModel,
    a_entries,
    acks_for,
    b_entries,
    cu_data_bursts,
    drain,
    gemm,
    granules_of,
)
from models.vector import (
    Descriptor,
    LANES,
    VectorCore,
    assemble,
    program_flits,
    program_payloads,
    run_payload,
    word_to_u16,
)
from models.cu.base import SigCode, cu_data_fields, cu_inst, signal_fields
from models.noc.flit import FlitType, flit_field
from models.machine.layouts import MM_MESH, Coord

__all__ = [
    "AGENT", "CLUSTER", "VECTOR", "TXN", "GM", "GN", "NK", "N_SUB", "VDRAIN_ADDR", "EPILOGUE_ADDR", "RESULT_WORD",
    "REFERENCE_CHECKS", "PROTOCOL_WORDS", "VectorStep", "operands", "operand_bursts", "cluster_instructions",
    "vdrain_step", "epilogue_step", "frame", "doubled", "ReferenceChecks", "run_on_models",
]

AGENT: Coord = (1, 1)  # the reference's agent: router (1,1)'s Local port (the orchestrator of mm_mesh_sys)
CLUSTER: Coord = MM_MESH.clusters[0]
VECTOR: Coord = MM_MESH.vector_cores[0]
TXN = 0x40
GM = GN = 3
NK = 2
N_SUB = GM * GN
VDRAIN_ADDR, EPILOGUE_ADDR = 0x8000, 0x8800
RESULT_WORD = 64  # the epilogue's VSTs write L1 words 64..72, VDRAIN A3 sends them
VL_REF = 16  # one L1 word (16 FP16 lanes) per VLD / VST
REFERENCE_CHECKS = 163
# The example words of protocol §6 that the reference programs contain.
PROTOCOL_WORDS: Mapping[str, int] = MappingProxyType({
    "VDRAIN A0, 0": 0xF0000000, "VLD v0, A1": 0xA1200000, "VADD v1, v0, v0": 0x18020000,
    "VST v1, A2": 0xA9420000, "VHALT": 0xF8000000,
})


@dataclass(frozen=True)
class VectorStep:
    """One vector program of the bench: its text, its words, its descriptors."""

    what: str
    lines: tuple[str, ...]
    words: tuple[int, ...]
    descriptors: Mapping[int, Descriptor]

    def payloads(self) -> list[int]:
        """IMEM writes from 0, the five DESC writes of every descriptor, RUN pc 0."""
        return program_payloads(list(self.words), dict(self.descriptors)) + [run_payload(0)]

    def flits(self, unit: Coord = VECTOR, src: Coord = AGENT, *, run_last: int = 0) -> list[int]:
        """The CU_INST flits the reference agent sends (txn 0x40, last 0 unless `run_last`)."""
        return program_flits(unit, src, list(self.words), dict(self.descriptors), txn=TXN, run_last=run_last)


def _step(what: str, lines: Sequence[str], descriptors: Mapping[int, Descriptor]) -> VectorStep:
    return VectorStep(what, tuple(lines), tuple(assemble(lines)), MappingProxyType(dict(descriptors)))


def vdrain_step(n_sub: int = N_SUB, addr: int = VDRAIN_ADDR) -> VectorStep:
    """§7 step 4: VDRAIN A0 (L1 words 0..n_sub-1) then VHALT; A0 = addr, dim {32, n_sub}."""
    return _step("vector drain", ["VDRAIN A0, 0", "VHALT"], {0: Descriptor(addr, ((32, n_sub),))})


def epilogue_step(n_sub: int = N_SUB, addr: int = EPILOGUE_ADDR) -> VectorStep:
    """§7 step 5: VL = 16 by S0, FLAT, per word VLD / VADD v1 = v0 + v0 / VST, VDRAIN A3 from L1 word 64."""
    lines = [f"VSETI s0, {VL_REF}", "VSETVL s0", "VSETMODE FLAT"]
    for t in range(n_sub):
        lines += [f"VLD v0, A1+{t}", "VADD v1, v0, v0", f"VST v1, A2+{t}"]
    lines += [f"VDRAIN A3, {RESULT_WORD}", "VHALT"]
    return _step("epilogue", lines, {1: Descriptor(0, ((1, 1),)), 2: Descriptor(RESULT_WORD, ((1, 1),)),
                                     3: Descriptor(addr, ((32, n_sub),))})


def operands(rng: np.random.Generator, gm: int = GM, gn: int = GN, nk: int = NK) -> tuple[np.ndarray, np.ndarray]:
    """int7 operands in -4..3: A (4gm x 32nk), B (32nk x 4gn); with 0xA0 scales the tile is the exact product."""
    return rng.integers(-4, 4, size=(4 * gm, 32 * nk)), rng.integers(-4, 4, size=(32 * nk, 4 * gn))


def operand_bursts(a, b, src: Coord = AGENT, cluster: Coord = CLUSTER) -> list[int]:
    """§7 step 1: one CU_DATA burst per side into the cluster (buf 0 and 1, off 0, flags 0)."""
    nk = np.shape(a)[1] // 32
    a_gran = granules_of(a_entries(a, np.full((np.shape(a)[0], nk), 0xA0)))
    b_gran = granules_of(b_entries(b, np.full((nk, np.shape(b)[1]), 0xA0)))
    return cu_data_bursts(cluster, src, 0, 0, a_gran) + cu_data_bursts(cluster, src, 1, 0, b_gran)


def cluster_instructions(agent: Coord = AGENT, *, pass_a: bool = True) -> list[int]:
    """§7 steps 2-3 as payloads: [GEMM, DRAIN to the agent (pass A)], GEMM, DRAIN to the vector core with
    flags 1 and dack = the agent (pass B)."""
    product = gemm(GM, GN, NK, anchor=ANCHOR_NEUTRAL)
    out = [product, drain(N_SUB, dnode=1, dst=agent, dbuf=0, dflags=0)] if pass_a else []
    return out + [product, drain(N_SUB, dnode=1, dst=VECTOR, dbuf=0, dflags=1, dack=agent)]


def frame(stream: Sequence[int]) -> tuple[int, list[int], dict[int, int]]:
    """Frame a CU_DATA stream by count: (descriptors, data flits, gold[off] as the agent records it)."""
    data: list[int] = []
    gold: dict[int, int] = {}
    left, off, n_desc = 0, 0, 0
    for f in stream:
        if left == 0:  # a descriptor
            n_desc += 1
            _, off, left, _, _ = cu_data_fields(f)
            continue
        data.append(f & ((1 << 256) - 1))
        gold[off] = f & ((1 << 256) - 1)
        off += 1
        left -= 1
    return n_desc, data, gold


def doubled(h: int) -> int:
    """FP16 doubled by exponent + 1 (zero stays zero; the reference tile has no overflow)."""
    return h if h & 0x7FFF == 0 else h + (1 << 10)


@dataclass
class ReferenceChecks:
    """The reference bench's 163 checks, counted apart; `sink` also receives each (ok, message)."""

    sink: Optional[Callable[[bool, str], object]] = None
    made: int = 0
    failed: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        self.made += 1
        if not ok:
            self.failed.append(what)
        if self.sink is not None:
            self.sink(bool(ok), f"reference: {what}")

    def pass_a(self, n_desc: int, data: Sequence[int]) -> None:
        self.check(len(data) > 0, "pass A: data arrived")
        self.check(len(data) == N_SUB, f"pass A: {len(data)} granules, expected {N_SUB}")
        self.check(n_desc == acks_for(N_SUB), f"pass A: {n_desc} descriptors, expected {acks_for(N_SUB)}")

    def pass_b(self, ack_flits: Sequence[int], vector_faulted: bool) -> None:
        acks = acks_for(N_SUB)
        self.check(len(ack_flits) > 0, "pass B: acks arrived")
        self.check(len(ack_flits) == acks, f"pass B: {len(ack_flits)} acks, expected {acks}")
        self.check(all(signal_fields(f)[1] == 0 for f in ack_flits), "pass B: ack arg is not buf_id 0")
        self.check(not vector_faulted, "pass B: the vector core faulted")

    def vector_drain(self, retired: bool, drained: Sequence[int], gold: Mapping[int, int]) -> None:
        self.check(retired, "vector drain: the RUN did not retire cleanly")
        for t in range(N_SUB):
            self.check(t < len(drained) and drained[t] == gold.get(t), f"vector drain: DRAM word {t} differs "
                                                                       f"from gold")

    def epilogue(self, retired: bool, faulted: bool, out: Sequence[int], gold: Mapping[int, int]) -> None:
        self.check(retired, "epilogue: the RUN did not retire")
        self.check(not faulted, "epilogue: the RUN faulted")
        for t in range(N_SUB):
            g = word_to_u16(gold.get(t, 0))
            d = word_to_u16(out[t] if t < len(out) else 0)
            for lane in range(LANES):
                want = doubled(int(g[lane]))
                self.check(int(d[lane]) == want, f"epilogue: word {t} lane {lane} is {int(d[lane]):#06x}, gold "
                                                 f"{int(g[lane]):#06x} doubled is {want:#06x}")


def _completions(events, unit: Coord) -> list[int]:
    return [e.flit for e in events if flit_field(e.flit, "type") == FlitType.CU_SIGNAL
            and (flit_field(e.flit, "src_x"), flit_field(e.flit, "src_y")) == unit
            and signal_fields(e.flit)[0] != SigCode.DATA_RECEIVED]


def run_on_models(rng: np.random.Generator) -> tuple[ReferenceChecks, dict[str, object]]:
    """The whole reference bench on the unit models (cluster model, vector core model with a DRAM): the 163
    checks it makes, and what it observed."""
    from models.vector.memory import CoreWithMemory

    a, b = operands(rng)
    ref = ReferenceChecks()
    cm = ClusterModel(CLUSTER)
    cm.receive(operand_bursts(a, b))
    cu: list[int] = []
    for p in cluster_instructions():
        cu += cm.execute(cu_inst(CLUSTER, AGENT, TXN, 0, p)).flits
    to_agent = [f for f in cu if (flit_field(f, "dst_x"), flit_field(f, "dst_y")) == AGENT]
    to_core = [f for f in cu if (flit_field(f, "dst_x"), flit_field(f, "dst_y")) == VECTOR]
    n_desc, data, gold = frame(to_agent)
    ref.pass_a(n_desc, data)
    mem = CoreWithMemory(VectorCore(VECTOR, MM_MESH.mag))
    acks = [e.flit for e in mem.take_all(to_core) if signal_fields(e.flit)[0] == SigCode.DATA_RECEIVED]
    ref.pass_b(acks, mem.core.cud_pending)
    steps = {}
    for step in (vdrain_step(), epilogue_step()):
        prog = step.flits()
        done = _completions(mem.take_all(prog), VECTOR)
        faulted = bool(done) and signal_fields(done[-1])[0] == SigCode.FAULT
        addr = VDRAIN_ADDR if step.what == "vector drain" else EPILOGUE_ADDR
        out = [mem.read_word(addr + 32 * t) for t in range(N_SUB)]
        if step.what == "vector drain":
            ref.vector_drain(len(done) == len(prog) and not faulted, out, gold)
        else:
            ref.epilogue(len(done) == len(prog), faulted, out, gold)
        steps[step.what] = out
    return ref, {"a": a, "b": b, "gold": gold, **steps}
