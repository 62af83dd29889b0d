"""The float64 error bound of the compiled kernels (models/client_bound.py): it holds, it bites, it is derived.

* holds: upstream's RTL output of every bundle (the bit-exact reference) lies
  within it, and so do upstream's Python models';
* bites: the predicate-hazard result of select_lt (542 lanes) and a lane moved
  just past its bound fail by name; a lane moved to just inside passes; an
  unknown kernel is named, not passed;
* derived: the MXFP7 step of M.3 is checked against the quantiser itself
  (models/numerics/mxfp7.py) on random lanes spanning FP16's range,
  subnormals and single large peaks included: every element's error is
  within mxfp7_delta, and the bound is within 2x of the worst error seen.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.bundle import Bundle, bundle_names
from models.client_bound import KERNELS, SAFETY, bound_check, bound_failures, mxfp7_delta, output_values
from models.client_judge import HAZARD_BUNDLES
from models.numerics import mxfp7


def _reference_image(b: Bundle) -> np.ndarray:
    return (b.expected_models if b.name in HAZARD_BUNDLES else b.expected_rtl)["dram_final"]


@pytest.mark.parametrize("name", bundle_names())
def test_reference_outputs_lie_within_the_bound(name: str) -> None:
    b = Bundle(name)
    assert b.meta["kernel"]["reference"] in KERNELS
    for image in (_reference_image(b), b.expected_models["dram_final"]):
        results, why = bound_check(b, image)
        assert why is None and results
        for r in results:
            assert len(r.outside) == 0 and r.worst <= 1.0 and r.lanes > 0


def test_the_hazard_result_is_outside() -> None:
    b = Bundle("select_lt_m32n64")
    assert bound_failures(b, b.expected_rtl["dram_final"]) == [
        "output y: 542 of 2048 lane(s) outside the float64 error bound (first at flat index [0, 3, 5, 9, 12]; "
        "worst |y-ref|/bound inf)"]


def _move_lane(b: Bundle, image: np.ndarray, flat: int, value: float) -> np.ndarray:
    port = next(iter(b.outputs))
    reg = b.outputs[port]
    img = image.copy()
    lanes = img[reg.addr - b.image_base:reg.addr - b.image_base + reg.nbytes].view(np.uint16)
    slot = b.expected_models[f"{port}__slots"].reshape(-1)[flat]
    lanes[slot] = np.float16(value).view(np.uint16)
    return img


@pytest.mark.parametrize("name", ["matmul_m32k64n32", "softmax_m32n64", "mlp_silu_m32k64f64n32"])
def test_a_lane_just_past_its_bound_fails_and_just_inside_passes(name: str) -> None:
    b = Bundle(name)
    port = next(iter(b.outputs))
    ref = b.expected_models[f"{port}__ref"].reshape(-1)
    inputs = {k: b.dram_in[k].astype(np.float64) for k in b.meta["inputs"]}
    tol = SAFETY * np.broadcast_to(KERNELS[b.meta["kernel"]["reference"]](inputs)[1], b.expected_models[
        f"{port}__ref"].shape).reshape(-1)
    flat = 17
    hi = np.float16(ref[flat] + tol[flat])
    while float(hi) <= ref[flat] + tol[flat]:  # the first FP16 value past the bound
        hi = np.nextafter(hi, np.float16(np.inf))
    inside = np.nextafter(hi, np.float16(-np.inf))
    base = _reference_image(b)
    fails = bound_failures(b, _move_lane(b, base, flat, float(hi)))
    assert len(fails) == 1 and f"1 of {ref.size} lane(s) outside" in fails[0] and "[17]" in fails[0]
    assert bound_failures(b, _move_lane(b, base, flat, float(inside))) == []
    y, _ = output_values(b, base, port)
    assert y.reshape(-1)[flat] != float(hi)


def test_an_unknown_kernel_is_named_not_passed() -> None:
    b = Bundle("matmul_m32k64n32")
    b.meta["kernel"]["reference"] = "conv2d"
    results, why = bound_check(b, b.expected_rtl["dram_final"])
    assert results == [] and "no float64 bound derived for kernel 'conv2d'" in why


def _random_lanes(rng: np.random.Generator, n: int) -> np.ndarray:
    """FP16 patterns (n, 4, 32): per lane a random binade span, subnormals, zeros and a lone large peak."""
    exp = rng.integers(-24, 16, size=(n, 4, 1)).astype(np.float64)
    spread = rng.integers(0, 12, size=(n, 4, 1))
    mags = 2.0 ** (exp - rng.uniform(0, 1, (n, 4, 32)) * spread)
    vals = mags * rng.choice([-1.0, 1.0], size=(n, 4, 32))
    vals[rng.random((n, 4, 32)) < 0.05] = 0.0
    lone = rng.random(n) < 0.2
    vals[lone, 0, 3] *= 64.0
    return np.clip(vals, -65504, 65504).astype(np.float16).view(np.uint16)


def test_mxfp7_step_bounds_the_quantiser() -> None:
    rng = np.random.default_rng(7)
    h = _random_lanes(rng, 20_000)
    q, scale = mxfp7.quantise(h)
    sexp, sm = mxfp7.scale_fields(scale)
    step = (2.0 ** sexp * sm / 8.0)[..., None]
    v = h.view(np.float16).astype(np.float64)
    err = np.abs(q.astype(np.float64) * step - v)
    delta = mxfp7_delta(np.abs(v).reshape(-1, 32)).reshape(v.shape)
    assert np.all(err <= delta), f"worst error/delta {np.max(err / delta):.3f}"
    assert np.max(err / delta) > 0.5  # the bound is not vacuous: within 2x of the worst error seen
