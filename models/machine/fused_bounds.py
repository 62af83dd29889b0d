"""The fused kernel against float64: its references, the tolerances its golden output is held to, their measurement.

The golden output itself, bit for bit as the machine computes it, is
models.machine.fused_golden; this module judges it.

:func:`reference_y` is the float64 reference of the same math (exact GEMM, the
epilogue in float64 with the constants as written, the result clipped to the
FP16 range as the store saturates by definition). VEXP2 in it (alone or inside
SiLU / sigmoid) is 2^t **as specified**, upstream defect D1 included
(:func:`exp2_specified`: for 128 <= |t| < 256 the argument is taken modulo 256,
units.md V.6.4, reproduced by the models and the RTL; the compiled SiLU meets
it for |x| > ~88.7, where silu(x) comes out ~0 for x > 0 and ~x for x < 0).
The references judge the model's roundings against the function the core is
specified to compute; D1's departure from 2^t is a defined behaviour, and
:func:`in_d1` / :func:`d1_elements` say which elements meet it, so a report
can count them apart (``d1=False`` gives plain 2^t). :func:`measure` reports
the max FP16-ulp errors over random data.

Tolerance, in two parts (checked by tests/unit/machine/test_fused_bounds.py):

* **vector stage** (golden vs float64 of the epilogue applied to the FP16
  accumulator values the core actually receives), :func:`vector_tolerance`,
  for an element none of whose VEXP2 arguments is in D1's range:

  - linear+SiLU: **0.75 FP16 ulp**, the exhaustive bound over every finite
    FP16 input outside D1's range (``python -m models.numerics.accuracy``,
    "SiLU no D1");
  - gated MLP ``up * silu(gate)``: **1.65 FP16 ulp**. SiLU's E8M15 value is
    not rounded to FP16 before the multiply, so its internal error shows: t =
    gate * NEG_LOG2E is rounded to 16 bits (half an E8M15 ulp of t, 2^-11 at
    |t| in [32, 64)) and NEG_LOG2E itself is ~4.9e-6 relative off, so 2^t is
    off by ln2 * (0.5 ulp(t) + |t| * 4.9e-6) relative, at most ~4.6e-4 for
    the gates whose product can still be a normal FP16 (|gate| <= ~24); the
    other five operations add their measured maxima (VEXP2 and VINV from
    the exhaustive sweeps of models.numerics.accuracy, half an E8M15 ulp for
    VADD and each VMUL); at the bottom of an FP16 binade a relative error e is
    e * 2^11 ulps; plus the store's 0.5: :func:`derived_tolerance` computes
    it from those constants (~1.60);
  - **D1's range** (any VEXP2 argument with 128 <= |t| < 256), either
    epilogue: **5.25 FP16 ulp**. The same chain with |t| up to 256, whose
    16-bit rounding is now 2^-9 and whose constant error 256 * 4.9e-6:
    2^(t -+ 256) is off by up to ~2.2e-3 relative (:func:`derived_tolerance`
    ("d1"), ~5.21). The end-to-end check gives an element this tolerance when
    any end of its accumulator interval meets D1.

  :data:`MEASURED` pins what :func:`measure` sees, inside and outside D1's
  range; tests/unit/machine/test_fused_bounds.py also measures the gated stage over
  random finite FP16 (up, gate) pairs (:func:`gated_pairs`).
* **end to end** (golden vs float64 of the exact GEMM): plain FP16 ulps are
  unbounded here, because the accumulator roundings (15 bits, on partial sums
  that may be much larger than the final value) and the FP16 emit are
  amplified by the epilogue's condition number (SiLU's is about 7 at x = -8,
  and infinite at a zero of the result; :data:`MEASURED` ``end_to_end_max_ulp``).
  So the check is a bound per element, :func:`end_to_end_bound`: the a priori
  interval of each emitted accumulator (:func:`accumulator_error_bound`: half
  an S1E7M14 ulp per rounded product and running sum, half an FP16 ulp for the
  emit) pushed through the float64 epilogue, plus the vector-stage tolerance
  (``bound_ratio`` < 1 in :data:`MEASURED`).

:data:`MEASURED` records :func:`measure` at seed 1 (64 x 64 x 64, three data
kinds per epilogue: integer, scaled, mixed).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from models.numerics import FP16, NEG_LOG2E, e5m3_decode
from models.numerics.formats import ACC, decode
from models.numerics.reference import ulp, ulp_error
from models.machine.fused_golden import (
    ANCHOR, FP16_MAX, _scales, _ws, accumulate, emit_fp16, golden_y, random_case, vector_stage,
)
from models.machine.planner import Acc, Const, Expr, Op

__all__ = [
    "TOLERANCES", "MEASURED", "reference_acc", "reference_epilogue", "reference_y", "ulp_errors",
    "vector_tolerance", "vector_stage_failures", "accumulator_error_bound", "exp2_specified", "exp2_arguments",
    "in_d1", "d1_elements", "D1_RANGE", "LOG2E", "derived_tolerance", "gated_pairs", "end_to_end_bound",
    "end_to_end_failures", "measure",
]

FP16_MIN_NORMAL = 2.0 ** -14  # the emit flushes below it (units.md C.7.5)
LOG2E = float(np.log2(np.e))
D1_RANGE = (128.0, 256.0)  # |VEXP2 argument| in [128, 256): upstream defect D1 (units.md V.6.4)

# Vector-stage tolerances in FP16 ulps (module docstring): golden vs float64 of the epilogue on the FP16
# values the vector core receives.
TOLERANCES = {"linear+silu": 0.75, "gated mlp": 1.65, "d1": 5.25}
# measure(seed=1): max FP16-ulp error of the vector stage, of the whole kernel (plain ulps), and the
# largest ratio of the end-to-end error to its bound.
MEASURED: Mapping[str, Mapping[str, float]] = {
    "linear+silu": {"vector_max_ulp": 0.6102, "vector_max_ulp_d1": 1.5161, "d1_elements": 25.0,
                    "end_to_end_max_ulp": 8.584, "bound_ratio": 0.8959},
    "gated mlp": {"vector_max_ulp": 0.7036, "vector_max_ulp_d1": 2.4794, "d1_elements": 31.0,
                  "end_to_end_max_ulp": 77.14, "bound_ratio": 0.7772},
}


# ---------------------------------------------------------------- float64 reference
def _block_products(x, w, x_scales, w_scales) -> list[np.ndarray]:
    """float64 of each K block's exact product dot_kb * scaleA * scaleB (M, N), in kb order, before the
    anchor's 2^(40-anchor): the one decomposition the reference and the error bound both walk, so the
    bound's exact accumulator is the reference's to the bit."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    m, k = x.shape
    n = w.shape[0]
    nk = k // 32
    xs = e5m3_decode(_scales(x_scales, m, nk))
    wsd = e5m3_decode(_scales(w_scales, n, nk))
    return [(x[:, 32 * kb:32 * kb + 32] @ w[:, 32 * kb:32 * kb + 32].T) * xs[:, kb][:, None] * wsd[:, kb][None, :]
            for kb in range(nk)]


