"""Directed tests of the vector-core golden model (models/vector_core.py over models/vc/) against the
normative spec: units.md §V (V.1-V.13) and protocol.md §1, §4, §6.

Independence. Every CONTROL expectation in this file - which elements are written, the walk, which
flits go out and every bit of them, the faults and their precedence, the VRED combine order, the loop -
is computed here from the spec text, with this file's own program-word, CU_INST-payload and flit
encoders (the model's encoders are tested against them, not used to build stimuli). Only element VALUES
come from models.numerics (e8m15, e8m15_cvt), which are tested elsewhere. Model state is set and read
through the core's attributes (v, s, p, l1, vl, mode, k3, base, dims, imem), the "backdoor".

A test that fails because the model departs from the spec says so in its message, quoting the clause.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from models.numerics import e8m15 as ar
from models.numerics import e8m15_cvt as cvt
from models.vc import isa as vc_isa
from models.vc.memory import CoreWithMemory
from models.vector_core import (
    VectorCore, assemble, assemble_line, describe_payload, disassemble, node_record, walk_total,
)

# ================================================================ constants (protocol.md §1, §4; units.md V.10)
UNIT, HOST, MAG, PEER, PEER2 = (2, 1), (3, 0), (0, 2), (1, 3), (4, 2)
T_RD_REQ, T_WR_REQ, T_RD_RESP, T_WR_ACK, T_WR_DATA, T_INST, T_SIG, T_CTRL, T_DATA = range(9)
SIG_INST, SIG_BATCH, SIG_RECV, SIG_FAULT = 0x00, 0x01, 0x03, 0x04
F_DTYPE, F_VSRC, F_CHAIN, F_OPCODE, F_LEN, F_LOOP, F_VL, F_REDVL, F_CUDATA = range(1, 10)
FNAME = {1: "F_DTYPE", 2: "F_VSRC", 3: "F_CHAIN", 4: "F_OPCODE", 5: "F_LEN", 6: "F_LOOP", 7: "F_VL",
         8: "F_REDVL", 9: "F_CUDATA"}
V, S, C, K = 0, 1, 2, 3  # source selectors (V.4)
ONE, MONE, NEG_INF, POS_INF, NEG0 = 0x3F8000, 0xBF8000, 0xFF8000, 0x7F8000, 0x800000
M40 = (1 << 40) - 1
P256 = (1 << 256) - 1
RUN_TXN = 0x5A

OPS = {"VMOV": 0x00, "VNEG": 0x01, "VABS": 0x02, "VADD": 0x03, "VSUB": 0x04, "VMUL": 0x05, "VFMA": 0x06,
       "VFNMA": 0x07, "VMAX": 0x08, "VMIN": 0x09, "VSEL": 0x0A, "VCMPLT": 0x0B, "VCMPGT": 0x0C, "VCMPEQ": 0x0D,
       "VEXP2": 0x0E, "VLOG2": 0x0F, "VINV": 0x10, "VRSQRT": 0x11, "VCVT": 0x12, "VRED": 0x13, "VLD": 0x14,
       "VST": 0x15, "VBCAST": 0x16, "VSHUF": 0x17, "VSETVL": 0x18, "VSETMODE": 0x19, "VSETI": 0x1A,
       "VLOOP": 0x1B, "VBAR": 0x1C, "VFILL": 0x1D, "VDRAIN": 0x1E, "VHALT": 0x1F}
(VMOV, VNEG, VABS, VADD, VSUB, VMUL, VFMA, VFNMA, VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ, VEXP2, VLOG2, VINV,
 VRSQRT, VCVT, VRED, VLD, VST, VBCAST, VSHUF, VSETVL, VSETMODE, VSETI, VLOOP, VBAR, VFILL, VDRAIN, VHALT) = range(32)
assert list(OPS.values()) == list(range(32)) and OPS["VHALT"] == VHALT


# ================================================================ program words (units.md V.4), our own encoders
def alu(op, vd=0, va=0, vb=0, vc=0, sa=V, sb=V, sc=V, pr=0, pm=0):
    """ALU form: op[31:27] sa[26:25] sb[24:23] sc[22:21] vd[20:17] va[16:13] vb[12:9] vc[8:5] pr[4:3] pm[2:1]."""
    return (op << 27 | sa << 25 | sb << 23 | sc << 21 | vd << 17 | va << 13 | vb << 9 | vc << 5 | pr << 3
            | pm << 1)


def vld(vd, ad, off=0, dt=1):
    """Memory form: op dt[26:24] ad[23:21] vd[20:17] off[13:0] (signed)."""
    return 0x14 << 27 | dt << 24 | ad << 21 | vd << 17 | (off & 0x3FFF)


def vst(vd, ad, off=0, dt=1):
    return 0x15 << 27 | dt << 24 | ad << 21 | vd << 17 | (off & 0x3FFF)


def vcvt(vd, va, dt):
    return 0x12 << 27 | dt << 24 | vd << 17 | va << 13


def vfill(ad, start):
    return 0x1D << 27 | ad << 21 | start


def vdrain(ad, start):
    return 0x1E << 27 | ad << 21 | start


def vdrain_node(ad, start, dst, buf=0, sig=0):
    """Node form: [25] signal, [24] = 1, ad[23:21], dst_x[20:17], dst_y[16:13], buf[12:9], start[8:0]."""
    return 0x1E << 27 | sig << 25 | 1 << 24 | ad << 21 | dst[0] << 17 | dst[1] << 13 | buf << 9 | start


W_BAR, W_HALT = 0x1C << 27, 0x1F << 27


def vseti(imm_word, s=0, sa=V):
    """VSETI and the word after it (the immediate is its [23:0])."""
    return [alu(VSETI, vd=s, sa=sa), imm_word]


def vsetvl(s):
    return alu(VSETVL, va=s)


def vsetmode(m):
    return alu(VSETMODE, va=m)


def vloop(s, body):
    return alu(VLOOP, va=s, vb=body)


def vred(kind, sd, va=0, vb=0, pr=0):
    return alu(VRED, vd=sd, va=va, vb=vb, vc=kind, pr=pr)


def pro(vl=None, mode=None):
    """Prologue words: VL = vl (through S15) and/or the mode. Tests that use it leave S15 alone."""
    out = []
    if vl is not None:
        out += vseti(vl, 15) + [vsetvl(15)]
    if mode is not None:
        out.append(vsetmode(mode))
    return out


# ================================================================ CU_INST payloads (units.md V.2), our own
def p_imem(addr, word):
    return 1 << 252 | addr << 243 | word


def p_desc(ad, fld, value):
    """DESC: ad [251:249], fld [248:246], value = {[68:63], [245:212]}."""
    return 2 << 252 | ad << 249 | fld << 246 | (value & ((1 << 34) - 1)) << 212 | ((value >> 34) & 0x3F) << 63


def p_run(pc):
    return 3 << 252 | pc << 243


def p_dim(stride, bound):
    """stride = value[33:16] (18-bit two's complement), bound = value[15:0]."""
    return (stride & 0x3FFFF) << 16 | bound


# ================================================================ flits (protocol.md §1), our own
def mkflit(dst, src, ftype, txn, last, payload, rsvd=0):
    return (dst[0] << 284 | dst[1] << 280 | src[0] << 276 | src[1] << 272 | ftype << 268 | txn << 260
            | last << 259 | rsvd << 256 | payload)


def fl(f):
    return {"dst": ((f >> 284) & 15, (f >> 280) & 15), "src": ((f >> 276) & 15, (f >> 272) & 15),
            "type": (f >> 268) & 15, "txn": (f >> 260) & 0xFF, "last": (f >> 259) & 1, "rsvd": (f >> 256) & 7,
            "payload": f & P256}


def _fmt(v):
    return f"{v:#x}" if isinstance(v, int) else str(v)


def check_flit(ev, what, *, dst, type, txn, last, payload, rsvd=0, src=UNIT, payload_mask=P256):
    """Every header field and the (masked) payload of one sent Event, against the expectation."""
    got = fl(ev.flit)
    got["payload"] &= payload_mask
    exp = {"dst": dst, "src": src, "type": type, "txn": txn, "last": last, "rsvd": rsvd,
           "payload": payload & payload_mask}
    bad = [f"{k}: expected {_fmt(exp[k])}, got {_fmt(got[k])}" for k in exp if got[k] != exp[k]]
    if tuple(ev.dst) != tuple(dst):
        bad.append(f"Event.dst: expected {dst}, got {ev.dst}")
    assert not bad, f"{what}: " + "; ".join(bad)


def check_signal(ev, code, arg, txn, dst=HOST, wild=False, what="completion"):
    """A CU_SIGNAL (protocol.md §4): code [255:248], arg [247:216], rest 0, last 1, txn as given.
    wild: the arg is the RUN's cycle count (V.2), which the untimed model cannot know."""
    mask = P256 & ~((0xFFFFFFFF << 216) if wild else 0)
    check_flit(ev, what, dst=dst, type=T_SIG, txn=txn, last=1, payload=code << 248 | arg << 216,
               payload_mask=mask)
    assert ev.wild_arg == wild, f"{what}: Event.wild_arg expected {wild}, got {ev.wild_arg}"


def _sig(ev):
    f = fl(ev.flit)
    return f["type"], (f["payload"] >> 248) & 0xFF, (f["payload"] >> 216) & 0xFFFFFFFF


def retired(evs, txn=RUN_TXN, last=0, dst=HOST):
    """The RUN retired normally (V.2): its completion is the last event - INST_COMPLETE with the cycle
    count (Event.wild_arg) when last = 0, BATCH_COMPLETE with arg = txn when last = 1. Returns the rest."""
    assert evs, "expected the RUN's completion, got no event at all (the kernel is still waiting)"
    *rest, ev = evs
    t, code, arg = _sig(ev)
    assert not (t == T_SIG and code == SIG_FAULT), f"the RUN faulted with {FNAME.get(arg, arg)} ({arg})"
    if last:
        check_signal(ev, SIG_BATCH, txn, txn, dst)
    else:
        check_signal(ev, SIG_INST, 0, txn, dst, wild=True)
    extra = [e for e in rest if tuple(e.dst) == tuple(dst) and fl(e.flit)["type"] == T_SIG]
    assert not extra, f"{len(extra)} more CU_SIGNALs to the host before the completion"
    return rest


def faulted(evs, code, txn=RUN_TXN, dst=HOST):
    """The RUN retired as CU_SIGNAL FAULT with arg = code (V.10). Returns the events before it."""
    assert evs, f"expected FAULT {FNAME[code]}, got no event at all (the kernel is still waiting)"
    *rest, ev = evs
    t, got_code, arg = _sig(ev)
    assert t == T_SIG and got_code == SIG_FAULT and arg == code, (
        f"expected FAULT {FNAME[code]} ({code}), got "
        + (f"FAULT {FNAME.get(arg, arg)} ({arg})" if got_code == SIG_FAULT else f"signal code {got_code}"))
    check_signal(ev, SIG_FAULT, code, txn, dst)
    return rest


def same(got, exp, what):
    """Arrays (or ints) equal element for element; the message names the first mismatches."""
    g = [int(x) for x in np.asarray(got, dtype=object).reshape(-1)]  # Python ints: 256-bit words fit
    e = [int(x) for x in np.asarray(exp, dtype=object).reshape(-1)]
    assert len(g) == len(e), f"{what}: {len(g)} values, expected {len(e)}"
    bad = [i for i in range(len(g)) if g[i] != e[i]]
    assert not bad, (f"{what}: {len(bad)} mismatch(es); " + ", ".join(
        f"[{i}] expected {e[i]:#x} got {g[i]:#x}" for i in bad[:6]))


# ================================================================ the spec's walk (V.3), our own odometer
def spec_walk(base, dims, steps, off=0):
    """(addresses of the first `steps` steps, total): i0 fastest, mixed radix, 0 reads as 1, partial
    products capped at 65535, steps past the total repeat the last address, mod 2^40."""
    dims = list(dims) + [(0, 1)] * (4 - len(dims))
    bounds = [b if b else 1 for _, b in dims]
    total = 1
    for b in bounds:
        total = min(total * b, 65535)
    idx = [0, 0, 0, 0]
    out = []
    for n in range(steps):
        if n >= total:
            out.append(out[-1])
            continue
        out.append((base + off + sum(i * s for i, (s, _) in zip(idx, dims))) % (1 << 40))
        for d in range(4):  # the odometer: i0 counts up, wraps and carries
            idx[d] += 1
            if idx[d] < bounds[d]:
                break
            idx[d] = 0
    return out, total


# ================================================================ words <-> lanes, random data
def lanes16(word):
    return np.array([(word >> (16 * i)) & 0xFFFF for i in range(16)], dtype=np.uint16)


def word16(lanes):
    return sum(int(x) << (16 * i) for i, x in enumerate(lanes))


def elems32(word):
    return np.array([(word >> (32 * j)) & 0xFFFFFFFF for j in range(8)], dtype=np.uint32)


def word32(elems):
    return sum(int(x) << (32 * j) for j, x in enumerate(elems))


def rnd_e8(rng, n=128, lo=112, hi=142, specials=True):
    """E8M15 patterns: random sign, exponent lo..hi-1, mantissa; with zeros, Inf and NaN sprinkled in."""
    x = (rng.integers(0, 2, n) << 23 | rng.integers(lo, hi, n) << 15 | rng.integers(0, 1 << 15, n))
    if specials:
        x[3::17] = 0
        x[5::23] = NEG0
        x[7::29] = POS_INF
        x[11::31] = 0xFF8000
        x[13::37] = 0x7FC123
        x[2::19] = 0x000123  # a non-canonical zero (e = 0, m != 0)
    return x.astype(np.uint32)


def rnd_words(rng, n):
    return [int.from_bytes(rng.bytes(32), "little") for _ in range(n)]


def e8(x):
    """E8M15 pattern of a float that E8M15 holds exactly."""
    import struct
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    assert struct.unpack("<f", struct.pack("<f", x))[0] == x and not b & 0xFF, f"{x} is not exact in E8M15"
    return (b >> 8) & 0xFFFFFF


# ================================================================ the rig
class Rig:
    """One VectorCore at UNIT with its memory agent at MAG; CU_INSTs come from HOST."""

    def __init__(self):
        self.core = VectorCore(UNIT, MAG)

    def inst(self, payload, txn=0x21, last=0, src=HOST):
        return self.core.take(mkflit(UNIT, src, T_INST, txn, last, payload))

    def retire0(self, payload, txn=0x21):
        """An IMEM / DESC / no-op CU_INST retires at once with INST_COMPLETE arg 0 (V.2)."""
        evs = self.inst(payload, txn=txn)
        assert len(evs) == 1, f"CU_INST {payload >> 252}: expected exactly its completion, got {len(evs)} events"
        check_signal(evs[0], SIG_INST, 0, txn)

    def load(self, words, at=0):
        for i, w in enumerate(words):
            self.retire0(p_imem(at + i, w))

    def desc(self, ad, base=0, dims=()):
        dims = list(dims) + [(0, 1)] * (4 - len(dims))
        self.retire0(p_desc(ad, 0, base))
        for d, (stride, bound) in enumerate(dims):
            self.retire0(p_desc(ad, d + 1, p_dim(stride, bound)))

    def run(self, pc=0, txn=RUN_TXN, last=0, src=HOST):
        return self.inst(p_run(pc), txn=txn, last=last, src=src)

    def go(self, words, descs=None, pc=0, last=0):
        self.load(words)
        for ad, (base, dims) in (descs or {}).items():
            self.desc(ad, base, dims)
        return self.run(pc, last=last)

    def resp(self, txn, data, rsvd=0):
        return self.core.take(mkflit(UNIT, MAG, T_RD_RESP, txn, 1, data, rsvd))

    def cu_data(self, src, buf, off, words, flags=0, ack=(0, 0), ln=None):
        """One inbound CU_DATA burst: descriptor (buf, off, len, flags, ack_y, ack_x) + data flits."""
        ln = len(words) - 1 if ln is None else ln
        desc = buf << 248 | off << 232 | ln << 224 | flags << 216 | ack[1] << 212 | ack[0] << 208
        out = self.core.take(mkflit(UNIT, src, T_DATA, 0, 0, desc))
        for i, w in enumerate(words):
            out += self.core.take(mkflit(UNIT, src, T_DATA, 0, int(i == len(words) - 1), w))
        return out

    def vec(self, i):
        return self.core.v[i].astype(np.uint32).copy()

    def setv(self, i, values):
        self.core.v[i] = np.asarray(values, dtype=np.uint32)

    def l1w(self, a):
        return word16(self.core.l1[a])

    def setl1(self, a, word):
        self.core.l1[a] = lanes16(word)


def below(vl):
    return np.arange(128) < vl


def chunks(vl):
    return np.arange(128) < -(-vl // 16) * 16


# ================================================================ the checkers fail on planted wrong values
def test_checkers_catch_planted_errors():
    rig = Rig()
    rig.load([W_HALT])
    good = rig.run(txn=0x33)
    retired(good, txn=0x33)
    with pytest.raises(AssertionError, match="txn"):
        retired(good, txn=0x34)
    with pytest.raises(AssertionError, match="BATCH|payload|wild"):
        retired(good, txn=0x33, last=1)
    with pytest.raises(AssertionError, match="expected FAULT"):
        faulted(good, F_VL, txn=0x33)
    rig.load(pro(vl=0))
    bad = rig.run()
    faulted(bad, F_VL)
    with pytest.raises(AssertionError, match="F_VL"):
        faulted(bad, F_LEN)
    with pytest.raises(AssertionError, match="faulted"):
        retired(bad)
    with pytest.raises(AssertionError, match=r"\[3\] expected 0x5 got 0x4"):
        same([1, 2, 3, 4], [1, 2, 3, 5], "v")
    with pytest.raises(AssertionError, match="values"):
        same([1, 2, 3], [1, 2, 3, 4], "v")
    ev = good[-1]
    with pytest.raises(AssertionError, match="dst"):
        check_flit(ev, "x", dst=PEER, type=T_SIG, txn=0x33, last=1, payload=0, payload_mask=0)
    with pytest.raises(AssertionError, match="last"):
        check_flit(ev, "x", dst=HOST, type=T_SIG, txn=0x33, last=0, payload=0, payload_mask=0)
    with pytest.raises(AssertionError, match="payload"):
        check_flit(ev, "x", dst=HOST, type=T_SIG, txn=0x33, last=1, payload=1 << 248)
    with pytest.raises(AssertionError, match="wild_arg"):
        check_signal(ev, SIG_INST, 0, 0x33, wild=False)
    # the walk odometer against hand-written walks (so a wrong odometer would be caught here)
    assert spec_walk(100, [(1, 3), (10, 2)], 8)[0] == [100, 101, 102, 110, 111, 112, 112, 112]
    assert spec_walk(0, [(-1, 2), (0, 0), (5, 2)], 5)[0] == [0, M40, 5, 4, 4]
    assert spec_walk(0, [(1, 256), (1, 256)], 0)[1] == 65535
    with pytest.raises(AssertionError):
        same(spec_walk(100, [(1, 3), (10, 2)], 8)[0], [100, 101, 102, 103, 110, 111, 112, 112], "walk")
    # the V.9 reducer and the wrong orders it is compared with, on hand-checkable inputs
    ones = np.full(128, ONE, dtype=np.uint32)
    assert spec_vred(0, ones, ones, 48) == e8(48.0) and spec_vred(5, np.zeros(128, np.uint32), ones, 16) == e8(16.0)
    tiny = np.full(128, 0x370000, dtype=np.uint32)  # 2^-17: a quarter ulp of 1.0
    tiny[0] = ONE
    assert alt_orders(0, tiny, ones, 16) == (ONE, ONE), "a left fold / lane-wise order loses every 2^-17"
    # the tree: pairs (1 + 2^-17 -> 1.0), 2^-16 x 7; then 1 + 2^-16 (a tie, to even: 1.0), 2^-15 x 3;
    # then 1 + 2^-15, 2^-14; then 1 + 3 * 2^-15, exact
    assert spec_vred(0, tiny, ones, 16) == e8(1 + 3 * 2 ** -15), "the tree adds them pairwise first"
    with pytest.raises(AssertionError):
        same(spec_vred(0, tiny, ones, 16), alt_orders(0, tiny, ones, 16)[0], "planted: a left fold")
    # retire0 insists on exactly one INST_COMPLETE arg 0
    rig2 = Rig()
    rig2.load(pro(vl=0))
    with pytest.raises(AssertionError, match="type|payload"):
        rig2.retire0(p_run(0))
    # our encoders against the protocol's example words (protocol.md §6)
    assert [W_HALT, W_BAR, vfill(0, 0), alu(VADD, vd=1), vld(0, 1), vst(1, 2), vdrain(0, 0)] == [
        0xF8000000, 0xE0000000, 0xE8000000, 0x18020000, 0xA1200000, 0xA9420000, 0xF0000000]


# ================================================================ V.1 reset and what RUN keeps
def test_reset_state():
    core = VectorCore(UNIT, MAG)
    assert (core.vl, core.mode, core.k3) == (128, 0, 0), "V.1: reset VL = 128, mode FLAT (0), K3 = 0"
    assert core.base == [0] * 8, "V.1: descriptors reset to base 0"
    assert all(list(d) == [(0, 1)] * 4 for d in core.dims), "V.1: strides 0, bounds 1 at reset"
    assert not core.v.any() and not core.p.any() and core.s == [0] * 16, "V.1: a model sets S, V, P to 0"
    rig = Rig()
    for i in range(1, 7):
        rig.setv(i, np.full(128, 0x123456))
    rig.setl1(0, 0x3C00 * sum(1 << (16 * i) for i in range(16)))  # 1.0 in every lane
    rig.setl1(1, 0x4000 * sum(1 << (16 * i) for i in range(16)))
    words = [alu(VMOV, vd=1, va=0, sa=K), alu(VMOV, vd=2, va=1, sa=K), alu(VMOV, vd=3, va=2, sa=K),
             alu(VMOV, vd=4, va=3, sa=K), alu(VMOV, vd=5, va=7, sa=K), vld(6, 3), W_HALT]
    retired(rig.go(words))
    # all 128 elements written: VL is 128 and mode FLAT (a chain would not write v1)
    for i, kv in ((1, 0), (2, ONE), (3, MONE), (4, 0), (5, 0)):
        same(rig.vec(i), np.full(128, kv), f"v{i} = K (K0 0, K1 1.0, K2 -1.0, K3 0 at reset)")
    same(rig.vec(6), np.full(128, ONE), "VLD through reset A3 (base 0, stride 0, bound 1): every chunk is L1[0]")
    rig.load([vfill(5, 7), W_HALT])
    reqs = rig.run()
    assert len(reqs) == 1, f"VFILL through reset A5: total 1, expected 1 request, got {len(reqs)}"
    check_flit(reqs[0], "VFILL request", dst=MAG, type=T_RD_REQ, txn=7, last=1, payload=0)


def test_run_keeps_everything_but_the_loop():
    rig = Rig()
    rng = np.random.default_rng(1)
    v1 = rnd_e8(rng, specials=False)
    rig.setv(1, v1)
    rig.setv(6, np.full(128, 0x111111))
    rig.setv(7, np.full(128, 0x222222))
    k3 = e8(0.75)
    # run 1: VL 48, K3, S3, S1 = 3, P1 by a compare, then a loop whose body is the VHALT (left active)
    run1 = (pro(vl=48) + vseti(k3, sa=K) + vseti(0xABCDEF, 3) + vseti(3, 1)
            + [alu(VCMPLT, pr=1, va=1, vb=0, sb=K), vsetmode(1), vloop(1, 1), W_HALT])
    retired(rig.go(run1))
    p1 = rig.core.p[1].copy()
    assert rig.core.loop.active, "test setup: the loop of run 1 is active when its VHALT retires"
    # run 2: VLOOP again - no F_LOOP, since RUN deactivates the loop (V.1, V.5)
    rig.load([vloop(1, 1), alu(VBCAST, vd=6, va=3, sa=S), W_HALT], at=100)
    retired(rig.run(100))
    exp6 = np.where(chunks(48), 0xABCDEF, 0x111111)
    same(rig.vec(6), exp6, "run 2: VBCAST of S3 (kept) over the chunks of VL 48 (kept)")
    # run 3: the mode (D2) and K3 are kept: a head and a stage form one chain
    rig.load([alu(VMOV, vd=9, va=1), alu(VADD, vd=7, sa=C, sb=K, sc=K, vc=3), W_HALT], at=200)
    retired(rig.run(200))
    exp7 = np.where(below(48), ar.vadd(ar.vmov(v1), np.full(128, k3)), 0x222222)
    same(rig.vec(7), exp7, "run 3: D2 chain VMOV(v1) + K3 below VL 48 (mode, K3, VL kept)")
    same(rig.core.p[1], p1, "P1 kept across RUNs")
    assert (rig.core.vl, rig.core.mode, rig.core.k3) == (48, 1, k3)


# ================================================================ V.2 the CU_INST envelope
def test_imem_and_run_pc():
    rig = Rig()
    rig.retire0(p_imem(511, 0xDEADBEEF))
    assert rig.core.imem[511] == 0xDEADBEEF, "V.2: IMEM[addr [251:243]] = word [31:0]"
    rig.load(vseti(0x123456, 4) + [W_HALT], at=500)
    retired(rig.run(500))
    assert rig.core.s[4] == 0x123456, "V.2: RUN pc [251:243] = 500 runs the kernel from 500"


def test_desc_base_is_40_bits_with_bits_68_63():
    rig = Rig()
    base = 0xC5_4321_0FE0  # bits [39:34] = 0b110001 travel in payload [68:63]
    rig.desc(6, base)
    assert rig.core.base[6] == base
    rig.load([vfill(6, 0), W_HALT])
    reqs = rig.run()
    check_flit(reqs[0], "VFILL through a 40-bit base", dst=MAG, type=T_RD_REQ, txn=0, last=1,
               payload=base << 216)
    rig.resp(0, 0)
    # the same base without payload[68:63]: only the low 34 bits remain
    rig.retire0(2 << 252 | 6 << 249 | 0 << 246 | (base & ((1 << 34) - 1)) << 212)
    assert rig.core.base[6] == base & ((1 << 34) - 1), "V.2: value = {[68:63], [245:212]}"


def test_desc_dims_signed_strides_bound_zero_and_high_bits_ignored():
    rig = Rig()
    base = 0x1000
    dims = [(-32, 3), (0, 0), (0x1FFFF, 2), (-0x20000, 2)]
    rig.retire0(p_desc(2, 0, base))
    rig.retire0(p_desc(2, 1, p_dim(*dims[0]) | 0x3F << 34))  # bits [39:34] of a dim value are ignored
    rig.retire0(p_desc(2, 2, p_dim(*dims[1]) | 0x15 << 34))
    rig.retire0(p_desc(2, 3, p_dim(*dims[2])))
    rig.retire0(p_desc(2, 4, p_dim(*dims[3])))
    for fld in (5, 6, 7):  # no effect
        rig.retire0(p_desc(2, fld, M40))
    assert rig.core.base[2] == base, "V.2: DESC fld 5..7 have no effect"
    rig.load([vfill(2, 0), W_HALT])
    reqs = rig.run()
    exp, total = spec_walk(base, dims, 12)
    assert total == 12 and len(reqs) == 12, f"walk total 3*1*2*2 = 12 (bound 0 reads as 1), got {len(reqs)} requests"
    same([fl(e.flit)["payload"] >> 216 for e in reqs], exp, "VFILL addresses (strides signed, mod 2^40)")
    for n in range(12):
        rig.resp(n, 0)


@pytest.mark.parametrize("op", [0] + list(range(4, 16)))
@pytest.mark.parametrize("last", [0, 1])
def test_envelope_opcodes_without_effect(op, last):
    rig = Rig()
    rig.load([W_HALT])
    snap = (list(rig.core.imem), list(rig.core.base), [list(d) for d in rig.core.dims], rig.core.l1.copy())
    payload = op << 252 | random.Random(op).getrandbits(252)
    evs = rig.inst(payload, txn=0x44, last=last)
    assert len(evs) == 1
    if last:
        check_signal(evs[0], SIG_BATCH, 0x44, 0x44)
    else:
        check_signal(evs[0], SIG_INST, 0, 0x44)
    assert snap[0] == list(rig.core.imem) and snap[1] == list(rig.core.base)
    assert snap[2] == [list(d) for d in rig.core.dims] and (snap[3] == rig.core.l1).all()
    assert rig.core.run is None, f"CU_INST op {op} must not run anything (V.2: 0, 4..15 have no effect)"


def test_completion_kinds_and_txn_echo():
    rig = Rig()
    evs = rig.inst(p_imem(3, W_HALT), txn=0xC3, last=1, src=PEER)
    assert len(evs) == 1
    check_signal(evs[0], SIG_BATCH, 0xC3, 0xC3, dst=PEER)  # to the src of the CU_INST
    rig.load([W_HALT])
    evs = rig.run(txn=0x17, last=0, src=PEER2)
    assert len(evs) == 1
    check_signal(evs[0], SIG_INST, 0, 0x17, dst=PEER2, wild=True)  # arg = the cycle count
    evs = rig.run(txn=0x18, last=1)
    assert len(evs) == 1
    check_signal(evs[0], SIG_BATCH, 0x18, 0x18)
    rig.load(pro(vl=0))
    for last in (0, 1):  # a fault is FAULT whatever `last` says
        evs = rig.run(txn=0x19, last=last)
        assert len(evs) == 1
        check_signal(evs[0], SIG_FAULT, F_VL, 0x19)


def test_run_holds_back_queued_cu_insts():
    rig = Rig()
    rig.desc(0, 0x400)
    rig.load([vfill(0, 10), W_BAR, W_HALT])
    reqs = rig.run()
    assert len(reqs) == 1
    assert rig.inst(p_imem(100, 0x12345678), txn=0x61) == [], "V.2: a RUN holds back the IMEM flits behind it"
    assert rig.inst(p_desc(3, 0, 0x999), txn=0x62) == []
    assert rig.core.imem[100] == 0 and rig.core.base[3] == 0
    evs = rig.resp(10, 0xAB)
    assert len(evs) == 3
    retired(evs[:1])
    check_signal(evs[1], SIG_INST, 0, 0x61)
    check_signal(evs[2], SIG_INST, 0, 0x62)
    assert rig.core.imem[100] == 0x12345678 and rig.core.base[3] == 0x999


# ================================================================ V.3 the walk
@pytest.mark.parametrize("off", [0, 5, -3, 8191, -8192])
def test_walk_vld_mixed_radix_repeat_wrap_and_signed_off(off):
    rig = Rig()
    rng = np.random.default_rng(2)
    l1 = rnd_words(rng, 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    base = 0x7F_0000_0000 | 508  # L1 walks use addr[8:0]
    dims = [(1, 3), (16, 2)]  # total 6: steps 6, 7 repeat the last address
    rig.go([vld(4, 1, off), W_HALT], {1: (base, dims)})
    addrs = [a & 511 for a in spec_walk(base, dims, 8, off)[0]]
    exp = np.concatenate([cvt.fp16_to_e8m15(lanes16(l1[a])) for a in addrs])
    same(rig.vec(4), exp, f"VLD off {off}: chunks from L1 {addrs} (V.3: i0 fastest, repeat, wrap mod 512)")


def test_walk_vst_negative_stride_wrap_and_repeat():
    rig = Rig()
    rng = np.random.default_rng(3)
    v = rnd_e8(rng, lo=110, hi=140)
    rig.setv(3, v)
    before = [rig.l1w(a) for a in range(512)]
    rig.go([vst(3, 1, -5), W_HALT], {1: (2, [(-1, 4)])})
    addrs = [a & 511 for a in spec_walk(2, [(-1, 4)], 8, -5)[0]]
    assert addrs == [509, 508, 507, 506, 506, 506, 506, 506]
    exp = dict(enumerate(before))
    for c, a in enumerate(addrs):  # in walk order: the repeated address keeps the last chunk
        exp[a] = word16(cvt.e8m15_to_fp16(v[16 * c:16 * c + 16]))
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)], "L1 after VST (V.3 walk, V.5 whole chunks)")


