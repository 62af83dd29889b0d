"""The timed orchestrator against rtl/orch/orchestrator.v's dispatcher timing: word k of flit i read at edge
2 + 5i + k after the KICK's W edge, the flit in the router at 9 + 5i, run reading 0 from 2 + 5 * PROG_LEN, a
CU_INST held at credit 0 read on the edge after an INST_COMPLETE arrives."""

from __future__ import annotations

from models.cu.base import SigCode, signal_payload
from models.noc.flit import FlitType, make_flit
from models.orch.host_port import STAGE_BASE, STAGE_STRIDE, ProgStat, Reg
from models.timed.orch import TimedOrch

OWN, DST = (3, 2), (1, 0)


def _orch(n: int, ftype: FlitType = FlitType.CU_INST, credit: int = 512) -> TimedOrch:
    o = TimedOrch(OWN, 128)
    for slot in range(n):
        flit = make_flit(DST, OWN, ftype, slot, 1, slot)
        for w in range(5):
            o.write(STAGE_BASE + slot * STAGE_STRIDE + 8 * w, (flit >> (64 * w)) & ((1 << 64) - 1))
    o.write(Reg.PROG_DST, DST[1] << 4 | DST[0])
    o.write(Reg.PROG_LEN, n)
    o.write(Reg.PROG_BASE, 0)
    o.write(Reg.PROG_CRED, credit)
    return o


def _run(o: TimedOrch, edge: int) -> bool:
    o.now = edge
    return ProgStat.decode(o.read(Reg.PROG_STAT)).run


def test_kicked_flits_enter_the_mesh_five_edges_apart() -> None:
    o = _orch(4)
    stamps = [e for e, _ in o.write_at(Reg.PROG_KICK, 1, 1000)]
    assert stamps == [1009, 1014, 1019, 1024]
    assert _run(o, 1021) and not _run(o, 1022)  # run falls at 1000 + 2 + 5 * 4


def test_a_cu_inst_at_credit_zero_waits_for_a_completion() -> None:
    o = _orch(3, credit=1)
    assert [e for e, _ in o.write_at(Reg.PROG_KICK, 1, 0)] == [9]
    done = make_flit(OWN, DST, FlitType.CU_SIGNAL, 0, 1, signal_payload(SigCode.INST_COMPLETE, 0))
    assert [e for e, _ in o.take_at(done, 500)] == [508]  # its first word read at 501
    assert _run(o, 510)
    assert [e for e, _ in o.take_at(done, 520)] == [528]
    assert _run(o, 525) and not _run(o, 526)
