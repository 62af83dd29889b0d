"""The golden results computed beside the simulator (tb/bundle/golden_ahead.py, models/bundle/golden.py)
equal the ones computed in-process, and a child that fails is a named error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.bundle.reader import Bundle
from models.bundle.golden import compute
from tb.bundle.golden_ahead import GoldenAhead

SMALL = "matmul_m32k64n32"


def test_child_result_equals_in_process(tmp_path: Path) -> None:
    b = Bundle(SMALL)
    child = GoldenAhead(b, "fused4", tmp_path).result()
    here = compute(b.path, "fused4")
    assert child.model is not None and here.model is not None
    assert child.model_error == here.model_error == ""
    assert np.array_equal(child.model.image, here.model.image)
    assert child.model.result.cycles == here.model.result.cycles
    assert not isinstance(here.bound, Exception) and not isinstance(child.bound, Exception)
    assert here.bound.bounds.keys() == child.bound.bounds.keys()
    for port, bound in here.bound.bounds.items():
        assert np.array_equal(bound, child.bound.bounds[port])


def test_a_result_is_reused_only_for_the_same_inputs(tmp_path: Path) -> None:
    """A second run of the same bundle reads the kept result; another machine is another key (a new child)."""
    b = Bundle(SMALL)
    first = GoldenAhead(b, "fused4", tmp_path)
    assert not first.reused
    first.result()
    again = GoldenAhead(b, "fused4", tmp_path)
    assert again.reused and again.proc is None
    assert np.array_equal(again.result().model.image, first.result().model.image)
    other = GoldenAhead(b, "mm_mesh_sys", tmp_path)
    assert not other.reused and other.out != first.out
    assert other.proc is not None and other.proc.wait() == 0


def test_failed_child_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=rf"golden run of {SMALL} .* exited with status [1-9]"):
        GoldenAhead(Bundle(SMALL), "no_such_machine", tmp_path).result()
