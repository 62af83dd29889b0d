"""models/ahbm/ipcq.py: framing, one-link queue semantics, geometry, bench traffic, scoreboard."""

from __future__ import annotations

import random

import pytest

from models.ahbm.ipcq import (
    DIR_NAMES, E, KIND_MLO, N, S, W, Header, IpcqQueue, MeshShape, check_framing, choose_dir,
    expected_traffic, frame, mix32, mlo_words, opposite, packet, pkt_len, score_links,
)


def test_header_round_trip_and_limits() -> None:
    h = Header(length=520, kind=KIND_MLO, src=7, tag=0xABCD)
    assert Header.unpack(h.pack()) == h
    assert h.pack() & 0xFFFF == 520
    with pytest.raises(ValueError):
        Header(1 << 16, 0, 0, 0).pack()
    with pytest.raises(ValueError):
        Header(1, 0, 256, 0).pack()


def test_frame_marks_last_and_refuses_a_wrong_length() -> None:
    words = frame(Header(3, 1, 0, 0), [10, 11, 12])
    assert [last for _, last in words] == [0, 0, 0, 1]
    assert frame(Header(0, 1, 0, 0), []) == [(Header(0, 1, 0, 0).pack(), 1)]
    with pytest.raises(ValueError):
        frame(Header(2, 1, 0, 0), [1])


def test_framing_checker_accepts_good_and_catches_bad() -> None:
    good = frame(Header(2, 1, 0, 0), [5, 6]) + frame(Header(0, 1, 0, 1), [])
    assert check_framing(good) == []
    early = [(Header(2, 1, 0, 0).pack(), 0), (5, 1)]
    assert len(check_framing(early)) == 1
    late_hdr = [(Header(2, 1, 0, 0).pack(), 1)]
    assert len(check_framing(late_hdr)) == 1


def test_mlo_payload_size() -> None:
    # d=128, G=8, fp32: 8*128 O + 8 m + 8 l = 1040 words of 32 bits = 520 of 64 bits
    assert mlo_words() == 520
    assert mlo_words(d_head=128, g=8, t_q=1, width=32) == 1040


def test_queue_blocks_when_full_and_never_overwrites() -> None:
    q = IpcqQueue(depth=3)
    assert q.push(1, 0) and q.push(2, 0) and q.push(3, 0)
    assert not q.ready and q.pkt_avail          # full counts as available (over-long packet)
    assert not q.push(99, 1)                     # refused, nothing stored
    assert q.pop() == (1, 0)
    assert q.push(4, 1)
    assert [q.pop() for _ in range(3)] == [(2, 0), (3, 0), (4, 1)]
    assert not q.pkt_avail
    with pytest.raises(IndexError):
        q.pop()


def test_queue_pkt_avail_follows_complete_packets() -> None:
    q = IpcqQueue(depth=8)
    q.push(1, 0)
    assert not q.pkt_avail                       # header only: packet incomplete
    q.push(2, 1)
    assert q.pkt_avail
    q.pop()
    assert q.pkt_avail
    q.pop()
    assert not q.pkt_avail


def test_queue_random_against_fifo_order() -> None:
    rng = random.Random(5)
    q = IpcqQueue(depth=4)
    sent, got = [], []
    for i in range(2000):
        if rng.random() < 0.6 and q.push(i, rng.random() < 0.3):
            sent.append(i)
        if rng.random() < 0.5 and q.q:
            got.append(q.pop()[0])
    while q.q:
        got.append(q.pop()[0])
    assert got == sent


def test_geometry_2x4() -> None:
    sh = MeshShape(2, 4)
    assert sh.num_pe == 8
    assert sh.neighbour(0, N) is None and sh.neighbour(0, W) is None
    assert sh.neighbour(0, E) == 1 and sh.neighbour(0, S) == 4
    assert sh.neighbour(7, E) is None and sh.neighbour(7, N) == 3
    for p in range(8):
        for d in range(4):
            q = sh.neighbour(p, d)
            if q is not None:
                assert sh.neighbour(q, opposite(d)) == p
    assert sh.nb_mask(0) == (1 << E) | (1 << S)
    assert DIR_NAMES[W] == "W"


def test_mix32_known_values_and_range() -> None:
    assert mix32(0) == 0
    assert mix32(1) == mix32(1 + (1 << 32))
    assert all(0 <= mix32(x) < 1 << 32 for x in range(0, 1 << 20, 4099))


def test_choose_dir_only_picks_existing_neighbours() -> None:
    sh = MeshShape(2, 4)
    for p in range(8):
        dirs = {choose_dir(123, p, k, sh.nb_mask(p)) for k in range(200)}
        assert all(sh.neighbour(p, d) is not None for d in dirs)
        assert len(dirs) == bin(sh.nb_mask(p)).count("1")   # every neighbour gets traffic
    with pytest.raises(ValueError):
        choose_dir(1, 0, 0, 0)


def test_packet_lengths_within_bound_and_framed() -> None:
    for seq in range(100):
        n = pkt_len(77, 3, E, seq, 12)
        assert 0 <= n <= 12
        words = packet(77, 3, E, seq, 12)
        assert len(words) == n + 1 and check_framing(words) == []
        assert Header.unpack(words[0][0]) == Header(n, 0x5A, 3, seq)


def test_expected_traffic_conserves_packets() -> None:
    sh = MeshShape(2, 4)
    exp = expected_traffic(sh, 99, 50, 12)
    assert sum(len(v) for v in exp.values()) == 8 * 50
    for (p, d), pkts in exp.items():
        if sh.neighbour(p, d) is None:
            assert pkts == []
        seqs = [s for _, s, _ in pkts]
        assert seqs == list(range(len(seqs)))       # in order per (source, direction)
        assert all(src == sh.neighbour(p, d) for src, _, _ in pkts)
    with pytest.raises(ValueError):
        expected_traffic(sh, 1, 4096, 12)
    with pytest.raises(ValueError):
        expected_traffic(sh, 1, 10, 1024)


def test_score_links_passes_and_fails() -> None:
    sh = MeshShape(2, 4)
    exp = expected_traffic(sh, 5, 30, 12)
    rx = [len(exp[(p, d)]) for p in range(8) for d in range(4)]
    zero = [0] * 32
    n, errs = score_links(sh, exp, rx, zero, zero)
    assert n == 96 and errs == []
    busy = next(i for i, c in enumerate(rx) if c)
    lost = list(rx)
    lost[busy] -= 1
    assert [e.split()[0] for e in score_links(sh, exp, lost, zero, zero)[1]] == ["LOST"]
    extra = list(rx)
    extra[busy] += 1
    assert [e.split()[0] for e in score_links(sh, exp, extra, zero, zero)[1]] == ["SURPLUS"]
    bad = list(zero)
    bad[busy] = 1
    assert [e.split()[0] for e in score_links(sh, exp, rx, bad, zero)[1]] == ["CORRUPT/REORDER"]
    assert [e.split()[0] for e in score_links(sh, exp, rx, zero, bad)[1]] == ["STATUS"]