def test_walk_total_caps_partial_products():
    assert walk_total((65535, 65535, 65535, 65535)) == 65535
    assert walk_total((256, 256, 1, 1)) == 65535, "V.3: each partial product is capped at 65535"
    assert walk_total((0, 0, 0, 0)) == 1 and walk_total((2, 3, 0, 5)) == 30
    for bounds in [(256, 256), (16, 4096), (4096, 16, 16, 16), (2, 32768, 2, 2), (257,)]:
        rig = Rig()
        evs = rig.go([vfill(0, 0), W_HALT], {0: (0, [(32, b) for b in bounds])})
        assert len(faulted(evs, F_LEN)) == 0, f"bounds {bounds}: F_LEN before any flit (V.10)"
    rig = Rig()
    evs = rig.go([vfill(0, 0), W_HALT], {0: (0, [(32, 16), (512, 16)])})
    assert len(evs) == 256, "a walk of exactly 256 elements is legal"


def test_memory_walk_wraps_modulo_2_40():
    rig = Rig()
    reqs = rig.go([vfill(0, 0), W_HALT], {0: (M40 + 1 - 64, [(32, 4)])})
    same([fl(e.flit)["payload"] >> 216 for e in reqs], [M40 + 1 - 64, M40 + 1 - 32, 0, 32], "addresses mod 2^40")


