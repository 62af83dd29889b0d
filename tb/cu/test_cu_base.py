"""Module bench of the shared compute-unit base (cu_base) with a test unit behind it.

Four bench endpoints around a 1x1 mesh send instructions, CU_CTRL reads and
flits the unit does not consume; every answer must come back to its own
sender, exactly as models/cu/base.py predicts, under hostile stalls.
"""

from __future__ import annotations

import cocotb

from models.cu.base import (
    CTRL_CAPS, caps_value, completion, ctrl_reply, ctrl_reply_fields, ctrl_request, cu_inst,
    null_send, null_sent_flit, null_work,
)
from models.noc.flit import FlitType, pack_fields
from tb.lib.expect import compare_per_port
from tb.lib.harness import StallMode, StallPattern
from tb.noc.bench import NocTB

UNIT = (1, 1)
UNIT_PORT = 0
CU_TYPE, CU_VERSION, N_BUFFERS, INST_DEPTH = 0x4E55, 1, 0, 32
HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 80), backpressure=StallPattern(StallMode.BURST, 40))


def _sources(tb: NocTB) -> list[int]:
    return [p for p in tb.geometry.endpoints() if p != UNIT_PORT]


def _by_type(flit: int) -> int:
    return (flit >> 268) & 0xF


def _finish(tb: NocTB, run, expected: dict[int, list[int]], key=lambda f: None) -> None:
    v = tb.verdict
    v.check(run.outcome.ended == "done", f"run ended by {run.outcome.ended}: "
            f"{run.outcome.captured}/{run.expected_captures} answers captured")
    checks, errors = compare_per_port(expected, run.records, key)
    v.add_checks(checks, errors)
    v.check(run.mon_err == 0, "an RTL monitor raised mon_err (see ERROR lines)")
    v.finish()


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_completions_go_back_to_each_source(dut, hostile: bool) -> None:
    """Interleaved instructions from four sources: one completion each, code, arg, txn, order."""
    tb = NocTB(dut, f"test_completions_go_back_to_each_source/hostile={hostile}")
    streams: dict[int, list[int]] = {}
    expected: dict[int, list[int]] = {}
    for port in _sources(tb):
        src = tb.geometry.port_coord(port)
        n = 12
        for i in range(n):
            fault = tb.rng.random() < 0.15
            result = tb.rng.getrandbits(32)
            inst = cu_inst(UNIT, src, tb.rng.getrandbits(8), int(i == n - 1),
                           null_work(tb.rng.randrange(1, 20), result, fault))
            streams.setdefault(port, []).append(inst)
            expected.setdefault(port, []).append(completion(UNIT, inst, fault, result))
    run = await tb.run_streams(streams, expect_total=sum(map(len, expected.values())),
                               **(HOSTILE if hostile else {}))
    _finish(tb, run, expected)


@cocotb.test()
async def test_ctrl_reads_answered_by_the_base(dut) -> None:
    """CU_CTRL reads (CU_CAPS, reserved indices) answered to each requester, beside instructions."""
    tb = NocTB(dut, "test_ctrl_reads_answered_by_the_base")
    streams: dict[int, list[int]] = {}
    expected: dict[int, list[int]] = {}
    caps = caps_value(CU_TYPE, CU_VERSION, N_BUFFERS, INST_DEPTH)
    for port in _sources(tb):
        src = tb.geometry.port_coord(port)
        for k, index in enumerate([CTRL_CAPS, 4, 200, CTRL_CAPS]):
            req = ctrl_request(UNIT, src, txn=k, index=index)
            inst = cu_inst(UNIT, src, 0x80 + k, 0, null_work(5, k))
            streams.setdefault(port, []).extend([req, inst])
            expected.setdefault(port, []).extend([ctrl_reply(UNIT, req, caps if index == CTRL_CAPS else 0),
                                                  completion(UNIT, inst, False, k)])
    run = await tb.run_streams(streams, expect_total=sum(map(len, expected.values())), **HOSTILE)
    # Replies and completions to one requester come from two queues: order them per type.
    _finish(tb, run, expected, key=_by_type)


@cocotb.test()
async def test_status_and_debug_indices_are_framed(dut) -> None:
    """CU_STATUS, CU_COUNTERS and CU_DBG replies: right header, code, index; live values sane."""
    tb = NocTB(dut, "test_status_and_debug_indices_are_framed")
    port = _sources(tb)[0]
    src = tb.geometry.port_coord(port)
    reqs = [ctrl_request(UNIT, src, txn=i, index=i) for i in (1, 2, 3)]
    run = await tb.run_streams({port: reqs}, expect_total=3)
    v = tb.verdict
    got = [r.flit for r in run.records if r.port == port]
    v.check(len(got) == 3, f"{len(got)} replies for 3 reads")
    for req, flit in zip(reqs, got):
        code, index, value = ctrl_reply_fields(flit)
        v.check(flit == ctrl_reply(UNIT, req, value), f"reply framing wrong for index {index}")
        if index == 1:
            v.check((value >> 32) & 0xFFFF == INST_DEPTH, f"CU_STATUS inst_space {(value >> 32) & 0xFFFF} on an idle unit")
            v.check(value >> 63 == 0, "CU_STATUS busy on an idle unit")
        if index == 2:
            v.check(value >> 32 == 0, f"CU_COUNTERS retired {value >> 32} before any instruction")
        if index == 3:
            v.check(value & 0xFFFF_FFFF > 0, "CU_DBG (cycles since reset) did not count")
    v.check(run.mon_err == 0, "an RTL monitor raised mon_err")
    v.finish()


