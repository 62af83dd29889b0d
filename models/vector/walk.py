"""Address descriptors and the walk (units.md V.3), and the DESC writes that set one.

A descriptor is a 40-bit base and four dimensions of (stride, bound), stride an
18-bit signed number and bound a 16-bit count (0 reads as 1). Dimension 0 is
innermost. The walk's element n is at

    addr_n = (base + off + i0*st0 + i1*st1 + i2*st2 + i3*st3) mod 2^40

and after the last element the walk repeats the last address. Memory walks
(VFILL, VDRAIN) count bytes; L1 walks (VLD, VST) take addr[8:0] and so wrap
modulo 512. ``total`` caps each partial product of the bounds at 65535 so an
oversized product still exceeds F_LEN's limit of 256.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Iterator

from .isa import ADDR_MASK, FLD_BASE, _fit, pack_dim

PRODUCT_CAP = 0xFFFF
Dim = tuple[int, int]  # (stride, bound)
UNIT_DIM: Dim = (0, 1)


def walk_total(bounds: tuple[int, ...]) -> int:
    """b0*b1*b2*b3 with 0 read as 1 and every partial product capped at 65535 (V.3)."""
    total = 1
    for b in bounds:
        total = min(total * (b or 1), PRODUCT_CAP)
    return total


def _walk(start: int, dims: tuple[Dim, ...]) -> Iterator[int]:
    """The walk's addresses in order, dimension 0 innermost (the four bounds with 0 read as 1), as nested
    counters: an address costs one addition, where a division per dimension per element cost a dozen."""
    (s0, b0), (s1, b1), (s2, b2), (s3, b3) = ((s, b or 1) for s, b in dims)
    for i3 in range(b3):
        a3 = start + i3 * s3
        for i2 in range(b2):
            a2 = a3 + i2 * s2
            for i1 in range(b1):
                a1 = a2 + i1 * s1
                for i0 in range(b0):
                    yield (a1 + i0 * s0) & ADDR_MASK


def walk_addresses(base: int, dims: tuple[Dim, ...], steps: int, off: int = 0) -> list[int]:
    """Addresses of the first `steps` steps of the walk (steps past the last element repeat it)."""
    dims = tuple(dims) + (UNIT_DIM,) * (4 - len(dims))
    total = walk_total(tuple(b for _, b in dims))
    out = list(islice(_walk(base + off, dims), min(steps, total)))
    return out + [out[-1]] * (steps - len(out))


@dataclass(frozen=True)
class Descriptor:
    """A descriptor as a program sets it: base (40 bits) and up to four (stride, bound) dims.

    Unlisted dims are (0, 1). Memory walks count bytes, L1 walks count L1 words.
    """

    base: int = 0
    dims: tuple[Dim, ...] = (UNIT_DIM,)

    def __post_init__(self) -> None:
        _fit("DESC", "base", self.base, 0, ADDR_MASK, "40-bit value {[68:63], [245:212]}")
        if len(self.dims) > 4:
            raise ValueError(f"DESC: {len(self.dims)} dimensions given; a descriptor has 4")
        for stride, bound in self.dims:
            pack_dim(stride, bound)

    @property
    def full_dims(self) -> tuple[Dim, ...]:
        return tuple(self.dims) + (UNIT_DIM,) * (4 - len(self.dims))

    @property
    def total(self) -> int:
        return walk_total(tuple(b for _, b in self.full_dims))

    def addresses(self, steps: int | None = None, off: int = 0) -> list[int]:
        return walk_addresses(self.base, self.full_dims, self.total if steps is None else steps, off)

    def writes(self, fields: tuple[int, ...] = (0, 1, 2, 3, 4)) -> list[tuple[int, int]]:
        """(fld, value) DESC writes for the given fields (0 = base, 1..4 = dimensions 0..3)."""
        out = []
        for fld in fields:
            if fld == FLD_BASE:
                out.append((fld, self.base))
            elif 1 <= fld <= 4:
                out.append((fld, pack_dim(*self.full_dims[fld - 1])))
            else:
                raise ValueError(f"DESC: field {fld} is not 0 (base) or 1..4 (a dimension)")
        return out


def node_record(granule_off: int, ack: tuple[int, int] = (0, 0), fin: tuple[int, int] = (0, 0),
                mesh: int = 0) -> int:
    """The base record of a node-form VDRAIN (V.11): [15:0] granule offset, [23:16] {ack_y, ack_x},
    [25:24] mesh, [33:26] {fin_y, fin_x} (nonzero makes the drain remote)."""
    _fit("VDRAIN record", "granule offset", granule_off, 0, 0xFFFF, "16-bit field [15:0]")
    for name, v in (("ack x", ack[0]), ("ack y", ack[1]), ("fin x", fin[0]), ("fin y", fin[1])):
        _fit("VDRAIN record", name, v, 0, 15, "4-bit coordinate")
    _fit("VDRAIN record", "mesh", mesh, 0, 3, "2-bit field [25:24]")
    return granule_off | (ack[1] << 4 | ack[0]) << 16 | mesh << 24 | (fin[1] << 4 | fin[0]) << 26


__all__ = ["Descriptor", "Dim", "PRODUCT_CAP", "UNIT_DIM", "node_record", "walk_addresses", "walk_total"]
