"""The GEMM sweep as a list of accumulator commands (units.md C.5): the order and the addresses.

``for kb < nk: for g < gm: for h < gn``; L1A entry {abank, (aoff + g*nk + kb)
mod 256}, L1B entry {bbank, (boff + h*nk + kb) mod 256}, tile g*gn + h; LOAD
when kb = 0 and not acc, else ADD; with emit, every issue of the last K block
is an ADD_EMIT unless that block is a LOAD (C.6). ClusterCore computes the
sweep batched per K block; this list is what a bench or a reader checks the
order against.
"""

from __future__ import annotations

from dataclasses import dataclass

from .core import l1_entry
from .isa import one


@dataclass(frozen=True)
class Command:
    """One accumulator command of a GEMM sweep."""

    kb: int
    g: int
    h: int
    a_entry: int  # L1A entry index (bank bit 8)
    b_entry: int  # L1B entry index
    tile: int  # accumulator sub-tile g*gn + h
    load: bool  # LOAD (kb == 0 and not acc) else ADD
    emit: bool = False  # ADD_EMIT: an ADD of the last K block of an emitting GEMM


def sweep_order(gm: int, gn: int, nk: int, *, aoff: int = 0, boff: int = 0, acc: int = 0, abank: int = 0,
                bbank: int = 0, emit: int = 0) -> list[Command]:
    """The sweep: for kb < nk: for g < gm: for h < gn (K outermost); 0 reads as 1."""
    gm, gn, nk = one(gm), one(gn), one(nk)
    out = []
    for kb in range(nk):
        for g in range(gm):
            for h in range(gn):
                load = kb == 0 and not acc
                out.append(Command(kb, g, h, l1_entry(abank, aoff + g * nk + kb), l1_entry(bbank, boff + h * nk + kb),
                                   g * gn + h, load, bool(emit) and kb == nk - 1 and not load))
    return out
