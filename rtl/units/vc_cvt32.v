// Vector-core conversion boundary, FP32 (dtype 2), one element:
//   f_in -> e_from_f   FP32 load, nearest even   (rtl/arith/fp32_to_e8m15.v)
//   e_in -> f_from_e   FP32 store, exact         (rtl/arith/e8m15_to_fp32.v)
//   ok                 both conversions are wired (VLD/VST FP32 fault F_DTYPE (1) if not)
// vector_core.v instantiates 8 (a 256-bit word holds 8 FP32) and holds the
// inputs at 0 unless a VLD/VST FP32 is executing.
`default_nettype none
`timescale 1ns/1ps
module vc_cvt32 (
    input  wire [31:0] f_in,
    input  wire [23:0] e_in,
    output wire [23:0] e_from_f,
    output wire [31:0] f_from_e,
    output wire        ok
);
    fp32_to_e8m15 u_ld (.f(f_in), .x(e_from_f));
    e8m15_to_fp32 u_st (.x(e_in), .f(f_from_e));
    assign ok = 1'b1;
endmodule
`default_nettype wire
