"""The fused kernel's golden output against float64: the references, the stated tolerances and their
derivations, the float64 checkers, the a priori bounds, and the measured numbers.

The golden chain itself is tested in tests/unit/machine/test_fused_golden.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.machine.fused_bounds import (
    MEASURED, TOLERANCES, accumulator_error_bound, d1_elements, derived_tolerance, end_to_end_failures,
    exp2_specified, gated_pairs, measure, reference_acc, reference_epilogue, reference_y, vector_stage_failures,
    vector_tolerance,
)
from models.machine.fused_golden import accumulate, emit_fp16, golden_y, random_case
from models.numerics import accuracy
from models.numerics import FP16
from models.numerics.formats import decode
from models.machine.planner import Acc, Const, Op, mul, silu

SILU = silu(Acc(0))
GATED = mul(Acc(0), silu(Acc(1)))


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


def test_float64_checkers_catch_a_wrong_value() -> None:
    c = random_case(np.random.default_rng(1), 32, 32, 64, 2, kind="scaled")
    kw = {"x_scales": c["x_scales"], "w_scales": c["w_scales"]}
    y = golden_y(c["x"], c["ws"], GATED, **kw)
    fp16 = [emit_fp16(accumulate(c["x"], w, x_scales=c["x_scales"], w_scales=s))
            for w, s in zip(c["ws"], c["w_scales"])]
    bad = y.copy()
    i = int(np.argmax(np.abs(decode(bad.astype(np.int64), FP16))))  # a large, normal element
    bad.flat[i] += 4  # four FP16 ulps off: beyond the 1.65-ulp vector-stage tolerance
    assert len(vector_stage_failures(bad, GATED, fp16)) == 1
    worse = y.copy()
    worse.flat[i] ^= 0x0400  # the exponent's low bit: a factor of two
    assert len(end_to_end_failures(worse, c["x"], c["ws"], GATED, **kw)) == 1


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


def test_measure_is_deterministic() -> None:
    assert measure(seed=2) == measure(seed=2)
