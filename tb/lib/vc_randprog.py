"""Constrained-random programs for the vector core's differential test (RTL against models/vector_core.py).

A *sequence* of cases runs on ONE core whose state carries over (V, S, P, K3,
VL, mode, descriptors, L1, IMEM). ``make_case(seed, index, state)`` returns case
``index`` of the sequence named by ``seed`` and advances ``state`` (a small
``CaseState``: VL, mode, the eight descriptors, the geometry); with ``state=None``
it first replays cases 0..index-1 from the generator alone (no model), so every
case is reproducible from (seed, index). Case 0 is always ``init``: it defines
all of L1, V0..V15, S0..S15, P0..P3 and K3, so no later case reads a register
the RTL leaves uninitialised (units.md V.1).

A ``Case`` carries what a bench sends, in this order:

1. ``bursts`` - inbound CU_DATA bursts (``data_flits()``), delivered **between
   RUNs**: after the previous RUN retired and before this case's CU_INSTs. Each
   flit names its sender in its src field; the list is in delivery order, so a
   bench that needs the order (the interleaved-burst F_CUDATA case) sends them
   all from one endpoint and lets them settle before the CU_INSTs
   (``streams()``: everything from the host endpoint, in that order);
2. ``dram`` - byte address -> 256-bit word: the words this case's VFILLs read,
   to load into the memory agent's DRAM before the case;
3. ``inst`` - CU_INST (txn, last, payload): IMEM writes of ``words`` from ``pc``
   (mod 512), DESC writes of the descriptor fields that differ from what the
   core holds (so carried-over fields are exercised), a few no-op envelopes, and
   the RUN last (``inst_flits()``).

``predict(model, case)`` feeds all of that into a ``CoreWithMemory`` and returns
every flit the core sent. ``new_model()`` gives a model whose ``TracingCore``
logs what executed, for ``coverage()`` / ``missing()`` and
``timing_violations()`` (tb/lib/vc_randcov.py).

Rules that keep a result independent of the RTL's timing (the generator keeps
them by construction; ``timing_violations`` re-checks them on what executed):

* a VFILL's L1 words are not read or written (VLD, VST, VDRAIN, another VFILL)
  until a VBAR or VHALT after it, and no fault is raised with fills in flight;
* every VFILL source and VDRAIN-to-memory destination lies in the bench's DRAM
  (``Geometry.dram_base``/``dram_words``): sources in its first half, destinations
  in its second, so they are disjoint for the whole sequence (32-byte aligned:
  how a memory agent maps an unaligned address is not the core's business);
* node-form VDRAIN goes to the host or a peer, never the core or the memory agent;
* inbound CU_DATA only between RUNs (``predict`` refuses otherwise);
* every program halts: loops are counted from a VSETI right before them
  (counts 0..5), a body never holds VFILL/VSETVL/VSETMODE, words after a fault
  are never reached, and a program wraps pc 511 -> 0 only in the ``pcwrap``
  focus, where it still ends in a VHALT;
* ANY/ALL (quirk D4) and EXPSUM (quirk D5) read the pr/pm of the most recent
  ALU word; each RUN sets those before it reads them, so nothing depends on
  what a faulted word of an earlier RUN latched.

Every case has a focus (what it targets) and a label for messages. Foci are
visited in a seed-shuffled round robin, so N foci are all reached in N cases and
schedules inside a focus (VRED VLs, loop counts, fault variants) advance once per
round: a few hundred cases cover the list in ``vc_randcov.GOALS``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from models.cu_base import SigCode, cu_inst, signal_fields
from models.flit import FIELDS, FlitType, make_flit
from models.vc.core import Event
from models.vc.memory import CoreWithMemory
from models.vector_core import (
    DT_FP16, DT_FP32, IMEM_WORDS, L1_WORDS, LANES, MAX_WALK, N_DESC, SRC_C, SRC_K, SRC_S, SRC_V, VL_MAX,
    Descriptor, Fault, Mode, RedKind, cu_data_burst, desc_payload, encode_alu, encode_bare, encode_mem,
    encode_seti, encode_vcvt, encode_vdrain_node, encode_vloop, encode_vshuf, imem_payload, listing,
    node_record, pack_dim, run_payload,
)
from models.vc import isa

from .vc_randcov import (
    GOALS, Coverage, TracingCore, coverage, missing, new_model, raw_walk, reads, timing_violations, walk_product,
)

Coord = tuple[int, int]
ADDR_MOD = 1 << 40
MIN_WORDS, MAX_WORDS = 10, 60  # program length (init may use up to MAX_WORDS + 4)
CMP = (0x0B, 0x0C, 0x0D)
TRANSC = (0x0E, 0x0F, 0x10, 0x11)
VSEL = 0x0A
ALU_OPS = tuple(range(0x12))
OP = isa.OPCODES


# ================================================================ geometry and memory windows
@dataclass(frozen=True)
class Geometry:
    """Where things are: the core, the host that sends every CU_INST, the memory agent, peer endpoints.

    The default is the vector core's module bench (rtl/harness/vc_harness.v: a 1x1 mesh, bench
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


def _full(d: Descriptor) -> tuple[tuple[int, int], ...]:
    return d.full_dims


def full(d: Descriptor) -> Descriptor:
    """`d` with all four dimensions listed, so descriptors compare as the core holds them."""
    return d if len(d.dims) == 4 else Descriptor(d.base, d.full_dims)


def mem_walk(d: Descriptor) -> list[int]:
    """Byte addresses (mod 2^40) of a VFILL/VDRAIN walk of `d` (empty when F_LEN would fire)."""
    total = d.total
    return [] if total > MAX_WALK else [a % ADDR_MOD for a in raw_walk(d.base, _full(d), total)]


def walk_in(d: Descriptor, inside: Callable[[int], bool], lo: int = 1, hi: int = MAX_WALK) -> bool:
    """Whether `d` is a memory walk of lo..hi elements, every byte address 32-byte aligned and inside a window
    (how a memory agent maps an unaligned address is not the vector core's business)."""
    return lo <= d.total <= hi and all(a % 32 == 0 and inside(a) for a in mem_walk(d))


# ================================================================ values
E8_SPECIALS = (0x000000, 0x800000,  # +0, -0
               0x001234, 0x807FFF, 0x000001,  # non-canonical zeros (e = 0, m != 0; only VSETI makes them)
               0x7F8000, 0xFF8000,  # +Inf, -Inf
               0x7FC000, 0xFFC000, 0x7F8001, 0xFFFFFF,  # NaNs
               0x7F7FFF, 0xFF7FFF,  # +-max normal
               0x008000, 0x808000,  # +-min normal
               0x3F8000, 0xBF8000)  # +-1
FP16_SPECIALS = (0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFC01, 0x7BFF, 0xFBFF, 0x0400, 0x8400, 0x0001,
                 0x83FF, 0x3C00, 0xBC00)
FP32_SPECIALS = (0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001, 0x7F7FFFFF,
                 0x00800000, 0x807FFFFF, 0x00000001, 0x3F800000, 0x3F800080, 0x3F800180, 0x3F8000FF)
VL_BAD = (0, 129, 0x800080, 0x100, 0x110, 0xFFFFFF, 200)  # F_VL: 0, > 128, also when the low byte is legal


def e8_normal(rng: random.Random, lo: int = 118, hi: int = 136) -> int:
    """A finite, canonical E8M15 pattern with exponent in lo..hi."""
    return rng.getrandbits(1) << 23 | rng.randint(lo, hi) << 15 | rng.getrandbits(15)


def e8_value(rng: random.Random, special: float = 0.35) -> int:
    """An E8M15 immediate for a data scalar: a special value with probability `special`."""
    return rng.choice(E8_SPECIALS) if rng.random() < special else e8_normal(rng)


def fp16_lane(rng: random.Random) -> int:
    if rng.random() < 0.06:
        return rng.choice(FP16_SPECIALS)
    return rng.getrandbits(1) << 15 | rng.randint(8, 22) << 10 | rng.getrandbits(10)


def fp32_elem(rng: random.Random) -> int:
    if rng.random() < 0.06:
        return rng.choice(FP32_SPECIALS)
    e = rng.randint(110, 145) if rng.random() < 0.85 else rng.randint(1, 254)
    return rng.getrandbits(1) << 31 | e << 23 | rng.getrandbits(23)


def pack_lanes(values: Sequence[int], bits: int) -> int:
    """Little-endian lanes of `bits` each into one 256-bit word."""
    word = 0
    for i, v in enumerate(values):
        word |= (v & ((1 << bits) - 1)) << (bits * i)
    return word


def data_word(rng: random.Random) -> int:
    """One L1/DRAM word: 16 FP16 lanes or 8 FP32 elements (either dtype may load it; specials sprinkled)."""
    if rng.random() < 0.5:
        return pack_lanes([fp16_lane(rng) for _ in range(16)], 16)
    return pack_lanes([fp32_elem(rng) for _ in range(8)], 32)


