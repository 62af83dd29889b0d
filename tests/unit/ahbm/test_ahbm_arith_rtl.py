"""AHBM PE numerics in RTL vs models/ahbm/numerics.py, bit for bit, through Icarus.

Each test writes input vectors to sim_build/unit/ahbm_<op>/vin.hex, builds the
pure-Verilog bench rtl/bench/ahbm_arith_tb.v with one block of rtl/ahbm elaborated
(iverilog -g2012, parameter OP), runs vvp, reads vout.hex and compares every
output word with the model.  Stimulus: hand-picked class and boundary values
(signed zeros, subnormals, normals, +-inf, NaNs, overflow/underflow edges, ties)
crossed with each other, tens of thousands of random vectors per op, and every
bf16 pattern for bf16_to_fp32 and for the bf16 -> fp32 -> exp -> bf16 chain.

The fp32 blocks are thin wrappers of the functions of rtl/ahbm/fp32/fp32_lib.vh
(f32_add, f32_mul, f32_div, f32_max, f32_exp, f32_to_bf16), which the PE core
calls, so these tests prove the functions; test_fp32_lib_include checks the
include itself (guard, `undef convention, f32_sub, bf16_to_f32, wrapper ==
function) and lints a module that calls every function from a clocked loop.

NaN results: the model defines the NaN of exp_f32 (0x7FC00000) and of
f32_to_bf16 (sign | 0x7FC0); those are compared as is.  For fp32 add / sub /
mul / div / max numpy returns a platform-defined NaN (an operand's quieted
payload or the x86 default 0xFFC00000); the RTL returns 0x7FC00000 and the
expected value is canonicalised to 0x7FC00000 whenever numpy's result is a NaN.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from models.ahbm import numerics
from models.numerics.reference import bit_mismatches
from tb.lib.verilog_vectors import VerilogVectors, read_hex_words

ROOT = Path(__file__).resolve().parents[3]
RTL = ROOT / "rtl" / "ahbm" / "fp32"
TB = ROOT / "rtl" / "bench" / "ahbm_arith_tb.v"
BUILD = ROOT / "sim_build" / "unit"
BLOCKS = ["fp32_add", "fp32_mul", "fp32_max", "bf16_to_fp32", "fp32_to_bf16", "fp32_exp", "fp32_div"]

# op -> (OP parameter of ahbm_arith_tb, input bits, output bits)
OPS = {
    "fp32_add": (0, 65, 32),
    "fp32_mul": (1, 64, 32),
    "fp32_max": (2, 64, 32),
    "bf16_to_fp32": (3, 16, 32),
    "fp32_to_bf16": (4, 32, 16),
    "fp32_exp": (5, 32, 32),
    "chain_bf16_exp": (6, 16, 16),
    "fp32_div": (7, 64, 32),
}

CANON_NAN = 0x7FC00000


BENCH = VerilogVectors(TB, "ahbm_arith_tb", RTL, OPS, BUILD)
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
    exp = numerics.bf16_to_f32(ALL_BF16.astype(np.uint16)).view(np.uint32).astype(np.int64)
    run_and_check("bf16_to_fp32", ALL_BF16, exp, ALL_BF16)


def test_fp32_to_bf16():
    r = gen(5)
    ties = (r.integers(0, 1 << 16, 8000, dtype=np.int64) << 16) | 0x8000
    near = (r.integers(0, 1 << 16, 8000, dtype=np.int64) << 16) | r.choice([0x7FFF, 0x8001, 0, 0xFFFF], 8000)
    f = np.concatenate([F32_EDGE, ties, near, r.integers(0, 1 << 32, 25000, dtype=np.int64),
                        [0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF, 0x007F8000, 0x80008000, 0x00018000]])
    exp = numerics.f32_to_bf16(as_f32(f)).astype(np.int64)
    run_and_check("fp32_to_bf16", f, exp, f)


# fp32_exp is 10 f32_mul + 9 f32_add calls (one function, ~40 us per in-range
# vector in Icarus; as a chain of module instances it took ~1 ms).  Its vector
# sets stay split into interleaved chunks, one test each.
EXP_CHUNKS = 10
CHAIN_CHUNKS = 8


def exp_vectors() -> np.ndarray:
    r = gen(6)
    span = r.uniform(-90.0, 90.0, 16000).astype(np.float32).view(np.uint32).astype(np.int64)
    # x near (k + 1/2) / log2e: t lands on and around the rint ties
    k = np.arange(-127, 128)
    ties = (np.float32(k + 0.5) / numerics.LOG2E).astype(np.float32).view(np.uint32).astype(np.int64)
    ties = np.concatenate([ties + d for d in (-2, -1, 0, 1, 2)])
    top = np.arange(0x42B10000, 0x42B16700, 17, dtype=np.int64)  # E7 overflow and the 88.7 edge
    bot = np.arange(0xC2AFA000, 0xC2B00100, 17, dtype=np.int64)  # E7 flush and the -88 edge
    return np.concatenate([F32_EDGE, span, ties, top, bot, f32_random(r, 3000, 0, 140),
                           r.integers(0, 1 << 32, 1000, dtype=np.int64)])


@pytest.mark.parametrize("chunk", range(EXP_CHUNKS))
def test_fp32_exp(chunk):
    # sorted (kept from the module-chain days, when it kept Icarus' glitch count low)
    x = np.unique(exp_vectors())[chunk::EXP_CHUNKS]
    with np.errstate(all="ignore"):
        exp = numerics.exp_f32(as_f32(x)).view(np.uint32).astype(np.int64)
    nan = np.isnan(as_f32(x))
    assert (exp[nan] == CANON_NAN).all()  # defined by the model: compared as is
    run_and_check("fp32_exp", x, exp, x, tag=f"_{chunk}")


@pytest.mark.parametrize("chunk", range(CHAIN_CHUNKS))
def test_chain_bf16_exp_exhaustive(chunk):
    """bf16 load -> exp -> bf16 store on every bf16 pattern (chunk-interleaved)."""
    h = ALL_BF16[chunk::CHAIN_CHUNKS]
    with np.errstate(all="ignore"):
        exp = numerics.f32_to_bf16(numerics.exp_f32(numerics.bf16_to_f32(h.astype(np.uint16)))).astype(np.int64)
    run_and_check("chain_bf16_exp", h, exp, h, tag=f"_{chunk}")


def div_stimulus() -> tuple[np.ndarray, np.ndarray]:
    """Dividend / divisor patterns for fp32_div (see test_fp32_div)."""
    r = gen(18)
    # edge values crossed; random a with b near a's exponent (quotients near 1,
    # shared mantissas: exact 1.0 and near ties); fully random patterns
    _, a0, b0 = pair_stimulus(8, 12000, 3)
    # exponent difference near the overflow (> 2^128) and underflow
    # (2^-126 .. 2^-150 and below) edges
    n = 8000
    ea = r.integers(1, 255, n)
    tgt = np.where(r.random(n) < 0.5, r.integers(-153, -118, n), r.integers(122, 131, n))
    eb = np.clip(ea - tgt, 1, 254)
    a1 = (r.integers(0, 2, n) << 31) | (ea << 23) | r.integers(0, 1 << 23, n)
    b1 = (r.integers(0, 2, n) << 31) | (eb << 23) | r.integers(0, 1 << 23, n)
    # subnormal operands: sub / normal, normal / sub, sub / sub
    m = 3000
    sa, sb = f32_random(r, m, 0, 0), f32_random(r, m, 0, 0)
    na, nb = f32_random(r, m, 1, 254), f32_random(r, m, 90, 160)
    a2, b2 = np.concatenate([sa, na, sa]), np.concatenate([nb, sb, sb])
    # exact quotients: c * d / d with c * d exact (12-bit significands)
    k = 3000
    c = r.integers(1 << 11, 1 << 12, k) * np.ldexp(1.0, r.integers(-70, 60, k) - 11)
    d = r.integers(1 << 11, 1 << 12, k) * np.ldexp(1.0, r.integers(-60, 60, k) - 11)
    d = d * r.choice([1.0, -1.0], k)
    a3 = np.asarray(c * d, np.float32).view(np.uint32).astype(np.int64)
    b3 = np.asarray(d, np.float32).view(np.uint32).astype(np.int64)
    # exact subnormal quotients w * m * 2^(j-150-s) / (w * 2^j), s in {0, 1, 2}:
    # s = 0 exact, s = 1 an exact tie (m odd), s = 2 a quarter point
    w = r.choice([1, 3, 5, 7, 9, 11, 13], k)
    mm = r.integers(1, 1 << 20, k) | 1
    j = r.integers(60, 120, k)
    sh = r.integers(0, 3, k)
    a4 = np.asarray(np.ldexp((w * mm).astype(np.float64), j - 150 - sh), np.float32)
    b4 = np.asarray(np.ldexp(w.astype(np.float64), j) * r.choice([1.0, -1.0], k), np.float32)
    a4, b4 = (x.view(np.uint32).astype(np.int64) for x in (a4, b4))
    # near ties: a = fp32(b * q) with q halfway between two fp32 neighbours (a
    # normal or a subnormal result), so a / b misses the tie by a hair or not
    # at all; and the dividends one ulp either side
    q_n = np.ldexp((2 * r.integers(1 << 23, 1 << 24, k) + 1).astype(np.float64), r.integers(-40, 40, k) - 24)
    q_s = np.ldexp((2 * r.integers(1, 1 << 23, k) + 1).astype(np.float64), -150)
    q = np.concatenate([q_n, q_s])
    bq = np.asarray(np.ldexp(1.0 + r.random(2 * k), np.concatenate([r.integers(-40, 40, k), r.integers(30, 120, k)])),
                    np.float32)
    aq = np.asarray(bq.astype(np.float64) * q, np.float32).view(np.uint32).astype(np.int64)
    bq = bq.view(np.uint32).astype(np.int64)
    a5 = np.concatenate([aq, aq + 1, aq - 1])
    b5 = np.concatenate([bq, bq, bq])
    a = np.concatenate([a0, a1, a2, a3, a4, a5])
    b = np.concatenate([b0, b1, b2, b3, b4, b5])
    return a & 0xFFFFFFFF, b & 0xFFFFFFFF


def test_fp32_div():
    """a / b against numpy float32 division, bit for bit (NaN canonicalised)."""
    a, b = div_stimulus()
    fa, fb = as_f32(a), as_f32(b)
    with np.errstate(all="ignore"):
        y = fa / fb
        q64 = fa.astype(np.float64) / fb.astype(np.float64)
    exp = as_bits(y)
    # the stimulus reaches every class it is meant to
    fin = np.isfinite(q64) & (q64 != 0)
    yb = exp & 0x7FFFFFFF
    sub = (yb > 0) & (yb < 0x00800000)
    scaled = np.where(fin, np.abs(q64), 0.0) * 2.0 ** 149   # in units of the smallest subnormal
    classes = {
        "subnormal result": sub.sum(),
        "underflow to zero": (fin & (yb == 0)).sum(),
        "overflow to inf": (fin & (yb == 0x7F800000)).sum(),
        "exact non-trivial": (fin & (q64 == y.astype(np.float64)) & (fb != 1) & (fb != -1)).sum(),
        "subnormal tie": (fin & (scaled < 2 ** 23) & (scaled % 1 == 0.5)).sum(),
        "x / 0": ((fb == 0) & np.isfinite(fa) & (fa != 0)).sum(),
        "0 / 0, inf / inf": (((fa == 0) & (fb == 0)) | (np.isinf(fa) & np.isinf(fb))).sum(),
    }
    assert all(v >= 500 for k, v in classes.items() if k[0] != "x" and k[0] != "0"), classes
    assert classes["x / 0"] >= 50 and classes["0 / 0, inf / inf"] >= 8, classes   # 8: every sign pair
    assert a.size >= 40000
    run_and_check("fp32_div", packed(a, b), exp)


# --- the include itself ---------------------------------------------------------------

LIB_TB = """`timescale 1ns/1ps
`default_nettype none
// Every wrapper of rtl/ahbm elaborated next to a module that includes
// fp32_lib.vh itself (twice: the guard makes the second include empty).
// Per vector: vout = {f32_sub(a, b), bf16_to_f32(a[15:0])}; the first NCHK
// vectors also drive the wrappers, and a wrapper output that differs from its
// function prints a MISMATCH line.
module ahbm_fp32_lib_tb;
`include "fp32_lib.vh"
`include "fp32_lib.vh"
    parameter integer N = 1;
    parameter integer NCHK = 1;
    reg  [63:0] vin_mem  [0:N-1];
    reg  [63:0] vout_mem [0:N-1];
    reg  [31:0] a, b;
    wire [31:0] y_add, y_sub, y_mul, y_div, y_max, y_exp, y_wid;
    wire [15:0] y_h;
    fp32_add     u_add (.a(a), .b(b), .sub(1'b0), .y(y_add));
    fp32_add     u_sub (.a(a), .b(b), .sub(1'b1), .y(y_sub));
    fp32_mul     u_mul (.a(a), .b(b), .y(y_mul));
    fp32_div     u_div (.a(a), .b(b), .y(y_div));
    fp32_max     u_max (.a(a), .b(b), .y(y_max));
    fp32_exp     u_exp (.x(a), .y(y_exp));
    fp32_to_bf16 u_st  (.f(a), .h(y_h));
    bf16_to_fp32 u_ld  (.h(a[15:0]), .f(y_wid));
    integer i;
    initial begin
        $readmemh("vin.hex", vin_mem);
        for (i = 0; i < NCHK; i = i + 1) begin
            {a, b} = vin_mem[i];
            #1;
            if ({y_add, y_sub, y_mul, y_div, y_max, y_exp, y_h, y_wid}
                !== {f32_add(a, b), f32_sub(a, b), f32_mul(a, b), f32_div(a, b), f32_max(a, b),
                     f32_exp(a), f32_to_bf16(a), bf16_to_f32(a[15:0])})
                $display("MISMATCH %0d %h %h", i, a, b);
        end
        for (i = 0; i < N; i = i + 1)
            vout_mem[i] = {f32_sub(vin_mem[i][63:32], vin_mem[i][31:0]), bf16_to_f32(vin_mem[i][47:32])};
        $writememh("vout.hex", vout_mem);
        $finish;
    end
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
"""

# A caller in the style of the PE core: every function called from loops over
# an array (combinational and clocked), nested calls included.  Linted with
# verilator -Wall.
LIB_USE = """`default_nettype none
module ahbm_fp32_lib_use (
    input  wire        clk,
    input  wire [31:0] x,
    output reg  [31:0] acc,
    output reg  [15:0] st
);
`include "fp32_lib.vh"
    reg [31:0] v [0:7];
    reg [31:0] sum;
    integer k, j;
    always @* begin
        sum = 32'd0;
        for (k = 0; k < 8; k = k + 1)
            sum = f32_add(sum, f32_sub(f32_mul(x, v[k]), f32_div(f32_exp(f32_max(x, v[k])), x)));
    end
    always @(posedge clk) begin
        for (j = 0; j < 8; j = j + 1)
            v[j] <= bf16_to_f32(f32_to_bf16(f32_add(sum, v[j])));
        acc <= sum;
        st  <= f32_to_bf16(sum);
    end
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
"""


def test_fp32_lib_include():
    """fp32_lib.vh with the include path the benches use (-I rtl/ahbm): all
    wrappers and an including module compile in one compilation in either
    order (the `undef after each endmodule), a double include in one module is
    harmless, every wrapper equals its function, f32_sub and bf16_to_f32 match
    the model, and a PE-core-style caller lints clean."""
    d = BUILD / "ahbm_fp32_lib"
    d.mkdir(parents=True, exist_ok=True)
    tb = d / "ahbm_fp32_lib_tb.v"
    tb.write_text(LIB_TB)
    wrappers = sorted(str(p) for p in RTL.glob("fp32_*.v")) + sorted(str(p) for p in RTL.glob("bf16_*.v"))
    assert len(wrappers) == len(BLOCKS)
    # edge / random pairs (every wrapper checked against its function), then every
    # bf16 pattern in a[15:0] (bf16_to_f32 exhaustive)
    _, a, b = pair_stimulus(9, 3000, 26)
    nchk = a.size
    r = gen(19)
    a = np.concatenate([a, ALL_BF16 | r.integers(0, 1 << 16, ALL_BF16.size, dtype=np.int64) << 16])
    b = np.concatenate([b, r.integers(0, 1 << 32, ALL_BF16.size, dtype=np.int64)])
    (d / "vin.hex").write_text("".join(f"{(int(x) << 32) | int(y):016x}\n" for x, y in zip(a, b)))

    # Every wrapper is also a top: under the bench, Icarus would resolve a
    # function missing from a wrapper upwards in the bench's scope (which has
    # them), hiding a wrapper that lost its functions to the guard.
    tops = [x for t in ["ahbm_fp32_lib_tb"] + [Path(w).stem for w in wrappers] for x in ("-s", t)]

    def build(name: str, *args: str, tops: list[str] = tops) -> None:
        proc = subprocess.run(["iverilog", "-g2012", "-o", str(d / name), *tops,
                               f"-Pahbm_fp32_lib_tb.N={a.size}", f"-Pahbm_fp32_lib_tb.NCHK={nchk}", *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr

    # one compilation, both file orders; and the -y lookup the vector bench uses
    build("sim_late.vvp", "-I", str(RTL), *wrappers, str(tb))
    build("sim_y.vvp", "-y", str(RTL), "-I", str(RTL), str(tb), tops=tops[:2])   # library lookup: one root
    build("sim.vvp", "-I", str(RTL), str(tb), *wrappers)
    out = d / "vout.hex"
    out.unlink(missing_ok=True)
    proc = subprocess.run(["vvp", "-n", "sim.vvp"], cwd=d, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and out.exists(), proc.stdout + proc.stderr
    assert "MISMATCH" not in proc.stdout, proc.stdout[:2000]
    with np.errstate(all="ignore"):
        exp_sub = as_bits(as_f32(a) - as_f32(b))
    exp_wid = numerics.bf16_to_f32((a & 0xFFFF).astype(np.uint16)).view(np.uint32).astype(np.int64)
    msgs = bit_mismatches(packed(exp_sub, exp_wid), read_hex_words(out.read_text()), inputs=packed(a, b),
                          limit=8, what="{f32_sub, bf16_to_f32}")
    assert not msgs, "\n".join(msgs)
    # without the include path the include is not found
    proc = subprocess.run(["iverilog", "-g2012", "-o", str(d / "sim_noinc.vvp"), "-s", "ahbm_fp32_lib_tb", str(tb)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "fp32_lib.vh" in proc.stderr
    # a PE-core-style caller, verilator -Wall (verilator is required by the suite: tests/test_lint.py)
    assert shutil.which("verilator"), "verilator is not installed"
    use = d / "ahbm_fp32_lib_use.v"
    use.write_text(LIB_USE)
    proc = subprocess.run(["verilator", "--lint-only", "-Wall", f"-I{RTL}", "--top-module", "ahbm_fp32_lib_use",
                           *wrappers, str(use)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "%Warning" not in proc.stderr, proc.stderr


# --- the checker catches a wrong result ---------------------------------------------

def test_checker_catches_corruption():
    x = np.concatenate([F32_EDGE, gen(7).integers(0, 1 << 32, 300, dtype=np.int64)])
    with np.errstate(all="ignore"):
        exp = numerics.exp_f32(as_f32(x)).view(np.uint32).astype(np.int64)
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
