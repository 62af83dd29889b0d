"""What the shared compute-unit endpoint base (rtl/units/cu_base.v) answers.

Pure Python, no simulator: given the flits a bench sends to a unit, it predicts
the completion signals and CU_CTRL replies the base must send back, bit for
bit. It also builds the instructions of the bench-only test unit (cu_null.v).
"""

from __future__ import annotations

from enum import IntEnum

from models.flit import FIELDS, FlitType, pack_fields

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


def flit_field(flit: int, name: str) -> int:
    return FIELDS[name].extract(flit)


def cu_inst(dst: Coord, src: Coord, txn: int, last: int, payload: int) -> int:
    """A CU_INST flit."""
    return pack_fields({"dst_x": dst[0], "dst_y": dst[1], "src_x": src[0], "src_y": src[1],
                        "type": FlitType.CU_INST, "txn": txn, "last": last, "payload": payload})


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
    return pack_fields({"dst_x": flit_field(inst, "src_x"), "dst_y": flit_field(inst, "src_y"),
                        "src_x": unit[0], "src_y": unit[1], "type": FlitType.CU_SIGNAL, "txn": txn,
                        "last": 1, "payload": signal_payload(code, arg)})


def ctrl_request(dst: Coord, src: Coord, txn: int, index: int) -> int:
    """A CU_CTRL read of one index (op 0 at [255:248], index at [247:240])."""
    return pack_fields({"dst_x": dst[0], "dst_y": dst[1], "src_x": src[0], "src_y": src[1],
                        "type": FlitType.CU_CTRL, "txn": txn, "last": 1,
                        "payload": (index & 0xFF) << 240})


def ctrl_reply(unit: Coord, request: int, value: int) -> int:
    """The base's reply to a CU_CTRL read: {0x02, index, value[63:0], 0}."""
    index = (request >> 240) & 0xFF
    return pack_fields({"dst_x": flit_field(request, "src_x"), "dst_y": flit_field(request, "src_y"),
                        "src_x": unit[0], "src_y": unit[1], "type": FlitType.CU_CTRL,
                        "txn": flit_field(request, "txn"), "last": 1,
                        "payload": CTRL_READ_RESPONSE << 248 | index << 240 | (value & (2**64 - 1)) << 176})


def ctrl_reply_fields(flit: int) -> tuple[int, int, int]:
    """(response code, index, value) of a CU_CTRL reply."""
    return (flit >> 248) & 0xFF, (flit >> 240) & 0xFF, (flit >> 176) & (2**64 - 1)


def caps_value(cu_type: int, version: int, n_buffers: int, inst_depth: int) -> int:
    """CU_CAPS: {cu_type[63:48], cu_version[47:40], n_buffers[39:36], inst_depth[35:20], 0}."""
    return cu_type << 48 | version << 40 | n_buffers << 36 | inst_depth << 20


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
    return pack_fields({"dst_x": dst[0], "dst_y": dst[1], "src_x": unit[0], "src_y": unit[1],
                        "type": FlitType.CU_DATA, "txn": i, "last": int(i == n - 1),
                        "payload": (tag & 0xFFFF_FFFF) << 224 | i})