def _f32(x: float) -> int:
    with np.errstate(over="ignore"):
        return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def transc_value(rng: random.Random) -> int:
    """An FP32 operand in a range a transcendental treats specially (units.md V.6.4)."""
    cls = rng.randrange(12)
    if cls == 0:
        return _f32(rng.uniform(128, 256) * rng.choice((1, -1)))  # EXP2 defect D1
    if cls == 1:
        return _f32(rng.uniform(256, 2000) * rng.choice((1, -1)))  # EXP2 saturates
    if cls == 2:
        return _f32(rng.uniform(-127, 127))
    if cls == 3:
        return _f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-40, 0))
    if cls == 4:
        return _f32(float(rng.randint(-130, 130)))  # exact integers: EXP2's table identity
    if cls == 5:
        return _f32(2.0 ** rng.randint(-120, 120))  # powers of 2 (INV/LOG2 identity) and of 4 (RSQRT)
    if cls == 6:
        return _f32(-(2.0 ** rng.uniform(-60, 60)))  # negatives: LOG2/RSQRT NaN
    if cls == 7:
        return rng.choice(FP32_SPECIALS)
    return _f32(2.0 ** rng.uniform(-100, 100))


# ================================================================ cases
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
    """One RUN of the sequence and everything delivered before it (see the module docstring for the order)."""

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


