"""The public compiler's vector-core programs, unmodified, on the golden model: bit exact to upstream's RTL.

Every bundle of clients/bundles whose vector stage can run alone (models.vector.replay)
is replayed; each output lane must equal what upstream's own RTL computed
(expected_rtl.npz), every node must send exactly the signals the plan awaits,
and no kernel may fault. select_lt_m32n64 meets upstream's predicate hazard H1:
there the interlocked (normative) result equals upstream's Python models
(expected.npz), the 542 lanes upstream's RTL computes differently are all
accounted for, and each occurrence is reported by name.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.bundle.reader import Bundle, bundle_names
from models.vector.replay import output_mismatches, replay_refusal, replay_vc

REPLAYABLE = [n for n in bundle_names() if replay_refusal(Bundle(n)) is None]
HAZARD_BUNDLE = "select_lt_m32n64"


def awaited(b: Bundle) -> dict:
    out: dict = {}
    for rnd in b.rounds:
        if rnd.unit == "VC":
            for node, count in rnd.awaits:
                out[node] = out.get(node, 0) + count
    return out


def test_the_replayable_set() -> None:
    """What runs here and why the rest does not (they need the cluster or the loader)."""
    assert set(REPLAYABLE) >= {"group_norm_g8n128", "ops_log2_m32n64", "ops_where_m32n64", "rmsnorm_m32n64",
                               "select_lt_m32n64", "softmax_m32n64", "linear_silu_unfused_m32k64n32",
                               "linear_gelu_unfused_m32k64n32", "linear_gate_add_m32k64n32"}
    assert "fused" in replay_refusal(Bundle("linear_silu_fused_m32k64n32"))
    assert "relayout" in replay_refusal(Bundle("mlp_silu_m32k64f64n32"))


@pytest.mark.parametrize("name", [n for n in REPLAYABLE if n != HAZARD_BUNDLE])
def test_bit_exact_to_upstream_rtl(name: str) -> None:
    b = Bundle(name)
    r = replay_vc(b)
    assert not r.faults, r.faults
    assert r.signals == awaited(b), f"signals per node {r.signals} != awaited {awaited(b)}"
    assert not r.hazards, [h.line(str) for h in r.hazards]
    bad = output_mismatches(b, r.image, "rtl")
    assert all(len(v) == 0 for v in bad.values()), {k: len(v) for k, v in bad.items()}


def test_select_lt_meets_hazard_h1_by_name() -> None:
    b = Bundle(HAZARD_BUNDLE)
    r = replay_vc(b)
    assert not r.faults
    assert r.signals == awaited(b)
    vs_models = output_mismatches(b, r.image, "models")
    assert all(len(v) == 0 for v in vs_models.values()), "the interlocked result is the program's meaning"
    vs_rtl = output_mismatches(b, r.image, "rtl")
    assert sum(map(len, vs_rtl.values())) == 542, "upstream's RTL reads the stale P0 in 542 lanes"
    # one occurrence per chunk: VCMPLT then a VMOV ?p0 right after it, 8 chunks x 2 rounds
    assert len(r.hazards) == 16
    assert {h.hid for h in r.hazards} == {"H1"}  # and none of H2, H3, H4 (no chain, no FP32 store)
    assert {h.name for h in r.hazards} == {"H1"} and {h.window for h in r.hazards} == {"measured"}
    assert {h.pred for h in r.hazards} == {0}


def test_mismatch_checker_fails_on_a_planted_lane() -> None:
    b = Bundle("ops_log2_m32n64")
    r = replay_vc(b)
    image = r.image.copy()
    out = b.outputs["y"]
    lo = out.addr - b.image_base + 2 * 37
    image[lo] ^= 1
    bad = output_mismatches(b, image, "rtl")
    assert list(bad["y"]) == [37]
