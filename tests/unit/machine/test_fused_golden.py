"""The golden output of a fused kernel, bit for bit: its composition from the numerics and its bit checker.

Its float64 references and tolerances are tested in tests/unit/machine/test_fused_bounds.py.
"""

from __future__ import annotations

import numpy as np

from models import cluster
from models.machine.fused_golden import accumulate, check_bits, golden_words, golden_y, random_case
from models.numerics import FP16, acc_to_fp16, silu_fp16
from models.numerics.formats import decode
from models.machine.planner import Acc, mul, silu
from models.programs import pack_tiled

SILU = silu(Acc(0))
GATED = mul(Acc(0), silu(Acc(1)))


def test_accumulate_is_the_cluster_sweep() -> None:
    """The golden GEMM equals the cluster model's sweep over packed L1 entries, bit for bit."""
    rng = np.random.default_rng(11)
    c = random_case(rng, 8, 12, 96, kind="mixed")  # gm=2, gn=3, nk=3
    x, w = c["x"], c["ws"][0]
    cm = cluster.ClusterModel()
    for side, entries in ((cluster.Buf.L1A, cluster.a_entries(x, c["x_scales"])),
                          (cluster.Buf.L1B, cluster.b_entries(w.T, c["w_scales"][0].T))):
        for i, g in enumerate(cluster.granules_of(entries)):
            cm.l1[side][i] = g
    cm.run_gemm(cluster.decode_inst(cluster.gemm(2, 3, 3, anchor=38)))
    got = accumulate(x, w, x_scales=c["x_scales"], w_scales=c["w_scales"][0], anchor=38)
    tiles = got.reshape(2, 4, 3, 4).transpose(0, 2, 1, 3).reshape(6, 4, 4)
    assert np.array_equal(tiles, cm.acc[:6])


def test_golden_composes_emit_load_silu_store() -> None:
    """With exact integer accumulators the golden is numerics' own silu_fp16 of the emitted FP16."""
    rng = np.random.default_rng(2)
    x, w = rng.integers(-3, 4, size=(8, 32)), rng.integers(-3, 4, size=(8, 32))
    acc = x @ w.T
    h = np.asarray(acc_to_fp16(accumulate(x, w)), dtype=np.int64)
    assert np.array_equal(decode(h, FP16), acc)  # small integers: exact all the way to FP16
    assert np.array_equal(golden_y(x, [w], SILU), silu_fp16(h))


def test_golden_words_are_the_tiled_image() -> None:
    rng = np.random.default_rng(4)
    c = random_case(rng, 32, 32, 64, kind="scaled")
    y = golden_y(c["x"], c["ws"], SILU, x_scales=c["x_scales"], w_scales=c["w_scales"])
    assert golden_words(c["x"], c["ws"], SILU, 4, 8, x_scales=c["x_scales"], w_scales=c["w_scales"]) == \
        pack_tiled(y, 4, 8)


def test_check_bits_catches_a_wrong_value() -> None:
    """One changed element is one mismatch, in the (M, N) output and in its tiled DRAM words alike."""
    c = random_case(np.random.default_rng(1), 32, 32, 64, 2, kind="scaled")
    y = golden_y(c["x"], c["ws"], GATED, x_scales=c["x_scales"], w_scales=c["w_scales"])
    assert check_bits(y, y.copy()) == []
    bad = y.copy()
    i = int(np.argmax(np.abs(decode(bad.astype(np.int64), FP16))))  # a large, normal element
    bad.flat[i] += 4
    assert len(check_bits(y, bad)) == 1
    worse = y.copy()
    worse.flat[i] ^= 0x0400  # the exponent's low bit: a factor of two
    assert len(check_bits(pack_tiled(y, 4, 8), pack_tiled(worse, 4, 8))) == 1


def test_determinism() -> None:
    a = random_case(np.random.default_rng(3), 32, 32, 64, 2, kind="mixed")
    b = random_case(np.random.default_rng(3), 32, 32, 64, 2, kind="mixed")
    ya = golden_y(a["x"], a["ws"], GATED, x_scales=a["x_scales"], w_scales=a["w_scales"])
    yb = golden_y(b["x"], b["ws"], GATED, x_scales=b["x_scales"], w_scales=b["w_scales"])
    assert np.array_equal(ya, yb) and ya.dtype == np.uint16