# ================================================================ the program builder
class Builder:
    """Emits one program while tracking what the generator relies on (VL, mode, fills in flight, loop state).

    Unit methods (``u_*``) return the words of one instruction (and any words it
    needs first, e.g. a VBAR), having applied their effect to the tracking;
    ``emit`` appends them. After ``fault_now()`` nothing is tracked any more:
    the rest of the program is never executed.
    """

    def __init__(self, rng: random.Random, state: CaseState) -> None:
        self.rng = rng
        self.geo = state.geometry
        self.vl, self.mode = state.vl, state.mode
        self.start_vl, self.start_mode = state.vl, state.mode
        self.prev_desc = state.desc
        self.desc = list(state.desc)
        self.fixed: set[int] = set()  # descriptors an emitted word uses: final for this RUN
        self.words: list[int] = []
        self.pending: set[int] = set()  # L1 words an outstanding VFILL will write
        self.loop = "idle"  # "idle" | "open" (will not close: a later VLOOP faults) | "unsure" (no later VLOOP)
        self.pr_known = self.pm_known = False  # D4 / D5 inputs set in this RUN
        self.dram: dict[int, int] = {}
        self.bursts: list[Burst] = []
        self.fault: int | None = None
        self.runs = True  # False when F_CUDATA stops the RUN before its first instruction
        self.wrap_pc = False
        self.allow_loops = True
        self.max_words = MAX_WORDS

    # -------------------------------------------------- basics
    @property
    def room(self) -> int:
        """Words left before the closing VHALT (and a VBAR) must go in."""
        return self.max_words - 2 - len(self.words)

    def emit(self, words: Sequence[int]) -> None:
        self.words.extend(words)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def reg(self) -> int:
        return self.rng.randrange(16)

    def bar_if(self, footprint: Sequence[int]) -> list[int]:
        """A VBAR first when an instruction would touch L1 words a VFILL has not yet delivered."""
        return [] if self.pending.isdisjoint(footprint) else self.flush()

    def flush(self) -> list[int]:
        """A VBAR if any fill is in flight (before a fault, a loop body, the end)."""
        if not self.pending:
            return []
        self.pending.clear()
        return [encode_bare("VBAR")]

    # -------------------------------------------------- descriptors
    def slot(self, suits: Callable[[Descriptor], bool], make: Callable[[], Descriptor], reuse: float = 0.35) -> int:
        """A descriptor for one walk: one that already suits (carried over or used by this RUN) or a new one.

        A descriptor an earlier word of this RUN uses is never changed: the DESC
        writes all precede the RUN.
        """
        fits = [ad for ad in range(N_DESC) if suits(self.desc[ad])]
        free = [ad for ad in range(N_DESC) if ad not in self.fixed]
        if fits and (not free or self.chance(reuse)):
            ad = self.rng.choice(fits)
        elif free:
            ad = self.rng.choice(free)
            self.desc[ad] = full(make())
        else:
            raise _NoSlot()
        self.fixed.add(ad)
        return ad

    def new_slot(self, d: Descriptor) -> int:
        """A descriptor holding exactly `d` (one already holding it, or a free one set to it)."""
        d = full(d)
        return self.slot(lambda x: x == d, lambda: d, reuse=1.0)

    def l1_desc(self) -> Descriptor:
        """An L1 walk (VLD/VST): 1..4 dims, strides negative, zero or beyond 512, base small or any 40-bit."""
        rng = self.rng
        nd = rng.choice((1, 1, 2, 2, 3, 4))
        strides = (0, 1, 1, -1, 2, -2, 3, 8, -8, 16, -17, 64, -64, 255, -255, 511, 512, -513)
        dims = []
        for _ in range(nd):
            s = rng.choice(strides) if rng.random() < 0.85 else rng.randint(isa.STRIDE_MIN, isa.STRIDE_MAX)
            dims.append((s, rng.choice((0, 1, 2, 2, 3, 4, 5, 8))))
        dims += [(rng.choice((0, 5, -3)), rng.choice((0, 1)))] * (4 - nd)
        base = rng.randrange(L1_WORDS) if rng.random() < 0.6 else rng.getrandbits(40)
        return Descriptor(base, tuple(dims))

    def l1_off(self, d: Descriptor) -> int:
        """A signed VLD/VST offset: small, anywhere in 14 bits, or one that carries the walk across 0 / 511."""
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(-16, 16)
        if r < 0.7:
            return self.rng.randint(-(1 << 13), (1 << 13) - 1)
        low = d.base % L1_WORDS
        return self.rng.choice((-low - self.rng.randint(1, 4), L1_WORDS - low - self.rng.randint(1, 4)))

    def bounds(self, lo: int, hi: int, nd: int | None = None, stepping: bool = False) -> list[int]:
        """1..4 bounds with a product in lo..hi (log-uniform), by peeling divisors off it; a spare 1 may read 0.

        `stepping`: every one of the nd bounds is at least 2, so the walk really has nd dimensions."""
        rng = self.rng
        nd = nd or rng.choice((1, 2, 2, 3, 4))
        if stepping:
            for _ in range(100):
                if lo == hi and lo & (lo - 1) == 0:  # a power of 2: split its exponent
                    cuts = sorted(rng.sample(range(1, lo.bit_length() - 1), nd - 1))
                    out = [1 << (b - a) for a, b in zip([0] + cuts, cuts + [lo.bit_length() - 1])]
                else:
                    out = [rng.randint(2, 8) for _ in range(nd)]
                if lo <= walk_product(out) <= hi:
                    return out
        total = round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))) if lo < hi else lo
        total = min(max(total, lo), hi)
        out = []
        for _ in range(nd - 1):  # peel random divisors off the total
            d = rng.choice([d for d in range(1, min(total, 32) + 1) if total % d == 0])
            out.append(d)
            total //= d
        out.append(total)
        rng.shuffle(out)
        return [0 if b == 1 and rng.random() < 0.3 else b for b in out]

    def mem_desc(self, bounds: Sequence[int], window: str, zero: bool = False) -> Descriptor:
        """A memory walk inside the 'fill' or 'drain' region: strides whole words (negative, zero, large as
        fits), the base placed so every element lands in the region.

        `zero`: the first dimension with a bound above 1 gets stride 0 (it re-reads / re-writes one word)."""
        rng = self.rng
        span = self.geo.region_words - 1  # words the walk may spread over
        steps = [(b or 1) - 1 for b in bounds]
        moving = max(1, sum(1 for n in steps if n))
        dims = []
        for b, n in zip(bounds, steps):
            cap = span // (moving * n) if n else 9
            units = [u for u in (1, 1, 2, 3, -1, -2, -5, 0, 7, -9, 40, -40, 300, -300) if abs(u) <= cap]
            unit = rng.choice(units + [rng.randint(-cap, cap)])
            if zero and n:
                unit, zero = 0, False
            dims.append((32 * unit, b))
        dims += [(32 * rng.randint(-9, 9), 1)] * (4 - len(dims))
        lo = sum(min(0, s * ((b or 1) - 1)) for s, b in dims)
        hi = sum(max(0, s * ((b or 1) - 1)) for s, b in dims)
        first = rng.randint(-lo // 32, (32 * span - hi) // 32)  # word of element 0 inside the region
        return Descriptor((self.geo.region_base(window) + 32 * first) % ADDR_MOD, tuple(dims))

    # -------------------------------------------------- state words
    def seti_raw(self, sreg: int, value: int) -> list[int]:
        """VSETI S[sreg] (sa 0, 1 or 2 all write S) with a raw 24-bit immediate."""
        word = encode_alu("VSETI", vd=sreg, sa=self.rng.choice((SRC_V, SRC_S, SRC_C)))
        return [word, value & 0xFFFFFF]

    def u_seti(self) -> list[int]:
        """VSETI of a data scalar or K3, often a special E8M15 value."""
        if self.chance(0.25):
            return encode_seti(e8_value(self.rng), k3=True)
        return self.seti_raw(self.reg(), e8_value(self.rng))

    def u_setvl(self, vl: int | None = None) -> list[int]:
        """VSETI then VSETVL of a legal VL (given, or random with ragged values and the edges)."""
        if vl is None:
            r = self.rng.random()
            vl = (self.rng.choice((1, 127, 128, 15, 17, 33)) if r < 0.2 else 16 * self.rng.randint(1, 8)
                  if r < 0.5 else self.rng.randint(1, VL_MAX))
        s = self.reg()
        self.vl = vl
        return self.seti_raw(s, vl) + [encode_alu("VSETVL", va=s)]

    def u_setmode(self, mode: int) -> list[int]:
        """VSETMODE; ir[16:15] (va[3:2]) is ignored, so it is random."""
        self.mode = int(mode)
        return [encode_alu("VSETMODE", va=int(mode) | self.rng.randrange(4) << 2)]

    def mode_to(self, mode: int, again: float = 0.15) -> list[int]:
        """VSETMODE only when the mode differs (sometimes a redundant one)."""
        return self.u_setmode(mode) if mode != self.mode or self.chance(again) else []

    def leave_tree(self) -> list[int]:
        return self.u_setmode(self.rng.choice((Mode.FLAT, Mode.D2, Mode.D4))) if self.mode == Mode.TREE else []

    # -------------------------------------------------- ALU words and chains
    def alu_op(self, chain: bool) -> int:
        """An ALU opcode; compares and VSEL are heavier in chains (predicate writes, selects on C)."""
        r = self.rng.random()
        if r < (0.25 if chain else 0.15):
            return self.rng.choice(CMP)
        if r < (0.33 if chain else 0.22):
            return VSEL
        return self.rng.choice(ALU_OPS)

    def alu_word(self, op: int, head: bool, **force: int) -> int:
        """One ALU word: a head / FLAT word takes V, S or K operands, a stage C, S or K; pm 0..3 at random."""
        rng = self.rng
        pool, weights = ((SRC_V, SRC_S, SRC_K), (6, 3, 1.5)) if head else ((SRC_C, SRC_S, SRC_K), (6, 2, 1.5))
        f = dict(vd=self.reg(), va=self.reg(), vb=self.reg(), vc=self.reg(), pr=rng.randrange(4),
                 pm=rng.choices((0, 1, 2, 3), (4, 2, 2, 1.5))[0], bit0=int(rng.random() < 0.05))
        f.update(sa=rng.choices(pool, weights)[0], sb=rng.choices(pool, weights)[0], sc=rng.choices(pool, weights)[0])
        if not head and SRC_C not in (f["sa"], f["sb"], f["sc"]) and rng.random() < 0.7:
            f["sa"] = SRC_C
        f.update(force)
        return encode_alu(op, **f)

    def u_alu(self, ops: Sequence[int] | None = None, force: Sequence[dict] | None = None) -> list[int]:
        """One ALU instruction in the current mode: a FLAT word or a D2/D4 chain (never in TREE)."""
        assert self.mode != Mode.TREE, "ALU words fault in TREE mode"
        depth = isa.CHAIN_DEPTH[Mode(self.mode)]
        ops = list(ops) if ops is not None else [self.alu_op(depth > 1) for _ in range(depth)]
        force = list(force) if force is not None else [{}] * depth
        assert len(ops) == len(force) == depth
        self.pr_known = self.pm_known = True
        return [self.alu_word(op, k == 0, **fk) for k, (op, fk) in enumerate(zip(ops, force))]

    def chain_pattern(self) -> tuple[list[int], list[dict]]:
        """A chain shape worth hitting: compare feeding VSEL on C, compare last (predicate write), transcendental."""
        depth = isa.CHAIN_DEPTH[Mode(self.mode)]
        rng = self.rng
        pick = rng.randrange(4)
        ops = [self.alu_op(True) for _ in range(depth)]
        force: list[dict] = [{} for _ in range(depth)]
        if pick == 0:  # compare, then VSEL selecting on its 1.0 / +0
            k = rng.randrange(depth - 1)
            ops[k], ops[k + 1] = rng.choice(CMP), VSEL
            force[k + 1] = {"sc": SRC_C, "sa": rng.choice((SRC_S, SRC_K)), "sb": rng.choice((SRC_S, SRC_K, SRC_C))}
        elif pick == 1:  # the last stage a compare: the chain writes P[pr]
            ops[-1] = rng.choice(CMP)
        elif pick == 2:  # a compare in the middle, its value used by the next stage
            k = rng.randrange(depth - 1)
            ops[k] = rng.choice(CMP)
        else:  # transcendentals along the chain (the SiLU shape: VMUL, VEXP2, VADD 1, VINV)
            ops = ([0x05, 0x0E, 0x03, 0x10] if depth == 4 else [0x05, rng.choice(TRANSC)])
            force[0] = {"sb": SRC_S}
            if depth == 4:
                force[2] = {"sa": SRC_C, "sc": SRC_K, "vc": 1}
        return ops, force

    # -------------------------------------------------- vector words
    def u_vld(self, dt: int | None = None, vd: int | None = None, ad: int | None = None, off: int | None = None,
              ) -> list[int]:
        dt = dt or self.rng.choice((DT_FP16, DT_FP32))
        return self._l1_op("VLD", dt, self.reg() if vd is None else vd, ad, off)

    def u_vst(self, dt: int | None = None, vd: int | None = None) -> list[int]:
        return self._l1_op("VST", dt or self.rng.choice((DT_FP16, DT_FP32)), self.reg() if vd is None else vd)

    def _l1_op(self, name: str, dt: int, vd: int, ad: int | None = None, off: int | None = None) -> list[int]:
        if ad is None:
            ad = self.slot(lambda d: True, self.l1_desc)
        d = self.desc[ad]
        off = self.l1_off(d) if off is None else off
        steps = -(-self.vl // LANES) * (2 if dt == DT_FP32 else 1)
        footprint = [a % L1_WORDS for a in raw_walk(d.base, _full(d), steps, off)]
        return self.bar_if(footprint) + [encode_mem(name, ad, off, vd, dt)]

    def u_vbcast(self) -> list[int]:
        """VBCAST: sa = 1 broadcasts S to V; sa 0, 2 or 3 copies element 0 to S."""
        if self.chance(0.5):
            return [encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=SRC_S)]
        return [encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=self.rng.choice((SRC_V, SRC_C, SRC_K)))]

    def u_vshuf(self, with_shift: bool = True, shift: int | None = None) -> list[int]:
        """VSHUF by S[vb][3:0]; the shift scalar is often set just before (upper bits random, ignored)."""
        s = self.reg()
        shift = self.rng.randrange(16) if shift is None else shift
        pre = self.seti_raw(s, self.rng.getrandbits(20) << 4 | shift) if with_shift else []
        return pre + [encode_vshuf(self.reg(), self.reg(), s)]

    def u_vcvt(self) -> list[int]:
        return [encode_vcvt(self.reg(), self.reg(), self.rng.choice((isa.DT_CVT_ROUND, isa.DT_CVT_RAW)))]

    def ensure_pr(self) -> list[int]:
        """Make the most recent ALU/VRED word one of this RUN's (ANY/ALL read its pr, quirk D4)."""
        if self.pr_known:
            return []
        if self.mode != Mode.TREE:
            return self.u_alu()
        pre = [] if self.vl % LANES == 0 else self.u_setvl(16 * self.rng.randint(1, 8))
        return pre + self.u_vred(RedKind.SUM)

    def u_anyall(self) -> list[int]:
        pre = self.ensure_pr()
        kind = self.rng.choice((RedKind.ANY, RedKind.ALL))
        vc = int(kind) | (8 if self.chance(0.2) else 0)
        self.pr_known = True
        return pre + [encode_alu("VRED", vd=self.reg(), va=self.reg(), vc=vc, pr=self.rng.randrange(4))]

    def u_vred(self, kind: int) -> list[int]:
        """VRED kind 0..5 (needs TREE and VL % 16 == 0); sa/sb/sc/pm are not read, so they are random."""
        assert self.mode == Mode.TREE and self.vl % LANES == 0
        rng = self.rng
        if kind == RedKind.EXPSUM and not self.pm_known:
            kind = RedKind.SUM  # EXPSUM's write mask takes the pm of the last ALU word (D5): one of this RUN
        va = self.reg()
        vb = va if kind == RedKind.SUMSQ and rng.random() < 0.7 else self.reg()
        self.pr_known = True
        return [encode_alu("VRED", vd=self.reg(), va=va, vb=vb, vc=int(kind) | (8 if rng.random() < 0.15 else 0),
                           pr=rng.randrange(4), sa=rng.randrange(4), sb=rng.randrange(4), sc=rng.randrange(4),
                           pm=rng.randrange(4))]

    # -------------------------------------------------- transfers
    def u_fill(self, lo: int = 1, hi: int = 48, start: int | None = None, zero: bool = False,
               nd: int | None = None) -> list[int]:
        """VFILL of lo..hi elements from a multi-dimensional walk in FILL_WINDOW; its L1 words become pending.

        `nd`: a new walk of exactly nd stepping dimensions (otherwise 1..4, and a suitable one may be reused)."""
        shape = nd is not None or zero
        ad = self.slot(lambda d: walk_in(d, self.geo.in_fill, lo, hi),
                       lambda: self.mem_desc(self.bounds(lo, hi, nd or self.rng.choice((1, 2, 3, 4)), nd is not None),
                                             "fill", zero), reuse=0.0 if shape else 0.25)
        d = self.desc[ad]
        start = self.rng.randrange(L1_WORDS) if start is None else start
        footprint = [(start + n) % L1_WORDS for n in range(d.total)]
        pre = self.bar_if(footprint)
        self.pending.update(footprint)
        for a in mem_walk(d):
            self.dram.setdefault(a, data_word(self.rng))
        return pre + [encode_mem("VFILL", ad, start)]

    def u_drain(self, lo: int = 1, hi: int = 32, start: int | None = None, zero: bool = False) -> list[int]:
        """VDRAIN to memory: lo..hi L1 words to a walk in DRAIN_WINDOW (`zero`: one dimension rewrites a word)."""
        ad = self.slot(lambda d: walk_in(d, self.geo.in_drain, lo, hi),
                       lambda: self.mem_desc(self.bounds(lo, hi, 2 if zero else None, zero), "drain", zero),
                       reuse=0.0 if zero else 0.3)
        return self._drain_words(ad, start, lambda s: encode_mem("VDRAIN", ad, s))

    def node_desc(self, lo: int, hi: int) -> Descriptor:
        """A node-drain record (granule offset, ack, fin/mesh: remote or local) and bounds for the count."""
        rng = self.rng
        ack = (0, 0) if rng.random() < 0.4 else (rng.randrange(16), rng.randrange(16))
        fin = (0, 0) if rng.random() < 0.5 else (rng.randrange(1, 16), rng.randrange(16))
        rec = node_record(rng.getrandbits(16), ack, fin, rng.randrange(4))
        dims = [(rng.randint(-300, 300), b) for b in self.bounds(lo, hi)]  # strides are ignored
        return Descriptor(rec, tuple(dims))

    def u_node(self, lo: int = 1, hi: int = 24, start: int | None = None) -> list[int]:
        """VDRAIN in the node form to the host or a peer (buf, signal bit random)."""
        ad = self.slot(lambda d: lo <= d.total <= hi, lambda: self.node_desc(lo, hi), reuse=0.3)
        dst = self.rng.choice(self.geo.node_targets)
        buf, sig = self.rng.randrange(16), self.rng.randrange(2)
        return self._drain_words(ad, start, lambda s: encode_vdrain_node(ad, s, dst, buf, sig))

    def _drain_words(self, ad: int, start: int | None, word: Callable[[int], int]) -> list[int]:
        total = self.desc[ad].total
        start = self.rng.randrange(L1_WORDS) if start is None else start
        return self.bar_if([(start + n) % L1_WORDS for n in range(total)]) + [word(start)]

    # -------------------------------------------------- bursts
    def burst(self, off: int, words: Sequence[int], **kw) -> Burst:
        b = Burst(off, tuple(words), txn=self.rng.randrange(256), **kw)
        self.bursts.append(b)
        return b

    def ack_target(self) -> Coord:
        return (0, 0) if self.chance(0.5) else self.rng.choice(self.geo.node_targets)

    # -------------------------------------------------- loops
    def body_units(self) -> list[tuple[int, Callable[[], list[int]]]]:
        """(size, emitter) of the instructions a loop body may hold in the current mode."""
        units: list[tuple[int, Callable[[], list[int]]]] = [
            (1, self.u_vld), (1, self.u_vst), (1, self.u_vbcast), (1, lambda: self.u_vshuf(False)),
            (1, self.u_vcvt), (2, self.u_seti), (1, lambda: [encode_bare("VBAR")])]
        if self.mode == Mode.TREE:
            if self.vl % LANES == 0:
                units.append((1, lambda: self.u_vred(self.rng.randrange(6))))
        else:
            units += [(isa.CHAIN_DEPTH[Mode(self.mode)], self.u_alu)] * 3
        if self.pr_known:
            units.append((1, self.u_anyall))
        return units

    def body(self, length: int) -> list[int]:
        """Loop-body words of exactly `length` (the instructions end exactly at the loop end)."""
        out: list[int] = []
        units = self.body_units()
        while len(out) < length:
            size, fn = self.rng.choice([u for u in units if u[0] <= length - len(out)])
            words = fn()
            assert len(words) == size, (size, words)
            out += words
        return out

    def u_loop(self, count: int, length: int, misaligned: bool = False) -> list[int]:
        """VSETI count; VLOOP; body. `misaligned`: the body length ends inside a VSETI or a chain, so the
        loop never closes (V.5): the body runs once and the loop stays active."""
        if length + (3 if misaligned else 0) > 15 or self.room < length + 8:
            raise _NoRoom()
        pre = self.flush()
        s = self.reg()
        body = self.body(length)
        vb = length
        if misaligned:
            multi = [u for u in self.body_units() if u[0] >= 2]
            _, fn = self.rng.choice(multi)
            tail = fn()
            body += tail
            vb = length + self.rng.randint(1, len(tail) - 1)
        if misaligned:
            self.loop = "open"
        elif vb == 0 and count >= 2:
            self.loop = "unsure"  # units.md is silent on whether a 0-word loop with count >= 2 stays active
        return pre + self.seti_raw(s, count) + [encode_vloop(s, vb)] + body

    # -------------------------------------------------- random filler
    def random_unit(self, transfers: bool = True) -> list[int]:
        """One instruction that is legal here and now (no fault), weighted toward ALU work."""
        rng = self.rng
        choices: list[tuple[float, Callable[[], list[int]]]] = [
            (2, self.u_vld), (1.5, self.u_vst), (0.6, self.u_vbcast), (0.6, self.u_vshuf), (0.5, self.u_vcvt),
            (0.8, self.u_seti), (0.5, self.u_anyall), (0.3, self.u_setvl)]
        if self.mode == Mode.TREE:
            if self.vl % LANES == 0:
                choices.append((3, lambda: self.u_vred(rng.randrange(6))))
            choices.append((1, self.leave_tree))
        else:
            choices.append((6, self.u_alu))
            choices.append((0.3, lambda: self.u_setmode(rng.choice(list(Mode)))))
        if transfers:
            choices += [(0.5, self.u_fill), (0.4, self.u_drain), (0.3, self.u_node),
                        (0.3, lambda: self.flush() or [encode_bare("VBAR")])]
        if self.allow_loops and self.loop == "idle" and self.room > 12:
            choices.append((0.4, lambda: self.u_loop(rng.randint(0, 5), rng.randint(0, 5))))
        fn = rng.choices([c[1] for c in choices], [c[0] for c in choices])[0]
        return fn()

    def attempt(self, fn: Callable[[], list[int]]) -> bool:
        """Emit one unit unless it finds no descriptor or no room (it has then changed nothing)."""
        try:
            self.emit(fn())
        except (_NoSlot, _NoRoom):
            return False
        return True

    def fill_random(self, n: int, transfers: bool = True) -> None:
        for _ in range(n):
            if self.room < 8:
                return
            self.attempt(lambda: self.random_unit(transfers))

    def prologue(self) -> None:
        """Fresh data into a few registers and scalars (specials included) before the focus."""
        for _ in range(self.rng.randint(0, 2)):
            self.emit(self.u_vld())
        for _ in range(self.rng.randint(0, 2)):
            self.emit(self.u_seti())

    # -------------------------------------------------- faults
    def fault_now(self, code: int, words: Sequence[int]) -> None:
        """Emit the words that raise `code` (fills ordered first), then a few words that must never run."""
        self.emit(self.flush())
        self.emit(words)
        self.fault = int(code)
        dead = self.dead_code(max(self.rng.randint(2, 4), MIN_WORDS - 1 - len(self.words)))
        self.emit(dead + [encode_bare("VHALT")])  # a core that ran on would still stop

    def dead_code(self, n: int) -> list[int]:
        """About n words after a fault: harmless if skipped, visible in L1, V or S if wrongly executed."""
        rng = self.rng
        out: list[int] = []
        while len(out) < n:
            pick = rng.randrange(4)
            if pick == 0:
                out.append(encode_alu(rng.choice(ALU_OPS), vd=self.reg(), va=self.reg(), sb=SRC_K, vb=1))
            elif pick == 1:
                out.append(encode_mem("VST", rng.randrange(N_DESC), rng.randint(-8, 8), self.reg(), DT_FP16))
            elif pick == 2:
                out += encode_seti(e8_value(rng), sreg=self.reg())
            else:
                out.append(encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=SRC_S))
        return out

    # -------------------------------------------------- the case
    def finish(self, seed: int, index: int, focus: str, label: str) -> Case:
        """Close the program (pad to MIN_WORDS, maybe a VBAR, VHALT), place it in IMEM, wrap it in CU_INSTs."""
        if self.fault is None or not self.runs:
            if len(self.words) < MIN_WORDS - 1:
                self.max_words = max(self.max_words, MIN_WORDS + 8)
                while len(self.words) < MIN_WORDS - 1:
                    self.attempt(lambda: self.random_unit(transfers=False))
            if self.chance(0.5):
                self.emit(self.flush())
            self.emit([encode_bare("VHALT")])
        words = tuple(self.words)
        pc = self.place(len(words))
        inst = self.envelope(pc, words)
        vl, mode = (self.vl, self.mode) if self.runs else (self.start_vl, self.start_mode)
        return Case(seed, index, focus, label, self.geo, pc, words, tuple(inst), tuple(self.bursts),
                    MappingProxyType(dict(self.dram)), tuple(self.desc), self.fault, vl, int(mode))

    def place(self, n: int) -> int:
        """The program's IMEM address: anywhere it fits, or across 511 -> 0 for the pc-wrap focus."""
        if self.wrap_pc:
            return IMEM_WORDS - self.rng.randint(1, n - 1)
        return self.rng.randrange(IMEM_WORDS - n + 1)

    def envelope(self, pc: int, words: Sequence[int]) -> list[tuple[int, int, int]]:
        """IMEM writes, DESC writes of the fields that changed (and some unchanged), no-op envelopes, RUN."""
        rng = self.rng
        txn = lambda: rng.randrange(256)  # noqa: E731
        last = lambda: int(rng.random() < 0.05)  # noqa: E731
        out = [(txn(), last(), imem_payload((pc + i) % IMEM_WORDS, w)) for i, w in enumerate(words)]
        for ad in range(N_DESC):
            old, new = self.prev_desc[ad], self.desc[ad]
            again = ad in self.fixed and rng.random() < 0.15
            if new.base != old.base or again:
                out.append((txn(), last(), desc_payload(ad, 0, new.base)))
            for k, (a, b) in enumerate(zip(old.full_dims, new.full_dims)):
                if a != b or again:
                    junk = rng.getrandbits(6) << 34 if rng.random() < 0.15 else 0  # bits [39:34] are ignored
                    out.append((txn(), last(), desc_payload(ad, k + 1, pack_dim(*b) | junk)))
        if rng.random() < 0.15:  # DESC fld 5..7 and CU_INST ops 0, 4..15 have no effect (V.2)
            out.insert(rng.randrange(len(out) + 1), (txn(), last(), desc_payload(rng.randrange(8),
                                                                                 rng.randint(5, 7),
                                                                                 rng.getrandbits(40))))
        if rng.random() < 0.1:
            op = rng.choice((0, 4, 7, 15))
            out.insert(rng.randrange(len(out) + 1), (txn(), last(), op << 252 | rng.getrandbits(200)))
        out.append((txn(), int(rng.random() < 0.85), run_payload(pc)))
        return out


