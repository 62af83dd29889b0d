`default_nettype none
// fp32_exp: y = exp_f32(x) of models/ahbm/numerics.py, bit for bit.
// Combinational.  A wrapper of f32_exp in fp32_lib.vh (one straight-line
// function: steps E0..E7, every fp32 step one f32_mul / f32_add call in the
// model's order, no fusing), so tests/unit/ahbm/test_ahbm_arith_rtl.py proves the
// function.
//   E0  NaN -> 32'h7FC00000; x > 88.7 (32'h42B16666, incl. +inf) -> +inf;
//       x < -88.0 (32'hC2B00000, incl. -inf) -> +0  (this priority).
//   E1  t  = x * LOG2E                      (32'h3FB8AA3B)
//   E2  n  = rint(t), half to even, integer (|t| < 128 so n fits 9 bits)
//   E3  nf = float(n) (exact; n = 0 gives +0)
//   E4  r1 = x - nf * LN2_HI                (32'h3F317200)
//   E5  r  = r1 - nf * LN2_LO               (32'h35BFBE8E)
//   E6  p = C7; p = p * r + C_k, k = 6..0   (C_k = fp32(1/k!))
//   E7  E = p[30:23] + n; E <= 0 -> +0; E >= 255 -> +inf;
//       else bits(p) + (n << 23) (32-bit two's-complement add, as the model's
//       int64 sum cast to uint32).
module fp32_exp (
    input  wire [31:0] x,
    output wire [31:0] y
);
`include "fp32_lib.vh"
    assign y = f32_exp(x);
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
