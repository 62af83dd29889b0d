"""The cluster CU model: encoder, L1 images, sweep order, drain flit sequences, receive and acks."""

from __future__ import annotations

import numpy as np
import pytest

from models.cluster import (
    ACC_TILES, CU_TYPE, INST_FIELDS, L1_GRANULES, WBURST, Buf, ClusterModel, Fault, Op, a_entries, acks_for,
    b_entries, cu_data_bursts, data_received, decode_inst, drain, drain_shape, encode_inst, fault_of, fill,
    gemm, granules_of, send_granules, split_by_type, sweep_order, unpack_send,
)
from models.cu_base import SigCode, cu_inst, signal_fields
from models.flit import FlitType, flit_field, unpack_flit
from models.numerics.cluster import gemm_reference
from models.numerics.formats import ACC, FP16, decode, encode
from models.numerics.layout import unpack_fp16_subtile
from models.numerics.reference import bit_mismatches, ulp, ulp_failures
from tb.lib.expect import compare_per_port

UNIT, AGENT, SINK, MAG = (1, 1), (1, 0), (2, 1), (0, 1)


def _operands(rng: np.random.Generator, gm: int, gn: int, nk: int, lo: int = -4, hi: int = 3, scale: int = 0xA0):
    a = rng.integers(lo, hi + 1, size=(4 * gm, 32 * nk))
    b = rng.integers(lo, hi + 1, size=(32 * nk, 4 * gn))
    sa = np.full((4 * gm, nk), scale)
    sb = np.full((nk, 4 * gn), scale)
    return a, b, sa, sb


def _loaded(rng, gm, gn, nk, **kw) -> tuple[ClusterModel, np.ndarray, np.ndarray]:
    m = ClusterModel(UNIT, MAG)
    a, b, sa, sb = _operands(rng, gm, gn, nk, **kw)
    m.receive(cu_data_bursts(UNIT, AGENT, Buf.L1A, 0, granules_of(a_entries(a, sa))))
    m.receive(cu_data_bursts(UNIT, AGENT, Buf.L1B, 0, granules_of(b_entries(b, sb))))
    return m, a, b


def _tiles_fp16(granules: list[int]) -> list[np.ndarray]:
    return [unpack_fp16_subtile(g) for g in granules]


# ---------------------------------------------------------------- encoder
def test_fields_sit_at_their_fixed_positions() -> None:
    assert encode_inst(Op.GEMM) == 2 << 252
    assert encode_inst(Op.DRAIN, dnode=1) == 3 << 252 | 1 << 111
    assert encode_inst(Op.DRAIN, dack_x=0xF) == 3 << 252 | 0xF << 79
    assert encode_inst(Op.FILL, n=0xFFFF) == 1 << 252 | 0xFFFF << 202
    # addr: low 34 bits at [251:218], high 6 at [68:63]
    assert encode_inst(Op.FILL, addr=(1 << 34) - 1) == 1 << 252 | ((1 << 34) - 1) << 218
    assert encode_inst(Op.FILL, addr=0x3F << 34) == 1 << 252 | 0x3F << 63
    # every field round-trips at its maximum, and no two fields overlap
    seen = 0
    for name, (msb, lsb) in INST_FIELDS.items():
        mask = ((1 << (msb - lsb + 1)) - 1) << lsb
        assert seen & mask == 0, name
        seen |= mask
        if name != "op":
            v = (1 << (msb - lsb + 1)) - 1
            assert decode_inst(encode_inst(Op.GEMM, **{name: v}))[name] == v
    assert decode_inst(encode_inst(Op.FILL, addr=0xAB_1234_5678))["addr"] == 0xAB_1234_5678


