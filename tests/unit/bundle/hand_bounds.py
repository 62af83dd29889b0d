"""The per-kernel float64 error bounds derived by hand (docs/numerics.md §6 before the running analysis), kept
as a test oracle only: tests/unit/bundle/test_client_bound.py holds the derived bound of models/bundle/bound within a factor
4 of these, bundle by bundle (by the largest bound of each output).

Each function takes the kernel's FP16 inputs (as float64) and returns (the float64 math, the bound before
the safety factor). The MXFP7 element step is ``max(peak/56, 2^-20 15/8)`` with an error of at most 0.516
steps; the accumulator one unit of the 14-bit fraction per conversion and add; FP16 stores half an ulp; E8M15
ops one unit of the 15-bit fraction; the table functions their measured ulps. Products of matrices are
fixed-order float64 sums (:func:`mm`), never BLAS.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from models.bundle.bound.rules import SAFETY, U, h16

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
BLOCK = 32  # MXFP7 K block
SILU_SLOPE = 1.1  # max |d silu / dz|
GELU_SLOPE = 1.13  # max |d gelu_tanh / dz|

Arrays = Mapping[str, np.ndarray]


def mm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ y in float64, summed along the inner axis in a fixed order (no BLAS)."""
    return np.add.reduce(x[:, :, None] * y[None, :, :], axis=1)


