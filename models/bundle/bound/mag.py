"""The memory agent with an error shadow: every FP16 lane of its DRAM carries a bound.

:class:`BoundMag` is models.mag.model.MagUnit unchanged (its bits are the golden
model's) plus, per 16-bit lane of every DRAM word, an error bound and a lower
bound of the lane's exact value (models/bundle/bound/lanes.py: the floor; -inf
where none is known), as a (3, 16) array per word: :data:`ERR`, :data:`FLOOR`
(error 0 for what the host loaded: the inputs are exact) and :data:`EXACT`. A plain or streamed read
hands each word's errors on with its response; a QUANT read (units.md M.3) quantises each
lane's 32 elements with the lane's step ``s`` (the scale byte's value, one
code) and hands on, per element, the input's error, exact value and FP16 value and
the quantiser's worst case ``0.516 s``, after checking that
the golden quantiser's actual error, ``|code * s - x|``, is within
``0.516 s`` (a wrong derivation is refused by name, never used; :meth:`BoundMag.quant_err`). A write
stores the errors its data beats carry, and which kernel call wrote each lane
(models/bundle/calls.py; :data:`INPUT` for the image and for lanes handed over at
a kernel boundary, models/bundle/bound/machine.py). :data:`EXACT` is the lane's
exact value as float64 evaluates the program's math.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from models.noc.flit import FIELDS
from models.mag.model import MagUnit
from models.mag.proto import WORD_BYTES, Coord, Descriptor
from models.numerics.formats import e5m3_decode
from models.numerics.mxfp7 import ENTRY_DRAM_WORDS, entry_halves, lane_scale, quantise_elements
from models.vector.link import Event

from .port import ErrorPort
from .rules import QUANT_STEPS, BoundError, f16

LANES_PER_WORD = WORD_BYTES // 2
ERR, FLOOR, EXACT = 0, 1, 2  # the planes of an FP16 word's shadow
PLANES = 3
Q_ERR, Q_EXACT, Q_INPUT, Q_WORST = 0, 1, 2, 3  # the planes of a quantised entry's shadow (quant_err)
Q_PLANES = 4
INPUT = -1  # the producer of a lane nothing computed since the last kernel boundary (models/bundle/calls.py)


def exact_word() -> np.ndarray:
    """The shadow of a word nothing computed: error 0, no floor beyond the value, exact value 0 (the DRAM's
    reset content; a loaded word gets its own, models/bundle/bound/machine.py)."""
    return np.stack([np.zeros(LANES_PER_WORD), np.full(LANES_PER_WORD, -np.inf), np.zeros(LANES_PER_WORD)])


_WORD_INDEX_MASK = (1 << 35) - 1
_UNTOUCHED = exact_word()  # the shadow of every word nothing wrote, shared: read-only
_UNTOUCHED.flags.writeable = False


def _read_lanes(per_word: Callable[[int], np.ndarray], byte_off: int, n: int) -> np.ndarray:
    """n FP16 lanes from DRAM byte offset `byte_off` (2-byte aligned) of a per-word shadow whose last axis is
    the word's 16 lanes (the planes, or the producing calls), across as many words as they span."""
    first, lo = byte_off // WORD_BYTES, (byte_off % WORD_BYTES) // 2
    flat = np.concatenate([per_word(w) for w in range(first, (byte_off + 2 * n - 1) // WORD_BYTES + 1)], axis=-1)
    return flat[..., lo:lo + n].copy()


def _write_lanes(per_word: Callable[[int], np.ndarray], byte_off: int,
                 values: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(word, its new per-word shadow) for writing `values` (last axis: lanes) from DRAM byte offset
    `byte_off`, the lanes around them in the first and last word kept."""
    n = values.shape[-1]
    first, last = byte_off // WORD_BYTES, (byte_off + 2 * n - 1) // WORD_BYTES
    flat = np.concatenate([per_word(w) for w in range(first, last + 1)], axis=-1)
    lo = (byte_off % WORD_BYTES) // 2
    flat[..., lo:lo + n] = values
    return [(w, flat[..., LANES_PER_WORD * i:LANES_PER_WORD * (i + 1)].copy())
            for i, w in enumerate(range(first, last + 1))]


class BoundMag(ErrorPort, MagUnit):
    """MagUnit plus the error of every FP16 lane of its DRAM (module doc)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._init_port()
        self.err_words: dict[int, np.ndarray] = {}
        self.call_words: dict[int, np.ndarray] = {}  # word -> the call that wrote each lane (absent: INPUT)
        self.call = 0  # the kernel call now running: the producer of what the units write
        self._quant_cache: dict[int, np.ndarray] = {}  # first word -> quant_err, until a write lands

    def word_calls(self, word: int) -> np.ndarray:
        """The producing call of each lane of one DRAM word (INPUT: loaded, or reset at a kernel boundary)."""
        got = self.call_words.get(word & _WORD_INDEX_MASK)
        return np.full(LANES_PER_WORD, INPUT, dtype=np.int32) if got is None else got

    def lane_calls(self, byte_off: int, n: int) -> np.ndarray:
        """The producing call of the n FP16 lanes from DRAM byte offset `byte_off`."""
        return _read_lanes(self.word_calls, byte_off, n)

    def set_lane_calls(self, byte_off: int, calls: np.ndarray) -> None:
        """Write the producing call of n FP16 lanes from DRAM byte offset `byte_off`."""
        for w, part in _write_lanes(self.word_calls, byte_off, np.asarray(calls, dtype=np.int32)):
            if np.all(part == INPUT):
                self.call_words.pop(w, None)
            else:
                self.call_words[w] = part

    # ------------------------------------------------------------ the shadow DRAM
    def word_err(self, word: int) -> np.ndarray:
        """The (PLANES, 16) shadow of one DRAM word (read-only where nothing wrote it: copy to change it)."""
        return self.err_words.get(word & _WORD_INDEX_MASK, _UNTOUCHED)

    def lane_planes(self, byte_off: int, n: int) -> np.ndarray:
        """The (PLANES, n) shadow of the n FP16 lanes from DRAM byte offset `byte_off` (2-byte aligned)."""
        return _read_lanes(self.word_err, byte_off, n)

    def set_lane_planes(self, byte_off: int, planes: np.ndarray) -> None:
        """Write the (PLANES, n) shadow of n FP16 lanes from DRAM byte offset `byte_off` (2-byte aligned)."""
        for w, part in _write_lanes(self.word_err, byte_off, np.asarray(planes, dtype=np.float64)):
            self.err_words[w] = part
        self.forget_quantised()

    # ------------------------------------------------------------ reads and writes
    def forget_quantised(self) -> None:
        """Entries quantised before a DRAM write may read otherwise now: derive them again."""
        self._quant_cache.clear()

    def quant_err(self, first: int) -> np.ndarray:
        """:meth:`quantise_shadow` of the entry at `first`, derived once until the DRAM is written (the
        clusters of a GEMM read the same entries; each read's flits take the same shadow)."""
        got = self._quant_cache.get(first)
        if got is None:
            got = self._quant_cache[first] = self.quantise_shadow(first)
        return got

    def quantise_shadow(self, first: int) -> np.ndarray:
        """The shadow of one QUANT entry's elements (lane, k), as planes (4, 4, 32) (:data:`Q_PLANES`): the
        error of the quantiser's input, its exact value (the math knows no quantisation), the input's FP16
        value as the machine holds it, and the quantiser's worst case per element, ``0.516 s`` (units.md
        M.3), after checking that the golden quantiser's actual error, ``|code * s - x|``, is within it. The
        cluster measures a K block's own error from the input values (models/bundle/bound/cluster.py)."""
        words = [self.dram.word((first + i) & _WORD_INDEX_MASK) for i in range(ENTRY_DRAM_WORDS)]
        raw = np.frombuffer(b"".join(int(w).to_bytes(WORD_BYTES, "little") for w in words), dtype=np.uint8)
        halves = entry_halves(raw)
        scale = lane_scale(halves)
        step = e5m3_decode(scale)[:, None]
        x = f16(halves)
        actual = np.abs(quantise_elements(halves, scale[:, None]) * step - x)
        if not np.all(actual <= QUANT_STEPS * step):
            lane, k = np.unravel_index(int(np.argmax(actual / step)), actual.shape)
            raise BoundError(f"MXFP7 entry at DRAM word {first:#x}: element (lane {lane}, k {k}) = {x[lane, k]} "
                             f"quantised {actual[lane, k] / step[lane, 0]:.3f} steps away, past the "
                             f"{QUANT_STEPS}-step rule")
        planes = np.concatenate([self.word_err(first + i) for i in range(ENTRY_DRAM_WORDS)], axis=1)
        e_in, x_in = planes[ERR].reshape(4, 32), planes[EXACT].reshape(4, 32)
        return np.stack([e_in, x_in, x, np.broadcast_to(QUANT_STEPS * step, x.shape)])

    def _read(self, src: Coord, txn: int, d: Descriptor) -> list[Event]:
        events = super()._read(src, txn, d)
        if not events:
            return events
        first = self.index(d.addr)
        errs: list[np.ndarray] = []
        if not d.entry_read:
            errs = [self.word_err(first + i) for i in range(d.len + 1)]
        else:
            stride = d.entry_stride
            for i in range(d.entries):
                base = first + i * stride
                entry = [self.quant_err(base)] * d.entry_size if d.quant else \
                    [self.word_err(base + w) for w in range(stride)]
                for _ in [src] + d.peers():
                    errs.extend(entry)
        if len(errs) != len(events):
            raise BoundError(f"MEM_RD_REQ from {src}: {len(events)} responses, the shadow derived {len(errs)}")
        for ev, e in zip(events, errs):
            self.send(FIELDS["payload"].extract(ev.flit), e)
        return events

    def _write_data(self, src: Coord, flit: int) -> list[Event]:
        w = self.open.get(src)
        if w is not None and not w.discard:
            word = (w.first + w.done) & _WORD_INDEX_MASK
            self.err_words[word] = self.take_inbound("a MEM_WR_DATA beat")
            self.forget_quantised()
            self.call_words[word] = np.full(LANES_PER_WORD, self.call, dtype=np.int32)
        return super()._write_data(src, flit)


__all__ = ["ERR", "EXACT", "FLOOR", "INPUT", "PLANES", "Q_ERR", "Q_EXACT", "Q_INPUT", "Q_PLANES", "Q_WORST", "BoundMag",
           "LANES_PER_WORD", "exact_word"]