# ================================================================ V.5 tail rules, V.8 ALU opcodes
ALU_VALUE = {
    VMOV: lambda a, b, c: ar.vmov(a), VNEG: lambda a, b, c: ar.vneg(a), VABS: lambda a, b, c: ar.vabs(a),
    VADD: lambda a, b, c: ar.vadd(a, c), VSUB: lambda a, b, c: ar.vsub(a, c), VMUL: lambda a, b, c: ar.vmul(a, b),
    VFMA: lambda a, b, c: ar.vfma(a, b, c), VFNMA: lambda a, b, c: ar.vfnma(a, b, c),
    VMAX: lambda a, b, c: ar.vmax(a, b), VMIN: lambda a, b, c: ar.vmin(a, b),
    VSEL: lambda a, b, c: ar.vsel(a, b, c), VEXP2: lambda a, b, c: ar.vexp2(a),
    VLOG2: lambda a, b, c: ar.vlog2(a), VINV: lambda a, b, c: ar.vinv(a), VRSQRT: lambda a, b, c: ar.vrsqrt(a),
}
CMP_PRED = {VCMPLT: ar.cmp_lt, VCMPGT: ar.cmp_gt, VCMPEQ: ar.cmp_eq}
NAME = {v: k for k, v in OPS.items()}


def _abc(seed):
    rng = np.random.default_rng(seed)
    a, b, c = rnd_e8(rng), rnd_e8(rng), rnd_e8(rng)
    b[::4] = a[::4]  # equal pairs for the compares and MAX / MIN
    c[1::3] = 0
    return a, b, c


@pytest.mark.parametrize("op", sorted(ALU_VALUE), ids=lambda o: f"{o:02X}_{NAME[o]}")
def test_alu_opcode(op):
    """V.8 00-0A, 0E-11: V[vd][e] = op(a, b, c) for every e < VL (a = va, b = vb, c = vc as V.6.2 wires them)."""
    rig = Rig()
    a, b, c = _abc(op)
    for i, x in ((1, a), (2, b), (3, c)):
        rig.setv(i, x)
    retired(rig.go([alu(op, vd=4, va=1, vb=2, vc=3), W_HALT]))
    same(rig.vec(4), ALU_VALUE[op](a, b, c), f"{NAME[op]} v4 = f(v1, v2, v3)")
    for i, x in ((1, a), (2, b), (3, c)):
        same(rig.vec(i), x, f"{NAME[op]}: source v{i} unchanged")
    assert not rig.core.p.any(), f"{NAME[op]} writes no predicate"


@pytest.mark.parametrize("op", sorted(CMP_PRED), ids=lambda o: f"{o:02X}_{NAME[o]}")
def test_compare_opcode(op):
    """V.8 0B-0D: P[pr][e] = pred(a, b) for e < VL; no vector write (vd and pm ignored)."""
    rig = Rig()
    a, b, c = _abc(op)
    for i, x in ((1, a), (2, b), (3, c)):
        rig.setv(i, x)
    old = np.full(128, 0x5A5A5A)
    rig.setv(4, old)
    retired(rig.go([alu(op, vd=4, va=1, vb=2, vc=3, pr=2, pm=1), W_HALT]))
    same(rig.core.p[2], CMP_PRED[op](a, b), f"{NAME[op]}: P2 = pred(v1, v2) (pm 1 with P2 = 0 must not mask it)")
    same(rig.vec(4), old, f"{NAME[op]}: vd is ignored, no vector write")
    assert not rig.core.p[[0, 1, 3]].any()


