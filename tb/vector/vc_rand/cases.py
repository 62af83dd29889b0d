"""What a case is: where things are (``Geometry``), an inbound burst (``Burst``), one RUN and everything
delivered before it (``Case``), and what the generator knows of the core between cases (``CaseState``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from models.cu.base import cu_inst
from models.noc.flit import FlitType, make_flit
from models.vector import isa
from models.vector import (
    IMEM_WORDS, L1_WORDS, MAX_WALK, N_DESC, VL_MAX, Descriptor, Mode, cu_data_burst, listing,
)

from .spec import ADDR_MOD

Coord = tuple[int, int]


@dataclass(frozen=True)
class Geometry:
    """Where things are: the core, the host that sends every CU_INST, the memory agent, peer endpoints.

    The default is the vector core's module bench (rtl/bench/vc_harness.v: a 1x1 mesh, bench
    endpoints on the edges, a memory agent whose DRAM holds ``dram_words`` words from byte
    ``dram_base``; an address outside reads 0 and a write there is dropped, so every walk stays
    inside). Peers send the second burst of an interleaving and receive node drains and acks.
    VFILL sources lie in the first half of the DRAM, VDRAIN destinations in the second.
    """

    unit: Coord = (1, 1)
    host: Coord = (1, 0)
    mag: Coord = (0, 1)
    peers: tuple[Coord, ...] = ((1, 2), (2, 1))
    dram_base: int = 0x8000_0000
    dram_words: int = 4096

    def __post_init__(self) -> None:
        if not self.peers:
            raise ValueError("Geometry: at least one peer is needed (interleaved bursts, node drains)")
        if {self.unit, self.mag} & {self.host, *self.peers}:
            raise ValueError("Geometry: the host and the peers must differ from the core and the memory agent")
        if self.dram_words < 2 * MAX_WALK or self.dram_words % 2 or self.dram_base % 32:
            raise ValueError(f"Geometry: the DRAM needs an even number of words >= {2 * MAX_WALK} (a 256-word "
                             f"fill region and a drain region) at a 32-byte aligned base; got {self.dram_words} "
                             f"words at {self.dram_base:#x}")

    @property
    def region_words(self) -> int:
        """Words in each of the fill and drain regions."""
        return self.dram_words // 2

    def region_base(self, window: str) -> int:
        """Byte address of the first word of the 'fill' or the 'drain' region."""
        return (self.dram_base + (32 * self.region_words if window == "drain" else 0)) % ADDR_MOD

    def in_region(self, window: str, addr: int) -> bool:
        """Whether byte `addr` lies in the region (offsets mod 2^40, as the memory agent subtracts its base)."""
        return (addr - self.region_base(window)) % ADDR_MOD < 32 * self.region_words

    def in_fill(self, addr: int) -> bool:
        return self.in_region("fill", addr)

    def in_drain(self, addr: int) -> bool:
        return self.in_region("drain", addr)

    def role(self, name: str) -> Coord:
        """'host' or 'peerN' -> a coordinate (peers taken modulo their number)."""
        if name == "host":
            return self.host
        return self.peers[int(name[4:]) % len(self.peers)]

    @property
    def node_targets(self) -> tuple[Coord, ...]:
        """Legal node-drain destinations and acknowledgement targets: never the core, never the memory agent."""
        return (self.host, *self.peers)


DEFAULT_GEOMETRY = Geometry()


@dataclass(frozen=True)
class Burst:
    """One inbound CU_DATA burst (units.md V.12): off/words/buf/flags/ack as the descriptor carries them.

    ``intruder_at``: data flit k is replaced by a flit from ``intruder`` (same txn, same ``last``), which
    interleaves the burst: it and the rest are dropped and F_CUDATA becomes pending.
    """

    off: int
    words: tuple[int, ...]
    src: str = "host"
    buf: int = 0
    flags: int = 0
    ack: Coord = (0, 0)
    txn: int = 0
    intruder_at: int | None = None
    intruder: str = "peer0"
    intruder_word: int = 0

    @property
    def rejected(self) -> bool:
        return self.buf != 0 or self.off + len(self.words) - 1 >= L1_WORDS

    @property
    def poisons(self) -> bool:
        """Whether this burst leaves F_CUDATA pending."""
        return self.rejected or self.intruder_at is not None

    def flits(self, geo: Geometry) -> list[int]:
        if self.intruder_at is not None and geo.role(self.intruder) == geo.role(self.src):
            raise ValueError(f"Burst: the intruder {self.intruder} is the sender {self.src} in this geometry")
        out = cu_data_burst(geo.unit, geo.role(self.src), self.words, off=self.off, buf=self.buf,
                            flags=self.flags, ack=self.ack, txn=self.txn)
        if self.intruder_at is not None:
            k = 1 + self.intruder_at
            out[k] = make_flit(geo.unit, geo.role(self.intruder), FlitType.CU_DATA, self.txn,
                               int(self.intruder_at == len(self.words) - 1), self.intruder_word)
        return out

    def describe(self) -> str:
        what = ("rejected" if self.rejected else f"interleaved by {self.intruder} at flit {self.intruder_at}"
                if self.intruder_at is not None else "accepted")
        return (f"CU_DATA from {self.src}: off {self.off} x{len(self.words)} buf {self.buf} flags {self.flags} "
                f"ack {self.ack} ({what})")


@dataclass(frozen=True)
class Case:
    """One RUN of the sequence and everything delivered before it (see the package docstring for the order)."""

    seed: int
    index: int
    focus: str
    label: str
    geometry: Geometry
    pc: int  # IMEM address of words[0] and the RUN's pc
    words: tuple[int, ...]
    inst: tuple[tuple[int, int, int], ...]  # CU_INST (txn, last, payload); the RUN is last
    bursts: tuple[Burst, ...]
    dram: Mapping[int, int]  # byte address -> 256-bit word read by this case's VFILLs
    descriptors: tuple[Descriptor, ...]  # A0..A7 as the RUN sees them
    expect_fault: int | None  # what the generator built the program to raise
    vl_after: int
    mode_after: int

    @property
    def payloads(self) -> list[int]:
        return [p for _, _, p in self.inst]

    @property
    def run_txn(self) -> int:
        return self.inst[-1][0]

    def data_flits(self) -> list[int]:
        """Inbound CU_DATA, in delivery order (each flit's src names its sender)."""
        return [f for b in self.bursts for f in b.flits(self.geometry)]

    def inst_flits(self) -> list[int]:
        """CU_INSTs from the host, the RUN last."""
        g = self.geometry
        return [cu_inst(g.unit, g.host, txn, last, p) for txn, last, p in self.inst]

    def streams(self) -> dict[Coord, list[int]]:
        """Every inbound flit from the host endpoint, in delivery order: bursts first, then the CU_INSTs.

        One link keeps the order, so a burst (an interleaving intruder included, whose
        src field names a peer) has landed before the IMEM writes let the RUN through.
        """
        return {self.geometry.host: self.data_flits() + self.inst_flits()}

    def listing(self) -> list[str]:
        """``pc: word  text`` lines, the address taken mod 512 (a program may wrap IMEM)."""
        out = []
        for line in listing(list(self.words), self.pc):
            addr, rest = line.split(":", 1)
            out.append(f"{int(addr) % IMEM_WORDS:4d}:{rest}")
        return out

    def describe(self) -> str:
        """Everything a failure message needs to reproduce the case by eye."""
        head = (f"case {self.index} of seed {self.seed}: {self.label} [focus {self.focus}]"
                f" -> {'fault ' + isa.FAULT_NAMES[self.expect_fault] if self.expect_fault else 'halt'}")
        lines = [head] + [b.describe() for b in self.bursts]
        used = {isa.Word(w).ad for w in self.words if isa.Word(w).op in isa.MEMORY_OPS}
        lines += [f"A{ad}: base {d.base:#x} dims {list(d.full_dims)}" for ad, d in enumerate(self.descriptors)
                  if ad in used]
        return "\n".join(lines + self.listing())


def _reset_descriptors() -> tuple[Descriptor, ...]:
    return tuple(Descriptor(0, ((0, 1),) * 4) for _ in range(N_DESC))


@dataclass
class CaseState:
    """What the generator must know of the core between cases (make_case advances it in place)."""

    geometry: Geometry = DEFAULT_GEOMETRY
    next_index: int = 0
    vl: int = VL_MAX
    mode: int = int(Mode.FLAT)
    desc: tuple[Descriptor, ...] = field(default_factory=_reset_descriptors)

    def advance(self, case: Case) -> None:
        self.next_index = case.index + 1
        self.vl, self.mode, self.desc = case.vl_after, case.mode_after, case.descriptors