def fp16_err(value: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Error after storing a value known within `err` as FP16."""
    return err + h16(np.abs(value) + err)


def emit_err(value: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Error after the cluster's FP16 emit (C.7.5) of a value known within `err`: nearest even, but flushed
    to zero below 2^-14 (no FP16 subnormals), an error of up to 2^-14 there."""
    tiny = np.abs(value) - err < 2.0 ** -14
    return err + np.where(tiny, 2.0 ** -14, h16(np.abs(value) + err))


def ue(x: np.ndarray) -> np.ndarray:
    """One E8M15 ulp at |x|."""
    ax = np.abs(x)
    return np.where(ax > 0, 2.0 ** (np.floor(np.log2(np.where(ax > 0, ax, 1.0))) - 15), 2.0 ** -140)


def tree_rel(n: int) -> float:
    """Relative error (of the sum of magnitudes) of a tree reduction over n lanes."""
    return (int(np.ceil(np.log2(max(n, 2)))) + 2) * U


def mxfp7_delta(x: np.ndarray) -> np.ndarray:
    """Per element of (rows, K): the largest quantisation error of its 32-long K block (M.3)."""
    rows, k = x.shape
    if k % BLOCK:
        raise ValueError(f"K = {k} is not a multiple of the MXFP7 block of {BLOCK}")
    peak = np.abs(x).reshape(rows, k // BLOCK, BLOCK).max(axis=2)
    step = np.maximum(peak / 56.0, 2.0 ** -20 * 15 / 8)
    return np.repeat(0.516 * step, BLOCK, axis=1)


def gemm_err(a: np.ndarray, b: np.ndarray, da: np.ndarray | None = None,
             db: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(mm(a, b.T), its error bound once emitted as FP16) for a (M, K) and b (N, K) quantised by the memory
    agent; `da`/`db` are errors the operands already carry (an FP16 temporary computed by the machine)."""
    da = np.zeros_like(a) if da is None else da
    db = np.zeros_like(b) if db is None else db
    ma, mb = np.abs(a) + da, np.abs(b) + db
    qa, qb = mxfp7_delta(ma), mxfp7_delta(mb)
    eq = mm(ma, qb.T) + mm(qa, mb.T) + mm(qa, qb.T) + mm(da, np.abs(b).T) + mm(np.abs(a), db.T)
    nb = a.shape[1] // BLOCK
    acc = (nb + 1) * 2.0 ** -14 * (mm(ma, mb.T) + eq)
    z = mm(a, b.T)
    return z, emit_err(z, eq + acc)


def silu(z: np.ndarray) -> np.ndarray:
    return z / (1.0 + np.exp(-z))


def silu_err(z: np.ndarray, dz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """silu(z) and its error on the vector core (mul by -log2e, VEXP2, +1, VINV, mul), z known within dz."""
    f = silu(z)
    arg = np.abs(z) * LOG2E
    rel = LN2 * 3 * U * arg + 0.71 * U + 4 * U
    return f, SILU_SLOPE * dz + rel * np.abs(f)


def gelu_err(z: np.ndarray, dz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gelu (tanh form) as z / (1 + 2^(c (z + k z^3))) on the vector core (the compiled sequence), z within dz."""
    k, c = 0.044715, -2.0 * np.sqrt(2.0 / np.pi) * LOG2E
    inner = z + k * z ** 3
    f = z / (1.0 + 2.0 ** (c * inner))
    darg = abs(c) * (5 * U * np.abs(k * z ** 3) + 2 * U * np.abs(inner))
    rel = LN2 * darg + 0.71 * U + 4 * U
    return f, GELU_SLOPE * dz + rel * np.abs(f)


def _linear(act: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None):
    def bound(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
        z, dz = gemm_err(i["x"], i["w"])
        if act is None:
            return z, dz
        f, df = act(z, dz)
        return f, df + h16(np.abs(f) + df)
    return bound


def _relu(z: np.ndarray, dz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.maximum(z, 0.0), dz


def _matmul(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    return gemm_err(i["a"], i["b"])


def _linear_bias(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    z, dz = gemm_err(i["x"], i["w"])
    y = z + i["b"][None, :]
    return y, fp16_err(y, dz + U * (np.abs(z) + np.abs(i["b"][None, :]) + dz))


def _product(u: np.ndarray, du: np.ndarray, v: np.ndarray, dv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return u * v, np.abs(u) * dv + np.abs(v) * du + du * dv + U * np.abs(u * v)


def _linear_gate_add(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    z, dz = gemm_err(i["x"], i["w"])
    p, dp = _product(z, dz, i["g"], np.zeros_like(i["g"]))
    y = p + i["r"]
    return y, fp16_err(y, dp + U * (np.abs(p) + np.abs(i["r"])))


def _gated_silu(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    g, dg = gemm_err(i["x"], i["wg"])
    v, dv = gemm_err(i["x"], i["wu"])
    s, ds = silu_err(g, dg)
    y, dy = _product(s, ds, v, dv)
    return y, fp16_err(y, dy)


def _mlp(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    z, dz = gemm_err(i["x"], i["up"])
    h, dh = silu_err(z, dz)
    dh = fp16_err(h, dh)  # h goes back through DRAM as FP16
    return gemm_err(h, i["down"], da=dh)


def _log2(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    y = np.log2(i["x"])
    return y, fp16_err(y, 19.2 * ue(y))


def _where(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    y = np.where(i["c"] != 0, i["a"], i["b"])
    return y, np.zeros_like(y)  # a selection of FP16 inputs: exact


def _select_lt(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    y = np.where(i["x"] < i["b"], i["b"], i["x"])
    return y, np.zeros_like(y)


def _softmax_rows(s: np.ndarray, ds: np.ndarray, base2: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row softmax of s (natural or base-2 logits known within ds): (p unnormalised, sum, relative error of
    each p / sum)."""
    scale = 1.0 if base2 else LOG2E
    m = s.max(axis=1, keepdims=True)
    t = (s - m) * scale
    dt = (ds + ds.max(axis=1, keepdims=True)) * scale + 3 * U * (np.abs(s) + np.abs(m)) * scale
    e = 2.0 ** t
    rel_e = LN2 * dt + 0.71 * U
    total = e.sum(axis=1, keepdims=True)
    rel_sum = (e * rel_e).sum(axis=1, keepdims=True) / total + tree_rel(s.shape[1])
    return e, total, rel_e + rel_sum + 0.56 * U + U  # VINV, then the multiply


def _softmax(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    x = i["x"]
    e, total, rel = _softmax_rows(x, np.zeros_like(x), base2=False)
    y = e / total
    return y, fp16_err(y, rel * y)


def _rmsnorm(i: Arrays, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    x, w = i["x"], i["w"]
    n = x.shape[1]
    ms = (x ** 2).mean(axis=1, keepdims=True)
    rel_ms = U + tree_rel(n) + U + U * ms / (ms + eps)  # squares, the sum, 1/n, + eps
    r = 1.0 / np.sqrt(ms + eps)
    rel_r = 0.5 * rel_ms + 0.55 * U
    y = x * r * w
    return y, fp16_err(y, (rel_r + 2 * U) * np.abs(y))


def _group_norm(i: Arrays, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
    x, w, b = i["x"], i["w"], i["b"]
    n = x.shape[1]
    mean = x.mean(axis=1, keepdims=True)
    dmean = (tree_rel(n) + U) * np.abs(x).mean(axis=1, keepdims=True)
    d = x - mean
    dd = dmean + U * np.abs(d)
    var = (d ** 2).mean(axis=1, keepdims=True)
    dvar = (2 * np.abs(d) * dd).mean(axis=1, keepdims=True) + (U + tree_rel(n) + U) * var
    r = 1.0 / np.sqrt(var + eps)
    rel_r = 0.5 * (dvar + U * (var + eps)) / (var + eps) + 0.55 * U
    core = d * r
    dcore = dd * r + np.abs(core) * (rel_r + U)
    y = core * w + b
    return y, fp16_err(y, np.abs(w) * dcore + U * (2 * np.abs(core * w) + np.abs(b)))


def _flash_attention(i: Arrays) -> tuple[np.ndarray, np.ndarray]:
    """o = softmax2(q k^T) v^T (q pre-scaled into base 2, v given as (Dv, Lkv)): S by the clusters as FP16,
    P = 2^(S - max) on the vector cores stored as FP16, P v^T by the clusters, divided by the row sum."""
    s, ds = gemm_err(i["q"], i["k"])
    e, total, rel = _softmax_rows(s, ds, base2=True)
    rel_e = rel - (0.56 * U + U)  # the divide comes after the second GEMM here
    de = fp16_err(e, rel_e * e)
    o_un, do_un = gemm_err(e, i["v"], da=de)
    rel_total = (de.sum(axis=1, keepdims=True) / total) + tree_rel(s.shape[1])
    o = o_un / total
    do = (do_un + np.abs(o_un) * rel_total) / total + (0.56 * U + U) * np.abs(o)
    return o, fp16_err(o, do)


KERNELS: Mapping[str, Callable[[Arrays], tuple[np.ndarray, np.ndarray]]] = {
    "matmul": _matmul,
    "linear_relu": _linear(_relu),
    "linear_silu": _linear(silu_err),
    "linear_gelu": _linear(gelu_err),
    "linear_bias": _linear_bias,
    "linear_gate_add": _linear_gate_add,
    "gated_silu": _gated_silu,
    "mlp": _mlp,
    "log2": _log2,
    "where": _where,
    "select_lt": _select_lt,
    "softmax": _softmax,
    "rmsnorm": _rmsnorm,
    "group_norm": _group_norm,
    "flash_attention": _flash_attention,
}


def comparison_rows() -> list[tuple[str, float, float, float, float]]:
    """Per bundle, judged on upstream's RTL output (select_lt: its models'): (name, worst err/bound derived,
    worst err/bound by hand, largest derived bound, largest hand bound), SAFETY applied to both."""
    from models.bundle.reader import Bundle, bundle_names
    from models.bundle.lane_bound import bound_check, derived_bound, judge_port, output_values
    from models.bundle.judge import reference

    rows = []
    for name in bundle_names():
        b = Bundle(name)
        image = (b.expected_models if reference(b) == "models" else b.expected_rtl)["dram_final"]
        inputs = {k: b.dram_in[k].astype(np.float64) for k in b.meta["inputs"]}
        hand = SAFETY * KERNELS[b.meta["kernel"]["reference"]](inputs)[1]
        hand_worst = 0.0
        for port in b.outputs:
            ref = b.expected_models[f"{port}__ref"].astype(np.float64)
            y, valid = output_values(b, image, port)
            hand_worst = max(hand_worst, judge_port(port, y, valid, ref, np.broadcast_to(hand, ref.shape)).worst)
        rows.append((name, max(r.worst for r in bound_check(b, image)[0]), hand_worst,
                     max(float(v.max()) for v in derived_bound(b).bounds.values()), float(np.max(hand))))
    return rows


def main() -> None:
    """Print the comparison table of docs/numerics.md ("The float64 error bound") and the median."""
    rows = comparison_rows()
    print("| bundle | worst err/bound (derived) | worst err/bound (by hand) | max derived / max by hand |")
    print("|---|---|---|---|")
    for name, worst, hand_worst, dmax, hmax in rows:
        ratio = "— (both 0: exact selections)" if hmax == 0 else f"{dmax / hmax:.3g} ({dmax:.3g} / {hmax:.3g})"
        print(f"| {name} | {worst:.3g} | {hand_worst:.3g} | {ratio} |")
    print(f"median worst err/bound (derived): {float(np.median([r[1] for r in rows])):.3f}")


if __name__ == "__main__":
    main()
