"""Unit tests for models.noc.flit: the Python copy of the flit layout must be exact."""

from __future__ import annotations

import dataclasses

import pytest

from models.noc.flit import (
    FIELDS,
    FLIT_MASK,
    HEX_DIGITS,
    Flit,
    FlitType,
    describe_flit,
    flit_field,
    flit_from_hex,
    flit_to_hex,
    pack_flit,
    type_name,
    unpack_flit,
)

# Hand-written from the protocol spec, deliberately not derived from FIELDS.
SPEC_BITS = {
    "dst_x": (287, 284),
    "dst_y": (283, 280),
    "src_x": (279, 276),
    "src_y": (275, 272),
    "type": (271, 268),
    "txn": (267, 260),
    "last": (259, 259),
    "rsvd": (258, 256),
    "payload": (255, 0),
}


def test_field_table_matches_spec() -> None:
    assert {k: (v.msb, v.lsb) for k, v in FIELDS.items()} == SPEC_BITS
    assert sum(v.width for v in FIELDS.values()) == 288


@pytest.mark.parametrize("name", list(SPEC_BITS))
def test_round_trip_min_and_max_of_each_field(name: str) -> None:
    msb, lsb = SPEC_BITS[name]
    top = (1 << (msb - lsb + 1)) - 1
    for value in (0, 1, top):
        word = pack_flit(**{name: value})
        assert word == value << lsb
        f = unpack_flit(word)
        assert getattr(f, name) == value
        assert all(getattr(f, other) == 0 for other in SPEC_BITS if other != name)
        assert f.pack() == word
        assert flit_field(word, name) == value


def test_all_fields_max_is_all_ones() -> None:
    f = Flit(**{n: (1 << (m - l + 1)) - 1 for n, (m, l) in SPEC_BITS.items()})
    assert f.pack() == FLIT_MASK
    assert Flit.unpack(FLIT_MASK) == f


def test_hand_computed_positions() -> None:
    assert pack_flit(type=8) == 8 << 268
    assert pack_flit(dst_x=1) == 1 << 284
    assert pack_flit(dst_y=1) == 1 << 280
    assert pack_flit(src_x=1) == 1 << 276
    assert pack_flit(src_y=1) == 1 << 272
    assert pack_flit(txn=0x80) == 1 << 267
    assert pack_flit(last=1) == 1 << 259
    assert pack_flit(rsvd=4) == 1 << 258
    assert pack_flit(payload=1) == 1
    assert pack_flit(dst_x=0xF) == 0xF << 284 and (0xF << 284) >> 287 == 1


def test_mixed_flit_round_trip() -> None:
    f = Flit(dst_x=2, dst_y=1, src_x=0, src_y=1, type=FlitType.CU_DATA, txn=0x40, last=1,
             payload=0x0123456789ABCDEF << 192)
    assert Flit.unpack(f.pack()) == f
    assert f.dst == (2, 1) and f.src == (0, 1)
    assert isinstance(f.type, int) and f.type == 8


@pytest.mark.parametrize("name", list(SPEC_BITS))
def test_out_of_range_refused_with_field_width_and_value(name: str) -> None:
    msb, lsb = SPEC_BITS[name]
    width = msb - lsb + 1
    bad = 1 << width
    with pytest.raises(ValueError) as exc:
        Flit(**{name: bad})
    text = str(exc.value)
    assert name in text and f"{width} bits" in text and f"{bad:#x}" in text
    with pytest.raises(ValueError):
        Flit(**{name: -1})


