"""Measured accuracy of VEXP2, VLOG2, VINV, VRSQRT and SiLU against float64.

    python -m models.numerics.accuracy

Every sweep runs over every FP16 input pattern (65,536), loaded exactly into
E8M15 as VLD does (units.md V.7), restricted to the inputs where the float64
result is a finite number the output format can represent normally:

* VEXP2, VLOG2, VINV, VRSQRT: one instruction, error in E8M15 ulps of the
  float64 result; VEXP2 excludes upstream defect D1's range 128 <= |x| < 256
  (measured separately against 2^(x -+ 256), what D1 returns); VLOG2 also
  reports its absolute error on [0.5, 2) in units of 2^-20 (its fixed-point
  resolution, which is why its relative error is large next to x = 1);
* SiLU: load, the five instructions, FP16 store, error in FP16 ulps of the
  float64 SiLU, once over every finite FP16 input and once without the inputs
  whose VEXP2 argument falls in D1's range (88.7 < |x| < 177.4: silu ~ 0 for
  positive x, silu ~ x for negative x).

The module prints what it measures; it asserts nothing.
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple

import numpy as np

from .e8m15 import NEG_LOG2E, vmul
from .e8m15_cvt import fp16_to_e8m15
from .e8m15_transcendental import silu_fp16, silu_ref, vexp2, vinv, vlog2, vrsqrt
from .formats import E8M15, FP16, decode
from .reference import ulp_error

ALL_FP16 = np.arange(65536, dtype=np.int64)
E8_MIN_NORMAL = 2.0 ** -126
E8_TOP = 2.0 ** 128


class Sweep(NamedTuple):
    name: str
    unit: str
    run: Callable[[], tuple[np.ndarray, np.ndarray]]  # () -> (errors, inputs)


def _fp16_inputs(keep: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(FP16 patterns, their E8M15 loads, float64 values) of the finite inputs whose value
    ``keep`` selects."""
    h = ALL_FP16[((ALL_FP16 >> 10) & 0x1F) != 0x1F]
    v = decode(h, FP16)
    sel = keep(v)
    h = h[sel]
    return h, fp16_to_e8m15(h).astype(np.int64), v[sel]


def _e8_sweep(op, ref, keep) -> tuple[np.ndarray, np.ndarray]:
    """E8M15-ulp error of ``op`` on the loaded inputs whose float64 result is a normal E8M15."""
    h, x, v = _fp16_inputs(keep)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        r = ref(v)
    ok = np.isfinite(r) & (np.abs(r) >= E8_MIN_NORMAL) & (np.abs(r) < E8_TOP)
    return ulp_error(op(x[ok]), E8M15, r[ok]), h[ok]


def exp2_sweep():
    return _e8_sweep(vexp2, np.exp2, lambda v: np.abs(v) < 128)


def log2_sweep():
    return _e8_sweep(vlog2, np.log2, lambda v: v > 0)


def log2_abs_sweep():
    """|VLOG2(x) - log2(x)| in units of 2^-20 for x in [0.5, 2), where |log2 x| < 1 and the
    fixed-point F (20 fraction bits), not the output rounding, sets the error."""
    h, x, v = _fp16_inputs(lambda v: (v >= 0.5) & (v < 2))
    return np.abs(decode(vlog2(x), E8M15) - np.log2(v)) * 2.0 ** 20, h


def inv_sweep():
    return _e8_sweep(vinv, lambda v: 1.0 / v, lambda v: v != 0)


def rsqrt_sweep():
    return _e8_sweep(vrsqrt, lambda v: 1.0 / np.sqrt(v), lambda v: v > 0)


def exp2_d1_sweep():
    """D1's range 128 <= |x| < 256, measured against what D1 says it returns: 2^(x - 256)
    for x > 0, 2^(x + 256) for x < 0 (E8M15 ulps, where that is a normal number)."""
    return _e8_sweep(vexp2, lambda v: np.exp2(v - 256 * np.sign(v)),
                     lambda v: (np.abs(v) >= 128) & (np.abs(v) < 256))


def _silu(keep) -> tuple[np.ndarray, np.ndarray]:
    h, x, v = _fp16_inputs(keep)
    return ulp_error(silu_fp16(h), FP16, silu_ref(v)), h


def _outside_d1(v: np.ndarray) -> np.ndarray:
    """Inputs whose VEXP2 argument t = x * NEG_LOG2E (as VMUL rounds it) is not in D1's range."""
    x = fp16_to_e8m15(v.astype(np.float16).view(np.uint16))  # exact: v came from FP16
    t = np.abs(decode(vmul(x, NEG_LOG2E), E8M15))
    return ~((t >= 128) & (t < 256))


def silu_sweep():
    return _silu(lambda v: np.ones(v.shape, bool))


def silu_no_d1_sweep():
    return _silu(_outside_d1)


SWEEPS = (
    Sweep("VEXP2", "E8M15 ulp", exp2_sweep),
    Sweep("VEXP2 D1", "E8M15 ulp vs 2^(x-+256)", exp2_d1_sweep),
    Sweep("VLOG2", "E8M15 ulp", log2_sweep),
    Sweep("VLOG2 [.5,2)", "x 2^-20 absolute", log2_abs_sweep),
    Sweep("VINV", "E8M15 ulp", inv_sweep),
    Sweep("VRSQRT", "E8M15 ulp", rsqrt_sweep),
    Sweep("SiLU fp16", "FP16 ulp", silu_sweep),
    Sweep("SiLU no D1", "FP16 ulp", silu_no_d1_sweep),
)


def measure() -> dict:
    """Every sweep: input count, max (and the input reaching it), mean, counts over 0.5 and 1."""
    out = {}
    for sweep in SWEEPS:
        t = time.perf_counter()
        err, x = sweep.run()
        worst = int(np.argmax(err))
        out[sweep.name] = {
            "unit": sweep.unit,
            "inputs": int(err.size),
            "max": float(err.max()),
            "worst_input": int(x[worst]),
            "mean": float(err.mean()),
            "over_half": int((err > 0.5).sum()),
            "over_one": int((err > 1.0).sum()),
            "seconds": time.perf_counter() - t,
        }
    return out


def main() -> None:
    for name, r in measure().items():
        print(f"{name:12s} {r['inputs']:6d} FP16 inputs  max {r['max']:.4f} {r['unit']} "
              f"(FP16 input {r['worst_input']:#06x})  mean {r['mean']:.4f}  "
              f">0.5: {r['over_half']}  >1: {r['over_one']}  [{r['seconds']:.2f} s]")


if __name__ == "__main__":
    main()
