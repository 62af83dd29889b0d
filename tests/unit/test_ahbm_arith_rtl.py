"""AHBM PE numerics in RTL vs models/ahbm/numerics.py, bit for bit, through Icarus.

Each test writes input vectors to sim_build/unit/ahbm_<op>/vin.hex, builds the
pure-Verilog bench tb/unit/ahbm_arith_tb.v with one block of rtl/ahbm elaborated
(iverilog -g2012, parameter OP), runs vvp, reads vout.hex and compares every
output word with the model.  Stimulus: hand-picked class and boundary values
(signed zeros, subnormals, normals, +-inf, NaNs, overflow/underflow edges, ties)
crossed with each other, tens of thousands of random vectors per op, and every
bf16 pattern for bf16_to_fp32 and for the bf16 -> fp32 -> exp -> bf16 chain.

NaN results: the model defines the NaN of exp_f32 (0x7FC00000) and of
f32_to_bf16 (sign | 0x7FC0); those are compared as is.  For fp32 add / sub /
mul / max numpy returns a platform-defined NaN (an operand's quieted payload or
the x86 default 0xFFC00000); the RTL returns 0x7FC00000 and the expected value
is canonicalised to 0x7FC00000 whenever numpy's result is a NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.ahbm import numerics as nm
from models.numerics.reference import bit_mismatches
from tb.lib.vector_bench import VectorBench, read_hex_words

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl" / "ahbm"
TB = ROOT / "tb" / "unit" / "ahbm_arith_tb.v"
BUILD = ROOT / "sim_build" / "unit"
BLOCKS = ["fp32_add", "fp32_mul", "fp32_max", "bf16_to_fp32", "fp32_to_bf16", "fp32_exp"]

# op -> (OP parameter of ahbm_arith_tb, input bits, output bits)
OPS = {
    "fp32_add": (0, 65, 32),
    "fp32_mul": (1, 64, 32),
    "fp32_max": (2, 64, 32),
    "bf16_to_fp32": (3, 16, 32),
    "fp32_to_bf16": (4, 32, 16),
    "fp32_exp": (5, 32, 32),
    "chain_bf16_exp": (6, 16, 16),
}

CANON_NAN = 0x7FC00000


BENCH = VectorBench(TB, "ahbm_arith_tb", RTL, OPS, BUILD)
simulate = BENCH.run


def diffs(expected, got, inputs=None, what: str = "") -> list[str]:
    """Every word must match exactly; x/z words and a missing or extra word are failures."""
    return bit_mismatches(np.asarray(expected, dtype=np.int64), got, inputs=inputs, limit=8, what=what)


def run_and_check(op: str, vectors, expected, inputs=None, tag: str = "") -> None:
    got = simulate(op, vectors, tag)
    msgs = diffs(expected, got, inputs, op)
    assert not msgs, "\n".join(msgs)


# --- stimulus -------------------------------------------------------------------

SEED = 7_311_029


def gen(salt: int) -> np.random.Generator:
    return np.random.default_rng(SEED + salt)


F32_EDGE = np.array([
    0x00000000, 0x80000000,                          # +-0
    0x00000001, 0x80000001, 0x00000002, 0x00000003,  # smallest subnormals
    0x007FFFFF, 0x807FFFFF, 0x00400000, 0x00400001,  # largest / mid subnormals
    0x00800000, 0x80800000, 0x00800001, 0x00FFFFFF,  # smallest normals
    0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x3FFFFFFF, 0x3FC00000,
    0x40000000, 0x40400000, 0x4B000000, 0x4B800000, 0x33800000, 0x34000000,
    0x1F800000, 0x1F000000, 0x20000000, 0x1FFFFFFF, 0x5F800000, 0x5F7FFFFF,
    0x7F000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFE, 0x7EFFFFFF,  # largest normals
    0x7F800000, 0xFF800000,                          # +-inf
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x7FA00000,  # NaNs
    0x42B16666, 0x42B16665, 0x42B16667, 0xC2B00000, 0xC2B00001, 0xC2AFFFFF,  # exp range ends
    0x3FB8AA3B, 0x3F317200, 0x35BFBE8E, 0xBF317218, 0x3EB17218,
], dtype=np.int64)


def f32_random(r: np.random.Generator, n: int, lo: int = 0, hi: int = 255) -> np.ndarray:
    """Random fp32 patterns with biased exponent in [lo, hi]."""
    return ((r.integers(0, 2, n) << 31) | (r.integers(lo, hi + 1, n) << 23)
            | r.integers(0, 1 << 23, n))


def f32_near(r: np.random.Generator, base: np.ndarray, spread: int) -> np.ndarray:
    """Exponent within +-spread of base's; half share base's mantissa (cancellation, ties)."""
    n = base.size
    e = np.clip(((base >> 23) & 0xFF) + r.integers(-spread, spread + 1, n), 0, 254)
    m = np.where(r.random(n) < 0.4, base & 0x7FFFFF, r.integers(0, 1 << 23, n))
    m = np.where(r.random(n) < 0.2, m ^ r.integers(0, 4, n), m)
    s = r.integers(0, 2, n)
    return (s << 31) | (e << 23) | m


def as_f32(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.int64).astype(np.uint32).view(np.float32)


def as_bits(x) -> np.ndarray:
    out = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    return np.where(np.isnan(np.asarray(x, dtype=np.float32)), CANON_NAN, out)


def packed(*cols) -> list[int]:
    """{cols[0], cols[1], ...} with 32-bit fields below the first column."""
    out = []
    for vals in zip(*cols):
        v = 0
        for c in vals:
            v = (v << 32) | int(c)
        out.append(v)
    return out


def pair_stimulus(salt: int, n_rand: int, near: int):
    r = gen(salt)
    ga, gb = (g.ravel() for g in np.meshgrid(F32_EDGE, F32_EDGE, indexing="ij"))
    base = f32_random(r, n_rand)
    a = np.concatenate([ga, base, f32_random(r, n_rand)])
    b = np.concatenate([gb, f32_near(r, base, near), r.integers(0, 1 << 32, n_rand, dtype=np.int64)])
    return r, a, b


ALL_BF16 = np.arange(1 << 16, dtype=np.int64)


# --- tests ------------------------------------------------------------------------

def test_fp32_add_sub():
    r, a, b = pair_stimulus(1, 15000, 26)
    sub = r.integers(0, 2, a.size)
    # every edge pair both as a + b and as a - b
    k = F32_EDGE.size ** 2
    a = np.concatenate([a, a[:k]])
    b = np.concatenate([b, b[:k]])
    sub = np.concatenate([np.zeros(k, np.int64), sub[k:], np.ones(k, np.int64)])
    with np.errstate(all="ignore"):
        fa, fb = as_f32(a), as_f32(b)
        exp = as_bits(np.where(sub == 1, fa - fb, fa + fb).astype(np.float32))
    vec = [(int(s) << 64) | (int(x) << 32) | int(y) for s, x, y in zip(sub, a, b)]
    run_and_check("fp32_add", vec, exp, vec)


def test_fp32_mul():
    r, a, b = pair_stimulus(2, 12000, 3)
    # products near the underflow (2^-126 .. 2^-150) and overflow (2^128) edges
    ea = r.integers(1, 254, 8000)
    tgt = np.where(r.random(8000) < 0.6, r.integers(100, 130, 8000), r.integers(375, 384, 8000))
    eb = np.clip(tgt - ea, 0, 254)
    ua = (r.integers(0, 2, 8000) << 31) | (ea << 23) | r.integers(0, 1 << 23, 8000)
    ub = (r.integers(0, 2, 8000) << 31) | (eb << 23) | r.integers(0, 1 << 23, 8000)
    # subnormal x normal, and exact halfway products (power of two mantissas)
    sa = f32_random(r, 3000, 0, 0)
    sb = f32_random(r, 3000, 100, 254)
    # subnormal results on exact ties plus a far sticky bit: few-bit significands
    ta = r.integers(1, 254, 4000)
    tb = np.clip(r.integers(90, 128, 4000) - ta, 1, 254)
    ma = r.choice([1, 2, 3, 0x400001, 0x200001, 0x000100], 4000)
    mb = r.choice([0, 0x400000, 0x600000, 0x200000], 4000)
    xa = (r.integers(0, 2, 4000) << 31) | (ta << 23) | ma
    xb = (r.integers(0, 2, 4000) << 31) | (tb << 23) | mb
    # products (2^24 + 1) * 2^k (2^24 + 1 = 97 * 257 * 673): a tie at the subnormal
    # rounding point broken only by bits shifted out below the significand
    fa, fb = [], []
    for p_, q_ in ((97, 172961), (257, 65281), (673, 24929)):
        for k in range(-180, -166):
            for sgn in (1.0, -1.0):
                fa.append(np.ldexp(float(p_), k // 2) * sgn)
                fb.append(np.ldexp(float(q_), k - k // 2))
    ha = np.asarray(fa, np.float32).view(np.uint32).astype(np.int64)
    hb = np.asarray(fb, np.float32).view(np.uint32).astype(np.int64)
    a = np.concatenate([a, ua, sa, sb, xa, ha, hb])
    b = np.concatenate([b, ub, sb, sa, xb, hb, ha])
    with np.errstate(all="ignore"):
        exp = as_bits(as_f32(a) * as_f32(b))
    run_and_check("fp32_mul", packed(a, b), exp)


def test_fp32_max():
    r, a, b = pair_stimulus(3, 10000, 1)
    same = r.integers(0, 1 << 32, 500, dtype=np.int64)
    a = np.concatenate([a, same, [0, 0x80000000]])
    b = np.concatenate([b, same ^ (r.integers(0, 2, 500) << 31), [0x80000000, 0]])
    exp = as_bits(np.maximum(as_f32(a), as_f32(b)))
    # the documented signed-zero rule: max(+0, -0) = -0, max(-0, +0) = +0 (ties return b)
    assert exp[-2] == 0x80000000 and exp[-1] == 0
    run_and_check("fp32_max", packed(a, b), exp)


def test_bf16_to_fp32_exhaustive():
    exp = nm.bf16_to_f32(ALL_BF16.astype(np.uint16)).view(np.uint32).astype(np.int64)
    run_and_check("bf16_to_fp32", ALL_BF16, exp, ALL_BF16)


def test_fp32_to_bf16():
    r = gen(5)
    ties = (r.integers(0, 1 << 16, 8000, dtype=np.int64) << 16) | 0x8000
    near = (r.integers(0, 1 << 16, 8000, dtype=np.int64) << 16) | r.choice([0x7FFF, 0x8001, 0, 0xFFFF], 8000)
    f = np.concatenate([F32_EDGE, ties, near, r.integers(0, 1 << 32, 25000, dtype=np.int64),
                        [0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF, 0x007F8000, 0x80008000, 0x00018000]])
    exp = nm.f32_to_bf16(as_f32(f)).astype(np.int64)
    run_and_check("fp32_to_bf16", f, exp, f)


# fp32_exp is 10 fp32_mul + 9 fp32_add deep: Icarus needs ~1 ms per in-range
# vector (value-sorted stimulus; random order is >10x slower), so its vector sets are split into interleaved chunks, one test each,
# to keep every test to a few seconds (screened inputs: NaN, |x| out of range,
# cost almost nothing since the datapath input stays +0).
EXP_CHUNKS = 10
CHAIN_CHUNKS = 8


def exp_vectors() -> np.ndarray:
    r = gen(6)
    span = r.uniform(-90.0, 90.0, 16000).astype(np.float32).view(np.uint32).astype(np.int64)
    # x near (k + 1/2) / log2e: t lands on and around the rint ties
    k = np.arange(-127, 128)
    ties = (np.float32(k + 0.5) / nm.LOG2E).astype(np.float32).view(np.uint32).astype(np.int64)
    ties = np.concatenate([ties + d for d in (-2, -1, 0, 1, 2)])
    top = np.arange(0x42B10000, 0x42B16700, 17, dtype=np.int64)  # E7 overflow and the 88.7 edge
    bot = np.arange(0xC2AFA000, 0xC2B00100, 17, dtype=np.int64)  # E7 flush and the -88 edge
    return np.concatenate([F32_EDGE, span, ties, top, bot, f32_random(r, 3000, 0, 140),
                           r.integers(0, 1 << 32, 1000, dtype=np.int64)])


@pytest.mark.parametrize("chunk", range(EXP_CHUNKS))
def test_fp32_exp(chunk):
    # sorted: neighbouring vectors differ in few bits, which keeps Icarus' event
    # count (glitches through the 19-deep datapath) low
    x = np.unique(exp_vectors())[chunk::EXP_CHUNKS]
    with np.errstate(all="ignore"):
        exp = nm.exp_f32(as_f32(x)).view(np.uint32).astype(np.int64)
    nan = np.isnan(as_f32(x))
    assert (exp[nan] == CANON_NAN).all()  # defined by the model: compared as is
    run_and_check("fp32_exp", x, exp, x, tag=f"_{chunk}")


@pytest.mark.parametrize("chunk", range(CHAIN_CHUNKS))
def test_chain_bf16_exp_exhaustive(chunk):
    """bf16 load -> exp -> bf16 store on every bf16 pattern (chunk-interleaved)."""
    h = ALL_BF16[chunk::CHAIN_CHUNKS]
    with np.errstate(all="ignore"):
        exp = nm.f32_to_bf16(nm.exp_f32(nm.bf16_to_f32(h.astype(np.uint16)))).astype(np.int64)
    run_and_check("chain_bf16_exp", h, exp, h, tag=f"_{chunk}")


# --- the checker catches a wrong result ---------------------------------------------

def test_checker_catches_corruption():
    x = np.concatenate([F32_EDGE, gen(7).integers(0, 1 << 32, 300, dtype=np.int64)])
    with np.errstate(all="ignore"):
        exp = nm.exp_f32(as_f32(x)).view(np.uint32).astype(np.int64)
    got = simulate("fp32_exp", x, tag="_corrupt")
    assert not diffs(exp, got)
    bad = list(got)
    bad[5] ^= 1 << 17                                   # one flipped bit
    msgs = diffs(exp, bad, x, "exp")
    assert len(msgs) == 1 and "vector 5 " in msgs[0]
    bad[9] = None                                       # an x/z word
    assert any("x/z" in m for m in diffs(exp, bad))
    assert diffs(exp, got[:-1])                         # a missing result
    assert diffs(exp, got + [0])                        # an extra result
    assert read_hex_words("// c\n@0\n3f800000\nxxxxxxxx\n0z000000\n") == [0x3F800000, None, None]


# --- bench table -------------------------------------------------------------

def test_ops_table_matches_bench():
    import re
    doc = dict(re.findall(r"^//\s+(\d+) (\w+)", TB.read_text(), flags=re.M))
    assert len(doc) == len(OPS)
    for name, (code, _, _) in OPS.items():
        assert doc[str(code)] == ("chain" if name.startswith("chain_") else name)
    assert sorted(p.stem for p in RTL.glob("fp32_*.v")) + sorted(p.stem for p in RTL.glob("bf16_*.v")) \
        == sorted(b for b in BLOCKS if b.startswith("fp32")) + sorted(b for b in BLOCKS if b.startswith("bf16"))