def test_non_int_and_unknown_field_refused() -> None:
    with pytest.raises(TypeError):
        Flit(txn="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pack_flit(colour=1)


def test_unpack_range_check() -> None:
    with pytest.raises(ValueError):
        unpack_flit(1 << 288)
    with pytest.raises(ValueError):
        unpack_flit(-1)


def test_replace_revalidates() -> None:
    f = Flit(txn=3)
    assert dataclasses.replace(f, txn=4).txn == 4
    with pytest.raises(ValueError):
        dataclasses.replace(f, dst_x=16)


def test_describe_format() -> None:
    word = pack_flit(dst_x=2, dst_y=1, src_x=0, src_y=1, type=8, txn=0x40, last=1,
                     payload=0x0123)
    text = describe_flit(word)
    assert text == (
        "dst=(2,1) src=(0,1) type=CU_DATA txn=0x40 last=1 payload=0x" + "0" * 60 + "0123"
    )
    assert unpack_flit(word).describe() == text


def test_describe_reserved_types_and_rsvd() -> None:
    assert "type=RSVD9" in describe_flit(pack_flit(type=9))
    assert "type=RSVDE" in describe_flit(pack_flit(type=0xE))
    assert "type=ERROR" in describe_flit(pack_flit(type=0xF))
    assert "rsvd=0x5" in describe_flit(pack_flit(rsvd=5))
    assert [type_name(t) for t in range(9)] == [
        "MEM_RD_REQ", "MEM_WR_REQ", "MEM_RD_RESP", "MEM_WR_ACK", "MEM_WR_DATA",
        "CU_INST", "CU_SIGNAL", "CU_CTRL", "CU_DATA",
    ]


def test_hex_round_trip() -> None:
    for word in (0, 1, FLIT_MASK, pack_flit(type=8, payload=0xABC)):
        text = flit_to_hex(word)
        assert len(text) == HEX_DIGITS == 72
        assert text == text.lower()
        assert flit_from_hex(text) == word
    assert flit_to_hex(pack_flit(dst_x=0xA))[0] == "a"
    assert flit_from_hex("  0xDEAD_beef\n") == 0xDEADBEEF


def test_hex_refusals() -> None:
    for bad in ("", "0x", "g" * 3, "1" * 73, "x" * 72, "-1", "+1", "1 2"):
        with pytest.raises(ValueError):
            flit_from_hex(bad)
    with pytest.raises(ValueError):
        flit_to_hex(1 << 288)


def test_pack_fields_equals_pack_flit_and_checks_ranges() -> None:
    import random

    import pytest

    from models.noc.flit import FIELDS, pack_fields, pack_flit

    rng = random.Random(3)
    for _ in range(200):
        fields = {n: rng.getrandbits(f.width) for n, f in FIELDS.items()}
        assert pack_fields(fields) == pack_flit(**fields)
    with pytest.raises(ValueError, match="txn"):
        pack_fields({"txn": 256})
    with pytest.raises(TypeError, match="bogus"):
        pack_fields({"bogus": 1})


def test_make_flit_equals_pack_flit_and_names_a_field_out_of_range() -> None:
    """make_flit packs with plain shifts when every field is in range: the same int as pack_flit (txn taken
    mod 256), and any field out of range still raises pack_fields' ValueError naming it."""
    import random

    from models.noc.flit import make_flit

    rng = random.Random(11)
    for _ in range(2000):
        f = {n: rng.getrandbits(spec.width) for n, spec in FIELDS.items()}
        wide_txn = f["txn"] + 256 * rng.randrange(4)
        got = make_flit((f["dst_x"], f["dst_y"]), (f["src_x"], f["src_y"]), FlitType(f["type"]) if f["type"] in
                        set(FlitType) else f["type"], wide_txn, bool(f["last"]), f["payload"], f["rsvd"])
        assert got == pack_flit(**f)
    ok = dict(dst=(1, 2), src=(3, 4), ftype=1, txn=5, last=1, payload=6, rsvd=0)
    for key, bad, name in (("dst", (16, 0), "dst_x"), ("dst", (0, -1), "dst_y"), ("src", (16, 0), "src_x"),
                           ("src", (0, 16), "src_y"), ("ftype", 16, "type"), ("last", 2, "last"),
                           ("rsvd", 8, "rsvd"), ("payload", 1 << 256, "payload"), ("payload", -1, "payload")):
        with pytest.raises(ValueError, match=f"'{name}'"):
            make_flit(**{**ok, key: bad})


def test_header_accessors_equal_the_field_table() -> None:
    import random

    from models.noc.flit import flit_dst, flit_src, flit_type

    rng = random.Random(12)
    for _ in range(500):
        f = rng.getrandbits(288)
        assert flit_type(f) == flit_field(f, "type")
        assert flit_dst(f) == (flit_field(f, "dst_x"), flit_field(f, "dst_y"))
        assert flit_src(f) == (flit_field(f, "src_x"), flit_field(f, "src_y"))
