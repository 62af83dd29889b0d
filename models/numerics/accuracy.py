"""Measured accuracy of VEXP2, VINV and SiLU against float64.

    python -m models.numerics.accuracy

* VEXP2: every E8M15 x in (-126, 128) whose 2^x is a normal number - all
  patterns with exponent field 0..134 - error in E8M15 ulps of the result;
* VINV: every significand (32768) at five exponents, error in E8M15 ulps;
* SiLU: every finite FP16 input through load, the five instructions and the
  saturating store, error in FP16 ulps of the float64 SiLU of the input;
* VEXP2 and VINV the same way (FP16 load, one instruction, FP16 store), over
  every finite FP16 input whose exact result is within the FP16 range (the
  store saturates the others by design).
"""

from __future__ import annotations

import time

import numpy as np

from .e8m15 import silu_fp16, silu_ref, vexp2, vinv
from .formats import E8M15, FP16, decode, e8m15_to_fp16, fp16_to_e8m15
from .reference import exp2_ref, inv_ref, ulp_error


def exp2_sweep():
    fields = np.arange(0, 135 << 15, dtype=np.int64)
    x = np.concatenate([fields, fields | 0x800000])
    xv = decode(x, E8M15)
    keep = (xv > -126) & (xv < 128)
    x, xv = x[keep], xv[keep]
    err = ulp_error(vexp2(x), E8M15, exp2_ref(xv))
    return err, x


def inv_sweep():
    x = np.concatenate([(e << 15) | np.arange(32768) for e in (1, 64, 127, 190, 252)]).astype(np.int64)
    err = ulp_error(vinv(x), E8M15, inv_ref(decode(x, E8M15)))
    return err, x


def silu_sweep():
    h = np.arange(65536, dtype=np.int64)
    h = h[((h >> 10) & 0x1F) != 0x1F]  # finite inputs
    err = ulp_error(silu_fp16(h), FP16, silu_ref(decode(h, FP16)))
    return err, h


def _fp16_sweep(op, ref):
    h = np.arange(65536, dtype=np.int64)
    h = h[((h >> 10) & 0x1F) != 0x1F]
    r = ref(decode(h, FP16))
    keep = np.abs(r) < 65520  # beyond: saturates by design
    h, r = h[keep], r[keep]
    return ulp_error(e8m15_to_fp16(op(fp16_to_e8m15(h))), FP16, r), h


def exp2_fp16_sweep():
    return _fp16_sweep(vexp2, exp2_ref)


def inv_fp16_sweep():
    return _fp16_sweep(vinv, inv_ref)


SWEEPS = (
    ("VEXP2", "E8M15 ulp", exp2_sweep),
    ("VINV", "E8M15 ulp", inv_sweep),
    ("VEXP2 fp16", "FP16 ulp", exp2_fp16_sweep),
    ("VINV fp16", "FP16 ulp", inv_fp16_sweep),
    ("SiLU fp16", "FP16 ulp", silu_sweep),
)


def measure() -> dict:
    out = {}
    for name, _, fn in SWEEPS:
        t = time.perf_counter()
        err, x = fn()
        worst = int(np.argmax(err))
        out[name] = {
            "inputs": int(err.size),
            "max_ulp": float(err.max()),
            "worst_input": int(x[worst]),
            "mean_ulp": float(err.mean()),
            "over_half_ulp": int((err > 0.5).sum()),
            "over_one_ulp": int((err > 1.0).sum()),
            "seconds": time.perf_counter() - t,
        }
    return out


def main() -> None:
    units = {name: unit for name, unit, _ in SWEEPS}
    for name, r in measure().items():
        print(f"{name:10s} {r['inputs']:8d} inputs  max {r['max_ulp']:.4f} {units[name]} "
              f"(input {r['worst_input']:#x})  mean {r['mean_ulp']:.4f}  "
              f">0.5 ulp: {r['over_half_ulp']}  >1 ulp: {r['over_one_ulp']}  [{r['seconds']:.2f} s]")


if __name__ == "__main__":
    main()
