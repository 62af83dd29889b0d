"""How far the tiled fp32 FlashAttention may land from float64: a bound derived per output element.

Why: the kernel's O is checked bit for bit against `models/ahbm/kernel.py`, which
says the RTL does what the model does; this bound says the model computes
softmax(Q K^T / sqrt(d) + mask) V. It was once "2x the error of untiled fp32
attention", with the untiled result computed by numpy's fp32 matmul: BLAS picks
its summation order by CPU and thread count, so that verdict depended on the
machine. This bound is derived from the kernel's operations alone (the order of
`attention.attn_tile`, `merge` and `finalize_f32`), evaluated on the float64
reference, and every sum in it has a fixed order.

Derivation (first order; u = 2^-24, gamma(n) = n u / (1 - n u); docs/ahbm.md,
"The FlashAttention bound"). Row i, key t, exact values from the bf16 inputs:
S_t = q.k_t / sqrt(d) + mask_t, m = max S, w_t = exp(S_t - m), l = sum w,
O_j = sum_t w_t v_tj / l. The kernel computes every w_t with a relative error

    delta_t = u R_t / sqrt(d)            the fp32 dot: d exact bf16 products added in order, each add
                                         rounding its partial sum (running error bound: R_t = the sum
                                         of |partial sum| after every add but the first, from +0)
            + 3u |q.k_t| / sqrt(d)       fp32(1/sqrt(d)), the scaling multiply, the mask add
            + 2u (m - S_t)               S - m_sub rounded, and the rescale exponents' roundings, which
                                         sum to at most m - S_t because the running max only rises
            + (steps + 1) E              exp_f32 of P and of every rescale factor on its path
                                         (E = 1.5 * 2^-23, the measured 1.21-ulp maximum rounded up)

and a common error of all w cancels in O = N / l, so O moves by sum_t w_t delta_t |v_tj - O_j| / l.
Each product P_t v_tj and each sum then rounds: at most `tile + 2 steps` roundings on any
term's path (the product, the tile's ordered sum, one multiply and one add per rescale or
merge), gamma(tile + 2 steps) of sum_t w_t |v_tj| / l for the numerator and of |O_j| for
l (every term of l is positive), and the final division u |O_j|. Underflow (exp_f32
flushes below 2^-126, subnormal products) adds at most `ABS_TINY` per key of
max|v| + |O|. The sum of the terms is multiplied by SAFETY for the second-order
terms the first-order propagation drops.
"""

from __future__ import annotations

import math

import numpy as np

from .numerics import bf16_to_f32

U32 = 2.0 ** -24  # fp32 unit roundoff
EXP_REL = 1.5 * 2.0 ** -23  # exp_f32's relative error (tests/unit/ahbm/test_ahbm_numerics.py: 1.21 ulp measured)
ABS_TINY = 2.0 ** -124  # per key: a flushed exp_f32 (< 2^-126) and subnormal roundings, with room
SAFETY = 1.25  # second-order terms
BF16_HALF_ULP = 2.0 ** -8  # relative: a bf16 store rounds to 8 significant bits


def gamma(n: int) -> float:
    """Higham's gamma_n: the relative error bound of n fp32 roundings in a row."""
    return n * U32 / (1 - n * U32)


def accumulation_steps(seq: int, tile: int, pes: int = 1) -> int:
    """The most rescale-or-merge steps any key's partial passes through: the tiles after its own
    on one PE (at most ceil(seq/tile), plus one ragged tile per PE when the keys are split over
    `pes`) and the merges of the reduction (at most pes - 1)."""
    return math.ceil(seq / tile) + 2 * pes


def matmul_f64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = a @ b in float64 with the contraction index ascending (elementwise ufuncs only, so the
    result is the same on every CPU, unlike BLAS)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        acc += np.multiply.outer(a[:, k], b[k, :])
    return acc