@pytest.mark.parametrize("kwargs, field, limit", [
    (dict(gm=256), "gm", "0..255"),
    (dict(n=1 << 16), "n", "0..65535"),
    (dict(dst_x=16), "dst_x", "0..15"),
    (dict(dmesh=4), "dmesh", "0..3"),
    (dict(addr=1 << 40), "addr", "40 bits"),
    (dict(anchor=-1), "anchor", "0..255"),
])
def test_encoder_refuses_out_of_range_naming_field_and_limit(kwargs, field, limit) -> None:
    with pytest.raises(ValueError) as e:
        encode_inst(Op.GEMM, **kwargs)
    assert f"'{field}'" in str(e.value) and limit in str(e.value)


def test_encoder_refuses_unknown_field() -> None:
    with pytest.raises(TypeError, match="unknown CU_INST field"):
        encode_inst(Op.GEMM, gk=1)


@pytest.mark.parametrize("build, fault", [
    (lambda s: fill(0, 256, 0, strict=s), Fault.FILL_RANGE),
    (lambda s: fill(0, 10, 0, eoff=250, strict=s), Fault.FILL_RANGE),
    (lambda s: gemm(17, 16, 1, strict=s), Fault.GEMM_RANGE),
    (lambda s: gemm(16, 1, 17, aoff=255, strict=s), Fault.GEMM_RANGE),
    (lambda s: gemm(1, 16, 17, boff=245, strict=s), Fault.GEMM_RANGE),
    (lambda s: drain(257, strict=s), Fault.DRAIN_RANGE),
    (lambda s: drain(4, dmesh=1, strict=s), Fault.REMOTE),
])
def test_strict_helpers_refuse_what_would_fault(build, fault) -> None:
    with pytest.raises(ValueError, match=fault.name):
        build(True)
    assert fault_of(build(False)) == fault


def test_limits_themselves_are_legal() -> None:
    assert fault_of(fill(0, 255, 1)) is None
    assert fault_of(fill(0, 6, 0, eoff=250)) is None
    assert fault_of(gemm(16, 16, 16, aoff=255, boff=255)) is None  # reaches entry 510
    assert fault_of(gemm(1, 16, 16, boff=255, strict=False)) is None
    assert fault_of(gemm(0, 0, 0)) is None  # 0 reads as 1
    assert fault_of(drain(256)) is None
    assert fault_of(encode_inst(0)) == Fault.OPCODE and fault_of(encode_inst(7)) == Fault.OPCODE


# ---------------------------------------------------------------- sweep
def test_sweep_is_k_outermost_with_tile_numbering() -> None:
    cmds = sweep_order(2, 3, 2, aoff=10, boff=20)
    assert len(cmds) == 12
    assert [(c.kb, c.g, c.h) for c in cmds[:4]] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0)]
    assert [c.tile for c in cmds[:6]] == [0, 1, 2, 3, 4, 5] and [c.tile for c in cmds[6:]] == [0, 1, 2, 3, 4, 5]
    c = cmds[7]  # kb=1, g=0, h=1
    assert (c.a_entry, c.b_entry, c.load) == (10 + 0 * 2 + 1, 20 + 1 * 2 + 1, False)
    assert sum(c.load for c in cmds) == 6
    assert sum(c.load for c in sweep_order(2, 3, 2, acc=1)) == 0


# ---------------------------------------------------------------- the reference GEMM (protocol section 7)
def test_reference_gemm_gives_exact_integer_products() -> None:
    rng = np.random.default_rng(7)
    m, a, b = _loaded(rng, 3, 3, 2)
    out = m.execute(cu_inst(UNIT, AGENT, 0x40, 0, gemm(3, 3, 2)))
    assert out.flits == [] and signal_fields(out.completion) == (SigCode.INST_COMPLETE, 0)
    exact = a @ b  # 12 x 12 integers
    for t, tile in enumerate(_tiles_fp16(m.fp16_tiles(9))):
        g, h = divmod(t, 3)
        want = exact[4 * g:4 * g + 4, 4 * h:4 * h + 4].astype(np.float16).view(np.uint16)
        assert np.array_equal(tile, want), t


