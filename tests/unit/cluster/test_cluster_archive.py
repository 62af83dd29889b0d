"""models.cluster.archive.recheck_tile: an archived drained tile against the cluster model's tile of the
archived operands. The right tile is built here without the model: integer operands with unit scales
(0xA0) and anchor 40 give exact integer dot products, which FP16 holds exactly at these sizes."""

from __future__ import annotations

import numpy as np

from models.cluster.archive import recheck_tile

SCALE_ONE = 0xA0  # E5M3 1.0


def _archive(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 4, size=(4, 32)).astype(np.int8)   # gm = 1: 4 rows; nk = 1: 32 K
    b = rng.integers(-4, 4, size=(32, 4)).astype(np.int8)   # gn = 1: 4 columns
    exact = a.astype(np.int64) @ b.astype(np.int64)          # |dot| <= 512: exact in FP16
    tile = np.array([[np.float16(exact[r, c]).view(np.uint16) for r in range(4) for c in range(4)]],
                    dtype=np.uint16)                          # lane 4r+c = element (r, c)
    return {"a": a, "b": b, "scale_a": np.full((4, 1), SCALE_ONE, np.uint8),
            "scale_b": np.full((1, 4), SCALE_ONE, np.uint8), "shape": np.array([1, 1, 1, 40]), "obs_tile": tile}


def test_the_right_tile_passes() -> None:
    assert recheck_tile(_archive()) == []


def test_a_wrong_lane_is_reported() -> None:
    arrays = _archive()
    arrays["obs_tile"] = arrays["obs_tile"].copy()
    arrays["obs_tile"][0, 5] ^= 1
    assert recheck_tile(arrays) == ["obs_tile differs from models.cluster's GEMM + OP_EMIT of the inputs"]


def test_an_archive_without_its_inputs_is_reported() -> None:
    arrays = _archive()
    del arrays["scale_b"]
    assert recheck_tile(arrays) == ["the tile re-check needs scale_b, absent from the archive"]
