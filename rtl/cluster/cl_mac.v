// Arithmetic boundary of the cluster CU: one accumulator command on one 4x4
// sub-tile. The sequencer (cluster_cu.v) reaches the arithmetic only through
// this module and cl_emit.v; the arithmetic itself is rtl/arith's, which
// units.md C.7 fixes (docs/numerics.md §3, models/numerics/cluster.py).
//
// Ports (combinational; the cluster registers every input on e_clk, clk gated
// to the edges that take an accumulator command (rtl/arith/clock_gate.v), so
// the MAC is evaluated by Verilator only on those edges):
//   op      0 LOAD  acc_out = ADD(0, X)                  (kb == 0 && !acc)
//           1 ADD   acc_out = ADD(acc_in, X)
//           2 PEER  acc_out = ADD(acc_in, peer_in)       (ADD_PEER, CU_DATA buf 2)
//           where X = C.7.3's conversion of the entry pair's exact K-block dot
//           with the A-lane and B-lane scales and the anchor, and ADD is
//           C.7.4's add (quirks A1-A3 included)
//   a_ent, b_ent  one L1A / L1B entry, granule w at [256w +: 256] (units.md C.4)
//   anchor  the GEMM's anchor field (40 with 0xA0 scales: the integer dot)
//   acc_in, peer_in, acc_out: 16 S1E7M14 lanes, (r,c) at [(4r+c)*22 +: 22]
`default_nettype none
`timescale 1ns/1ps
module cl_mac (
    input  wire [1:0]    op,
    input  wire [1023:0] a_ent,
    input  wire [1023:0] b_ent,
    input  wire [7:0]    anchor,
    input  wire [351:0]  acc_in,
    input  wire [351:0]  peer_in,
    output wire [351:0]  acc_out
);
    wire [351:0] gemm_out, peer_out;
    cu_gemm_subtile u_gemm (.a_entry(a_ent), .b_entry(b_ent), .anchor(anchor), .accumulate(op == 2'd1),
                            .acc_in(acc_in), .acc_out(gemm_out));
    genvar e;
    generate
        for (e = 0; e < 16; e = e + 1) begin : g_peer
            acc_add u_add (.x(acc_in[e*22 +: 22]), .y(peer_in[e*22 +: 22]), .z(peer_out[e*22 +: 22]));
        end
    endgenerate
    assign acc_out = (op == 2'd2) ? peer_out : gemm_out;
endmodule
`default_nettype wire
