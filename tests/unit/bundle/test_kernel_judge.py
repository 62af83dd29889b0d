"""Programs of many kernels judged kernel by kernel (models/bundle/kernel_judge.py, the exact plane of
models/bundle/bound).

* the exact plane is the math: on every single-kernel bundle, the float64 value the shadowed run carries for
  each output lane equals the bundle's own float64 reference (``<port>__ref``, computed by upstream from the
  FP16 inputs, not by us) to far below the bound;
* holds: the one-layer forward pass (clients/model) on the golden models: every kernel's produced lanes
  within their bounds, none unbounded, the program passes;
* bites: on every kernel of the pass (rmsnorm, matmul, flash attention, residual, silu) a lane moved one FP16
  step past its bound fails, naming the kernel, and moved to the last FP16 value inside passes;
* a run that stopped before a kernel boundary names the kernels it could not judge.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from models.bundle.bound.machine import DerivedBound
from models.bundle.judge import judge, reference
from models.bundle.kernel_judge import judge_kernels, kernel_failures, program_error
from models.bundle.lane_bound import derived_bound, output_values
from models.bundle.reader import BUNDLES, Bundle, bundle_names
from models.bundle.executor import ExecResult
from models.machine.event_model import ModelRun, run_bundle
from models.machine.layouts import get_machine

MODEL = BUNDLES.parent / "model" / "llm_block1_l64d64"


@lru_cache(maxsize=None)
def _model_run() -> tuple[Bundle, DerivedBound, ModelRun]:
    b = Bundle(MODEL)
    b.check()
    return b, derived_bound(b), run_bundle(b, get_machine(b.meta["machine"]["name"]))


@pytest.mark.parametrize("name", bundle_names())
def test_the_exact_plane_is_the_bundles_own_float64_reference(name: str) -> None:
    b = Bundle(name)
    d = derived_bound(b)
    for port in b.outputs:
        ref = b.expected_models[f"{port}__ref"].astype(np.float64)
        _, valid = output_values(b, b.expected_models["dram_final"], port)
        gap = np.abs(d.exact[port].reshape(ref.shape) - ref)[valid]
        scale = float(np.abs(ref[valid]).max())
        # measured: at most 2.8e-5 of the bound and 1.5e-6 of max |ref| (the program's constants, e.g. log2(e),
        # as E8M15 immediates); a wrong rule for any operation would be off by a rounding or more
        assert np.all(gap <= 1e-5 * scale + 1e-3 * d.bounds[port].reshape(ref.shape)[valid]), (port, gap.max())


def test_the_forward_pass_passes_kernel_by_kernel() -> None:
    b, d, run = _model_run()
    verdicts = judge_kernels(b, d, run.result)
    assert [v.kernel for v in verdicts][:5] == ["rmsnorm_fused", "matmul", "matmul", "matmul", "flash_attention"]
    assert all(v.lanes > 0 and v.outside == 0 and v.unbounded == 0 and 0 < v.worst <= 1 for v in verdicts)
    assert reference(b) == "rtl" and judge(b, run.result) == []
    # the whole program's error against float64 is a figure: as far from __ref as upstream's own models
    err = program_error(b, run.image)[0]
    assert err.port == "x" and 0.5 < err.err_max < 2 and err.models_err_max is not None


def _past(exact: float, bound: float, inside: bool) -> np.float16:
    """The first FP16 value past exact + bound (inside: the last one at or below it)."""
    v = np.float16(exact + bound)
    while float(v) > exact + bound:
        v = np.nextafter(v, np.float16(-np.inf))
    return v if inside else np.nextafter(v, np.float16(np.inf))


def _planted(run: ModelRun, b: Bundle, d: DerivedBound, call: int, inside: bool) -> ExecResult:
    """The run with one lane of `call`'s results moved to just past (or just inside) its bound."""
    for ck in d.checkpoints:
        mine = np.flatnonzero((ck.call == call) & np.isfinite(ck.bound) & (ck.bound > 0))
        if len(mine):
            i = int(mine[len(mine) // 2])
            res = ExecResult(run.result.bundle, run.result.rounds, run.image.copy(), [], run.result.cycles,
                             {k: v.copy() for k, v in run.result.snapshots.items()})
            img = res.image if ck.before_round is None else res.snapshots[ck.before_round]
            img.view("<u2")[ck.lanes[i]] = _past(float(ck.exact[i]), float(ck.bound[i]), inside).view(np.uint16)
            return res
    raise AssertionError(f"call {call} has no judged lane")


@pytest.mark.parametrize("call", range(12))
def test_a_lane_one_fp16_step_past_its_bound_fails(call: int) -> None:
    b, d, run = _model_run()
    bad = judge_kernels(b, d, _planted(run, b, d, call, inside=False))
    assert [v.outside for v in bad] == [int(v.call == call) for v in bad]
    lines = kernel_failures(bad)
    assert len(lines) == 1 and lines[0].startswith(f"kernel {call}:{bad[call].kernel}: 1 of ")
    good = judge_kernels(b, d, _planted(run, b, d, call, inside=True))
    assert all(v.outside == 0 for v in good)


def test_a_run_that_stopped_names_the_kernels_it_could_not_judge() -> None:
    b, d, run = _model_run()
    cut = ExecResult(run.result.bundle, run.result.rounds[:6], run.image,
                     snapshots={r: img for r, img in run.result.snapshots.items() if r <= 6})
    lines = kernel_failures(judge_kernels(b, d, cut))
    assert lines[0] == ("kernel 4:flash_attention: not judged: the run has no image before round 19 (it stopped "
                        "before that kernel boundary)")


def test_the_ledger_names_where_a_kernel_loses_precision() -> None:
    """Each operation's own rounding, per kernel (models/bundle/bound/ledger.py): the E8M15 operations of the
    pass lose at most one unit of their 15-bit fraction relative to their scale (units.md V.6), the K-block
    dots at most a few steps of MXFP7 in most kernels; flash attention stores values in FP16's subnormal range
    (all of a value lost) and has dots of such values that lose nearly all of theirs."""
    b, d, _ = _model_run()
    by = {(e.call, e.op): e for e in d.losses}
    e8_ops = [e for e in d.losses if e.op in ("VADD", "VSUB", "VMUL", "VFMA", "VMAX", "VMIN")]
    assert e8_ops and all(e.rel_max <= 2.0 ** -15 for e in e8_ops), [(e.call, e.op, e.rel_max) for e in e8_ops]
    assert by[(4, "VST FP16")].rel_max == 1.0 and by[(4, "VST FP16")].rel_value < 2.0 ** -14
    assert by[(4, "MXFP7 K-block dot")].rel_max > 0.5
    assert all(by[(c, "MXFP7 K-block dot")].rel_max < 0.1 for c in (1, 2, 3, 5, 8, 10))  # measured 0.020 to 0.059


@pytest.mark.parametrize("name", ["conv2d_bias_h16w16c32n64", "flash_attention_causal_l128d64", "matmul_m128k256n128",
                                  "mlp_silu_m64k128f256n64", "softmax_m128n128"])
def test_the_larger_programs_lie_within_a_bound_that_bites(name: str) -> None:
    """clients/scale: upstream's RTL output within the bound around the bundle's float64 reference, the
    worst error at least 0.005 of its bound (no bound more than 200x the error it holds; measured 0.19 to
    0.80)."""
    from models.bundle.lane_bound import bound_check

    b = Bundle(BUNDLES.parent / "scale" / name)
    results, why = bound_check(b, b.expected_rtl["dram_final"])
    assert why is None and results
    for r in results:
        assert len(r.outside) == 0 and 0.005 <= r.worst <= 1.0, (r.port, r.worst)


def test_a_program_the_analysis_cannot_follow_fails_by_name_once(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A program of many kernels whose first kernel has an operation without a rule (VRED.SUM's taken away):
    the run fails with the one line that names it, never a pass, a traceback or the line twice."""
    import shutil

    from models.bundle.bound import lanes as bound_lanes
    from models.vector.isa import RedKind

    folder = tmp_path / "llm_block1_l64d64"
    shutil.copytree(MODEL, folder)  # its own cache key
    monkeypatch.setattr(bound_lanes, "KNOWN_REDUCTIONS", (RedKind.MAX, RedKind.MIN))
    b = Bundle(folder)
    run = run_bundle(b, get_machine(b.meta["machine"]["name"]))
    bound_lines = [f for f in judge(b, run.result) if f.startswith("float64 bound")]
    assert bound_lines == ["float64 bound: no float64 bound derived: the error analysis knows no rule for VRED.SUM"]