def test_scalar_and_constant_sources():
    """V.4: S = S[field] for every element; K = K[field mod 4]; a VSETI-made K3."""
    rig = Rig()
    rig.core.s[5] = e8(3.5)
    words = vseti(e8(-0.25), sa=K) + [alu(VADD, vd=4, va=5, sa=S, vc=2, sc=K),
                                       alu(VMUL, vd=6, va=5, sa=S, vb=7, sb=K),
                                       alu(VFMA, vd=8, va=1, vb=6, vc=9, sa=K, sb=S, sc=K), W_HALT]
    rig.core.s[6] = e8(2.0)
    retired(rig.go(words))
    same(rig.vec(4), np.full(128, e8(2.5)), "S5 + K2 = 3.5 - 1")
    same(rig.vec(6), np.full(128, e8(-0.875)), "S5 * K[7 mod 4 = 3] = 3.5 * -0.25")
    same(rig.vec(8), np.full(128, e8(3.0)), "K1 * S6 + K[9 mod 4 = 1] = 1 * 2 + 1")


@pytest.mark.parametrize("pm", [0, 1, 2, 3])
def test_alu_tail_writes_below_vl_under_pm(pm):
    """V.5: ALU instructions write only elements below VL, subject to pm (1: P set, 2 or 3: P clear)."""
    rig = Rig()
    rng = np.random.default_rng(10 + pm)
    a, c, old = rnd_e8(rng), rnd_e8(rng), rnd_e8(rng)
    p2 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(3, c), rig.setv(5, old)
    rig.core.p[2] = p2
    retired(rig.go(pro(vl=20) + [alu(VADD, vd=5, va=1, vc=3, pr=2, pm=pm), W_HALT]))
    mask = below(20) & (True if pm == 0 else p2 if pm == 1 else ~p2)
    same(rig.vec(5), np.where(mask, ar.vadd(a, c), old), f"VADD at VL 20, pm {pm}")


def test_vcmp_writes_predicate_bits_below_vl_only():
    rig = Rig()
    rng = np.random.default_rng(11)
    a, b = rnd_e8(rng), rnd_e8(rng)
    p1 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(2, b)
    rig.core.p[1] = p1
    retired(rig.go(pro(vl=20) + [alu(VCMPGT, vd=7, va=1, vb=2, pr=1, pm=2), W_HALT]))
    same(rig.core.p[1], np.where(below(20), ar.cmp_gt(a, b), p1), "V.8: P bits at or above VL unchanged")
    assert not rig.vec(7).any(), "V.8: a compare writes no vector"


def test_predicates_are_interlocked():
    """V.8 H1 normative: a predicated instruction right after a compare sees its result (the `where`
    lowering: VCMP; VMOV pm=1; VMOV pm=2)."""
    rig = Rig()
    rng = np.random.default_rng(12)
    a, b, x, y = (rnd_e8(rng, specials=False) for _ in range(4))
    for i, v in ((1, a), (2, b), (3, x), (4, y)):
        rig.setv(i, v)
    retired(rig.go([alu(VCMPLT, va=1, vb=2, pr=0), alu(VMOV, vd=5, va=3, pr=0, pm=1),
                    alu(VMOV, vd=5, va=4, pr=0, pm=2), W_HALT]))
    same(rig.vec(5), np.where(ar.cmp_lt(a, b), x, y), "where(a < b, x, y)")


# ================================================================ V.5 chains
def test_chain_d2():
    """D2: head + next word; C = previous stage; S/K per stage; the last stage's vd/pr/pm decide; pc += 2."""
    rig = Rig()
    rng = np.random.default_rng(20)
    a, b, old5, old9 = (rnd_e8(rng) for _ in range(4))
    p3 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a), rig.setv(2, b), rig.setv(5, old5), rig.setv(9, old9)
    rig.core.p[3] = p3
    rig.core.s[4], rig.core.s[6] = e8(1.5), e8(-3.0)
    head = alu(VMUL, vd=9, va=1, vb=2, vc=4, sc=S, pr=0, pm=2)  # head vd/pm ignored
    stage = alu(VFMA, vd=5, va=0, vb=4, vc=6, sa=C, sb=S, sc=S, pr=3, pm=1)
    retired(rig.go(pro(vl=40, mode=1) + [head, stage] + vseti(0x777, 10) + [W_HALT]))
    value = ar.vfma(ar.vmul(a, b), np.full(128, e8(1.5)), np.full(128, e8(-3.0)))
    same(rig.vec(5), np.where(below(40) & p3, value, old5), "D2: v5 = (v1*v2)*S4 + S6 where P3, e < 40")
    same(rig.vec(9), old9, "D2: the head's vd is ignored")
    assert rig.core.s[10] == 0x777, "D2: pc advances by 2 and the word after the chain executes"


def test_chain_d4_with_a_compare_mid_chain():
    """D4: a compare mid-chain gives 1.0 / +0 as value and writes no predicate."""
    rig = Rig()
    rng = np.random.default_rng(21)
    a, old = rnd_e8(rng, specials=False), rnd_e8(rng)
    rig.setv(1, a), rig.setv(6, old)
    rig.core.s[2], rig.core.s[3], rig.core.s[7] = e8(0.5), e8(0.25), e8(5.0)
    p0 = rng.integers(0, 2, 128).astype(bool)
    rig.core.p[0] = p0
    words = [alu(VMUL, vd=12, va=1, vb=2, sb=S, pm=1, pr=1),            # x = a * S2
             alu(VADD, vd=13, sa=C, sb=K, sc=K, vc=1),                    # x + K1
             alu(VCMPGT, vd=14, sa=C, va=0, sb=S, vb=3, sc=K, pr=2),      # (x+1 > S3) -> 1.0 / +0
             alu(VFMA, vd=6, sa=C, sb=S, vb=7, sc=C, pr=0, pm=2)]          # v * S7 + v
    retired(rig.go(pro(mode=2) + words + [W_HALT]))
    t = ar.vadd(ar.vmul(a, np.full(128, e8(0.5))), np.full(128, ONE))
    pred_val = np.where(ar.cmp_gt(t, np.full(128, e8(0.25))), ONE, 0)
    value = ar.vfma(pred_val, np.full(128, e8(5.0)), pred_val)
    same(rig.vec(6), np.where(~p0, value, old), "D4: v6 = cmp * 5 + cmp where !P0")
    assert not rig.core.p[[1, 2, 3]].any(), "a compare mid-chain writes no predicate"
    same(rig.core.p[0], p0, "P0 unchanged")
    for i in (12, 13, 14):
        assert not rig.vec(i).any(), f"D4: only the last stage's vd is written (v{i} is not)"


def test_chain_last_stage_compare_writes_the_predicate():
    rig = Rig()
    rng = np.random.default_rng(22)
    a = rnd_e8(rng)
    p3 = rng.integers(0, 2, 128).astype(bool)
    rig.setv(1, a)
    rig.core.p[3] = p3
    rig.core.s[5] = e8(0.0)
    retired(rig.go(pro(vl=70, mode=1) + [alu(VADD, vd=2, va=1, vc=1, sc=K, pm=1),
                                           alu(VCMPLT, vd=7, sa=C, va=0, sb=S, vb=5, sc=K, pr=3, pm=1),
                                           W_HALT]))
    pred = ar.cmp_lt(ar.vadd(a, np.full(128, ONE)), np.zeros(128, dtype=np.uint32))
    same(rig.core.p[3], np.where(below(70), pred, p3), "D2 ending in a compare: P3 below VL")
    assert not rig.vec(7).any() and not rig.vec(2).any(), "a chain ending in a compare writes no vector"


def test_chain_head_compare_with_a_non_compare_last_stage_writes_the_vector():
    rig = Rig()
    rng = np.random.default_rng(23)
    a, b = rnd_e8(rng), rnd_e8(rng)
    rig.setv(1, a), rig.setv(2, b)
    rig.core.s[4] = e8(3.0)
    retired(rig.go(pro(mode=1) + [alu(VCMPLT, vd=6, va=1, vb=2, pr=1),
                                  alu(VMUL, vd=5, sa=C, sb=S, vb=4, sc=K), W_HALT]))
    same(rig.vec(5), ar.vmul(np.where(ar.cmp_lt(a, b), ONE, 0), np.full(128, e8(3.0))),
         "a compare head gives 1.0 / +0 to the next stage")
    assert not rig.core.p.any(), "the head's compare-ness is ignored: no predicate write"


def test_non_alu_words_run_in_tree_mode():
    rig = Rig()
    rig.setl1(0, 0x3C00 * sum(1 << (16 * i) for i in range(16)))
    retired(rig.go(pro(vl=32, mode=3) + vseti(0x4000, 4) + [alu(VBCAST, vd=2, va=4, sa=S), vld(3, 0),
                                                              vcvt(5, 3, 2), W_HALT]))
    same(rig.vec(2)[:32], np.full(32, 0x4000), "VBCAST in TREE")
    same(rig.vec(5)[:32], np.full(32, ONE), "VLD, VCVT in TREE")


def test_tree_mode_alu_word_faults_f_opcode():
    """V.5 / D6 normative: an ALU word in TREE mode raises F_OPCODE (and writes nothing)."""
    for op in (VMOV, VADD, VCMPLT, VEXP2):
        rig = Rig()
        rig.setv(1, np.full(128, ONE))
        faulted(rig.go(pro(mode=3) + [alu(op, vd=2, va=1, vb=1, vc=1, pr=1), W_HALT]), F_OPCODE)
        assert not rig.vec(2).any() and not rig.core.p.any(), f"{NAME[op]} in TREE: nothing written"
        assert rig.core.mode == 3


# ================================================================ V.10 faults F_VSRC, F_CHAIN, F_DTYPE
@pytest.mark.parametrize("mode, stage", [(1, 1), (2, 1), (2, 2), (2, 3)])
@pytest.mark.parametrize("sel", ["sa", "sb", "sc"])
def test_f_vsrc_any_selector_of_a_gathered_stage(mode, stage, sel):
    rig = Rig()
    depth = 2 if mode == 1 else 4
    ok_sel = {"sa": C, "sb": K, "sc": K}
    words = [alu(VMOV, vd=3, va=1)]
    for k in range(1, depth):
        f = dict(ok_sel)
        if k == stage:
            f[sel] = V  # VMOV reads only a: an unread V selector still faults
        words.append(alu(VMOV, vd=3, **f))
    rig.setv(1, np.full(128, ONE))
    faulted(rig.go(pro(mode=mode) + words + [W_HALT]), F_VSRC)
    assert not rig.vec(3).any(), "a faulting chain writes nothing"


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("sel", ["sa", "sb", "sc"])
def test_f_chain_any_c_selector_in_a_head_or_flat_word(mode, sel):
    rig = Rig()
    f = {"sa": V, "sb": V, "sc": V, sel: C}
    stages = [alu(VMOV, vd=3, sa=V)] * (0 if mode == 0 else 1 if mode == 1 else 3)  # stages with V: F_VSRC
    faulted(rig.go(pro(mode=mode) + [alu(VNEG, vd=3, va=1, **f)] + stages + [W_HALT]), F_CHAIN,)
    # V.10: F_CHAIN is checked at decode of the head, before any stage is gathered (stage V -> F_VSRC)


@pytest.mark.parametrize("word", ["VLD", "VST", "VCVT"])
@pytest.mark.parametrize("dt", [0, 3, 4, 5, 6, 7])
def test_f_dtype(word, dt):
    rig = Rig()
    rig.setv(2, np.full(128, ONE))
    before = rig.core.l1.copy()
    w = {"VLD": vld(1, 0, dt=dt), "VST": vst(2, 0, dt=dt), "VCVT": vcvt(1, 2, dt)}[word]
    faulted(rig.go([w] + vseti(5, 9) + [W_HALT]), F_DTYPE)
    assert not rig.vec(1).any() and (rig.core.l1 == before).all(), f"{word} dt {dt}: nothing written"
    assert rig.core.s[9] == 0, "a fault stops the kernel"


