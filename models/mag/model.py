"""Golden model of the memory agent (rtl/mag/mag.v) and its DRAM, plain Python.

Two faces, one implementation:

* :class:`MagUnit` is the agent as an event-driven unit, for machine-level
  models: ``take(flit)`` answers one inbound flit at once with the flits it
  causes (the read responses it serves, a write's MEM_WR_ACK) as
  models.vector.link.Event values. It owns a DRAM whose word 0 is machine byte
  address ``base`` (the RTL's BASE parameter, e.g. 0x8000_0000 for the
  compiled bundles). A request it cannot honour as the spec says raises a
  named :class:`MagRequestError` (undefined flag bit, outside the DRAM, the
  staging aperture it does not have, a forbidden write), never plausible data.
* :class:`MagModel` predicts one bench run of the RTL: the flits each source
  sends, the DRAM before the run, every flit the agent sends back per
  destination with the order the protocol guarantees (a
  models.mag.check.Prediction), plus which monitors must fire. It runs a
  MagUnit with ``strict=False``: each fault becomes a line of
  ``Prediction.violations`` (mon_err must rise) and is tolerated the way the
  RTL tolerates it.

Faults, and how the RTL (and a non-strict MagUnit) tolerates them:

* MEM_RD_REQ with flags bit 7 set: served as if it were clear;
* a request to the staging aperture: dropped without a response (M.4); the
  data beats of such a write are taken and discarded, no ack;
* MEM_WR_REQ with len > 7: served as len+1 beats;
* a second MEM_WR_REQ from a source whose write is open: dropped;
* MEM_WR_DATA from a source with no open write: dropped;
* MEM_WR_DATA whose last bit disagrees with the beat count: the count decides;
* a read or write outside the DRAM: words outside read as 0, writes to them
  are lost (word addresses are 35 bits and wrap, so a burst that starts
  just below the window runs on into word 0);
* a flit whose dst is not the agent: handled as if it were.

Order the protocol guarantees (and the checker enforces): per destination,
the read responses caused by one requester arrive in that requester's request
order; the acks of one writer arrive in its write order. Nothing orders a read
against a write: a run in which a read touches a word another request of the
run writes is refused (``ValueError``), because its outcome is not defined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from models.noc.flit import FIELDS, FlitType, describe_flit, flit_dst, flit_src, flit_type, make_flit
from models.mag.check import CheckReport, Prediction, RdKey
from models.mag.proto import (
    ADDR_MASK, BLAYOUT, FLAG_UNDEFINED, MAX_WRITE_LEN, QUANT, STREAM, WORD_BYTES, WORD_MASK, Coord,
    Descriptor, MagRequestError, NotForThisAgent, OutsideDram, StagingAperture, UndefinedFlags,
    WriteProtocolError, decode_descriptor, descriptor_payload, pack_peer, rd_req, read_responses, unpack_peer,
    wr_data, wr_req,
)
from models.vector.link import Event

__all__ = [
    "STREAM", "QUANT", "BLAYOUT", "WORD_BYTES", "Descriptor", "DramImage", "MagUnit", "MagModel", "Prediction",
    "CheckReport", "RdKey", "MagRequestError", "UndefinedFlags", "OutsideDram", "StagingAperture",
    "WriteProtocolError", "NotForThisAgent", "Event", "descriptor_payload", "decode_descriptor", "rd_req",
    "wr_req", "wr_data", "pack_peer", "unpack_peer",
]

_TXN, _LAST = FIELDS["txn"], FIELDS["last"]
_PAYLOAD = FIELDS["payload"]
_WORD_INDEX_MASK = (1 << 35) - 1  # a DRAM word address: byte address [39:5]


# ---------------------------------------------------------------- DRAM image
class DramImage:
    """What the DRAM holds: ``words`` 256-bit words, sparse, 0 where never written.

    Byte ``32*w + k`` is bits [8k+7:8k] of word ``w`` (little-endian within a
    word), the same convention as tb/mag/dram.py. Addresses here are offsets
    from the DRAM's word 0; MagUnit maps machine addresses onto them.
    """

    def __init__(self, words: int) -> None:
        if words < 1:
            raise ValueError(f"a DRAM needs at least one word, got {words}")
        self.size = words
        self._w: dict[int, int] = {}

    def copy(self) -> "DramImage":
        other = DramImage(self.size)
        other._w = dict(self._w)
        return other

    def word(self, index: int) -> int:
        """Word ``index``; 0 past the end (what the RTL returns there)."""
        return self._w.get(index, 0) if 0 <= index < self.size else 0

    def set_word(self, index: int, value: int) -> None:
        """Write a word; a write past the end is lost (as in the RTL)."""
        if 0 <= index < self.size:
            self._w[index] = value & WORD_MASK

    def words(self, first: int, n: int) -> list[int]:
        return [self.word(first + i) for i in range(n)]

    def load_words(self, first: int, values: Iterable[int]) -> None:
        for i, v in enumerate(values):
            if not 0 <= first + i < self.size:
                raise ValueError(f"word {first + i} is outside the {self.size}-word DRAM")
            self._w[first + i] = v & WORD_MASK

    def load_bytes(self, byte_addr: int, data: bytes) -> None:
        """Store ``data`` at ``byte_addr`` (any alignment)."""
        data = bytes(data)
        end = byte_addr + len(data)
        if byte_addr < 0 or end > self.size * WORD_BYTES:
            raise ValueError(f"bytes {byte_addr:#x}..{end:#x} are outside the {self.size}-word DRAM")
        if not data:
            return
        first, last = byte_addr // WORD_BYTES, (end - 1) // WORD_BYTES
        for w in range(first, last + 1):
            lo = max(byte_addr, w * WORD_BYTES)
            hi = min(end, (w + 1) * WORD_BYTES)
            if hi - lo == WORD_BYTES:  # the whole word: nothing of the old one survives
                self._w[w] = int.from_bytes(data[lo - byte_addr:hi - byte_addr], "little")
                continue
            raw = bytearray(self.word(w).to_bytes(WORD_BYTES, "little"))
            raw[lo - w * WORD_BYTES:hi - w * WORD_BYTES] = data[lo - byte_addr:hi - byte_addr]
            self._w[w] = int.from_bytes(raw, "little")

    def read_bytes(self, byte_addr: int, n: int) -> bytes:
        if n <= 0:
            return b""
        first, last = byte_addr // WORD_BYTES, (byte_addr + n - 1) // WORD_BYTES
        raw = b"".join(self.word(w).to_bytes(WORD_BYTES, "little") for w in range(first, last + 1))
        off = byte_addr - first * WORD_BYTES
        return raw[off:off + n]


# ---------------------------------------------------------------- the agent as a unit
@dataclass
class OpenWrite:
    """One source's write between its MEM_WR_REQ and its last MEM_WR_DATA (data binds by source)."""

    txn: int
    first: int      # DRAM word of beat 0
    beats: int
    done: int = 0
    discard: bool = False  # a staging-aperture write: beats are taken and dropped, no ack


