"""models/ahbm/dma.py: the DMA timing rule, data and request checks."""

from __future__ import annotations

import random

import pytest

from models.ahbm.dma import (DmaRequest, achieved_bw, request_data, request_error, schedule,
                             slice_words, transfer_cycles, word_offsets)


def test_word_offsets_full_bandwidth() -> None:
    assert word_offsets(256, 64) == [0, 1, 2, 3]


def test_word_offsets_non_multiple_carries_credit() -> None:
    # bw=48: credit 48, 96 (word 0), 80 (word 1), 64+... -> ceil((k+1)*64/48)-1
    assert word_offsets(256, 48) == [1, 2, 3, 5]
    assert transfer_cycles(256, 48) == 6
    assert word_offsets(64, 1) == [63]


def test_word_offsets_rejects_bad_bw() -> None:
    with pytest.raises(ValueError):
        word_offsets(64, 65)
    with pytest.raises(ValueError):
        word_offsets(64, 0)


def test_schedule_single() -> None:
    (t,) = schedule([DmaRequest(0, 128)], [10], bw=64, lat=100)
    assert t.start == 12 and t.end == 14
    assert t.word_cycles == (112, 113) and t.done == 113


def test_schedule_back_to_back_and_gap() -> None:
    reqs = [DmaRequest(0, 640), DmaRequest(640, 64), DmaRequest(0, 64)]
    ts = schedule(reqs, [0, 1, 100], bw=32, lat=5)
    assert (ts[0].start, ts[0].end) == (2, 22)
    assert (ts[1].start, ts[1].end) == (22, 24)   # queued: starts right after
    assert (ts[2].start, ts[2].end) == (102, 104)  # engine idle: i + 2
    assert ts[1].done > ts[0].done and ts[2].done > ts[1].done


def test_schedule_overlap_two_outstanding() -> None:
    ts = schedule([DmaRequest(0, 1024), DmaRequest(1024, 1024)], [0, 1], bw=64, lat=100)
    # the second transfer starts before the first completes (latency hidden)
    assert ts[1].start < ts[0].done
    assert ts[1].done - ts[0].done == 16


def test_schedule_rejects_unsorted() -> None:
    with pytest.raises(ValueError):
        schedule([DmaRequest(0, 64), DmaRequest(0, 64)], [5, 4], 64, 1)
    with pytest.raises(ValueError):
        schedule([DmaRequest(0, 64)], [], 64, 1)


def test_achieved_bw_approaches_bw() -> None:
    for bw in (64, 48, 7):
        short = DmaRequest(0, 64)
        long = DmaRequest(0, 64 * 1024)
        assert achieved_bw([long], schedule([long], [0], bw, 10)) == pytest.approx(bw, rel=0.01)
        assert achieved_bw([short], schedule([short], [0], bw, 10)) <= bw


def test_request_error() -> None:
    assert request_error(DmaRequest(0, 64), 1024) is None
    assert request_error(DmaRequest(960, 64), 1024) is None
    assert request_error(DmaRequest(32, 64), 1024) == "misaligned"
    assert request_error(DmaRequest(0, 100), 1024) == "misaligned"
    assert request_error(DmaRequest(0, 0), 1024) == "misaligned"
    assert request_error(DmaRequest(1024, 64), 1024) == "out of range"
    assert request_error(DmaRequest(960, 128), 1024) == "out of range"


def test_data_little_endian_words() -> None:
    rng = random.Random(3)
    data = bytes(rng.getrandbits(8) for _ in range(512))
    words = slice_words(data)
    assert len(words) == 8
    assert words[0] & 0xFF == data[0] and (words[0] >> 8 * 63) & 0xFF == data[63]
    assert request_data(data, DmaRequest(128, 192)) == words[2:5]
    with pytest.raises(ValueError):
        request_data(data, DmaRequest(448, 128))