def test_random_gemm_matches_float64_reference_within_rounding() -> None:
    rng = np.random.default_rng(11)
    gm, gn, nk = 2, 2, 3
    m = ClusterModel()
    a = rng.integers(-64, 64, size=(4 * gm, 32 * nk))
    b = rng.integers(-64, 64, size=(32 * nk, 4 * gn))
    sa = rng.integers(0x90, 0xA8, size=(4 * gm, nk))
    sb = rng.integers(0x90, 0xA8, size=(nk, 4 * gn))
    m.receive(cu_data_bursts(UNIT, AGENT, 0, 0, granules_of(a_entries(a, sa))))
    m.receive(cu_data_bursts(UNIT, AGENT, 1, 0, granules_of(b_entries(b, sb))))
    m.execute(cu_inst(UNIT, AGENT, 1, 0, gemm(gm, gn, nk, anchor=40)))
    ref = np.zeros((4 * gm, 4 * gn))
    bound = np.zeros((4 * gm, 4 * gn))
    for kb in range(nk):
        part = gemm_reference(a[:, 32 * kb:32 * kb + 32], b[32 * kb:32 * kb + 32, :], sa[:, kb], sb[kb, :], 40)
        ref += part
        # each step rounds twice (the product, then the sum), half an ulp each at its magnitude
        bound += 0.5 * ulp(part, ACC) + 0.5 * ulp(np.abs(ref) + np.abs(part), ACC)
    got = np.zeros((4 * gm, 4 * gn), np.uint32)
    for t in range(gm * gn):
        g, h = divmod(t, gn)
        got[4 * g:4 * g + 4, 4 * h:4 * h + 4] = m.acc[t]
    err = np.abs(decode(got, ACC) - ref)
    assert (err <= bound).all(), np.max(err / bound)
    assert ulp_failures(got, ACC, ref, max_ulps=0.5 * 2 * nk * 8) == []


def test_a_wrong_value_is_caught() -> None:
    """The checkers the bench uses fail on a single flipped bit."""
    rng = np.random.default_rng(3)
    m, _, _ = _loaded(rng, 3, 3, 2)
    m.execute(cu_inst(UNIT, AGENT, 0x40, 0, gemm(3, 3, 2)))
    flits = m.execute(cu_inst(UNIT, AGENT, 0x41, 0, drain(9, dnode=1, dst=SINK))).flits
    wrong = list(flits)
    wrong[3] ^= 1 << 5  # one bit of one FP16 element of sub-tile 2
    checks, errors = compare_per_port({4: flits}, [_Rec(0, 4, f) for f in wrong])
    assert checks == 11 and len(errors) == 1 and "WRONG" in errors[0]
    data = [unpack_flit(f).payload for k, f in enumerate(wrong) if k not in (0, 9)]
    assert len(bit_mismatches(m.fp16_tiles(9), data)) == 1
    assert bit_mismatches(m.fp16_tiles(9), [unpack_flit(f).payload for k, f in enumerate(flits) if k not in (0, 9)]) == []
    assert compare_per_port({4: flits}, [_Rec(0, 4, f) for f in flits]) == (11, [])


class _Rec:
    def __init__(self, cycle: int, port: int, flit: int) -> None:
        self.cycle, self.port, self.flit = cycle, port, flit