# ================================================================ V.8 other opcodes
@pytest.mark.parametrize("dt", [1, 2])
def test_op_12_vcvt(dt):
    """dt 1: per-element FP16 round trip (D3 not reproduced: chunk c gets its own chunk); dt 2: raw.
    Whole chunks, including lanes at or above VL."""
    rig = Rig()
    rng = np.random.default_rng(30)
    a, old = rnd_e8(rng, lo=100, hi=150), rnd_e8(rng)
    rig.setv(2, a), rig.setv(1, old)
    retired(rig.go(pro(vl=20) + [vcvt(1, 2, dt), W_HALT]))
    res = cvt.fp16_to_e8m15(cvt.e8m15_to_fp16(a)) if dt == 1 else a
    same(rig.vec(1), np.where(chunks(20), res, old), f"VCVT dt {dt} at VL 20: chunks 0, 1 whole")


def test_op_13_vred_hand_checked():
    """VRED (0x13), hand-checked values (the tree order, identities, ANY/ALL, EXPSUM and faults have their
    own tests below): S[vd] = the reduction of V[va] at VL 128 in TREE mode."""
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    rig.setv(2, np.array([e8(float(i - 60)) for i in range(128)], dtype=np.uint32))
    retired(rig.go(pro(mode=3) + [vred(0, 3, 1), vred(1, 4, 2), vred(2, 5, 2), vred(4, 6, 1, 2), W_HALT]))
    assert rig.core.s[3] == e8(128.0), "SUM of 128 ones"
    assert (rig.core.s[4], rig.core.s[5]) == (e8(67.0), e8(-60.0)), "MAX, MIN of -60..67"
    assert rig.core.s[6] == e8(sum(i - 60 for i in range(128))), "DOT with ones = the sum of -60..67"


@pytest.mark.parametrize("dt", [1, 2])
def test_op_14_vld(dt):
    rig = Rig()
    rng = np.random.default_rng(31)
    l1 = rnd_words(rng, 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    old = rnd_e8(rng)
    rig.setv(7, old)
    dims = [(3, 5), (100, 3)]
    retired(rig.go(pro(vl=40) + [vld(7, 4, -7, dt), W_HALT], {4: (33, dims)}))
    n = 3
    addrs = [a & 511 for a in spec_walk(33, dims, n * dt, -7)[0]]
    if dt == 1:
        vals = np.concatenate([cvt.fp16_to_e8m15(lanes16(l1[a])) for a in addrs])
    else:
        vals = np.concatenate([cvt.fp32_to_e8m15(elems32(l1[a])) for a in addrs])
    same(rig.vec(7), np.concatenate([vals, old[n * 16:]]), f"VLD dt {dt} at VL 40 (whole chunks 0..2)")


@pytest.mark.parametrize("dt", [1, 2])
def test_op_15_vst(dt):
    """VST: the source register is vd; whole chunks, lanes at or above VL store what the register holds."""
    rig = Rig()
    rng = np.random.default_rng(32)
    v = rnd_e8(rng, lo=105, hi=150)
    rig.setv(6, v)
    rig.setv(0, np.full(128, ONE))  # va = 0 must not be the source
    before = [rig.l1w(a) for a in range(512)]
    dims = [(2, 2), (7, 4)]
    retired(rig.go(pro(vl=20) + [vst(6, 5, 3, dt), W_HALT], {5: (500, dims)}))
    addrs = [a & 511 for a in spec_walk(500, dims, 2 * dt, 3)[0]]
    exp = dict(enumerate(before))
    if dt == 1:
        for c, a in enumerate(addrs):
            exp[a] = word16(cvt.e8m15_to_fp16(v[16 * c:16 * c + 16]))
    else:
        f = cvt.e8m15_to_fp32(v[:32])
        for k, a in enumerate(addrs):
            exp[a] = word32(f[8 * k:8 * k + 8])
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)], f"L1 after VST dt {dt} at VL 20")


def test_op_16_vbcast_s_to_v_whole_chunks():
    rig = Rig()
    old = rnd_e8(np.random.default_rng(33))
    rig.setv(3, old)
    rig.core.s[9] = 0xABCDEF
    retired(rig.go(pro(vl=20) + [alu(VBCAST, vd=3, va=9, sa=S), W_HALT]))
    same(rig.vec(3), np.where(chunks(20), 0xABCDEF, old), "VBCAST sa=1: chunks 0..nchunk-1 = S9 (raw)")


@pytest.mark.parametrize("sa", [V, C, K])
def test_op_16_vbcast_v_to_s(sa):
    rig = Rig()
    v = rnd_e8(np.random.default_rng(34))
    rig.setv(4, v)
    retired(rig.go(pro(vl=20) + [alu(VBCAST, vd=7, va=4, sa=sa), W_HALT]))
    assert rig.core.s[7] == int(v[0]), f"VBCAST sa={sa} != 1: S[vd] = V[va][0]"
    same(rig.vec(4), v, "source unchanged")
    assert not rig.vec(7).any(), "no vector written"


