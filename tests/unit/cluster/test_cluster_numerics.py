"""The cluster's accumulator numerics (models/numerics/cluster.py) against units.md C.7, bit for bit.

Two references, both in tests/unit/cluster/cluster_ref.py, written from the spec text and neither calling the
model: a **literal** one (C.7.3, C.7.4 and C.7.5 line by line on Python integers) and a **semantic**
one (the exact rational value correctly rounded, plus only the departures C.7.6 names and C.7.5's flush
and saturation; every vector where the literal reference departs from correct rounding must be one of
those, by name).

The model must equal the literal reference on every vector (>= 10^4 per operation, with cancellation,
underflow, A2 midpoints, A3, A1 wraps and saturation each hit and counted); each checker is shown to
fail on a planted error, and each quirk's vectors are shown to catch a model that leaves the quirk out.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from models.numerics import cluster
from models.numerics.layout import pack_a_entry, pack_b_entry
from tests.unit.cluster.cluster_ref import (
    ADD, CONVERT, EMIT, RNG, acc_patterns, exact_add, exact_convert, exact_emit, ref_add, ref_convert, ref_emit,
)


def mismatches(got, want, inputs, what: str) -> list[str]:
    """Every vector where ``got`` differs from ``want``, naming the vector and its inputs."""
    return [f"{what} vector {i} {inputs[i]}: expected {w:#x}, got {int(g):#x}"
            for i, (g, w) in enumerate(zip(got, want)) if int(g) != w]


# ---------------------------------------------------------------- the model equals the literal reference
def test_convert_equals_c73():
    d, sa, sb, anchor = (np.array(c) for c in zip(*CONVERT))
    got = cluster.acc_convert(d, sa, sb, anchor)
    assert len(CONVERT) >= 10_000
    assert mismatches(got, [ref_convert(*v) for v in CONVERT], CONVERT, "convert") == []


def test_add_equals_c74():
    t, x = (np.array(c) for c in zip(*ADD))
    assert len(ADD) >= 10_000
    assert mismatches(cluster.acc_add(t, x), [ref_add(*v) for v in ADD], ADD, "add") == []


def test_load_passes_binade_127_and_zeroes_a_wrapped_block():
    x = np.array([127 << 14 | 0x1234, 1 << 21 | 127 << 14, 0x3ABC, 1 << 21 | 0x0001, 0, 5 << 14 | 7])
    want = [127 << 14 | 0x1234, 1 << 21 | 127 << 14, 0, 0, 0, 5 << 14 | 7]  # LOAD = ADD(0, X)
    assert [int(v) for v in cluster.acc_load(x)] == want == [ref_add(0, int(v)) for v in x]
    # whereas an ADD that reaches binade 127 is replaced by the maximum magnitude (A3)
    assert ref_add(126 << 14 | 0x3FFF, 126 << 14 | 0x3FFF) == 127 << 14 | 0x3FFF == \
        int(cluster.acc_add(126 << 14 | 0x3FFF, 126 << 14 | 0x3FFF))


def test_emit_equals_c75():
    x = np.array(EMIT)
    assert len(EMIT) >= 10_000
    assert mismatches(cluster.acc_emit(x), [ref_emit(v) for v in EMIT], EMIT, "emit") == []


def test_gemm_issue_equals_the_spec_from_l1_bits():
    """C.4 field positions read from the granules by hand, C.7.2's exact dot, C.7.3, then LOAD or ADD."""
    n = 1000
    a = RNG.integers(-64, 64, (n, 4, 32))
    b = RNG.integers(-64, 64, (n, 32, 4))
    sa = RNG.integers(0, 256, (n, 4))
    sb = RNG.integers(0, 256, (n, 4))
    anchor = np.clip(RNG.normal(40, 20, n).astype(np.int64), 0, 255)
    acc = acc_patterns(16 * n).reshape(n, 4, 4)
    accumulate = RNG.integers(0, 2, n)
    ga, gb = pack_a_entry(a, sa), pack_b_entry(b, sb)
    for t in range(n):
        got = cluster.gemm_entry(ga[t], gb[t], int(anchor[t]), acc[t], bool(accumulate[t]))
        words_a, words_b = [int(w) for w in ga[t]], [int(w) for w in gb[t]]
        qa = {}
        qb = {}
        for w in range(4):
            for j in range(32):
                fa = _int7(words_a[w] >> (249 - 7 * j) & 0x7F)
                fb = _int7(words_b[w] >> (249 - 7 * j) & 0x7F)
                qa[(j // 8, 8 * w + j % 8)] = fa  # A packing: (lane j div 8, K = 8w + j mod 8)
                qb[(8 * w + j // 4, j % 4)] = fb  # B packing: (K = 8w + j div 4, lane j mod 4)
        for i in range(4):
            for j in range(4):
                dot = sum(qa[(i, k)] * qb[(k, j)] for k in range(32))
                x = ref_convert(dot, words_a[0] >> (24 - 8 * i) & 0xFF, words_b[0] >> (24 - 8 * j) & 0xFF,
                                int(anchor[t]))
                want = ref_add(int(acc[t, i, j]), x) if accumulate[t] else ref_add(0, x)
                assert int(got[i, j]) == want, (t, i, j)


def _int7(v: int) -> int:
    return v - 128 if v >= 64 else v


# ---------------------------------------------------------------- the literal reference is the spec's meaning
def test_convert_is_correct_rounding_except_a1():
    cats = Counter()
    for v in CONVERT:
        want, cat = exact_convert(*v)
        assert ref_convert(*v) == want, v
        cats[cat] += 1
    assert cats["A1"] >= 500 and cats["zero"] >= 100, cats


def test_add_is_correct_rounding_except_the_named_quirks():
    cats = Counter()
    for v in ADD:
        want, cat = exact_add(*v)
        assert ref_add(*v) == want, (v, cat)
        cats[cat] += 1
    for cat, least in (("cancellation", 1000), ("underflow", 200), ("A2", 1000), ("A3", 300),
                       ("zero operand", 300)):
        assert cats[cat] >= least, (cat, cats)


def test_emit_is_correct_rounding_with_flush_and_saturation():
    cats = Counter()
    for v in EMIT:
        want, cat = exact_emit(v)
        assert ref_emit(v) == want, v
        cats[cat] += 1
    assert cats["flush"] >= 1000 and cats["saturate"] >= 1000 and cats["exact"] >= 5000, cats
    assert ref_emit(78 << 14 | 0x3FF0) == 0x7BFF and ref_emit(78 << 14 | 0x3FF8) == 0x7BFF  # 65520: saturates


# ---------------------------------------------------------------- the checks catch errors
def test_a_planted_error_is_caught():
    t, x = (np.array(c) for c in zip(*ADD))
    want = [ref_add(*v) for v in ADD]
    got = [int(g) for g in cluster.acc_add(t, x)]
    assert mismatches(got, want, ADD, "add") == []
    got[1234] ^= 1 << 3
    msgs = mismatches(got, want, ADD, "add")
    assert len(msgs) == 1 and "vector 1234" in msgs[0]
    emit = [int(h) for h in cluster.acc_emit(np.array(EMIT))]
    emit[77] ^= 1 << 15
    msgs = mismatches(emit, [ref_emit(v) for v in EMIT], EMIT, "emit")
    assert len(msgs) == 1 and "vector 77" in msgs[0]


@pytest.mark.parametrize("mutant, vectors, fn, category", [
    ("A1 clamped", CONVERT, lambda v: ref_convert(*v, a1=False), "convert"),
    ("A2 dropped", ADD, lambda v: ref_add(*v, a2=False), "add"),
    ("A3 dropped", ADD, lambda v: ref_add(*v, a3=False), "add"),
    ("no saturation", EMIT, lambda v: ref_emit(v, saturate=False), "emit"),
])
def test_each_quirk_is_exercised(mutant, vectors, fn, category):
    """A model that leaves a quirk out disagrees with the literal reference on many vectors."""
    lit = {"convert": lambda v: ref_convert(*v), "add": lambda v: ref_add(*v), "emit": ref_emit}[category]
    exact = {"convert": lambda v: exact_convert(*v)[0], "add": lambda v: exact_add(*v)[0],
             "emit": lambda v: exact_emit(v)[0]}[category]
    wrong = sum(fn(v) != lit(v) for v in vectors)
    assert wrong >= 100, f"{mutant}: only {wrong} vectors tell it apart from the literal reference"
    wrong = sum(fn(v) != exact(v) for v in vectors)
    assert wrong >= 100, f"{mutant}: only {wrong} vectors tell it apart from the semantic reference"


def test_load_is_add_to_zero_on_every_kind_of_pattern():
    """acc_load is written out (X, or +0 for e = 0); it must stay ADD(0, X) bit for bit, bits above 21 ignored."""
    rng = np.random.default_rng(17)
    e = rng.choice([0, 1, 2, 63, 125, 126, 127], 50_000)
    x = rng.integers(0, 2, 50_000) << 21 | e << 14 | rng.integers(0, 1 << 14, 50_000)
    x = np.concatenate([x, rng.integers(0, 1 << 30, 50_000), x.reshape(100, 500)[:4].reshape(-1) | 1 << 22])
    got = cluster.acc_load(x)
    assert got.dtype == np.uint32 and got.tolist() == cluster.acc_add(np.zeros_like(x), x).tolist()
    assert cluster.acc_load(np.int64(5 << 14 | 7)).shape == ()


def test_emit_granules_equal_emit_granule_per_tile():
    """A GEMM's tiles are emitted in one call (emit_granules); each granule must be emit_granule's."""
    rng = np.random.default_rng(23)
    tiles = rng.integers(0, 1 << 22, (37, 4, 4)).astype(np.uint32)
    tiles[::5] = rng.choice([0, 127 << 14 | 0x3FFF, 1 << 21 | 48 << 14, 1 << 21], (8, 4, 4))
    assert cluster.emit_granules(tiles) == [cluster.emit_granule(t) for t in tiles]
    assert cluster.emit_granules(tiles[:0]) == []
