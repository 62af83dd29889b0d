"""Judging a compiled bundle's run (machine model or RTL) against the bundle: one set of rules for both.

What a run must reproduce (clients/README.md): every output region bit for
bit as upstream's RTL computed it (``expected_rtl.npz``), except where
upstream's RTL meets its predicate hazard H1 and units.md makes the
interlocked result normative (a program whose run meets H1, such as
``select_lt_m32n64``: upstream's models, ``expected.npz``, are the reference
there; models/bundle/hazard_reference.py); per round the baseline and final
count of every awaited node as upstream's run observed them on a fresh
machine; the signals per node the plan awaits; the flits the plan stages.
Every lane a kernel produces lies within the float64 error bound derived from
its own instruction stream around float64 evaluated on the values that kernel
read (models/bundle/kernel_judge.py: kernel by kernel, so no bound compounds
from one kernel into the next); a single-kernel bundle's outputs also lie within
that bound around the bundle's own float64 math (``<port>__ref``,
models/bundle/lane_bound.py); a program the analysis cannot follow fails by name. How many
lanes differ from upstream's Python models (``expected.npz``) is reported,
never judged: those models are not bit exact to upstream's RTL.
"""

from __future__ import annotations

import numpy as np

from models.bundle.bound.ledger import OpLoss
from models.bundle.calls import kernel_calls
from models.bundle.kernel_judge import KernelVerdict, judge_kernels, kernel_failures
from models.bundle.reader import Bundle
from models.bundle.lane_bound import bound_check, bound_failures, derived_or_why, output_values
from models.bundle.executor import ExecResult, compare_observed, expected_signals
from models.bundle.hazard_reference import meets_h1
from models.vector.replay import output_mismatches

def reference(b: Bundle) -> str:
    """Which expected set is the bit-exact judge of `b`: "rtl" (expected_rtl.npz), "models" (expected.npz), or
    "none" (a bundle a user exported without upstream's RTL run: only the golden models' run and the float64
    bound judge its outputs, and the command line says so)."""
    if meets_h1(b):  # upstream's RTL read a stale predicate: its models' result is the normative one
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


def image_failures(b: Bundle, image: np.ndarray) -> list[str]:
    """The image span outside the output regions against the reference's ``dram_final``: a write that lands
    where the program writes nothing of its outputs (a stray drain, a walk run long) changes the machine's
    memory as surely as a wrong lane (the machine model reproduces upstream's dram_final byte for byte on
    every bundle of clients/). One line naming the bytes, the first address and its region."""
    which = reference(b)
    if which == "none":
        return []
    final = (b.expected_rtl if which == "rtl" else b.expected_models)["dram_final"]
    outside = np.ones(len(final), dtype=bool)
    for reg in b.outputs.values():
        lo = reg.addr - b.image_base
        outside[lo:lo + reg.nbytes] = False
    bad = np.flatnonzero((np.asarray(image) != final) & outside)
    if not len(bad):
        return []
    addr = b.image_base + int(bad[0])
    where = next((f"region {r.name} ({r.kind})" for r in b.regions if r.addr <= addr < r.addr + r.nbytes),
                 "no region")
    return [f"image: {len(bad)} byte(s) outside the output regions differ from upstream's {which} dram_final "
            f"(first at {addr:#x}, {where})"]


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


def one_kernel(b: Bundle) -> bool:
    """Whether the bundle is a single kernel call: then its outputs are also judged against the bundle's
    float64 reference within the derived bound; a program of many kernels is judged kernel by kernel, and
    its end-to-end error is a figure (models/bundle/kernel_judge.py)."""
    return len(kernel_calls(b.meta)) == 1


def kernel_verdicts(b: Bundle, res: ExecResult) -> list[KernelVerdict] | None:
    """Each kernel of the run judged on its own (None: no bound could be derived, bound_failures says why)."""
    derived, _ = derived_or_why(b)
    return None if derived is None else judge_kernels(b, derived, res)


def op_losses(b: Bundle) -> list[OpLoss]:
    """Each operation's own rounding per kernel call in the shadowed run (models/bundle/bound/ledger.py; none
    without a derived bound): where a program loses precision, reported, not judged."""
    derived, _ = derived_or_why(b)
    return [] if derived is None else list(derived.losses)