@cocotb.test()
async def test_full_instruction_fifo_backpressures_without_loss(dut) -> None:
    """60 slow instructions from one source overfill the 32-deep FIFO: busy, no loss, order kept."""
    tb = NocTB(dut, "test_full_instruction_fifo_backpressures_without_loss")
    port = _sources(tb)[1]
    src = tb.geometry.port_coord(port)
    insts = [cu_inst(UNIT, src, i & 0xFF, int(i == 59), null_work(25, i)) for i in range(60)]
    run = await tb.run_streams({port: insts}, expect_total=60)
    _finish(tb, run, {port: [completion(UNIT, f, False, i) for i, f in enumerate(insts)]})


@cocotb.test()
async def test_unconsumed_types_are_dropped(dut) -> None:
    """MEM_WR_ACK, MEM_RD_RESP, CU_DATA and a reserved type are taken and dropped; nothing hangs."""
    tb = NocTB(dut, "test_unconsumed_types_are_dropped")
    port = _sources(tb)[2]
    src = tb.geometry.port_coord(port)
    flits: list[int] = []
    expected: list[int] = []
    for i, t in enumerate([FlitType.MEM_WR_ACK, FlitType.MEM_RD_RESP, FlitType.CU_DATA, 0x9] * 5):
        flits.append(pack_fields({"dst_x": UNIT[0], "dst_y": UNIT[1], "src_x": src[0], "src_y": src[1],
                                  "type": t, "txn": i, "last": 1, "payload": tb.rng.getrandbits(256)}))
        inst = cu_inst(UNIT, src, i, 0, null_work(2, i))
        flits.append(inst)
        expected.append(completion(UNIT, inst, False, i))
    run = await tb.run_streams({port: flits}, expect_total=len(expected))
    _finish(tb, run, {port: expected})


@cocotb.test()
async def test_unit_send_path(dut) -> None:
    """A unit's own flits leave verbatim to their destination, then the completion."""
    tb = NocTB(dut, "test_unit_send_path")
    a, b = _sources(tb)[0], _sources(tb)[3]
    src, dst = tb.geometry.port_coord(a), tb.geometry.port_coord(b)
    inst = cu_inst(UNIT, src, 0x33, 1, null_send(9, dst, 0xCAFE))
    expected = {a: [completion(UNIT, inst, False, 0xCAFE)],
                b: [null_sent_flit(UNIT, dst, 0xCAFE, i, 9) for i in range(9)]}
    run = await tb.run_streams({a: [inst]}, expect_total=10, **HOSTILE)
    _finish(tb, run, expected)


@cocotb.test()
@cocotb.parametrize(bug=[1, 2, 3])
async def test_monitor_catches_unit_bug(dut, bug: int) -> None:
    """A unit that retires twice, retires in its accept cycle, or sends with a wrong src is reported."""
    tb = NocTB(dut, f"test_monitor_catches_unit_bug/bug={bug}")
    port = _sources(tb)[0]
    src = tb.geometry.port_coord(port)
    payload = null_send(2, tb.geometry.port_coord(_sources(tb)[1]), 1) if bug == 3 else null_work(4, 1)
    dut.u_unit.bug.value = bug
    run = await tb.run_streams({port: [cu_inst(UNIT, src, 1, 0, payload)]}, expect_total=1, quiet_limit=300)
    tb.verdict.check(run.mon_err == 1, f"unit bug {bug} did not raise mon_err")
    tb.verdict.finish()


@cocotb.test()
async def test_phases_without_reset(dut) -> None:
    """A host sequence in two runs without a reset: the second run sees only its own answers."""
    tb = NocTB(dut, "test_phases_without_reset")
    port = _sources(tb)[0]
    src = tb.geometry.port_coord(port)
    first = [cu_inst(UNIT, src, i, 0, null_work(3, i)) for i in range(5)]
    second = [cu_inst(UNIT, src, 0x10 + i, int(i == 2), null_work(3, 0x10 + i)) for i in range(3)]
    run1 = await tb.run_streams({port: first}, expect_total=5)
    checks, errors = compare_per_port({port: [completion(UNIT, f, False, i) for i, f in enumerate(first)]},
                                      run1.records)
    tb.verdict.add_checks(checks, errors)
    run2 = await tb.run_streams({port: second}, expect_total=3, reset=False)
    _finish(tb, run2, {port: [completion(UNIT, f, False, 0x10 + i) for i, f in enumerate(second)]})
