"""Each kernel of a compiled program judged on its own: its results against float64 evaluated on the values it
read, within the bound derived from its own instruction stream.

Why: a whole model is one bundle of many kernels (models/bundle/calls.py). Judged
end to end, a bound compounds from kernel to kernel until it means nothing (an
exp2 of a score whose bound came through three matmuls and a normalisation); and
the program's own error against its float64 math is the compiler's choice of
kernels, not the machine's fault. So the shadowed run (models/bundle/bound/machine.py)
takes, at every kernel boundary, the lanes the kernel produced down as a
:class:`~models.bundle.bound.machine.Checkpoint` (exact value, bound) and hands
them to the next kernel as exact inputs; here a run's image at the same boundary
(``ExecResult.snapshots``, taken by the executor on the RTL and on the models
alike; the final image for the last) is judged lane by lane: ``|y - exact| <=
bound``. A lane without a finite bound is not judged at a boundary (a value
nothing reads may be anything); a program output without one fails at the end.
The whole program's outputs against the bundle's ``<port>__ref`` are then a
figure (:func:`program_error`), printed beside the error of upstream's Python
models, not a verdict.

Nothing here knows a kernel by name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from models.bundle.bound.machine import Checkpoint, DerivedBound
from models.bundle.bound.rules import f16
from models.bundle.calls import Call, kernel_calls
from models.bundle.executor import ExecResult
from models.bundle.lane_bound import output_values
from models.bundle.reader import Bundle, Region


@dataclass
class KernelVerdict:
    """One kernel call's produced lanes against their exact values within their bounds."""

    call: int
    kernel: str
    rounds: tuple[int, ...]
    lanes: int = 0  # lanes judged (finite exact value and bound)
    outside: int = 0  # judged lanes past their bound
    unbounded: int = 0  # produced lanes without a finite bound (not judged)
    worst: float = 0.0  # max |y - exact| / bound over the judged lanes
    worst_at: str = ""  # where that lane is (region[element])
    err_max: float = 0.0  # max |y - exact|
    err_at: str = ""
    scale: float = 0.0  # max |exact| over the judged lanes
    bound_max: float = 0.0
    first_outside: list[str] = field(default_factory=list)
    missing: str = ""  # why the run had no image at this kernel's boundary

    @property
    def label(self) -> str:
        return f"{self.call}:{self.kernel}"

    @property
    def rel_err(self) -> float:
        """The kernel's largest error relative to the scale of its results."""
        return self.err_max / self.scale if self.scale > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["rounds"] = list(self.rounds)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "KernelVerdict":
        d = dict(d)
        d["rounds"] = tuple(d["rounds"])
        return cls(**d)


def locate(b: Bundle, lane: int, call: int | None = None) -> str:
    """A lane of the image span as `region[element]` (the smallest region holding it; a region named after
    the call, ``<call>.<kernel>.<port>``, first), or its byte address."""
    addr = b.image_base + 2 * int(lane)
    holding = [r for r in b.regions if r.addr <= addr < r.addr + r.nbytes]
    if not holding:
        return f"{addr:#x}"
    own = [r for r in holding if call is not None and r.name.startswith(f"{call:02d}.")]
    best: Region = min(own or holding, key=lambda r: r.nbytes)
    return f"{best.name}[{(addr - best.addr) // 2}]"


def _image_at(res: ExecResult, ck: Checkpoint) -> np.ndarray | None:
    if ck.before_round is None:
        return res.image
    return res.snapshots.get(ck.before_round)


