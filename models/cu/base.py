"""What the shared compute-unit endpoint base (rtl/cu/cu_base.v) answers.

Pure Python, no simulator: given the flits a bench sends to a unit, it predicts
the completion signals and CU_CTRL replies the base must send back, bit for
bit. It also builds the instructions of the bench-only test unit (cu_null.v).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Sequence

from models.noc.flit import FlitType, flit_field, make_flit

Coord = tuple[int, int]


class SigCode(IntEnum):
    """CU_SIGNAL codes (payload [255:248])."""

    INST_COMPLETE = 0x00
    BATCH_COMPLETE = 0x01
    DATA_RECEIVED = 0x03
    FAULT = 0x04


CTRL_READ_RESPONSE = 0x02
CTRL_CAPS, CTRL_STATUS, CTRL_COUNTERS, CTRL_DBG = 0, 1, 2, 3


def signal_payload(code: int, arg: int) -> int:
    """CU_SIGNAL payload: code [255:248], arg [247:216], the rest 0."""
    return (code & 0xFF) << 248 | (arg & 0xFFFF_FFFF) << 216


def signal_fields(flit: int) -> tuple[int, int]:
    """(code, arg) of a CU_SIGNAL flit."""
    return (flit >> 248) & 0xFF, (flit >> 216) & 0xFFFF_FFFF


def _src(flit: int) -> Coord:
    return flit_field(flit, "src_x"), flit_field(flit, "src_y")


def signal_flit(dst: Coord, src: Coord, code: int, arg: int, txn: int = 0, last: int = 1) -> int:
    """A CU_SIGNAL flit from node `src` to `dst` (completions, acknowledgements)."""
    return make_flit(dst, src, FlitType.CU_SIGNAL, txn, last, signal_payload(code, arg))


def cu_inst(dst: Coord, src: Coord, txn: int, last: int, payload: int) -> int:
    """A CU_INST flit."""
    return make_flit(dst, src, FlitType.CU_INST, txn, last, payload)


def completion(unit: Coord, inst: int, fault: bool, result: int) -> int:
    """The CU_SIGNAL the base sends when the unit retires `inst`.

    Addressed to the instruction's source, txn echoed, last=1: FAULT with the
    unit's result if it faulted, else BATCH_COMPLETE with arg = txn if the
    instruction had last=1, else INST_COMPLETE with the unit's result.
    """
    txn = flit_field(inst, "txn")
    if fault:
        code, arg = SigCode.FAULT, result
    elif flit_field(inst, "last"):
        code, arg = SigCode.BATCH_COMPLETE, txn
    else:
        code, arg = SigCode.INST_COMPLETE, result
    return signal_flit(_src(inst), unit, code, arg, txn)


def ctrl_request(dst: Coord, src: Coord, txn: int, index: int) -> int:
    """A CU_CTRL read of one index (op 0 at [255:248], index at [247:240])."""
    return make_flit(dst, src, FlitType.CU_CTRL, txn, 1, (index & 0xFF) << 240)


def ctrl_reply(unit: Coord, request: int, value: int) -> int:
    """The base's reply to a CU_CTRL read: {0x02, index, value[63:0], 0}."""
    index = (request >> 240) & 0xFF
    return make_flit(_src(request), unit, FlitType.CU_CTRL, flit_field(request, "txn"), 1,
                     CTRL_READ_RESPONSE << 248 | index << 240 | (value & (2**64 - 1)) << 176)


def ctrl_reply_fields(flit: int) -> tuple[int, int, int]:
    """(response code, index, value) of a CU_CTRL reply."""
    return (flit >> 248) & 0xFF, (flit >> 240) & 0xFF, (flit >> 176) & (2**64 - 1)


def caps_value(cu_type: int, version: int, n_buffers: int, inst_depth: int) -> int:
    """CU_CAPS: {cu_type[63:48], cu_version[47:40], n_buffers[39:36], inst_depth[35:20], 0}."""
    return cu_type << 48 | version << 40 | n_buffers << 36 | inst_depth << 20