def reference_acc(x, w, *, x_scales=None, w_scales=None, anchor: int = ANCHOR) -> np.ndarray:
    """float64 of the exact scaled product: sum over kb of dot_kb * scaleA * scaleB * 2^(40-anchor)."""
    out = np.zeros((np.shape(x)[0], np.shape(w)[0]))
    for d in _block_products(x, w, x_scales, w_scales):
        out += d
    return out * np.ldexp(1.0, ANCHOR - int(anchor))


def exp2_specified(t) -> np.ndarray:
    """2^t in float64 as VEXP2 is specified: the argument is taken modulo 256 in upstream defect D1's range
    128 <= |t| < 256 (2^(t - 256) for t > 0, 2^(t + 256) for t < 0; units.md V.6.4, reproduced by every model
    and the RTL), 2^t elsewhere. With ``d1=False`` the references use plain 2^t."""
    t = np.asarray(t, dtype=np.float64)
    wrap = (np.abs(t) >= D1_RANGE[0]) & (np.abs(t) < D1_RANGE[1])
    with np.errstate(over="ignore"):
        return np.exp2(np.where(wrap, t - D1_RANGE[1] * np.sign(t), t))


def exp2_arguments(expr: Expr, slots: Sequence[np.ndarray]) -> list[np.ndarray]:
    """float64 of every VEXP2 argument the epilogue evaluates (SiLU / sigmoid: -x * log2(e)), per element."""
    out: list[np.ndarray] = []

    def walk(e: Expr) -> None:
        if isinstance(e, Op):
            for a in e.args:
                walk(a)
            if e.name == "exp2":
                out.append(reference_epilogue(e.args[0], slots, clip=False))
            elif e.name in ("silu", "sigmoid"):
                out.append(-reference_epilogue(e.args[0], slots, clip=False) * LOG2E)

    walk(expr)
    return out


