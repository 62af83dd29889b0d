"""tb.lib.artifacts: a run's tests saved one after another land in one numpy archive, each array bit for bit.

The saves append a new test's arrays to the archive (its other tests' are not rewritten); a test saved
again in the same run replaces its own arrays; the first save of a run starts the file afresh.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tb.lib import artifacts


def _save(d: Path, test: str, seed: int, **arrays: np.ndarray) -> None:
    a = artifacts.Artifacts(test, d)
    for name, value in arrays.items():
        a.add(name, value)
    a.save({"seed": seed})


def _bits(x: np.ndarray) -> bytes:
    return x.dtype.str.encode() + str(x.shape).encode() + x.tobytes()


def test_saves_append_and_a_resave_replaces(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    nan_payload = np.array([0x7FA00001, 0xFFC00000, 0x3F800000], np.uint32).view(np.float32)
    saved = {
        "t0": {"obs_o": rng.integers(0, 1 << 16, (4, 16), dtype=np.uint16), "f": nan_payload},
        "t1/n=2": {"obs_o": rng.integers(0, 1 << 16, (2, 16), dtype=np.uint16)},
        "t2": {"n_cnt_exp": np.asarray(7, np.int64), "big": rng.standard_normal(5000).astype(np.float32)},
    }
    for i, (test, arrays) in enumerate(saved.items()):
        _save(tmp_path, test, i, **arrays)
    with np.load(tmp_path / artifacts.FILE_NAME, allow_pickle=False) as z:
        files = list(z.files)
        got = {k: z[k] for k in files}
    for test, arrays in saved.items():
        for name, value in arrays.items():
            assert _bits(got[f"{artifacts.test_key(test)}/{name}"]) == _bits(np.asarray(value)), (test, name)
        assert int(got[f"{artifacts.test_key(test)}/seed"]) == list(saved).index(test)
    assert files[0].startswith("t0/") and files[-1].startswith("t2/")  # in the order the tests ran

    _save(tmp_path, "t1/n=2", 9, obs_o=np.zeros((1, 16), np.uint16))  # the same test again: its arrays replaced
    with np.load(tmp_path / artifacts.FILE_NAME, allow_pickle=False) as z:
        assert z["t1.n=2/obs_o"].shape == (1, 16) and int(z["t1.n=2/seed"]) == 9
        assert _bits(z["t0/f"]) == _bits(nan_payload) and "t2/big" in z.files
        assert sum(k.startswith("t1.n=2/") for k in z.files) == 3  # obs_o, meta, seed: none of the old left


def test_the_bit_comparison_sees_one_flipped_bit() -> None:
    a = np.array([0x7FA00001], np.uint32).view(np.float32)
    b = np.array([0x7FA00003], np.uint32).view(np.float32)
    assert _bits(a) != _bits(b)  # both NaN, so an equality of values would not see it
