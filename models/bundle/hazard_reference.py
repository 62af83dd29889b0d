"""Which of a bundle's expected sets is normative: upstream's RTL, unless the program meets hazard H1.

Why: upstream's RTL reads a stale predicate where units.md V.8 (hazard H1)
says a machine must interlock; there the normative result is upstream's
Python models' (``expected.npz``), not its RTL's. Whether a program meets
H1 is a fact of the program's run (the vector core model reports each stale
read), never of the folder's name: a renamed or copied bundle is judged the
same. The fact comes from the run being judged (the golden models' own, or
the golden child's beside an RTL run), noted here per bundle folder; asked
before any run, the golden models run the plan once to learn it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from models.bundle.reader import Bundle

_MEETS_H1: dict[Path, bool] = {}


def note_hazards(b: Bundle, hazards: Iterable[Any]) -> None:
    """Record what the models' run of `b` reported (objects with ``hid``: models/vector/hazards.py)."""
    _MEETS_H1[Path(b.path).resolve()] = any(getattr(h, "hid", None) == "H1" for h in hazards)


def meets_h1(b: Bundle) -> bool:
    """Whether the program reads a predicate inside upstream's stale window (H1) at least once."""
    key = Path(b.path).resolve()
    if key not in _MEETS_H1:
        from models.machine.event_model import run_bundle
        from models.machine.layouts import get_machine

        try:
            note_hazards(b, run_bundle(b, get_machine(b.meta["machine"]["name"])).hazards)
        except (ValueError, AssertionError):  # a plan the models cannot run: judged by its own failure
            _MEETS_H1[key] = False
    return _MEETS_H1[key]


__all__ = ["meets_h1", "note_hazards"]
