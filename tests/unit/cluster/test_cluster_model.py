"""The cluster CU model: encoder, L1 images, sweep order, drain flit sequences, receive and acks, FILL request.

Field positions and flit layouts are written out here from protocol.md §6 and units.md §C, not taken
from the model. The event model's behaviour (multicast, held responses, banks, emit/fuse, exec_result)
is tested in test_cluster_core.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.cluster import (
    ACC_TILES, CU_TYPE, INST_FIELDS, L1_GRANULES, WBURST, Buf, ClusterModel, Fault, Op, a_entries, acks_for,
    b_entries, cu_data_bursts, data_received, decode_inst, drain, drain_shape, encode_inst, fault_of, fill,
    gemm, granules_of, send_granules, split_by_type, sweep_order, unpack_send,
)
from models.cu.base import SigCode, cu_inst, signal_fields
from models.noc.flit import FlitType, flit_field, unpack_flit
from models.numerics.cluster import gemm_reference
from models.numerics.formats import ACC, FP16, decode
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


def test_new_fields_sit_at_the_positions_of_units_md_c1() -> None:
    assert encode_inst(Op.FILL, peers=0xABCDEF) == 1 << 252 | 0xABCDEF << 144
    assert encode_inst(Op.FILL, npeer=3) == 1 << 252 | 3 << 142
    assert encode_inst(Op.FILL, preq=1) == 1 << 252 | 1 << 141
    assert encode_inst(Op.GEMM, abank=1) == 2 << 252 | 1 << 114
    assert encode_inst(Op.GEMM, bbank=1) == 2 << 252 | 1 << 113
    assert encode_inst(Op.FILL, fbank=1) == 1 << 252 | 1 << 112
    # peers as (x, y): peer 0 at [151:144], {y,x}
    p = fill(0, 1, 0, peers=[(2, 1), (1, 2), (3, 1)])
    assert (p >> 144) & 0xFFFFFF == 0x13_21_12 and (p >> 142) & 3 == 3
    with pytest.raises(ValueError, match="at most 3 peers"):
        fill(0, 1, 0, peers=[(1, 1)] * 4)


@pytest.mark.parametrize("build, fault", [
    (lambda s: fill(0, 256, 0, strict=s), Fault.FILL_RANGE),
    (lambda s: gemm(17, 16, 1, strict=s), Fault.GEMM_RANGE),
    (lambda s: gemm(2, 2, 1, emit=1, dmesh=1, strict=s), Fault.REMOTE),
    (lambda s: drain(257, strict=s), Fault.DRAIN_RANGE),
    (lambda s: drain(4, dmesh=1, strict=s), Fault.REMOTE),
])
def test_strict_helpers_refuse_what_would_fault(build, fault) -> None:
    with pytest.raises(ValueError, match=fault.name):
        build(True)
    assert fault_of(build(False)) == fault


def test_dfin_makes_a_drain_remote() -> None:
    """dfin != 0 is a remote-mesh drain (protocol.md §6) as dmesh != 0 is: REMOTE for a DRAIN and an emitting
    GEMM, nothing for a GEMM that sends nothing (it never reads the destination fields)."""
    dfin = INST_FIELDS["dfin"][1]
    assert fault_of(drain(4) | 0x01 << dfin) == Fault.REMOTE
    assert fault_of(drain(4, dnode=1, dst=(2, 1)) | 0x80 << dfin) == Fault.REMOTE
    assert fault_of(gemm(2, 2, 2, emit=1) | 0x21 << dfin) == Fault.REMOTE
    assert fault_of(gemm(2, 2, 2) | 0x21 << dfin) is None


def test_limits_themselves_are_legal() -> None:
    assert fault_of(fill(0, 255, 1)) is None
    assert fault_of(fill(0, 6, 0, eoff=250)) is None
    assert fault_of(fill(0, 200, 0, eoff=250)) is None  # the txn tags wrap within the bank (units.md C.4)
    assert fault_of(gemm(16, 16, 16, aoff=255, boff=255)) is None  # 8-bit offsets wrap within the bank (C.5)
    assert fault_of(gemm(1, 16, 17, boff=245)) is None
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


def test_sweep_addresses_wrap_within_their_bank() -> None:
    """L1A {abank, (aoff + g*nk + kb) mod 256}, L1B {bbank, (boff + h*nk + kb) mod 256} (units.md C.5)."""
    cmds = sweep_order(2, 2, 3, aoff=254, boff=255, abank=1, bbank=0)
    for c in cmds:
        assert c.a_entry == 256 + (254 + c.g * 3 + c.kb) % 256
        assert c.b_entry == (255 + c.h * 3 + c.kb) % 256
    assert {c.a_entry for c in cmds} == {510, 511, 256, 257, 258, 259} and max(c.b_entry for c in cmds) == 255
    emit = sweep_order(2, 2, 3, emit=1)
    assert [c.emit for c in emit] == [False] * 8 + [True] * 4  # the last K block is ADD_EMIT
    assert not any(c.emit for c in sweep_order(2, 2, 1, emit=1))  # a LOAD last block emits nothing
    assert all(c.emit for c in sweep_order(2, 2, 1, emit=1, acc=1))


# ---------------------------------------------------------------- the reference GEMM (protocol section 7)
def test_reference_gemm_gives_exact_integer_products() -> None:
    rng = np.random.default_rng(7)
    m, a, b = _loaded(rng, 3, 3, 2)
    out = m.execute(cu_inst(UNIT, AGENT, 0x40, 0, gemm(3, 3, 2)))
    assert out.flits == [] and signal_fields(out.completion) == (SigCode.INST_COMPLETE, 1)  # exec_result: 1st
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
    m.acc[0] = 79 << 14  # 2^16
    m.acc[1] = 1 << 21 | 100 << 14 | 0x1234
    m.acc[2] = 78 << 14 | 0x3FE8  # halfway between 65472 and 65504: the even one, 65472
    m.acc[3] = 78 << 14 | 0x3FF8  # 65520: IEEE would give infinity
    m.acc[4] = 1 << 21 | 48 << 14 | 0x3FFF  # rounds up to 2^-14, the smallest normal
    m.acc[5] = 47 << 14 | 0x3FFF  # under 2^-15: flushed (no FP16 subnormals)
    t = _tiles_fp16(m.fp16_tiles(6))
    assert (t[0] == 0x7BFF).all() and (t[1] == 0xFBFF).all() and (t[2] == 0x7BFE).all() and (t[3] == 0x7BFF).all()
    assert (t[4] == 0x8400).all() and (t[5] == 0x0000).all()
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
    # doubling (the C.7.4 add of a tile to itself) raises the exponent by one, exactly, unless it reaches
    # binade 127, where quirk A3 gives the maximum magnitude; a zero lane stays zero
    e = (before[:4] >> 14) & 0x7F
    want = np.where(e == 0, 0, np.where(e + 1 >= 127, 127 << 14 | 0x3FFF, before[:4] + (1 << 14)))
    assert np.array_equal(m.acc[:4], want) and (e + 1 >= 127).any()
    assert np.array_equal(m.acc[4:], before[4:])


@pytest.mark.parametrize("sel, preq, flags", [(0, 0, 0x50), (1, 0, 0x70), (0, 1, 0x40), (1, 1, 0x60)])
def test_fill_request_is_units_md_c2(sel: int, preq: int, flags: int) -> None:
    m = ClusterModel(UNIT, MAG)
    inst = cu_inst(UNIT, AGENT, 0x40, 0, fill(0xAB_2000_0040, 3, sel, eoff=7, preq=preq))
    out = m.execute(inst)
    assert out.completion is None and len(out.flits) == 1  # the FILL waits for its entries
    req = unpack_flit(out.flits[0])
    assert (req.type, req.dst, req.src, req.txn, req.last, req.rsvd) == (FlitType.MEM_RD_REQ, MAG, UNIT, 7, 1, 0)
    p = req.payload
    assert p >> 216 == 0xAB_2000_0040  # addr [255:216]
    assert (p >> 208) & 0xFF == 3  # len
    assert (p >> 200) & 0xFF == flags  # {0, STREAM, BLAYOUT=sel, QUANT=!preq, 0000}
    assert (p >> 192) & 0xFF == 3  # count = n[7:0]
    assert (p >> 168) & 0xFFFFFF == 0 and (p >> 166) & 3 == 0  # peer, n_peer
    assert (p >> 158) & 0xFF == 0  # entry_words 0 (meaning 4)
    assert p & ((1 << 158) - 1) == 0


def test_fill_request_carries_the_peer_list() -> None:
    m = ClusterModel((1, 1), MAG)
    out = m.execute(cu_inst((1, 1), AGENT, 1, 0, fill(0x100, 255, 1, peers=[(2, 1), (1, 2)])))
    p = unpack_flit(out.flits[0]).payload
    assert (p >> 168) & 0xFFFFFF == 0x21_12 and (p >> 166) & 3 == 2 and (p >> 192) & 0xFF == 255


def test_fill_responses_land_and_retire() -> None:
    m = ClusterModel(UNIT, MAG)
    payload = fill(0x2000, 3, 1, eoff=7)
    m.execute(cu_inst(UNIT, AGENT, 0x40, 0, payload))
    words = list(range(100, 112))
    resp = m.fill_responses(words, payload)
    assert [(flit_field(f, "txn"), flit_field(f, "rsvd"), flit_field(f, "last")) for f in resp[:5]] == [
        (7, 0, 0), (7, 1, 0), (7, 2, 0), (7, 3, 1), (8, 0, 0)]
    assert all(unpack_flit(f).src == MAG and unpack_flit(f).dst == UNIT for f in resp)
    assert m.l1[Buf.L1B][28:40] == words
    assert [signal_fields(e.flit) for e in m.last_events] == [(SigCode.INST_COMPLETE, 1)]


def test_faulting_instruction_sends_nothing_and_faults() -> None:
    m = ClusterModel()
    out = m.execute(cu_inst(UNIT, AGENT, 3, 0, drain(300, strict=False)))
    assert out.flits == [] and out.fault == Fault.DRAIN_RANGE
    assert signal_fields(out.completion) == (SigCode.FAULT, 0x12)
    out = m.execute(cu_inst(UNIT, AGENT, 4, 0, fill(0, 256, 0, strict=False)))
    assert out.flits == [] and out.fault == Fault.FILL_RANGE and m.fill is None  # no request, nothing waits
    assert CU_TYPE == 0x4D47
