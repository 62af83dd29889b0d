"""models.numerics.mxfp7 (units.md M.3 + C.4) against a scalar reference written here from the spec text.

The reference below does not import the module: plain Python integers, one
element at a time, the sm thresholds as the list the spec prints (not the
ceil formula the module uses), the reciprocal table as the spec's literal, and
the C.4 field positions as shifts. The model must equal it on every word of
>= 10^4 entries drawn by tb/mag/mxfp7_stim.py (random patterns with NaN and
Inf, subnormal lanes, all-zero lanes, peaks on every threshold, clamped tiny
lanes, codes at 63, vanishing elements), in both packings. The element rule
is also compared alone under every scale byte, which reaches the branches no
real peak leads to (t < 0, the saturation at 63). A checker is only as good as
its failures, so the last tests plant errors and watch them reported.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.numerics import mxfp7
from models.numerics.layout import unpack_a_entry, unpack_b_entry
from tb.mag.mxfp7_stim import THRESHOLD_SIGS, lanes_to_entries, peak_sweep_entries, random_entries

N_RANDOM = 12_000

# ---------------------------------------------------------------- the reference, from the spec text
SPEC_REC = {8: 4096, 9: 3641, 10: 3277, 11: 2979, 12: 2731, 13: 2520, 14: 2341, 15: 2185}
SPEC_THRESHOLDS = (1134, 1260, 1386, 1512, 1638, 1764)


def ref_dec(h: int) -> tuple[int, int]:
    e5, m10 = (h >> 10) & 0x1F, h & 0x3FF
    return (1, m10) if e5 == 0 else (e5, 1024 + m10)


def ref_lane_scale(lane: list[int], rec_table: dict[int, int] = SPEC_REC) -> tuple[int, int, int]:
    """(sexp, sm, scale byte) of one lane of 32 FP16 patterns."""
    peak = max(h & 0x7FFF for h in lane)
    e, sig = ref_dec(peak)
    while 0 < sig < 1024:
        sig <<= 1
        e -= 1
    if sig == 0:
        sexp, sm = 0, 8
    elif sig > 1890:
        sexp, sm = e - 20, (9 if sig > 2016 else 8)
    else:
        sexp, sm = e - 21, 9
        for th in SPEC_THRESHOLDS:          # strictly greater -> next value
            if sig > th:
                sm += 1
    sexp = min(11, max(-20, sexp))
    return sexp, sm, (((sexp + 20) & 0x1F) << 3) | ((sm - 8) & 0x7)


def ref_element(h: int, sexp: int, sm: int, rec_table: dict[int, int] = SPEC_REC) -> int:
    """The 7-bit two's-complement code of one element."""
    e, sig = ref_dec(h & 0x7FFF)
    t = (sexp + 21) - e
    if sig == 0 or t >= 8:
        return 0
    if t < 0:
        mag = 63
    else:
        x = (sig * rec_table[sm] // 2 ** 15) % 256
        x = x // 2 ** t
        mag = min(63, x // 2 + x % 2)
    return (-mag if h >> 15 else mag) & 0x7F


def ref_entry(raw: bytes, blayout: int, rec_table: dict[int, int] = SPEC_REC) -> list[int]:
    """The four response words of one 256-byte entry."""
    h = [[raw[64 * lane + 2 * k] | raw[64 * lane + 2 * k + 1] << 8 for k in range(32)] for lane in range(4)]
    codes, scales = [], []
    for lane in range(4):
        sexp, sm, byte = ref_lane_scale(h[lane])
        codes.append([ref_element(v, sexp, sm, rec_table) for v in h[lane]])
        scales.append(byte)
    words = []
    for w in range(4):
        word = 0
        for j in range(32):
            lane, k = (j // 8, 8 * w + j % 8) if not blayout else (j % 4, 8 * w + j // 4)
            word |= codes[lane][k] << (249 - 7 * j)          # field j at [255-7j : 249-7j]
        for lane in range(4):
            word |= scales[lane] << (24 - 8 * lane)          # scale byte at [31-8L : 24-8L]
        words.append(word)
    return words


# ---------------------------------------------------------------- the checker both sides go through
def mismatches(entries: np.ndarray, blayout: np.ndarray, got: list[list[int]], want: list[list[int]],
               limit: int = 5) -> list[str]:
    bad = []
    for i, (g, w) in enumerate(zip(got, want)):
        for word in range(4):
            if g[word] != w[word]:
                bad.append(f"entry {i} (BLAYOUT {int(blayout[i])}) word {word}: model {g[word]:064x} "
                           f"reference {w[word]:064x} (xor {g[word] ^ w[word]:064x}); "
                           f"entry bytes {entries[i].tobytes().hex()}")
    if len(got) != len(want):
        bad.append(f"{len(got)} entries from the model, {len(want)} from the reference")
    return bad[:limit] + ([f"... {len(bad) - limit} more"] if len(bad) > limit else [])


def model_words(entries: np.ndarray, blayout: np.ndarray) -> list[list[int]]:
    return mxfp7.word_ints(mxfp7.quantise_entries(entries, blayout))


@pytest.fixture(scope="module")
def random_set() -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    rng = np.random.default_rng(20250601)
    entries = random_entries(rng, N_RANDOM)
    blayout = rng.integers(0, 2, N_RANDOM).astype(bool)
    want = [ref_entry(e.tobytes(), int(b)) for e, b in zip(entries, blayout)]
    return entries, blayout, want


# ---------------------------------------------------------------- model = reference
def test_model_equals_reference_on_random_entries(random_set) -> None:
    entries, blayout, want = random_set
    bad = mismatches(entries, blayout, model_words(entries, blayout), want)
    assert not bad, "\n".join(bad)
    assert len(want) >= 10_000 and blayout.any() and not blayout.all()


def test_random_set_reaches_every_case(random_set) -> None:
    """The stimulus is only as good as what it reaches: count each case of M.3 in it."""
    entries, _, _ = random_set
    h = mxfp7.entry_halves(entries)
    peak = (h.astype(np.int64) & 0x7FFF).max(-1)
    e, sig = mxfp7.normalise(*mxfp7.decode(peak))
    scale = mxfp7.lane_scale(h)
    q, _ = mxfp7.quantise(h)
    seen = {
        "zero lanes": int((peak == 0).sum()),
        "subnormal peaks": int(((peak > 0) & (peak < 1024)).sum()),
        "clamped at -20": int(((sig > 0) & (np.where(sig > 1890, e - 20, e - 21) < -20)).sum()),
        "Inf/NaN peaks": int((peak >= 0x7C00).sum()),
        "codes +63": int((q == 63).sum()),
        "codes -63": int((q == -63).sum()),
        "zeroed non-zero elements": int(((q == 0) & ((h & 0x7FFF) != 0)).sum()),
        "negative zeros": int((h == 0x8000).sum()),
    }
    for s in THRESHOLD_SIGS:
        seen[f"peak sig {s}"] = int((sig == s).sum())
    for sm in range(8, 16):
        seen[f"sm {sm}"] = int(((scale & 7) == sm - 8).sum())
    thin = {k: v for k, v in seen.items() if v < 20}
    assert not thin, f"the random set reaches these cases fewer than 20 times: {thin}"


def test_model_equals_reference_on_every_peak() -> None:
    """Every 15-bit magnitude as a lane peak once (8192 entries), both packings."""
    entries = peak_sweep_entries(np.random.default_rng(5))
    for b in (False, True):
        flags = np.full(len(entries), b)
        want = [ref_entry(e.tobytes(), int(b)) for e in entries[:: 7]]     # the reference is slow: a 1/7 sample
        bad = mismatches(entries[:: 7], flags[:: 7], model_words(entries[:: 7], flags[:: 7]), want)
        assert not bad, "\n".join(bad)
    scales = mxfp7.lane_scale(mxfp7.entry_halves(entries)).reshape(-1)
    peaks = (mxfp7.entry_halves(entries).astype(np.int64) & 0x7FFF).max(-1).reshape(-1)
    ref = np.array([ref_lane_scale([p])[2] for p in range(1 << 15)])
    assert np.array_equal(scales, ref[peaks])                          # every peak's scale byte


def test_element_rule_under_every_scale_byte() -> None:
    """Any scale byte with any FP16 pattern: reaches t < 0 and the saturation, unreachable from real peaks."""
    rng = np.random.default_rng(11)
    h = rng.integers(0, 1 << 16, 60_000)
    scale = rng.integers(0, 256, 60_000)
    got = mxfp7.quantise_elements(h, scale).astype(np.int64) & 0x7F
    sexp, sm = scale >> 3, scale & 7
    want = np.array([ref_element(int(a), int(b) - 20, int(c) + 8) for a, b, c in zip(h, sexp, sm)])
    assert np.array_equal(got, want)
    t = (sexp + 1) - mxfp7.decode(h & 0x7FFF)[0]
    assert ((t < 0) & ((h & 0x7FFF) != 0)).sum() > 1000
    x = (mxfp7.decode(h & 0x7FFF)[1] * mxfp7.RECIPROCAL[sm] >> 15) & 0xFF
    assert ((t == 0) & (x >= 127)).sum() > 100                       # the min(63, ...) bites


# ---------------------------------------------------------------- the spec's facts, pinned
def test_zero_lane_scale_is_a0() -> None:
    lanes = np.zeros((1, 4, 32), np.uint16)
    lanes[0, 1] = 0x8000                                               # -0: magnitude bits are zero too
    lanes[0, 2, 5] = 0x3C00                                            # one non-zero lane
    words = mxfp7.word_ints(mxfp7.quantise_entries(lanes_to_entries(lanes), False))[0]
    for w in words:
        assert (w >> 24) & 0xFF == 0xA0 and (w >> 16) & 0xFF == 0xA0 and w & 0xFF == 0xA0
        assert (w >> 8) & 0xFF != 0xA0
    assert mxfp7.ZERO_LANE_SCALE == 0xA0 and ref_lane_scale([0] * 32)[2] == 0xA0


def test_reciprocal_table_13_is_2520() -> None:
    assert dict(zip(range(8, 16), mxfp7.RECIPROCAL.tolist())) == SPEC_REC
    assert mxfp7.RECIPROCAL[13 - 8] == 2520 != round(32768 / 13)
    assert all(mxfp7.RECIPROCAL[sm - 8] == round(32768 / sm) for sm in range(8, 16) if sm != 13)


@pytest.mark.parametrize("sig,sm,sexp_off", [(1024, 9, -21), (1134, 9, -21), (1135, 10, -21), (1764, 14, -21),
                                             (1765, 15, -21), (1890, 15, -21), (1891, 8, -20), (2016, 8, -20),
                                             (2017, 9, -20), (2047, 9, -20)])
def test_thresholds(sig: int, sm: int, sexp_off: int) -> None:
    e5 = 15
    lane = np.zeros((1, 1, 32), np.uint16)
    lane[0, 0, 3] = (e5 << 10) | (sig - 1024)
    byte = int(mxfp7.lane_scale(lane)[0, 0])
    assert (byte & 7) + 8 == sm and (byte >> 3) - 20 == e5 + sexp_off


def test_one_worked_value() -> None:
    """1.0 alone in a lane: sexp -6, sm 9 -> scale 0x71; x = 1024*3641>>15 = 113, t = 0 -> 56 + 1 = 57."""
    lane = np.zeros((1, 1, 32), np.uint16)
    lane[0, 0, 0], lane[0, 0, 1], lane[0, 0, 2] = 0x3C00, 0xBC00, 0x3800
    q, s = mxfp7.quantise(lane)
    assert int(s[0, 0]) == 0x71 and q[0, 0, :3].tolist() == [57, -57, 28]   # 0.5: x = 113 >> 1 = 56 -> 28


def test_packing_against_the_cluster_layout() -> None:
    """C.4 positions read back by models.numerics.layout (the cluster's L1 reader), and scales in all 4 words."""
    rng = np.random.default_rng(3)
    q = rng.integers(-63, 64, (4, 32)).astype(np.int8)
    s = rng.integers(0, 256, 4).astype(np.uint8)
    wa = mxfp7.word_ints(mxfp7.pack_words(q, s, False))
    wb = mxfp7.word_ints(mxfp7.pack_words(q, s, True))
    a, sa = unpack_a_entry(wa)
    b, sb = unpack_b_entry(wb)
    assert np.array_equal(a, q) and np.array_equal(b, q.T) and np.array_equal(sa, s) and np.array_equal(sb, s)
    for w in wa + wb:
        assert [(w >> (24 - 8 * lane)) & 0xFF for lane in range(4)] == s.tolist()


def test_vectorised_shapes_and_dram_words() -> None:
    rng = np.random.default_rng(8)
    entries = random_entries(rng, 6)
    batched = mxfp7.quantise_entries(entries.reshape(2, 3, 256), np.array([[0, 1, 0], [1, 1, 0]], bool))
    flat = [mxfp7.word_ints(mxfp7.quantise_entries(e, b)) for e, b in zip(entries, [0, 1, 0, 1, 1, 0])]
    assert mxfp7.word_ints(batched) == [flat[:3], flat[3:]]
    words8 = [int.from_bytes(entries[4, 32 * j:32 * j + 32].tobytes(), "little") for j in range(8)]
    assert mxfp7.quantise_dram_words(words8, True) == flat[4] == ref_entry(entries[4].tobytes(), 1)
    with pytest.raises(ValueError):
        mxfp7.quantise_dram_words(words8[:7], False)


# ---------------------------------------------------------------- the checker fails on planted errors
def test_checker_reports_a_planted_bit_error(random_set) -> None:
    entries, blayout, want = random_set
    got = model_words(entries[:50], blayout[:50])
    got[17][2] ^= 1 << 200
    bad = mismatches(entries[:50], blayout[:50], got, want[:50])
    assert len(bad) == 1 and bad[0].startswith("entry 17") and "word 2" in bad[0]


def test_reference_with_2521_differs_on_the_random_set(random_set) -> None:
    """Were 13 -> 2521 (the rounded reciprocal), some entries of the set would change: the fact is tested."""
    entries, blayout, want = random_set
    wrong = {**SPEC_REC, 13: 2521}
    hits = sum(ref_entry(entries[i].tobytes(), int(blayout[i]), wrong) != want[i] for i in range(3000))
    assert hits > 0