def in_d1(expr: Expr, *slot_sets: Sequence[np.ndarray]) -> np.ndarray:
    """Per output element: whether any VEXP2 the epilogue evaluates, on any of the slot sets given, has its
    argument in D1's range 128 <= |t| < 256."""
    hit = np.zeros(np.shape(slot_sets[0][0]), dtype=bool)
    for slots in slot_sets:
        for t in exp2_arguments(expr, slots):
            hit |= (np.abs(t) >= D1_RANGE[0]) & (np.abs(t) < D1_RANGE[1])
    return hit


def d1_elements(expr: Expr, slots: Sequence[np.ndarray]) -> int:
    """How many output elements evaluate a VEXP2 whose argument lies in D1's range 128 <= |t| < 256."""
    return int(in_d1(expr, slots).sum())


def reference_epilogue(expr: Expr, slots: Sequence[np.ndarray], *, d1: bool = True, clip: bool = True) -> np.ndarray:
    """The epilogue in float64 (constants as written), clipped to the FP16 range (the store saturates).

    VEXP2 (alone, or inside SiLU / sigmoid) is 2^t as specified, D1 included (:func:`exp2_specified`): the
    references judge the model's roundings against the function the core is specified to compute; D1 is
    a defined departure from 2^t, counted apart by :func:`d1_elements`. ``d1=False`` gives plain 2^t.
    """
    exp2 = exp2_specified if d1 else np.exp2

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
                "exp2": lambda: exp2(a[0]), "inv": lambda: 1.0 / a[0], "neg": lambda: -a[0],
                "silu": lambda: a[0] / (1.0 + exp2(-a[0] * LOG2E)),
                "sigmoid": lambda: 1.0 / (1.0 + exp2(-a[0] * LOG2E)),
            }[e.name]()

    out = ev(expr)
    return np.clip(out, -FP16_MAX, FP16_MAX) if clip else out


def reference_y(x, ws, epilogue: Expr, *, x_scales=None, w_scales=None, anchor: int = ANCHOR,
                d1: bool = True) -> np.ndarray:
    """float64 reference of the whole kernel: exact GEMM, float64 epilogue (VEXP2 as specified unless
    ``d1=False``), FP16 range."""
    ws = _ws(ws)
    wsc = [None] * len(ws) if w_scales is None else list(w_scales)
    accs = [reference_acc(x, w, x_scales=x_scales, w_scales=s, anchor=anchor) for w, s in zip(ws, wsc)]
    return reference_epilogue(epilogue, accs, d1=d1)


# ---------------------------------------------------------------- checkers
def ulp_errors(y_bits, ref) -> np.ndarray:
    """|y - ref| in FP16 ulps at the reference."""
    return ulp_error(np.asarray(y_bits, dtype=np.int64), FP16, ref)


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
    vals = [decode(np.asarray(h, np.int64), FP16) for h in fp16_slots]
    ref = reference_epilogue(epilogue, vals)
    allowed = np.where(in_d1(epilogue, vals), max(max_ulps, TOLERANCES["d1"]), max_ulps).reshape(-1)
    err = ulp_errors(got, ref).reshape(-1)
    bad = np.flatnonzero(~(err <= allowed))
    g = np.asarray(got).reshape(-1)
    return [f"element {i}: got {int(g[i]):#06x} ({decode(int(g[i]), FP16)!r}), float64 {ref.reshape(-1)[i]!r}: "
            f"{err[i]:.3f} ulp > {allowed[i]}" for i in bad[:10]]


