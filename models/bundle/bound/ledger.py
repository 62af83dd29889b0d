"""Which operation of which kernel loses the most precision by its own rounding.

Why: when a program's result is far from its float64 math, a compiler engineer
must tell a machine fault from a kernel that loses precision by design (a
running maximum taken before a mask, so kept scores fall into FP16's subnormal
range and are stored with few or no significant bits). The bound says how far
a lane may be; this ledger says where the loss arises. Every shadowed unit
notes, per operation it performs, its **own** error: how far its result is from
the same operation applied exactly to the machine's own operand values (not
the propagated error of its inputs), in absolute terms and relative to the
operation's scale: the magnitude of what a sum adds (|a| + |c|; a dot's
sum of |a·b|), else of its exact result. Relative so, an operation that rounds
correctly in FP16's or E8M15's normal range loses at most half or one unit of
its fraction (2^-11, 2^-15); one that stores into the subnormal range or
flushes loses up to all of it (1.0), and MXFP7 up to about 2^-6 of a dot.
Entries are kept per kernel call (the one running, ``Ledger.call``) and per
operation name ("VST FP16", "VEXP2", "MXFP7 K-block dot", ...).

The figures are measurements of this run, reported, never judged.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

TINY = 2.0 ** -126  # below this a result's magnitude is no scale for a relative error


@dataclass
class OpLoss:
    """One operation's own error in one kernel call: the largest absolute and relative, over how many lanes."""

    call: int
    op: str
    lanes: int = 0  # result lanes the operation produced
    lossy: int = 0  # of them, lanes whose own error is not zero
    abs_max: float = 0.0
    rel_max: float = 0.0  # own error / the operation's scale (scales >= TINY)
    rel_value: float = 0.0  # the scale at which rel_max was met

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Ledger:
    """Per kernel call and operation, the largest own error (module doc)."""

    def __init__(self) -> None:
        self.call = 0
        self.entries: dict[tuple[int, str], OpLoss] = {}

    def note(self, op: str, own: np.ndarray, result: np.ndarray) -> None:
        """`own`: each lane's own error, `result`: the magnitude the relative error is taken of (module doc).
        Non-finite lanes are left out."""
        own = np.abs(np.asarray(own, dtype=np.float64)).reshape(-1)
        mag = np.abs(np.asarray(result, dtype=np.float64)).reshape(-1)
        ok = np.isfinite(own) & np.isfinite(mag)
        if not np.any(ok):
            return
        own, mag = own[ok], mag[ok]
        e = self.entries.setdefault((self.call, op), OpLoss(self.call, op))
        e.lanes += own.size
        e.lossy += int(np.count_nonzero(own))
        e.abs_max = max(e.abs_max, float(own.max()))
        scaled = mag >= TINY
        if np.any(scaled):
            rel = np.where(scaled, own / np.where(scaled, mag, 1.0), 0.0)
            i = int(np.argmax(rel))
            if rel[i] > e.rel_max:
                e.rel_max, e.rel_value = float(rel[i]), float(mag[i])


__all__ = ["Ledger", "OpLoss", "TINY"]
