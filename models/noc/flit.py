"""The NoC flit layout: the only place Python knows where each field sits.

A flit is a 288-bit word: a 32-bit header in bits [287:256] and a 256-bit
payload in bits [255:0].  Everything that builds, decodes or displays flits
(testbenches, scoreboards, $readmemh vector writers, waveform save-file
generators) should go through this module so that a layout change is made in
exactly one Python file and mirrored in exactly one Verilog include.

Values are plain Python ints (arbitrary precision), which is what simulators'
Python bridges hand out for wide buses and what ``$readmemh`` text encodes.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields as dc_fields
from enum import IntEnum
from types import MappingProxyType
from typing import Mapping, NamedTuple

__all__ = [
    "FLIT_WIDTH",
    "HEADER_WIDTH",
    "PAYLOAD_WIDTH",
    "POS_WIDTH",
    "POS_MAX",
    "HEX_DIGITS",
    "FLIT_MASK",
    "PAYLOAD_MASK",
    "FieldSpec",
    "FIELDS",
    "FIELD_NAMES",
    "FlitType",
    "type_name",
    "Flit",
    "pack_flit",
    "pack_fields",
    "make_flit",
    "unpack_flit",
    "describe_flit",
    "flit_to_hex",
    "flit_from_hex",
    "flit_field",
    "flit_type",
    "flit_dst",
    "flit_src",
]

FLIT_WIDTH = 288
"""Total flit width in bits."""
HEADER_WIDTH = 32
"""Header width in bits (bits [287:256])."""
PAYLOAD_WIDTH = 256
"""Payload width in bits (bits [255:0])."""
POS_WIDTH = 4
"""Width of one mesh coordinate; coordinates therefore range over 0..15."""
POS_MAX = (1 << POS_WIDTH) - 1
"""Largest encodable coordinate (15)."""
HEX_DIGITS = FLIT_WIDTH // 4
"""Hex digits per flit in $readmemh files (72)."""
FLIT_MASK = (1 << FLIT_WIDTH) - 1
"""All 288 bits set; used to range-check raw flit values."""
PAYLOAD_MASK = (1 << PAYLOAD_WIDTH) - 1
"""All 256 payload bits set; lets callers split payload from header cheaply."""


class FieldSpec(NamedTuple):
    """Inclusive bit range ``[msb:lsb]`` of one flit field, Verilog style."""

    msb: int
    lsb: int

    @property
    def width(self) -> int:
        """Number of bits in the field."""
        return self.msb - self.lsb + 1

    @property
    def mask(self) -> int:
        """Unshifted all-ones mask of the field's width."""
        return (1 << self.width) - 1

    def extract(self, flit: int) -> int:
        """Return this field's value from a packed flit (the mask inline: models call this per flit)."""
        return (flit >> self.lsb) & ((1 << (self.msb - self.lsb + 1)) - 1)

    def place(self, value: int) -> int:
        """Return ``value`` shifted into this field's position (no range check)."""
        return (value & self.mask) << self.lsb


# Ordered MSB first, matching the order of the Flit dataclass fields.
FIELDS: Mapping[str, FieldSpec] = MappingProxyType(
    {
        "dst_x": FieldSpec(287, 284),
        "dst_y": FieldSpec(283, 280),
        "src_x": FieldSpec(279, 276),
        "src_y": FieldSpec(275, 272),
        "type": FieldSpec(271, 268),
        "txn": FieldSpec(267, 260),
        "last": FieldSpec(259, 259),
        "rsvd": FieldSpec(258, 256),
        "payload": FieldSpec(255, 0),
    }
)
"""Read-only table ``name -> FieldSpec(msb, lsb)`` for every flit field."""

FIELD_NAMES: tuple[str, ...] = tuple(FIELDS)
"""Field names, MSB first."""


def _check_layout() -> None:
    """Fail at import time if FIELDS does not tile bits [287:0] exactly once.

    A gap or overlap here would silently corrupt every flit, so it is better
    to refuse to import than to run a simulation on a broken table.
    """
    expected_msb = FLIT_WIDTH - 1
    for name, spec in FIELDS.items():
        if spec.msb != expected_msb or spec.lsb > spec.msb:
            raise RuntimeError(f"flit field table broken at {name!r}: {spec}")
        expected_msb = spec.lsb - 1
    if expected_msb != -1:
        raise RuntimeError("flit field table does not reach bit 0")
    if FIELDS["dst_x"].width != POS_WIDTH:
        raise RuntimeError("coordinate fields must be POS_WIDTH bits wide")


_check_layout()


