"""The AHBM artifacts re-check (models.ahbm.archive.recheck_launch via
tb.lib.artifacts.recheck) passes a faithful archive and flags a corrupted O."""

from __future__ import annotations

import json

import numpy as np

from models.ahbm import kernel
from models.ahbm.archive import recheck_launch
from tb.lib import artifacts


def _bf16(rng, *shape):
    return (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _archive(ring: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    if ring:
        q, k, v = _bf16(rng, 8, 11, 32), _bf16(rng, 11, 32), _bf16(rng, 11, 32)
        o = kernel.ring_prefill(q, k, v, 2).O
        meta = {"case": "ring", "ring": True, "n": 2}
    else:
        out = {}
        reqs = []
        for r, (counter, rid) in enumerate(((40, 3), (29, 6))):      # a batch of two requests
            q, k, v = _bf16(rng, 8, 1, 32), _bf16(rng, counter, 32), _bf16(rng, counter, 32)
            x = "" if r == 0 else f"_req{r}"
            out.update({f"q{x}": q, f"k{x}": k, f"v{x}": v,
                        f"obs_o{x}": kernel.kv_parallel(q, k, v, counter - 1, 4, rid, 8, None, (2, 4)).O})
            reqs.append({"counter": counter, "q_start": counter - 1, "tq": 1, "request_id": rid, "q_block": None})
        meta = {"case": "decode", "n": 4, "tile": 8, "mesh": [2, 4], "requests": reqs}
        return {**out, "launch": np.asarray(json.dumps(meta))}
    return {"q": q, "k": k, "v": v, "obs_o": o, "launch": np.asarray(json.dumps(meta))}


def test_recheck_passes_and_fails(tmp_path):
    for ring in (False, True):
        arrays = _archive(ring)
        assert recheck_launch(arrays) == []
        for key in [x for x in arrays if x.startswith("obs_o")]:   # every request's O is re-derived
            bad = dict(arrays)
            bad[key] = arrays[key].copy()
            bad[key].flat[5] ^= 1
            assert len(recheck_launch(bad)) == 1
    art = artifacts.Artifacts("t", tmp_path)
    for k, val in bad.items():
        art.add(k, val)
    art.recheck_with(recheck_launch)           # what tb/ahbm/score.py registers with a launch's archive
    checks, errors = artifacts.recheck(art.save({}))
    assert checks == 1 and len(errors) == 1 and "differs" in errors[0]


def test_an_archive_without_its_inputs_is_reported() -> None:
    arrays = _archive(ring=True)
    del arrays["k"]
    assert recheck_launch(arrays) == ["the launch re-check needs k, absent from the archive"]