# ---------------------------------------------------------------- drains
@pytest.mark.parametrize("n", [1, 8, 9, 64])
def test_node_drain_granules_descriptors_and_offsets(n: int) -> None:
    rng = np.random.default_rng(n)
    m = ClusterModel()
    m.acc[:] = rng.integers(0, 1 << 22, size=m.acc.shape)
    flits = m.drain(decode_inst(drain(n, addr=5 * 32, dnode=1, dst=SINK, dbuf=0, dflags=1, dack=AGENT)))
    granules, bursts = drain_shape(n)
    assert (granules, bursts) == (n, acks_for(n)) and acks_for(n) == -(-n // 8)
    assert len(flits) == granules + bursts
    data = []
    i = 0
    for b in range(bursts):
        d = unpack_flit(flits[i])
        k = min(WBURST, n - 8 * b)
        assert (d.type, d.dst, d.src, d.txn, d.last) == (FlitType.CU_DATA, SINK, UNIT, b, 0)
        assert d.payload >> 248 == 0 and (d.payload >> 232) & 0xFFFF == 5 + 8 * b
        assert (d.payload >> 224) & 0xFF == k - 1 and (d.payload >> 216) & 0xFF == 1
        assert ((d.payload >> 212) & 0xF, (d.payload >> 208) & 0xF) == (AGENT[1], AGENT[0])
        for j in range(k):
            f = unpack_flit(flits[i + 1 + j])
            assert f.last == int(j == k - 1) and f.txn == b
            data.append(f.payload)
        i += k + 1
    assert data == m.fp16_tiles(n)


def test_memory_drain_bursts_addresses_and_data() -> None:
    rng = np.random.default_rng(5)
    m = ClusterModel(UNIT, MAG)
    m.acc[:] = rng.integers(0, 1 << 22, size=m.acc.shape)
    base = 0x12_3456_7800
    flits = m.drain(decode_inst(drain(20, addr=base)))
    by = split_by_type(flits)
    reqs, data = by[FlitType.MEM_WR_REQ], by[FlitType.MEM_WR_DATA]
    assert len(reqs) == 3 and len(data) == 20
    for b, r in enumerate(reqs):
        f = unpack_flit(r)
        assert (f.dst, f.last, f.txn) == (MAG, 0, b)
        assert f.payload >> 216 == base + 32 * 8 * b and (f.payload >> 208) & 0xFF == min(8, 20 - 8 * b) - 1
        assert f.payload & ((1 << 208) - 1) == 0
    assert [unpack_flit(d).payload for d in data] == m.fp16_tiles(20)
    assert [unpack_flit(d).last for d in data] == [int(i in (7, 15, 19)) for i in range(20)]
    # descriptor then its own data: one open write at a time
    assert [flit_field(f, "type") for f in flits[:10]] == [1] + [4] * 8 + [1]


def test_emit_saturates_never_infinity() -> None:
    m = ClusterModel()
    big = int(encode(70000.0, ACC))
    m.acc[0] = big
    m.acc[1] = int(encode(-1e12, ACC))
    m.acc[2] = int(encode(65519.0, ACC))  # rounds to 65504
    m.acc[3] = int(encode(65520.0, ACC))  # IEEE would give infinity
    t = _tiles_fp16(m.fp16_tiles(4))
    assert (t[0] == 0x7BFF).all() and (t[1] == 0xFBFF).all() and (t[2] == 0x7BFF).all() and (t[3] == 0x7BFF).all()
    assert not np.isinf(decode(np.concatenate([x.reshape(-1) for x in t]), FP16)).any()


def test_send_drain_two_granules_per_subtile() -> None:
    rng = np.random.default_rng(9)
    m = ClusterModel()
    m.acc[:] = rng.integers(0, 1 << 22, size=m.acc.shape)
    flits = m.drain(decode_inst(drain(5, addr=64, dnode=1, dst=(1, 2), dbuf=2)))
    assert drain_shape(5, send=True) == (10, 2) and len(flits) == 12
    d0 = unpack_flit(flits[0]).payload
    assert (d0 >> 248, (d0 >> 232) & 0xFFFF, (d0 >> 224) & 0xFF) == (2, 2, 7)
    d1 = unpack_flit(flits[9]).payload
    assert ((d1 >> 232) & 0xFFFF, (d1 >> 224) & 0xFF) == (2 + 8, 1)
    data = [unpack_flit(f).payload for k, f in enumerate(flits) if k not in (0, 9)]
    for t in range(5):
        assert np.array_equal(unpack_send(data[2 * t], data[2 * t + 1]), m.acc[t])
    assert send_granules(m.acc[0]) == (data[0], data[1])


# ---------------------------------------------------------------- the cluster as a receiver
def test_bursts_into_the_cluster_are_acknowledged_even_when_rejected() -> None:
    m = ClusterModel(UNIT, MAG)
    src = (1, 2)
    g = list(range(1, 9))
    cases = [  # (buf, off, granules, flags, ack, accepted)
        (0, 0, g, 1, (0, 0), True),
        (1, 100, g, 1, AGENT, True),
        (2, 4, g, 1, SINK, True),
        (3, 0, g, 1, (0, 0), False),  # reserved buf
        (9, 0, g, 1, AGENT, False),  # unallocated buf
        (0, L1_GRANULES - 4, g, 1, (0, 0), False),  # would wrap: rejected, never wrapped
        (2, 3, g, 1, (0, 0), False),  # odd peer offset
        (2, 2 * ACC_TILES - 4, g, 1, (0, 0), False),  # past the accumulator
        (0, 200, g, 0, (0, 0), True),  # no ack asked
    ]
    for buf, off, data, flags, ack, ok in cases:
        assert m.burst_ok(buf, off, len(data) - 1) == ok, (buf, off)
        before = list(m.l1[Buf.L1A])
        acks = m.receive(cu_data_bursts(UNIT, src, buf, off, data, flags=flags, ack=ack, txn=0x21))
        want_dst = ack if ack != (0, 0) else src
        assert acks == ([data_received(want_dst, UNIT, buf, 0x21)] if flags else [])
        if not ok:
            assert m.l1[Buf.L1A] == before
    assert m.l1[Buf.L1A][:8] == g and m.l1[Buf.L1B][100:108] == g and m.l1[Buf.L1A][200:208] == g
    assert signal_fields(data_received(AGENT, UNIT, 9)) == (SigCode.DATA_RECEIVED, 9)


def test_peer_burst_adds_into_the_accumulator() -> None:
    rng = np.random.default_rng(2)
    m = ClusterModel()
    m.acc[:] = rng.integers(0, 1 << 22, size=m.acc.shape) & ~(1 << 21)  # positive values
    before = m.acc.copy()
    granules = [x for t in range(4) for x in send_granules(m.acc[t])]
    m.receive(cu_data_bursts(UNIT, (2, 1), 2, 0, granules))
    v0, v1 = decode(before[:4], ACC), decode(m.acc[:4], ACC)
    # doubling is exact unless it saturates
    assert np.array_equal(np.where(np.abs(v0) * 2 > decode(np.uint32(0x1FFFFF), ACC), v1, v0 * 2), v1)
    assert np.array_equal(m.acc[4:], before[4:])


def test_fill_request_and_responses() -> None:
    m = ClusterModel(UNIT, MAG)
    inst = cu_inst(UNIT, AGENT, 0x40, 0, fill(0x2000, 3, 1, eoff=7))
    out = m.execute(inst)
    req = unpack_flit(out.flits[0])
    assert (req.type, req.dst, req.src, req.txn, req.last) == (FlitType.MEM_RD_REQ, MAG, UNIT, 7, 1)
    p = req.payload
    assert (p >> 216, (p >> 208) & 0xFF, (p >> 200) & 0xFF, (p >> 192) & 0xFF, (p >> 158) & 0xFF) == (
        0x2000, 3, 0x40, 3, 4)
    words = list(range(100, 112))
    resp = m.fill_responses(words, inst & ((1 << 256) - 1))
    assert [(flit_field(f, "txn"), flit_field(f, "rsvd"), flit_field(f, "last")) for f in resp[:5]] == [
        (7, 0, 0), (7, 1, 0), (7, 2, 0), (7, 3, 1), (8, 0, 0)]
    assert m.l1[Buf.L1B][28:40] == words


def test_faulting_instruction_sends_nothing_and_faults() -> None:
    m = ClusterModel()
    out = m.execute(cu_inst(UNIT, AGENT, 3, 0, drain(300, strict=False)))
    assert out.flits == [] and out.fault == Fault.DRAIN_RANGE
    assert signal_fields(out.completion) == (SigCode.FAULT, 0x12)
    assert CU_TYPE == 0x4D47
