"""The golden output of a whole fused (or unfused) matmul + epilogue kernel, bit for bit.

``y = epilogue(acc_0, acc_1, ...)`` with ``acc_r = x @ w_r^T`` (x: M x K int7,
w_r: N x K int7, E5M3 block scales per row and 32-wide K block), computed the
way the machine computes it, from models.numerics only:

1. **GEMM into S1E7M14** (units.md C.7), per the cluster's sweep (K block
   outermost): block kb = 0 is a LOAD of the converted block, every later block
   an ADD (block converted, then the accumulator add of C.7.4 with its quirks),
   in increasing kb. Tiles are independent, so
   the g/h order inside one kb does not change a value; only the kb order does.
2. **FP16 emit** (OP_EMIT, units.md C.7.5: nearest even, flushed below 2^-14, saturating to
   +-65504).
3. **FP16 -> E8M15** on VLD (exact).
4. **The epilogue** on E8M15 in the order the vector program runs it
   (models.programs.lower_epilogue): add/sub/mul/max/min/exp2/inv/neg one
   instruction each; SiLU = VMUL by NEG_LOG2E, VEXP2, VADD K1, VINV, VMUL by x;
   sigmoid = the first four; constants as their E8M15 patterns.
5. **E8M15 -> FP16** saturating store.

The fused and unfused forms produce identical bits: the peer drain delivers
the same FP16 granules the temp holds, and VFILL/VLD read them unchanged.

The float64 references, the tolerances this output is held to and their
measurement are models.machine.fused_bounds.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from models.numerics import (
    K1, NEG_LOG2E, acc_add, acc_to_fp16, e8m15_to_fp16, fp16_to_e8m15, gemm_product, silu_e8m15, vadd, vexp2,
    vinv, vmax, vmin, vmul, vneg, vsub,
)
from models.numerics.reference import bit_mismatches
from models.machine.planner import Acc, Const, Expr, Operand

__all__ = [
    "ANCHOR", "SCALE_ONE", "FP16_MAX", "accumulate", "emit_fp16", "epilogue_e8m15", "golden_y", "golden_words",
    "vector_stage", "check_bits", "random_case",
]

ANCHOR = 40
SCALE_ONE = 0xA0
FP16_MAX = 65504.0


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
    """OP_EMIT: S1E7M14 -> FP16 (units.md C.7.5: nearest even, flushed below 2^-14, saturating)."""
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



# ---------------------------------------------------------------- checker
def check_bits(expected, got, what: str = "y") -> list[str]:
    """Bit-exact comparison of two FP16 outputs (arrays or tiled word lists); empty means equal."""
    return bit_mismatches(np.asarray(expected, dtype=object).reshape(-1), np.asarray(got, dtype=object).reshape(-1),
                          what=what)


# ---------------------------------------------------------------- random data
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
