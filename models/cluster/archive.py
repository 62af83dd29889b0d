"""An archived matmul tile re-derived from its inputs: the cluster's half of `python -m tb.lib.artifacts`.

A system test that drains a cluster's GEMM tile into DRAM archives its operands (``a``, ``b``,
``scale_a``, ``scale_b``, ``shape`` = gm, gn, nk, anchor) and the tile it read back (``obs_tile``:
uint16 (gm*gn, 16), sub-tile t = g*gn + h, lane 4r+c = element (r, c)); it registers
:func:`recheck_tile` with the archive, and the re-check recomputes the tile with the cluster model
(GEMM, then OP_EMIT, bit exact) years later, with no simulator.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from models.cluster import ClusterModel, a_entries, b_entries, cu_data_bursts, gemm, granules_of
from models.cu.base import cu_inst
from models.vector.lanes import words_to_u16

TILE_KEYS = ("a", "b", "scale_a", "scale_b", "shape", "obs_tile")
_UNIT, _HOST = (2, 1), (1, 1)  # any two coordinates: the flits only carry the operands to the model


def model_tile(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The FP16 tile the cluster model drains from the archived operands, as uint16 (gm*gn, 16) lanes."""
    gm, gn, nk, anchor = (int(v) for v in arrays["shape"])
    model = ClusterModel(_UNIT)
    a_g = granules_of(a_entries(arrays["a"].astype(np.int64), arrays["scale_a"].astype(np.int64)))
    b_g = granules_of(b_entries(arrays["b"].astype(np.int64), arrays["scale_b"].astype(np.int64)))
    model.receive(cu_data_bursts(_UNIT, _HOST, 0, 0, a_g) + cu_data_bursts(_UNIT, _HOST, 1, 0, b_g))
    model.execute(cu_inst(_UNIT, _HOST, 0, 0, gemm(gm, gn, nk, anchor=anchor)))
    return words_to_u16(model.fp16_tiles(gm * gn))


def recheck_tile(arrays: Mapping[str, np.ndarray]) -> list[str]:
    """One line if the archived tile is not the cluster model's tile of the archived operands."""
    missing = [k for k in TILE_KEYS if k not in arrays]
    if missing:
        return [f"the tile re-check needs {', '.join(missing)}, absent from the archive"]
    if not np.array_equal(model_tile(arrays), arrays["obs_tile"]):
        return ["obs_tile differs from models.cluster's GEMM + OP_EMIT of the inputs"]
    return []


__all__ = ["TILE_KEYS", "model_tile", "recheck_tile"]
