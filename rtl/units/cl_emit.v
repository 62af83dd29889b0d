// Arithmetic boundary of the cluster CU, emit side: OP_EMIT of one sub-tile,
// combinational. 16 S1E7M14 elements in ((r,c) at [(4r+c)*22 +: 22]), one FP16
// granule out ((r,c) at [(4r+c)*16 +: 16]); the conversion is the project's
// acc_emit_subtile (rtl/arith): nearest even, FP16 subnormals, SATURATING at
// +-65504 (0x7bff / 0xfbff), never infinity.
`default_nettype none
`timescale 1ns/1ps
module cl_emit (
    input  wire [351:0] acc,
    output wire [255:0] fp16
);
    acc_emit_subtile u_emit (.acc_tile(acc), .granule(fp16));
endmodule
`default_nettype wire
