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
    localparam integer NP = 5;
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    wire [287:0] tx_data  [0:NP-1];
    wire         tx_valid [0:NP-1];
    wire         tx_busy  [0:NP-1];
    wire [287:0] rx_data  [0:NP-1];
    wire         rx_valid [0:NP-1];
    wire         rx_busy  [0:NP-1];
    wire [287:0] ep_in_data  [0:NP-1];
    wire         ep_in_valid [0:NP-1];
    wire         ep_out_busy [0:NP-1];
    wire         ep_in_busy_w [0:NP-1];
    wire         mesh_err, core_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | core_err;
    wire [15:0]  inst_space;
    wire         busy;
    /* verilator lint_on UNUSEDSIGNAL */

    // Bench port 0 (the Local endpoint) is absent in the bank: the core is there.
    tb_ep_bank #(.NP(NP), .PRESENT(64'h1e), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    wire [287:0] core_in_data,  core_out_data;
    wire         core_in_valid, core_in_busy, core_out_valid, core_out_busy;
    genvar e;
    generate
        for (e = 0; e < NP; e = e + 1) begin : g_ep
            if (e == 0) begin : g_core
                assign ep_in_data[e]  = core_out_data;
                assign ep_in_valid[e] = core_out_valid;
                assign ep_out_busy[e] = core_in_busy;
                assign tx_busy[e]     = 1'b1;
            end else begin : g_bank
                assign ep_in_data[e]  = tx_data[e];
                assign ep_in_valid[e] = tx_valid[e];
                assign ep_out_busy[e] = rx_busy[e];
                assign tx_busy[e]     = ep_in_busy_w[e];
            end
        end
    endgenerate
    assign core_out_busy = ep_in_busy_w[0];
    assign core_in_data  = rx_data[0];
    assign core_in_valid = rx_valid[0];

    noc_mesh #(.NX(1), .NY(1), .FIFO_DEPTH(4), .EDGE_MASK(64'hf)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(ep_in_data), .ep_in_valid(ep_in_valid), .ep_in_busy(ep_in_busy_w),
        .ep_out_data(rx_data), .ep_out_valid(rx_valid), .ep_out_busy(ep_out_busy),
        .mon_err(mesh_err));

    vector_core #(.X(1), .Y(1), .MAG_X(0), .MAG_Y(1), .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(core_in_data), .noc_in_valid(core_in_valid), .noc_in_busy(core_in_busy),
        .noc_out_data(core_out_data), .noc_out_valid(core_out_valid), .noc_out_busy(core_out_busy),
        .inst_space(inst_space), .busy(busy), .mon_err(core_err));
endmodule
`default_nettype wire
