"""The kernel's DRAM layout: where x, w_r, the temps and y live, and the words they hold.

DRAM layout (:class:`DramLayout`; byte addresses, every region 32-byte aligned,
by default packed from ``base`` on 4 KB boundaries, all below 2^40, the reach
of a vector descriptor's base and of a cluster address):

=========  ==========================================================  ==========
region     content                                                      bytes
=========  ==========================================================  ==========
x          L1A entry images of x (M x K int7, E5M3 scale per row per     M*K
           32-wide K block): entry ``G*nk + kb`` (4-row group G, K block
           kb) at ``x_base + 128*(G*nk + kb)``, 4 granules as the cluster
           stores them (``models.cluster.a_entries``). Instance row r FILLs
           the ``gm*nk`` contiguous entries from group ``r*gm``.
w_r        L1B entry images of w_r^T (w_r is N x K, y = x @ w_r^T): entry   N*K each
           ``H*nk + kb`` (4-column group H of y = rows 4H..4H+3 of w_r) at
           ``w_base[r] + 128*(H*nk + kb)`` (``models.cluster.b_entries``).
           Instance column c FILLs ``gn*nk`` entries from group ``c*gn``.
temp_r     unfused only: accumulator r's FP16 drain, tiled like y.          M*N*2 each
y          the output, FP16, **tiled**: instance i (= row*cols + col, the    M*N*2
           plan's order) owns words ``y_base/32 + i*gm*gn + t``; word t =
           sub-tile t = g*gn + h, 16 FP16 with element (rr, cc) of the 4x4
           at lane 4*rr + cc (the OP_EMIT granule, unchanged by the
           epilogue). One instance's tile is contiguous, so its VDRAIN
           walks a one-dimensional descriptor (a multi-dimensional VDRAIN
           is unverified upstream). :func:`unpack_tiled` gives the M x N
           matrix.
=========  ==========================================================  ==========
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.cluster import GRANULE_BYTES, a_entries, b_entries, granules_of
from models.vector import u16_to_word, words_to_u16
from models.machine.planner import Plan, PlanRefused
from models.vector.isa import ADDR_BITS

SCALE_ONE = 0xA0  # E5M3 1.0
ENTRY_BYTES = 4 * GRANULE_BYTES  # 128: one L1 entry image in DRAM
WORD_BYTES = 32
DESC_ADDR_LIMIT = 1 << ADDR_BITS  # a descriptor base (and a cluster address) is 40 bits


def _refuse(what: str, fix: str) -> PlanRefused:
    """How every module of models.programs refuses: the limit hit, then the fix."""
    return PlanRefused(f"{what}; fix: {fix}")


@dataclass(frozen=True)
class DramLayout:
    """Byte addresses of the kernel's DRAM regions (see the module docstring for the formats)."""

    m: int
    n: int
    k: int
    gm: int
    gn: int
    nk: int
    x_base: int
    w_bases: tuple[int, ...]
    temp_bases: tuple[int, ...]
    y_base: int

    @property
    def cols(self) -> int:
        return self.n // (4 * self.gn)

    @property
    def tile_words(self) -> int:
        return self.gm * self.gn

    @property
    def x_bytes(self) -> int:
        return (self.m // 4) * self.nk * ENTRY_BYTES

    @property
    def w_bytes(self) -> int:
        return (self.n // 4) * self.nk * ENTRY_BYTES

    @property
    def y_bytes(self) -> int:
        return self.m * self.n * 2

    @property
    def temp_bytes(self) -> int:
        """Bytes of every temp together (one M x N FP16 image per accumulator)."""
        return len(self.temp_bases) * self.y_bytes

    def x_fill_addr(self, row: int) -> int:
        return self.x_base + row * self.gm * self.nk * ENTRY_BYTES

    def w_fill_addr(self, r: int, col: int) -> int:
        return self.w_bases[r] + col * self.gn * self.nk * ENTRY_BYTES

    def tile_offset(self, row: int, col: int) -> int:
        return (row * self.cols + col) * self.tile_words * WORD_BYTES

    def y_addr(self, row: int, col: int) -> int:
        return self.y_base + self.tile_offset(row, col)

    def temp_addr(self, r: int, row: int, col: int) -> int:
        return self.temp_bases[r] + self.tile_offset(row, col)

    def regions(self) -> list[tuple[str, int, int]]:
        """(name, first byte, bytes) of every region, in address order."""
        out = [("x", self.x_base, self.x_bytes)]
        out += [(f"w{r}", b, self.w_bytes) for r, b in enumerate(self.w_bases)]
        out += [(f"temp{r}", b, self.y_bytes) for r, b in enumerate(self.temp_bases)]
        out.append(("y", self.y_base, self.y_bytes))
        return sorted(out, key=lambda t: t[1])

    def check(self) -> None:
        """Refuse overlapping, misaligned or out-of-reach regions (naming the limit and the fix)."""
        regions = self.regions()
        for name, start, size in regions:
            if start % WORD_BYTES:
                raise _refuse(f"DRAM region {name} at {start:#x} is not 32-byte aligned (DRAM word = byte >> 5)",
                              "align every base to 32 bytes")
            if start + size > DESC_ADDR_LIMIT:
                raise _refuse(f"DRAM region {name} ends at {start + size:#x}, past 2^40, the reach of a vector "
                              f"descriptor base and of a cluster address", "place the regions lower")
        for (n1, s1, z1), (n2, s2, _) in zip(regions, regions[1:]):
            if s1 + z1 > s2:
                raise _refuse(f"DRAM regions {n1} and {n2} overlap ({n1} ends at {s1 + z1:#x}, {n2} starts at "
                              f"{s2:#x})", "move the bases apart")


def dram_layout(plan: Plan, *, base: int = 0, align: int = 0x1000, temps: bool = True) -> DramLayout:
    """The default layout: x, w_0.., temp_0.., y packed from `base`, each on an `align` boundary.

    Temps are laid out by default so one layout serves both forms; pass
    ``temps=False`` for a fused-only layout.
    """
    if align % WORD_BYTES or align <= 0:
        raise ValueError(f"align must be a positive multiple of 32 bytes, got {align}")
    up = lambda a: -(-a // align) * align  # noqa: E731
    cursor = up(base)
    x_base = cursor
    cursor = up(cursor + (plan.m // 4) * plan.nk * ENTRY_BYTES)
    w_bases = []
    for _ in range(plan.accumulators):
        w_bases.append(cursor)
        cursor = up(cursor + (plan.n // 4) * plan.nk * ENTRY_BYTES)
    temp_bases = []
    for _ in range(plan.accumulators if temps else 0):
        temp_bases.append(cursor)
        cursor = up(cursor + plan.m * plan.n * 2)
    layout = DramLayout(plan.m, plan.n, plan.k, plan.gm, plan.gn, plan.nk, x_base, tuple(w_bases),
                        tuple(temp_bases), cursor)
    layout.check()
    return layout


def operand_images(layout: DramLayout, x, ws: Sequence, *, x_scales=None, w_scales=None) -> dict[int, int]:
    """DRAM words (word index -> 256-bit value) holding x and every w_r as L1 entry images.

    x: (M, K) int7; ws: one (N, K) int7 matrix per accumulator; x_scales (M, nk)
    and w_scales (one (N, nk) per accumulator) are E5M3 codes, 0xA0 (1.0) when
    not given.
    """
    x = np.asarray(x)
    if x.shape != (layout.m, layout.k):
        raise ValueError(f"x must be (M, K) = ({layout.m}, {layout.k}), got {x.shape}")
    if len(ws) != len(layout.w_bases):
        raise ValueError(f"{len(ws)} weight matrices for {len(layout.w_bases)} accumulators")
    xs = np.full((layout.m, layout.nk), SCALE_ONE) if x_scales is None else np.asarray(x_scales)
    out: dict[int, int] = {}
    _put_entries(out, layout.x_base, a_entries(x, xs))
    for r, w in enumerate(ws):
        w = np.asarray(w)
        if w.shape != (layout.n, layout.k):
            raise ValueError(f"w{r} must be (N, K) = ({layout.n}, {layout.k}), got {w.shape}")
        s = np.full((layout.n, layout.nk), SCALE_ONE) if w_scales is None else np.asarray(w_scales[r])
        _put_entries(out, layout.w_bases[r], b_entries(w.T, s.T))
    return out


def _put_entries(out: dict[int, int], base: int, entries: Sequence[Sequence[int]]) -> None:
    first = base // WORD_BYTES
    for i, g in enumerate(granules_of(entries)):
        out[first + i] = g


def pack_tiled(y, gm: int, gn: int) -> list[int]:
    """An (M, N) FP16 matrix -> its tiled words (instance-major, sub-tile g*gn+h, lane 4rr+cc)."""
    y = np.asarray(y, dtype=np.uint16)
    m, n = y.shape
    rows, cols = m // (4 * gm), n // (4 * gn)
    t = y.reshape(rows, gm, 4, cols, gn, 4).transpose(0, 3, 1, 4, 2, 5).reshape(-1, 16)
    return [u16_to_word(lanes) for lanes in t]


def unpack_tiled(words: Sequence[int], m: int, n: int, gm: int, gn: int) -> np.ndarray:
    """Tiled words -> the (M, N) FP16 matrix (inverse of :func:`pack_tiled`)."""
    rows, cols = m // (4 * gm), n // (4 * gn)
    if len(words) != rows * cols * gm * gn:
        raise ValueError(f"{len(words)} words for an {m}x{n} tiled output ({rows * cols * gm * gn} expected)")
    lanes = words_to_u16(words)
    return lanes.reshape(rows, cols, gm, gn, 4, 4).transpose(0, 2, 4, 1, 3, 5).reshape(m, n)
