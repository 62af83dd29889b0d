"""The float64 error bound derived from each bundle's own run (models/bundle/bound, judged by models/bundle/lane_bound.py).

* holds: upstream's RTL output of every bundle (the bit-exact reference) and
  upstream's Python models' output lie within it;
* bites: the predicate-hazard result of select_lt (542 lanes) fails; on
  seven kernels of different kinds a lane moved one FP16 step past its bound
  fails by name, and moved to just inside passes;
* means something: each bundle's largest derived bound is never more than 4x
  the per-kernel bound derived by hand (tests/unit/bundle/hand_bounds.py), the
  median over the bundles of worst error/bound is at least 0.05 and no bundle
  with a nonzero error is below 0.005;
* refuses: a word the analysis has no rule for is named, and the run fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from models.bundle.bound import lanes as bound_lanes
from models.bundle.bound.rules import BoundError
from models.bundle.bound.vector import BoundVectorCore
from models.bundle.reader import Bundle, bundle_names
from models.bundle.lane_bound import bound_check, bound_failures, derived_bound, output_values
from models.bundle.judge import reference
from models.vector.isa import RedKind, Word, encode_vred

from tests.unit.bundle.hand_bounds import comparison_rows

BITE_KERNELS = ["matmul_m32k64n32", "linear_silu_fused_m32k64n32", "softmax_m32n64", "rmsnorm_m32n64",
                "group_norm_g8n128", "flash_attention_l64d64", "ops_log2_m32n64"]


def _reference_image(b: Bundle) -> np.ndarray:
    return (b.expected_models if reference(b) == "models" else b.expected_rtl)["dram_final"]


@pytest.mark.parametrize("name", bundle_names())
def test_reference_outputs_lie_within_the_bound(name: str) -> None:
    b = Bundle(name)
    for image in (_reference_image(b), b.expected_models["dram_final"]):
        results, why = bound_check(b, image)
        assert why is None and results
        for r in results:
            assert len(r.outside) == 0 and r.worst <= 1.0 and r.lanes > 0 and r.note == ""


def test_the_hazard_result_is_outside() -> None:
    b = Bundle("select_lt_m32n64")
    assert bound_failures(b, b.expected_rtl["dram_final"]) == [
        "output y: 542 of 2048 lane(s) outside the float64 error bound (first at flat index [0, 3, 5, 9, 12]; "
        "worst |y-ref|/bound inf)"]


def _move_lane(b: Bundle, image: np.ndarray, port: str, flat: int, value: np.float16) -> np.ndarray:
    reg = b.outputs[port]
    img = image.copy()
    lanes = img[reg.addr - b.image_base:reg.addr - b.image_base + reg.nbytes].view(np.uint16)
    lanes[b.expected_models[f"{port}__slots"].reshape(-1)[flat]] = value.view(np.uint16)
    return img


@pytest.mark.parametrize("name", BITE_KERNELS)
def test_a_lane_one_step_past_its_bound_fails_and_just_inside_passes(name: str) -> None:
    b = Bundle(name)
    port = next(iter(b.outputs))
    ref = b.expected_models[f"{port}__ref"].reshape(-1)
    bound = derived_bound(b).bounds[port].reshape(-1)
    flat = 17
    hi = np.float16(ref[flat] + bound[flat])
    while float(hi) <= ref[flat] + bound[flat]:  # the first FP16 value past the bound
        hi = np.nextafter(hi, np.float16(np.inf))
    inside = np.nextafter(hi, np.float16(-np.inf))
    base = _reference_image(b)
    fails = bound_failures(b, _move_lane(b, base, port, flat, hi))
    assert len(fails) == 1 and f"1 of {ref.size} lane(s) outside" in fails[0] and "[17]" in fails[0]
    assert bound_failures(b, _move_lane(b, base, port, flat, inside)) == []
    y, _ = output_values(b, base, port)
    assert y.reshape(-1)[flat] != float(hi)


def test_the_derived_bound_is_never_looser_than_4x_the_hand_derived_one_and_bites() -> None:
    """The hand-derived bounds are worst cases term by term; the derived one measures each K block's own
    error (docs/numerics.md), so it may be far tighter, never more than 4x looser. Tight: the median over the
    bundles of worst error/bound is at least 0.05, and no bundle with a nonzero error is below 0.005 (no bound
    more than 200x the worst error it holds)."""
    rows = comparison_rows()
    assert len(rows) == len(bundle_names())
    for name, worst, _, derived, hand in rows:
        assert worst <= 1.0, name
        if hand == 0.0:  # a selection of FP16 inputs: exact either way
            assert derived == 0.0, name
        else:
            assert derived <= 4 * hand, f"{name}: derived {derived:.3g}, by hand {hand:.3g}"
            assert worst >= 0.005, f"{name}: worst error/bound {worst:.3g}: the bound is more than 200x the error"
    assert float(np.median([r[1] for r in rows])) >= 0.05, sorted(r[1] for r in rows)


def test_a_word_without_a_rule_is_named() -> None:
    core = BoundVectorCore()
    with pytest.raises(BoundError, match="VRED.SUMSQ"):
        core._vred(Word(encode_vred("SUMSQ", 1, 0, 0)))


def test_a_bundle_the_analysis_cannot_follow_fails_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """softmax's VRED MAX met by an analysis that has no rule for it (the rule taken away): the real
    derivation refuses it by name and the judgement fails with that line, never a pass or a traceback."""
    folder = tmp_path / "softmax_m32n64"
    shutil.copytree(Bundle("softmax_m32n64").path, folder)  # its own cache key
    monkeypatch.setattr(bound_lanes, "KNOWN_REDUCTIONS", (RedKind.SUM, RedKind.MIN))
    b = Bundle(folder)
    assert bound_failures(b, _reference_image(b)) == [
        "float64 bound: no float64 bound derived: the error analysis knows no rule for VRED.MAX"]
