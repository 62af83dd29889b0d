"""The AHBM attn_tile composite (ADR-001 §3), the log-sum-exp merge (§4),
finalize (the float64 reference and the derived FlashAttention bound are
models/ahbm/tolerance.py).

Conventions:
* q, k_tile, v_tile are bf16 bit patterns (uint16): q[R, d] (R = G query rows,
  or G*T_q rows for prefill, row = g*T_q + i), k_tile[T, d], v_tile[T, d].
* mask_tile is additive fp32 [R, T] (the kernel only produces 0 and -inf, both
  exact in bf16 too) or None.  It is added after scaling.
* state is (m[R], l[R], O[R, d]) fp32.  The empty state is m=-inf, l=0, O=0.

attn_tile order (every step an fp32 op, see numerics):
  S2a  D = dot_rows_seq(q, k)            k-index ascending, from +0
  S2b  S = D * scale                     scale = fp32(1/sqrt(d))
  S3   S = S + mask                      (skipped when mask is None)
  S4a  m_new = max(m, rowmax(S))         exact
  S4b  m_sub = m_new, or 0 where m_new == -inf  (no -inf - -inf = NaN)
  S4c  P = exp_f32(S - m_sub)            fp32 sub, defined exp
  S4d  alpha = exp_f32(m - m_sub)        (m = -inf -> alpha = 0)
  S4e  l_new = (l * alpha) + rowsum_seq(P)       mul, then add
  S4f  O_tmp = O * alpha
  S6   O_new = O_tmp + matmul_seq(P, V)  P stays fp32; t ascending, from +0
A row whose keys are all masked keeps m=-inf, l=0, O=0 and no NaN appears.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numerics import (
    F32, bf16_to_f32, dot_rows_seq, exp_f32, f32_to_bf16, matmul_seq, rowsum_seq,
    softmax_scale,
)

NEG_INF = F32(-np.inf)


@dataclass(frozen=True)
class State:
    m: np.ndarray  # [R] fp32
    l: np.ndarray  # [R] fp32
    O: np.ndarray  # [R, d] fp32


def empty_state(rows: int, d: int) -> State:
    return State(np.full(rows, NEG_INF, dtype=F32), np.zeros(rows, dtype=F32),
                 np.zeros((rows, d), dtype=F32))


def _sub_base(m_new: np.ndarray) -> np.ndarray:
    return np.where(m_new == NEG_INF, F32(0.0), m_new).astype(F32)


def attn_tile(q, k_tile, v_tile, mask_tile, state: State, scale=None) -> State:
    """One composite: S1..S6 of ADR §3 on one KV tile.  Returns the new state."""
    qf = bf16_to_f32(q)
    kf = bf16_to_f32(k_tile)
    vf = bf16_to_f32(v_tile)
    scale = softmax_scale(qf.shape[1]) if scale is None else F32(scale)
    S = dot_rows_seq(qf, kf) * scale                                   # S2
    if mask_tile is not None:                                          # S3
        S = S + np.asarray(mask_tile, dtype=F32)
    m_new = np.maximum(state.m, S.max(axis=1) if S.shape[1] else NEG_INF)  # S4a
    m_sub = _sub_base(m_new)                                           # S4b
    P = exp_f32(S - m_sub[:, None])                                    # S4c
    alpha = exp_f32(state.m - m_sub)                                   # S4d
    l_new = state.l * alpha + rowsum_seq(P)                            # S4e
    O_tmp = state.O * alpha[:, None]                                   # S4f
    O_new = O_tmp + matmul_seq(P, vf)                                  # S6
    return State(m_new.astype(F32), l_new.astype(F32), O_new.astype(F32))


def merge(a: State, b: State) -> State:
    """Log-sum-exp merge (ADR §4).  Commutative bit for bit; associative only
    within tolerance.  Order: m = max; m_sub as in S4b; ea = exp(m_a - m_sub),
    eb = exp(m_b - m_sub); l = (l_a*ea) + (l_b*eb); O = (O_a*ea) + (O_b*eb)."""
    m = np.maximum(a.m, b.m)
    m_sub = _sub_base(m)
    ea = exp_f32(a.m - m_sub)
    eb = exp_f32(b.m - m_sub)
    l = a.l * ea + b.l * eb
    O = a.O * ea[:, None] + b.O * eb[:, None]
    return State(m.astype(F32), l.astype(F32), O.astype(F32))


def finalize_f32(state: State) -> np.ndarray:
    """O / l, one fp32 division per element; rows with l == 0 give +0."""
    l = state.l[:, None]
    safe = np.where(l == 0, F32(1.0), l).astype(F32)
    return np.where(l == 0, F32(0.0), state.O / safe).astype(F32)


def finalize(state: State) -> np.ndarray:
    """O / l cast to bf16 (round to nearest even) -> uint16 patterns."""
    return f32_to_bf16(finalize_f32(state))
