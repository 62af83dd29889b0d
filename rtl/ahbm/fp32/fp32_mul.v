`default_nettype none
// fp32_mul: IEEE-754 binary32 y = a * b, round to nearest even, subnormal
// inputs and outputs kept (no flush), as numpy float32 * in
// models/ahbm/numerics.py.  Combinational.
// NaN results (a NaN input, or inf * 0) are the canonical quiet NaN
// 32'h7FC00000 (numpy's NaN payload/sign is platform defined; see fp32_add).
// A wrapper of f32_mul in fp32_lib.vh, so tests/unit/ahbm/test_ahbm_arith_rtl.py
// proves the function.
module fp32_mul (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output wire [31:0] y
);
`include "fp32_lib.vh"
    assign y = f32_mul(a, b);
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
