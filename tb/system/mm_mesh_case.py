"""What the mm_mesh_sys tests (tb/system/test_mm_mesh_sys.py) share: the machine's coordinates, random
GEMM operands and their L1 bursts, the cluster and vector-core models as the host drives them, the
CU_DATA framing count, DRAM poisoning and the word-by-word check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from models import cluster
from models.cu.base import SigCode, cu_inst, signal_fields
from models.machine.layouts import MM_MESH_SYS
from models.orch.host_port import pack_coord
from models.vector import Descriptor, VectorCore, program_flits
from models.vector.memory import CoreWithMemory
from tb.lib.artifacts import Artifacts
from tb.system.host_sequence import HostSequence

ORCH, VC, CL, MAG = MM_MESH_SYS.agent, MM_MESH_SYS.vector_cores[0], MM_MESH_SYS.clusters[0], MM_MESH_SYS.mag
TXN = 0x40
WORD_MASK = (1 << 256) - 1
FAULT_TIMEOUT = 3_000  # cycles a host waits for acks that will never come (the named failure)

# DRAM map (byte addresses; 256-bit words = byte >> 5)
A_BASE, B_BASE = 0x10000, 0x18000
OUT_BASE = 0x20000
OUT2_BASE = 0x28000
SAT_IN, SAT_OUT = 0x30000, 0x30800
REF_DRAIN, REF_EPILOGUE = 0x8000, 0x8800

SHAPES = {1: (1, 1, 1), 8: (2, 4, 2), 9: (3, 3, 2), 64: (8, 8, 1), 160: (10, 16, 1)}  # gm*gn -> gm, gn, nk


# ==================================================================== operands and models
@dataclass
class Operands:
    gm: int
    gn: int
    nk: int
    anchor: int
    a: np.ndarray
    scale_a: np.ndarray
    b: np.ndarray
    scale_b: np.ndarray

    @property
    def tiles(self) -> int:
        return self.gm * self.gn

    def a_granules(self) -> list[int]:
        return cluster.granules_of(cluster.a_entries(self.a, self.scale_a))

    def b_granules(self) -> list[int]:
        return cluster.granules_of(cluster.b_entries(self.b, self.scale_b))

    def record(self, art: Artifacts, peer_word: int) -> None:
        art.add("a", self.a, np.int8)
        art.add("b", self.b, np.int8)
        art.add("scale_a", self.scale_a, np.uint8)
        art.add("scale_b", self.scale_b, np.uint8)
        art.add("shape", [self.gm, self.gn, self.nk, self.anchor], np.int64)
        art.add("peer_word", peer_word, np.int64)


def make_operands(rng: np.random.Generator, gm: int, gn: int, nk: int, *, lo: int = -4, hi: int = 3,
                  random_scales: bool = False, anchor: int = cluster.ANCHOR_NEUTRAL) -> Operands:
    """int7 operands in lo..hi; scales 0xA0 (exact integer products) or random E5M3 near it."""
    def scales(shape):
        if not random_scales:
            return np.full(shape, 0xA0, dtype=np.int64)
        return (rng.integers(18, 22, size=shape) << 3 | rng.integers(0, 8, size=shape)).astype(np.int64)
    a = rng.integers(lo, hi + 1, size=(4 * gm, 32 * nk))
    b = rng.integers(lo, hi + 1, size=(32 * nk, 4 * gn))
    return Operands(gm, gn, nk, anchor, a, scales((4 * gm, nk)), b, scales((nk, 4 * gn)))


def inst(unit, payload: int, last: int = 0) -> int:
    return cu_inst(unit, ORCH, TXN, last, payload)


def cluster_after_gemm(ops: Operands) -> cluster.ClusterModel:
    """The cluster model with the operands in L1 and the GEMM swept."""
    m = cluster.ClusterModel(CL, MAG)
    m.receive(operand_bursts(ops))
    m.execute(inst(CL, cluster.gemm(ops.gm, ops.gn, ops.nk, anchor=ops.anchor)))
    return m


class VecModel:
    """The vector core model beside a memory agent (models.vector.memory.CoreWithMemory: its DRAM serves the core's
    reads and takes its writes), counting the acknowledgements and completions the core sends."""

    def __init__(self, dram: Mapping[int, int] | None = None) -> None:
        self.mem = CoreWithMemory(VectorCore(VC, MAG), dict(dram or {}))
        self.acks: dict[tuple[int, int], int] = {}
        self.completions: list[tuple[int, int]] = []

    @property
    def core(self) -> VectorCore:
        return self.mem.core

    def feed(self, flits: Sequence[int]) -> None:
        for ev in self.mem.take_all(flits):
            code, arg = signal_fields(ev.flit)
            if code == SigCode.DATA_RECEIVED:
                self.acks[ev.dst] = self.acks.get(ev.dst, 0) + 1
            else:
                self.completions.append((code, arg))

    def program(self, words: Sequence[int], descs: Mapping[int, Descriptor]) -> tuple[int, int]:
        """Run a program as the host dispatches it; returns the RUN's completion (code, arg)."""
        self.completions.clear()
        self.feed(program_flits(VC, ORCH, list(words), dict(descs), txn=TXN, run_last=1))
        return self.completions[-1]

    def read(self, word: int, n: int) -> list[int]:
        return [self.mem.read_word(32 * (word + i)) for i in range(n)]


def sentinel_words(rng: np.random.Generator, n: int) -> list[int]:
    """Recognisable filler: lanes 0x7e00 | random (FP16 NaNs: never produced by OP_EMIT or the ALU here)."""
    return [sum((0x7E00 | int(rng.integers(0, 0x200))) << (16 * i) for i in range(16)) for _ in range(n)]


def frame(stream: Sequence[int]) -> tuple[int, int]:
    """(descriptors, data flits) of a CU_DATA stream, framed by count."""
    n_desc = n_data = left = 0
    for f in stream:
        if left == 0:
            n_desc += 1
            left = ((f >> 224) & 0xFF) + 1
        else:
            n_data += 1
            left -= 1
    return n_desc, n_data


def describe(status) -> str:
    return status.describe() if hasattr(status, "describe") else str(status)


async def node_status_rows(seq: HostSequence, coords) -> np.ndarray:
    rows = []
    for c in coords:
        st = await seq.node_status(c)
        rows.append([pack_coord(c), st.encode()])
    return np.array(rows, dtype=np.uint64)


POISON = sum(0xDEAD << (16 * i) for i in range(16))


async def poison(seq: HostSequence, byte_addr: int, n: int) -> None:
    """Fill a DRAM range the test will read back, so a write that never happened cannot pass for one."""
    await seq.load_words(byte_addr >> 5, [POISON] * n)


def check_words(v, what: str, got: Sequence[int], want: Sequence[int]) -> int:
    """One check per word, bit for bit; returns how many matched."""
    ok = 0
    for i, (g, w) in enumerate(zip(got, want)):
        ok += v.check(g == w, f"{what}: word {i} is {g:#066x}, expected {w:#066x}")
    v.check(len(got) == len(want), f"{what}: {len(got)} words, expected {len(want)}")
    return ok


def operand_bursts(ops: Operands) -> list[int]:
    """The operands as host CU_DATA bursts into the cluster (flags 0): src becomes the orchestrator."""
    return (cluster.cu_data_bursts(CL, ORCH, 0, 0, ops.a_granules())
            + cluster.cu_data_bursts(CL, ORCH, 1, 0, ops.b_granules()))
