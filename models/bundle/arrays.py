"""What a compiled bundle's .npz files must hold, and the reader that refuses anything else in one line.

Why: ``dram_in.npz``, ``expected.npz`` and ``expected_rtl.npz`` are a user's
export (clients/README.md). A truncated or corrupt archive, a missing array,
a wrong dtype or shape, or a slot map pointing outside its region must be
refused before anything runs, naming the file, the array, what was expected
and the fix: never a traceback from numpy or zipfile, never a run that reads
the wrong bytes. The expectations are tied to bundle.json (models/bundle/schema.py,
checked first): the image spans ``dram.nbytes`` from ``dram.base``; each
input has the shape its port declares; each output's slot map and float64
reference have the output's shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.bundle.npz import EXPORT_AGAIN
from models.bundle.schema import BundleError


def expect_array(arrays: dict[str, np.ndarray], file: str, key: str, what: str, *, dtype: str,
                 shape: tuple[int, ...] | None, lo: int | None = None, hi: int | None = None) -> np.ndarray:
    """The array `key` of `file`, refused unless it has `dtype` (an exact name, or the kind "integer",
    "floating" or "integer or bool"), `shape` (None: any) and, for integers, values within lo..hi."""
    if key not in arrays:
        raise BundleError(f"{file}: no array {key!r} ({what}); {EXPORT_AGAIN}")
    a = arrays[key]
    kinds = {"integer": "iu", "floating": "f", "integer or bool": "iub"}
    ok = a.dtype.kind in kinds[dtype] if dtype in kinds else a.dtype == np.dtype(dtype)
    if not ok:
        raise BundleError(f"{file} {key}: dtype {a.dtype}, expected {dtype} ({what}); {EXPORT_AGAIN}")
    if shape is not None and a.shape != shape:
        raise BundleError(f"{file} {key}: shape {a.shape}, expected {shape} ({what}); {EXPORT_AGAIN}")
    if a.size and (lo is not None or hi is not None):
        small, big = int(a.min()), int(a.max())
        if (lo is not None and small < lo) or (hi is not None and big > hi):
            raise BundleError(f"{file} {key}: values {small}..{big}, expected {lo}..{hi} ({what}); {EXPORT_AGAIN}")
    return a


def check_dram_in(meta: dict[str, Any], arrays: dict[str, np.ndarray], file: str = "dram_in.npz") -> None:
    """The image, its base address, every input port and every gather map a relayout names."""
    nbytes, base = meta["dram"]["nbytes"], int(meta["dram"]["base"], 16)
    expect_array(arrays, file, "image", f"the initial DRAM bytes, dram.nbytes = {nbytes} of them", dtype="uint8",
                 shape=(nbytes,))
    expect_array(arrays, file, "base", f"image[0]'s byte address, dram.base = {base:#x}", dtype="integer", shape=(),
                 lo=base, hi=base)
    regions = {r["name"]: r for r in meta["dram"]["regions"]}
    for port, spec in meta["inputs"].items():
        shape = tuple(spec["shape"])
        expect_array(arrays, file, port, f"input {port} as declared in bundle.json inputs", dtype=spec["dtype"],
                     shape=shape)
        if port in regions:  # an input without a region of its own: models/bundle/consistency.py refuses it
            slots = regions[port]["nbytes"] // 2
            expect_array(arrays, file, f"{port}__slots", f"input {port}'s slot map: an FP16 slot 0..{slots - 1} of "
                         f"its region or -1 per element, shape as bundle.json inputs.{port}", dtype="integer",
                         shape=shape, lo=-1, hi=slots - 1)
    for i, entry in enumerate(meta["plan"]):
        if entry["kind"] == "host_convert":
            key = entry["gather"].split(":", 1)[1]
            expect_array(arrays, file, key, f"the gather map of plan[{i}], write_nbytes/2 slot indices into "
                         f"read_nbytes/2 slots, -1 for none", dtype="integer", shape=None, lo=-1,
                         hi=entry["read_nbytes"] // 2 - 1)
            if arrays[key].size * 2 != entry["write_nbytes"]:
                raise BundleError(f"{file} {key}: {arrays[key].size} entries, plan[{i}] writes "
                                  f"{entry['write_nbytes']} bytes = {entry['write_nbytes'] // 2} slots; {EXPORT_AGAIN}")


def check_expected(meta: dict[str, Any], arrays: dict[str, np.ndarray], file: str, *, per_port: bool) -> None:
    """The final DRAM bytes; with `per_port` (expected.npz) each output's slot map, float64 reference and
    optional valid mask in the output's shape."""
    nbytes = meta["dram"]["nbytes"]
    expect_array(arrays, file, "dram_final", f"the DRAM bytes after the last round, dram.nbytes = {nbytes}",
                 dtype="uint8", shape=(nbytes,))
    if not per_port:
        return
    regions = {r["name"]: r for r in meta["dram"]["regions"]}
    for port, spec in meta["expected"].items():
        shape = tuple(spec["shape"])
        slots = regions[port]["nbytes"] // 2
        expect_array(arrays, file, f"{port}__slots", f"output {port}'s slot map: an FP16 slot 0..{slots - 1} of its "
                     f"region or -1 per element, shape as bundle.json expected.{port}", dtype="integer", shape=shape,
                     lo=-1, hi=slots - 1)
        expect_array(arrays, file, f"{port}__ref", f"output {port}'s float64 reference, shape as bundle.json "
                     f"expected.{port}", dtype="floating", shape=shape)
        if f"{port}__valid" in arrays:
            expect_array(arrays, file, f"{port}__valid", f"output {port}'s valid mask", dtype="integer or bool",
                         shape=shape)


__all__ = ["check_dram_in", "check_expected", "expect_array"]
