"""models.vector.walk.walk_addresses (nested counters) against units.md V.3's formula, element by element.

Why: every VLD, VST, VFILL and VDRAIN address comes from the walk; this holds it to
``addr_n = (base + off + i0*st0 + i1*st1 + i2*st2 + i3*st3) mod 2^40`` with n's digits i_k in the bounds
(0 read as 1), the 65535 cap on the element count, short descriptors, negative strides, wrap at 2^40, and
steps past the end repeating the last address.
"""

from __future__ import annotations

import random

from models.vector.isa import ADDR_MASK
from models.vector.walk import walk_addresses, walk_total


def _formula(base: int, dims: list[tuple[int, int]], steps: int, off: int) -> list[int]:
    dims = dims + [(0, 1)] * (4 - len(dims))
    total = walk_total(tuple(b for _, b in dims))
    out = []
    for n in range(steps):
        m, addr = min(n, total - 1), base + off
        for stride, bound in dims:
            addr += (m % (bound or 1)) * stride
            m //= bound or 1
        out.append(addr & ADDR_MASK)
    return out


def test_walk_addresses_follow_the_formula() -> None:
    rng = random.Random(31)
    for _ in range(600):
        ndims = rng.randrange(0, 5)
        dims = [(rng.randrange(-(1 << 17), 1 << 17), rng.choice([0, 1, 2, 3, 5, 8, rng.randrange(0, 40)]))
                for _ in range(ndims)]
        base = rng.choice([0, rng.getrandbits(40), ADDR_MASK - 3])
        off = rng.randrange(0, 600)
        total = walk_total(tuple(b for _, b in dims + [(0, 1)] * (4 - ndims)))
        steps = rng.randrange(1, min(total, 300) + 20)
        assert walk_addresses(base, tuple(dims), steps, off) == _formula(base, dims, steps, off), (dims, steps)
    big = [(3, 300), (5, 300), (7, 2), (1, 2)]  # the product past 65535: capped, the walk still counts in order
    assert walk_addresses(11, tuple(big), 70_000) == _formula(11, big, 70_000, 0)
