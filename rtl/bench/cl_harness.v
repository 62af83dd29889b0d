// Bench top for the cluster CU (cluster_cu) alone.
//
// The cluster sits on the Local port of a 1x1 noc_mesh at (1,1) (mesh port 0);
// bench endpoints stand on the four edge ports (1,0), (1,2), (0,1), (2,1)
// (mesh ports 1..4). The west one, (0,1), is the cluster's memory-agent
// coordinate: it captures the MEM_RD_REQ of a FILL and the MEM_WR_REQ/DATA of
// a memory DRAIN, and can play read responses from its injection list (it
// cannot answer a request it has not seen, so a bench that wants a FILL to
// complete queues the responses behind the instruction). The other three
// play the agent, peers and drain destinations.
`default_nettype none
`timescale 1ns/1ps
module cl_harness #(
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

    wire         unit_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | unit_err | bay_mag_err;
    /* verilator lint_on UNUSEDSIGNAL */

    cluster_cu #(.X(1), .Y(1), .MAG_X(0), .MAG_Y(1), .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
`include "noc_ep_pass.vh"
        .busy(busy), .mon_err(unit_err));
endmodule
`default_nettype wire
