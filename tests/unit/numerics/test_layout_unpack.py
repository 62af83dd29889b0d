"""models.numerics.layout's entry unpacking against the documented bit positions, read with Python int shifts.

Why: the GEMM unpacks every L1 entry it reads through ``_granules_to_fields`` (bytes, fields7); this holds
it to the layout module's own table (field n of granule w at [255-7n -: 7], scale i of granule 0 at
[31-8i -: 8]) on arbitrary 256-bit granules (the unused low bits of granules 1..3 set too), in batches.
"""

from __future__ import annotations

import random

import numpy as np

from models.numerics import layout


def _field(word: int, msb: int, width: int) -> int:
    return (word >> (msb - width + 1)) & ((1 << width) - 1)


def _signed7(v: int) -> int:
    return v - 128 if v >= 64 else v


def test_unpack_reads_every_field_and_scale_at_its_documented_bits() -> None:
    rng = random.Random(5)
    granules = np.array([[rng.getrandbits(256) for _ in range(4)] for _ in range(24)], dtype=object).reshape(2, 3, 4, 4)
    f, s = layout._granules_to_fields(granules)
    assert f.dtype == np.int8 and s.dtype == np.uint8 and f.shape == (2, 3, 4, 4, 32) and s.shape == (2, 3, 4, 4)
    for idx in np.ndindex(2, 3, 4):
        g = [int(v) for v in granules[idx]]
        assert f[idx].tolist() == [[_signed7(_field(g[w], 255 - 7 * n, 7)) for n in range(32)] for w in range(4)]
        assert s[idx].tolist() == [_field(g[0], 31 - 8 * i, 8) for i in range(4)]
    a, sa = layout.unpack_a_entry(granules)
    b, sb = layout.unpack_b_entry(granules)
    assert a.shape == (2, 3, 4, 4, 32) and b.shape == (2, 3, 4, 32, 4)
    assert np.array_equal(sa, s) and np.array_equal(sb, s)
    sa[...] = 0  # the caller owns what it is handed
    assert a[0, 0, 0, 1, 8 * 2 + 3] == _signed7(_field(int(granules[0, 0, 0, 2]), 255 - 7 * (8 * 1 + 3), 7))
    assert b[1, 2, 3, 8 * 1 + 5, 2] == _signed7(_field(int(granules[1, 2, 3, 1]), 255 - 7 * (4 * 5 + 2), 7))
