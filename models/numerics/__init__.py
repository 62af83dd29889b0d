"""Bit-exact numerics of the compute units, as plain numpy (no cocotb).

Modules, one role each:

* ``rounding``  - the integer rounding kernel (nearest-even, aligned add);
* ``formats``   - FP16, FP32, E8M15, S1E7M14 (ACC) and E5M3 bit patterns,
  encode/decode and the conversions (FP16/FP32 load and store, OP_EMIT);
* ``e8m15``     - the vector core's operations (VADD ... VEXP2, VINV, SiLU);
* ``cluster``   - the cluster unit's int7 GEMM sub-tile into S1E7M14;
* ``layout``    - L1 packing of int7 entries, FP16/FP32 words, accumulator port;
* ``reference`` - float64 references and the checkers (exact and in ulps);
* ``accuracy``  - ``python -m models.numerics.accuracy`` measures VEXP2, VINV, SiLU.

The Verilog in rtl/arith computes the same bits; docs/numerics.md states every rule.
"""

from .cluster import acc_add, emit_granule, gemm_entry, gemm_product, gemm_reference, gemm_step
from .e8m15 import (
    K0, K1, K2, NEG_LOG2E, silu_e8m15, silu_fp16, silu_ref, vabs, vadd, vexp2, vfma, vfnma,
    vinv, vmax, vmin, vmov, vmul, vneg, vsub,
)
from .formats import (
    ACC, E8M15, FP16, FP32, Format, acc_to_fp16, convert, decode, e5m3_decode, e5m3_encode,
    e8m15_to_fp16, e8m15_to_fp32, encode, fp16_to_e8m15, fp32_to_e8m15,
)
