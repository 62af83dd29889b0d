// Bench top for the vector core (vector_core.v behind cu_base).
//
// The core sits on the Local port of a 1x1 noc_mesh at (1,1); bench endpoints
// stand on the four edge ports (1,0), (1,2), (0,1), (2,1) (mesh port indices
// 1..4). (0,1) is the memory agent's coordinate (the core's MAG_X/MAG_Y), so
// the bench endpoint there captures VDRAIN-to-memory writes and VFILL read
// requests; the other three play hosts and peers (instructions, CU_DATA
// bursts, acknowledgement destinations).
`default_nettype none
`timescale 1ns/1ps
module vc_harness #(
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer INJ_DEPTH = 4096,
    parameter integer CAP_DEPTH = 4096
) ();
`include "unit_bay.vh"

    wire         core_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | core_err;
    wire [15:0]  inst_space;
    wire         busy;
    /* verilator lint_on UNUSEDSIGNAL */

    vector_core #(.X(1), .Y(1), .MAG_X(0), .MAG_Y(1), .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(unit_in_data), .noc_in_valid(unit_in_valid), .noc_in_busy(unit_in_busy),
        .noc_out_data(unit_out_data), .noc_out_valid(unit_out_valid), .noc_out_busy(unit_out_busy),
        .inst_space(inst_space), .busy(busy), .mon_err(core_err));
endmodule
`default_nettype wire