class _NoSlot(Exception):
    """Every descriptor is taken by this RUN and none suits: skip the instruction."""


class _NoRoom(Exception):
    """A loop body would not fit the 4-bit body length."""


# ================================================================ foci
Focus = Callable[[Builder, int], str]


def _vl_any(b: Builder) -> int:
    """A legal VL, multiples of 16 (VRED-able) 40% of the time, otherwise anything 1..128 (mostly ragged)."""
    r = b.rng.random()
    return 16 * b.rng.randint(1, 8) if r < 0.4 else b.rng.randint(1, VL_MAX)


def focus_init(b: Builder, k: int) -> str:
    """All state defined: L1 by two 256-word bursts, V by VLDs at VL 128, S and K3 by VSETI, P by compares."""
    rng = b.rng
    for off in (0, 256):
        b.burst(off, [data_word(rng) for _ in range(256)], flags=rng.randrange(2), ack=b.ack_target())
    b.max_words = MAX_WORDS + 4
    b.emit(b.u_setmode(Mode.FLAT) + b.u_setvl(VL_MAX))
    ad = b.new_slot(Descriptor(0, ((1, 16),)))
    for v in range(16):
        b.emit(b.u_vld(DT_FP16 if v % 2 else DT_FP32, v, ad, 16 * v))
    for s in range(16):
        b.emit(b.seti_raw(s, e8_value(rng)))
    b.emit(encode_seti(e8_value(rng), k3=True))
    for p in range(4):
        b.emit([encode_alu(rng.choice(CMP), va=rng.randrange(16), vb=rng.randrange(16), pr=p)])
    b.pr_known = b.pm_known = True
    return "init: L1, V, S, P, K3 defined"


