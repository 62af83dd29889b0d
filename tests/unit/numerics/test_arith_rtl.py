"""RTL vs model, bit for bit: every block of rtl/arith (and the lane ALU rtl/vector/vc_alu.v) through Icarus.

Each test writes its input vectors to sim_build/unit/<op>/vin.hex, builds the
pure-Verilog bench rtl/bench/arith_tb.v with that block elaborated (iverilog
-g2012, parameter OP), runs it with vvp, reads vout.hex and compares every
output with the Python models: models.numerics.e8m15, e8m15_transcendental and
e8m15_alu (units.md V.6) and
models.numerics.e8m15_cvt (V.7) for the vector core, models.numerics.cluster
(C.7) for the cluster.  Edge values, exhaustive sweeps where a block takes 16
bits (FP16 load, the FP16 doubling and SiLU chains), every mantissa at several
exponents for the transcendentals, and a few thousand random vectors
elsewhere.  A few spec examples are checked against the RTL directly, without
the model.  No cocotb.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from models.numerics import cluster, e8m15, e8m15_alu, e8m15_cvt
from models.numerics.e8m15_transcendental import vexp2, vinv, vlog2, vrsqrt
from models.numerics.layout import entry_to_int, pack_a_entry, pack_acc_tile, pack_b_entry
from models.numerics.reference import bit_mismatches
from tb.lib.verilog_vectors import VerilogVectors, read_hex_words
from tests.unit.cluster import cluster_ref

ROOT = Path(__file__).resolve().parents[3]
RTL = ROOT / "rtl" / "arith"
UNIT_DIRS = (ROOT / "rtl" / "cluster", ROOT / "rtl" / "vector")
TB = ROOT / "rtl" / "bench" / "arith_tb.v"
BUILD = ROOT / "sim_build" / "unit"

# op name -> (OP parameter of arith_tb, input bits, output bits)
OPS = {
    "fp16_to_e8m15": (0, 16, 24),
    "e8m15_to_fp16": (1, 24, 16),
    "fp32_to_e8m15": (2, 32, 24),
    "e8m15_to_fp32": (3, 24, 32),
    "vc_alu": (4, 78, 25),
    "e8m15_fma": (5, 72, 24),
    "e8m15_cmp": (6, 48, 3),
    "e8m15_tcu": (7, 26, 24),
    "e8m15_pack": (8, 61, 24),
    "acc_add": (11, 44, 22),
    "acc_to_fp16": (12, 22, 16),
    "acc_emit_subtile": (13, 352, 256),
    "cu_gemm_subtile": (14, 2409, 352),
    "acc_convert": (17, 43, 22),
    "chain_fp16_double": (15, 16, 16),
    "chain_silu": (16, 16, 16),
}


BENCH = VerilogVectors(TB, "arith_tb", RTL, OPS, BUILD, lib_dirs=UNIT_DIRS)
run_rtl = BENCH.run


def check(op: str, vectors, expected, inputs=None, tag: str = "") -> None:
    got = run_rtl(op, vectors, tag)
    bad = bit_mismatches(expected, got, inputs=inputs, what=op + tag)
    assert not bad, "\n".join(bad)


# --- stimulus ---------------------------------------------------------------------

RNG_SEED = 20240611


def rng(salt: int) -> np.random.Generator:
    return np.random.default_rng(RNG_SEED + salt)


E8_EDGE = np.array([
    0x000000, 0x800000, 0x000001, 0x807FFF,  # zeros (incl. non-canonical)
    0x3F8000, 0xBF8000, 0x3F8001, 0x3FFFFF,  # +-1, 1+ulp, 2-ulp
    0x008000, 0x808000, 0x00FFFF, 0x010000,  # smallest normals
    0x7F7FFF, 0xFF7FFF, 0x7F0000,            # largest
    0x7F8000, 0xFF8000, 0x7FC000, 0x7F8001, 0xFFFFFF,  # Inf, NaN
    0x477FE0, 0x477FF0, 0x477FEF, 0xC77FF0,  # 65504, 65520 (saturation edge), just below
    0x330000, 0x330001, 0x334000, 0x32FFFF,  # 2^-25 (FP16 half-subnormal tie), neighbours
    0x338000, 0x387FC0, 0x388000,            # 2^-24, FP16 max subnormal, min normal
    0xC71760, 0x4B0000, 0xCB0000, 0x430000, 0xC2FC00,  # -38752, 2^23, -2^23, 128, -126
    0x434800, 0xC34800, 0x437F00, 0x437FFF, 0x438000,  # 200, -200, 255 (VEXP2 D1), 256-ulp, 256
    0xBFB8AA,                                 # -log2(e)
], dtype=np.int64)


def e8_random(r: np.random.Generator, n: int, lo: int = 0, hi: int = 255) -> np.ndarray:
    """Random E8M15 patterns with biased exponent in [lo, hi]."""
    s = r.integers(0, 2, n)
    e = r.integers(lo, hi + 1, n)
    m = r.integers(0, 1 << 15, n)
    return (s << 23) | (e << 15) | m


def e8_near(r: np.random.Generator, base: np.ndarray, spread: int) -> np.ndarray:
    """Patterns whose exponent is within +-spread of base's, random sign and mantissa
    (half of them with base's mantissa and the opposite sign: cancellation)."""
    n = base.size
    e = np.clip(((base >> 15) & 0xFF) + r.integers(-spread, spread + 1, n), 1, 254)
    m = np.where(r.random(n) < 0.5, base & 0x7FFF, r.integers(0, 1 << 15, n))
    s = np.where(r.random(n) < 0.5, ((base >> 23) & 1) ^ 1, r.integers(0, 2, n))
    return (s << 23) | (e << 15) | m


def with_exponent(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    return (x & ~(0xFF << 15)) | (np.clip(e, 0, 255) << 15)


def e8_value(x) -> np.ndarray:
    """float64 value of finite E8M15 patterns (exact; e = 0 reads as 0)."""
    x = np.asarray(x, np.int64)
    s, e, m = (x >> 23) & 1, (x >> 15) & 0xFF, x & 0x7FFF
    v = np.ldexp((m | 0x8000).astype(np.float64), (e - 142).astype(np.int32))
    return np.where(e == 0, 0.0, np.where(s == 1, -v, v))


def e8_nearest(v, r: np.random.Generator, spread: int = 2) -> np.ndarray:
    """E8M15 patterns within a few ulps of the float64 values v (finite, non-zero)."""
    f32 = np.asarray(v, np.float64).astype(np.float32).view(np.uint32).astype(np.int64)
    x = (f32 >> 8) + r.integers(-spread, spread + 1, f32.size)
    return x & 0xFFFFFF


ALL_FP16 = np.arange(65536, dtype=np.int64)
ALL_MANT = np.arange(1 << 15, dtype=np.int64)


def pairs(a, b, hi_bits: int) -> list[int]:
    return [(int(x) << hi_bits) | int(y) for x, y in zip(a, b)]


# --- conversions (V.7) -----------------------------------------------------------

def test_fp16_to_e8m15_exhaustive():
    check("fp16_to_e8m15", ALL_FP16, e8m15_cvt.fp16_to_e8m15(ALL_FP16), ALL_FP16)


def test_e8m15_to_fp16_store():
    r = rng(1)
    images = e8m15_cvt.fp16_to_e8m15(ALL_FP16).astype(np.int64)  # every FP16 value, exactly
    x = np.concatenate([
        E8_EDGE,
        images,
        images + 1, images - 1, images + 16, images - 16,  # around every FP16 value: the rounding ties
        e8_random(r, 12000, 95, 160),  # around the FP16 range: subnormals, rounding, saturation
        e8_random(r, 3000),
    ]) & 0xFFFFFF
    got = run_rtl("e8m15_to_fp16", x)
    bad = bit_mismatches(e8m15_cvt.e8m15_to_fp16(x), got, inputs=x, what="e8m15_to_fp16")
    assert not bad, "\n".join(bad)
    # V.7 without the model: the round trip FP16 -> E8M15 -> FP16 is the identity on every
    # non-NaN pattern (Inf stays Inf); a NaN comes back quiet, {s, 31, 1, m[8:0]}
    back = np.array(got[E8_EDGE.size:E8_EDGE.size + 65536], dtype=np.int64)
    nan = ((ALL_FP16 & 0x7C00) == 0x7C00) & ((ALL_FP16 & 0x3FF) != 0)
    assert np.array_equal(back[~nan], ALL_FP16[~nan])
    assert np.array_equal(back[nan], ALL_FP16[nan] | 0x200)


def test_fp32_conversions():
    r = rng(2)
    edge32 = np.array([0, 0x80000000, 1, 0x007FFFFF, 0x807FFF80, 0x007FFF80, 0x00800000,
                       0x7F7FFFFF, 0xFF7FFF7F, 0x7F7FFF80, 0x7F7FFF7F, 0x7F800000, 0xFF800000, 0x7FC00000,
                       0x7F800001, 0x7F800100, 0xFFFFFFFF, 0x3F800080, 0x3F800180, 0x3F800081, 0x3F80017F,
                       0x3F8000FF, 0x3F7FFF80, 0x40490FDB], dtype=np.int64)
    f = np.concatenate([edge32, r.integers(0, 1 << 32, 6000, dtype=np.int64),
                        (r.integers(0, 1 << 24, 3000, dtype=np.int64) << 8) | 0x80,  # ties
                        (r.integers(0, 1 << 24, 1000, dtype=np.int64) << 8) | 0x7F])
    check("fp32_to_e8m15", f, e8m15_cvt.fp32_to_e8m15(f), f)
    x = np.concatenate([E8_EDGE, r.integers(0, 1 << 24, 6000, dtype=np.int64)])
    check("e8m15_to_fp32", x, e8m15_cvt.e8m15_to_fp32(x), x)


# --- the lane ALU (V.6.2 on V.6.3 / V.6.4), one build per opcode --------------------

ALU_OPS = {0x00: "VMOV", 0x01: "VNEG", 0x02: "VABS", 0x03: "VADD", 0x04: "VSUB", 0x05: "VMUL",
           0x06: "VFMA", 0x07: "VFNMA", 0x08: "VMAX", 0x09: "VMIN", 0x0A: "VSEL", 0x0B: "VCMPLT",
           0x0C: "VCMPGT", 0x0D: "VCMPEQ", 0x0E: "VEXP2", 0x0F: "VLOG2", 0x10: "VINV", 0x11: "VRSQRT"}
CMP_OPS = (0x0B, 0x0C, 0x0D)


def alu_vectors(op, a, b, c, en=1) -> list[int]:
    """{en, op5, a24, b24, c24} per vector (op and en scalars or arrays)."""
    n = len(a)
    op = np.broadcast_to(op, n)
    en = np.broadcast_to(en, n)
    return [(int(e) << 77) | (int(o) << 72) | (int(x) << 48) | (int(y) << 24) | int(z)
            for e, o, x, y, z in zip(en, op, a, b, c)]


def alu_expected(op: int, a, b, c) -> np.ndarray:
    """{pred, r} of the model: r = alu(op, a, b, c); pred = compare(op, a, b) for 0B..0D."""
    res = e8m15_alu.alu(op, a, b, c).astype(np.int64)
    if op in CMP_OPS:
        res = res | (e8m15_alu.compare(op, a, b).astype(np.int64) << 24)
    return res


def grid(*cols):
    return [g.ravel() for g in np.meshgrid(*cols, indexing="ij")]


SMALL = np.array([0x000000, 0x800000, 0x000001, 0x3F8000, 0xBF8000, 0x008000, 0x7F7FFF, 0x7F8000,
                  0xFF8000, 0x7FC000, 0x3FFFFF, 0x00FFFF, 0x5F8000, 0xA08000], dtype=np.int64)


def alu_stimulus(op: int, r: np.random.Generator):
    """(a, b, c) for one opcode: edge grids, then what the op's datapath needs, then random."""
    n = 4000
    if op in (0x00, 0x01, 0x02):  # unary through the datapath
        a = np.concatenate([E8_EDGE, e8_random(r, n, 1, 254), e8_random(r, 1000)])
        b, c = e8_random(r, a.size), e8_random(r, a.size)  # not read: must not matter
    elif op in (0x03, 0x04):  # VADD / VSUB: a*1.0 + (+-c)
        ga, gc = grid(E8_EDGE, E8_EDGE)
        base = e8_random(r, n, 1, 254)
        flip = 0 if op == 0x04 else 1  # the sign of c that cancels a
        near = (base ^ (flip << 23)) + r.integers(-3, 4, n)  # near-cancellation, exact x - x
        gap = with_exponent(e8_random(r, n), ((base >> 15) & 0xFF) + r.integers(-60, 61, n))  # alignment
        gap2 = with_exponent(e8_random(r, n), ((base >> 15) & 0xFF) + r.choice([-49, -48, -47, -33, -32, -17,
                                                                               -16, 16, 17, 32, 33, 48], n))
        a = np.concatenate([ga, base, base, base, e8_near(r, base, 30), e8_random(r, 1000)])
        c = np.concatenate([gc, near & 0xFFFFFF, gap, gap2,
                            base, e8_random(r, 1000)])
        b = e8_random(r, a.size)
    elif op == 0x05:  # VMUL
        ga, gb = grid(E8_EDGE, E8_EDGE)
        ties_a = e8_random(r, 1000, 100, 150)
        a = np.concatenate([ga, e8_random(r, n, 64, 190), ties_a, e8_random(r, n, 1, 254), e8_random(r, 1000)])
        ties_b = (r.integers(0, 2, 1000) << 23) | (r.integers(100, 150, 1000) << 15) | (
            r.integers(0, 1 << 5, 1000) << 10)  # few significand bits: exact products, exact ties
        b = np.concatenate([gb, e8_random(r, n, 64, 190), ties_b, e8_random(r, n, 1, 254), e8_random(r, 1000)])
        c = e8_random(r, a.size)
    elif op in (0x06, 0x07):  # VFMA / VFNMA
        ga, gb, gc = grid(SMALL, SMALL, SMALL)
        a1, b1 = e8_random(r, n, 64, 190), e8_random(r, n, 64, 190)
        pe = ((a1 >> 15) & 0xFF) + ((b1 >> 15) & 0xFF) - 127
        c_gap = with_exponent(e8_random(r, n), pe + r.integers(-60, 61, n))  # large and small gaps, bypass
        a2, b2 = e8_random(r, n, 90, 160), e8_random(r, n, 90, 160)
        prod = e8_value(a2) * e8_value(b2)
        c_near = e8_nearest(prod if op == 0x07 else -prod, r)  # near-cancellation of a*b
        a = np.concatenate([ga, a1, a2, e8_random(r, 1000)])
        b = np.concatenate([gb, b1, b2, e8_random(r, 1000)])
        c = np.concatenate([gc, c_gap, c_near, e8_random(r, 1000)])
    elif op in (0x08, 0x09) + CMP_OPS:  # compares, VMAX / VMIN
        ga, gb = grid(E8_EDGE, E8_EDGE)
        base = e8_random(r, n)
        a = np.concatenate([ga, base, base, base, e8_random(r, 1000)])
        b = np.concatenate([gb, e8_near(r, base, 2), base, base ^ 0x800000, e8_random(r, 1000)])
        c = e8_random(r, a.size)
    elif op == 0x0A:  # VSEL on the value of c
        ga, gc = grid(E8_EDGE, E8_EDGE)
        c_any = np.where(r.random(n) < 0.3, r.integers(0, 2, n) << 23, e8_random(r, n))
        a = np.concatenate([ga, e8_random(r, n), e8_random(r, 1000)])
        c = np.concatenate([gc, c_any, e8_random(r, 1000)])
        b = e8_random(r, a.size)
    else:  # transcendentals: every mantissa at several exponents, the specials, random
        sweeps = {0x0E: ((0, 127), (1, 127), (0, 133), (1, 134)),  # 2^[-2,4), the D1 range
                  0x0F: ((0, 127), (0, 126), (0, 1)),               # log2 near 0, below 1, tiny
                  0x10: ((0, 127), (1, 200), (0, 254)),             # 1/x, negative, the flush edge
                  0x11: ((0, 127), (0, 128), (0, 1))}[op]           # both parities, smallest
        sw = [(s << 23) | (e << 15) | ALL_MANT for s, e in sweeps]
        a = np.concatenate([E8_EDGE, *sw, e8_random(r, n, 90, 160), e8_random(r, 2000)])
        b, c = e8_random(r, a.size), e8_random(r, a.size)
    return a & 0xFFFFFF, b & 0xFFFFFF, c & 0xFFFFFF


@pytest.mark.parametrize("op", sorted(ALU_OPS), ids=[f"{o:02x}_{ALU_OPS[o]}" for o in sorted(ALU_OPS)])
def test_vc_alu(op):
    a, b, c = alu_stimulus(op, rng(100 + op))
    assert a.size >= 4000
    check("vc_alu", alu_vectors(op, a, b, c), alu_expected(op, a, b, c), inputs=a, tag=f"_{op:02x}")


def test_vc_alu_disabled_and_unused_opcodes():
    """en = 0 gives r = 0, pred = 0 for every opcode; opcodes 0x12..0x1F give 0, 0."""
    r = rng(99)
    x = np.concatenate([E8_EDGE, e8_random(r, 200)])
    ops = np.repeat(np.arange(32), x.size)
    a, b, c = np.tile(x, 32), np.tile(np.roll(x, 1), 32), np.tile(np.roll(x, 2), 32)
    en = (ops >= 0x12).astype(np.int64)  # enabled only on the opcodes the ALU does not implement
    check("vc_alu", alu_vectors(ops, a, b, c, en), np.zeros(ops.size, np.int64), tag="_off")


def test_vc_alu_spec_examples():
    """units.md examples checked against the RTL directly (not through the model)."""
    P0, N0, ONE, NAN = 0x000000, 0x800000, 0x3F8000, 0x7FC000
    X, NX = 0x40C000, 0xC0C000  # +-6.0
    cases = [  # (op, a, b, c, r, pred)
        (0x05, 0x3F80C2, 0x3FA000, 0, 0x3FA0F3, 0),  # V.6.3 D2: a zero addend rounds ties away
        (0x0E, 0x434800, 0, 0, 0x238000, 0),  # exp2(200) = 2^-56 (D1)
        (0x0E, 0xC34800, 0, 0, 0x5B8000, 0),  # exp2(-200) = 2^56
        (0x0E, 0x437F00, 0, 0, 0x3F0000, 0),  # exp2(255) = 0.5
        (0x0E, 0x430000, 0, 0, 0x000000, 0),  # exp2(128) = 0
        (0x0E, 0x438000, 0, 0, 0x7F8000, 0),  # exp2(256) = +Inf (e > 134)
        (0x0E, 0xC38000, 0, 0, 0x000000, 0),  # exp2(-256) = +0
        (0x00, N0, 0, 0, P0, 0),  # MOV, NEG, ABS of -0 / +0 give +0
        (0x01, P0, 0, 0, P0, 0),
        (0x02, N0, 0, 0, P0, 0),
        (0x05, NX, P0, 0, P0, 0),  # (-x)*(+0) = +0
        (0x03, P0, 0, N0, N0, 0),  # +0 + -0 = -0
        (0x03, N0, 0, N0, N0, 0),  # -0 + -0 = -0
        (0x04, X, 0, X, P0, 0),  # x - x = +0
        (0x00, 0x7F8001, 0, 0, NAN, 0),  # every NaN result is 0x7FC000
        (0x08, X, 0xFFFFFF, 0, X, 0),  # VMAX(x, NaN) = x
        (0x08, 0xFFFFFF, X, 0, NAN, 0),  # VMAX(NaN, x) = the canonical NaN
        (0x0A, X, NX, 0x7FC000, X, 0),  # VSEL on c's value: NaN selects a
        (0x0A, X, NX, 0x800000, NX, 0),  # -0 selects b
        (0x0A, X, NX, 0x000001, X, 0),  # a non-canonical zero is a nonzero magnitude
        (0x0C, 0x000001, P0, 0, ONE, 1),  # raw compare: non-canonical zero > +0
        (0x0D, P0, N0, 0, ONE, 1),  # +0 == -0
        (0x0B, NX, X, 0, ONE, 1),
        (0x0B, X, 0x7FC000, 0, P0, 0),  # NaN: not less, not greater, not equal
        (0x0C, X, 0x7FC000, 0, P0, 0),
        (0x0D, 0x7FC000, 0x7FC000, 0, P0, 0),
        (0x0F, 0x3F8000, 0, 0, P0, 0),  # log2(1) = +0
        (0x0F, P0, 0, 0, 0xFF8000, 0),  # log2(0) = -Inf
        (0x0F, 0xBF8000, 0, 0, NAN, 0),
        (0x10, 0x408000, 0, 0, 0x3E8000, 0),  # 1/4 = 0.25 (a segment start: ident)
        (0x10, N0, 0, 0, 0xFF8000, 0),  # 1/-0 = -Inf
        (0x11, 0x408000, 0, 0, 0x3F0000, 0),  # rsqrt(4) = 0.5
        (0x11, N0, 0, 0, 0x7F8000, 0),  # rsqrt(-0) = +Inf
    ]
    op, a, b, c, want_r, want_p = (np.array(col, dtype=np.int64) for col in zip(*cases))
    got = run_rtl("vc_alu", alu_vectors(op, a, b, c), tag="_spec")
    want = (want_p << 24) | want_r
    bad = bit_mismatches(want, got, inputs=[(int(o) << 48) | (int(x) << 24) | int(y)
                                            for o, x, y in zip(op, a, c)], what="spec example")
    assert not bad, "\n".join(bad)


# --- the blocks below the ALU ------------------------------------------------------

def test_e8m15_fma():
    r = rng(5)
    ga, gb, gc = grid(SMALL, SMALL, SMALL)
    a = e8_random(r, 4000, 64, 190)
    b = e8_random(r, 4000, 64, 190)
    pe = ((a >> 15) & 0xFF) + ((b >> 15) & 0xFF) - 127
    c = with_exponent(e8_random(r, 4000), pe + r.integers(-60, 61, 4000))
    x = np.concatenate([ga, a, e8_random(r, 1000)])
    y = np.concatenate([gb, b, e8_random(r, 1000)])
    z = np.concatenate([gc, c, e8_random(r, 1000)])
    vec = [(int(p) << 48) | (int(q) << 24) | int(w) for p, q, w in zip(x, y, z)]
    check("e8m15_fma", vec, e8m15.fma(x, y, z))


def test_e8m15_cmp():
    r = rng(6)
    ga, gb = grid(E8_EDGE, E8_EDGE)
    base = e8_random(r, 3000)
    a = np.concatenate([ga, base, base])
    b = np.concatenate([gb, e8_near(r, base, 2), base ^ (r.integers(0, 2, base.size) << 23)])
    exp = ((e8m15.cmp_lt(a, b).astype(np.int64) << 2) | (e8m15.cmp_gt(a, b).astype(np.int64) << 1)
           | e8m15.cmp_eq(a, b).astype(np.int64))
    check("e8m15_cmp", pairs(a, b, 24), exp)


def test_e8m15_pack():
    r = rng(7)
    n = 6000
    top = r.integers(0, 48, n)  # top-bit position of mag
    mag = np.array([int(r.integers(0, 1 << 62)) >> (62 - t) | (1 << int(t)) for t in top], dtype=np.int64)
    mag[:200] = 0
    carry_top = r.integers(16, 48, 200)
    mag[200:400] = ((1 << 17) - 1) << (carry_top - 16)  # 17 ones below the top: rounds up to 2^(p+1)
    top[200:400] = carry_top
    ebase = r.integers(-160, 360, n)
    ebase[400:1400] = 255 - top[400:1400] + r.integers(-2, 2, 1000)  # overflow edge
    ebase[1400:2400] = -top[1400:2400] + r.integers(-1, 3, 1000)  # flush edge
    sign, stk, cancel = r.integers(0, 2, n), r.integers(0, 2, n), r.integers(0, 2, n)
    vec = [(int(m) << 13) | ((int(e) & 0x3FF) << 3) | (int(s) << 2) | (int(k) << 1) | int(c)
           for m, e, s, k, c in zip(mag, ebase, sign, stk, cancel)]
    check("e8m15_pack", vec, e8m15.pack(mag, ebase, sign, stk, cancel))


def test_e8m15_tcu_direct():
    """e8m15_tcu alone on every fsel (vc_alu covers it in depth)."""
    r = rng(8)
    x = np.concatenate([E8_EDGE, e8_random(r, 1500, 90, 160), e8_random(r, 500)])
    fsel = np.repeat(np.arange(4), x.size)
    a = np.tile(x, 4)
    exp = np.concatenate([f(x) for f in (vexp2, vlog2, vinv, vrsqrt)])
    check("e8m15_tcu", pairs(fsel, a, 24), exp)


# --- chains ------------------------------------------------------------------------

def test_chain_fp16_double_exhaustive():
    x = e8m15_cvt.fp16_to_e8m15(ALL_FP16)
    exp = e8m15_cvt.e8m15_to_fp16(e8m15.vadd(x, x))
    assert int(exp[0xF8BB]) == 0xFBFF  # protocol.md: doubling 0xf8bb saturates
    check("chain_fp16_double", ALL_FP16, exp, ALL_FP16)


def test_chain_silu_exhaustive():
    x = e8m15_cvt.fp16_to_e8m15(ALL_FP16)
    t = e8m15.vmul(x, e8m15.NEG_LOG2E)
    y = e8m15.vmul(vinv(e8m15.vadd(vexp2(t), e8m15.K1)), x)
    check("chain_silu", ALL_FP16, e8m15_cvt.e8m15_to_fp16(y), ALL_FP16)


# --- accumulator and GEMM (units.md C.7) ----------------------------------------
# The vectors are those tests/unit/cluster/test_cluster_numerics.py holds the model to (>= 10^4 per operation,
# with cancellation, underflow, A2 midpoints, A3, A1 wraps, ties and saturation); here the RTL must
# equal the model on every one.

def test_acc_add():
    t, x = (np.array(c, dtype=np.int64) for c in zip(*cluster_ref.ADD))
    check("acc_add", pairs(t, x, 22), cluster.acc_add(t, x))


def test_acc_to_fp16():
    a = np.array(cluster_ref.EMIT, dtype=np.int64)
    check("acc_to_fp16", a, cluster.acc_emit(a), a)


def test_acc_convert():
    d, sa, sb, anchor = (np.array(c, dtype=np.int64) for c in zip(*cluster_ref.CONVERT))
    vec = (anchor << 35) | (sb << 27) | (sa << 19) | (d & 0x7FFFF)
    check("acc_convert", vec, cluster.acc_convert(d, sa, sb, anchor), vec)


def test_spec_examples_on_the_rtl():
    """A few C.7 lines checked on the RTL against the literal reference, without the model."""
    adds = [(0x0FC000, 0x2FC000), (126 << 14 | 0x3FFF, 126 << 14 | 0x3FFF), (0, 127 << 14 | 5), (0x3ABC, 0)]
    got = run_rtl("acc_add", [(p << 22) | q for p, q in adds], "_spec")
    assert got == [cluster_ref.ref_add(p, q) for p, q in adds] == [0, 127 << 14 | 0x3FFF, 127 << 14 | 5, 0]
    emits = [78 << 14 | 0x3FF0, 78 << 14 | 0x3FF8, 1 << 21 | 48 << 14 | 0x3FFF, 0x0FC000]
    assert run_rtl("acc_to_fp16", emits, "_spec") == [cluster_ref.ref_emit(v) for v in emits] == [0x7BFF, 0x7BFF,
                                                                                                  0x8400, 0x3C00]


def acc_random(r: np.random.Generator, n: int, lo: int = 0, hi: int = 127) -> np.ndarray:
    return (r.integers(0, 2, n) << 21) | (r.integers(lo, hi + 1, n) << 14) | r.integers(0, 1 << 14, n)


def test_acc_emit_subtile():
    r = rng(11)
    tiles = acc_random(r, 16 * 400, 0, 127).reshape(-1, 4, 4)
    vec = [pack_acc_tile(t) for t in tiles]
    exp = [cluster.emit_granule(t) for t in tiles]
    check("acc_emit_subtile", vec, exp)


def gemm_vectors(n: int, seed: int):
    """Random and edge GEMM issues: (bench input vectors, expected acc_out ports) as ints."""
    r = rng(seed)
    a = r.integers(-64, 64, (n, 4, 32))
    b = r.integers(-64, 64, (n, 32, 4))
    sa = r.integers(0, 256, (n, 4))
    sb = r.integers(0, 256, (n, 4))
    anchor = np.clip(r.normal(40, 25, n).astype(np.int64), 0, 255)
    anchor[:8] = [0, 255, 40, 40, 40, 1, 200, 62]  # 0, 1, 200, 255: A1 wraps
    acc_in = acc_random(r, n * 16).reshape(n, 4, 4)
    accumulate = r.integers(0, 2, n)
    # edges: extreme dot products, exact integer case, binade 127 (A3), cancellation
    a[0], b[0] = -64, -64  # D = +131072
    sa[0], sb[0] = 0xFF, 0xFF
    a[1], b[1] = 63, -64
    a[2], b[2] = -64, -64
    sa[2], sb[2] = 0xA0, 0xA0  # the exact integer dot (rounded to 15 bits)
    sa[3], sb[3] = 0xA0, 0xA0
    a[3] = r.integers(-3, 4, (4, 32))  # small dots: exact
    a[4] = 0
    accumulate[2:5] = 1
    acc_in[6] = 126 << 14 | 0x3FFF  # ADD reaching binade 127: the maximum magnitude
    a[6], b[6], sa[6], sb[6], anchor[6], accumulate[6] = 63, 63, 0xC0, 0xC0, 1, 1  # X in binade 126
    load = cluster.gemm_product(a[5], b[5], sa[5], sb[5], anchor[5]).astype(np.int64)
    acc_in[5] = load ^ (1 << 21)  # acc = -product: exact cancellation to +0
    accumulate[5] = 1
    ga = pack_a_entry(a, sa)
    gb = pack_b_entry(b, sb)
    vec, expected = [], []
    for t in range(n):
        out = cluster.gemm_step(a[t], b[t], sa[t], sb[t], int(anchor[t]), acc_in[t], bool(accumulate[t]))
        if t == 5:
            assert np.all((out == 0) | (load == 0))
        expected.append(pack_acc_tile(out))
        v = entry_to_int(ga[t]) | (entry_to_int(gb[t]) << 1024) | (pack_acc_tile(acc_in[t]) << 2048)
        vec.append(v | (int(anchor[t]) << 2400) | (int(accumulate[t]) << 2408))
    return vec, expected


def test_cu_gemm_subtile():
    vec, expected = gemm_vectors(600, 12)
    check("cu_gemm_subtile", vec, expected)


# --- the checkers catch a wrong value ------------------------------------------

def test_rtl_check_catches_corruption():
    x = np.concatenate([E8_EDGE, rng(13).integers(0, 1 << 24, 200, dtype=np.int64)])
    got = run_rtl("e8m15_to_fp32", x, tag="_corrupt")
    exp = e8m15_cvt.e8m15_to_fp32(x)
    assert not bit_mismatches(exp, got)
    bad = list(got)
    bad[7] ^= 1 << 3  # one flipped bit
    msgs = bit_mismatches(exp, bad, inputs=x, what="to_fp32")
    assert len(msgs) == 1 and "vector 7" in msgs[0]
    bad[9] = None  # an x/z word from the simulator
    assert any("x/z" in m for m in bit_mismatches(exp, bad))
    assert bit_mismatches(exp, got[:-1])  # a missing result
    # and through the file parser: a word with x bits reads as None
    assert read_hex_words("// 0x0\n3f8000\nxxxxxx\n01zz00\n") == [0x3F8000, None, None]


# --- bench table -----------------------------------------------------------------

def test_ops_table_matches_bench():
    """The OP numbers here are the ones the bench's header documents."""
    doc = dict(re.findall(r"^//\s+(\d+) (\w+)", TB.read_text(), flags=re.M))
    for name, (code, _, _) in OPS.items():
        assert doc[str(code)] == ("chain" if name.startswith("chain_") else name)
    assert len(doc) == len(OPS)
