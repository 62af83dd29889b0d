"""Model of the PE DMA engine (rtl/ahbm/pe/pe_dma.v) and its local slice.

Timing rule (the RTL's, cycle for cycle): a request taken in cycle ``i``
starts its transfer in cycle ``s = max(i + 2, e_prev)``, ``e_prev`` the first
cycle after the previous request's transfer (requests run in order, one at a
time). The engine gains ``bw`` bytes of credit per transfer cycle and moves a
64-byte word whenever the credit reaches 64, so word ``k`` leaves the slice in
cycle ``s + ceil((k+1)*64/bw) - 1`` and the transfer lasts ``ceil(len/bw)``
cycles (credit carries from word to word inside a request; what is left after
the last word is dropped). A word is delivered ``lat`` cycles after it left
the slice; the request completes with its last word.

Data: the slice is byte-addressed, word ``w`` holds bytes ``64w .. 64w+63``
(byte ``64w+k`` in bits ``[8k+7:8k]``); a request returns its words in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

WORD_BYTES = 64


@dataclass(frozen=True)
class DmaRequest:
    addr: int      # byte address, 64-byte aligned
    length: int    # bytes, a non-zero multiple of 64
    buf: int = 0   # destination tile buffer id
    tag: int = 0

    @property
    def words(self) -> int:
        return self.length // WORD_BYTES


@dataclass(frozen=True)
class DmaTiming:
    start: int                  # first transfer cycle
    end: int                    # first cycle after the transfer
    word_cycles: tuple[int, ...]  # delivery cycle of each word
    done: int                   # delivery cycle of the last word (completion)


def request_error(req: DmaRequest, slice_bytes: int) -> str | None:
    """Why the engine refuses ``req`` (its monitor fires), or None."""
    if req.addr % WORD_BYTES or req.length % WORD_BYTES or req.length <= 0:
        return "misaligned"
    if req.addr < 0 or req.addr + req.length > slice_bytes:
        return "out of range"
    return None


def transfer_cycles(length: int, bw: int) -> int:
    """Cycles a request of ``length`` bytes occupies the engine: ceil(length / bw)."""
    return -(-length // bw)


def word_offsets(length: int, bw: int) -> list[int]:
    """Transfer cycle (from 0) in which each word leaves the slice."""
    if not 1 <= bw <= WORD_BYTES:
        raise ValueError(f"bw must be 1..{WORD_BYTES}, got {bw}")
    return [-(-(k + 1) * WORD_BYTES // bw) - 1 for k in range(length // WORD_BYTES)]


def schedule(reqs: Sequence[DmaRequest], issue: Sequence[int], bw: int, lat: int) -> list[DmaTiming]:
    """Timing of each request given the cycle it was taken (in order)."""
    if len(reqs) != len(issue):
        raise ValueError("one issue cycle per request")
    if any(b < a for a, b in zip(issue, issue[1:])):
        raise ValueError("issue cycles must be non-decreasing")
    out: list[DmaTiming] = []
    e_prev = None
    for req, i in zip(reqs, issue):
        s = i + 2 if e_prev is None else max(i + 2, e_prev)
        cyc = tuple(s + o + lat for o in word_offsets(req.length, bw))
        e_prev = s + transfer_cycles(req.length, bw)
        out.append(DmaTiming(start=s, end=e_prev, word_cycles=cyc, done=cyc[-1]))
    return out


def slice_words(data: bytes) -> list[int]:
    """Slice contents (bytes from address 0) as 64-byte words, little-endian."""
    pad = data + bytes(-len(data) % WORD_BYTES)
    return [int.from_bytes(pad[o:o + WORD_BYTES], "little") for o in range(0, len(pad), WORD_BYTES)]


def request_data(data: bytes, req: DmaRequest) -> list[int]:
    """The words ``req`` returns from a slice holding ``data``."""
    chunk = data[req.addr:req.addr + req.length]
    if len(chunk) != req.length:
        raise ValueError("request past the end of the data")
    return slice_words(chunk)


def achieved_bw(reqs: Sequence[DmaRequest], timing: Sequence[DmaTiming]) -> float:
    """Bytes per busy engine cycle (what cnt_bytes / cnt_busy measures)."""
    busy = sum(t.end - t.start for t in timing)
    return sum(r.length for r in reqs) / busy if busy else 0.0
