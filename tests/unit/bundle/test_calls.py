"""A bundle's kernel calls (models/bundle/calls.py): from the ``calls`` field, from each round's ``call``,
from the stage names when both are absent, and one call for a single-kernel bundle; malformed calls refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from models.bundle.calls import call_of_round, kernel_calls, kernel_starts
from models.bundle.reader import BUNDLES
from models.bundle.schema import BundleError

MODEL = BUNDLES.parent / "model" / "llm_block1_l64d64"
LLM_CALLS = ["rmsnorm_fused", "matmul", "matmul", "matmul", "flash_attention", "matmul", "residual", "rmsnorm_fused",
             "matmul", "silu", "matmul", "residual"]


def _meta(path: Path) -> dict:
    return json.loads((path / "bundle.json").read_text())


def test_the_calls_field_gives_the_forward_pass_kernels() -> None:
    calls = kernel_calls(_meta(MODEL))
    assert [c.kernel for c in calls] == LLM_CALLS
    assert calls[4].rounds == tuple(range(6, 19)) and calls[0].rounds == (0, 1, 2)
    assert kernel_starts(_meta(MODEL)) == frozenset({3, 4, 5, 6, 19, 20, 21, 24, 25, 26, 27})
    assert call_of_round(_meta(MODEL))[12].index == 4


def test_without_the_calls_field_the_rounds_or_the_stage_names_give_the_same_calls() -> None:
    want = [(c.index, c.kernel, c.rounds) for c in kernel_calls(_meta(MODEL))]
    meta = _meta(MODEL)
    del meta["calls"]
    assert [(c.index, c.kernel, c.rounds) for c in kernel_calls(meta)] == want  # each round's call
    for p in meta["plan"]:
        p.pop("call", None)
    assert [(c.index, c.kernel, c.rounds) for c in kernel_calls(meta)] == want  # the stage names


@pytest.mark.parametrize("name", ["flash_attention_l64d64", "mlp_silu_m32k64f64n32", "matmul_m32k64n32"])
def test_a_single_kernel_bundle_is_one_call(name: str) -> None:
    meta = _meta(BUNDLES / name)
    calls = kernel_calls(meta)
    assert len(calls) == 1 and calls[0].rounds == tuple(int(p["round"]) for p in meta["plan"] if p["kind"] == "round")
    assert kernel_starts(meta) == frozenset()


def test_stage_names_of_no_known_form_give_one_call() -> None:
    meta = copy.deepcopy(_meta(MODEL))
    del meta["calls"]
    for p in meta["plan"]:
        p.pop("call", None)
    for s in meta["stages"]:
        s["name"] = "anonymous"
    assert len(kernel_calls(meta)) == 1


def test_calls_that_do_not_partition_the_rounds_are_refused() -> None:
    meta = _meta(MODEL)
    meta["calls"][1]["rounds"], meta["calls"][2]["rounds"] = meta["calls"][2]["rounds"], meta["calls"][1]["rounds"]
    with pytest.raises(BundleError, match=r"not the plan's rounds in plan order"):
        kernel_calls(meta)
    meta = _meta(MODEL)
    meta["calls"][0]["rounds"] = "0-2"
    with pytest.raises(BundleError, match=r"calls\[0\]: expected an object with rounds"):
        kernel_calls(meta)
