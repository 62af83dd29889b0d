"""models.orch.host_port: register map, encodings, header rewrite, summary and Await arithmetic."""

from __future__ import annotations

import random

import pytest

from models.cu.base import SigCode
from models.cu.base import signal_flit
from models.noc.flit import FIELDS, FlitType, pack_fields, unpack_flit
from models.orch.host_port import (
    COUNT_MOD,
    AwaitState,
    Caps,
    NodeStatus,
    ProgStat,
    Reg,
    SummaryModel,
    await_message,
    await_state,
    await_target,
    baselines,
    credit_after,
    dispatch_stall_point,
    flit_to_words,
    merge_strobes,
    node_status_addr,
    pack_coord,
    rewrite_header,
    stage_addr,
    unpack_coord,
    words_to_flit,
)


def _flit(rng: random.Random, ftype: int = FlitType.CU_INST) -> int:
    return pack_fields({"dst_x": rng.getrandbits(4), "dst_y": rng.getrandbits(4), "src_x": rng.getrandbits(4),
                        "src_y": rng.getrandbits(4), "type": ftype, "txn": rng.getrandbits(8),
                        "last": rng.getrandbits(1), "rsvd": rng.getrandbits(3), "payload": rng.getrandbits(256)})


def test_register_offsets_are_the_protocol() -> None:
    assert [int(r) for r in Reg] == [0x10, 0x40, 0x48, 0x50, 0x58, 0x60, 0x68, 0x70]


def test_coordinates_pack_y_first() -> None:
    assert pack_coord((2, 1)) == 0x12
    assert pack_coord((15, 0)) == 0x0F
    assert unpack_coord(0x12) == (2, 1)
    for x in range(16):
        for y in range(16):
            assert unpack_coord(pack_coord((x, y))) == (x, y)
    with pytest.raises(ValueError, match="4-bit"):
        pack_coord((16, 0))


def test_addresses() -> None:
    assert node_status_addr((0, 0)) == 0x1000
    assert node_status_addr((2, 1)) == 0x1000 + 0x12 * 8
    assert node_status_addr((15, 15)) == 0x17F8
    assert stage_addr(0) == 0x2000
    assert stage_addr(1, 0) == 0x2028
    assert stage_addr(3, 4) == 0x2000 + 3 * 40 + 32
    with pytest.raises(ValueError, match="slot 256"):
        stage_addr(256)
    with pytest.raises(ValueError, match="word 5"):
        stage_addr(0, 5)


def test_stage_words_round_trip_low_word_first() -> None:
    rng = random.Random(1)
    for _ in range(50):
        f = _flit(rng)
        words = flit_to_words(f)
        assert len(words) == 5 and all(0 <= w < 2**64 for w in words)
        assert words[0] == f & (2**64 - 1)
        assert words[4] == f >> 256  # the header, in the low 32 bits of word 4
        assert words_to_flit(words) == f
    # bits above the header in word 4 do not exist in the RAM
    assert words_to_flit([0, 0, 0, 0, 0xFFFF_FFFF_0000_0001]) == 1 << 256


def test_register_decoders_round_trip() -> None:
    assert NodeStatus.decode(0) == NodeStatus()
    st = NodeStatus(code=0x04, arg=0xDEADBEEF, count=0xFFFF, valid=True)
    word = st.encode()
    assert word == 0x04 << 56 | 0xDEADBEEF << 24 | 0xFFFF << 8 | 1
    assert NodeStatus.decode(word) == st
    assert "FAULT" in st.describe() and "count=65535" in st.describe()
    ps = ProgStat(run=True, left=0x1234, credit=0xFFFF)
    assert ps.encode() == 1 | 0x1234 << 1 | 0xFFFF << 17
    assert ProgStat.decode(ps.encode()) == ps
    caps = Caps(288, 4, 256, (1, 1))
    assert caps.encode() & 0xFF_FFFF == 4 << 16 | 288
    assert Caps.decode(caps.encode()) == caps


def test_merge_strobes() -> None:
    assert merge_strobes(0x1111_1111_1111_1111, 0xAAAA_AAAA_AAAA_AAAA, 0xFF) == 0xAAAA_AAAA_AAAA_AAAA
    assert merge_strobes(0x1111_1111_1111_1111, 0xAAAA_AAAA_AAAA_AAAA, 0x00) == 0x1111_1111_1111_1111
    assert merge_strobes(0x0000_0000_0000_0007, 0x1200, 0b10) == 0x1207