def accumulator_error_bound(x, w, *, x_scales=None, w_scales=None,
                            anchor: int = ANCHOR) -> tuple[np.ndarray, np.ndarray]:
    """(exact accumulator, a priori bound on |FP16 emit - exact|), per element.

    The sweep rounds each block's product (half an S1E7M14 ulp of it: C.7.3 rounds
    to nearest even, and no exponent wraps for 17 <= anchor <= 56) and each
    running sum after the first block (half an ulp of the sum, plus 2^-9 ulp for
    quirk A2's plain sticky, which may round a value just under a midpoint up);
    the emit then rounds to FP16 (half an FP16 ulp) and flushes a value under
    2^-14 to zero (C.7.5: no FP16 subnormals), an error of at most 2^-14.
    """
    scale = np.ldexp(1.0, ANCHOR - int(anchor))
    total = np.zeros((np.shape(x)[0], np.shape(w)[0]))
    bound = np.zeros_like(total)
    grow = 1.0 + 2.0 ** -13  # the rounded partial may sit a little above the exact one
    for kb, block in enumerate(_block_products(x, w, x_scales, w_scales)):
        d = block * scale
        bound += np.where(d != 0, 0.5 * ulp(np.abs(d) * grow, ACC), 0.0)
        total = total + d
        if kb:
            bound += np.where((total != 0) | (bound > 0),
                              (0.5 + 2.0 ** -9) * ulp((np.abs(total) + bound) * grow, ACC), 0.0)
    bound += np.where(np.abs(total) + bound < FP16_MIN_NORMAL, FP16_MIN_NORMAL, 0.5 * ulp(np.abs(total) + bound, FP16))
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
    ends = [accs]
    for r, (a, d) in enumerate(pairs):
        worst = np.zeros_like(ref)
        for sign in (-1.0, 1.0):
            moved = [b if i != r else a + sign * d for i, b in enumerate(accs)]
            ends.append(moved)
            worst = np.maximum(worst, np.abs(reference_epilogue(epilogue, moved) - ref))
        prop += worst
    # the vector stage's ulps are those of its own exact result, at most |ref| + prop away from 0; an
    # element whose received value may put a VEXP2 argument in D1's range gets D1's tolerance
    ulps = np.where(in_d1(epilogue, *ends), max(vector_ulps, TOLERANCES["d1"]), vector_ulps)
    allowed = 1.02 * prop + ulps * ulp(np.abs(ref) + 1.02 * prop, FP16)
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


# ---------------------------------------------------------------- derived tolerances and measurement
def derived_tolerance(name: str, op_ulps: Mapping[str, float]) -> float:
    """The a priori vector-stage bound (FP16 ulps) of the module docstring, for 'gated mlp' (outside D1's
    range, |gate| <= 24) or 'd1' (inside it, either epilogue). op_ulps: the max E8M15-ulp errors of VEXP2
    and VINV over every FP16 input (models.numerics.accuracy.measure()['VEXP2' / 'VINV']['max'])."""
    from models.numerics import E8M15

    delta_c = abs(float(decode(NEG_LOG2E, E8M15)) + LOG2E) / LOG2E  # NEG_LOG2E's relative error
    if name == "gated mlp":
        t_max = binade = 24 * LOG2E
    elif name == "d1":
        t_max, binade = D1_RANGE[1], D1_RANGE[0]  # |t| < 256: every t of the range is in the binade [128, 256)
    else:
        raise ValueError(f"no derived tolerance for {name!r}: 'gated mlp' or 'd1' (linear+SiLU's is measured "
                         f"exhaustively)")
    ulp_t = 2.0 ** (np.floor(np.log2(binade)) - 15)  # an E8M15 ulp of t (15 fraction bits)
    exp_err = np.log(2.0) * (0.5 * ulp_t + t_max * delta_c)
    half = 2.0 ** -16  # half an E8M15 ulp, relative, at the bottom of a binade
    ops = (op_ulps["VEXP2"] + op_ulps["VINV"]) * 2.0 ** -15 + 3 * half  # + VADD K1, VMUL x, VMUL up
    return 0.5 + 2.0 ** 11 * (exp_err + ops)