def test_op_17_vshuf_rotates_within_chunks():
    rig = Rig()
    rng = np.random.default_rng(35)
    v, old = rnd_e8(rng), rnd_e8(rng)
    rig.setv(2, v), rig.setv(1, old)
    rig.core.s[3] = 0xFFFF35  # S[vb][3:0] = 5
    retired(rig.go(pro(vl=20) + [alu(VSHUF, vd=1, va=2, vb=3), W_HALT]))
    rot = np.array([v[16 * (e // 16) + (e % 16 + 5) % 16] for e in range(128)])
    same(rig.vec(1), np.where(chunks(20), rot, old), "VSHUF lane i = lane (i + 5) mod 16, chunks 0..1")


@pytest.mark.parametrize("value", [1, 17, 128])
def test_op_18_vsetvl(value):
    rig = Rig()
    retired(rig.go(vseti(value, 3) + [vsetvl(3), alu(VMOV, vd=2, va=1, sa=K), W_HALT]))
    assert rig.core.vl == value
    same(rig.vec(2), np.where(below(value), ONE, 0), f"VL = S3 = {value}")


@pytest.mark.parametrize("value", [0, 129, 0x800080, 0xFFFFFF])
def test_f_vl(value):
    """V.8: F_VL if S[va] is 0 or above 128 (raw 24 bits: 0x800080 faults). VL keeps its value."""
    rig = Rig()
    rig.core.s[3] = value
    faulted(rig.go(pro(vl=48) + [vsetvl(3)] + vseti(9, 9) + [W_HALT]), F_VL)
    assert rig.core.vl == 48 and rig.core.s[9] == 0, "V.10: VL keeps its value; the kernel stops"


@pytest.mark.parametrize("va", range(16))
def test_op_19_vsetmode_reads_ir_14_13(va):
    rig = Rig()
    retired(rig.go([alu(VSETMODE, va=va, vd=15, sa=3, vb=15, vc=15, pr=3, pm=3), W_HALT]))
    assert rig.core.mode == va & 3, f"V.8: mode = ir[14:13]; ir[16:15] ignored (va = {va:#06b})"


def test_op_19_vsetmode_chain_after_ignored_high_bits():
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    retired(rig.go([alu(VSETMODE, va=0b1101), alu(VMOV, vd=9, va=1), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1),
                    W_HALT]))
    same(rig.vec(2), np.full(128, e8(2.0)), "VSETMODE va=0b1101 is D2: VMOV v1 + K1 as one chain")


@pytest.mark.parametrize("sa", [V, S, C, K])
def test_op_1a_vseti(sa):
    """sa 3 writes K3, sa 0..2 write S[vd]; the immediate is [23:0] of the next word; pc += 2."""
    rig = Rig()
    imm_word = 0xF8000000 | 0xA5B4C3  # would be VHALT if it were executed
    retired(rig.go(vseti(imm_word, 6, sa) + vseti(0x42, 7) + [alu(VMOV, vd=3, va=3, sa=K), W_HALT]))
    assert rig.core.s[7] == 0x42, "pc += 2: the immediate word is not executed"
    if sa == K:
        assert rig.core.k3 == 0xA5B4C3 and rig.core.s[6] == 0
        same(rig.vec(3), ar.vmov(np.full(128, 0xA5B4C3)), "K3 as a source")
    else:
        assert rig.core.s[6] == 0xA5B4C3 and rig.core.k3 == 0


@pytest.mark.parametrize("count, runs", [(0, 1), (1, 1), (3, 3), (5, 5)])
def test_op_1b_vloop_count(count, runs):
    rig = Rig()
    rig.core.s[4] = e8(0.5)
    retired(rig.go(vseti(count, 1) + [vloop(1, 2), alu(VADD, vd=2, va=2, vc=1, sc=K),
                                      alu(VADD, vd=3, va=3, vc=4, sc=S), W_HALT]))
    exp2, exp3 = np.zeros(128, np.uint32), np.zeros(128, np.uint32)
    for _ in range(runs):
        exp2, exp3 = ar.vadd(exp2, np.full(128, ONE)), ar.vadd(exp3, np.full(128, e8(0.5)))
    same(rig.vec(2), exp2, f"VLOOP count {count}: the body runs max(count, 1) = {runs} times")
    same(rig.vec(3), exp3, "second body word")
    assert not rig.core.loop.active


@pytest.mark.parametrize("count", [0, 5])
def test_op_1b_vloop_body_zero_runs_nothing(count):
    rig = Rig()
    retired(rig.go(vseti(count, 1) + [vloop(1, 0), alu(VADD, vd=2, va=2, vc=1, sc=K), W_HALT]))
    same(rig.vec(2), np.full(128, ONE), "a body of 0 runs nothing: the next word runs once")


def test_vloop_closes_and_a_later_vloop_is_legal():
    rig = Rig()
    retired(rig.go(vseti(2, 1) + [vloop(1, 1), alu(VADD, vd=2, va=2, vc=1, sc=K),
                                  vloop(1, 1), alu(VADD, vd=2, va=2, vc=1, sc=K), W_HALT]))
    same(rig.vec(2), np.full(128, e8(4.0)), "two loops of 2 runs in sequence")


def test_a_chain_that_is_exactly_the_loop_body():
    rig = Rig()
    retired(rig.go(vseti(3, 1) + [vsetmode(1), vloop(1, 2), alu(VMOV, vd=9, va=2),
                                  alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1), vloop(1, 0), W_HALT]))
    same(rig.vec(2), np.full(128, e8(3.0)), "a D2 chain as a 2-word body runs 3 times, then the loop closes")


def test_f_loop_nested():
    rig = Rig()
    faulted(rig.go(vseti(3, 1) + [vloop(1, 3), alu(VADD, vd=2, va=2, vc=1, sc=K), vloop(1, 1),
                                  alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]), F_LOOP)
    same(rig.vec(2), np.full(128, ONE), "the first body word ran once before the nested VLOOP faulted")
    assert not rig.vec(3).any()


def test_vseti_stepping_over_loop_end_leaves_the_loop_active():
    """V.5: a VSETI immediate that steps over loop_end leaves the loop active; a later VLOOP: F_LOOP."""
    rig = Rig()
    words = vseti(3, 1) + [vloop(1, 1)] + vseti(0x55, 5) + [alu(VADD, vd=2, va=2, vc=1, sc=K),
                                                           vloop(1, 1), alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]
    faulted(rig.go(words), F_LOOP)
    assert rig.core.s[5] == 0x55
    same(rig.vec(2), np.full(128, ONE), "fell through once")
    assert not rig.vec(3).any()


def test_chain_stepping_over_loop_end_leaves_the_loop_active():
    rig = Rig()
    words = vseti(3, 1) + [vsetmode(1), vloop(1, 1), alu(VMOV, vd=9, va=2), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1),
                           vsetmode(0), vloop(1, 1), alu(VADD, vd=3, va=3, vc=1, sc=K), W_HALT]
    faulted(rig.go(words), F_LOOP)
    same(rig.vec(2), np.full(128, ONE), "the chain over loop_end ran once and fell through")
    assert not rig.vec(3).any()


# ================================================================ V.11 VFILL, VBAR, VHALT
def test_op_1d_vfill_request_flits():
    rig = Rig()
    base, dims = 0xF0_0000_0100, [(32, 3), (4096, 2)]
    reqs = rig.go([vfill(3, 300), W_HALT], {3: (base, dims)})
    exp, total = spec_walk(base, dims, 6)
    assert len(reqs) == 6, f"VFILL sends one request per walk element (6), got {len(reqs)}"
    for n, ev in enumerate(reqs):
        check_flit(ev, f"VFILL request {n}", dst=MAG, type=T_RD_REQ, txn=(300 + n) & 0xFF, last=1,
                   payload=exp[n] << 216)  # len 0, flags 0, count 0, rest 0
    data = rnd_words(np.random.default_rng(40), 6)
    for n in reversed(range(6)):  # responses in any order; their rsvd bits are ignored
        evs = rig.resp((300 + n) & 0xFF, data[n], rsvd=n % 4)
        if n:
            assert evs == [], "VHALT waits for every outstanding fill response"
    retired(evs)
    same([rig.l1w(300 + n) for n in range(6)], data, "L1[start + n] = response n")
    assert rig.core.protocol_errors == []


@pytest.mark.parametrize("start, total", [(250, 12), (508, 6), (0, 256), (200, 256)])
def test_vfill_l1_side_consecutive_wrapping_bit8_kept(start, total):
    rig = Rig()
    rng = np.random.default_rng(start)
    before = [rig.l1w(a) for a in range(512)]
    reqs = rig.go([vfill(1, start), W_HALT], {1: (0x10000, [(-64, total)])})
    assert [fl(e.flit)["txn"] for e in reqs] == [(start + n) & 0xFF for n in range(total)]
    data = rnd_words(rng, total)
    order = list(range(total))
    random.Random(start).shuffle(order)
    evs = []
    for n in order:
        evs = rig.resp((start + n) & 0xFF, data[n])
    retired(evs)
    exp = dict(enumerate(before))
    for n in range(total):
        exp[(start + n) % 512] = data[n]
    same([rig.l1w(a) for a in range(512)], [exp[a] for a in range(512)],
         f"VFILL from {start}: L1 words start..start+{total - 1} mod 512 (bit 8 kept per txn)")


def test_a_second_vfill_waits_for_the_first():
    rig = Rig()
    reqs = rig.go([vfill(0, 0), vfill(1, 100), W_HALT], {0: (0x1000, [(32, 2)]), 1: (0x2000, [(32, 3)])})
    assert [fl(e.flit)["txn"] for e in reqs] == [0, 1], "only the first VFILL's requests before its responses"
    assert rig.resp(1, 11) == []
    reqs2 = rig.resp(0, 10)
    assert [fl(e.flit)["txn"] for e in reqs2] == [100, 101, 102]
    same([fl(e.flit)["payload"] >> 216 for e in reqs2], [0x2000, 0x2020, 0x2040], "second fill's addresses")
    assert rig.resp(100, 1) == [] and rig.resp(102, 3) == []
    retired(rig.resp(101, 2))
    same([rig.l1w(a) for a in (0, 1, 100, 101, 102)], [10, 11, 1, 2, 3], "L1")


def test_op_1c_vbar_waits_for_fills():
    rig = Rig()
    rig.go([vfill(0, 64), W_BAR, vld(2, 0)] + vseti(0x99, 5) + [W_HALT], {0: (0x40, [(32, 2)])})
    assert rig.core.s[5] == 0, "VBAR waits: the instructions after it have not run"
    assert rig.resp(65, 0x4000 * sum(1 << (16 * i) for i in range(16))) == []
    evs = rig.resp(64, 0x3C00 * sum(1 << (16 * i) for i in range(16)))
    retired(evs)
    assert rig.core.s[5] == 0x99
    # VLD A0 (base 0x40 -> L1 word 0x40 = 64, stride 32 -> word 96...): reads the filled word 64 first
    same(rig.vec(2)[:16], np.full(16, ONE), "the VLD after VBAR sees the landed fill")


def test_op_1f_vhalt_waits_for_fills_not_for_drains():
    rig = Rig()
    evs = rig.go([vfill(0, 5), W_HALT], {0: (0, [(0, 1)])})
    assert len(evs) == 1 and fl(evs[0].flit)["type"] == T_RD_REQ, "VHALT waits for the outstanding response"
    retired(rig.resp(5, 1))
    evs = rig.go([vdrain(0, 5), W_HALT], {0: (0, [(0, 1)])})
    retired(evs)  # no response to a drain is awaited


def test_unmatched_read_response_is_dropped_and_recorded():
    rig = Rig()
    before = rig.core.l1.copy()
    assert rig.resp(7, 123) == []
    assert (rig.core.l1 == before).all() and len(rig.core.protocol_errors) == 1
    rig.go([vfill(0, 3), W_HALT], {0: (0, [(0, 1)])})
    assert rig.resp(4, 55) == [] and len(rig.core.protocol_errors) == 2, "txn 4 matches no outstanding fill"
    retired(rig.resp(3, 56))
    assert rig.l1w(4) == 0 and rig.l1w(3) == 56


def test_cu_data_writes_are_not_fill_retirements():
    rig = Rig()
    rig.go([vfill(0, 3), W_BAR, W_HALT], {0: (0, [(0, 1)])})
    evs = rig.cu_data(PEER, 0, 20, [0xAA, 0xBB], flags=1)
    assert len(evs) == 1, "the burst is acknowledged but the VBAR keeps waiting"
    check_signal(evs[0], SIG_RECV, 0, 0, dst=PEER, what="DATA_RECEIVED")
    retired(rig.resp(3, 1))


def test_a_vfill_waits_before_its_f_len_check():
    """V.11: a VFILL behind an outstanding one waits; then F_LEN is checked (before any flit)."""
    rig = Rig()
    reqs = rig.go([vfill(0, 0), vfill(1, 10), W_HALT], {0: (0, [(0, 1)]), 1: (0, [(32, 257)])})
    assert len(reqs) == 1, "the second VFILL waits: no fault and no flit yet"
    assert faulted(rig.resp(0, 1), F_LEN) == []


def test_vbar_without_outstanding_fills_proceeds():
    rig = Rig()
    retired(rig.go([W_BAR, W_BAR] + vseti(3, 2) + [W_HALT]))
    assert rig.core.s[2] == 3


def test_vfill_and_vdrain_ignore_the_unread_fields():
    """V.11: the L1 start word is ir[8:0] and the walk offset is 0 (bits [13:9] are not an offset);
    VFILL has no dtype (F_DTYPE is VLD / VST / VCVT only); a memory VDRAIN ([24] = 0) reads no [25]."""
    rig = Rig()
    junk = 7 << 24 | 0xF << 17 | 0x1F << 9
    plain = rig.go([vfill(2, 77), W_HALT], {2: (0x5000, [(32, 2)])})
    retired(rig.resp(77, 1) + rig.resp(78, 2))
    noisy = rig.go([vfill(2, 77) | junk, W_HALT])
    assert [e.flit for e in noisy] == [e.flit for e in plain], "VFILL with dt 7, vd 15, ir[13:9] set"
    retired(rig.resp(77, 1) + rig.resp(78, 2))
    plain = retired(rig.go([vdrain(2, 77), W_HALT]))
    noisy = retired(rig.go([vdrain(2, 77) | 3 << 25 | 0xF << 17 | 0x1F << 9, W_HALT]))
    assert [e.flit for e in noisy] == [e.flit for e in plain] and len(plain) == 4


# ================================================================ V.11 VDRAIN
def test_op_1e_vdrain_to_memory():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(50), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    base, dims = 0x80_0000_1000, [(32, 2), (-4096, 2)]
    evs = retired(rig.go([vdrain(2, 510), W_HALT], {2: (base, dims)}))
    exp, _ = spec_walk(base, dims, 4)
    assert len(evs) == 8, f"one MEM_WR_REQ + one MEM_WR_DATA per element (8 flits), got {len(evs)}"
    for n in range(4):
        check_flit(evs[2 * n], f"MEM_WR_REQ {n}", dst=MAG, type=T_WR_REQ, txn=1, last=0, payload=exp[n] << 216)
        check_flit(evs[2 * n + 1], f"MEM_WR_DATA {n}", dst=MAG, type=T_WR_DATA, txn=1, last=1,
                   payload=l1[(510 + n) % 512])


def test_vdrain_node_local():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(51), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    rec = 0x0123 | 0x35 << 16 | 2 << 24  # granule 0x123, ack {y=3, x=5}, mesh 2 (local: not used), fin 0
    evs = retired(rig.go([vdrain_node(4, 509, (3, 2), buf=0b1010, sig=1), W_HALT],
                         {4: (rec, [(64, 3), (7, 2)])}))
    assert len(evs) == 7, "one descriptor + total (6) data flits"
    check_flit(evs[0], "node descriptor", dst=(3, 2), type=T_DATA, txn=0, last=0, rsvd=0,
               payload=0x0A << 248 | 0x0123 << 232 | 5 << 224 | 1 << 216 | 0x35 << 208)
    for n in range(6):
        check_flit(evs[1 + n], f"node data {n}", dst=(3, 2), type=T_DATA, txn=0, last=int(n == 5), rsvd=0,
                   payload=l1[(509 + n) % 512])


def test_vdrain_node_remote():
    rig = Rig()
    l1 = rnd_words(np.random.default_rng(52), 512)
    for a, w in enumerate(l1):
        rig.setl1(a, w)
    rec = 0xBEEF | 0x00 << 16 | 3 << 24 | 0x96 << 26  # fin {y=9, x=6}, mesh 3, ack 0
    evs = retired(rig.go([vdrain_node(0, 40, (0, 1), buf=0, sig=0), W_HALT], {0: (rec, [(1, 2), (1, 1)])}))
    assert len(evs) == 3
    check_flit(evs[0], "remote descriptor", dst=(0, 1), type=T_DATA, txn=0x96, last=0, rsvd=0b111,
               payload=0xBEEF << 232 | 1 << 224)
    for n in range(2):
        check_flit(evs[1 + n], f"remote data {n}", dst=(0, 1), type=T_DATA, txn=0x96, last=int(n == 1),
                   rsvd=0b111, payload=l1[40 + n])


@pytest.mark.parametrize("word", ["VFILL", "VDRAIN", "VDRAIN.node"])
def test_f_len(word):
    rig = Rig()
    w = {"VFILL": vfill(0, 0), "VDRAIN": vdrain(0, 0), "VDRAIN.node": vdrain_node(0, 0, (1, 1))}[word]
    evs = rig.go([w] + vseti(1, 9) + [W_HALT], {0: (0, [(32, 16), (1, 17)])})
    assert faulted(evs, F_LEN) == [], f"{word} of 272 elements: F_LEN before any flit"
    assert rig.core.s[9] == 0


# ================================================================ V.12 inbound CU_DATA
@pytest.mark.parametrize("ack, to", [((0, 0), PEER), ((5, 6), (5, 6))])
def test_cu_data_accepted_with_ack(ack, to):
    rig = Rig()
    data = rnd_words(np.random.default_rng(60), 12)
    evs = rig.cu_data(PEER, 0, 500, data, flags=1, ack=ack)  # off + len = 511: accepted
    assert len(evs) == 1
    check_signal(evs[0], SIG_RECV, 0, 0, dst=to, what="DATA_RECEIVED")
    same([rig.l1w(500 + i) for i in range(12)], data, "L1[off + i] = payload, raw")
    retired(rig.go([W_HALT]))  # no F_CUDATA pending


def test_cu_data_without_signal_flag_is_not_acknowledged():
    rig = Rig()
    assert rig.cu_data(PEER, 0, 7, [1, 2, 3], flags=0) == []
    same([rig.l1w(a) for a in (7, 8, 9)], [1, 2, 3], "L1")


@pytest.mark.parametrize("buf, off, n", [(1, 0, 2), (2, 10, 1), (0, 501, 12), (0, 0x200, 1), (0, 0xFFFF, 1),
                                         (0x80, 3, 1)])
def test_cu_data_rejected_then_f_cudata_at_next_run(buf, off, n):
    rig = Rig()
    before = rig.core.l1.copy()
    assert rig.cu_data(PEER, buf, off, list(range(1, n + 1)), flags=1) == [], "a rejected burst is not acked"
    assert (rig.core.l1 == before).all(), "a rejected burst writes nothing"
    evs = rig.cu_data(PEER, 0, 30, [0x77], flags=1)  # counted out: the next flit is a new descriptor
    assert len(evs) == 1 and rig.l1w(30) == 0x77
    # the next RUN faults before its first instruction, even one that would fault itself
    faulted(rig.go(vseti(0x12, 4) + [W_HALT]), F_CUDATA)
    assert rig.core.s[4] == 0, "F_CUDATA: the RUN faults before its first instruction"
    retired(rig.run())
    assert rig.core.s[4] == 0x12, "F_CUDATA is cleared once reported"
    rig.cu_data(PEER, 1, 0, [1])
    faulted(rig.go(pro(vl=0)), F_CUDATA)  # precedence: F_CUDATA before the program's own F_VL
    faulted(rig.run(), F_VL)


def test_cu_data_interleaved_second_sender():
    rig = Rig()
    d = [0x11, 0x22, 0x33]
    out = rig.cu_data(PEER, 0, 40, [], flags=1, ln=3)  # descriptor only: len 3
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 0, d[0]))
    out += rig.core.take(mkflit(UNIT, PEER2, T_DATA, 0, 0, 0xEE))  # counts toward the open burst
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 0, d[1]))
    out += rig.core.take(mkflit(UNIT, PEER, T_DATA, 0, 1, d[2]))  # the burst's 4th flit: closed, no ack
    assert out == [], "an interleaved burst is dropped without an ack"
    same([rig.l1w(a) for a in range(40, 44)], [0x11, 0, 0, 0],
         "V.12: the flit before the interleave landed; the alien flit and the rest of the burst are dropped")
    evs = rig.cu_data(PEER2, 0, 60, [5, 6], flags=1)
    assert len(evs) == 1
    check_signal(evs[0], SIG_RECV, 0, 0, dst=PEER2, what="DATA_RECEIVED to the new burst's source")
    faulted(rig.go([W_HALT]), F_CUDATA)


