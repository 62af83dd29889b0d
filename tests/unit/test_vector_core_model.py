"""The vector-core model: encodings, descriptor walk, L1, bursts, faults, the epilogue."""

from __future__ import annotations

import numpy as np
import pytest

from models.cu_base import SigCode, cu_inst, signal_fields
from models.flit import FIELDS, FlitType
from models.numerics import e8m15_to_fp16, fp16_to_e8m15
from models.vector_core import (
    DT_FP32, F_CHAIN, F_CUDATA, F_DTYPE, F_LEN, F_OPCODE, F_RANGE, F_VL, F_VSRC, MODEL_DTYPES,
    MODEL_OPS, Descriptor, NodeTarget, VectorCore, assemble, assemble_line, compare_fp16_words,
    cu_data_burst, desc_payload, disassemble, encode_alu, encode_mem, imem_payload, pack_dim,
    program_flits, run_payload, u16_to_word, unpack_dim, word_to_u16,
)

UNIT, HOST, PEER, MAG = (1, 1), (1, 0), (2, 1), (0, 1)


def full_core() -> VectorCore:
    return VectorCore(UNIT, MAG, wired_ops=MODEL_OPS, wired_dtypes=MODEL_DTYPES)


def ftype(flit: int) -> int:
    return FIELDS["type"].extract(flit)


def signals(events, code=None):
    out = [signal_fields(e.flit) for e in events if ftype(e.flit) == FlitType.CU_SIGNAL]
    return [s for s in out if code is None or s[0] == code]


def run(core: VectorCore, words, descs, pc=0, src=HOST):
    return core.take_all(program_flits(UNIT, src, words, descs, pc))


# ---------------------------------------------------------------- encodings
@pytest.mark.parametrize("text, word", [
    ("VHALT", 0xF8000000), ("VBAR", 0xE0000000), ("VFILL A0", 0xE8000000),
    ("VADD v1, v0, v0", 0x18020000), ("VLD v0, A1, FP16", 0xA1200000),
    ("VST v1, A2, FP16", 0xA9420000), ("VDRAIN A0", 0xF0000000),
])
def test_protocol_example_words(text, word):
    assert assemble_line(text) == [word]


def test_fields_land_where_the_protocol_puts_them():
    w = encode_alu("VFMA", vd=3, va=4, vb=5, vc=6, sa=1, sb=3, sc=0, pr=2, pm=1)
    assert (w >> 27, (w >> 25) & 3, (w >> 23) & 3, (w >> 21) & 3) == (0x06, 1, 3, 0)
    assert ((w >> 17) & 15, (w >> 13) & 15, (w >> 9) & 15, (w >> 5) & 15, (w >> 3) & 3, (w >> 1) & 3) == (3, 4, 5, 6, 2, 1)
    m = encode_mem("VLD", ad=5, off=-3, vd=7, dtype=DT_FP32)
    assert (m >> 27, (m >> 24) & 7, (m >> 21) & 7, (m >> 17) & 15, m & 0x3FFF) == (0x14, 2, 5, 7, 0x3FFD)
    assert assemble("VSETI 16\nVSETVL\nVSETMODE FLAT") == [0xD0000000, 16, 0xC0000000, 0xC8000000]
    assert assemble_line("VSETI s3, 1.0") == [0xD2060000, 0x3F8000]
    assert assemble_line("VMUL v2, v1, s0") == [encode_alu("VMUL", 2, 1, 0, 0, 0, 1, 0)]
    assert assemble_line("VADD v2, v1, k1 ?p2") == [encode_alu("VADD", 2, 1, 0, 1, 0, 0, 3, 2, 1)]
    assert disassemble(0xA9420000) == "VST v1, A2, dtype 1"
    assert disassemble(encode_mem("VDRAIN", 3, 64)) == "VDRAIN A3+64"


@pytest.mark.parametrize("text, words", [
    ("VADD v16, v0, v0", ["vd 16", "0..15", "vd[20:17]"]),
    ("VLD v0, A1+9000", ["off 9000", "-8192..8191", "off[13:0]"]),
    ("VLD v0, A8", ["ad 8", "0..7"]),
    ("VSETI 0x1000000", ["immediate", "24-bit"]),
    ("VFOO v0, v0", ["unknown mnemonic"]),
    ("VSETMODE D3", ["mode"]),
    ("VADD v1, v0", ["expected 3 operands"]),
])
def test_refusals_name_the_field_and_limit(text, words):
    with pytest.raises(ValueError) as e:
        assemble(text)
    for w in words:
        assert w in str(e.value)


