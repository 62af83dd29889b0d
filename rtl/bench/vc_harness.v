// Bench top for the vector core (vector_core.v behind cu_base).
//
// The core sits on the Local port of a 1x1 noc_mesh at (1,1); bench endpoints
// stand on the edge ports (1,0), (1,2), (2,1) (mesh ports 1, 2, 4): the host
// (instructions, bursts), peers and acknowledgement / node-drain destinations.
// (0,1) is the core's memory agent: with BAY_MAG = 1 (the default) a real
// memory agent and DRAM (u_mag, dram) answer its VFILL reads and take its
// VDRAIN writes; with BAY_MAG = 0 a bench endpoint stands there and captures
// them. Python reads the DRAM through dram's backdoor and the core's state
// through u_dut.u_exec (vr, l1, sr, preg, vl, mode, k3).
`default_nettype none
`timescale 1ns/1ps
module vc_harness #(
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer BAY_MAG = 1,
    parameter integer BAY_DRAM_WORDS = 4096,
    parameter [39:0]  BAY_DRAM_BASE = 40'h00_8000_0000,   // the compiled bundles' memory window
    parameter integer BAY_RD_LATENCY = 1,      // upstream's AXI RAM (models/machine/unit_timing.py dram.RD_LATENCY)
    parameter integer INJ_DEPTH = 4096,
    parameter integer CAP_DEPTH = 4096
) ();
`include "unit_bay.vh"

    wire         core_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | core_err | bay_mag_err;
    wire [15:0]  inst_space;
    wire [127:0] hazards;   // HAZARD report counts {H4, H3, H2, H1}
    /* verilator lint_on UNUSEDSIGNAL */

    vector_core #(.X(1), .Y(1), .MAG_X(0), .MAG_Y(1), .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
`include "noc_ep_pass.vh"
        .inst_space(inst_space), .busy(busy), .hazards(hazards), .mon_err(core_err));
endmodule
`default_nettype wire
