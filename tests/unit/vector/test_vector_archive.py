"""models.vector.archive: the saturating FP16 double (VADD v+v, then VST) and its archive re-check."""

from __future__ import annotations

import numpy as np

from models.vector.archive import fp16_doubled, recheck_doubled


def test_fp16_doubled_saturates() -> None:
    assert fp16_doubled(0xF8BB) == 0xFBFF
    assert fp16_doubled(0x78BB) == 0x7BFF
    assert fp16_doubled(0x3C00) == 0x4000
    assert fp16_doubled(0x8000) == 0x8000
    assert fp16_doubled(0x0200) == 0x0400
    for h in range(0, 0x7800, 97):  # below the top binade doubling is exact
        assert np.uint16(fp16_doubled(h)).view(np.float16) == 2 * np.uint16(h).view(np.float16)


def test_recheck_doubled_passes_and_fails() -> None:
    src = np.array([[0x3C00, 0x78BB, 0xF8BB, 0x0200] * 4], dtype=np.uint16)
    want = np.array([[0x4000, 0x7BFF, 0xFBFF, 0x0400] * 4], dtype=np.uint16)  # by hand: x2, saturating
    assert recheck_doubled({"in_words": src, "obs_doubled": want}) == []
    assert recheck_doubled({"obs_tile": src, "obs_doubled": want}) == []
    wrong = want.copy()
    wrong[0, 1] = 0x7C00  # infinity where the store saturates
    assert recheck_doubled({"in_words": src, "obs_doubled": wrong}) == [
        "obs_doubled is not the saturating FP16 double of the input lanes"]
    assert "absent from the archive" in recheck_doubled({"obs_doubled": want})[0]
