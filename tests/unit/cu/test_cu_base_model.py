"""The cu_base model: completion codes, CU_CTRL replies, field positions."""

from __future__ import annotations

import pytest

from models.cu.base import (
    SigCode, caps_value, completion, ctrl_reply, ctrl_reply_fields, ctrl_request, cu_inst,
    null_send, null_work, signal_fields,
)
from models.noc.flit import FlitType, unpack_flit

UNIT = (1, 1)


def test_completion_codes_follow_fault_then_last() -> None:
    inst = cu_inst(UNIT, (0, 1), txn=0x40, last=0, payload=null_work(3, 77))
    assert signal_fields(completion(UNIT, inst, False, 77)) == (SigCode.INST_COMPLETE, 77)
    assert signal_fields(completion(UNIT, inst, True, 9)) == (SigCode.FAULT, 9)
    last = cu_inst(UNIT, (0, 1), txn=0x41, last=1, payload=null_work(3, 77))
    assert signal_fields(completion(UNIT, last, False, 77)) == (SigCode.BATCH_COMPLETE, 0x41)
    assert signal_fields(completion(UNIT, last, True, 9)) == (SigCode.FAULT, 9)


def test_completion_is_addressed_back_with_txn_and_last() -> None:
    inst = cu_inst(UNIT, (2, 1), txn=0x5A, last=0, payload=0)
    f = unpack_flit(completion(UNIT, inst, False, 0))
    assert (f.dst, f.src, f.type, f.txn, f.last) == ((2, 1), UNIT, FlitType.CU_SIGNAL, 0x5A, 1)
    # a checker comparing against this model fails on a wrong txn
    wrong = unpack_flit(completion(UNIT, cu_inst(UNIT, (2, 1), 0x5B, 0, 0), False, 0))
    assert wrong.pack() != f.pack()


def test_ctrl_reply_layout() -> None:
    req = ctrl_request(UNIT, (0, 1), txn=7, index=0)
    value = caps_value(0x4D47, 1, 2, 32)
    assert value == 0x4D47_01_2_0020_00000
    reply = ctrl_reply(UNIT, req, value)
    assert ctrl_reply_fields(reply) == (0x02, 0, value)
    f = unpack_flit(reply)
    assert (f.dst, f.src, f.type, f.txn) == ((0, 1), UNIT, FlitType.CU_CTRL, 7)


def test_null_isa_refuses_out_of_range() -> None:
    with pytest.raises(ValueError, match="latency"):
        null_work(70000, 0)
    with pytest.raises(ValueError, match="1..256"):
        null_send(0, (1, 0), 0)
