// Bench top for cu_base with the cu_null test unit behind it.
//
// The unit sits on the Local port of a 1x1 noc_mesh at (1,1); bench endpoints
// stand on the four edge ports (1,0), (1,2), (0,1), (2,1) (mesh port indices
// 1..4), so instructions and CU_CTRL reads come from several sources at once
// and every reply must find its way back to its own sender. The base is
// instantiated as a unit does it (cu_base_inst.vh: u_base on the bay's wires).
`default_nettype none
`timescale 1ns/1ps
module cu_harness #(
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer INJ_DEPTH = 4096,
    parameter integer CAP_DEPTH = 4096
) ();
    localparam integer BAY_MAG = 0;   // the bench endpoint at (0,1) plays the memory agent
    /* verilator lint_off UNUSEDPARAM */  // read only by the bay's memory agent, absent here
    localparam integer BAY_DRAM_WORDS = 1, BAY_RD_LATENCY = 1;
    localparam [39:0]  BAY_DRAM_BASE = 40'd0;
    /* verilator lint_on UNUSEDPARAM */
`include "unit_bay.vh"

    localparam integer X = 1, Y = 1;   // the bay's Local port
    localparam [15:0]  CU_TYPE    = 16'h4e55;
    localparam [7:0]   CU_VERSION = 8'h01;
    localparam [3:0]   N_BUFFERS  = 4'd0;
    wire inst_ready, exec_done, exec_fault, send_valid, recv_ready;
    wire [31:0]  exec_result;
    wire [63:0]  dbg_ctr;
    wire [287:0] send_flit;
`include "cu_base_inst.vh"
    assign busy = base_busy;

    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | base_err | bay_mag_err;
    wire [15:0]  inst_space = base_inst_space;
    /* verilator lint_on UNUSEDSIGNAL */

    cu_null #(.X(X), .Y(Y)) u_unit (
        .clk(clk), .resetn(resetn),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready));
endmodule
`default_nettype wire
