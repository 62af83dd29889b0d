`default_nettype none
// fp32_add: IEEE-754 binary32 y = a + b (sub = 0) or y = a - b (sub = 1),
// round to nearest even, subnormal inputs and outputs kept (no flush), as
// numpy float32 + and - in models/ahbm/numerics.py.  Combinational.
// NaN results (a NaN input, or inf - inf) are the canonical quiet NaN
// 32'h7FC00000: numpy's NaN payload/sign is platform defined, the AHBM model
// never relies on it (exp_f32 screens NaN before any arithmetic).
// Exact zero results: x + (-x) is +0; (-0) + (-0) is -0.
// A wrapper of f32_add in fp32_lib.vh (a - b is a + b with b's sign flipped,
// as f32_sub), so tests/unit/ahbm/test_ahbm_arith_rtl.py proves the function.
module fp32_add (
    input  wire [31:0] a,
    input  wire [31:0] b,
    input  wire        sub,
    output wire [31:0] y
);
`include "fp32_lib.vh"
    assign y = f32_add(a, {b[31] ^ sub, b[30:0]});
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