def test_descriptor_packing_and_refusals():
    assert unpack_dim(pack_dim(-32, 9)) == (-32, 9)
    assert pack_dim(32, 9) == 32 << 10 | 9
    with pytest.raises(ValueError, match="bound 1024 is outside 0..1023"):
        pack_dim(1, 1024)
    with pytest.raises(ValueError, match="stride"):
        pack_dim(1 << 23, 1)
    assert NodeTarget((1, 1), buf=0, flags=1, ack=(1, 0)).value() == 1 << 33 | 1 << 20 | 1 << 16 | 1 << 8 | 1
    p = desc_payload(3, 5, (1 << 34) - 1)
    assert (p >> 252, (p >> 249) & 7, (p >> 246) & 7, (p >> 212) & ((1 << 34) - 1)) == (2, 3, 5, (1 << 34) - 1)
    assert imem_payload(511, 0xF8000000) == 1 << 252 | 511 << 243 | 0xF8000000
    assert run_payload(7) == 3 << 252 | 7 << 243


def test_walk_is_dim1_fastest_and_bound0_reads_as_1():
    d = Descriptor(100, ((1, 2), (10, 0), (100, 3)))
    assert d.entries() == 6
    assert d.walk() == [0, 1, 100, 101, 200, 201]
    assert Descriptor(0x8000, ((32, 9),)).walk() == [32 * i for i in range(9)]


# ---------------------------------------------------------------- envelope
def test_imem_desc_retire_at_once_and_unknown_faults():
    core = VectorCore(UNIT)
    ev = core.take(cu_inst(UNIT, HOST, 1, 0, imem_payload(3, 0xF8000000)))
    ev += core.take(cu_inst(UNIT, HOST, 2, 0, desc_payload(1, 2, pack_dim(4, 4))))
    ev += core.take(cu_inst(UNIT, HOST, 3, 0, desc_payload(1, 6, 0)))
    ev += core.take(cu_inst(UNIT, HOST, 4, 1, 0xF << 252))
    assert signals(ev) == [(SigCode.INST_COMPLETE, 0), (SigCode.INST_COMPLETE, 0), (SigCode.FAULT, F_OPCODE),
                           (SigCode.FAULT, F_OPCODE)]
    assert core.imem[3] == 0xF8000000 and core.dims[1][1] == pack_dim(4, 4)
    ev = core.take(cu_inst(UNIT, HOST, 5, 1, run_payload(3)))
    assert signals(ev) == [(SigCode.BATCH_COMPLETE, 5)]
    ev = core.take(cu_inst(UNIT, HOST, 6, 0, run_payload(3)))
    assert signals(ev) == [(SigCode.INST_COMPLETE, 3)]  # RUN's result: the VHALT's address


# ---------------------------------------------------------------- peer bursts
def words(n, seed=1):
    rng = np.random.default_rng(seed)
    return [u16_to_word(rng.integers(0, 1 << 16, 16)) for _ in range(n)]


def test_burst_then_drain_to_memory_is_bit_exact():
    core = VectorCore(UNIT)
    data = words(9)
    ev = core.take_all(cu_data_burst(UNIT, PEER, data[:8], off=0, flags=1, ack=(1, 0)))
    ev += core.take_all(cu_data_burst(UNIT, PEER, data[8:], off=8, flags=1))
    acks = [(e.dst, signal_fields(e.flit)) for e in ev]
    assert acks == [(HOST, (SigCode.DATA_RECEIVED, 0)), (PEER, (SigCode.DATA_RECEIVED, 0))]
    ev = run(core, assemble("VDRAIN A0\nVHALT"), {0: Descriptor(0x8000, ((32, 9),))})
    wr = [e.flit for e in ev if ftype(e.flit) in (FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA)]
    assert all(e.dst == MAG for e in ev if ftype(e.flit) != FlitType.CU_SIGNAL)
    assert [f >> 216 & (2**40 - 1) for f in wr[0::2]] == [0x8000 + 32 * i for i in range(9)]
    assert [f & (2**256 - 1) for f in wr[1::2]] == data
    assert [FIELDS["last"].extract(f) for f in wr] == [0, 1] * 9