class FlitType(IntEnum):
    """Flit ``type`` field encodings (9..0xE are reserved)."""

    MEM_RD_REQ = 0x0
    MEM_WR_REQ = 0x1
    MEM_RD_RESP = 0x2
    MEM_WR_ACK = 0x3
    MEM_WR_DATA = 0x4
    CU_INST = 0x5
    CU_SIGNAL = 0x6
    CU_CTRL = 0x7
    CU_DATA = 0x8
    ERROR = 0xF


_TYPE_VALUES = frozenset(int(t) for t in FlitType)


def type_name(value: int) -> str:
    """Return the mnemonic for a type code; reserved codes print as ``RSVD<hex>``.

    Decoding must never fail on a reserved code because the point of decoding
    is usually to explain a flit that is already wrong.
    """
    if value in _TYPE_VALUES:
        return FlitType(value).name
    return f"RSVD{value:X}"


def _as_int(name: str, value: object) -> int:
    """Coerce ``value`` to a plain int (accepting numpy ints, IntEnums, bools)."""
    try:
        return int(operator.index(value))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"flit field {name!r} must be an integer, got {type(value).__name__}"
        ) from None


def _check_raw(value: object) -> int:
    """Validate a packed flit value and return it as a plain int."""
    raw = _as_int("flit", value)
    if raw < 0 or raw > FLIT_MASK:
        raise ValueError(
            f"flit value {raw:#x} does not fit in {FLIT_WIDTH} bits"
        )
    return raw


@dataclass(frozen=True)
class Flit:
    """One decoded flit; construction validates every field's range.

    Immutable so a Flit can be used as a dict key or stored in expectation
    queues without defensive copies.  Use ``dataclasses.replace`` to derive a
    modified flit (validation runs again).
    """

    dst_x: int = 0
    dst_y: int = 0
    src_x: int = 0
    src_y: int = 0
    type: int = 0
    txn: int = 0
    last: int = 0
    rsvd: int = 0
    payload: int = 0

    def __post_init__(self) -> None:
        """Normalise fields to plain ints and refuse values that do not fit."""
        for f in dc_fields(self):
            value = _as_int(f.name, getattr(self, f.name))
            spec = FIELDS[f.name]
            if value < 0 or value > spec.mask:
                raise ValueError(
                    f"flit field {f.name!r} is {spec.width} bits wide "
                    f"(0..{spec.mask:#x}); got {value:#x}"
                )
            object.__setattr__(self, f.name, value)

    def pack(self) -> int:
        """Return the 288-bit integer encoding of this flit."""
        word = 0
        for name, spec in FIELDS.items():
            word |= spec.place(getattr(self, name))
        return word

    @classmethod
    def unpack(cls, value: int) -> "Flit":
        """Decode a 288-bit integer; raises ValueError if it does not fit."""
        raw = _check_raw(value)
        return cls(**{name: spec.extract(raw) for name, spec in FIELDS.items()})

    @property
    def dst(self) -> tuple[int, int]:
        """Destination endpoint coordinate ``(x, y)``."""
        return (self.dst_x, self.dst_y)

    @property
    def src(self) -> tuple[int, int]:
        """Source endpoint coordinate ``(x, y)``."""
        return (self.src_x, self.src_y)

    @property
    def header(self) -> int:
        """The 32-bit header (bits [287:256]) as an int."""
        return self.pack() >> PAYLOAD_WIDTH

    @property
    def type_name(self) -> str:
        """Mnemonic of the type field (``RSVD<hex>`` for reserved codes)."""
        return type_name(self.type)

    def describe(self) -> str:
        """One-line human decode, used in scoreboard and assertion messages."""
        rsvd = f" rsvd={self.rsvd:#x}" if self.rsvd else ""
        return (
            f"dst=({self.dst_x},{self.dst_y}) src=({self.src_x},{self.src_y}) "
            f"type={self.type_name} txn=0x{self.txn:02x} last={self.last}{rsvd} "
            f"payload=0x{self.payload:0{PAYLOAD_WIDTH // 4}x}"
        )


def pack_flit(**fields: int) -> int:
    """Pack keyword fields (missing ones are 0) into a 288-bit int.

    Unknown field names raise TypeError, out-of-range values ValueError.
    """
    return Flit(**fields).pack()


_SHIFTS: tuple[tuple[str, int, int], ...] = tuple((n, f.lsb, f.mask) for n, f in FIELDS.items())


def pack_fields(fields: Mapping[str, int]) -> int:
    """Pack a mapping of fields (missing ones are 0), with range checks, without a Flit.

    The same result as :func:`pack_flit`, several times faster: stimulus for
    20,000-flit runs is built with it.
    """
    value = 0
    for name, lsb, mask in _SHIFTS:
        v = fields.get(name, 0)
        if v < 0 or v > mask:
            raise ValueError(f"flit field '{name}' is {mask.bit_length()} bits wide (0..{mask:#x}); got {v:#x}")
        value |= v << lsb
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise TypeError(f"unknown flit field(s): {', '.join(sorted(unknown))}")
    return value