def test_rewrite_header_touches_only_dst_and_src() -> None:
    rng = random.Random(2)
    for _ in range(100):
        f = _flit(rng, rng.choice(list(FlitType)))
        dst = (rng.randrange(16), rng.randrange(16))
        own = (rng.randrange(16), rng.randrange(16))
        out = unpack_flit(rewrite_header(f, dst, own))
        src = unpack_flit(f)
        assert out.dst == dst and out.src == own
        assert (out.type, out.txn, out.last, out.rsvd, out.payload) == \
               (src.type, src.txn, src.last, src.rsvd, src.payload)


def test_summary_counts_by_source_every_code_cumulative() -> None:
    m = SummaryModel(own=(1, 1))
    for code in (*SigCode, 0x02, 0x77):
        m.accept(signal_flit((1, 1), (2, 1), code, 5))
    m.accept(signal_flit((1, 1), (1, 2), SigCode.INST_COMPLETE, 9))
    m.accept(signal_flit((2, 2), (1, 2), SigCode.INST_COMPLETE, 9))  # not for us: dropped
    data = signal_flit((1, 1), (1, 2), SigCode.INST_COMPLETE, 9) & ~FIELDS["type"].place(-1) \
        | FIELDS["type"].place(FlitType.CU_DATA)
    m.accept(data)  # not a CU_SIGNAL: dropped, no credit
    assert m.status((2, 1)) == NodeStatus(0x77, 5, 6, True)
    assert m.status((1, 2)) == NodeStatus(SigCode.INST_COMPLETE, 9, 1, True)
    assert m.status((3, 3)) == NodeStatus()
    assert m.sig_done == 7 and m.dropped == 2 and m.credit_refills == 2


def test_summary_count_wraps_at_2_16() -> None:
    m = SummaryModel(own=(1, 1))
    m.nodes[(2, 1)] = NodeStatus(0, 0, COUNT_MOD - 1, True)
    m.accept(signal_flit((1, 1), (2, 1), SigCode.FAULT, 1))
    assert m.status((2, 1)).count == 0 and m.status((2, 1)).valid


def test_dispatch_credit_model() -> None:
    inst, ctrl = FlitType.CU_INST, FlitType.CU_CTRL
    rng = random.Random(3)
    flits = [_flit(rng, t) for t in (inst, inst, inst, ctrl, inst, inst)]
    assert dispatch_stall_point(flits, 3) == 4     # the CU_CTRL needs no credit
    assert dispatch_stall_point(flits, 0) == 0
    assert dispatch_stall_point([_flit(rng, ctrl)] * 3, 0) == 3
    assert dispatch_stall_point(flits, 5) == 6
    # n instructions return n-1 credits: a run seeded with c ends at c-1
    n = sum(t == inst for t in (inst, inst, inst, ctrl, inst, inst))
    assert credit_after(flits, 2, n - 1) == 1


def test_await_arithmetic_and_wrap() -> None:
    assert await_target(10, 3) == 13
    assert await_target(0xFFFF, 1) == 0
    assert await_target(0xFFFE, 5) == 3
    with pytest.raises(ValueError, match="16-bit"):
        await_target(0, COUNT_MOD)
    assert await_state(13, 10, 3) is AwaitState.DONE
    assert await_state(12, 10, 3) is AwaitState.WAITING
    assert await_state(14, 10, 3) is AwaitState.OVERSHOOT
    # across the wrap
    assert await_state(2, 0xFFFE, 4) is AwaitState.DONE
    assert await_state(0, 0xFFFE, 4) is AwaitState.WAITING
    assert await_state(3, 0xFFFE, 4) is AwaitState.OVERSHOOT
    assert await_state(5, 5, 0) is AwaitState.DONE


def test_await_message_names_coordinate_and_counts() -> None:
    msg = await_message((2, 3), 7, 2, 8, "timeout after 500 cycles")
    assert "(2,3)" in msg and "expected count 9" in msg and "seen 8" in msg and "timeout" in msg


def test_baselines() -> None:
    st = {(1, 2): NodeStatus(0, 0, 5, True), (2, 1): NodeStatus()}
    assert baselines(st) == {(1, 2): 5, (2, 1): 0}