def test_f_cudata_at_the_next_boundary_of_a_running_kernel():
    rig = Rig()
    rig.go([vfill(0, 0), W_BAR] + vseti(0x31, 3) + [W_HALT], {0: (0, [(0, 1)])})
    assert rig.cu_data(PEER, 1, 0, [9]) == []
    evs = rig.resp(0, 0xF00D)
    faulted(evs, F_CUDATA)
    assert rig.core.s[3] == 0 and rig.l1w(0) == 0xF00D, "the kernel stopped at the boundary after VBAR"
    assert len(rig.run()) == 1  # cleared: the same kernel runs again and waits for its fill
    retired(rig.resp(0, 0xF00E))
    assert rig.core.s[3] == 0x31


def test_other_flit_types_are_dropped():
    rig = Rig()
    for t in (T_RD_REQ, T_WR_REQ, T_WR_ACK, T_WR_DATA, 9, 0xE):
        assert rig.core.take(mkflit(UNIT, PEER, t, 1, 1, 12345)) == []
    assert not rig.core.l1.any() and rig.core.burst is None


# ================================================================ V.9 VRED
IDENT = {0: 0, 1: NEG_INF, 2: POS_INF, 3: 0, 4: 0, 5: 0}


def _f(kind):
    op = ar.vmax if kind == 1 else ar.vmin if kind == 2 else ar.vadd
    return lambda x, y: int(op(np.uint32(x), np.uint32(y)))