@pytest.mark.parametrize("kind", ["buf", "range"])
def test_rejected_burst_no_ack_no_write_and_f_cudata_once(kind):
    core = VectorCore(UNIT)
    core.write_l1(500, 0x1234)
    bad = cu_data_burst(UNIT, PEER, words(13), off=500 if kind == "range" else 0, buf=1 if kind == "buf" else 0,
                        flags=1)
    assert core.take_all(bad) == []
    assert core.l1[500] == 0x1234 and core.l1[0] == 0
    ev = run(core, assemble("VHALT"), {})
    assert signals(ev)[-1] == (SigCode.FAULT, F_CUDATA)
    ev = core.take(cu_inst(UNIT, HOST, 9, 0, run_payload(0)))
    assert signals(ev) == [(SigCode.INST_COMPLETE, 0)]  # reported once


def test_second_sender_mid_burst_faults_both():
    core = VectorCore(UNIT)
    a = cu_data_burst(UNIT, PEER, words(4, 1), off=0, flags=1)
    b = cu_data_burst(UNIT, HOST, words(3, 2), off=100, flags=1)
    order = a[:2] + b[:2] + a[2:4] + b[2:] + a[4:]
    assert core.take_all(order) == []
    assert core.l1[100] == 0 and core.l1[1] == 0  # after the intrusion nothing lands
    assert signals(run(core, assemble("VHALT"), {}))[-1] == (SigCode.FAULT, F_CUDATA)
    # the stream state is clean again: a good burst is acknowledged
    ev = core.take_all(cu_data_burst(UNIT, PEER, words(2), off=3, flags=1))
    assert signals(ev) == [(SigCode.DATA_RECEIVED, 0)]


# ---------------------------------------------------------------- the epilogue
EPILOGUE = "VSETI 16\nVSETVL\nVSETMODE FLAT\n" + "".join(
    f"VLD v0, A1+{t}\nVADD v1, v0, v0\nVST v1, A2+{t}\n" for t in range(9)) + "VDRAIN A3+64\nVHALT"
EPI_DESC = {1: Descriptor(0, ((1, 1),)), 2: Descriptor(64, ((1, 1),)), 3: Descriptor(0x8800, ((32, 9),))}


def test_reference_epilogue_doubles_exactly_and_saturates():
    core = full_core()
    rng = np.random.default_rng(7)
    lanes = rng.integers(0, 1 << 16, (9, 16)).astype(np.uint16)
    lanes &= ~np.uint16(0x7C00) | np.uint16(0x3C00)  # keep exponents finite
    lanes[0, 0], lanes[0, 1], lanes[0, 2] = 0xF8BB, 0x0000, 0x8000
    for t in range(9):
        core.write_l1(t, u16_to_word(lanes[t]))
    ev = run(core, assemble(EPILOGUE), EPI_DESC)
    assert signals(ev)[-1][0] == SigCode.INST_COMPLETE
    got = [e.flit & (2**256 - 1) for e in ev if ftype(e.flit) == FlitType.MEM_WR_DATA]
    want = [u16_to_word(e8m15_to_fp16(np.asarray(fp16_to_e8m15(lanes[t])) + (1 << 15))) for t in range(9)]
    assert compare_fp16_words(want, got)[1] == []
    assert word_to_u16(got[0])[:3].tolist() == [0xFBFF, 0x0000, 0x8000]


def test_checker_catches_a_wrong_value():
    good = words(3)
    bad = list(good)
    bad[1] ^= 1 << (16 * 5)
    checks, errors = compare_fp16_words(good, bad)
    assert checks == 48 and len(errors) == 1 and "word 1 lane 5" in errors[0]
    assert compare_fp16_words(good, good[:2])[1] == ["word 2: missing (expected %#066x)" % good[2]]


def test_wiring_faults_where_an_op_or_dtype_is_not_wired():
    core = VectorCore(UNIT, wired_ops={"VMOV", "VNEG"}, wired_dtypes=())
    assert signals(run(core, assemble("VLD v0, A1\nVHALT"), EPI_DESC))[-1] == (SigCode.FAULT, F_DTYPE)
    assert signals(run(core, assemble("VADD v1, v0, v0\nVHALT"), {}))[-1] == (SigCode.FAULT, F_OPCODE)
    assert signals(run(core, assemble("VNEG v1, v0\nVHALT"), {}))[-1] == (SigCode.INST_COMPLETE, 1)
    with pytest.raises(ValueError, match="cannot compute"):
        VectorCore(UNIT, wired_ops={"VLOG2"})


