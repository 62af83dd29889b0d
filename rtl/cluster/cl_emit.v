// Arithmetic boundary of the cluster CU, emit side: one sub-tile to one FP16
// granule, combinational (units.md C.7.5: nearest even, flushed below 2^-14,
// SATURATING at +-65504 (0x7bff / 0xfbff), never infinity). 16 S1E7M14 lanes
// in ((r,c) at [(4r+c)*22 +: 22]), the granule out ((r,c) at [(4r+c)*16 +: 16]);
// the conversion is rtl/cluster/acc_emit_subtile.v. Used by the write port
// (cl_wport.v) for OP_EMIT and for an emitting GEMM's sub-tiles. Its input
// comes from the cluster's engine registers on e_clk (see cl_mac.v), so it
// is evaluated by Verilator only on the edges that take a command.
`default_nettype none
`timescale 1ns/1ps
module cl_emit (
    input  wire [351:0] acc,
    output wire [255:0] fp16
);
    acc_emit_subtile u_emit (.acc_tile(acc), .granule(fp16));
endmodule
`default_nettype wire
