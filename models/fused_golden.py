"""The golden output of a whole fused (or unfused) matmul + epilogue kernel, bit for bit.

``y = epilogue(acc_0, acc_1, ...)`` with ``acc_r = x @ w_r^T`` (x: M x K int7,
w_r: N x K int7, E5M3 block scales per row and 32-wide K block), computed the
way the machine computes it, from models.numerics only:

1. **GEMM into S1E7M14**, per the cluster's sweep (K block outermost): block
   kb = 0 is a LOAD of the rounded product, every later block an ADD (product
   rounded, then the sum rounded), in increasing kb. Tiles are independent, so
   the g/h order inside one kb does not change a value; only the kb order does.
2. **FP16 emit** (OP_EMIT: nearest even, saturating to +-65504).
3. **FP16 -> E8M15** on VLD (exact).
4. **The epilogue** on E8M15 in the order the vector program runs it
   (models.programs.lower_epilogue): add/sub/mul/max/min/exp2/inv/neg one
   instruction each; SiLU = VMUL by NEG_LOG2E, VEXP2, VADD K1, VINV, VMUL by x;
   sigmoid = the first four; constants as their E8M15 patterns.
5. **E8M15 -> FP16** saturating store.

The fused and unfused forms produce identical bits: the peer drain delivers
the same FP16 granules the temp holds, and VFILL/VLD read them unchanged.

:func:`reference_y` is the float64 reference of the same math (exact GEMM, the
epilogue in float64 with the constants as written, the result clipped to the
FP16 range as the store saturates by definition). :func:`measure` reports the
max FP16-ulp error over random data.

Tolerance, in two parts (checked by tests/unit/test_fused_golden.py):

* **vector stage** (golden vs float64 of the epilogue applied to the FP16
  accumulator values the core actually receives), :func:`vector_tolerance`:

  - linear+SiLU: **0.75 FP16 ulp**, the exhaustive bound over every finite
    FP16 input (docs/numerics.md §5 measured 0.7484);
  - gated MLP ``up * silu(gate)``: **1.6 FP16 ulp**. SiLU's E8M15 value is
    not rounded to FP16 before the multiply, so its internal error shows: t =
    gate * NEG_LOG2E is rounded to 16 bits (half an E8M15 ulp of t, 2^-11 at
    |t| in [32, 64)) and NEG_LOG2E itself is 4.9e-6 relative off, so 2^t is
    off by ln2 * (0.5 ulp(t) + |t| * 4.9e-6) relative, at most 4.6e-4 for the
    gates whose product can still be a normal FP16 (|gate| <= ~24); four more
    E8M15 roundings add 4 * 2^-16; at the bottom of an FP16 binade a relative
    error e is e * 2^11 ulps; plus the store's 0.5: 0.5 + 2^11 * 5.2e-4 =
    1.56. Measured: 1.21 over 2,000,000 random finite FP16 (up, gate) pairs,
    0.86 on the kernel data sets.
* **end to end** (golden vs float64 of the exact GEMM): plain FP16 ulps are
  unbounded here, because the accumulator roundings (15 bits, on partial sums
  that may be much larger than the final value) and the FP16 emit are
  amplified by the epilogue's condition number (SiLU's is about 7 at x = -8,
  and infinite at a zero of the result; measured up to 8.6 ulps for
  linear+SiLU and 77 for the gated MLP, seed 1). So the check is a bound per
  element, :func:`end_to_end_bound`: the a priori interval of each emitted
  accumulator (:func:`accumulator_error_bound`: half an S1E7M14 ulp per
  rounded product and running sum, half an FP16 ulp for the emit) pushed
  through the float64 epilogue, plus the vector-stage tolerance. Measured
  error / bound <= 0.94 over seeds 1..8 (:func:`measure`).

:data:`MEASURED` records :func:`measure` at seed 1 (64 x 64 x 64, three data
kinds per epilogue: integer, scaled, mixed).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from models.numerics import (
    FP16, K1, NEG_LOG2E, acc_add, acc_to_fp16, e5m3_decode, e8m15_to_fp16, fp16_to_e8m15, gemm_product,
    silu_e8m15, vadd, vexp2, vinv, vmax, vmin, vmul, vneg, vsub,
)
from models.numerics.formats import ACC, decode
from models.numerics.reference import bit_mismatches, ulp, ulp_error
from models.planner import Acc, Const, Expr, Op, Operand

__all__ = [
    "ANCHOR", "SCALE_ONE", "FP16_MAX", "TOLERANCES", "MEASURED", "accumulate", "emit_fp16", "epilogue_e8m15",
    "golden_y", "golden_words", "reference_acc", "reference_epilogue", "reference_y", "ulp_errors",
    "check_bits", "vector_stage", "vector_tolerance", "vector_stage_failures", "accumulator_error_bound",
    "end_to_end_bound",
    "end_to_end_failures", "random_case", "measure",
]

ANCHOR = 40
SCALE_ONE = 0xA0
FP16_MAX = 65504.0

# Vector-stage tolerances in FP16 ulps (module docstring): golden vs float64 of the epilogue on the FP16
# values the vector core receives.
TOLERANCES = {"linear+silu": 0.75, "gated mlp": 1.6}
# measure(seed=1): max FP16-ulp error of the vector stage, of the whole kernel (plain ulps), and the
# largest ratio of the end-to-end error to its bound.
MEASURED: Mapping[str, Mapping[str, float]] = {
    "linear+silu": {"vector_max_ulp": 0.6102, "end_to_end_max_ulp": 8.584, "bound_ratio": 0.8959},
    "gated mlp": {"vector_max_ulp": 0.8629, "end_to_end_max_ulp": 77.14, "bound_ratio": 0.7776},
}


# ---------------------------------------------------------------- the machine's arithmetic
def _scales(s, rows: int, nk: int) -> np.ndarray:
    return np.full((rows, nk), SCALE_ONE, dtype=np.int64) if s is None else np.asarray(s, dtype=np.int64)


def accumulate(x, w, *, x_scales=None, w_scales=None, anchor: int = ANCHOR) -> np.ndarray:
    """The S1E7M14 accumulator (M, N) of x @ w^T as the cluster's sweep computes it (kb outermost)."""
    x, w = np.asarray(x, dtype=np.int64), np.asarray(w, dtype=np.int64)
    m, k = x.shape
    n = w.shape[0]
    if w.shape[1] != k or k % 32 or m % 4 or n % 4:
        raise ValueError(f"x (M, K) and w (N, K) need K a multiple of 32 and M, N of 4; got {x.shape}, {w.shape}")
    nk = k // 32
    xs, ws = _scales(x_scales, m, nk), _scales(w_scales, n, nk)
    acc = None
    for kb in range(nk):
        a = x[:, 32 * kb:32 * kb + 32].reshape(m // 4, 1, 4, 32)
        b = w[:, 32 * kb:32 * kb + 32].reshape(1, n // 4, 4, 32).swapaxes(-1, -2)  # (1, N/4, 32, 4)
        sa = xs[:, kb].reshape(m // 4, 1, 4)
        sb = ws[:, kb].reshape(1, n // 4, 4)
        prod = gemm_product(a, b, sa, sb, anchor)  # (M/4, N/4, 4, 4), rounded once
        acc = prod if acc is None else acc_add(acc, prod)
    return np.asarray(acc).transpose(0, 2, 1, 3).reshape(m, n).astype(np.uint32)


def emit_fp16(acc) -> np.ndarray:
    """OP_EMIT: S1E7M14 -> FP16 (nearest even, saturating)."""
    return np.asarray(acc_to_fp16(acc), dtype=np.uint16)


def _const(value: float) -> int:
    from models.programs import const_pattern
    return const_pattern(value)


def epilogue_e8m15(expr: Expr, slots: Sequence[np.ndarray]) -> np.ndarray:
    """The epilogue on E8M15 patterns, instruction by instruction as the vector program runs it."""
    shape = np.shape(slots[0])
    memo: dict[Expr, np.ndarray] = {}

    def ev(e: Expr) -> np.ndarray:
        if e in memo:
            return memo[e]
        if isinstance(e, Acc):
            v = np.asarray(slots[e.slot], dtype=np.int64)
        elif isinstance(e, Const):
            v = np.full(shape, _const(e.value), dtype=np.int64)
        elif isinstance(e, Operand):
            raise ValueError(f"epilogue leaf {e!r} is neither an accumulator nor a constant")
        else:
            a = [ev(arg) for arg in e.args]
            fn = {
                "add": lambda: vadd(a[0], a[1]), "sub": lambda: vsub(a[0], a[1]), "mul": lambda: vmul(a[0], a[1]),
                "max": lambda: vmax(a[0], a[1]), "min": lambda: vmin(a[0], a[1]), "exp2": lambda: vexp2(a[0]),
                "inv": lambda: vinv(a[0]), "neg": lambda: vneg(a[0]), "silu": lambda: silu_e8m15(a[0]),
                "sigmoid": lambda: vinv(vadd(vexp2(vmul(a[0], NEG_LOG2E)), K1)),
            }[e.name]
            v = np.asarray(fn(), dtype=np.int64)
        memo[e] = v
        return v

    return np.asarray(ev(expr), dtype=np.uint32)


def _ws(ws) -> list:
    return [ws] if isinstance(ws, np.ndarray) and ws.ndim == 2 else list(ws)


def golden_y(x, ws, epilogue: Expr, *, x_scales=None, w_scales=None, anchor: int = ANCHOR) -> np.ndarray:
    """The bit-exact FP16 output (M, N) of the kernel (fused and unfused alike)."""
    ws = _ws(ws)
    wsc = [None] * len(ws) if w_scales is None else list(w_scales)
    fp16 = [emit_fp16(accumulate(x, w, x_scales=x_scales, w_scales=s, anchor=anchor)) for w, s in zip(ws, wsc)]
    return vector_stage(epilogue, fp16)


def vector_stage(epilogue: Expr, fp16_slots: Sequence[np.ndarray]) -> np.ndarray:
    """What the vector core makes of the FP16 tiles it receives: VLD, the epilogue, the saturating VST."""
    e8 = [np.asarray(fp16_to_e8m15(h), dtype=np.int64) for h in fp16_slots]
    return np.asarray(e8m15_to_fp16(epilogue_e8m15(epilogue, e8)), dtype=np.uint16)


def golden_words(x, ws, epilogue: Expr, gm: int, gn: int, **kw) -> list[int]:
    """The golden output as the tiled DRAM words of models.programs (what the VDRAINs write)."""
    from models.programs import pack_tiled
    return pack_tiled(golden_y(x, ws, epilogue, **kw), gm, gn)


# ---------------------------------------------------------------- float64 reference
def reference_acc(x, w, *, x_scales=None, w_scales=None, anchor: int = ANCHOR) -> np.ndarray:
    """float64 of the exact scaled product: sum over kb of dot_kb * scaleA * scaleB * 2^(40-anchor)."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    m, k = x.shape
    n = w.shape[0]
    nk = k // 32
    xs = e5m3_decode(_scales(x_scales, m, nk))
    wsd = e5m3_decode(_scales(w_scales, n, nk))
    out = np.zeros((m, n))
    for kb in range(nk):
        dot = x[:, 32 * kb:32 * kb + 32] @ w[:, 32 * kb:32 * kb + 32].T
        out += dot * xs[:, kb][:, None] * wsd[:, kb][None, :]
    return out * np.ldexp(1.0, ANCHOR - int(anchor))


def reference_epilogue(expr: Expr, slots: Sequence[np.ndarray]) -> np.ndarray:
    """The epilogue in float64 (constants as written), clipped to the FP16 range (the store saturates)."""
    def ev(e: Expr) -> np.ndarray:
        if isinstance(e, Acc):
            return np.asarray(slots[e.slot], dtype=np.float64)
        if isinstance(e, Const):
            return np.full(np.shape(slots[0]), float(e.value))
        a = [ev(arg) for arg in e.args]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return {
                "add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
                "max": lambda: np.maximum(a[0], a[1]), "min": lambda: np.minimum(a[0], a[1]),
                "exp2": lambda: np.exp2(a[0]), "inv": lambda: 1.0 / a[0], "neg": lambda: -a[0],
                "silu": lambda: a[0] / (1.0 + np.exp(-a[0])), "sigmoid": lambda: 1.0 / (1.0 + np.exp(-a[0])),
            }[e.name]()

    return np.clip(ev(expr), -FP16_MAX, FP16_MAX)


def reference_y(x, ws, epilogue: Expr, *, x_scales=None, w_scales=None, anchor: int = ANCHOR) -> np.ndarray:
    """float64 reference of the whole kernel: exact GEMM, float64 epilogue, FP16 range."""
    ws = _ws(ws)
    wsc = [None] * len(ws) if w_scales is None else list(w_scales)
    accs = [reference_acc(x, w, x_scales=x_scales, w_scales=s, anchor=anchor) for w, s in zip(ws, wsc)]
    return reference_epilogue(epilogue, accs)


# ---------------------------------------------------------------- checkers
def ulp_errors(y_bits, ref) -> np.ndarray:
    """|y - ref| in FP16 ulps at the reference."""
    return ulp_error(np.asarray(y_bits, dtype=np.int64), FP16, ref)


def check_bits(expected, got, what: str = "y") -> list[str]:
    """Bit-exact comparison of two FP16 outputs (arrays or tiled word lists); empty means equal."""
    return bit_mismatches(np.asarray(expected, dtype=object).reshape(-1), np.asarray(got, dtype=object).reshape(-1),
                          what=what)


def vector_tolerance(epilogue: Expr) -> float:
    """The stated vector-stage tolerance (FP16 ulps) of an epilogue: silu/sigmoid of an accumulator, or
    an accumulator times one of those; other epilogues have no stated tolerance (ValueError)."""
    def act(e: Expr) -> bool:
        return isinstance(e, Op) and e.name in ("silu", "sigmoid") and isinstance(e.args[0], Acc)

    if act(epilogue):
        return TOLERANCES["linear+silu"]
    if isinstance(epilogue, Op) and epilogue.name == "mul" and len(epilogue.args) == 2:
        a, b = epilogue.args
        if (isinstance(a, Acc) and act(b)) or (isinstance(b, Acc) and act(a)):
            return TOLERANCES["gated mlp"]
    raise ValueError(f"no stated tolerance for epilogue {epilogue!r}; pass max_ulps / vector_ulps")


def vector_stage_failures(got, epilogue: Expr, fp16_slots: Sequence[np.ndarray],
                          max_ulps: Optional[float] = None) -> list[str]:
    """Elements of `got` further than max_ulps FP16 ulps from float64 of the epilogue on the same inputs."""
    max_ulps = vector_tolerance(epilogue) if max_ulps is None else max_ulps
    ref = reference_epilogue(epilogue, [decode(np.asarray(h, np.int64), FP16) for h in fp16_slots])
    err = ulp_errors(got, ref)
    bad = np.flatnonzero(~(err.reshape(-1) <= max_ulps))
    g = np.asarray(got).reshape(-1)
    return [f"element {i}: got {int(g[i]):#06x} ({decode(int(g[i]), FP16)!r}), float64 {ref.reshape(-1)[i]!r}: "
            f"{err.reshape(-1)[i]:.3f} ulp > {max_ulps}" for i in bad[:10]]


def accumulator_error_bound(x, w, *, x_scales=None, w_scales=None,
                            anchor: int = ANCHOR) -> tuple[np.ndarray, np.ndarray]:
    """(exact accumulator, a priori bound on |FP16 emit - exact|), per element.

    The sweep rounds each block's product (half an S1E7M14 ulp of it) and each
    running sum after the first block (half an ulp of the sum); the emit then
    rounds to FP16 (half an FP16 ulp, subnormal spacing at the bottom).
    """
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    m, k = x.shape
    n = w.shape[0]
    nk = k // 32
    xs = e5m3_decode(_scales(x_scales, m, nk))
    wsd = e5m3_decode(_scales(w_scales, n, nk))
    scale = np.ldexp(1.0, ANCHOR - int(anchor))
    total = np.zeros((m, n))
    bound = np.zeros((m, n))
    grow = 1.0 + 2.0 ** -13  # the rounded partial may sit a little above the exact one
    for kb in range(nk):
        dot = x[:, 32 * kb:32 * kb + 32] @ w[:, 32 * kb:32 * kb + 32].T
        d = dot * xs[:, kb][:, None] * wsd[:, kb][None, :] * scale
        bound += np.where(d != 0, 0.5 * ulp(np.abs(d) * grow, ACC), 0.0)
        total = total + d
        if kb:
            bound += np.where((total != 0) | (bound > 0), 0.5 * ulp((np.abs(total) + bound) * grow, ACC), 0.0)
    bound += 0.5 * ulp(np.abs(total) + bound, FP16)
    return total, bound


def end_to_end_bound(x, ws, epilogue: Expr, *, x_scales=None, w_scales=None, anchor: int = ANCHOR,
                     vector_ulps: Optional[float] = None) -> tuple[np.ndarray, np.ndarray]:
    """(float64 reference, allowed |error|) per element.

    |y - ref| <= |y - f(received)| + |f(received) - f(exact)|: the first term is
    the vector stage (<= vector_ulps FP16 ulps at f(received)), the second the
    propagated accumulator + emit rounding, bounded by moving each accumulator
    alone to the ends of its a priori interval (x1.02 for the cross terms).
    """
    vector_ulps = vector_tolerance(epilogue) if vector_ulps is None else vector_ulps
    ws = _ws(ws)
    wsc = [None] * len(ws) if w_scales is None else list(w_scales)
    pairs = [accumulator_error_bound(x, w, x_scales=x_scales, w_scales=s, anchor=anchor) for w, s in zip(ws, wsc)]
    accs = [a for a, _ in pairs]
    ref = reference_epilogue(epilogue, accs)
    prop = np.zeros_like(ref)
    for r, (a, d) in enumerate(pairs):
        worst = np.zeros_like(ref)
        for sign in (-1.0, 1.0):
            moved = [b if i != r else a + sign * d for i, b in enumerate(accs)]
            worst = np.maximum(worst, np.abs(reference_epilogue(epilogue, moved) - ref))
        prop += worst
    # the vector stage's ulps are those of its own exact result, at most |ref| + prop away from 0
    allowed = 1.02 * prop + vector_ulps * ulp(np.abs(ref) + 1.02 * prop, FP16)
    return ref, allowed


def end_to_end_failures(got, x, ws, epilogue: Expr, **kw) -> list[str]:
    """Elements of `got` (M, N FP16) outside the end-to-end bound of :func:`end_to_end_bound`."""
    ref, allowed = end_to_end_bound(x, ws, epilogue, **kw)
    got_v = decode(np.asarray(got, np.int64), FP16)
    err = np.abs(got_v - ref)
    bad = np.flatnonzero(~(err <= allowed).reshape(-1))
    g = np.asarray(got).reshape(-1)
    return [f"element {i}: got {int(g[i]):#06x} ({got_v.reshape(-1)[i]!r}), float64 {ref.reshape(-1)[i]!r}: "
            f"|err| {err.reshape(-1)[i]:.4g} > allowed {allowed.reshape(-1)[i]:.4g}" for i in bad[:10]]


# ---------------------------------------------------------------- random data and measurement
def random_case(rng: np.random.Generator, m: int, n: int, k: int, accumulators: int = 1, *,
                kind: str = "scaled") -> dict:
    """Random int7 operands and scales: 'integer' (0xA0 scales, anchor 40: exact integer dots),
    'scaled' (scales 2^-6 per side: accumulators of a few units, where SiLU bends), 'mixed' (random
    E5M3 scale per row and K block around 2^-6)."""
    nk = k // 32
    x = rng.integers(-64, 64, size=(m, k))
    ws = [rng.integers(-64, 64, size=(n, k)) for _ in range(accumulators)]
    if kind == "integer":
        xs, wss = None, None
    elif kind == "scaled":
        xs = np.full((m, nk), 0x70)  # 2^-6
        wss = [np.full((n, nk), 0x70) for _ in range(accumulators)]
    elif kind == "mixed":
        xs = rng.integers(0x68, 0x78, size=(m, nk))  # 2^-7 .. 1.875 * 2^-6
        wss = [rng.integers(0x68, 0x78, size=(n, nk)) for _ in range(accumulators)]
    else:
        raise ValueError(f"kind must be 'integer', 'scaled' or 'mixed', got {kind!r}")
    return {"x": x, "ws": ws, "x_scales": xs, "w_scales": wss}


def measure(seed: int = 1, m: int = 64, n: int = 64, k: int = 64) -> dict[str, dict[str, float]]:
    """Max FP16-ulp errors of the golden against float64, for linear+SiLU and the gated MLP."""
    from models.planner import mul, silu

    rng = np.random.default_rng(seed)
    cases = {"linear+silu": (silu(Acc(0)), 1), "gated mlp": (mul(Acc(0), silu(Acc(1))), 2)}
    out: dict[str, dict[str, float]] = {}
    for name, (epi, n_acc) in cases.items():
        worst_vec = worst_e2e = worst_ratio = 0.0
        for kind in ("integer", "scaled", "mixed"):
            c = random_case(rng, m, n, k, n_acc, kind=kind)
            y = golden_y(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            fp16 = [emit_fp16(accumulate(c["x"], w, x_scales=c["x_scales"], w_scales=s))
                    for w, s in zip(c["ws"], c["w_scales"] or [None] * n_acc)]
            ref_v = reference_epilogue(epi, [decode(np.asarray(h, np.int64), FP16) for h in fp16])
            worst_vec = max(worst_vec, float(ulp_errors(y, ref_v).max()))
            ref = reference_y(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            worst_e2e = max(worst_e2e, float(ulp_errors(y, ref).max()))
            _, allowed = end_to_end_bound(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            err = np.abs(decode(np.asarray(y, np.int64), FP16) - ref)
            worst_ratio = max(worst_ratio, float((err / allowed).max()))
        out[name] = {"vector_max_ulp": worst_vec, "end_to_end_max_ulp": worst_e2e, "bound_ratio": worst_ratio}
    return out


if __name__ == "__main__":
    for name, r in measure().items():
        print(f"{name:12s} " + "  ".join(f"{k} {v:.4f}" for k, v in r.items()))
