"""Unit tests of the memory agent model (models/mag/model.py: MagModel and MagUnit) and the DRAM file helpers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from models.noc.flit import FlitType, pack_fields, unpack_flit
from models.mag.model import (
    DramImage, MagModel, MagRequestError, MagUnit, NotForThisAgent, OutsideDram, Prediction, StagingAperture,
    UndefinedFlags, WriteProtocolError, decode_descriptor, descriptor_payload, pack_peer, rd_req, unpack_peer,
    wr_data, wr_req,
)
from models.numerics import mxfp7
from tb.mag.dram import hex_lines_to_bytes, words_to_hex_lines
from tb.mag.mxfp7_stim import random_entries

MAG = (0, 1)
A, B, C = (1, 1), (2, 1), (1, 0)


def _model(words: int = 256, seed: int = 1) -> MagModel:
    rng = random.Random(seed)
    dram = DramImage(words)
    dram.load_words(0, [rng.getrandbits(256) for _ in range(words)])
    return MagModel(MAG, dram)


def _captures(pred: Prediction) -> list[tuple[tuple[int, int], int, int]]:
    """Every predicted flit captured at its destination, streams in predicted order."""
    out = []
    for dst, streams in pred.streams.items():
        for s in streams.values():
            out += [(dst, i, f) for i, f in enumerate(s)]
    return out


# ---------------------------------------------------------------- descriptors
def test_descriptor_field_positions() -> None:
    p = descriptor_payload(0xAB_CDEF_0123, 0x45, flags=0x40, count=0x67, peers=[(1, 2), (3, 4)], entry_words=0x89)
    assert (p >> 216) & ((1 << 40) - 1) == 0xAB_CDEF_0123
    assert (p >> 208) & 0xFF == 0x45
    assert (p >> 200) & 0xFF == 0x40
    assert (p >> 192) & 0xFF == 0x67
    assert (p >> 168) & 0xFFFFFF == 0x43_21       # peer 0 in the low byte, y first
    assert (p >> 166) & 0x3 == 2
    assert (p >> 158) & 0xFF == 0x89
    assert p & ((1 << 158) - 1) == 0
    d = decode_descriptor(p)
    assert d.stream and d.peers() == [(1, 2), (3, 4)] and d.word == 0xAB_CDEF_0123 >> 5


def test_peer_byte_is_y_first() -> None:
    assert pack_peer((3, 5)) == 0x53
    assert unpack_peer(0x53) == (3, 5)
    with pytest.raises(ValueError):
        descriptor_payload(0, peers=[(1, 1)] * 4)


# ---------------------------------------------------------------- reads
def test_plain_read_beats_txn_last_and_src() -> None:
    m = _model()
    pred = m.run({A: [rd_req(MAG, A, 0x42, (10 << 5) | 17, 3)]})   # low address bits are ignored
    flits = [unpack_flit(f) for f in pred.streams[A][("rd", A)]]
    assert [f.payload for f in flits] == m.dram.words(10, 4)
    assert all(f.type == FlitType.MEM_RD_RESP and f.txn == 0x42 and f.rsvd == 0 for f in flits)
    assert [f.last for f in flits] == [0, 0, 0, 1]
    assert all(f.src == MAG and f.dst == A for f in flits)


def test_stream_read_entries_txn_rsvd_last() -> None:
    m = _model()
    pred = m.run({A: [rd_req(MAG, A, 0xFE, 20 << 5, 99, stream=True, count=3, entry_words=2)]})
    flits = [unpack_flit(f) for f in pred.flits_for(A)]
    assert [f.txn for f in flits] == [0xFE, 0xFE, 0xFF, 0xFF, 0x00, 0x00]   # wraps mod 256
    assert [f.rsvd for f in flits] == [0, 1] * 3
    assert [f.last for f in flits] == [0, 1] * 3
    assert [f.payload for f in flits] == m.dram.words(20, 6)                   # len is ignored


@pytest.mark.parametrize("count,ew,entries,size", [(0, 0, 1, 4), (1, 5, 1, 4), (2, 255, 2, 4), (4, 1, 4, 1)])
def test_stream_defaults(count: int, ew: int, entries: int, size: int) -> None:
    pred = _model().run({A: [rd_req(MAG, A, 0, 0, stream=True, count=count, entry_words=ew)]})
    assert len(pred.flits_for(A)) == entries * size


def test_multicast_every_entry_to_every_destination_in_turn() -> None:
    m = _model()
    pred = m.run({A: [rd_req(MAG, A, 5, 0, stream=True, count=2, entry_words=2, peers=[B, C])]})
    for dst in (A, B, C):
        flits = [unpack_flit(f) for f in pred.streams[dst][("rd", A)]]
        assert [f.payload for f in flits] == m.dram.words(0, 4)
        assert [f.txn for f in flits] == [5, 5, 6, 6] and all(f.dst == dst for f in flits)
    assert pred.total == 12


# ---------------------------------------------------------------- writes
def test_writes_bind_by_source_and_apply_after_the_run() -> None:
    m = _model()
    old = m.dram.word(100)
    sent = {
        A: [wr_req(MAG, A, 1, 100 << 5, 1), wr_data(MAG, A, 0xA0, False), wr_data(MAG, A, 0xA1, True)],
        B: [wr_req(MAG, B, 2, 110 << 5, 0), wr_data(MAG, B, 0xB0, True)],
    }
    pred = m.run(sent)
    assert m.dram.words(100, 2) == [0xA0, 0xA1] and m.dram.word(110) == 0xB0 and old != 0xA0
    ack = unpack_flit(pred.streams[A][("ack", A)][0])
    assert (ack.type, ack.txn, ack.last, ack.payload, ack.src) == (FlitType.MEM_WR_ACK, 1, 1, 0, MAG)
    assert not pred.violations


def test_read_and_write_of_one_word_in_one_run_is_refused() -> None:
    m = _model()
    with pytest.raises(ValueError, match="split the run"):
        m.run({A: [wr_req(MAG, A, 1, 7 << 5, 0), wr_data(MAG, A, 1, True)], B: [rd_req(MAG, B, 0, 7 << 5)]})
    with pytest.raises(ValueError, match="disjoint"):
        m.run({A: [wr_req(MAG, A, 1, 7 << 5, 0), wr_data(MAG, A, 1, True)],
               B: [wr_req(MAG, B, 1, 7 << 5, 0), wr_data(MAG, B, 2, True)]})


@pytest.mark.parametrize("case", ["len", "no_open", "second", "last", "rd_past", "wr_past"])
def test_faults_are_predicted_as_violations(case: str) -> None:
    m = _model(words=64)
    flits = {
        "len": [wr_req(MAG, A, 1, 0, 8)] + [wr_data(MAG, A, i, i == 8) for i in range(9)],
        "no_open": [wr_data(MAG, A, 1, True)],
        "second": [wr_req(MAG, A, 1, 0, 1), wr_req(MAG, A, 2, 64, 0), wr_data(MAG, A, 1, False),
                   wr_data(MAG, A, 2, True)],
        "last": [wr_req(MAG, A, 1, 0, 1), wr_data(MAG, A, 1, True), wr_data(MAG, A, 2, True)],
        "rd_past": [rd_req(MAG, A, 1, 62 << 5, 3)],
        "wr_past": [wr_req(MAG, A, 1, 63 << 5, 1), wr_data(MAG, A, 1, False), wr_data(MAG, A, 2, True)],
    }[case]
    pred = m.run({A: flits})
    assert pred.violations
    if case == "len":
        assert m.dram.words(0, 9) == list(range(9)) and pred.total == 1      # served as 9 beats
    if case == "second":
        assert unpack_flit(pred.flits_for(A)[0]).txn == 1 and m.dram.words(0, 2) == [1, 2]
    if case == "rd_past":
        assert [unpack_flit(f).payload for f in pred.flits_for(A)][2:] == [0, 0]


def test_unknown_types_are_dropped() -> None:
    f = pack_fields({"dst_x": 0, "dst_y": 1, "src_x": 1, "src_y": 1, "type": int(FlitType.CU_DATA), "last": 1})
    pred = _model().run({A: [f]})
    assert pred.dropped == [f] and pred.total == 0 and not pred.violations


# ---------------------------------------------------------------- checker
def _busy_prediction() -> tuple[MagModel, Prediction]:
    m = _model()
    sent = {
        A: [rd_req(MAG, A, 1, 0, 2), rd_req(MAG, A, 9, 40 << 5, stream=True, count=2, entry_words=3, peers=[B])],
        B: [rd_req(MAG, B, 2, 8 << 5, 1), wr_req(MAG, B, 3, 200 << 5, 1), wr_data(MAG, B, 5, False),
            wr_data(MAG, B, 6, True)],
        C: [rd_req(MAG, C, 4, 16 << 5, stream=True, count=1, entry_words=2, peers=[B, A])],
    }
    return m, m.run(sent)


def test_checker_accepts_any_interleaving_of_streams() -> None:
    _, pred = _busy_prediction()
    rng = random.Random(3)
    for _ in range(20):
        caps = []
        for dst, streams in pred.streams.items():
            queues = [list(s) for s in streams.values()]
            while any(queues):
                q = rng.choice([q for q in queues if q])
                caps.append((dst, len(caps), q.pop(0)))
        report = pred.check(caps)
        assert report.passed, report.errors
        assert report.checks > 2 * pred.total


def test_checker_fails_on_a_wrong_value() -> None:
    _, pred = _busy_prediction()
    caps = _captures(pred)
    dst, cyc, flit = caps[5]
    caps[5] = (dst, cyc, flit ^ 1)                       # one payload bit
    report = pred.check(caps)
    assert not report.passed and len(report.errors) == 1 and report.errors[0].startswith("WRONG")
    assert "payload" in report.errors[0]


def test_checker_fails_on_missing_surplus_and_misdelivery() -> None:
    _, pred = _busy_prediction()
    caps = _captures(pred)
    assert pred.check(caps[1:]).errors[0].startswith("MISSING")
    assert pred.check(caps + [caps[0]]).errors[0].startswith("UNEXPECTED")
    dst, cyc, flit = caps[0]
    moved = [((9, 9), cyc, flit)] + caps[1:]
    errors = pred.check(moved).errors
    assert any(e.startswith("MISSING") for e in errors) and any(e.startswith("UNEXPECTED at (9,9)") for e in errors)
    assert not pred.check([]).passed


def test_checker_fails_on_order_within_a_stream_only() -> None:
    _, pred = _busy_prediction()
    s = pred.streams[A][("rd", A)]
    caps = [(A, i, f) for i, f in enumerate([s[1], s[0]] + s[2:])]
    caps += [(d, 0, f) for d, _, f in _captures(pred) if d != A or f not in s]
    report = pred.check(caps)
    assert not report.passed and report.errors[0].startswith("ORDER")


def test_checker_handles_identical_flits_in_two_streams() -> None:
    m = _model()
    pred = m.run({A: [rd_req(MAG, A, 1, 0, 1), rd_req(MAG, A, 2, 64, stream=True, count=1, entry_words=1, peers=[B])],
                  B: [rd_req(MAG, B, 7, 0, stream=True, count=1, entry_words=1, peers=[B]),
                      rd_req(MAG, B, 2, 64, stream=True, count=1, entry_words=1)]})
    # B receives identical flits from requester A and from requester B: any assignment must be found.
    caps = _captures(pred)
    b_flits = [c for c in caps if c[0] == B]
    rest = [c for c in caps if c[0] != B]
    assert pred.check(rest + b_flits[::-1]).passed


# ---------------------------------------------------------------- DRAM image and files
def test_dram_bytes_little_endian_and_unaligned() -> None:
    d = DramImage(4)
    d.load_words(0, [0] * 4)
    d.load_bytes(30, bytes(range(1, 6)))
    assert d.word(0) >> 240 == 0x0201 and d.word(1) & 0xFFFFFF == 0x050403
    assert d.read_bytes(29, 7) == bytes([0, 1, 2, 3, 4, 5, 0])
    with pytest.raises(ValueError):
        d.load_bytes(127, b"ab")


def test_dram_file_helpers_round_trip_with_the_model_convention() -> None:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, size=96, dtype=np.uint8)
    text = words_to_hex_lines(data)
    lines = text.splitlines()
    assert len(lines) == 3 and all(len(ln) == 64 for ln in lines)
    d = DramImage(3)
    d.load_bytes(0, data.tobytes())
    assert [int(ln, 16) for ln in lines] == d.words(0, 3)
    back = hex_lines_to_bytes(["// 0x0"] + lines, 3)
    assert np.array_equal(back, data)
    with pytest.raises(ValueError, match="x/z"):
        hex_lines_to_bytes(["x" * 64], 1)


# ---------------------------------------------------------------- entry reads (units.md M.2, M.3)
def _fp16_dram(words: int = 512, seed: int = 4) -> MagModel:
    """A model whose DRAM holds QUANT-worthy FP16 entries (tb/mag/mxfp7_stim.py), 8 words each."""
    rng = np.random.default_rng(seed)
    raw = random_entries(rng, words // 8).reshape(-1)
    dram = DramImage(words)
    dram.load_bytes(0, raw.tobytes())
    return MagModel(MAG, dram)


@pytest.mark.parametrize("blayout", [False, True])
def test_quant_entry_read_words_txn_rsvd_last_and_peers(blayout: bool) -> None:
    m = _fp16_dram()
    req = rd_req(MAG, A, 0xFE, (16 << 5) | 3, 77, stream=True, quant=True, blayout=blayout, count=3,
                 entry_words=2, peers=[B, C])                       # len and entry_words are ignored
    pred = m.run({A: [req]})
    for dst in (A, B, C):
        flits = [unpack_flit(f) for f in pred.streams[dst][("rd", A)]]
        assert len(flits) == 12 and all(f.dst == dst and f.src == MAG and f.type == 2 for f in flits)
        assert [f.txn for f in flits] == [0xFE] * 4 + [0xFF] * 4 + [0x00] * 4
        assert [f.rsvd for f in flits] == [0, 1, 2, 3] * 3 and [f.last for f in flits] == [0, 0, 0, 1] * 3
        for i in range(3):                                           # entry i at byte addr + 256 i
            want = mxfp7.quantise_dram_words(m.dram.words(16 + 8 * i, 8), blayout)
            assert [f.payload for f in flits[4 * i:4 * i + 4]] == want
    assert pred.total == 36 and not pred.violations


def test_quant_without_stream_is_one_entry() -> None:
    m = _fp16_dram()
    pred = m.run({A: [rd_req(MAG, A, 9, 8 << 5, 5, quant=True, count=7, peers=[B])]})
    flits = [unpack_flit(f) for f in pred.flits_for(A)]
    assert [f.payload for f in flits] == mxfp7.quantise_dram_words(m.dram.words(8, 8), False)
    assert [f.txn for f in flits] == [9] * 4 and len(pred.flits_for(B)) == 4   # peers still served


def test_blayout_and_low_flag_bits_have_no_effect_without_quant() -> None:
    m = _model()
    plain = m.run({A: [rd_req(MAG, A, 1, 0, 2, flags=0x2F)]}).flits_for(A)     # BLAYOUT + bits 0..3
    assert plain == m.run({A: [rd_req(MAG, A, 1, 0, 2)]}).flits_for(A) and len(plain) == 3
    strm = m.run({A: [rd_req(MAG, A, 1, 0, flags=0x6F, count=2, entry_words=3)]}).flits_for(A)
    assert strm == m.run({A: [rd_req(MAG, A, 1, 0, stream=True, count=2, entry_words=3)]}).flits_for(A)


def test_plain_read_ignores_count_and_peers() -> None:
    pred = _model().run({A: [rd_req(MAG, A, 3, 0, 1, count=9, entry_words=2, peers=[B])]})
    assert pred.total == 2 and set(pred.streams) == {A}
    assert [unpack_flit(f).rsvd for f in pred.flits_for(A)] == [0, 0]


def test_each_entry_is_read_once_whatever_the_peers() -> None:
    unit = MagUnit(MAG, words=256)
    calls: list[int] = []
    word = unit.dram.word
    unit.dram.word = lambda i: calls.append(i) or word(i)  # type: ignore[method-assign]
    out = unit.take(rd_req(MAG, A, 0, 64 << 5, stream=True, quant=True, count=5, peers=[B, C, (2, 2)]))
    assert calls == list(range(64, 64 + 40)) and len(out) == 5 * 4 * 4 and unit.words_read == 40
    assert [ev.dst for ev in out[:16]] == [A] * 4 + [B] * 4 + [C] * 4 + [(2, 2)] * 4   # requester, then peers


# ---------------------------------------------------------------- MagUnit
BASE = 0x8000_0000


def test_unit_serves_the_memory_window_of_the_bundles() -> None:
    unit = MagUnit(MAG, base=BASE, words=4096)
    data = bytes(range(256)) * 2
    unit.load(BASE + 0x1000, data)
    out = unit.take(rd_req(MAG, A, 0x11, BASE + 0x1000, 15))
    assert [ev.dst for ev in out] == [A] * 16
    got = b"".join(unpack_flit(ev.flit).payload.to_bytes(32, "little") for ev in out)
    assert got == data and unit.read(BASE + 0x1000, 512) == data and unit.index(BASE + 0x1000) == 0x80
    with pytest.raises(OutsideDram):
        unit.take(rd_req(MAG, A, 0, BASE - 32))
    with pytest.raises(OutsideDram):
        unit.take(rd_req(MAG, A, 0, BASE + 4095 * 32, 1))
    with pytest.raises(OutsideDram):
        unit.take(rd_req(MAG, A, 0, BASE + 4088 * 32, stream=True, quant=True, count=2))
    with pytest.raises(ValueError, match="aligned"):
        MagUnit(MAG, base=BASE + 8)


def test_unit_write_binds_by_source_and_acks_after_the_last_beat() -> None:
    unit = MagUnit(MAG, base=BASE, words=64)
    assert unit.take(wr_req(MAG, A, 0x21, BASE + 64, 1)) == [] and not unit.idle
    assert unit.take(wr_req(MAG, B, 0x22, BASE + 256, 0)) == []
    assert unit.take(wr_data(MAG, A, 0xA0, False, txn=0x99)) == []
    ack_b = unit.take(wr_data(MAG, B, 0xB0, True))
    ack_a = unit.take(wr_data(MAG, A, 0xA1, True))
    for ev, dst, txn in ((ack_a[0], A, 0x21), (ack_b[0], B, 0x22)):
        f = unpack_flit(ev.flit)
        assert ev.dst == dst and (f.type, f.txn, f.last, f.payload, f.src, f.dst) == (3, txn, 1, 0, MAG, dst)
    assert unit.dram.words(2, 2) == [0xA0, 0xA1] and unit.dram.word(8) == 0xB0 and unit.idle
    assert (unit.words_written, unit.words_read) == (3, 0)


@pytest.mark.parametrize("case,error", [
    ("flag7", UndefinedFlags), ("staging_rd", StagingAperture), ("staging_wr", StagingAperture),
    ("len8", WriteProtocolError), ("second", WriteProtocolError), ("stray", WriteProtocolError),
    ("last", WriteProtocolError), ("wr_past", OutsideDram), ("misaddressed", NotForThisAgent)])
def test_unit_refuses_what_it_cannot_honour(case: str, error: type) -> None:
    unit = MagUnit(MAG, base=BASE, words=64)
    flits = {
        "flag7": [rd_req(MAG, A, 1, BASE, flags=0xD0, count=1)],
        "staging_rd": [rd_req(MAG, A, 1, 1 << 39, stream=True)],
        "staging_wr": [wr_req(MAG, A, 1, (1 << 39) | (1 << 37), 0)],
        "len8": [wr_req(MAG, A, 1, BASE, 8)],
        "second": [wr_req(MAG, A, 1, BASE, 1), wr_req(MAG, A, 2, BASE + 64, 0)],
        "stray": [wr_data(MAG, A, 1, True)],
        "last": [wr_req(MAG, A, 1, BASE, 1), wr_data(MAG, A, 1, True)],
        "wr_past": [wr_req(MAG, A, 1, BASE + 63 * 32, 1)],
        "misaddressed": [rd_req((1, 1), A, 1, BASE)],
    }[case]
    with pytest.raises(error):
        unit.take_all(flits)
    assert issubclass(error, MagRequestError)


def test_tolerant_unit_serves_flag7_and_drops_staging_like_the_rtl() -> None:
    m = _model(words=64)
    sent = {A: [rd_req(MAG, A, 1, 0, flags=0xC0, count=2, entry_words=1),
                rd_req(MAG, A, 2, 1 << 39, 3),
                wr_req(MAG, A, 3, 1 << 39, 1), wr_data(MAG, A, 5, False), wr_data(MAG, A, 6, True),
                rd_req(MAG, A, 4, 32, 0)]}
    before = m.dram.copy()
    pred = m.run(sent)
    assert [unpack_flit(f).txn for f in pred.flits_for(A)] == [1, 2, 4]   # 2 entries, nothing for staging
    assert len(pred.violations) == 3 and all(m.dram.word(i) == before.word(i) for i in range(64))
    assert not pred.open_writes
