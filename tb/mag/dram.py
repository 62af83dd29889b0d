"""Python side of the DRAM model's bulk backdoor (rtl/mag/mag_dram.v, instance `dram`).

Contents move as files in the simulator's working directory: one `$readmemh`
to load a word range, one `$writememh` to read one back. Python never touches
`dram.mem` word by word, so loading megabytes costs one file write and one
simulator call.

Byte convention (shared with models.mag.model.DramImage): byte ``32*w + k`` is bits
[8k+7:8k] of 256-bit word ``w``, i.e. a word is its 32 bytes little-endian.
Loads at an unaligned byte address read the two partial edge words back first
and merge, so the bytes around the range are kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

import numpy as np
from cocotb.triggers import RisingEdge

WORD_BYTES = 32

Bytes = Union[bytes, bytearray, memoryview, np.ndarray]


def words_to_hex_lines(data: np.ndarray, word_bytes: int = WORD_BYTES) -> str:
    """$readmemh text for whole words given as a (n*word_bytes,) uint8 array, one word a line."""
    digits = 2 * word_bytes
    rows = np.ascontiguousarray(data, dtype=np.uint8).reshape(-1, word_bytes)[:, ::-1]
    text = np.ascontiguousarray(rows).tobytes().hex()
    return "".join(text[i:i + digits] + "\n" for i in range(0, len(text), digits))


def hex_lines_to_bytes(lines: Iterable[str], n_words: int, word_bytes: int = WORD_BYTES) -> np.ndarray:
    """Parse $writememh text back into a (n_words*word_bytes,) uint8 array."""
    digits = 2 * word_bytes
    words = [ln for ln in (raw.strip() for raw in lines) if ln and not ln.startswith(("//", "@"))]
    if len(words) < n_words:
        raise ValueError(f"DRAM dump holds {len(words)} words, {n_words} were asked for")
    joined = "".join(w.rjust(digits, "0") for w in words[:n_words])
    if any(c in "xXzZ" for c in joined):
        raise ValueError("DRAM dump holds x/z bits: words never written or loaded (INIT_ZERO=0?)")
    rows = np.frombuffer(bytes.fromhex(joined), dtype=np.uint8).reshape(-1, word_bytes)[:, ::-1]
    return np.ascontiguousarray(rows).reshape(-1)


def _as_uint8(data: Bytes) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    return np.frombuffer(bytes(data), dtype=np.uint8)


class DramBackdoor:
    """Bulk load and read-back of a `mag_dram` instance (e.g. ``dut.dram``), or of
    any memory with the same backdoor registers and another word size (the AHBM
    PE slice: ``word_bytes=64``)."""

    def __init__(self, handle: Any, clk: Any, workdir: Path | None = None,
                 load_file: str = "dram_load.hex", dump_file: str = "dram_dump.hex",
                 word_bytes: int = WORD_BYTES) -> None:
        self.h = handle
        self.clk = clk
        self.wb = word_bytes
        self.workdir = workdir or Path(os.getcwd())
        self.words = int(handle.WORDS.value)
        self.load_file = self.workdir / load_file
        self.dump_file = self.workdir / dump_file

    @property
    def size_bytes(self) -> int:
        return self.words * self.wb

    def _check(self, first: int, n: int) -> None:
        if n < 1 or first < 0 or first + n > self.words:
            raise ValueError(f"words {first}..{first + n - 1} are outside the DRAM's {self.words} words "
                             f"(raise DRAM_WORDS in the bench parameters)")

    async def _request(self, req: Any, ack: Any, first: int, n: int) -> None:
        self.h.bd_lo.value = first
        self.h.bd_hi.value = first + n - 1
        await RisingEdge(self.clk)
        req.value = 1
        await RisingEdge(ack)
        req.value = 0
        await RisingEdge(self.clk)

    # ------------------------------------------------------------ words
    def traffic_bytes(self) -> tuple[int, int]:
        """(bytes read, bytes written) through the DRAM's ports since reset, as counted in the RTL."""
        return int(self.h.rd_words.value) * self.wb, int(self.h.wr_words.value) * self.wb

    async def load_words(self, first: int, words: Sequence[int]) -> None:
        """Load whole words (Python ints) from word ``first`` on."""
        self._check(first, len(words))
        self.load_file.write_text("".join(f"{w & ((1 << (8 * self.wb)) - 1):0{2 * self.wb}x}\n" for w in words))
        await self._request(self.h.load_req, self.h.load_ack, first, len(words))

    async def read_words(self, first: int, n: int) -> list[int]:
        """Read ``n`` whole words back as Python ints."""
        raw = await self._dump(first, n)
        return [int.from_bytes(raw[i * self.wb:(i + 1) * self.wb].tobytes(), "little") for i in range(n)]

    # ------------------------------------------------------------ bytes
    async def load_bytes(self, byte_addr: int, data: Bytes) -> None:
        """Store ``data`` (bytes or any numpy array, taken as raw bytes) at ``byte_addr``."""
        buf = _as_uint8(data)
        if buf.size == 0:
            return
        end = byte_addr + buf.size
        first, last = byte_addr // self.wb, (end - 1) // self.wb
        n = last - first + 1
        self._check(first, n)
        head, tail = byte_addr - first * self.wb, (last + 1) * self.wb - end
        if head or tail:
            # Partial edge words: keep the bytes around the range.
            block = np.zeros(n * self.wb, dtype=np.uint8)
            if head or n == 1:
                block[:self.wb] = await self._dump(first, 1)
            if tail and n > 1:
                block[-self.wb:] = await self._dump(last, 1)
            block[head:head + buf.size] = buf
        else:
            block = buf
        self.load_file.write_text(words_to_hex_lines(block, self.wb))
        await self._request(self.h.load_req, self.h.load_ack, first, n)

    async def read_bytes(self, byte_addr: int, n: int) -> np.ndarray:
        """``n`` bytes from ``byte_addr`` as a uint8 array."""
        if n <= 0:
            return np.zeros(0, dtype=np.uint8)
        first, last = byte_addr // self.wb, (byte_addr + n - 1) // self.wb
        raw = await self._dump(first, last - first + 1)
        off = byte_addr - first * self.wb
        return raw[off:off + n].copy()

    async def _dump(self, first: int, n: int) -> np.ndarray:
        self._check(first, n)
        await self._request(self.h.dump_req, self.h.dump_ack, first, n)
        return hex_lines_to_bytes(self.dump_file.read_text().splitlines(), n, self.wb)


__all__ = ["DramBackdoor", "WORD_BYTES", "hex_lines_to_bytes", "words_to_hex_lines"]
