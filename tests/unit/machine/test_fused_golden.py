"""The golden output of a fused kernel: its composition, its tolerance against float64, its checkers."""

from __future__ import annotations

import numpy as np
import pytest

from models import cluster
from models.machine.fused_golden import (
    MEASURED, TOLERANCES, accumulate, accumulator_error_bound, check_bits, d1_elements, derived_tolerance,
    emit_fp16, end_to_end_failures, exp2_specified, gated_pairs, golden_words, golden_y, measure, random_case,
    reference_acc, reference_epilogue, reference_y, vector_stage_failures, vector_tolerance,
)
from models.numerics import accuracy
from models.numerics import FP16, acc_to_fp16, silu_fp16
from models.numerics.formats import decode
from models.machine.planner import Acc, Const, Op, mul, silu
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


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("epi,n_acc", [(SILU, 1), (GATED, 2)])
@pytest.mark.parametrize("kind", ["integer", "scaled", "mixed"])
def test_golden_within_tolerance_of_float64(seed, epi, n_acc, kind) -> None:
    c = random_case(np.random.default_rng(seed), 64, 64, 64, n_acc, kind=kind)
    kw = {"x_scales": c["x_scales"], "w_scales": c["w_scales"]}
    y = golden_y(c["x"], c["ws"], epi, **kw)
    fp16 = [emit_fp16(accumulate(c["x"], w, x_scales=c["x_scales"], w_scales=s))
            for w, s in zip(c["ws"], c["w_scales"] or [None] * n_acc)]
    assert vector_stage_failures(y, epi, fp16) == []
    assert end_to_end_failures(y, c["x"], c["ws"], epi, **kw) == []


def test_measured_numbers_and_tolerances() -> None:
    got = measure(seed=1)
    for name, row in MEASURED.items():
        for key, value in row.items():
            assert got[name][key] == pytest.approx(value, abs=1e-3), (name, key)
        assert got[name]["vector_max_ulp"] <= TOLERANCES[name]
        assert got[name]["vector_max_ulp_d1"] <= TOLERANCES["d1"]
        assert got[name]["d1_elements"] > 0  # the integer data set reaches D1's range: the split is exercised
        assert got[name]["bound_ratio"] < 1.0
    assert TOLERANCES == {"linear+silu": 0.75, "gated mlp": 1.65, "d1": 5.25}
    assert vector_tolerance(SILU) == 0.75 and vector_tolerance(GATED) == 1.65
    assert vector_tolerance(mul(silu(Acc(1)), Acc(0))) == 1.65
    with pytest.raises(ValueError, match="no stated tolerance"):
        vector_tolerance(Op("exp2", (Acc(0),)))


def test_stated_tolerances_cover_their_derivations() -> None:
    """The gated and D1 tolerances are at least the a priori bounds the docstring derives, from the measured
    maxima of VEXP2 and VINV over every FP16 input; linear+SiLU's is the exhaustive measurement itself."""
    m = accuracy.measure()
    ops = {"VEXP2": m["VEXP2"]["max"], "VINV": m["VINV"]["max"]}
    assert 1.55 < derived_tolerance("gated mlp", ops) <= TOLERANCES["gated mlp"]
    assert 5.0 < derived_tolerance("d1", ops) <= TOLERANCES["d1"]
    assert m["SiLU no D1"]["max"] <= TOLERANCES["linear+silu"]
    with pytest.raises(ValueError, match="no derived tolerance for 'linear\\+silu'"):
        derived_tolerance("linear+silu", ops)


def test_the_reference_takes_vexp2_as_specified_d1_included() -> None:
    assert exp2_specified(np.array([200.0, -200.0, 255.0, 127.5, 256.0])).tolist() == \
        [2.0 ** -56, 2.0 ** 56, 0.5, 2.0 ** 127.5, 2.0 ** 256]
    x = np.array([100.0, -100.0, 10.0])  # silu(100) ~ 0 and silu(-100) ~ -100 under D1
    spec, plain = reference_epilogue(SILU, [x]), reference_epilogue(SILU, [x], d1=False)
    assert spec[0] < 1e-30 and spec[1] == pytest.approx(-100.0) and spec[2] == plain[2]
    assert plain[0] == pytest.approx(100.0) and abs(plain[1]) < 1e-30
    assert d1_elements(SILU, [x]) == 2 and d1_elements(GATED, [x, np.zeros(3)]) == 0


