"""A bundle that contradicts itself is refused: the stated inputs and outputs must be what its images hold.

Why: a bundle states each input twice (the logical array ``dram_in.npz
<port>`` and its bytes in the image the program runs on, through
``<port>__slots``) and each output twice per expected set (the logical
``<port>``, its bytes ``<port>__raw`` and the final image ``dram_final``).
The machine runs on the image and is judged through the slot maps, so a
stated input that no longer matches the image would pass unnoticed: the run
is right for an input the bundle does not state. Two statements that
disagree are refused before anything runs, naming both and the first element
where they part. Each check reads only what the format lists
(clients/README.md); the arrays themselves were checked by
models/bundle/arrays.py first.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

from models.bundle.npz import EXPORT_AGAIN
from models.bundle.schema import BundleError


class _Region(Protocol):
    name: str
    kind: str
    addr: int
    nbytes: int


class Bundle(Protocol):
    """What these checks read of models.bundle.reader.Bundle (which calls them: no import back)."""

    meta: dict[str, Any]
    dram_in: dict[str, np.ndarray]
    expected_models: dict[str, np.ndarray]
    expected_rtl: dict[str, np.ndarray]
    has_expected_rtl: bool
    image: np.ndarray
    image_base: int

    @property
    def regions(self) -> Sequence[_Region]: ...

CONTRADICTS = f"the bundle contradicts itself; {EXPORT_AGAIN}"


def _span(b: Bundle, port: str, kind: str) -> tuple[int, int]:
    """The image offsets of `port`'s region (of `kind`), or BundleError when bundle.json gives it none."""
    region = next((r for r in b.regions if r.name == port), None)
    if region is None or region.kind != kind:
        raise BundleError(f"bundle.json: {kind} {port} has no region of kind {kind} in dram.regions; {CONTRADICTS}")
    if region.nbytes % 2:
        raise BundleError(f"bundle.json dram.regions {port}: nbytes {region.nbytes}, expected an even count (FP16 "
                          f"slots); {EXPORT_AGAIN}")
    lo = region.addr - b.image_base
    return lo, lo + region.nbytes


def _first_difference(a: np.ndarray, b: np.ndarray) -> str:
    bad = np.flatnonzero(a.ravel() != b.ravel())
    i = int(bad[0])
    return f"{len(bad)} of {a.size} differ, first at flat index {i}: {int(a.ravel()[i]):#06x} against " \
           f"{int(b.ravel()[i]):#06x}"


def check_inputs(b: Bundle) -> None:
    """Each input `<port>` of dram_in.npz equals the image's bytes at its region through `<port>__slots`
    (both arrays checked against the format first, models/bundle/arrays.py)."""
    arrays = b.dram_in
    for port in b.meta["inputs"]:
        lo, hi = _span(b, port, "input")
        slots = arrays[f"{port}__slots"]  # its dtype, shape and range checked by models/bundle/arrays.py
        stated = arrays[port].view(np.uint16)
        held = b.image[lo:hi].view(np.uint16)[np.where(slots >= 0, slots, 0)]
        keep = slots >= 0
        if not np.array_equal(stated[keep], held[keep]):
            raise BundleError(f"dram_in.npz {port} disagrees with dram_in.npz image at its region (bundle.json "
                              f"dram.regions {port}): {_first_difference(stated[keep], held[keep])} (FP16 bits, "
                              f"stated then imaged); {CONTRADICTS}")


def check_outputs(b: Bundle, arrays: dict[str, np.ndarray], file: str) -> None:
    """Each output's `<port>__raw` equals `dram_final` at its region, and `<port>` those bytes through the
    slot map, where the file holds them (the format lists both)."""
    slots_all = b.expected_models
    for port in b.meta["expected"]:
        lo, hi = _span(b, port, "output")
        final = arrays["dram_final"][lo:hi]
        raw = arrays.get(f"{port}__raw")
        if raw is not None and (raw.dtype != np.uint8 or raw.shape != final.shape):
            raise BundleError(f"{file} {port}__raw: dtype {raw.dtype}, shape {raw.shape}, expected uint8 "
                              f"({hi - lo},) (output {port}'s bytes); {EXPORT_AGAIN}")
        if raw is not None and not np.array_equal(raw, final):
            raise BundleError(f"{file} {port}__raw disagrees with {file} dram_final at its region: "
                              f"{_first_difference(raw, final)}; {CONTRADICTS}")
        value = arrays.get(port)
        slots = slots_all[f"{port}__slots"]
        if value is None or value.dtype != np.float16 or value.shape != slots.shape:
            continue
        keep = slots >= 0
        stated = value.view(np.uint16)[keep]
        held = final.view(np.uint16)[slots[keep]]
        if not np.array_equal(stated, held):
            raise BundleError(f"{file} {port} disagrees with {file} dram_final through {port}__slots: "
                              f"{_first_difference(stated, held)} (FP16 bits, stated then final); {CONTRADICTS}")


def check_consistency(b: Bundle) -> None:
    """Every pair of statements above (BundleError on the first that disagrees)."""
    check_inputs(b)
    check_outputs(b, b.expected_models, "expected.npz")
    if b.has_expected_rtl:
        check_outputs(b, b.expected_rtl, "expected_rtl.npz")


__all__ = ["check_consistency", "check_inputs", "check_outputs"]
