"""RTL vs model, bit for bit: every block of rtl/arith through Icarus on many vectors.

Each test writes its input vectors to sim_build/unit/<op>/vin.hex, builds the
pure-Verilog bench tb/unit/arith_tb.v with that block elaborated (iverilog
-g2012, parameter OP), runs it with vvp, reads vout.hex and compares every
output with models.numerics.  Edge values, exhaustive sweeps where a block
takes 16 bits (FP16 load, the FP16 doubling and SiLU chains, VEXP2 on every
FP16 value) and a few thousand random vectors elsewhere.  No cocotb.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from models.numerics import cluster, e8m15, formats
from models.numerics.layout import entry_to_int, pack_a_entry, pack_acc_tile, pack_b_entry
from models.numerics.reference import bit_mismatches
from tb.lib.vector_bench import VectorBench, read_hex_words

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl" / "arith"
TB = ROOT / "tb" / "unit" / "arith_tb.v"
BUILD = ROOT / "sim_build" / "unit"

# op name -> (OP parameter of arith_tb, input bits, output bits)
OPS = {
    "fp16_to_e8m15": (0, 16, 24),
    "e8m15_to_fp16": (1, 24, 16),
    "fp32_to_e8m15": (2, 32, 24),
    "e8m15_to_fp32": (3, 24, 32),
    "e8m15_fma": (4, 74, 24),
    "e8m15_add": (5, 49, 24),
    "e8m15_mul": (6, 48, 24),
    "e8m15_minmax": (7, 48, 48),
    "e8m15_negabs": (8, 24, 48),
    "e8m15_exp2": (9, 24, 24),
    "e8m15_inv": (10, 24, 24),
    "acc_add": (11, 44, 22),
    "acc_to_fp16": (12, 22, 16),
    "acc_emit_subtile": (13, 352, 256),
    "cu_gemm_subtile": (14, 2409, 352),
    "chain_fp16_double": (15, 16, 16),
    "chain_silu": (16, 16, 16),
}


BENCH = VectorBench(TB, "arith_tb", RTL, OPS, BUILD)
run_rtl = BENCH.run


def check(op: str, vectors, expected, inputs=None, tag: str = "") -> None:
    got = run_rtl(op, vectors, tag)
    bad = bit_mismatches(expected, got, inputs=inputs, what=op)
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
    0xC71760, 0x4B0000, 0xCB0000, 0x43000000 >> 8, 0xC2FC00,  # -38752, 2^23, 128, -126
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


ALL_FP16 = np.arange(65536, dtype=np.int64)


def pairs(a, b, hi_bits: int) -> list[int]:
    return [(int(x) << hi_bits) | int(y) for x, y in zip(a, b)]


# --- conversions -----------------------------------------------------------------

def test_fp16_to_e8m15_exhaustive():
    check("fp16_to_e8m15", ALL_FP16, formats.fp16_to_e8m15(ALL_FP16), ALL_FP16)


def test_e8m15_to_fp16_store():
    r = rng(1)
    x = np.concatenate([
        E8_EDGE,
        formats.fp16_to_e8m15(ALL_FP16).astype(np.int64),  # every FP16 value (round trip)
        e8_random(r, 12000, 95, 160),  # around the FP16 range: subnormals, rounding, saturation
        e8_random(r, 3000),
    ])
    exp = formats.e8m15_to_fp16(x)
    check("e8m15_to_fp16", x, exp, x)
    # the round trip FP16 -> E8M15 -> FP16 is the identity on every non-NaN pattern
    h = ALL_FP16[((ALL_FP16 >> 10) & 0x1F) != 0x1F]
    h = np.concatenate([h, ALL_FP16[(ALL_FP16 & 0x7FFF) == 0x7C00]])
    back = formats.e8m15_to_fp16(formats.fp16_to_e8m15(h)).astype(np.int64)
    inf = (h & 0x7FFF) == 0x7C00
    assert np.array_equal(back[~inf], h[~inf])
    assert np.array_equal(back[inf], (h[inf] & 0x8000) | 0x7BFF)  # Inf saturates on store


def test_fp32_conversions():
    r = rng(2)
    edge32 = np.array([0, 0x80000000, 1, 0x007FFFFF, 0x807FFF80, 0x007FFF80, 0x00800000,
                       0x7F7FFFFF, 0xFF7FFF7F, 0x7F7FFF80, 0x7F800000, 0xFF800000, 0x7FC00000,
                       0x7F800001, 0xFFFFFFFF, 0x3F800080, 0x3F800180, 0x3F800081, 0x3F80017F,
                       0x3F8000FF, 0x3F7FFF80, 0x40490FDB], dtype=np.int64)
    f = np.concatenate([edge32, r.integers(0, 1 << 32, 5000, dtype=np.int64),
                        (r.integers(0, 1 << 24, 3000, dtype=np.int64) << 8) | 0x80])  # ties
    check("fp32_to_e8m15", f, formats.fp32_to_e8m15(f), f)
    x = np.concatenate([E8_EDGE, r.integers(0, 1 << 24, 5000, dtype=np.int64)])
    check("e8m15_to_fp32", x, formats.e8m15_to_fp32(x), x)


# --- E8M15 arithmetic ------------------------------------------------------------

def test_e8m15_add_sub():
    r = rng(3)
    ea, ec = np.meshgrid(E8_EDGE, E8_EDGE, indexing="ij")
    a_rand = e8_random(r, 4000, 1, 254)
    a = np.concatenate([ea.ravel(), a_rand, e8_random(r, 1000), [0x3F8000, 0x800000]])
    c = np.concatenate([ec.ravel(), e8_near(r, a_rand, 30), e8_random(r, 1000), [0xBF8000, 0x800000]])
    sub = r.integers(0, 2, a.size)
    sub[: ea.size] = 0
    a = np.concatenate([a, ea.ravel()])
    c = np.concatenate([c, ec.ravel()])
    sub = np.concatenate([sub, np.ones(ea.size, np.int64)])
    vec = [(int(s) << 48) | (int(x) << 24) | int(y) for s, x, y in zip(sub, a, c)]
    exp = e8m15.vfma_core(a, e8m15.K1, c, 0, sub)
    check("e8m15_add", vec, exp)
    # the protocol's known case: FP16 0xf8bb doubled, stored as FP16, is 0xfbff
    x = int(formats.fp16_to_e8m15(0xF8BB))
    assert int(formats.e8m15_to_fp16(e8m15.vadd(x, x))) == 0xFBFF


def test_e8m15_mul():
    r = rng(4)
    ea, eb = np.meshgrid(E8_EDGE, E8_EDGE, indexing="ij")
    a = np.concatenate([ea.ravel(), e8_random(r, 3000, 64, 190), e8_random(r, 1000)])
    b = np.concatenate([eb.ravel(), e8_random(r, 3000, 64, 190), e8_random(r, 1000)])
    check("e8m15_mul", pairs(a, b, 24), e8m15.vmul(a, b))


def test_e8m15_fma():
    r = rng(5)
    small = np.array([0x000000, 0x800000, 0x3F8000, 0xBF8000, 0x008000, 0x7F7FFF, 0x7F8000,
                      0xFF8000, 0x7FC000, 0x3FFFFF, 0x00FFFF, 0x5F8000], dtype=np.int64)
    ga, gb, gc = (g.ravel() for g in np.meshgrid(small, small, small, indexing="ij"))
    a = e8_random(r, 4000, 64, 190)
    b = e8_random(r, 4000, 64, 190)
    prod_exp = np.clip(((a >> 15) & 0xFF) + ((b >> 15) & 0xFF) - 127, 1, 254)
    c = e8_random(r, 4000)
    near = r.random(4000) < 0.8
    c_e = np.clip(prod_exp + r.integers(-40, 41, 4000), 1, 254)
    c = np.where(near, (c & ~(0xFF << 15)) | (c_e << 15), c)
    a = np.concatenate([ga, a, e8_random(r, 500)])
    b = np.concatenate([gb, b, e8_random(r, 500)])
    c = np.concatenate([gc, c, e8_random(r, 500)])
    negp = r.integers(0, 2, a.size)
    nega = r.integers(0, 2, a.size)
    vec = [(int(p) << 73) | (int(q) << 72) | (int(x) << 48) | (int(y) << 24) | int(z)
           for p, q, x, y, z in zip(negp, nega, a, b, c)]
    check("e8m15_fma", vec, e8m15.vfma_core(a, b, c, negp, nega))


def test_e8m15_minmax_negabs():
    r = rng(6)
    ea, eb = np.meshgrid(E8_EDGE, E8_EDGE, indexing="ij")
    base = e8_random(r, 3000)
    a = np.concatenate([ea.ravel(), base])
    b = np.concatenate([eb.ravel(), e8_near(r, base, 2)])
    exp = (e8m15.vmax(a, b).astype(np.int64) << 24) | e8m15.vmin(a, b)
    check("e8m15_minmax", pairs(a, b, 24), exp)
    x = np.concatenate([E8_EDGE, r.integers(0, 1 << 24, 2000, dtype=np.int64)])
    check("e8m15_negabs", x, (e8m15.vneg(x).astype(np.int64) << 24) | e8m15.vabs(x), x)


def test_e8m15_exp2():
    r = rng(7)
    x = np.concatenate([
        E8_EDGE,
        formats.fp16_to_e8m15(ALL_FP16).astype(np.int64),  # every FP16 value
        e8_random(r, 6000, 60, 136),  # |x| from 2^-67 to 512: all paths and the range ends
        e8_random(r, 1000),
    ])
    check("e8m15_exp2", x, e8m15.vexp2(x), x)


def test_e8m15_inv():
    r = rng(8)
    mant = np.arange(1 << 15, dtype=np.int64)
    x = np.concatenate([
        E8_EDGE,
        (127 << 15) | mant,  # every significand
        (1 << 23) | (252 << 15) | mant,  # negative, result just above the flush threshold
        e8_random(r, 4000),
    ])
    check("e8m15_inv", x, e8m15.vinv(x), x)


def test_chain_fp16_double_exhaustive():
    x = formats.fp16_to_e8m15(ALL_FP16)
    exp = formats.e8m15_to_fp16(e8m15.vadd(x, x))
    assert int(exp[0xF8BB]) == 0xFBFF
    check("chain_fp16_double", ALL_FP16, exp, ALL_FP16)


def test_chain_silu_exhaustive():
    check("chain_silu", ALL_FP16, e8m15.silu_fp16(ALL_FP16), ALL_FP16)


# --- accumulator and GEMM --------------------------------------------------------

ACC_EDGE = np.array([0x000000, 0x200000, 0x000001, 0x0FC000, 0x2FC000, 0x004000, 0x204000,
                     0x1FFFFF, 0x3FFFFF, 0x1FBFFF, 0x13C000, 0x13BFF0, 0x13BFF8, 0x13BFF7,
                     0x0A0000, 0x09C000, 0x09E000, 0x09E001, 0x0A3FF0], dtype=np.int64)


def acc_random(r: np.random.Generator, n: int, lo: int = 0, hi: int = 127) -> np.ndarray:
    return (r.integers(0, 2, n) << 21) | (r.integers(lo, hi + 1, n) << 14) | r.integers(0, 1 << 14, n)


def test_acc_add():
    r = rng(9)
    ga, gb = (g.ravel() for g in np.meshgrid(ACC_EDGE, ACC_EDGE, indexing="ij"))
    x = acc_random(r, 4000)
    e = np.clip(((x >> 14) & 0x7F) + r.integers(-18, 19, 4000), 0, 127)
    y = np.where(r.random(4000) < 0.5, x ^ (1 << 21), acc_random(r, 4000))
    y = (y & ~(0x7F << 14)) | (e << 14)
    a = np.concatenate([ga, x])
    b = np.concatenate([gb, y])
    check("acc_add", pairs(a, b, 22), cluster.acc_add(a, b))


def test_acc_to_fp16():
    r = rng(10)
    exps = np.arange(128)
    sweep = ((np.arange(2)[:, None, None] << 21) | (exps[None, :, None] << 14)
             | r.integers(0, 1 << 14, (2, 128, 96))).ravel()
    a = np.concatenate([ACC_EDGE, sweep, acc_random(r, 4000, 30, 85)])
    check("acc_to_fp16", a, formats.acc_to_fp16(a), a)


def test_acc_emit_subtile():
    r = rng(11)
    tiles = acc_random(r, 16 * 200, 40, 90).reshape(-1, 4, 4)
    vec = [pack_acc_tile(t) for t in tiles]
    exp = [cluster.emit_granule(t) for t in tiles]
    check("acc_emit_subtile", vec, exp)


def gemm_vectors(n: int, seed: int):
    """Random and edge GEMM steps: (bench input vectors, expected acc_out ports) as ints."""
    r = rng(seed)
    a = r.integers(-64, 64, (n, 4, 32))
    b = r.integers(-64, 64, (n, 32, 4))
    sa = r.integers(0, 256, (n, 4))
    sb = r.integers(0, 256, (n, 4))
    anchor = np.clip(r.normal(40, 15, n).astype(np.int64), 0, 255)
    anchor[:8] = [0, 255, 40, 40, 40, 1, 200, 62]
    acc_in = acc_random(r, n * 16).reshape(n, 4, 4)
    accumulate = r.integers(0, 2, n)
    # edges: extreme dot products, exact integer case, saturation, flush, cancellation
    a[0], b[0] = -64, -64  # dot = +131072
    sa[0], sb[0] = 0xFF, 0xFF  # with anchor 0: saturates
    a[1], b[1] = 63, -64
    a[2], b[2] = -64, -64
    sa[2], sb[2] = 0xA0, 0xA0  # exact integer dot (rounded to 15 bits)
    sa[3], sb[3] = 0xA0, 0xA0
    a[3] = r.integers(-3, 4, (4, 32))  # small dots: exact
    a[4] = 0
    accumulate[2:5] = 1
    load = cluster.gemm_product(a[5], b[5], sa[5], sb[5], anchor[5]).astype(np.int64)
    acc_in[5] = load ^ (1 << 21)  # acc = -product: exact cancellation to +0
    accumulate[5] = 1
    ga = pack_a_entry(a, sa)
    gb = pack_b_entry(b, sb)
    vec, expected = [], []
    for t in range(n):
        out = cluster.gemm_step(a[t], b[t], sa[t], sb[t], int(anchor[t]), acc_in[t], bool(accumulate[t]))
        if t == 5:
            assert np.all(out == 0)
        expected.append(pack_acc_tile(out))
        v = entry_to_int(ga[t]) | (entry_to_int(gb[t]) << 1024) | (pack_acc_tile(acc_in[t]) << 2048)
        vec.append(v | (int(anchor[t]) << 2400) | (int(accumulate[t]) << 2408))
    return vec, expected


def test_cu_gemm_subtile():
    vec, expected = gemm_vectors(400, 12)
    check("cu_gemm_subtile", vec, expected)


# --- the checkers catch a wrong value ------------------------------------------

def test_rtl_check_catches_corruption():
    x = np.concatenate([E8_EDGE, rng(13).integers(0, 1 << 24, 200, dtype=np.int64)])
    got = run_rtl("e8m15_exp2", x, tag="_corrupt")
    exp = e8m15.vexp2(x)
    assert not bit_mismatches(exp, got)
    bad = list(got)
    bad[7] ^= 1 << 3  # one flipped bit
    msgs = bit_mismatches(exp, bad, inputs=x, what="exp2")
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