def focus_flat(b: Builder, k: int) -> str:
    """FLAT ALU words over every opcode, predicated writes pm 0..3, compares, VSEL, at a random (ragged) VL."""
    b.emit(b.mode_to(Mode.FLAT) + b.u_setvl(_vl_any(b)))
    b.prologue()
    for i in range(b.rng.randint(8, 16)):
        if b.room < 6:
            break
        op = ALU_OPS[(k * 5 + i) % len(ALU_OPS)] if b.chance(0.5) else b.alu_op(False)
        b.emit(b.u_alu([op], [{"pm": (k + i) % 4}]))
        if b.chance(0.2):
            b.emit(b.u_vst())
    return f"FLAT ALU + predicates at VL {b.vl}"


def _focus_chain(b: Builder, k: int, mode: Mode) -> str:
    """D2/D4 chains: compares feeding VSEL on C, compares last (P writes), the SiLU shape; pm 0..3 in turn."""
    b.emit(b.mode_to(mode))
    if b.chance(0.6):
        b.emit(b.u_setvl(_vl_any(b)))
    b.prologue()
    for i in range(b.rng.randint(3, 8)):
        if b.room < 9:
            break
        if b.chance(0.6):
            ops, force = b.chain_pattern()
            force[-1] = {**force[-1], "pm": (k + i) % 4}
            b.emit(b.u_alu(ops, force))
        else:
            b.emit(b.u_alu())
        if b.chance(0.3):
            b.emit(b.rng.choice((b.u_vst, b.u_anyall, b.u_vld))())
    return f"chain {mode.name} + predicates at VL {b.vl}"


def focus_chain2(b: Builder, k: int) -> str:
    return _focus_chain(b, k, Mode.D2)


def focus_chain4(b: Builder, k: int) -> str:
    return _focus_chain(b, k, Mode.D4)


def focus_tree(b: Builder, k: int) -> str:
    """Every VRED kind 0..5 at two VLs of the schedule (all eight multiples of 16 every four rounds), ANY/ALL."""
    vls = [16 * (1 + (2 * k + j) % 8) for j in range(2)]
    b.prologue()
    if b.mode == Mode.TREE:
        b.emit(b.leave_tree())
    b.emit(b.u_alu())  # the pm EXPSUM uses (D5) comes from this RUN
    b.emit(b.u_setmode(Mode.TREE))
    for vl in vls:
        b.emit(b.u_setvl(vl))
        kinds = list(range(6))
        b.rng.shuffle(kinds)
        for kind in kinds:
            b.emit(b.u_vred(kind))
        b.emit(b.u_anyall())
        if b.chance(0.5):
            b.emit([encode_alu("VBCAST", vd=b.reg(), va=b.reg(), sa=SRC_S)] + b.u_vst())
    if b.chance(0.4):
        b.emit(b.leave_tree())
    return f"TREE VRED all kinds at VL {vls[0]}, {vls[1]} + ANY/ALL"