def unbounded_outputs(b: Bundle, image: np.ndarray) -> list[str]:
    """A program of many kernels: output lanes the last kernel left without a finite bound (a failure)."""
    derived, _ = derived_or_why(b)
    if derived is None:
        return []
    out = []
    for port, bound in derived.bounds.items():
        _, valid = output_values(b, image, port)
        bad = valid & ~np.isfinite(bound.reshape(valid.shape))
        if np.any(bad):
            out.append(f"output {port}: {int(bad.sum())} lane(s) without a finite float64 bound (first at flat "
                       f"index {list(map(int, np.flatnonzero(bad)[:5]))})")
    return out


NOT_JUDGED = "NOT JUDGED"  # the first words of a failure that says an output, or the program, was not judged at all


def judged_lanes(b: Bundle, image: np.ndarray) -> dict[str, int]:
    """Per output: how many of its lanes a reference judges: every FP16 slot of its region bit for bit when
    the bundle has one (expected_rtl.npz, or expected.npz for a hazard bundle), else the lanes its slot map
    and valid mask leave to the float64 bound."""
    if reference(b) != "none":
        return {name: reg.nbytes // 2 for name, reg in b.outputs.items()}
    return {port: int(output_values(b, image, port)[1].sum()) for port in b.outputs}


def unjudged(b: Bundle, image: np.ndarray) -> list[str]:
    """A failure per output no lane of which is judged, or one for a bundle that states no output: a run that
    judged nothing must never read as a pass."""
    if not b.outputs:
        return [f"{NOT_JUDGED}: the bundle states no output (bundle.json expected and dram.regions of kind output "
                f"are empty), so nothing of the run is checked; export the program's results as outputs"]
    return [f"{NOT_JUDGED}: output {port}: no lane is judged (no expected_rtl.npz, and {port}__slots / "
            f"{port}__valid in expected.npz leave no lane for the float64 bound); export upstream's RTL run or the "
            f"slot map again" for port, n in judged_lanes(b, image).items() if n == 0]


def judge(b: Bundle, res: ExecResult) -> list[str]:
    """Every failure of a run against the bundle (empty: it ran as compiled)."""
    out = list(res.problems)
    if res.image is None:
        return out + ["no final image was read back"]
    out += unjudged(b, res.image)
    out += output_failures(b, res.image)
    out += image_failures(b, res.image)
    if one_kernel(b):
        out += bound_failures(b, res.image)  # against the bundle's float64 reference, or why there is no bound
    else:
        _, why = derived_or_why(b)
        out += [f"float64 bound: {why}"] if why else unbounded_outputs(b, res.image)
    out += kernel_failures(kernel_verdicts(b, res) or [])
    out += compare_observed(res)
    got, want = res.signals(), expected_signals(b)
    if got != want:
        out.append(f"signals per node {dict(sorted(got.items()))}, the plan awaits {dict(sorted(want.items()))}")
    out += staged_failures(b, res)
    return out


def check_count(b: Bundle, res: ExecResult) -> int:
    """How many checks :func:`judge` makes of `res`: a lane per output slot (when the bundle has a bit-exact
    reference), the image outside the outputs (with one), a baseline/count pair per observed node and round, the
    signals per node, the slots per round."""
    lanes = sum(r.nbytes // 2 for r in b.outputs.values()) + 1 if reference(b) != "none" else 0
    bound = sum(r.lanes for r in bound_check(b, res.image)[0]) if res.image is not None and one_kernel(b) else 0
    kernels = sum(v.lanes for v in kernel_verdicts(b, res) or []) if res.image is not None else 0
    return lanes + bound + kernels + sum(len(r.observed) for r in res.rounds) + 1 + len(res.rounds)


__all__ = ["NOT_JUDGED", "check_count", "image_failures", "judge", "judged_lanes", "kernel_verdicts",
           "lanes_vs_models", "lanes_vs_rtl", "one_kernel", "op_losses", "output_failures", "reference",
           "staged_failures", "unbounded_outputs", "unjudged"]