def spec_vred(kind, va, vb, vl):
    """V.9 literally: T over 8, acc[0..15] = identity, per-chunk / per-beat trees, then T over acc pairs."""
    f, ident = _f(kind), IDENT[kind]

    def T(x):
        return f(f(f(x[0], x[1]), f(x[2], x[3])), f(f(x[4], x[5]), f(x[6], x[7])))

    acc = [ident] * 16
    n = vl // 16
    if kind <= 2:
        for c in range(n):
            x = [int(v) for v in va[16 * c:16 * c + 16]]
            acc[c] = f(T([f(x[2 * j], x[2 * j + 1]) for j in range(8)]), ident)
    else:
        def leaf(e):
            if kind == 5:
                return int(ar.vexp2(np.uint32(va[e])))
            return int(ar.vmul(np.uint32(va[e]), np.uint32(vb[e])))
        for b in range(2 * n):
            acc[b] = f(T([leaf(16 * (b // 2) + 8 * (b % 2) + j) for j in range(8)]), ident)
    return T([f(acc[2 * j], acc[2 * j + 1]) for j in range(8)])


def alt_orders(kind, va, vb, vl):
    """Two plausible wrong orders: a left fold, and a lane-wise accumulation across chunks."""
    f, ident = _f(kind), IDENT[kind]
    if kind <= 2:
        leaves = [int(v) for v in va[:vl]]
    elif kind == 5:
        leaves = [int(ar.vexp2(np.uint32(v))) for v in va[:vl]]
    else:
        leaves = [int(ar.vmul(np.uint32(x), np.uint32(y))) for x, y in zip(va[:vl], vb[:vl])]
    fold = ident
    for x in leaves:
        fold = f(fold, x)
    lanes = [ident] * 16
    for e, x in enumerate(leaves):
        lanes[e % 16] = f(lanes[e % 16], x)
    lw = lanes[0]
    for x in lanes[1:]:
        lw = f(lw, x)
    return fold, lw


def _red_inputs(kind, vl, seed):
    """Inputs on which the association matters. SUM / SUMSQ / DOT / EXPSUM: one leaf of 1.0 first, the others
    below half an ulp of it, so a left fold loses every small leaf while the V.9 tree adds small leaves to
    each other first. MAX / MIN: VMAX(NaN, x) is NaN but VMAX(x, NaN) is x, so a NaN's position matters."""
    rng = np.random.default_rng(seed)
    vb = rnd_e8(rng, lo=112, hi=136, specials=False)
    if kind == 5:  # va in (-18, -17]: VEXP2 leaves below 2^-16; va[0] = 0: the leaf 1.0
        va = (1 << 23 | 131 << 15 | rng.integers(2048, 4096, 128)).astype(np.uint32)
        va[0] = 0
    elif kind in (1, 2):
        va = rnd_e8(rng, lo=118, hi=136, specials=False)
        va[0] = va[vl - 1] = 0x7FC000
    else:  # 2^-18 <= va < 2^-16, va[0] = 1.0; DOT / SUMSQ: vb in {1.0, 0.5}, vb[0] = 1.0
        va = (rng.integers(109, 111, 128) << 15 | rng.integers(0, 1 << 15, 128)).astype(np.uint32)
        va[0] = ONE
        if kind in (3, 4):
            vb = np.where(rng.integers(0, 2, 128) == 1, ONE, e8(0.5)).astype(np.uint32)
            vb[0] = ONE
    return va, vb


@pytest.mark.parametrize("vl", [16, 48, 112, 128])
@pytest.mark.parametrize("kind", range(6), ids=["SUM", "MAX", "MIN", "SUMSQ", "DOT", "EXPSUM"])
def test_vred_exact_tree_order(kind, vl):
    va, vb = _red_inputs(kind, vl, vl + 7 * kind)
    exp = spec_vred(kind, va, vb, vl)
    alts = alt_orders(kind, va, vb, vl)
    assert exp not in alts or (kind in (1, 2) and alts != (exp, exp)), (
        f"test input does not discriminate the V.9 order from a left fold / lane-wise order: {exp:#x} {alts}")
    rig = Rig()
    rig.setv(1, va), rig.setv(3, vb)
    retired(rig.go(pro(vl=vl, mode=3) + [vred(kind, 2, 1, 3), W_HALT]))
    got = rig.core.s[2]
    assert got == exp, (f"VRED kind {kind} at VL {vl}: S2 = {got:#08x}, V.9 tree gives {exp:#08x}"
                        f" (left fold {alts[0]:#08x}, lane-wise {alts[1]:#08x})")
    with pytest.raises(AssertionError):  # the planted wrong orders would be caught by this comparison
        for alt in alts:
            assert got == alt


def test_vred_identities():
    rig = Rig()
    neg = np.array([e8(-(1 + i / 64)) for i in range(128)], dtype=np.uint32)
    pos = np.array([e8(2 + i / 64) for i in range(128)], dtype=np.uint32)
    rig.setv(1, neg), rig.setv(2, pos), rig.setv(3, np.full(128, NEG0))
    retired(rig.go(pro(vl=16, mode=3) + [vred(1, 4, 1), vred(2, 5, 2), vred(0, 6, 3), vred(4, 7, 3, 2), W_HALT]))
    assert rig.core.s[4] == e8(-1.0), "MAX identity is -Inf: max of negatives is the largest negative, not 0"
    assert rig.core.s[5] == e8(2.0), "MIN identity is +Inf: min of positives, not 0"
    assert rig.core.s[6] == 0, "SUM of -0s with identity +0 gives +0 (-0 + +0 = +0)"
    assert rig.core.s[7] == 0


def test_vred_kind_is_vc_2_0():
    rig = Rig()
    v = np.array([e8(float(i % 7)) for i in range(128)], dtype=np.uint32)
    rig.setv(1, v)
    rig.core.p[0, :5] = True
    retired(rig.go(pro(mode=3) + [vred(8, 2, 1), vred(0, 3, 1), vred(15, 4, pr=0), W_HALT]))
    assert rig.core.s[2] == rig.core.s[3] == spec_vred(0, v, v, 128), "kind = ir[7:5]: vc = 8 acts as SUM"
    assert rig.core.s[4] == 0, "vc = 15 acts as ALL (P0 not all set)"


def test_vred_sumsq_reads_vb():
    rig = Rig()
    va, vb = _red_inputs(3, 32, 7)
    rig.setv(1, va), rig.setv(2, vb)
    retired(rig.go(pro(vl=32, mode=3) + [vred(3, 4, 1, 2), W_HALT]))
    assert rig.core.s[4] == spec_vred(3, va, vb, 32) != spec_vred(3, va, va, 32), "SUMSQ leaf is va[e]*vb[e]"


def test_vred_does_not_read_sa_sb_sc_pm():
    """V.9: sa, sb, sc and pm of a VRED word are not read (so C selectors raise no F_CHAIN)."""
    rig = Rig()
    va, vb = _red_inputs(0, 128, 3)
    rig.setv(1, va)
    rig.core.p[2, 7] = True
    words = [alu(VMOV, vd=9, va=9, pr=2), alu(VRED, vd=3, va=1, vc=6, sa=C, sb=C, sc=C, pm=3, pr=1),
             vsetmode(3), alu(VRED, vd=4, va=1, vc=0, sa=C, sb=C, sc=C, pm=1, pr=0), W_HALT]
    retired(rig.go(words))
    assert rig.core.s[3] == ONE and rig.core.s[4] == spec_vred(0, va, vb, 128)


@pytest.mark.parametrize("kind", range(6))
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_f_redvl_before_f_opcode(kind, mode):
    rig = Rig()
    rig.core.s[4] = 0x123
    faulted(rig.go(pro(vl=20, mode=mode) + [vred(kind, 4, 1, 2), W_HALT]), F_REDVL)
    assert rig.core.s[4] == 0x123


@pytest.mark.parametrize("kind", range(6))
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_f_opcode_vred_outside_tree(kind, mode):
    rig = Rig()
    rig.core.s[4] = 0x123
    faulted(rig.go(pro(vl=32, mode=mode) + [vred(kind, 4, 1, 2), W_HALT]), F_OPCODE)
    assert rig.core.s[4] == 0x123 and rig.core.mode == mode


def test_vred_any_all_d4_predicate_select():
    """ANY/ALL read P[q], q = the pr of the most recent ALU, VRED or chain word (D4); no mode/VL limit."""
    rig = Rig()
    rig.core.p[2, 25] = True                 # P2: nothing below VL 20
    rig.core.p[3, :20] = True                # P3: all below VL 20
    rig.core.s[1] = rig.core.s[2] = 0x5555
    words = pro(vl=20) + [alu(VMOV, vd=9, va=9, pr=2),
                          vred(6, 1, pr=3),   # ANY over P2 (not P3, its own pr): +0
                          vred(7, 2, pr=0),   # ALL over P3 (the previous VRED's pr), not P0: 1.0
                          W_HALT]
    retired(rig.go(words))
    assert rig.core.s[1] == 0, "D4: ANY reads P[pr of the previous ALU word] = P2 -> +0 (own pr P3 would give 1.0)"
    assert rig.core.s[2] == ONE, "D4: ALL reads P[pr of the previous VRED] = P3 -> 1.0 (own pr P0 would give +0)"
    rig2 = Rig()
    rig2.core.p[1, 3] = True
    retired(rig2.go(pro(mode=1) + [alu(VMOV, vd=9, va=9, pr=0), alu(VMOV, vd=9, sa=C, sb=K, sc=K, pr=1),
                                   vred(6, 5, pr=2), W_HALT]))
    assert rig2.core.s[5] == ONE, "D4: after a chain, ANY reads P[pr of its last stage] = P1"
    rig3 = Rig()
    rig3.core.p[0, :127] = True
    retired(rig3.go([alu(VMOV, vd=9, va=9, pr=0), vred(7, 6, pr=1), W_HALT]))
    assert rig3.core.s[6] == 0, "ALL below VL 128 with bit 127 clear is +0"


@pytest.mark.parametrize("pm", [0, 1, 2, 3])
def test_vred_expsum_writes_vb_with_the_last_alu_pm(pm):
    """EXPSUM: V[vb][e] = VEXP2(V[va][e]) for e < VL, by P[pr] of the VRED with the pm of the most recent
    ALU word (D5); S[vd] = the sum."""
    rig = Rig()
    va, _ = _red_inputs(5, 32, 70 + pm)
    old = rnd_e8(np.random.default_rng(9))
    p3 = np.random.default_rng(8).integers(0, 2, 128).astype(bool)
    rig.setv(1, va), rig.setv(4, old)
    rig.core.p[3] = p3
    words = pro(vl=32) + [alu(VMOV, vd=9, va=9, pr=0, pm=pm), vsetmode(3), vred(5, 2, 1, 4, pr=3), W_HALT]
    retired(rig.go(words))
    mask = below(32) & (True if pm == 0 else p3 if pm == 1 else ~p3)
    same(rig.vec(4), np.where(mask, ar.vexp2(va), old), f"EXPSUM vector write, last ALU pm {pm} (D5)")
    assert rig.core.s[2] == spec_vred(5, va, va, 32)


# ================================================================ faults: state at the fault
def test_fault_stops_the_kernel_and_state_is_kept():
    rig = Rig()
    rig.setv(1, np.full(128, ONE))
    words = pro(vl=48, mode=1) + [alu(VMOV, vd=9, va=1), alu(VADD, vd=2, sa=C, sb=K, sc=K, vc=1)] + vseti(0, 3) + [
        vsetvl(3)] + vseti(7, 4) + [W_HALT]
    faulted(rig.go(words), F_VL)
    assert (rig.core.vl, rig.core.mode, rig.core.s[4]) == (48, 1, 0), "V.10: VL, mode, registers kept; stopped"
    same(rig.vec(2), np.where(below(48), e8(2.0), 0), "the chain before the fault took effect")


# ================================================================ assembler / disassembler / encoders
EXAMPLES = [(0xF8000000, "VHALT"), (0xE0000000, "VBAR"), (0xE8000000, "VFILL A0, 0"),
            (0x18020000, "VADD v1, v0, v0"), (0xA1200000, "VLD v0, A1"), (0xA9420000, "VST v1, A2"),
            (0xF0000000, "VDRAIN A0, 0")]


@pytest.mark.parametrize("word, text", EXAMPLES)
def test_protocol_example_words(word, text):
    assert disassemble(word) == text
    assert assemble_line(text) == [word]


def test_disassemble_assemble_round_trip_random_words():
    rng = random.Random(2024)
    bad = []
    for _ in range(20000):
        w = rng.getrandbits(32)
        if (w >> 27) == VSETI:
            imm = rng.getrandbits(32)
            text = disassemble(w, imm)
            got = assemble_line(text)
            if got != [w, imm & 0xFFFFFF]:
                bad.append((w, text, got))
            continue
        text = disassemble(w)
        got = assemble_line(text)
        if got != [w]:
            bad.append((w, text, got))
    assert not bad, f"{len(bad)} words do not round-trip, e.g. " + "; ".join(
        f"{w:08x} -> {t!r} -> {[hex(x) for x in g]}" for w, t, g in bad[:5])


def test_assemble_program_text():
    text = """
        VSETI s15, 20     ; VL
        VSETVL s15
        VSETMODE D2
        VMUL v9, v1, s4
        VFMA v5, c0, s4, s6 ?p3
        VLD v0, A1-7, FP32
        VRED.SUM s1, v7
        VDRAIN A3, 0, node=(1,2), buf=5, sig
        VHALT
    """
    assert assemble(text) == (vseti(20, 15) + [vsetvl(15), vsetmode(1), alu(VMUL, vd=9, va=1, vb=4, sb=S),
                                               alu(VFMA, vd=5, va=0, vb=4, vc=6, sa=C, sb=S, sc=S, pr=3, pm=1),
                                               vld(0, 1, -7, 2), vred(0, 1, 7),
                                               vdrain_node(3, 0, (1, 2), 5, 1), W_HALT])


def test_model_encoders_match_the_spec_fields():
    rng = random.Random(5)
    for _ in range(300):
        f = dict(vd=rng.randrange(16), va=rng.randrange(16), vb=rng.randrange(16), vc=rng.randrange(16),
                 sa=rng.randrange(4), sb=rng.randrange(4), sc=rng.randrange(4), pr=rng.randrange(4),
                 pm=rng.randrange(4))
        op = rng.randrange(0x12)
        assert vc_isa.encode_alu(op, **f) == alu(op, **f)
        off, ad, vd, dt = rng.randrange(-8192, 8192), rng.randrange(8), rng.randrange(16), rng.randrange(8)
        assert vc_isa.encode_mem("VLD", ad, off, vd, dt) == vld(vd, ad, off, dt)
        assert vc_isa.encode_mem("VST", ad, off, vd, dt) == vst(vd, ad, off, dt)
        start = rng.randrange(512)
        assert vc_isa.encode_mem("VFILL", ad, start) == vfill(ad, start)
        dst, buf, sig = (rng.randrange(16), rng.randrange(16)), rng.randrange(16), rng.randrange(2)
        assert vc_isa.encode_vdrain_node(ad, start, dst, buf, sig) == vdrain_node(ad, start, dst, buf, sig)
        value = rng.getrandbits(40)
        fld = rng.randrange(8)
        assert vc_isa.desc_payload(ad, fld, value) == p_desc(ad, fld, value)
        assert vc_isa.desc_value(p_desc(ad, fld, value)) == value
        stride, bound = rng.randrange(-(1 << 17), 1 << 17), rng.randrange(1 << 16)
        assert vc_isa.pack_dim(stride, bound) == p_dim(stride, bound)
        assert vc_isa.unpack_dim(p_dim(stride, bound) | rng.getrandbits(6) << 34) == (stride, bound)
        assert vc_isa.imem_payload(start, value & 0xFFFFFFFF) == p_imem(start, value & 0xFFFFFFFF)
        assert vc_isa.run_payload(start) == p_run(start)
    assert vc_isa.encode_seti(0x123456, sreg=3) == vseti(0x123456, 3)
    assert vc_isa.encode_seti(0x654321, k3=True) == vseti(0x654321, 0, K)
    assert vc_isa.encode_setvl(7) == vsetvl(7) and vc_isa.encode_setmode("TREE") == vsetmode(3)
    assert vc_isa.encode_vloop(2, 9) == vloop(2, 9) and vc_isa.encode_vred("DOT", 1, 2, 3, 1) == vred(4, 1, 2, 3, 1)
    assert vc_isa.encode_vbcast(3, 4, to_vector=True) == alu(VBCAST, vd=3, va=4, sa=S)
    assert vc_isa.encode_vbcast(3, 4, to_vector=False) == alu(VBCAST, vd=3, va=4)
    assert vc_isa.encode_vshuf(1, 2, 3) == alu(VSHUF, vd=1, va=2, vb=3) and vc_isa.encode_vcvt(1, 2, 1) == vcvt(1, 2, 1)
    assert vc_isa.encode_bare("VHALT") == W_HALT and vc_isa.encode_bare("VBAR") == W_BAR
    assert node_record(0x123, ack=(5, 3), fin=(6, 9), mesh=2) == 0x123 | 0x35 << 16 | 2 << 24 | 0x96 << 26
    with pytest.raises(ValueError, match="vd"):
        vc_isa.encode_alu(VADD, vd=16)
    with pytest.raises(ValueError, match="off"):
        vc_isa.encode_mem("VLD", 0, 8192)


def test_describe_payload_each_cu_inst_kind():
    t = describe_payload(p_imem(17, 0x18020000))
    assert "17" in t and "18020000" in t and "VADD v1, v0, v0" in t
    t = describe_payload(p_desc(5, 0, 0xC5_4321_0FE0))
    assert "A5" in t and "0xc543210fe0" in t.lower()
    t = describe_payload(p_desc(2, 1, p_dim(-32, 0) | 0x3F << 34))
    assert "A2" in t and "-32" in t and "bound 0" in t and "ignored" in t
    for fld in (5, 6, 7):
        assert "no effect" in describe_payload(p_desc(1, fld, 99))
    assert "33" in describe_payload(p_run(33)) and "RUN" in describe_payload(p_run(33))
    for op in [0] + list(range(4, 16)):
        assert "no effect" in describe_payload(op << 252 | 12345)


# ================================================================ hazards (models/vc/hazards.py, V.8 H1)
def _hz(rig):
    return [(h.name, h.pc, h.writer_pc, h.pred, h.window, h.vl) for h in rig.core.hazards]


def test_h1_compare_then_predicated_read_is_reported_measured():
    rig = Rig()
    retired(rig.go([alu(VCMPLT, va=1, vb=2, pr=1), alu(VMOV, vd=5, va=3, pr=1, pm=1), W_HALT]))
    assert _hz(rig) == [("H1", 1, 0, 1, "measured", 128)]
    assert rig.core.hazards[0].word == alu(VMOV, vd=5, va=3, pr=1, pm=1)


def test_h1_two_intervening_instructions_report_nothing():
    rig = Rig()
    retired(rig.go(pro(vl=16) + [alu(VCMPLT, va=1, vb=2), alu(VADD, vd=6, va=1, vc=1), alu(VADD, vd=6, va=1, vc=1),
                                 alu(VMOV, vd=5, va=3, pm=2), W_HALT]))
    assert _hz(rig) == []


@pytest.mark.parametrize("vl, reported", [(16, True), (32, True), (64, False), (128, False)])
def test_h1_one_intervening_flat_alu_word(vl, reported):
    rig = Rig()
    retired(rig.go(pro(vl=vl) + [alu(VCMPEQ, va=1, vb=2, pr=2), alu(VADD, vd=6, va=1, vc=1),
                                 alu(VMOV, vd=5, va=3, pr=2, pm=1), W_HALT]))
    assert _hz(rig) == ([("H1", 5, 3, 2, "measured", vl)] if reported else [])


@pytest.mark.parametrize("between", ["VLD", "VSETMODE"])
def test_h1_draining_instruction_in_between_clears_it(between):
    rig = Rig()
    w = vld(7, 0) if between == "VLD" else vsetmode(0)
    retired(rig.go([alu(VCMPLT, va=1, vb=2), w, alu(VMOV, vd=5, va=3, pm=1), W_HALT]))
    assert _hz(rig) == []


def test_h1_any_all_right_after_a_compare():
    rig = Rig()
    retired(rig.go([alu(VCMPGT, va=1, vb=2, pr=3), vred(6, 4, pr=0), W_HALT]))
    assert _hz(rig) == [("H1-ANYALL", 1, 0, 3, "measured", 128)]


# ================================================================ models/vc/memory.py
def test_core_with_memory_fill_then_drain():
    mem = CoreWithMemory(VectorCore(UNIT, MAG))
    data = rnd_words(np.random.default_rng(90), 3)
    for i, w in enumerate(data):
        mem.write_word(0x2000 + 32 * i, w)
    flits = [mkflit(UNIT, HOST, T_INST, 0x21, 0, p_imem(i, w))
             for i, w in enumerate([vfill(0, 10), W_BAR, vdrain(1, 10), W_HALT])]
    flits += [mkflit(UNIT, HOST, T_INST, 0x21, 0, p) for p in (
        p_desc(0, 0, 0x2000), p_desc(0, 1, p_dim(32, 3)), p_desc(1, 0, 0x9000), p_desc(1, 1, p_dim(64, 3)))]
    flits.append(mkflit(UNIT, HOST, T_INST, RUN_TXN, 1, p_run(0)))
    out = mem.take_all(flits)
    retired(out[-1:], last=1)
    assert [mem.read_word(0x9000 + 64 * i) for i in range(3)] == data
