"""The orchestrator's host interface and behaviour, in plain Python (no simulator).

Register map and encodings of rtl/orch/orchestrator.v, the expected header
rewrite of a dispatched flit, the NODE_STATUS summary of CU_SIGNALs, and the
Await decision the host makes on a polled count. Benches and the host driver
(tb/orch/host.py) go through this module; the unit tests pin it down.

Packed coordinates put y first: {y,x} (y in bits [7:4], x in [3:0]); the flit
header puts x first (models.noc.flit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Iterable, Mapping

from models.cu.base import SigCode, signal_fields
from models.noc.flit import FIELDS, FLIT_WIDTH, POS_MAX, POS_WIDTH, FlitType

Coord = tuple[int, int]

WORD_BITS = 64
WORD_MASK = (1 << WORD_BITS) - 1
COUNT_MOD = 1 << 16  # NODE_STATUS count wraps at 2^16
CREDIT_MAX = 0xFFFF


class Reg(IntEnum):
    """Host register byte offsets (64-bit words)."""

    CAPS = 0x0010
    PROG_DST = 0x0040
    PROG_LEN = 0x0048
    PROG_KICK = 0x0050
    PROG_STAT = 0x0058
    PROG_CRED = 0x0060
    PROG_BASE = 0x0068
    SIG_DONE = 0x0070


NODE_STATUS_BASE = 0x1000
STAGE_BASE = 0x2000
STAGE_WORDS = 5  # 64-bit words per staged flit, low word first
STAGE_STRIDE = STAGE_WORDS * 8  # 40 bytes per slot
STAGE_SLOTS_DEFAULT = 256


# ---------------------------------------------------------------- coordinates
def _check_coord(coord: Coord) -> Coord:
    x, y = coord
    if not (0 <= x <= POS_MAX and 0 <= y <= POS_MAX):
        raise ValueError(f"coordinate ({x},{y}) does not fit {POS_WIDTH}-bit fields (0..{POS_MAX})")
    return (int(x), int(y))


def pack_coord(coord: Coord) -> int:
    """(x, y) -> {y,x} as the host registers hold it."""
    x, y = _check_coord(coord)
    return (y << POS_WIDTH) | x


def unpack_coord(value: int) -> Coord:
    """{y,x} -> (x, y)."""
    return (value & POS_MAX, (value >> POS_WIDTH) & POS_MAX)


# ---------------------------------------------------------------- addresses
def node_status_addr(coord: Coord) -> int:
    """Byte address of NODE_STATUS for node (x, y)."""
    return NODE_STATUS_BASE + pack_coord(coord) * 8


def stage_addr(slot: int, word: int = 0, slots: int = STAGE_SLOTS_DEFAULT) -> int:
    """Byte address of word `word` (0..4) of staging slot `slot`."""
    if not 0 <= slot < slots:
        raise ValueError(f"staging slot {slot} is outside 0..{slots - 1} (STAGE_SLOTS={slots})")
    if not 0 <= word < STAGE_WORDS:
        raise ValueError(f"stage word {word} is outside 0..{STAGE_WORDS - 1}")
    return STAGE_BASE + slot * STAGE_STRIDE + word * 8


def flit_to_words(flit: int) -> list[int]:
    """A 288-bit flit as the five STAGE words, low word first (word 4 = header in [31:0])."""
    if not 0 <= flit < (1 << FLIT_WIDTH):
        raise ValueError(f"flit value {flit:#x} does not fit {FLIT_WIDTH} bits")
    return [(flit >> (64 * i)) & WORD_MASK for i in range(STAGE_WORDS)]


def words_to_flit(words: Iterable[int]) -> int:
    """Inverse of flit_to_words (bits above the flit in word 4 are ignored, as the RTL does)."""
    ws = list(words)
    if len(ws) != STAGE_WORDS:
        raise ValueError(f"a staged flit is {STAGE_WORDS} words, got {len(ws)}")
    value = 0
    for i, w in enumerate(ws):
        value |= (w & WORD_MASK) << (64 * i)
    return value & ((1 << FLIT_WIDTH) - 1)


# ---------------------------------------------------------------- register values
@dataclass(frozen=True)
class Caps:
    flit_width: int
    pos_width: int
    stage_slots: int
    own: Coord

    @classmethod
    def decode(cls, word: int) -> "Caps":
        return cls(word & 0xFFFF, (word >> 16) & 0xFF, (word >> 32) & 0xFFFF, unpack_coord((word >> 56) & 0xFF))

    def encode(self) -> int:
        return (pack_coord(self.own) << 56 | (self.stage_slots & 0xFFFF) << 32
                | (self.pos_width & 0xFF) << 16 | (self.flit_width & 0xFFFF))


@dataclass(frozen=True)
class ProgStat:
    """PROG_STAT: [0] run, [16:1] flits left, [32:17] credit."""

    run: bool
    left: int
    credit: int

    @classmethod
    def decode(cls, word: int) -> "ProgStat":
        return cls(bool(word & 1), (word >> 1) & 0xFFFF, (word >> 17) & 0xFFFF)

    def encode(self) -> int:
        return int(self.run) | (self.left & 0xFFFF) << 1 | (self.credit & 0xFFFF) << 17


@dataclass(frozen=True)
class NodeStatus:
    """NODE_STATUS: {code[63:56], arg[55:24], count[23:8], valid[0]}."""

    code: int = 0
    arg: int = 0
    count: int = 0
    valid: bool = False

    @classmethod
    def decode(cls, word: int) -> "NodeStatus":
        return cls((word >> 56) & 0xFF, (word >> 24) & 0xFFFF_FFFF, (word >> 8) & 0xFFFF, bool(word & 1))

    def encode(self) -> int:
        return ((self.code & 0xFF) << 56 | (self.arg & 0xFFFF_FFFF) << 24
                | (self.count & 0xFFFF) << 8 | int(self.valid))

    def describe(self) -> str:
        if not self.valid:
            return "no signal yet"
        name = SigCode(self.code).name if self.code in SigCode._value2member_map_ else f"code 0x{self.code:02x}"
        return f"{name} arg=0x{self.arg:08x} count={self.count}"


def merge_strobes(old: int, data: int, strobes: int) -> int:
    """The word after a write of `data` with byte strobes `strobes` over `old`."""
    mask = 0
    for b in range(8):
        if strobes >> b & 1:
            mask |= 0xFF << (8 * b)
    return (old & ~mask | data & mask) & WORD_MASK


# ---------------------------------------------------------------- flits
def rewrite_header(flit: int, dst: Coord, own: Coord) -> int:
    """The flit as dispatch sends it: dst = PROG_DST target, src = the orchestrator."""
    f = FIELDS
    keep = flit & ~(f["dst_x"].place(-1) | f["dst_y"].place(-1) | f["src_x"].place(-1) | f["src_y"].place(-1))
    dx, dy = _check_coord(dst)
    sx, sy = _check_coord(own)
    return keep | f["dst_x"].place(dx) | f["dst_y"].place(dy) | f["src_x"].place(sx) | f["src_y"].place(sy)


def is_cu_inst(flit: int) -> bool:
    return FIELDS["type"].extract(flit) == FlitType.CU_INST


# ---------------------------------------------------------------- behaviour
@dataclass
class SummaryModel:
    """What NODE_STATUS and SIG_DONE hold after a sequence of inbound flits."""

    own: Coord
    nodes: dict[Coord, NodeStatus] = field(default_factory=dict)
    sig_done: int = 0
    credit_refills: int = 0
    dropped: int = 0

    def accept(self, flit: int) -> None:
        """One inbound flit, as the orchestrator takes it."""
        dst = (FIELDS["dst_x"].extract(flit), FIELDS["dst_y"].extract(flit))
        if dst != self.own or FIELDS["type"].extract(flit) != FlitType.CU_SIGNAL:
            self.dropped += 1
            return
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        code, arg = signal_fields(flit)
        old = self.nodes.get(src, NodeStatus())
        count = (old.count + 1) % COUNT_MOD if old.valid else 1
        self.nodes[src] = NodeStatus(code, arg, count, True)
        self.sig_done = (self.sig_done + 1) & 0xFFFF_FFFF
        if code == SigCode.INST_COMPLETE:
            self.credit_refills += 1

    def status(self, coord: Coord) -> NodeStatus:
        return self.nodes.get(coord, NodeStatus())


def dispatch_stall_point(flits: Iterable[int], credit: int) -> int:
    """How many of `flits` go out before the dispatcher stalls at credit 0 (no refills)."""
    sent = 0
    for flit in flits:
        if is_cu_inst(flit):
            if credit == 0:
                return sent
            credit -= 1
        sent += 1
    return sent


def credit_after(flits: Iterable[int], seed: int, refills: int) -> int:
    """Credit once every flit went out: seed - CU_INSTs pushed + INST_COMPLETEs received."""
    return seed - sum(is_cu_inst(f) for f in flits) + refills


# ---------------------------------------------------------------- Await
def await_target(baseline: int, n: int) -> int:
    """The count Await waits for: (baseline + n) mod 2^16."""
    if not 0 <= n < COUNT_MOD:
        raise ValueError(f"Await of {n} signals is outside 0..{COUNT_MOD - 1} (the count is 16-bit)")
    return (baseline + n) % COUNT_MOD


class AwaitState(IntEnum):
    WAITING = 0
    DONE = 1
    OVERSHOOT = 2


def await_state(seen: int, baseline: int, n: int) -> AwaitState:
    """Where a polled count stands against Await(baseline, n).

    Counts only grow (mod 2^16), so the signals seen since the baseline are
    (seen - baseline) mod 2^16: exactly n is done, fewer is still waiting, more
    is an overshoot (a surplus signal), which fails as surely as a shortfall.
    """
    arrived = (seen - baseline) % COUNT_MOD
    if arrived == n:
        return AwaitState.DONE
    return AwaitState.WAITING if arrived < n else AwaitState.OVERSHOOT


def await_message(coord: Coord, baseline: int, n: int, seen: int, state: str) -> str:
    """The failure text of an Await: names the coordinate, expected and seen counts."""
    return (f"Await {state} at node ({coord[0]},{coord[1]}): expected count {await_target(baseline, n)} "
            f"(baseline {baseline} + {n}), seen {seen}")


def baselines(statuses: Mapping[Coord, NodeStatus]) -> dict[Coord, int]:
    """A round's baseline count per coordinate (0 for a node never heard from)."""
    return {c: (s.count if s.valid else 0) for c, s in statuses.items()}