class MagUnit:
    """The memory agent at ``coord`` in front of a DRAM whose word 0 is byte address ``base``.

    ``dram`` (a DramImage, indexed from word 0 = ``base``) is shared when
    given, else a new one of ``words`` words is made; ``load``/``read`` move
    bytes at machine addresses. ``take(flit)`` answers one inbound flit
    immediately. With ``strict`` (the default) a request it cannot honour
    raises a MagRequestError subclass; with ``strict=False`` the fault is
    appended to ``violations`` and tolerated as the RTL does (see the module
    docstring). ``words_read`` / ``words_written`` count DRAM words moved by
    requests (as rtl/mag/mag_dram.v's rd_words / wr_words do).
    """

    def __init__(self, coord: Coord, dram: DramImage | None = None, *, base: int = 0, words: int = 65536,
                 strict: bool = True) -> None:
        if base % WORD_BYTES or not 0 <= base <= ADDR_MASK:
            raise ValueError(f"base {base:#x} must be a 32-byte aligned 40-bit byte address (DRAM word 0)")
        self.coord = (coord[0], coord[1])
        self.base = base
        self.dram = dram if dram is not None else DramImage(words)
        self.strict = strict
        self.open: dict[Coord, OpenWrite] = {}
        self.violations: list[str] = []
        self.dropped: list[int] = []              # flits of a type the agent does not consume
        self.words_read = 0                       # DRAM words read and written through requests
        self.words_written = 0
        self.trace: list[tuple[str, Coord, int]] | None = None  # set to a list to log ("rd"|"wr", src, word)
        self.writers: dict[int, Coord] = {}       # DRAM word -> the source that wrote it in this epoch
        self.errors: list[str] = []               # write races, and writes outside the memory the host loaded
        self.spans: list[tuple[int, int]] = []    # [first, end) word ranges the host loaded (none: no check)

    def allow(self, first: int, n: int) -> None:
        """The host loaded words first..first+n-1 (a program's image): a unit's write outside every loaded
        range is recorded as an error (a walk run long, a drain address damaged)."""
        self.spans.append((first, first + n))

    def new_epoch(self) -> None:
        """The host has ordered everything written so far (a round's awaits met and its writes landed): a
        later write of a word by another source is no race."""
        self.writers.clear()

    # ------------------------------------------------------------ machine addresses
    def index(self, byte_addr: int) -> int:
        """DRAM word of a machine byte address: ((addr - base) mod 2^40) >> 5, as the RTL computes it."""
        return ((byte_addr - self.base) & ADDR_MASK) >> 5

    def load(self, byte_addr: int, data: bytes) -> None:
        """Store bytes at a machine byte address (a host's bulk load)."""
        self.dram.load_bytes(byte_addr - self.base, data)

    def read(self, byte_addr: int, n: int) -> bytes:
        """Read bytes at a machine byte address (a host's read-back)."""
        if byte_addr < self.base or byte_addr + n > self.base + self.dram.size * WORD_BYTES:
            raise OutsideDram(f"bytes {byte_addr:#x}+{n} are outside the DRAM at {self.base:#x} "
                              f"({self.dram.size} words)")
        return self.dram.read_bytes(byte_addr - self.base, n)

    @property
    def idle(self) -> bool:
        """No write open (the model sends each ack at once): every write it was given has landed."""
        return not self.open

    # ------------------------------------------------------------ the link
    def take(self, flit: int) -> list[Event]:
        """One inbound flit -> the flits it causes, in sending order."""
        src = flit_src(flit)
        dst = flit_dst(flit)
        if dst != self.coord:
            self._fault(NotForThisAgent, f"agent {self.coord} was delivered a flit for {dst}: {describe_flit(flit)}")
        ftype = flit_type(flit)
        txn = _TXN.extract(flit)
        if ftype == FlitType.MEM_RD_REQ:
            return self._read(src, txn, decode_descriptor(_PAYLOAD.extract(flit)))
        if ftype == FlitType.MEM_WR_REQ:
            self._write_request(src, txn, decode_descriptor(_PAYLOAD.extract(flit)))
            return []
        if ftype == FlitType.MEM_WR_DATA:
            return self._write_data(src, flit)
        self.dropped.append(flit)
        return []

    def take_all(self, flits: Iterable[int]) -> list[Event]:
        return [ev for f in flits for ev in self.take(f)]

    def _fault(self, error: type[MagRequestError], message: str) -> None:
        if self.strict:
            raise error(message)
        self.violations.append(f"{error.__name__}: {message}")

    def _outside(self, first: int, n: int) -> bool:
        return first + n > self.dram.size

    def _read(self, src: Coord, txn: int, d: Descriptor) -> list[Event]:
        def what() -> str:  # named in a fault only: most requests need no message
            return f"MEM_RD_REQ from {src} txn {txn:#04x} addr {d.addr:#012x} flags {d.flags:#04x}"
        if d.staging:
            self._fault(StagingAperture, f"{what()}: staging-aperture address, this agent has no staging; "
                                         "dropped without a response (units.md M.4)")
            return []
        if d.flags & FLAG_UNDEFINED:
            self._fault(UndefinedFlags, f"{what()}: flags bit 7 is not defined by units.md M.1")
        first, n = self.index(d.addr), d.read_words()
        if self._outside(first, n):
            self._fault(OutsideDram, f"{what()}: reads DRAM words {first:#x}+{n}, the DRAM at {self.base:#x} "
                                     f"holds {self.dram.size} words")
        self.words_read += n
        if self.trace is not None:
            self.trace.extend(("rd", src, (first + i) & _WORD_INDEX_MASK) for i in range(n))
        return [Event(dst, f) for dst, f in read_responses(self.coord, src, txn, d, first, self._fetch)]

    def _fetch(self, first: int, n: int) -> list[int]:
        """DRAM words first.. (a word address is 35 bits: past 2^35 - 1 it wraps to 0, as in the RTL)."""
        return [self.dram.word((first + i) & _WORD_INDEX_MASK) for i in range(n)]

    def _write_request(self, src: Coord, txn: int, d: Descriptor) -> None:
        def what() -> str:  # named in a fault only
            return f"MEM_WR_REQ from {src} txn {txn:#04x} addr {d.addr:#012x} len {d.len}"
        if src in self.open:
            self._fault(WriteProtocolError, f"second {what()} while write txn {self.open[src].txn:#04x} is open: "
                                            "dropped")
            return
        if d.len > MAX_WRITE_LEN:
            self._fault(WriteProtocolError, f"{what()}: len > {MAX_WRITE_LEN} (a write is at most 8 beats)")
        first = self.index(d.addr)
        if d.staging:
            self._fault(StagingAperture, f"{what()}: staging-aperture address, this agent has no staging; "
                                         "dropped without a response (units.md M.4)")
        elif self._outside(first, d.len + 1):
            self._fault(OutsideDram, f"{what()}: writes DRAM words {first:#x}+{d.len + 1}, the DRAM at "
                                     f"{self.base:#x} holds {self.dram.size} words")
        self.open[src] = OpenWrite(txn, first, d.len + 1, discard=d.staging)

    def _write_data(self, src: Coord, flit: int) -> list[Event]:
        w = self.open.get(src)
        if w is None:
            self._fault(WriteProtocolError, f"MEM_WR_DATA from {src} with no open write: dropped")
            return []
        final = w.done == w.beats - 1
        if _LAST.extract(flit) != int(final):
            self._fault(WriteProtocolError, f"MEM_WR_DATA from {src} beat {w.done + 1}/{w.beats} of write txn "
                                            f"{w.txn:#04x} has last={_LAST.extract(flit)}")
        if not w.discard:
            word = (w.first + w.done) & _WORD_INDEX_MASK
            self.dram.set_word(word, _PAYLOAD.extract(flit))
            self.words_written += 1
            if self.spans and not any(lo <= word < hi for lo, hi in self.spans) and len(self.errors) < MAX_RACES:
                self.errors.append(f"write outside the loaded memory: DRAM word {self.base + 32 * word:#x} written by "
                                   f"{src} lies in no image the host loaded")
            first = self.writers.setdefault(word, src)
            if first != src and len(self.errors) < MAX_RACES:
                self.errors.append(f"write race: DRAM word {self.base + 32 * word:#x} written by {first} and by {src} "
                                   f"with nothing ordering them (one round); which lands last is up to timing")
            if self.trace is not None:
                self.trace.append(("wr", src, word))
        w.done += 1
        if not final:
            return []
        del self.open[src]
        if w.discard:
            return []
        return [Event(src, make_flit(src, self.coord, FlitType.MEM_WR_ACK, w.txn, 1, 0))]


