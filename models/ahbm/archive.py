"""An archived AHBM launch re-derived from its inputs: the reference's half of `python -m tb.lib.artifacts`.

A launch's artifacts (written by tb/ahbm/score.py, which registers :func:`recheck_launch` with the
archive) hold its inputs, the O the device stored, and a JSON `launch` entry describing the plan; this
module names those entries and recomputes O from the inputs with the reference kernel, so an archive
can be re-checked years later with the models alone (docs/ahbm.md §11). Nothing here reads a simulator.
"""

from __future__ import annotations

import json
from typing import Mapping

import numpy as np

from .kernel import kv_parallel, ring_prefill

LAUNCH_KEYS = ("launch", "q", "k", "v", "obs_o")  # what every archived launch holds (request 0 of a batch)


def request_suffix(r: int) -> str:
    """Artifact name suffix of request r of a batch (request 0 keeps the single-request names)."""
    return "" if r == 0 else f"_req{r}"


def recheck_launch(arrays: Mapping[str, np.ndarray]) -> list[str]:
    """Re-derive O of an archived launch from its inputs with the reference kernel: one line per O that
    differs from what the device stored."""
    missing = [k for k in LAUNCH_KEYS if k not in arrays]
    if missing:
        return [f"the launch re-check needs {', '.join(missing)}, absent from the archive"]
    meta = json.loads(str(arrays["launch"]))
    if meta.get("ring"):
        ref = ring_prefill(arrays["q"], arrays["k"], arrays["v"], meta["n"], meta.get("q_block"),
                              meta.get("tile"))
        ok = np.array_equal(ref.O, arrays["obs_o"])
        return [] if ok else [f"obs_o differs from models.ahbm.kernel.ring_prefill ({meta['case']})"]
    errors = []
    for r, req in enumerate(meta["requests"]):
        x = request_suffix(r)
        ref = kv_parallel(arrays[f"q{x}"], arrays[f"k{x}"], arrays[f"v{x}"], req["q_start"], meta["n"],
                             req["request_id"], meta["tile"], req["q_block"], tuple(meta["mesh"]))
        if not np.array_equal(ref.O, arrays[f"obs_o{x}"]):
            errors.append(f"obs_o{x} differs from models.ahbm.kernel on the archived inputs ({meta['case']}, "
                          f"request {r})")
    return errors


__all__ = ["LAUNCH_KEYS", "recheck_launch", "request_suffix"]
