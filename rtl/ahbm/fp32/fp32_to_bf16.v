`default_nettype none
// fp32_to_bf16: store rounding of models/ahbm/numerics.f32_to_bf16.
// Non-NaN: h = (f + 0x7FFF + f[16]) >> 16 (round to nearest even on the bit
// pattern; subnormals kept, overflow rounds to +-inf, +-inf and +-0 kept).
// NaN: h = {sign, 15'h7FC0} (quiet, payload dropped).
// A wrapper of f32_to_bf16 in fp32_lib.vh, so tests/unit/ahbm/test_ahbm_arith_rtl.py
// proves the function.
module fp32_to_bf16 (
    input  wire [31:0] f,
    output wire [15:0] h
);
`include "fp32_lib.vh"
    assign h = f32_to_bf16(f);
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