MAX_RACES = 8  # race lines kept per run (the first ones name the problem)


# ---------------------------------------------------------------- bench prediction
class MagModel:
    """The agent at ``mag`` in front of ``dram``; :meth:`run` predicts one bench run.

    Between runs the agent is reset (open writes are forgotten), the DRAM keeps
    what was written.
    """

    def __init__(self, mag: Coord, dram: DramImage, base: int = 0) -> None:
        self.mag = (mag[0], mag[1])
        self.dram = dram
        self.base = base

    def run(self, sent: Mapping[Coord, Sequence[int]]) -> Prediction:
        """Predict the responses to ``sent`` (per source coordinate, its flits in order).

        Raises ValueError for a run whose outcome the protocol leaves undefined
        (a read and a write of one word from different requests, or two
        sources writing one word); the DRAM is then left as it was.
        """
        pred = Prediction(self.mag)
        unit = MagUnit(self.mag, self.dram.copy(), base=self.base, strict=False)
        unit.trace = []
        for src in sorted(sent):
            for flit in sent[src]:
                hdr_src = flit_src(flit)
                if hdr_src != tuple(src):
                    raise ValueError(f"a flit sent by {src} carries src={hdr_src}: {describe_flit(flit)}")
                for ev in unit.take(flit):
                    kind = "ack" if flit_type(ev.flit) == FlitType.MEM_WR_ACK else "rd"
                    pred._add(ev.dst, (kind, tuple(src)), ev.flit)
        _refuse_unordered(unit.trace)
        pred.violations = unit.violations
        pred.dropped = unit.dropped
        pred.open_writes = {s: (w.txn, w.done, w.beats) for s, w in unit.open.items()}
        pred.words_read, pred.words_written = unit.words_read, unit.words_written
        self.dram = unit.dram
        return pred


def _refuse_unordered(trace: list[tuple[str, Coord, int]]) -> None:
    """A word read and written, or written by two sources, in one run has no defined outcome."""
    read_by: dict[int, Coord] = {}
    written_by: dict[int, Coord] = {}
    for kind, src, word in trace:
        if kind == "rd":
            read_by.setdefault(word, src)
            continue
        owner = written_by.setdefault(word, src)
        if owner != src:
            raise ValueError(f"word {word:#x} is written by {owner} and {src} in one run: "
                             "nothing orders them; use disjoint addresses")
    clash = sorted(w for w in written_by if w in read_by)
    if clash:
        w = clash[0]
        raise ValueError(f"word {w:#x} is read by {read_by[w]} and written by {written_by[w]} in one run: "
                         "nothing orders a read against a write; split the run in two")