def gated_pairs(seed: int = 7, n: int = 200_000) -> dict[str, float]:
    """The gated vector stage over `n` random finite FP16 (up, gate) pairs whose float64 result is inside
    the FP16 range: max ulps outside and inside D1's range, and how many pairs are inside."""
    from models.machine.planner import mul, silu

    rng = np.random.default_rng(seed)
    h = rng.integers(0, 1 << 16, size=(2, n))
    h = h[:, (((h >> 10) & 0x1F) != 0x1F).all(0)]
    epi = mul(Acc(0), silu(Acc(1)))
    vals = [decode(h[0], FP16), decode(h[1], FP16)]
    y = vector_stage(epi, [h[0], h[1]])
    ref = reference_epilogue(epi, vals)
    keep = np.abs(ref) < FP16_MAX  # the store saturates beyond, by definition
    err = ulp_errors(y, ref)
    hit = in_d1(epi, vals)
    return {"max_ulp": float(err[keep & ~hit].max()), "max_ulp_d1": float(err[keep & hit].max(initial=0.0)),
            "d1_pairs": float((keep & hit).sum())}


def measure(seed: int = 1, m: int = 64, n: int = 64, k: int = 64) -> dict[str, dict[str, float]]:
    """Max FP16-ulp errors of the golden against float64, for linear+SiLU and the gated MLP: of the vector
    stage outside and inside D1's range (and how many elements are inside), of the whole kernel, and the
    largest ratio of the end-to-end error to its bound."""
    from models.machine.planner import mul, silu

    rng = np.random.default_rng(seed)
    cases = {"linear+silu": (silu(Acc(0)), 1), "gated mlp": (mul(Acc(0), silu(Acc(1))), 2)}
    out: dict[str, dict[str, float]] = {}
    for name, (epi, n_acc) in cases.items():
        worst_vec = worst_d1 = worst_e2e = worst_ratio = 0.0
        d1 = 0
        for kind in ("integer", "scaled", "mixed"):
            c = random_case(rng, m, n, k, n_acc, kind=kind)
            y = golden_y(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            fp16 = [emit_fp16(accumulate(c["x"], w, x_scales=c["x_scales"], w_scales=s))
                    for w, s in zip(c["ws"], c["w_scales"] or [None] * n_acc)]
            vals = [decode(np.asarray(h, np.int64), FP16) for h in fp16]
            err_v = ulp_errors(y, reference_epilogue(epi, vals))
            hit = in_d1(epi, vals)
            d1 += int(hit.sum())
            worst_vec = max(worst_vec, float(err_v[~hit].max(initial=0.0)))
            worst_d1 = max(worst_d1, float(err_v[hit].max(initial=0.0)))
            ref = reference_y(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            worst_e2e = max(worst_e2e, float(ulp_errors(y, ref).max()))
            _, allowed = end_to_end_bound(c["x"], c["ws"], epi, x_scales=c["x_scales"], w_scales=c["w_scales"])
            err = np.abs(decode(np.asarray(y, np.int64), FP16) - ref)
            worst_ratio = max(worst_ratio, float((err / allowed).max()))
        out[name] = {"vector_max_ulp": worst_vec, "vector_max_ulp_d1": worst_d1, "d1_elements": float(d1),
                     "end_to_end_max_ulp": worst_e2e, "bound_ratio": worst_ratio}
    return out


if __name__ == "__main__":
    for name, r in measure().items():
        print(f"{name:12s} " + "  ".join(f"{k} {v:.4f}" for k, v in r.items()))
