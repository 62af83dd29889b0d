`default_nettype none
// fp32_div: IEEE-754 binary32 y = a / b, round to nearest even, subnormal
// inputs and outputs kept (no flush), as numpy float32 / (used for O / l in
// models/ahbm/attention.finalize_f32).  Combinational.
// x / 0 = +-inf and x / inf = +-0 (x finite, non-zero resp. any), sign the
// XOR of the operand signs; NaN results (a NaN input, 0 / 0, inf / inf) are
// the canonical quiet NaN 32'h7FC00000 (see fp32_add).
// A wrapper of f32_div in fp32_lib.vh, so tests/unit/ahbm/test_ahbm_arith_rtl.py
// proves the function.
module fp32_div (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output wire [31:0] y
);
`include "fp32_lib.vh"
    assign y = f32_div(a, b);
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
