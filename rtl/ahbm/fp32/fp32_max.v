`default_nettype none
// fp32_max: y = numpy.maximum(a, b) on binary32 values, exact (no rounding).
// * either input NaN -> NaN.  numpy propagates one of the NaN operands (which
//   one, and its payload, is platform defined); this block returns the
//   canonical quiet NaN 32'h7FC00000 and the test canonicalises numpy's NaN.
//   (In the kernel max sees finite scores and -inf, never NaN.)
// * otherwise a > b ? a : b in value order, so equal values return b.  The only
//   equal values with different bits are +0 and -0: max(+0, -0) = -0 and
//   max(-0, +0) = +0, as numpy.maximum gives on x86-64 (SSE maxps semantics).
// A wrapper of f32_max in fp32_lib.vh, so tests/unit/ahbm/test_ahbm_arith_rtl.py
// proves the function.
module fp32_max (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output wire [31:0] y
);
`include "fp32_lib.vh"
    assign y = f32_max(a, b);
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
