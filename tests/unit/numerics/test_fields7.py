"""models.numerics.fields7 (32 seven-bit fields <-> 28 big-endian bytes) against Python-int shifts, and
mxfp7.normalise's one-step form against the loop its docstring states.

Why: the cluster's entry unpacking and the memory agent's QUANT packing both go through fields7, so a slip
there would move the golden model's bits while only the bundles noticed.
"""

from __future__ import annotations

import random

import numpy as np

from models.numerics import mxfp7
from models.numerics.fields7 import pack7, to_signed7, unpack7


def _word(fields: list[int]) -> int:
    """The 224-bit big-endian number whose field n is at [223-7n -: 7]."""
    out = 0
    for f in fields:
        out = out << 7 | (f & 0x7F)
    return out


def test_pack7_and_unpack7_follow_the_bit_positions_in_batches() -> None:
    rng = random.Random(9)
    fields = np.array([[rng.randrange(-64, 128) for _ in range(32)] for _ in range(30)]).reshape(2, 3, 5, 32)
    raw = pack7(fields)
    assert raw.dtype == np.uint8 and raw.shape == (2, 3, 5, 28)
    for idx in np.ndindex(2, 3, 5):
        want = _word([int(v) for v in fields[idx]]).to_bytes(28, "big")
        assert raw[idx].tobytes() == want
    back = unpack7(raw)
    assert back.dtype == np.uint8 and back.tolist() == (fields & 0x7F).tolist()
    assert to_signed7(back).tolist() == np.where((fields & 0x7F) >= 64, (fields & 0x7F) - 128,
                                                 fields & 0x7F).tolist()
    one = bytes(rng.getrandbits(8) for _ in range(28))
    n = int.from_bytes(one, "big")
    assert unpack7(np.frombuffer(one, np.uint8)).tolist() == [(n >> (217 - 7 * k)) & 0x7F for k in range(32)]


def _normalise_loop(e: int, sig: int) -> tuple[int, int]:
    for _ in range(10):
        if 0 < sig < 1024:
            sig, e = sig << 1, e - 1
    return e, sig


def test_normalise_equals_its_loop_on_every_significand() -> None:
    sig = np.arange(0, 2048)
    e = (np.arange(2048) % 31) + 1
    got_e, got_sig = mxfp7.normalise(e, sig)
    want = [_normalise_loop(int(a), int(b)) for a, b in zip(e, sig)]
    assert list(zip(got_e.tolist(), got_sig.tolist())) == want
    s_e, s_sig = mxfp7.normalise(3, 5)
    assert isinstance(s_e, np.ndarray) and (int(s_e), int(s_sig)) == _normalise_loop(3, 5)