def focus_transc(b: Builder, k: int) -> str:
    """Transcendentals on crafted FP32 operands (D1 range, saturation, zeros, negatives, powers of 2 and 4)."""
    rng = b.rng
    b.emit(b.mode_to(Mode.FLAT) + b.u_setvl(VL_MAX if rng.random() < 0.7 else _vl_any(b)))
    n = 2 * -(-b.vl // LANES)
    off = rng.randrange(L1_WORDS - n + 1)
    b.burst(off, [pack_lanes([transc_value(rng) for _ in range(8)], 32) for _ in range(n)], src="host",
            flags=rng.randrange(2), ack=b.ack_target())
    delta = rng.randint(-5, 5)  # base + off lands on the burst, mod 512 (base sometimes 512 * r higher)
    ad = b.new_slot(Descriptor((off - delta + L1_WORDS * rng.randint(0, 3)) % ADDR_MOD, ((1, n),)))
    src = b.reg()
    other = lambda: (src + rng.randint(1, 15)) % 16  # noqa: E731  (results never overwrite the operand)
    b.emit(b.u_vld(DT_FP32, src, ad, delta))
    ops = list(TRANSC)
    rng.shuffle(ops)
    for op in ops + [rng.choice(TRANSC)]:
        b.emit(b.u_alu([op], [{"sa": SRC_V, "va": src, "vd": other(), "pm": rng.choice((0, 0, 1, 2))}]))
    s = b.reg()  # the SiLU shape: x * -log2(e), then VEXP2
    b.emit(b.seti_raw(s, 0xBFB8AA) + b.u_alu([0x05], [{"sa": SRC_V, "va": src, "sb": SRC_S, "vb": s, "vd": src}]))
    b.emit(b.u_alu([0x0E], [{"sa": SRC_V, "va": src, "vd": other()}]))
    for _ in range(2):
        s = b.reg()
        b.emit(b.seti_raw(s, rng.choice(E8_SPECIALS + (0x434800, 0xC34800, 0x43C000))))
        b.emit(b.u_alu([rng.choice(TRANSC)], [{"sa": SRC_S, "va": s}]))
    b.emit(b.u_vst())
    return f"transcendentals on crafted ranges at VL {b.vl}"


def focus_ldst(b: Builder, k: int) -> str:
    """VLD / VST in FP16 and FP32 over descriptor walks: 1..4 dims, negative and zero strides, signed
    offsets, L1 wrap, walks shorter than the chunks (the last address repeats), ragged VL."""
    b.emit(b.u_setvl(_vl_any(b)) if b.chance(0.7) else [])
    for i in range(b.rng.randint(5, 10)):
        if b.room < 6:
            break
        dt = (DT_FP16, DT_FP32)[(k + i) % 2]
        b.emit(b.u_vld(dt) if b.chance(0.5) else b.u_vst(dt))
        if b.chance(0.3) and b.mode != Mode.TREE:
            b.emit(b.u_alu())
    return f"VLD/VST walks at VL {b.vl}"


def focus_fill(b: Builder, k: int) -> str:
    """VFILLs (one of 256 elements every fourth round; L1 start near 511 every other), a VBAR, then the
    filled words read back (VLD) and drained."""
    rng = b.rng
    n = rng.randint(1, 3)
    starts: list[int] = []
    for i in range(n):
        lo, hi = ((256, 256) if i == 0 and k % 4 == 0 else (65, 255) if i == 0 and k % 4 == 2
                  else (1, rng.choice((16, 48, 128))))
        start = L1_WORDS - rng.randint(1, 24) if i == 0 and k % 2 == 0 else rng.randrange(L1_WORDS)
        first = i == 0
        if b.attempt(lambda: b.u_fill(lo, hi, start, zero=first and k % 3 == 1, nd=2 + k % 3 if first else None)):
            starts.append(start)
        if rng.random() < 0.3 and b.mode != Mode.TREE:
            b.emit(b.u_alu())
    b.emit(b.flush() if rng.random() < 0.85 else [])
    for start in starts:
        if b.room < 6:
            break
        b.attempt(lambda: b.u_vld(ad=b.new_slot(Descriptor(start, ((1, 16),))), off=0))
        if rng.random() < 0.5:
            b.attempt(lambda: b.u_drain(1, 16, start) if rng.random() < 0.6 else b.u_node(1, 16, start))
    return f"VFILL x{len(starts)} (starts {starts}) + VBAR + read back"


def focus_drain(b: Builder, k: int) -> str:
    """VDRAIN to memory over multi-dimensional walks (negative, zero strides), after VSTs that feed it."""
    for i in range(b.rng.randint(2, 4)):
        if b.room < 8:
            break
        if b.chance(0.5):
            b.emit(b.u_vst())
        zero = i == 0 and k % 2 == 0
        b.attempt(lambda: b.u_drain(4 if zero else 1, b.rng.choice((8, 32, 64)), zero=zero))
    return "VDRAIN to memory"


def focus_node(b: Builder, k: int) -> str:
    """VDRAIN in the node form: record in the base (granule offset, ack, remote fin/mesh), dst, buf, signal."""
    for i in range(b.rng.randint(2, 4)):
        if b.room < 6:
            break
        start = L1_WORDS - b.rng.randint(1, 8) if i == 0 and k % 2 else None
        b.attempt(lambda: b.u_node(1, 256 if k % 5 == 4 and i == 0 else 24, start))
    return "VDRAIN to nodes"


def focus_loop(b: Builder, k: int) -> str:
    """VLOOPs with counts 0..5 and bodies 0..6 on a schedule, sometimes one that never closes (falls through)."""
    rng = b.rng
    b.prologue()
    count, length = k % 6, (k * 3 + 1) % 7
    label = [f"VLOOP count {count} body {length}"]
    try:
        b.emit(b.u_loop(count, length))
        if b.loop == "idle" and b.room > 14:
            count, length = rng.randint(0, 5), rng.randint(0, 6)
            misaligned = rng.random() < 0.3
            b.emit(b.u_loop(count, length, misaligned))
            label.append(f"then count {count} body {length}" + (" (never closes)" if misaligned else ""))
    except (_NoRoom, _NoSlot):
        pass
    return ", ".join(label)


def focus_misc(b: Builder, k: int) -> str:
    """VBCAST both ways, VSHUF by many shifts, VCVT dt 1 and 2, VSETI to S and K3, VSETVL ragged."""
    rng = b.rng
    b.emit(b.u_setvl(rng.randint(1, VL_MAX)))
    steps = [b.u_vbcast, b.u_vbcast, lambda: b.u_vshuf(shift=k * 5 % 16), b.u_vshuf, b.u_vcvt, b.u_vcvt,
             b.u_seti, b.u_seti, b.u_setvl, b.u_vld, b.u_vst]
    rng.shuffle(steps)
    for fn in steps:
        if b.room < 6:
            break
        b.emit(fn())
    return f"VBCAST/VSHUF/VCVT/VSETI at VL {b.vl}"


def focus_bursts(b: Builder, k: int) -> str:
    """Accepted inbound bursts (from the host or a peer, acked or not, one ending at word 511), then read."""
    rng = b.rng
    regions = []
    for i in range(rng.randint(1, 3)):
        n = rng.choice((1, 2, 8, 16, 40))
        off = L1_WORDS - n if i == 0 and k % 2 == 0 else rng.randrange(L1_WORDS - n + 1)
        b.burst(off, [data_word(rng) for _ in range(n)], src=rng.choice(("host", "peer0", "peer1")),
                flags=rng.randrange(2), ack=b.ack_target())
        regions.append((off, n))
    for off, n in regions:
        ad = b.new_slot(Descriptor(off, ((1, n),)))
        b.emit(b.u_vld(ad=ad, off=0))
        if b.mode != Mode.TREE:
            b.emit(b.u_alu())
        b.emit(b.u_vst())
    return f"accepted bursts {regions}"


def focus_pcwrap(b: Builder, k: int) -> str:
    """A program placed across IMEM word 511 -> 0: fetch, VSETI immediates and chains wrap the pc."""
    b.wrap_pc = True
    b.fill_random(b.rng.randint(6, 12))
    return "pc wraps 511 -> 0"


def focus_mixed(b: Builder, k: int) -> str:
    """Everything legal, in random order and modes."""
    b.fill_random(b.rng.randint(10, 20))
    return f"mixed (ends in {Mode(b.mode).name}, VL {b.vl})"


# -------------------------------------------------- fault foci: a legal prefix, the trigger, dead words
def _prefix(b: Builder) -> None:
    """Legal instructions before a fault trigger: the fault must be raised with this state, not at reset."""
    b.fill_random(b.rng.randint(1, 5))


def focus_f_dtype(b: Builder, k: int) -> str:
    """F_DTYPE: VLD, VST or VCVT with dt not 1 or 2."""
    _prefix(b)
    dt = b.rng.choice((0, 3, 4, 5, 6, 7))
    which = ("VLD", "VST", "VCVT")[k % 3]
    if which == "VCVT":
        word = encode_vcvt(b.reg(), b.reg(), dt)
    else:
        word = encode_mem(which, b.rng.randrange(N_DESC), b.rng.randint(-20, 20), b.reg(), dt)
    b.fault_now(Fault.F_DTYPE, [word])
    return f"fault F_DTYPE ({which} dt {dt})"


VSRC_PLAN = ((Mode.D2, 1, False), (Mode.D4, 3, False), (Mode.D4, 2, True), (Mode.D2, 1, True),
             (Mode.D4, 1, False), (Mode.D4, 3, True), (Mode.D4, 2, False), (Mode.D4, 1, True))


def focus_f_vsrc(b: Builder, k: int) -> str:
    """F_VSRC: a gathered stage with a V selector, read or unread; a V stage before a non-ALU stage wins."""
    rng = b.rng
    mode, at, unread = VSRC_PLAN[k % len(VSRC_PLAN)]
    _prefix(b)
    b.emit(b.mode_to(mode))
    depth = isa.CHAIN_DEPTH[mode]
    ops = [b.alu_op(True) for _ in range(depth)]
    words = [b.alu_word(op, k2 == 0) for k2, op in enumerate(ops)]
    g = isa.Word(words[at])
    sels = [SRC_C if s == SRC_V else s for s in g.selectors]
    slots = [i for i, rd in enumerate(reads(g.op)) if not rd] if unread else [0]
    if unread and not slots:
        ops[at] = 0x00  # VMOV reads only a
        slots = [1, 2]
    sels[rng.choice(slots)] = SRC_V
    words[at] = b.alu_word(ops[at], False, sa=sels[0], sb=sels[1], sc=sels[2])
    if at + 1 < depth and rng.random() < 0.4:
        words[at + 1] = encode_mem("VLD", 0, 0, 0, DT_FP16)  # later, non-ALU: F_VSRC comes first
    b.fault_now(Fault.F_VSRC, words)
    return f"fault F_VSRC ({Mode(b.mode).name} stage {at}{' unread operand' if unread else ''})"


def focus_f_chain(b: Builder, k: int) -> str:
    """F_CHAIN: a FLAT word or a chain head with a C selector (unread too); C in the head beats V in a stage."""
    rng = b.rng
    mode = (Mode.FLAT, Mode.D2, Mode.D4)[k % 3]
    b.emit(b.mode_to(mode))
    _prefix(b)
    b.emit(b.mode_to(mode, again=0))
    depth = isa.CHAIN_DEPTH[Mode(b.mode)]
    op = b.alu_op(depth > 1) if (k // 3) % 2 == 0 else 0x00
    head = b.alu_word(op, True)
    sels = list(isa.Word(head).selectors)
    unread = (k // 3) % 2 == 1  # VMOV then: C on b or c, which it does not read
    slot = rng.choice([i for i, rd in enumerate(reads(op)) if rd != unread])
    sels[slot] = SRC_C
    words = [b.alu_word(op, True, sa=sels[0], sb=sels[1], sc=sels[2])]
    for _ in range(depth - 1):
        words.append(b.alu_word(b.alu_op(True), False, **({"sa": SRC_V} if rng.random() < 0.3 else {})))
    b.fault_now(Fault.F_CHAIN, words)
    return f"fault F_CHAIN ({Mode(b.mode).name} head, C in operand {'abc'[slot]})"


def focus_f_opcode(b: Builder, k: int) -> str:
    """F_OPCODE: VRED kind 0..5 outside TREE (VL % 16 = 0), an ALU word in TREE (with C: still F_OPCODE),
    a gathered stage with a non-ALU opcode (ours; before a later V stage)."""
    rng = b.rng
    variant = k % 3
    _prefix(b)
    if variant == 0:
        b.emit(b.mode_to(Mode((k // 3) % 3)))
        if b.vl % LANES:
            b.emit(b.u_setvl(16 * rng.randint(1, 8)))
        word = encode_alu("VRED", vd=b.reg(), va=b.reg(), vb=b.reg(), vc=rng.randrange(6) | 8 * rng.randrange(2))
        b.fault_now(Fault.F_OPCODE, [word])
        return f"fault F_OPCODE (VRED in {Mode(b.mode).name})"
    if variant == 1:
        b.emit(b.mode_to(Mode.TREE, again=0))
        force = {"sa": SRC_C} if (k // 3) % 2 else {}
        b.fault_now(Fault.F_OPCODE, [b.alu_word(b.alu_op(False), True, **force)])
        return "fault F_OPCODE (ALU word in TREE" + (", with a C selector)" if force else ")")
    mode = rng.choice((Mode.D2, Mode.D4))
    b.emit(b.mode_to(mode, again=0))
    depth = isa.CHAIN_DEPTH[mode]
    at = rng.randrange(1, depth)
    words = [b.alu_word(b.alu_op(True), j == 0) for j in range(depth)]
    bad = GATHERED_BAD[(k // 3) % len(GATHERED_BAD)]
    words[at] = bad
    if at + 1 < depth and rng.random() < 0.5:
        words[at + 1] = b.alu_word(0x03, False, sa=SRC_V)  # later V stage: F_OPCODE comes first
    b.fault_now(Fault.F_OPCODE, words)
    return f"fault F_OPCODE ({isa.Word(bad).name} gathered as stage {at} of {mode.name})"


GATHERED_BAD = (encode_mem("VLD", 0, 0, 1, DT_FP16), encode_bare("VHALT"), encode_alu("VSETI", vd=3),
                encode_bare("VBAR"), encode_vcvt(1, 2, 2), encode_vloop(0, 1), encode_alu("VRED", vc=6))
LEN_BOUNDS = ((257,), (17, 16), (256, 256), (16, 16, 16, 16), (65535, 65535), (0x8000, 2), (0, 300),
              (2, 2, 2, 33), (4096, 16, 1, 1))


def focus_f_len(b: Builder, k: int) -> str:
    """F_LEN: VFILL, VDRAIN or node VDRAIN with total > 256, products capped at 65535 included."""
    which = ("VFILL", "VDRAIN", "node")[k % 3]
    bounds = LEN_BOUNDS[(k // 3) % len(LEN_BOUNDS)]  # every (instruction, bounds) pair within 27 rounds
    dims = tuple((32 * b.rng.randint(-3, 3), bd) for bd in bounds)
    ad = b.new_slot(Descriptor(b.rng.getrandbits(34), dims))  # before the prefix takes the free slots
    _prefix(b)
    start = b.rng.randrange(L1_WORDS)
    word = (encode_vdrain_node(ad, start, b.rng.choice(b.geo.node_targets)) if which == "node"
            else encode_mem(which, ad, start))
    b.fault_now(Fault.F_LEN, [word])
    return f"fault F_LEN ({which}, bounds {bounds})"


def focus_f_loop(b: Builder, k: int) -> str:
    """F_LOOP: a VLOOP inside a loop body, or after a loop whose end a VSETI immediate or chain stepped over."""
    rng = b.rng
    variant = k % 3
    b.allow_loops = False  # a 0-word loop of the prefix could leave a loop active (see u_loop)
    if variant == 2:
        b.emit(b.mode_to(rng.choice((Mode.D2, Mode.D4)), again=0))
    elif b.mode == Mode.TREE and b.chance(0.5):
        b.emit(b.leave_tree())
    _prefix(b)
    b.emit(b.flush())
    s = b.reg()
    if variant == 0:  # nested
        inner = b.body(rng.randint(0, 3))
        after = rng.randint(0, 2)
        tail = b.body(after)
        words = b.seti_raw(s, rng.randint(0, 5)) + [encode_vloop(s, len(inner) + 1 + after)] + inner
        b.emit(words)
        b.fault_now(Fault.F_LOOP, [encode_vloop(b.reg(), rng.randint(0, 4))] + tail)
        return "fault F_LOOP (nested VLOOP)"
    if variant == 2 and b.mode in (Mode.D2, Mode.D4):
        chain = b.u_alu()
        body = b.body(rng.randint(0, 2))
        vb = len(body) + rng.randint(1, len(chain) - 1)
        b.emit(b.seti_raw(s, rng.randint(2, 5)) + [encode_vloop(s, vb)] + body + chain)
        what = "a chain"
    else:
        body = b.body(rng.randint(0, 2))
        imm = b.seti_raw(b.reg(), e8_value(rng))
        b.emit(b.seti_raw(s, rng.randint(2, 5)) + [encode_vloop(s, len(body) + 1)] + body + imm)
        what = "a VSETI immediate"
    b.loop = "open"
    b.fill_random(rng.randint(0, 2), transfers=False)
    b.fault_now(Fault.F_LOOP, b.flush() + b.seti_raw(s, 1) + [encode_vloop(s, 1)])
    return f"fault F_LOOP (loop end stepped over by {what}, later VLOOP)"


def focus_f_vl(b: Builder, k: int) -> str:
    """F_VL: VSETVL of 0, 129, 0x800080 and other values above 128 (some with a legal low byte)."""
    value = VL_BAD[k % len(VL_BAD)]
    _prefix(b)
    s = b.reg()
    b.fault_now(Fault.F_VL, b.seti_raw(s, value) + [encode_alu("VSETVL", va=s)])
    return f"fault F_VL (S = {value:#x})"


def focus_f_redvl(b: Builder, k: int) -> str:
    """F_REDVL: VRED kind 0..5 at a ragged VL, in TREE and (precedence over F_OPCODE) in other modes."""
    rng = b.rng
    _prefix(b)
    target = Mode.TREE if k % 2 == 0 else rng.choice((Mode.FLAT, Mode.D2, Mode.D4))
    b.emit(b.mode_to(target, again=0))
    vl = rng.choice([v for v in range(1, VL_MAX) if v % LANES])
    b.emit(b.u_setvl(vl))
    word = encode_alu("VRED", vd=b.reg(), va=b.reg(), vb=b.reg(), vc=rng.randrange(6) | 8 * rng.randrange(2))
    b.fault_now(Fault.F_REDVL, [word])
    return f"fault F_REDVL (VL {vl}, {target.name})"


def focus_f_cudata(b: Builder, k: int) -> str:
    """F_CUDATA: a rejected (buf != 0, off + len >= 512) or interleaved burst before the RUN: the RUN faults
    before its first instruction (an accepted, acknowledged burst may come first)."""
    rng = b.rng
    variant = k % 5
    words = lambda n: [data_word(rng) for _ in range(n)]  # noqa: E731
    if variant == 4 or rng.random() < 0.2:
        n = rng.randint(1, 8)
        b.burst(rng.randrange(L1_WORDS - n + 1), words(n), flags=1, ack=b.ack_target())
    n = rng.randint(2, 12)
    if variant == 0:
        b.burst(rng.randrange(L1_WORDS - n), words(n), buf=rng.randint(1, 255), flags=1)
        what = "buf != 0"
    elif variant == 1:
        b.burst(L1_WORDS + 1 - n, words(n), flags=1)  # off + len = 512 exactly
        what = "off + len = 512"
    elif variant == 2:
        b.burst(rng.randint(L1_WORDS, 0xFF00), words(n), flags=1)
        what = "off >= 512"
    else:
        at = rng.randrange(n - 1) if variant == 3 else n - 1
        src = rng.choice(("host", "peer0"))
        intruder = "peer0" if src == "host" else "host"  # another coordinate, whatever the geometry
        b.burst(rng.randrange(L1_WORDS - n + 1), words(n), src=src, flags=1, intruder_at=at, intruder=intruder,
                intruder_word=data_word(rng))
        what = f"interleaved at data flit {at} of {n}"
    b.runs = False
    b.fill_random(rng.randint(3, 8))
    b.fault = int(Fault.F_CUDATA)
    return f"fault F_CUDATA ({what})"


FOCI: Mapping[str, Focus] = MappingProxyType({
    "flat": focus_flat, "chain2": focus_chain2, "chain4": focus_chain4, "tree": focus_tree,
    "transc": focus_transc, "ldst": focus_ldst, "fill": focus_fill, "drain": focus_drain, "node": focus_node,
    "loop": focus_loop, "misc": focus_misc, "bursts": focus_bursts, "pcwrap": focus_pcwrap, "mixed": focus_mixed,
    "f_dtype": focus_f_dtype, "f_vsrc": focus_f_vsrc, "f_chain": focus_f_chain, "f_opcode": focus_f_opcode,
    "f_len": focus_f_len, "f_loop": focus_f_loop, "f_vl": focus_f_vl, "f_redvl": focus_f_redvl,
    "f_cudata": focus_f_cudata,
})


# ================================================================ sequences
def focus_of(seed: int, index: int) -> tuple[str, int]:
    """(focus, round) of case `index`: 'init' first, then every focus once per round in a seeded order."""
    if index == 0:
        return "init", 0
    names = list(FOCI)
    rnd, pos = divmod(index - 1, len(names))
    random.Random(f"vc_randprog:{seed}:round:{rnd}").shuffle(names)
    return names[pos], rnd


def make_case(seed: int, index: int, state: CaseState | None = None,
              geometry: Geometry = DEFAULT_GEOMETRY) -> Case:
    """Case `index` of sequence `seed`; advances `state` in place (state=None: replayed from case 0 for
    `geometry`, which a given state carries itself)."""
    if state is None:
        state = state_before(seed, index, geometry)
    if state.next_index != index:
        raise ValueError(f"make_case: the state is before case {state.next_index}, not case {index} "
                         "(cases of a sequence are made in order; pass state=None to replay)")
    focus, rnd = focus_of(seed, index)
    b = Builder(random.Random(f"vc_randprog:{seed}:{index}"), state)
    label = (focus_init if focus == "init" else FOCI[focus])(b, rnd)
    case = b.finish(seed, index, focus, label)
    state.advance(case)
    return case


def state_before(seed: int, index: int, geometry: Geometry = DEFAULT_GEOMETRY) -> CaseState:
    """The CaseState before case `index`, rebuilt by generating cases 0..index-1 (no model needed)."""
    state = CaseState(geometry)
    for i in range(index):
        make_case(seed, i, state)
    return state


def sequence(seed: int, n: int, geometry: Geometry = DEFAULT_GEOMETRY) -> Iterator[Case]:
    """Cases 0..n-1 of sequence `seed`, for one core."""
    state = CaseState(geometry)
    for i in range(n):
        yield make_case(seed, i, state)


# ================================================================ running a case on the model
def predict(model: CoreWithMemory, case: Case) -> list[Event]:
    """Load the case's DRAM words, deliver its bursts then its CU_INSTs; every flit the core sent, in order.

    The RUN must retire (a program that does not halt is a generator bug and
    raises); a RUN still in flight when bursts arrive would break the
    between-RUNs rule and raises too.
    """
    g = case.geometry
    if (model.core.coord, model.core.mag) != (g.unit, g.mag):
        raise ValueError(f"predict: the model is at {model.core.coord} with its memory agent at {model.core.mag}, "
                         f"the case expects {g.unit} and {g.mag}")
    if model.core.run is not None or model.core.burst is not None:
        raise RuntimeError("predict: a RUN or an inbound burst is still open before the case")
    for addr, word in case.dram.items():
        model.write_word(addr, word)
    start = len(model.sent)
    model.take_all(case.data_flits())
    if model.core.burst is not None:
        raise RuntimeError(f"case {case.index}: an inbound burst is left open")
    model.take_all(case.inst_flits())
    if model.core.run is not None or model.core.queue:
        raise RuntimeError(f"case {case.index}: the RUN did not retire\n{case.describe()}")
    return model.sent[start:]


def run_result(events: Sequence[Event], case: Case) -> tuple[int, int]:
    """(CU_SIGNAL code, arg) of the RUN's completion: the last completion to the host with the RUN's txn."""
    for e in reversed(events):
        f = e.flit
        if (e.dst == case.geometry.host and FIELDS["type"].extract(f) == FlitType.CU_SIGNAL
                and FIELDS["txn"].extract(f) == case.run_txn):
            return signal_fields(f)
    raise LookupError(f"case {case.index}: no completion of the RUN among {len(events)} events")


def run_fault(events: Sequence[Event], case: Case) -> int | None:
    """The fault code the RUN retired with, or None when it halted."""
    code, arg = run_result(events, case)
    return arg if code == SigCode.FAULT else None


def run_sequence(seed: int, n: int, model: CoreWithMemory | None = None, *, check: bool = True,
                 geometry: Geometry = DEFAULT_GEOMETRY) -> tuple[CoreWithMemory, list[Case]]:
    """Generate and predict n cases on one model; with `check`, each RUN must end as the generator intended
    (fault code, VL, mode, descriptors), which cross-checks the generator's tracking against the model."""
    model = model or new_model(geometry.unit, geometry.mag)
    cases = []
    for case in sequence(seed, n, geometry):
        events = predict(model, case)
        if check:
            core = model.core
            got = (run_fault(events, case), core.vl, core.mode)
            want = (case.expect_fault, case.vl_after, case.mode_after)
            if got != want:
                raise AssertionError(f"case {case.index}: (fault, VL, mode) {got}, generator expected {want}\n"
                                     + case.describe())
            held = [Descriptor(core.base[ad], tuple(core.dims[ad])) for ad in range(N_DESC)]
            if held != list(case.descriptors):
                raise AssertionError(f"case {case.index}: the core holds descriptors {held}, the generator "
                                     f"tracked {list(case.descriptors)} (DESC writes of changed fields only)")
        cases.append(case)
    return model, cases


def dram_overlap(cases: Sequence[Case]) -> set[int]:
    """DRAM words (byte >> 5) that some case's VFILL reads and some case's VDRAIN writes (static check)."""
    src, dst = set(), set()
    for c in cases:
        src.update(a >> 5 for a in c.dram)
        for w in c.words:
            x = isa.Word(w)
            if x.op == isa.OP_VDRAIN and not x.node:
                dst.update(a >> 5 for a in mem_walk(c.descriptors[x.ad]))
    return src & dst


__all__ = [
    "Burst", "Case", "CaseState", "Coverage", "DEFAULT_GEOMETRY", "FOCI", "GOALS", "Geometry", "MAX_WORDS",
    "MIN_WORDS", "TracingCore", "coverage", "dram_overlap", "focus_of", "make_case", "mem_walk", "missing",
    "new_model", "predict", "run_fault", "run_result", "run_sequence", "sequence", "state_before",
    "timing_violations",
]
