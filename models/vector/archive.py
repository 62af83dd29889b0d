"""An archived saturating double re-derived from its input lanes: the vector core's half of
`python -m tb.lib.artifacts`.

The FP16 saturation scenarios (tb/system/test_mm_mesh_sys.py: test_fp16_saturation,
test_reference_epilogue) run VADD v+v then VST on FP16 lanes and archive what the machine stored,
``obs_doubled`` (uint16 lanes), beside the lanes it doubled (``obs_tile``, else ``in_words``); they
register :func:`recheck_doubled`, which holds ``obs_doubled`` against :func:`fp16_doubled` of those lanes,
lane by lane: the machine's output against the rule, recomputed from the archived input alone. (Their
``exp_doubled`` is the rule as the run computed it, held against ``obs_doubled`` by the archive's exp/obs
pair check; the re-check does not trust it.)
"""

from __future__ import annotations

from typing import Mapping

import numpy as np


def fp16_doubled(h: int) -> int:
    """FP16 x 2 rounded once, saturating at +-65504 (0x7bff/0xfbff): the vector core's VADD v+v then VST."""
    sign, mag = h & 0x8000, h & 0x7FFF
    if mag >= 0x7C00:  # Inf/NaN are never produced by the benches' inputs; keep them as they are
        return h
    if mag < 0x0400:  # subnormal or zero: doubling is exact (may become the smallest normal)
        return sign | (mag << 1)
    exp = mag >> 10
    return sign | (0x7BFF if exp + 1 >= 0x1F else mag + 0x0400)


def doubled_lanes(lanes: np.ndarray) -> np.ndarray:
    """fp16_doubled over an array of uint16 lanes."""
    return np.vectorize(fp16_doubled, otypes=[np.uint16])(np.asarray(lanes).astype(np.int64))


def recheck_doubled(arrays: Mapping[str, np.ndarray]) -> list[str]:
    """One line if ``obs_doubled`` (what the machine stored) is not the saturating FP16 double of the archived
    input lanes."""
    src = arrays.get("obs_tile", arrays.get("in_words"))
    if src is None or "obs_doubled" not in arrays:
        return ["the doubling re-check needs obs_doubled and its input lanes (obs_tile or in_words), absent "
                "from the archive"]
    if not np.array_equal(doubled_lanes(src), arrays["obs_doubled"]):
        return ["obs_doubled is not the saturating FP16 double of the input lanes"]
    return []


__all__ = ["doubled_lanes", "fp16_doubled", "recheck_doubled"]