def make_flit(dst: tuple[int, int], src: tuple[int, int], ftype: int, txn: int, last: int, payload: int,
              rsvd: int = 0) -> int:
    """A flit from (x, y) coordinates and header fields: the one builder models and benches use.

    txn is taken modulo 256 (a stream read's txn + entry index wraps by
    protocol); every other field is range-checked by :func:`pack_fields`.
    """
    dx, dy, sx, sy, ftype, txn, last = dst[0], dst[1], src[0], src[1], int(ftype), txn & 0xFF, int(last)
    if (0 <= dx <= _M_DX and 0 <= dy <= _M_DY and 0 <= sx <= _M_SX and 0 <= sy <= _M_SY and 0 <= ftype <= _M_TYPE
            and 0 <= last <= _M_LAST and 0 <= rsvd <= _M_RSVD and 0 <= payload <= _M_PAYLOAD):
        return ((dx << _L_DX) | (dy << _L_DY) | (sx << _L_SX) | (sy << _L_SY) | (ftype << _L_TYPE)
                | (txn << _L_TXN) | (last << _L_LAST) | (rsvd << _L_RSVD) | (payload << _L_PAYLOAD))
    return pack_fields({"dst_x": dx, "dst_y": dy, "src_x": sx, "src_y": sy, "type": ftype, "txn": txn,
                        "last": last, "rsvd": rsvd, "payload": payload})  # names the field out of range


# make_flit's field positions (_L_*) and largest values (_M_*), taken from _SHIFTS once: it runs per flit sent
# (txn needs no largest value: make_flit takes it modulo 256)
_AT = {name: (lsb, mask) for name, lsb, mask in _SHIFTS}
_ORDER = ("dst_x", "dst_y", "src_x", "src_y", "type", "txn", "last", "rsvd", "payload")
(_L_DX, _L_DY, _L_SX, _L_SY, _L_TYPE, _L_TXN, _L_LAST, _L_RSVD, _L_PAYLOAD) = (_AT[n][0] for n in _ORDER)
(_M_DX, _M_DY, _M_SX, _M_SY, _M_TYPE, _M_LAST, _M_RSVD, _M_PAYLOAD) = (_AT[n][1] for n in _ORDER if n != "txn")


def flit_type(flit: int) -> int:
    """The ``type`` field: what every event model reads first of each flit it takes."""
    return (flit >> _L_TYPE) & _M_TYPE


def flit_dst(flit: int) -> tuple[int, int]:
    """``(dst_x, dst_y)``: where the network delivers the flit."""
    return (flit >> _L_DX) & _M_DX, (flit >> _L_DY) & _M_DY


def flit_src(flit: int) -> tuple[int, int]:
    """``(src_x, src_y)``: who sent the flit."""
    return (flit >> _L_SX) & _M_SX, (flit >> _L_SY) & _M_SY


def unpack_flit(value: int) -> Flit:
    """Decode a 288-bit int into a :class:`Flit`."""
    return Flit.unpack(value)


def describe_flit(value: int) -> str:
    """One-line decode of a packed flit; never raises for in-range values."""
    return Flit.unpack(value).describe()


def flit_field(value: int, name: str) -> int:
    """Extract one named field from a packed flit without building a Flit.

    Cheaper than ``unpack_flit`` for hot paths such as scoreboards.
    """
    return FIELDS[name].extract(value)


def flit_to_hex(value: int) -> str:
    """Exactly 72 lowercase hex digits, no prefix: one ``$readmemh`` word."""
    return f"{_check_raw(value):0{HEX_DIGITS}x}"


_HEX_CHARS = frozenset("0123456789abcdefABCDEF")


def flit_from_hex(text: str) -> int:
    """Parse a hex flit (as written by :func:`flit_to_hex` or a simulator).

    Accepts surrounding whitespace, an optional ``0x`` prefix and ``_``
    separators; refuses more than 72 significant digits or non-hex text
    (including x/z states, which have no integer meaning).
    """
    digits = text.strip().replace("_", "")
    if digits[:2].lower() == "0x":
        digits = digits[2:]
    if not digits or len(digits) > HEX_DIGITS:
        raise ValueError(
            f"flit hex must be 1..{HEX_DIGITS} hex digits; got {len(digits)} in {text!r}"
        )
    if not _HEX_CHARS.issuperset(digits):
        raise ValueError(f"flit hex contains non-hex characters: {text!r}")
    return int(digits, 16)
