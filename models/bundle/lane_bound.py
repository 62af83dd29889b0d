"""Each output lane of a compiled bundle against its float64 reference, within an error bound derived from the
bundle's own instruction stream.

Why: bit-exact agreement with upstream's RTL says the machine does what the
hardware does; it does not say the program computes the math it claims. Each
bundle carries the float64 math of its kernel (``<port>__ref`` in
expected.npz, from the FP16 inputs); models/bundle/bound runs the bundle's plan on the
golden models with every lane carrying its error bound, operation by
operation (docs/numerics.md, "The float64 error bound"), and this module
fails a lane of a run (the RTL's or the models') whose distance from the
reference exceeds ``SAFETY x`` that bound. Nothing here knows a kernel by name: any program the
analysis can follow is judged, and one it cannot (an opcode or mode without a
rule) is a failure naming it, never a silent pass.

The reference is the bundle's stored float64 array and the bound is computed
with fixed-order float64 sums (no BLAS), so the verdict does not depend on
the machine. A bundle's bound is derived once per process (it depends on the
bundle only, not on the run being judged).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.bundle.bound.machine import DerivedBound, derive
from models.bundle.bound.rules import SAFETY, BoundError
from models.bundle.reader import Bundle

BOUND_SOURCE = "derived"  # what the report names as the bound's origin
_DERIVED: dict[Path, DerivedBound | BoundError] = {}


@dataclass
class BoundResult:
    """One output port against its float64 reference: lanes judged, lanes outside, the tightest margin."""

    port: str
    lanes: int
    outside: np.ndarray  # flat indices of the logical output outside the bound
    worst: float  # max |y - ref| / bound over the judged lanes (<= 1 passes)
    bound_max: float = 0.0  # the largest bound of a judged lane
    note: str = ""


def derived_bound(b: Bundle) -> DerivedBound:
    """The bundle's derived bound (cached per bundle folder); BoundError names what the analysis cannot bound
    (an operation without a rule, or a run the shadowed models could not finish, by its own error)."""
    key = Path(b.path).resolve()
    if key not in _DERIVED:
        try:
            _DERIVED[key] = derive(b)
        except BoundError as exc:
            _DERIVED[key] = exc
        except (ValueError, AssertionError) as exc:  # the models' refusals, a poll or landing that failed
            _DERIVED[key] = BoundError(f"the plan did not run to its end: {type(exc).__name__}: {exc}")
    got = _DERIVED[key]
    if isinstance(got, BoundError):
        raise got
    return got


def derived_or_why(b: Bundle) -> tuple[DerivedBound | None, str | None]:
    """(the bundle's derived bound, None), or (None, why none could be derived) as the judge words it."""
    try:
        return derived_bound(b), None
    except BoundError as exc:
        return None, f"no float64 bound derived: {exc}"


def forget(b: Bundle) -> None:
    """Drop `b`'s derived bound from this process, so the next use derives it again (a measurement that must
    not reuse it: tb/perf/judge_speed.py)."""
    _DERIVED.pop(Path(b.path).resolve(), None)


def forget_all() -> None:
    """Drop every derived bound of this process (a run of many short-lived bundle copies: tb/fuzz)."""
    _DERIVED.clear()


def remember(b: Bundle, bound: DerivedBound | BoundError) -> None:
    """Take `b`'s derived bound (or why there is none) from a computation done elsewhere
    (models/bundle/golden.py in another process), so judging it here does not derive it again."""
    _DERIVED[Path(b.path).resolve()] = bound


def output_values(b: Bundle, image: np.ndarray, port: str) -> tuple[np.ndarray, np.ndarray]:
    """The logical output `port` read from a final image through its slot map: (values, valid mask)."""
    reg = b.outputs[port]
    lo = reg.addr - b.image_base
    raw = image[lo:lo + reg.nbytes].view(np.uint16)
    slots = b.expected_models[f"{port}__slots"]
    valid = slots >= 0
    if f"{port}__valid" in b.expected_models:
        valid &= b.expected_models[f"{port}__valid"].astype(bool)
    vals = raw[np.where(slots >= 0, slots, 0)].view(np.float16).astype(np.float64)
    return vals, valid


def judge_port(port: str, y: np.ndarray, valid: np.ndarray, ref: np.ndarray, bound: np.ndarray) -> BoundResult:
    """One port's lanes against the reference within `bound` (SAFETY applied). A lane fails when its error
    exceeds the bound, when its bound is not finite (nothing was derived for it), or, where the reference is
    not finite, when it does not reproduce it; a lane with bound 0 (an exact selection) fails on any
    difference."""
    finite = np.isfinite(ref)
    err = np.abs(y - ref)
    unbounded = valid & finite & ~np.isfinite(bound)
    outside = valid & finite & ~(err <= bound)
    mismatch = valid & ~finite & ~((y == ref) | (np.isnan(y) & np.isnan(ref)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0), np.where(err > 0, np.inf, 0.0))
    ratio = np.where(valid & finite, ratio, 0.0)
    judged = valid & finite & np.isfinite(bound)
    note = f"{int(unbounded.sum())} lane(s) without a finite bound" if unbounded.any() else ""
    return BoundResult(port, int(valid.sum()), np.flatnonzero(outside | mismatch | unbounded),
                       float(ratio.max()) if ratio.size else 0.0,
                       float(bound[judged].max()) if judged.any() else 0.0, note)


def bound_check(b: Bundle, image: np.ndarray) -> tuple[list[BoundResult], str | None]:
    """Every output of `b` in `image` against the float64 reference within the derived bound; the second
    value names why no bound could be derived (the analysis met an opcode or mode it has no rule for), or
    None."""
    derived, why = derived_or_why(b)
    if derived is None:
        return [], why
    out = []
    for port in b.outputs:
        ref = b.expected_models[f"{port}__ref"].astype(np.float64)
        y, valid = output_values(b, image, port)
        out.append(judge_port(port, y, valid, ref, derived.bounds[port].reshape(ref.shape)))
    return out, None


def bound_failures(b: Bundle, image: np.ndarray) -> list[str]:
    """One line per output with lanes outside the bound, or the one line saying why none was derived
    (the judge's check (judge.py): either fails the run)."""
    results, why = bound_check(b, image)
    if why:
        return [f"float64 bound: {why}"]
    return [f"output {r.port}: {len(r.outside)} of {r.lanes} lane(s) outside the float64 error bound "
            f"(first at flat index {list(map(int, r.outside[:5]))}; worst |y-ref|/bound {r.worst:.3g}"
            f"{'; ' + r.note if r.note else ''})" for r in results if len(r.outside)]


__all__ = ["BOUND_SOURCE", "SAFETY", "BoundResult", "bound_check", "bound_failures", "derived_bound", "derived_or_why",
           "forget", "forget_all", "judge_port", "output_values", "remember"]
