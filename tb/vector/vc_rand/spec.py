"""What the generator and the checks re-derive from units.md instead of taking it from the model's code.

Walks (V.3): ``raw_walk`` and ``walk_product``, and for a descriptor's memory
walk ``mem_walk`` / ``walk_in``; which operands an ALU opcode reads (V.6.2):
``reads``. The tracer's checks use these, so a walk bug in the model cannot
hide a violation there.
"""

from __future__ import annotations

from typing import Callable, Iterable

from models.vector.isa import A_B_C_OPS, A_B_OPS, A_C_OPS, UNARY_OPS
from models.vector import MAX_WALK, Descriptor

ADDR_MOD = 1 << 40


def walk_product(bounds: Iterable[int]) -> int:
    """The uncapped product of the bounds (0 read as 1): F_LEN's 65535 cap is visible against it."""
    total = 1
    for b in bounds:
        total *= b or 1
    return total


def raw_walk(base: int, dims, steps: int, off: int = 0) -> list[int]:
    """The first `steps` addresses of a walk as unreduced integers (no mod 2^40, no mod 512).

    units.md V.3: dimension 0 fastest, bound 0 reads as 1, steps past the last
    element repeat it. Callers reduce mod 2^40 (memory) or mod 512 (L1).
    """
    bounds = [b or 1 for _, b in dims]
    total = min(walk_product(bounds), 0xFFFF)
    out: list[int] = []
    for n in range(min(steps, total)):
        rest, addr = n, base + off
        for (stride, _), b in zip(dims, bounds):
            addr += (rest % b) * stride
            rest //= b
        out.append(addr)
    return out + out[-1:] * (steps - len(out))


def reads(op: int) -> tuple[bool, bool, bool]:
    """Which of the operands a, b, c an ALU opcode reads (V.6.2), so 'unread' selectors can be told apart."""
    if op in UNARY_OPS:
        return True, False, False
    if op in A_C_OPS:
        return True, False, True
    if op in A_B_OPS:
        return True, True, False
    assert op in A_B_C_OPS
    return True, True, True


def full(d: Descriptor) -> Descriptor:
    """`d` with all four dimensions listed, so descriptors compare as the core holds them."""
    return d if len(d.dims) == 4 else Descriptor(d.base, d.full_dims)


def mem_walk(d: Descriptor) -> list[int]:
    """Byte addresses (mod 2^40) of a VFILL/VDRAIN walk of `d` (empty when F_LEN would fire)."""
    total = d.total
    return [] if total > MAX_WALK else [a % ADDR_MOD for a in raw_walk(d.base, d.full_dims, total)]


def walk_in(d: Descriptor, inside: Callable[[int], bool], lo: int = 1, hi: int = MAX_WALK) -> bool:
    """Whether `d` is a memory walk of lo..hi elements, every byte address 32-byte aligned and inside a window
    (how a memory agent maps an unaligned address is not the vector core's business)."""
    return lo <= d.total <= hi and all(a % 32 == 0 and inside(a) for a in mem_walk(d))
