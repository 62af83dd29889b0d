"""Golden model of the memory agent (rtl/mag/mag.v) and its DRAM, plain Python.

What it is for: given the flits each source sends the agent in one run, and
the DRAM as it was before the run, predict every flit the agent sends back,
per destination, with the order the protocol guarantees, plus which
monitors must fire; then judge what a bench captured against that.

Protocol summary (the fixed part; field positions come from models.flit):

* MEM_RD_REQ / MEM_WR_REQ carry a descriptor in the payload: byte address
  [255:216] (40 bits), len [215:208] = beats-1, flags [207:200] (bit 6 STREAM),
  count [199:192], peer [191:168], n_peer [167:166], entry_words [165:158].
  DRAM word = byte address >> 5 (256-bit words). A write reads only addr and len.
* Plain read: len+1 MEM_RD_RESP to the requester, one word each, txn echoed,
  rsvd 0, last on the final beat.
* Stream read: ``count`` entries (0 means 1) of ``entry_words`` words (0 or >4
  means 4), entry i at word (addr>>5) + i*entry_words, sent as MEM_RD_RESP
  with txn = request txn + i (mod 256), rsvd = word index in the entry, last
  on each entry's final word; each entry goes to the requester, then to each
  of ``n_peer`` peers in turn. Peer k is byte k of ``peer`` (peer[8k+7:8k]),
  a packed coordinate with y first: {y[7:4], x[3:0]}.
* Write: MEM_WR_REQ then len+1 MEM_WR_DATA from the same source, bound by
  source coordinate only; the agent's beat counter ends the burst; a
  MEM_WR_ACK (txn echoed, payload 0, last 1) goes to the writer when done.
* Other types are dropped. Every response's src is the agent's coordinate.

Order the protocol guarantees (and the checker enforces): per destination,
the read responses caused by one requester arrive in that requester's request
order (and beat order within a request); the acks of one writer arrive in its
write order. Nothing orders responses of different requesters, acks against
read responses, or a read against a write: a run in which a read touches a
word another request of the run writes is refused (``ValueError``) because its
outcome is not defined; split it into two runs.

Faults, modelled the way the RTL tolerates them (each adds a line to
``Prediction.violations``, i.e. mon_err must rise):

* MEM_WR_REQ with len > 7: reported, then served as len+1 beats;
* a second MEM_WR_REQ from a source whose write is open: reported, dropped;
* MEM_WR_DATA from a source with no open write: reported, dropped;
* MEM_WR_DATA whose last bit disagrees with the beat count: reported, the
  beat count decides;
* a read or write past the end of the DRAM: reported; words past the end read
  as 0, writes to them are lost.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from models.flit import FIELDS, FlitType, describe_flit, make_flit

__all__ = [
    "STREAM",
    "WORD_BYTES",
    "Descriptor",
    "DramImage",
    "MagModel",
    "Prediction",
    "CheckReport",
    "descriptor_payload",
    "decode_descriptor",
    "rd_req",
    "wr_req",
    "wr_data",
    "pack_peer",
    "unpack_peer",
]

Coord = tuple[int, int]

STREAM = 0x40
"""Flags bit 6: a stream read."""
WORD_BYTES = 32
"""Bytes per DRAM word."""
ADDR_MASK = (1 << 40) - 1
WORD_MASK = (1 << 256) - 1

_TYPE = FIELDS["type"]
_SRC_X, _SRC_Y = FIELDS["src_x"], FIELDS["src_y"]
_TXN, _LAST = FIELDS["txn"], FIELDS["last"]
_PAYLOAD = FIELDS["payload"]


# ---------------------------------------------------------------- descriptors
def pack_peer(coord: Coord) -> int:
    """A peer byte: packed coordinate with y first, {y[7:4], x[3:0]}."""
    x, y = coord
    if not (0 <= x <= 15 and 0 <= y <= 15):
        raise ValueError(f"peer coordinate {coord} does not fit 4 bits per axis")
    return (y << 4) | x


def unpack_peer(byte: int) -> Coord:
    """The (x, y) of a peer byte {y[7:4], x[3:0]}."""
    return (byte & 0xF, (byte >> 4) & 0xF)


@dataclass(frozen=True)
class Descriptor:
    """The fields of a MEM_RD_REQ / MEM_WR_REQ payload."""

    addr: int = 0
    len: int = 0
    flags: int = 0
    count: int = 0
    peer: int = 0
    n_peer: int = 0
    entry_words: int = 0

    @property
    def stream(self) -> bool:
        return bool(self.flags & STREAM)

    @property
    def word(self) -> int:
        return self.addr >> 5

    @property
    def entries(self) -> int:
        """Entries of a stream read (count 0 means 1)."""
        return self.count or 1

    @property
    def entry_size(self) -> int:
        """Words per entry of a stream read (0 or more than 4 means 4)."""
        return 4 if self.entry_words == 0 or self.entry_words > 4 else self.entry_words

    def peers(self) -> list[Coord]:
        """The extra destinations of a stream read, in sending order."""
        return [unpack_peer((self.peer >> (8 * k)) & 0xFF) for k in range(self.n_peer)]

    def read_words(self) -> int:
        """Words a read of this descriptor covers."""
        return self.entries * self.entry_size if self.stream else self.len + 1


_DESC_FIELDS = (("addr", 216, 40), ("len", 208, 8), ("flags", 200, 8), ("count", 192, 8),
                ("peer", 168, 24), ("n_peer", 166, 2), ("entry_words", 158, 8))


def descriptor_payload(addr: int, len: int = 0, *, flags: int = 0, count: int = 0,
                       peers: Sequence[Coord] = (), entry_words: int = 0) -> int:
    """The 256-bit payload of a request descriptor (peers: up to three coordinates)."""
    # (`len` is the protocol's field name here, so the builtin is not used in this function.)
    if _count(peers) > 3:
        raise ValueError(f"at most three peers fit a descriptor, got {_count(peers)}")
    peer = 0
    for k, c in enumerate(peers):
        peer |= pack_peer(c) << (8 * k)
    values = {"addr": addr, "len": len, "flags": flags, "count": count, "peer": peer,
              "n_peer": _count(peers), "entry_words": entry_words}
    payload = 0
    for name, lsb, width in _DESC_FIELDS:
        v = values[name]
        if not 0 <= v < (1 << width):
            raise ValueError(f"descriptor field {name}={v:#x} does not fit {width} bits")
        payload |= v << lsb
    return payload


def _count(items: Sequence[object]) -> int:
    return sum(1 for _ in items)


def decode_descriptor(payload: int) -> Descriptor:
    """The descriptor fields of a request payload."""
    return Descriptor(**{name: (payload >> lsb) & ((1 << width) - 1) for name, lsb, width in _DESC_FIELDS})



def rd_req(mag: Coord, src: Coord, txn: int, addr: int, len: int = 0, *, stream: bool = False,
           count: int = 0, entry_words: int = 0, peers: Sequence[Coord] = ()) -> int:
    """A MEM_RD_REQ flit from ``src`` to the agent at ``mag``."""
    payload = descriptor_payload(addr, len, flags=STREAM if stream else 0, count=count, peers=peers,
                                 entry_words=entry_words)
    return make_flit(mag, src, FlitType.MEM_RD_REQ, txn, 1, payload)


def wr_req(mag: Coord, src: Coord, txn: int, addr: int, len: int) -> int:
    """A MEM_WR_REQ flit (len = beats-1; the protocol allows 0..7); last is 0 on a write descriptor."""
    return make_flit(mag, src, FlitType.MEM_WR_REQ, txn, 0, descriptor_payload(addr, len))


def wr_data(mag: Coord, src: Coord, word: int, last: bool, txn: int = 0) -> int:
    """A MEM_WR_DATA flit carrying one 256-bit word."""
    return make_flit(mag, src, FlitType.MEM_WR_DATA, txn, int(last), word & WORD_MASK)


# ---------------------------------------------------------------- DRAM image
class DramImage:
    """What the DRAM holds: ``words`` 256-bit words, sparse, 0 where never written.

    Byte ``32*w + k`` is bits [8k+7:8k] of word ``w`` (little-endian within a
    word), the same convention as tb/lib/dram.py.
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
            raw = bytearray(self.word(w).to_bytes(WORD_BYTES, "little"))
            lo = max(byte_addr, w * WORD_BYTES)
            hi = min(end, (w + 1) * WORD_BYTES)
            raw[lo - w * WORD_BYTES:hi - w * WORD_BYTES] = data[lo - byte_addr:hi - byte_addr]
            self._w[w] = int.from_bytes(raw, "little")

    def read_bytes(self, byte_addr: int, n: int) -> bytes:
        if n <= 0:
            return b""
        first, last = byte_addr // WORD_BYTES, (byte_addr + n - 1) // WORD_BYTES
        raw = b"".join(self.word(w).to_bytes(WORD_BYTES, "little") for w in range(first, last + 1))
        off = byte_addr - first * WORD_BYTES
        return raw[off:off + n]


