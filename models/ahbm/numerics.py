"""AHBM attention numerics: bf16 storage, fp32 arithmetic, a defined exp.

Rules (a Verilog model must reproduce every bit):

* Storage is bf16, held here as ``np.uint16`` bit patterns.
* bf16 -> fp32 is exact: ``fp32_bits = bf16_bits << 16``.
* fp32 -> bf16 (store) rounds to nearest, ties to even, on the bit pattern:
  ``b = (x + 0x7FFF + ((x >> 16) & 1)) >> 16`` for finite and infinite x.
  Subnormals are kept (no flush), overflow past the largest bf16 rounds to
  +-inf, +-inf stays +-inf, +-0 stays +-0.  Any NaN becomes the quiet NaN
  ``sign | 0x7FC0`` (sign kept, payload dropped).
* Every arithmetic step is one IEEE-754 binary32 operation with round to
  nearest even (numpy float32 ``+ - * /``, no fused multiply-add), in the
  order written in the function that uses it.  max is exact.
* ``exp_f32`` is defined below as a fixed list of fp32 and integer steps.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32

# ---------------------------------------------------------------- bit casts


def f32_to_bits(x) -> np.ndarray:
    a = np.array(x, dtype=F32)          # a copy, shape kept (0-d stays 0-d)
    return a.view(np.uint32)


def bits_to_f32(b) -> np.ndarray:
    a = np.array(b, dtype=np.uint32)
    return a.view(F32)


def bf16_to_f32(b) -> np.ndarray:
    """bf16 bit patterns (uint16) -> fp32 values, exact."""
    return bits_to_f32(np.asarray(b, dtype=np.uint32) << np.uint32(16))


def f32_to_bf16(x) -> np.ndarray:
    """fp32 -> bf16 bit patterns, round to nearest even (see module doc)."""
    u = f32_to_bits(x).astype(np.uint64)
    lsb = (u >> 16) & 1
    r = ((u + 0x7FFF + lsb) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    qnan = (((u >> 16) & 0x8000) | 0x7FC0).astype(np.uint16)
    return np.where(nan, qnan, r).astype(np.uint16)


def to_bf16(x) -> np.ndarray:
    """Round any float array to bf16 patterns (via fp32 first)."""
    return f32_to_bf16(np.asarray(x, dtype=np.float64).astype(F32))


# ---------------------------------------------------------------- constants

LOG2E = F32(1.4426950408889634)          # 0x3FB8AA3B
LN2_HI = F32(bits_to_f32(0x3F317200))      # 0.693145751953125, 15 significant bits
LN2_LO = F32(bits_to_f32(0x35BFBE8E))      # 1.4286067653e-06
EXP_X_MAX = F32(88.7)                     # x > EXP_X_MAX  -> +inf
EXP_X_MIN = F32(-88.0)                    # x < EXP_X_MIN  -> +0
# Taylor coefficients 1/k!, k = 0..7, each rounded to fp32
EXP_COEFFS = tuple(F32(1.0 / f) for f in (1, 1, 2, 6, 24, 120, 720, 5040))


def softmax_scale(d: int = 128) -> np.float32:
    """1/sqrt(d) rounded once from float64 to fp32 (d=128: 0x3DB504F3)."""
    return F32(1.0 / np.sqrt(np.float64(d)))


# ---------------------------------------------------------------- exp


def exp_f32(x) -> np.ndarray:
    """Defined fp32 exp.  Steps, elementwise, every op rounded to fp32:

    E0  special cases (checked in this priority): NaN -> NaN (0x7FC00000);
        x > 88.7 (incl. +inf) -> +inf; x < -88.0 (incl. -inf) -> +0.
    E1  t = x * LOG2E                       (fp32 mul)
    E2  n = rint(t)  (round half to even; exact, |n| <= 128), integer
    E3  nf = float(n)                       (exact)
    E4  r1 = x - nf * LN2_HI                (fp32 mul [exact], fp32 sub)
    E5  r  = r1 - nf * LN2_LO               (fp32 mul, fp32 sub)
    E6  p = C7; then for k = 6..0: p = p * r + C_k   (fp32 mul, fp32 add,
        Horner, C_k = fp32(1/k!))
    E7  e = biased exponent field of p  (p is in [0.70, 1.42], e in {126, 127})
        E = e + n.  If E <= 0 -> +0 (results below the normal range flush to
        zero); if E >= 255 -> +inf; else bits = bits(p) + (n << 23).
    exp(0) is exactly 1.0 and exp is monotone enough for attention; accuracy
    vs float64 is measured in the tests (max ulp error reported there).
    """
    x = np.asarray(x, dtype=F32)
    shape = x.shape
    x = x.reshape(-1)
    nan = np.isnan(x)
    big = x > EXP_X_MAX
    small = x < EXP_X_MIN
    ok = ~(nan | big | small)
    xs = np.where(ok, x, F32(0.0))
    t = xs * LOG2E                                    # E1
    n = np.rint(t).astype(np.int64)                   # E2
    nf = n.astype(F32)                                # E3
    r1 = xs - nf * LN2_HI                             # E4
    r = r1 - nf * LN2_LO                              # E5
    p = np.full_like(r, EXP_COEFFS[7])                # E6
    for k in range(6, -1, -1):
        p = p * r + EXP_COEFFS[k]
    pb = f32_to_bits(p).astype(np.int64)              # E7
    E = ((pb >> 23) & 0xFF) + n
    outb = pb + (n << 23)
    outb = np.where(E <= 0, 0, outb)
    outb = np.where(E >= 255, 0x7F800000, outb)
    out = bits_to_f32(outb.astype(np.uint32)).copy()
    out[big] = np.inf
    out[small] = 0.0
    out[nan] = F32(bits_to_f32(0x7FC00000))
    return out.reshape(shape)


# ---------------------------------------------------------------- ordered fp32 reductions


def dot_rows_seq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C[i, j] = sum_k a[i, k] * b[j, k] in fp32, k ascending:
    acc = +0; for k = 0..K-1: acc = acc + (a[i,k] * b[j,k])  (mul, then add)."""
    a = np.asarray(a, dtype=F32)
    b = np.asarray(b, dtype=F32)
    acc = np.zeros((a.shape[0], b.shape[0]), dtype=F32)
    for k in range(a.shape[1]):
        acc = acc + np.multiply.outer(a[:, k], b[:, k])
    return acc


def matmul_seq(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    """C[i, j] = sum_t p[i, t] * v[t, j] in fp32, t ascending, from +0."""
    p = np.asarray(p, dtype=F32)
    v = np.asarray(v, dtype=F32)
    acc = np.zeros((p.shape[0], v.shape[1]), dtype=F32)
    for t in range(p.shape[1]):
        acc = acc + np.multiply.outer(p[:, t], v[t, :])
    return acc


def rowsum_seq(p: np.ndarray) -> np.ndarray:
    """s[i] = sum_t p[i, t] in fp32, t ascending, from +0."""
    p = np.asarray(p, dtype=F32)
    acc = np.zeros(p.shape[0], dtype=F32)
    for t in range(p.shape[1]):
        acc = acc + p[:, t]
    return acc


def ulp_f32(x) -> np.ndarray:
    """Size of one fp32 ulp at |x| (float64), for error reports."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    e = np.floor(np.log2(np.maximum(x, 2.0 ** -126)))
    return 2.0 ** (np.maximum(e, -126) - 23)
