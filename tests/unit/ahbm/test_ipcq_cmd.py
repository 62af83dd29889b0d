"""The PE command encoding of docs/ahbm.md §4 (models/ahbm/ipcq.encode_cmd / decode_cmd)."""

from __future__ import annotations

import pytest

from models.ahbm.ipcq import COMMON_FIELDS, OP_FIELDS, OPCODES, decode_cmd, encode_cmd


def test_field_layouts_do_not_overlap_and_fit_128_bits() -> None:
    for op, extra in OP_FIELDS.items():
        used = 0
        for lsb, width in {**COMMON_FIELDS, **extra}.values():
            mask = ((1 << width) - 1) << lsb
            assert used & mask == 0, op
            assert lsb + width <= 128, op
            used |= mask


def test_attn_tile_bit_positions() -> None:
    w = encode_cmd("ATTN_TILE", tag=0x5A, sreg=3, dir=2, mask_en=1, push_en=1, init=1, rows=8, keys=64,
                   qreg=1, k_addr=0x100000, v_addr=0x880000, mask_addr=0x010000, push_tag=0x7E)
    assert w & 0xF == 1
    assert (w >> 4) & 0xFF == 0x5A
    assert (w >> 12) & 7 == 3
    assert (w >> 18) & 3 == 2
    assert (w >> 20) & 0xF == 0b0111
    assert (w >> 24) & 0xFF == 7
    assert (w >> 32) & 0xFF == 63
    assert (w >> 40) & 3 == 1
    assert (w >> 48) & 0xFFFFFF == 0x100000
    assert (w >> 72) & 0xFFFFFF == 0x880000
    assert (w >> 96) & 0xFFFFFF == 0x010000
    assert w >> 120 == 0x7E
    op, f = decode_cmd(w)
    assert op == "ATTN_TILE" and f["k_addr"] == 0x100000 and f["rows_m1"] == 7


@pytest.mark.parametrize("op", list(OPCODES))
def test_round_trip_every_opcode(op: str) -> None:
    w = encode_cmd(op, tag=9, sreg=1, rows=4)
    got, f = decode_cmd(w)
    assert got == op and f["tag"] == 9 and f["sreg"] == 1 and f["rows_m1"] == 3


def test_refusals() -> None:
    with pytest.raises(ValueError, match="unknown opcode"):
        encode_cmd("POP_WAIT")
    with pytest.raises(ValueError, match="rows"):
        encode_cmd("MERGE", rows=65)
    with pytest.raises(ValueError, match="keys"):
        encode_cmd("ATTN_TILE", keys=129)
    with pytest.raises(ValueError, match="aligned"):
        encode_cmd("NORM_STORE", o_addr=0x20)
    with pytest.raises(ValueError, match="does not exist"):
        encode_cmd("MERGE", k_addr=0)
    with pytest.raises(ValueError, match="fit"):
        encode_cmd("MERGE", sreg=8)
    with pytest.raises(ValueError, match="F_OPCODE"):
        decode_cmd(9)
    with pytest.raises(ValueError, match="kv_bytes"):
        encode_cmd("KV_SEND", kv_bytes=100)
    with pytest.raises(ValueError, match="F_RSVD"):
        decode_cmd(encode_cmd("MERGE") | 1 << 48)          # MERGE uses [47:32] (pdir, src_q, push_tag)


def test_address_fields_in_64_byte_words_reach_1_gib() -> None:
    """ADDR_SHIFT 6 (a slice past 16 MiB, docs/ahbm.md §4): a byte address is stored as its 64-byte word, so the
    24-bit field reaches 1 GiB; at 0 (every bench's default) the same address does not fit."""
    addr = 0x2345_6780  # 564 MiB
    w = encode_cmd("ATTN_TILE", 6, k_addr=addr, v_addr=64, keys=64, rows=8)
    _, f = decode_cmd(w)
    assert f["k_addr"] == addr >> 6 and f["v_addr"] == 1
    assert encode_cmd("NORM_STORE", 0, o_addr=0x1000) != encode_cmd("NORM_STORE", 6, o_addr=0x1000)
    with pytest.raises(ValueError, match=r"inside the 16 MiB the address fields reach at ADDR_SHIFT 0"):
        encode_cmd("ATTN_TILE", 0, k_addr=addr)
    with pytest.raises(ValueError, match=r"inside the 1024 MiB the address fields reach at ADDR_SHIFT 6"):
        encode_cmd("LOAD_Q", 6, q_addr=1 << 30)
    with pytest.raises(ValueError, match=r"aligned"):
        encode_cmd("KV_SEND", 6, kv_addr=0x40 + 8, kv_bytes=64)
    with pytest.raises(ValueError, match=r"ADDR_SHIFT 3: the address fields count bytes \(0\) or 64-byte words"):
        encode_cmd("LOAD_Q", 3, q_addr=0)