def _judge_checkpoint(b: Bundle, ck: Checkpoint, img: np.ndarray, verdicts: dict[int, KernelVerdict]) -> None:
    y = f16(np.asarray(img).view("<u2")[ck.lanes])
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(y - ck.exact)
    judged = np.isfinite(ck.exact) & np.isfinite(ck.bound)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ck.bound > 0, err / np.where(ck.bound > 0, ck.bound, 1.0), np.where(err > 0, np.inf, 0.0))
    outside = judged & ~(err <= ck.bound)
    for call in np.unique(ck.call):
        v = verdicts[int(call)]
        mine = ck.call == call
        sel = mine & judged
        v.unbounded += int(np.sum(mine & ~judged))
        v.lanes += int(np.sum(sel))
        v.outside += int(np.sum(outside & mine))
        if not np.any(sel):
            continue
        idx = np.flatnonzero(sel)
        r, e = ratio[idx], err[idx]
        if float(r.max()) >= v.worst:
            v.worst, v.worst_at = float(r.max()), locate(b, ck.lanes[idx[int(np.argmax(r))]], v.call)
        if float(e.max()) >= v.err_max:
            v.err_max, v.err_at = float(e.max()), locate(b, ck.lanes[idx[int(np.argmax(e))]], v.call)
        v.scale = max(v.scale, float(np.abs(ck.exact[idx]).max()))
        v.bound_max = max(v.bound_max, float(ck.bound[idx].max()))
        for i in np.flatnonzero(outside & mine)[: 5 - len(v.first_outside)]:
            v.first_outside.append(f"{locate(b, ck.lanes[i], v.call)} = {y[i]:.6g}, exact {ck.exact[i]:.6g}, "
                                   f"bound {ck.bound[i]:.3g}")


def judge_kernels(b: Bundle, derived: DerivedBound, res: ExecResult) -> list[KernelVerdict]:
    """Every kernel call of `b` judged in the run `res` (module doc), in plan order."""
    calls: list[Call] = kernel_calls(b.meta)
    verdicts = {c.index: KernelVerdict(c.index, c.kernel, c.rounds) for c in calls}
    for ck in derived.checkpoints:
        img = _image_at(res, ck)
        if img is None:
            for call in np.unique(ck.call):
                verdicts[int(call)].missing = (f"the run has no image before round {ck.before_round} (it stopped "
                                               f"before that kernel boundary)")
            continue
        _judge_checkpoint(b, ck, img, verdicts)
    return [verdicts[c.index] for c in calls]


def kernel_failures(verdicts: list[KernelVerdict]) -> list[str]:
    """One line per kernel with lanes outside their bound, or never judged because the run stopped."""
    out = []
    for v in verdicts:
        if v.outside:
            out.append(f"kernel {v.label}: {v.outside} of {v.lanes} lane(s) outside the float64 error bound "
                       f"(first: {'; '.join(v.first_outside)}; worst |y-exact|/bound {v.worst:.3g})")
        elif v.missing:
            out.append(f"kernel {v.label}: not judged: {v.missing}")
    return out


@dataclass
class ProgramError:
    """One output port of the whole program against the bundle's float64 ``<port>__ref``: a figure."""

    port: str
    err_max: float  # max |y - ref| over the port's valid lanes
    ref_max: float  # max |ref|
    models_err_max: float | None  # the same of upstream's Python models (expected.npz)
    at: str = ""

    @property
    def rel(self) -> float:
        return self.err_max / self.ref_max if self.ref_max > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def program_error(b: Bundle, image: np.ndarray) -> list[ProgramError]:
    """Each output of the final image against ``<port>__ref`` beside upstream's models' error."""
    out = []
    for port in b.outputs:
        ref = b.expected_models[f"{port}__ref"].astype(np.float64).reshape(-1)
        y, valid = output_values(b, image, port)
        y, valid = y.reshape(-1), valid.reshape(-1)
        ok = valid & np.isfinite(ref)
        if not np.any(ok):
            out.append(ProgramError(port, 0.0, 0.0, None))
            continue
        err = np.where(ok, np.abs(y - ref), 0.0)
        models = b.expected_models.get(port)
        m_err = None if models is None else float(np.max(np.where(ok, np.abs(
            np.asarray(models, dtype=np.float64).reshape(-1) - ref), 0.0)))
        i = int(np.argmax(err))
        out.append(ProgramError(port, float(err[i]), float(np.abs(ref[ok]).max()), m_err, f"{port}[{i}]"))
    return out


def where_it_arises(verdicts: list[KernelVerdict]) -> KernelVerdict | None:
    """The kernel whose own error, relative to the scale of its results, is the largest (None: no kernel was
    judged)."""
    judged = [v for v in verdicts if v.lanes]
    return max(judged, key=lambda v: v.rel_err) if judged else None


__all__ = ["KernelVerdict", "ProgramError", "judge_kernels", "kernel_failures", "locate", "program_error",
           "where_it_arises"]
