// Vector-core conversion boundary, FP16 (dtype 1), one lane:
//   h_in -> e_from_h   FP16 load, exact                       (rtl/arith/fp16_to_e8m15.v)
//   e_in -> h_from_e   FP16 store, nearest even, saturating   (rtl/arith/e8m15_to_fp16.v)
//   ok                 both conversions are wired (VLD/VST FP16 fault F_DTYPE (1) if not)
// vector_core.v instantiates 16 (a 256-bit word holds 16 FP16) and holds the
// inputs at 0 unless a VLD/VST FP16 is executing.
`default_nettype none
`timescale 1ns/1ps
module vc_cvt16 (
    input  wire [15:0] h_in,
    input  wire [23:0] e_in,
    output wire [23:0] e_from_h,
    output wire [15:0] h_from_e,
    output wire        ok
);
    fp16_to_e8m15 u_ld (.h(h_in), .x(e_from_h));
    e8m15_to_fp16 u_st (.x(e_in), .h(h_from_e));
    assign ok = 1'b1;
endmodule
`default_nettype wire
