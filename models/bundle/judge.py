"""Judging a compiled bundle's run (machine model or RTL) against the bundle: one set of rules for both.

What a run must reproduce (clients/README.md): every output region bit for
bit as upstream's RTL computed it (``expected_rtl.npz``), except where
upstream's RTL meets its predicate hazard H1 and units.md makes the
interlocked result normative (``select_lt_m32n64``: upstream's models,
``expected.npz``, are the reference there); per round the baseline and final
count of every awaited node as upstream's run observed them on a fresh
machine; the signals per node the plan awaits; the flits the plan stages.
Every output lane also lies within the float64 error bound derived from the
bundle's own run, operation by operation (models/bundle/lane_bound.py, models/bundle/bound),
around the kernel's float64 math; a program the analysis cannot follow fails
by name. How many
lanes differ from upstream's Python models (``expected.npz``) is reported,
never judged: those models are not bit exact to upstream's RTL.
"""

from __future__ import annotations

import numpy as np

from models.bundle.reader import Bundle
from models.bundle.lane_bound import bound_check, bound_failures
from models.bundle.executor import ExecResult, compare_observed, expected_signals
from models.vector.replay import output_mismatches

# Bundles whose upstream RTL result differs from the program's meaning (units.md U.1, H1); the
# normative (interlocked) result is upstream's models' there.
HAZARD_BUNDLES = frozenset({"select_lt_m32n64"})


def reference(b: Bundle) -> str:
    """Which expected set is the bit-exact judge of `b`: "rtl" (expected_rtl.npz), "models" (expected.npz), or
    "none" (a bundle a user exported without upstream's RTL run: only the golden models' run and the float64
    bound judge its outputs, and the command line says so)."""
    if b.name in HAZARD_BUNDLES:
        return "models"
    return "rtl" if b.has_expected_rtl else "none"


def output_failures(b: Bundle, image: np.ndarray, against: str | None = None, what: str = "") -> list[str]:
    """One line per output region whose FP16 slots differ from the reference (or from `against`)."""
    which = against or reference(b)
    if which == "none":
        return []
    out = []
    for name, bad in output_mismatches(b, image, which).items():
        if len(bad):
            out.append(f"{what}output {name}: {len(bad)} FP16 lane(s) differ from upstream's {which} "
                       f"(first slots {list(map(int, bad[:5]))})")
    return out


def lanes_vs_models(b: Bundle, image: np.ndarray) -> dict[str, int]:
    """Per output: FP16 lanes that differ from upstream's Python models (reported, not judged)."""
    return {name: int(len(bad)) for name, bad in output_mismatches(b, image, "models").items()}


def lanes_vs_rtl(b: Bundle, image: np.ndarray) -> dict[str, int] | None:
    """Per output: FP16 lanes that differ from upstream's RTL (None without expected_rtl.npz)."""
    if not b.has_expected_rtl:
        return None
    return {name: int(len(bad)) for name, bad in output_mismatches(b, image, "rtl").items()}


def staged_failures(b: Bundle, res: ExecResult) -> list[str]:
    """Per round: the slots staged and the flits kicked equal the plan's ``nflits``."""
    plan = {int(p["round"]): int(p["nflits"]) for p in b.meta["plan"] if p["kind"] == "round"}
    out = []
    for r in res.rounds:
        if r.staged != plan.get(r.index) or r.kicked < r.staged:
            out.append(f"round {r.index}: {r.staged} slot(s) staged, {r.kicked} flit(s) kicked, the plan says "
                       f"{plan.get(r.index)}")
    return out


def judge(b: Bundle, res: ExecResult) -> list[str]:
    """Every failure of a run against the bundle (empty: it ran as compiled)."""
    out = list(res.problems)
    if res.image is None:
        return out + ["no final image was read back"]
    out += output_failures(b, res.image)
    out += bound_failures(b, res.image)
    out += compare_observed(res)
    got, want = res.signals(), expected_signals(b)
    if got != want:
        out.append(f"signals per node {dict(sorted(got.items()))}, the plan awaits {dict(sorted(want.items()))}")
    out += staged_failures(b, res)
    return out


def check_count(b: Bundle, res: ExecResult) -> int:
    """How many checks :func:`judge` makes of `res`: a lane per output slot (when the bundle has a bit-exact
    reference), a baseline/count pair per observed node and round, the signals per node, the slots per round."""
    lanes = sum(r.nbytes // 2 for r in b.outputs.values()) if reference(b) != "none" else 0
    bound = sum(r.lanes for r in bound_check(b, res.image)[0]) if res.image is not None else 0
    return lanes + bound + sum(len(r.observed) for r in res.rounds) + 1 + len(res.rounds)


__all__ = ["HAZARD_BUNDLES", "check_count", "judge", "lanes_vs_models", "lanes_vs_rtl", "output_failures", "reference", "staged_failures"]