def test_gated_vector_stage_over_random_fp16_pairs() -> None:
    """The gated budgets hold over random finite FP16 (up, gate) pairs, outside and inside D1's range."""
    got = gated_pairs(seed=7, n=200_000)
    assert got["max_ulp"] <= TOLERANCES["gated mlp"]
    assert got["d1_pairs"] > 0 and got["max_ulp_d1"] <= TOLERANCES["d1"]


def test_checkers_catch_a_wrong_value() -> None:
    c = random_case(np.random.default_rng(1), 32, 32, 64, 2, kind="scaled")
    kw = {"x_scales": c["x_scales"], "w_scales": c["w_scales"]}
    y = golden_y(c["x"], c["ws"], GATED, **kw)
    fp16 = [emit_fp16(accumulate(c["x"], w, x_scales=c["x_scales"], w_scales=s))
            for w, s in zip(c["ws"], c["w_scales"])]
    assert check_bits(y, y.copy()) == []
    bad = y.copy()
    i = int(np.argmax(np.abs(decode(bad.astype(np.int64), FP16))))  # a large, normal element
    bad.flat[i] += 4  # four FP16 ulps off: beyond the 1.65-ulp vector-stage tolerance
    assert len(check_bits(y, bad)) == 1
    assert len(vector_stage_failures(bad, GATED, fp16)) == 1
    worse = y.copy()
    worse.flat[i] ^= 0x0400  # the exponent's low bit: a factor of two
    assert len(end_to_end_failures(worse, c["x"], c["ws"], GATED, **kw)) == 1
    assert len(check_bits(pack_tiled(y, 4, 8), pack_tiled(worse, 4, 8))) == 1


def test_error_bound_covers_the_emitted_accumulator() -> None:
    c = random_case(np.random.default_rng(6), 32, 32, 128, kind="mixed")
    exact, bound = accumulator_error_bound(c["x"], c["ws"][0], x_scales=c["x_scales"], w_scales=c["w_scales"][0])
    assert np.array_equal(exact, reference_acc(c["x"], c["ws"][0], x_scales=c["x_scales"],
                                               w_scales=c["w_scales"][0]))
    emitted = decode(np.asarray(emit_fp16(accumulate(c["x"], c["ws"][0], x_scales=c["x_scales"],
                                                     w_scales=c["w_scales"][0])), np.int64), FP16)
    assert np.all(np.abs(emitted - exact) <= bound)


def test_constants_and_float64_reference() -> None:
    rng = np.random.default_rng(8)
    x, w = rng.integers(-8, 8, size=(4, 32)), rng.integers(-8, 8, size=(4, 32))
    epi = Op("add", (Op("mul", (Acc(0), Const(0.5))), Const(3.0)))
    y = golden_y(x, [w], epi)
    ref = reference_y(x, [w], epi)
    assert np.array_equal(decode(y.astype(np.int64), FP16), ref)  # halves of small integers plus 3: exact


def test_determinism() -> None:
    a = random_case(np.random.default_rng(3), 32, 32, 64, 2, kind="mixed")
    b = random_case(np.random.default_rng(3), 32, 32, 64, 2, kind="mixed")
    ya = golden_y(a["x"], a["ws"], GATED, x_scales=a["x_scales"], w_scales=a["w_scales"])
    yb = golden_y(b["x"], b["ws"], GATED, x_scales=b["x_scales"], w_scales=b["w_scales"])
    assert np.array_equal(ya, yb) and ya.dtype == np.uint16
    assert measure(seed=2) == measure(seed=2)
