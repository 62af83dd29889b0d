"""The vector core's test side, shared by the directed tests of the vector-core golden model
(models/vector/__init__.py over models/vector/) in tests/unit/test_vc_*.py. A plain module, imported by name.

It holds, written from the normative spec (units.md §V, V.1-V.13, and protocol.md §1, §4, §6): the constants
(protocol.md §1, §4; units.md V.10); this project's own program-word encoders (V.4), CU_INST-payload encoders
(V.2) and flit encoder (protocol.md §1); the checkers of a sent flit, a completion, a retirement and a fault
(V.2, V.10, protocol.md §4) and of arrays; the walk odometer (V.3); the VRED reducer in the V.9 tree order and
two plausible wrong orders; random E8M15 data; and the Rig, one VectorCore with its memory agent.
tests/unit/vector/test_vc_spec.py shows that each checker fails on a planted error.

Independence. Every CONTROL expectation of those tests - which elements are written, the walk, which
flits go out and every bit of them, the faults and their precedence, the VRED combine order, the loop -
is computed from the spec text, with this module's own program-word, CU_INST-payload and flit
encoders (the model's encoders are tested against them, not used to build stimuli). Only element VALUES
come from models.numerics (e8m15, e8m15_transcendental, e8m15_cvt), which are tested elsewhere. Model
state is set and read through the core's attributes (v, s, p, l1, vl, mode, k3, base, dims, imem), the
"backdoor".
"""

from __future__ import annotations

import numpy as np

from models.numerics import e8m15
from models.numerics.e8m15_transcendental import vexp2
from models.vector import VectorCore


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


NAME = {v: k for k, v in OPS.items()}


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


# ================================================================ flits (protocol.md §1), our own; checkers (V.2, V.10)
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


# ================================================================ the V.9 VRED tree, our own, and two wrong orders
IDENT = {0: 0, 1: NEG_INF, 2: POS_INF, 3: 0, 4: 0, 5: 0}


def _f(kind):
    op = e8m15.vmax if kind == 1 else e8m15.vmin if kind == 2 else e8m15.vadd
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
                return int(vexp2(np.uint32(va[e])))
            return int(e8m15.vmul(np.uint32(va[e]), np.uint32(vb[e])))
        for b in range(2 * n):
            acc[b] = f(T([leaf(16 * (b // 2) + 8 * (b % 2) + j) for j in range(8)]), ident)
    return T([f(acc[2 * j], acc[2 * j + 1]) for j in range(8)])


def alt_orders(kind, va, vb, vl):
    """Two plausible wrong orders: a left fold, and a lane-wise accumulation across chunks."""
    f, ident = _f(kind), IDENT[kind]
    if kind <= 2:
        leaves = [int(v) for v in va[:vl]]
    elif kind == 5:
        leaves = [int(vexp2(np.uint32(v))) for v in va[:vl]]
    else:
        leaves = [int(e8m15.vmul(np.uint32(x), np.uint32(y))) for x, y in zip(va[:vl], vb[:vl])]
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
