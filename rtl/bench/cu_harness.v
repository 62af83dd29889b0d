// Bench top for cu_base with the cu_null test unit behind it.
//
// The unit sits on the Local port of a 1x1 noc_mesh at (1,1); bench endpoints
// stand on the four edge ports (1,0), (1,2), (0,1), (2,1) (mesh port indices
// 1..4), so instructions and CU_CTRL reads come from several sources at once
// and every reply must find its way back to its own sender.
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

    wire         base_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | base_err | bay_mag_err;
    wire [15:0]  inst_space;
    /* verilator lint_on UNUSEDSIGNAL */

    wire [287:0] inst_flit, send_flit, recv_flit;
    wire inst_valid, inst_ready, exec_done, exec_fault, send_valid, send_ready, recv_valid, recv_ready;
    wire [31:0] exec_result;
    wire [63:0] dbg_ctr;

    cu_base #(.X(1), .Y(1), .CU_TYPE(16'h4e55), .CU_VERSION(8'h01), .N_BUFFERS(4'd0),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(unit_in_data), .noc_in_valid(unit_in_valid), .noc_in_busy(unit_in_busy),
        .noc_out_data(unit_out_data), .noc_out_valid(unit_out_valid), .noc_out_busy(unit_out_busy),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(inst_space), .busy(busy), .mon_err(base_err));

    cu_null #(.X(1), .Y(1)) u_unit (
        .clk(clk), .resetn(resetn),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready));
endmodule
`default_nettype wire