# ---------------------------------------------------------------- prediction
RdKey = tuple[str, Coord]  # ("rd", requester) or ("ack", writer)


@dataclass
class Prediction:
    """Every response flit of one run, per destination and per ordered stream.

    ``streams[dst][key]`` is the ordered list of flits destination ``dst`` must
    receive from stream ``key`` (``("rd", requester)`` or ``("ack", writer)``);
    different keys at one destination have no order between them.
    """

    mag: Coord
    streams: dict[Coord, dict[RdKey, list[int]]] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    open_writes: dict[Coord, tuple[int, int, int]] = field(default_factory=dict)  # src -> (txn, beats done, beats)

    @property
    def total(self) -> int:
        """Response flits in all (what the bench waits for)."""
        return sum(len(s) for per in self.streams.values() for s in per.values())

    def flits_for(self, dst: Coord) -> list[int]:
        return [f for s in self.streams.get(dst, {}).values() for f in s]

    def _add(self, dst: Coord, key: RdKey, flit: int) -> None:
        self.streams.setdefault(dst, {}).setdefault(key, []).append(flit)

    def check(self, captures: Iterable[tuple[Coord, int, int]], *, limit: int = 20,
              frontier_cap: int = 50_000) -> "CheckReport":
        """Judge captured flits: ``captures`` is (capturing coordinate, cycle, flit).

        Per destination: the captured multiset must equal the predicted one
        (a wrong flit is reported against the predicted flit it is closest
        to), then the capture order must be an interleaving of the predicted
        ordered streams.
        """
        got: dict[Coord, list[tuple[int, int, int]]] = {}
        for seq, (coord, cycle, flit) in enumerate(captures):
            got.setdefault(tuple(coord), []).append((cycle, seq, flit))
        report = CheckReport()
        for dst in sorted(set(self.streams) | set(got)):
            caps = [f for _, _, f in sorted(got.get(dst, []))]
            cycles = [c for c, _, _ in sorted(got.get(dst, []))]
            self._check_dst(dst, caps, cycles, report, frontier_cap)
        if len(report.errors) > limit:
            more = len(report.errors) - limit
            report.errors = report.errors[:limit] + [f"... and {more} more"]
        return report

    def _check_dst(self, dst: Coord, caps: list[int], cycles: list[int], report: "CheckReport",
                   frontier_cap: int) -> None:
        want = Counter(self.flits_for(dst))
        have = Counter(caps)
        report.checks += sum(want.values()) + sum(have.values())
        missing = list((want - have).elements())
        surplus = list((have - want).elements())
        differs = bool(missing or surplus)
        at = f"at ({dst[0]},{dst[1]})"
        # A surplus flit that shares its header with a missing one is a wrong value.
        for s in list(surplus):
            twin = next((m for m in missing if (m >> 256) == (s >> 256)), None)
            if twin is None:
                twin = next((m for m in missing if (m & WORD_MASK) == (s & WORD_MASK)), None)
            if twin is not None:
                changed = [n for n, spec in FIELDS.items() if spec.extract(s) != spec.extract(twin)]
                report.errors.append(
                    f"WRONG {at}: {'/'.join(changed)} differ\n    expected {describe_flit(twin)}"
                    f"\n    captured {describe_flit(s)}")
                missing.remove(twin)
                surplus.remove(s)
        for m in missing:
            report.errors.append(f"MISSING {at}: never captured: {describe_flit(m)}")
        for s in surplus:
            report.errors.append(f"UNEXPECTED {at}: captured, not predicted: {describe_flit(s)}")
        if differs or not caps:
            return
        # Order: the captures must interleave the predicted streams, each kept in order.
        seqs = list(self.streams.get(dst, {}).items())
        frontier: set[tuple[int, ...]] = {tuple(0 for _ in seqs)}
        for i, flit in enumerate(caps):
            nxt: set[tuple[int, ...]] = set()
            for state in frontier:
                for j, (_, s) in enumerate(seqs):
                    if state[j] < len(s) and s[state[j]] == flit:
                        nxt.add(state[:j] + (state[j] + 1,) + state[j + 1:])
            report.checks += 1
            if not nxt:
                heads = [f"{k[0]} from ({k[1][0]},{k[1][1]}): {describe_flit(s[st])}"
                         for st0 in list(frontier)[:1] for (k, s), st in zip(seqs, st0) if st < len(s)]
                report.errors.append(
                    f"ORDER {at}: capture #{i} at cycle {cycles[i]} is out of its stream's order: "
                    f"{describe_flit(flit)}\n    next expected per stream: " + "; ".join(heads))
                return
            if len(nxt) > frontier_cap:
                raise RuntimeError(f"order check at {dst}: more than {frontier_cap} ambiguous states")
            frontier = nxt


