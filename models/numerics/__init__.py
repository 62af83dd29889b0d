"""Bit-exact numerics of the compute units, as plain numpy (no cocotb).

Modules, one role each:

* ``rounding``   - the integer rounding kernel (nearest-even) of the generic encoder;
* ``formats``    - FP16, FP32, E8M15, S1E7M14 (ACC) and E5M3 bit patterns, encode/decode,
  the generic correctly-rounded ``convert`` (a reference encoder for the tests);
* ``e8m15``      - the vector core's lane arithmetic as units.md V.6 fixes it: upstream's
  FMA datapath and PACK, the compares, the ops through the datapath;
* ``e8m15_lane`` - the same datapath lane by lane on Python ints, for the few-lane calls
  (the VRED trees) where numpy's cost per operation would dominate;
* ``e8m15_transcendental`` - VEXP2/VLOG2/VINV/VRSQRT over the coefficient table (V.6.4), SiLU;
* ``e8m15_alu``  - the lane result by opcode (``alu``, ``compare``) over the two above;
* ``e8m15_cvt``  - the vector core's FP16/FP32 load and store conversions (units.md V.7);
* ``cluster``    - the cluster's accumulator as units.md C.7 fixes it: K-block dot, conversion into
  S1E7M14 (A1), the accumulator add (A2, A3), the saturating FP16 emit;
* ``layout``     - L1 packing of int7 entries, FP16/FP32 words, accumulator port;
* ``fields7``    - 32 seven-bit fields to and from 28 bytes (the entry and QUANT word layout);
* ``reference``  - float64 references and the checkers (exact and in ulps);
* ``accuracy``   - ``python -m models.numerics.accuracy`` measures the transcendentals and SiLU.

docs/numerics.md states every rule.
"""

from .cluster import (
    acc_add, acc_convert, acc_emit, acc_load, acc_to_fp16, emit_granule, emit_granules, gemm_entry, gemm_product,
    gemm_reference, gemm_step,
)
from .e8m15 import (
    K0, K1, K2, NEG_INF, NEG_LOG2E, POS_INF, QNAN, cmp_eq, cmp_gt, cmp_lt, fma, pack, vabs, vadd, vcmpeq,
    vcmpgt, vcmplt, vfma, vfnma, vmax, vmin, vmov, vmul, vneg, vsel, vsub,
)
from .e8m15_alu import alu, compare
from .e8m15_transcendental import COEFFS, silu_e8m15, silu_fp16, silu_ref, vexp2, vinv, vlog2, vrsqrt
from .e8m15_cvt import e8m15_to_fp16, e8m15_to_fp32, fp16_to_e8m15, fp32_to_e8m15
from .formats import (
    ACC, E8M15, FP16, FP32, Format, convert, decode, e5m3_decode, e5m3_encode, encode,
)
