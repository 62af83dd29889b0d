"""Per-id counts of the vector core's HAZARD reports (units.md V.8 H1-H4): the RTL's against the model's.

The RTL brings its counts out as one 128-bit bus, {H4, H3, H2, H1} with 32
bits each (rtl/vector/vc_exec.v ``hazards``); the model keeps a list of reports,
each with its ``hid``. Keeping a count per id means an H2 the RTL missed and
an H3 it invented do not cancel out.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Protocol

HAZARD_IDS: tuple[str, ...] = ("H1", "H2", "H3", "H4")  # the RTL bus order, lowest 32 bits first
COUNT_BITS = 32


class Report(Protocol):
    hid: str


def rtl_counts(bus: int) -> dict[str, int]:
    """The counts on the RTL's packed bus, by id."""
    mask = (1 << COUNT_BITS) - 1
    return {hid: (int(bus) >> (COUNT_BITS * i)) & mask for i, hid in enumerate(HAZARD_IDS)}


def model_counts(reports: Iterable[Report]) -> dict[str, int]:
    """The model's reports counted by id (every id present, zeros included)."""
    n = Counter(r.hid for r in reports)
    return {hid: n.get(hid, 0) for hid in HAZARD_IDS}


def delta(after: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    """Reports between two readings of the RTL's counters (each wraps at 2**32)."""
    return {hid: (after[hid] - before[hid]) % (1 << COUNT_BITS) for hid in HAZARD_IDS}


def count_errors(rtl: Mapping[str, int], model: Mapping[str, int]) -> list[str]:
    """One line per id whose RTL count differs from the model's."""
    return [f"HAZARD {hid} reports: RTL {rtl.get(hid, 0)}, model {model.get(hid, 0)}"
            for hid in HAZARD_IDS if rtl.get(hid, 0) != model.get(hid, 0)]


__all__ = ["COUNT_BITS", "HAZARD_IDS", "count_errors", "delta", "model_counts", "rtl_counts"]
