"""One run of the plan gives both golden results (models/bundle/golden.py judged_run): the shadowed machine's
run is the golden machine model's, bit for bit and count for count, so --models and the golden child beside
every RTL run need not run the plan twice."""

from __future__ import annotations

import numpy as np
import pytest

from models.bundle.bound.machine import derive_with_run
from models.bundle.golden import judged_run
from models.bundle.reader import Bundle
from models.machine.event_model import run_bundle
from models.machine.layouts import FUSED4


@pytest.mark.parametrize("name", ["matmul_m32k64n32", "softmax_m32n64", "mlp_silu_m32k64f64n32",
                                  "select_lt_m32n64", "linear_silu_fused_m32k64n32"])
def test_the_shadowed_run_is_the_golden_run(name: str) -> None:
    b = Bundle(name)
    plain = run_bundle(b, FUSED4)
    _, shadowed = derive_with_run(b)
    assert np.array_equal(plain.image, shadowed.image)
    assert plain.faults == shadowed.faults and plain.errors == shadowed.errors
    assert [h.line(str) for h in plain.hazards] == [h.line(str) for h in shadowed.hazards]
    assert repr(sorted(plain.counts.items())) == repr(sorted(shadowed.counts.items()))
    assert [r.signals() for r in plain.result.rounds] == [r.signals() for r in shadowed.result.rounds]
    assert plain.result.snapshots.keys() == shadowed.result.snapshots.keys()


def test_judged_run_gives_the_model_and_the_bound() -> None:
    g = judged_run(Bundle("matmul_m32k64n32"), FUSED4)
    assert g.model is not None and g.model_error == "" and not isinstance(g.bound, Exception)
    assert set(g.bound.bounds) == {"c"}