# ---------------------------------------------------------------- CU_DATA bursts
CU_DATA_MAX_LEN = 256  # data flits of one burst (len is an 8-bit field)


def cu_data_bursts(dst: Coord, src: Coord, buf: int, off: int, granules: Sequence[int], *, flags: int = 0,
                   ack: Coord = (0, 0), txn: int = 0, max_len: int = CU_DATA_MAX_LEN) -> list[int]:
    """CU_DATA bursts (descriptor + data flits) carrying `granules` from granule `off` of `buf`.

    Split into bursts of at most `max_len` data flits (256 by the protocol).
    `ack` is (x, y); (0, 0) means "acknowledge to the source".
    """
    if not 1 <= max_len <= CU_DATA_MAX_LEN:
        raise ValueError(f"max_len {max_len} outside 1..{CU_DATA_MAX_LEN} (len is an 8-bit field)")
    flits: list[int] = []
    for start in range(0, len(granules), max_len):
        chunk = granules[start:start + max_len]
        flits.append(cu_data_descriptor(dst, src, buf, off + start, len(chunk), flags=flags, ack=ack, txn=txn))
        for i, g in enumerate(chunk):
            flits.append(make_flit(dst, src, FlitType.CU_DATA, txn, int(i == len(chunk) - 1), int(g)))
    return flits


def cu_data_descriptor(dst: Coord, src: Coord, buf: int, off: int, count: int, *, flags: int = 0,
                       ack: Coord = (0, 0), txn: int = 0) -> int:
    """One CU_DATA descriptor: buf [255:248], off [247:232], len [231:224], flags, ack_y, ack_x."""
    for name, v, w in (("buf", buf, 8), ("off", off, 16), ("len", count - 1, 8), ("flags", flags, 8),
                       ("ack_x", ack[0], 4), ("ack_y", ack[1], 4)):
        if not 0 <= v < (1 << w):
            raise ValueError(f"CU_DATA descriptor field '{name}' is {w} bits wide (0..{(1 << w) - 1}); got {v}")
    payload = buf << 248 | off << 232 | (count - 1) << 224 | flags << 216 | ack[1] << 212 | ack[0] << 208
    return make_flit(dst, src, FlitType.CU_DATA, txn, 0, payload)



def cu_data_fields(descriptor: int) -> tuple[int, int, int, int, Coord]:
    """(buf, off, data flits, flags, ack (x, y)) of a CU_DATA descriptor flit."""
    return ((descriptor >> 248) & 0xFF, (descriptor >> 232) & 0xFFFF, ((descriptor >> 224) & 0xFF) + 1,
            (descriptor >> 216) & 0xFF, ((descriptor >> 208) & 0xF, (descriptor >> 212) & 0xF))


# ---------------------------------------------------------------- cu_null ISA
def null_work(latency: int, result: int, fault: bool = False) -> int:
    """cu_null WORK: retire after `latency` cycles with `result` (or fault)."""
    if not 0 <= latency < 2**16:
        raise ValueError(f"latency {latency} is outside 0..65535")
    return 1 << 252 | (result & 0xFFFF_FFFF) << 32 | int(fault) << 16 | latency


def null_send(n: int, dst: Coord, tag: int) -> int:
    """cu_null SEND: n CU_DATA flits (1..256) to dst, then retire with result `tag`."""
    if not 1 <= n <= 256:
        raise ValueError(f"flit count {n} is outside 1..256")
    return 2 << 252 | (tag & 0xFFFF_FFFF) << 32 | (n - 1) << 16 | dst[0] << 107 | dst[1] << 103


def null_sent_flit(unit: Coord, dst: Coord, tag: int, i: int, n: int) -> int:
    """Flit i of n that a SEND instruction makes the unit transmit."""
    return make_flit(dst, unit, FlitType.CU_DATA, i, int(i == n - 1), (tag & 0xFFFF_FFFF) << 224 | i)