@dataclass
class CheckReport:
    """Outcome of :meth:`Prediction.check`."""

    checks: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.errors


# ---------------------------------------------------------------- the agent
class MagModel:
    """The agent at ``mag`` in front of ``dram``; :meth:`run` predicts one run.

    Between runs the agent is reset (open writes are forgotten), the DRAM keeps
    what was written.
    """

    def __init__(self, mag: Coord, dram: DramImage) -> None:
        self.mag = (mag[0], mag[1])
        self.dram = dram

    def run(self, sent: Mapping[Coord, Sequence[int]]) -> Prediction:
        """Predict the responses to ``sent`` (per source coordinate, its flits in order).

        Reads see the DRAM as it was before the run; writes are applied to
        ``self.dram`` at the end. Raises ValueError for a run whose outcome the
        protocol leaves undefined (a read and a write of one word from
        different requests, or two sources writing one word).
        """
        pred = Prediction(self.mag)
        before = self.dram
        after = self.dram.copy()
        read_words: dict[int, Coord] = {}
        written_by: dict[int, Coord] = {}
        for src in sorted(sent):
            open_w: Optional[list[int]] = None  # [txn, first word, beats, done]
            for flit in sent[src]:
                ftype = _TYPE.extract(flit)
                txn = _TXN.extract(flit)
                hdr_src = (_SRC_X.extract(flit), _SRC_Y.extract(flit))
                if hdr_src != tuple(src):
                    raise ValueError(f"a flit sent by {src} carries src={hdr_src}: {describe_flit(flit)}")
                if ftype == FlitType.MEM_RD_REQ:
                    d = decode_descriptor(_PAYLOAD.extract(flit))
                    self._read(pred, before, src, txn, d)
                    for w in range(d.word, d.word + d.read_words()):
                        read_words.setdefault(w, src)
                elif ftype == FlitType.MEM_WR_REQ:
                    d = decode_descriptor(_PAYLOAD.extract(flit))
                    if open_w is not None:
                        pred.violations.append(
                            f"second MEM_WR_REQ from {src} txn {txn:#04x} while write txn {open_w[0]:#04x} is open")
                        continue
                    if d.len > 7:
                        pred.violations.append(f"MEM_WR_REQ from {src} txn {txn:#04x} has len {d.len} > 7")
                    if d.word + d.len + 1 > self.dram.size:
                        pred.violations.append(f"MEM_WR_REQ from {src} txn {txn:#04x} writes past the end")
                    open_w = [txn, d.word, d.len + 1, 0]
                elif ftype == FlitType.MEM_WR_DATA:
                    if open_w is None:
                        pred.violations.append(f"MEM_WR_DATA from {src} with no open write")
                        continue
                    wtxn, first, beats, done = open_w
                    final = done == beats - 1
                    if _LAST.extract(flit) != int(final):
                        pred.violations.append(
                            f"MEM_WR_DATA from {src} beat {done + 1}/{beats} has last={_LAST.extract(flit)}")
                    word = first + done
                    owner = written_by.setdefault(word, src)
                    if owner != src:
                        raise ValueError(f"word {word:#x} is written by {owner} and {src} in one run: "
                                         "nothing orders them; use disjoint addresses")
                    after.set_word(word, _PAYLOAD.extract(flit))
                    open_w[3] = done + 1
                    if final:
                        pred._add(src, ("ack", src), make_flit(src, self.mag, FlitType.MEM_WR_ACK, wtxn, 1, 0))
                        open_w = None
                else:
                    pred.dropped.append(flit)
            if open_w is not None:
                pred.open_writes[src] = (open_w[0], open_w[3], open_w[2])
        clash = sorted(w for w in written_by if w in read_words)
        if clash:
            w = clash[0]
            raise ValueError(f"word {w:#x} is read by {read_words[w]} and written by {written_by[w]} in one run: "
                             "nothing orders a read against a write; split the run in two")
        self.dram = after
        return pred

    def _read(self, pred: Prediction, dram: DramImage, src: Coord, txn: int, d: Descriptor) -> None:
        n = d.read_words()
        if d.word + n > dram.size:
            pred.violations.append(f"MEM_RD_REQ from {src} txn {txn:#04x} reads past the end")
        key = ("rd", src)
        if not d.stream:
            for i in range(n):
                pred._add(src, key, make_flit(src, self.mag, FlitType.MEM_RD_RESP, txn, int(i == n - 1),
                                          dram.word(d.word + i)))
            return
        dests = [src] + d.peers()
        ew = d.entry_size
        for e in range(d.entries):
            words = dram.words(d.word + e * ew, ew)
            for dst in dests:
                for k, value in enumerate(words):
                    pred._add(dst, key, make_flit(dst, self.mag, FlitType.MEM_RD_RESP, txn + e,
                                              int(k == ew - 1), value, rsvd=k))