# ---------------------------------------------------------------- faults
@pytest.mark.parametrize("prog, descs, fault", [
    ("VDRAIN A0\nVHALT", {0: Descriptor(0, ((32, 16), (512, 17)))}, F_LEN),
    ("VFILL A0+500\nVHALT", {0: Descriptor(0, ((32, 16),))}, F_RANGE),
    ("VLOG2 v1, v0\nVHALT", {}, F_OPCODE),
    ("VLOOP v0, v0, v0, v0\nVHALT", {}, F_OPCODE),
    ("VSETMODE D2\nVHALT", {}, F_OPCODE),
    ("VSETI 0\nVSETVL\nVHALT", {}, F_VL),
    ("VSETI 129\nVSETVL\nVHALT", {}, F_VL),
    ("VADD v1, c0, v0\nVHALT", {}, F_CHAIN),
    ("VADD v1, k4, v0\nVHALT", {}, F_VSRC),
    ("VSETI 32\nVSETVL\nVLD v0, A1\nVHALT", {1: Descriptor(0, ((1, 1),))}, F_VL),
    ("VLD v0, A1+511\nVHALT", {1: Descriptor(1, ((1, 1),))}, F_RANGE),
])
def test_faults(prog, descs, fault):
    core = full_core()
    assert signals(run(core, assemble(prog), descs))[-1] == (SigCode.FAULT, fault)


def test_fp32_load_store_round_trip():
    core = full_core()
    f32 = np.array([0x3F800000, 0xC0490FDB, 0x00000000, 0x7F7FFFFF, 0x3EAAAAAB, 1, 0x80000000, 0x42F60000],
                   dtype=np.uint32)
    core.write_l1(10, sum(int(v) << (32 * j) for j, v in enumerate(f32)))
    ev = run(core, assemble("VSETI 8\nVSETVL\nVLD v2, A1+10, FP32\nVST v2, A1+11, FP32\nVHALT"),
             {1: Descriptor(0, ((1, 1),))})
    assert signals(ev)[-1][0] == SigCode.INST_COMPLETE
    from models.numerics import e8m15_to_fp32, fp32_to_e8m15
    want = sum(int(v) << (32 * j) for j, v in enumerate(e8m15_to_fp32(fp32_to_e8m15(f32))))
    assert core.l1[11] == want


# ---------------------------------------------------------------- node drain and fills
def test_node_drain_is_one_descriptor_for_the_walk():
    core = VectorCore(UNIT)
    data = words(5)
    for i, w in enumerate(data):
        core.write_l1(20 + i, w)
    tgt = NodeTarget((2, 1), buf=0, flags=1, ack=(1, 0))
    ev = run(core, assemble("VDRAIN A4+20\nVHALT"), {4: Descriptor(40, ((0, 5),), tgt)})
    cd = [e for e in ev if ftype(e.flit) == FlitType.CU_DATA]
    assert [e.dst for e in cd] == [(2, 1)] * 6
    d = cd[0].flit
    assert (d >> 248 & 0xFF, d >> 232 & 0xFFFF, d >> 224 & 0xFF, d >> 216 & 0xFF, d >> 212 & 0xF, d >> 208 & 0xF) == \
        (0, 40, 4, 1, 0, 1)
    assert [e.flit & (2**256 - 1) for e in cd[1:]] == data
    assert [FIELDS["last"].extract(e.flit) for e in cd] == [0, 0, 0, 0, 0, 1]


def test_fill_waits_at_vbar_and_resumes_on_the_last_response():
    core = VectorCore(UNIT)
    flits = program_flits(UNIT, HOST, assemble("VFILL A0+3\nVBAR\nVDRAIN A1+3\nVHALT"),
                          {0: Descriptor(0x100, ((64, 2),)), 1: Descriptor(0x9000, ((32, 2),))})
    ev = core.take_all(flits[:-1])
    assert len(signals(ev)) == len(flits) - 1
    ev = core.take(flits[-1])
    req = [e.flit for e in ev if ftype(e.flit) == FlitType.MEM_RD_REQ]
    assert [(FIELDS["txn"].extract(f), f >> 216 & (2**40 - 1)) for f in req] == [(0, 0x100), (1, 0x140)]
    assert signals(ev) == []  # waiting at VBAR
    from models.flit import pack_fields
    resp = lambda txn, w: pack_fields({"dst_x": 1, "dst_y": 1, "src_x": 0, "src_y": 1, "type": FlitType.MEM_RD_RESP,
                                       "txn": txn, "last": 1, "payload": w})  # noqa: E731
    assert core.take(resp(1, 0xBB)) == []
    ev = core.take(resp(0, 0xAA))
    assert [e.flit & 0xFF for e in ev if ftype(e.flit) == FlitType.MEM_WR_DATA] == [0xAA, 0xBB]
    assert signals(ev) == [(SigCode.INST_COMPLETE, 3)]