def dot_running_bound(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a @ b.T, sum over k >= 1 of |a[:, :k+1] . b[:, :k+1]|) in float64, k ascending: the exact
    dot and the sum of the magnitudes of its ordered partial sums, whose u-multiple bounds the
    rounding of an fp32 dot of exact products summed in that order (attention.dot_rows_seq)."""
    acc = np.zeros((a.shape[0], b.shape[0]))
    run = np.zeros_like(acc)
    for k in range(a.shape[1]):
        acc += np.multiply.outer(a[:, k], b[:, k])
        if k:
            run += np.abs(acc)
    return acc, run


def attention_bound(q, k, v, mask, d: int, tile: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(reference O in float64, |O_kernel - O| bound per element) for bf16 patterns q [R, d],
    k and v [T, d] and an additive mask [R, T] (0 / -inf) or None. Fully masked rows: O = 0,
    bound 0 (the kernel gives exactly 0)."""
    qf = bf16_to_f32(q).astype(np.float64)
    kf = bf16_to_f32(k).astype(np.float64)
    vf = bf16_to_f32(v).astype(np.float64)
    scale = 1.0 / math.sqrt(d)
    dot, partials = dot_running_bound(qf, kf)
    s = dot * scale
    if mask is not None:
        s = s + np.asarray(mask, dtype=np.float64)
    m = s.max(axis=1, keepdims=True) if s.shape[1] else np.full((s.shape[0], 1), -np.inf)
    live = np.isfinite(m)
    m_safe = np.where(live, m, 0.0)
    keep = np.isfinite(s)
    w = np.where(keep, np.exp(np.where(keep, s, m_safe) - m_safe), 0.0)
    l = w.sum(axis=1, keepdims=True)
    l_safe = np.where(l > 0, l, 1.0)
    o = np.where(l > 0, matmul_f64(w, vf) / l_safe, 0.0)
    delta = np.where(keep, U32 * partials * scale + 3 * U32 * np.abs(dot) * scale
                     + 2 * U32 * np.where(keep, m_safe - s, 0.0) + (steps + 1) * EXP_REL, 0.0)
    wd = w * delta
    spread = np.zeros_like(o)
    mass = np.zeros_like(o)
    for j in range(vf.shape[1]):
        spread[:, j] = (wd * np.abs(vf[None, :, j] - o[:, j:j + 1])).sum(axis=1)
        mass[:, j] = (w * np.abs(vf[None, :, j])).sum(axis=1)
    g = gamma(tile + 2 * steps)
    tiny = ABS_TINY * kf.shape[0] * (np.max(np.abs(vf), initial=0.0) + np.abs(o))
    bound = SAFETY * ((spread + g * mass) / l_safe + (g + U32) * np.abs(o) + tiny)
    return o, np.where(l > 0, bound, 0.0)


def bf16_store_bound(ref: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """The bound after the fp32 result is stored as bf16: half a bf16 ulp of the largest value the
    fp32 result can be (round to nearest even; subnormal bf16 steps included)."""
    top = np.abs(ref) + bound
    e = np.floor(np.log2(np.maximum(top, 2.0 ** -126)))
    return bound + np.where(top > 0, 2.0 ** (e - 7) / 2, 0.0)


def check_within(got, ref, bound, name: str = "O") -> list[str]:
    """Every element of `got` within `bound` of `ref` (exactly equal where the bound is 0); NaN,
    infinity or a shape mismatch fail. Returns failure strings (empty = pass), the worst element
    named with its error and bound."""
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), ref.shape)
    if got.shape != ref.shape:
        return [f"{name}: shape {got.shape} vs reference {ref.shape}"]
    if not np.all(np.isfinite(got)):
        return [f"{name}: non-finite values"]
    err = np.abs(got - ref)
    bad = ~(err <= bound)
    if not bad.any():
        return []
    ratio = np.where(bad, err / np.where(bound > 0, bound, np.finfo(float).tiny), 0.0)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ref.shape))
    return [f"{name}: {int(bad.sum())} of {ref.size} elements beyond the derived bound, worst {idx}: "
            f"err {err[idx]:.3e} > bound {bound[idx]:.3e} (got {got[idx]:.9g}, float64 {ref[idx]:.9g})"]


def check_attention(got, q, k, v, mask, *, tile: int, pes: int = 1, stored_bf16: bool = False,
                    d: int | None = None, name: str = "O") -> list[str]:
    """The kernel's O (fp32 values, or bf16 stored values as float) for query rows q against the
    float64 attention of the same bf16 inputs, within the derived bound for keys tiled by `tile`
    over `pes` PEs (and the bf16 store when `stored_bf16`)."""
    d = np.asarray(q).shape[1] if d is None else d
    ref, bound = attention_bound(q, k, v, mask, d, tile, accumulation_steps(np.asarray(k).shape[0], tile, pes))
    if stored_bf16:
        bound = bf16_store_bound(ref, bound)
    return check_within(got, ref, bound, name)


__all__ = ["ABS_TINY", "EXP_REL", "SAFETY", "accumulation_steps", "attention_bound", "bf16_store_bound",
           "check_attention", "check_within", "dot_running_bound", "gamma", "matmul_f64"]
