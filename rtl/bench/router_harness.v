// Bench top: one noc_router, alone, with a hostile bench endpoint on each of its
// five ports. The router sits at (1,1) of a 1x1 grid, so bench port indices
// follow the mesh index space (models/noc/mesh.py): 0 Local (1,1), 1 North (1,0),
// 2 South (1,2), 3 West (0,1), 4 East (2,1).
// PORT_EDGE = 0 on a port makes the router treat it as facing a neighbouring
// router (used to prove the impossible-turn monitor fires).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module router_harness #(
    parameter integer FIFO_DEPTH = 4,
    parameter [4:0]   PORT_EDGE = 5'b11111,
    parameter integer INJ_DEPTH = 65536,
    parameter integer CAP_DEPTH = 65536
) ();
    localparam integer W = 288;
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    wire [W-1:0]   tx_data [0:4];
    wire           tx_valid [0:4];
    wire           tx_busy  [0:4];
    wire [W-1:0]   rx_data [0:4];
    wire           rx_valid [0:4];
    wire           rx_busy  [0:4];
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire           mon_err;
    /* verilator lint_on UNUSEDSIGNAL */

    tb_ep_bank #(.NP(5), .PRESENT(64'h1f), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn), .unit_busy(1'b0),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    // bench port index -> router port
    wire [W-1:0]   r_in_data [0:4];
    wire [4:0]     r_in_valid;
    wire [4:0]     r_in_busy;
    wire [W-1:0]   r_out_data [0:4];
    wire [4:0]     r_out_valid;
    wire [4:0]     r_out_busy;

    genvar b;
    generate
        for (b = 0; b < 5; b = b + 1) begin : g_map
            localparam integer RP = (b == 0) ? `NOC_PORT_L : (b == 1) ? `NOC_PORT_N :
                                    (b == 2) ? `NOC_PORT_S : (b == 3) ? `NOC_PORT_W : `NOC_PORT_E;
            assign r_in_data[RP]       = tx_data[b];
            assign r_in_valid[RP]       = tx_valid[b];
            assign tx_busy[b]           = r_in_busy[RP];
            assign rx_data[b]           = r_out_data[RP];
            assign rx_valid[b]          = r_out_valid[RP];
            assign r_out_busy[RP]       = rx_busy[b];
        end
    endgenerate

    noc_router #(.X(1), .Y(1), .NX(1), .NY(1), .FIFO_DEPTH(FIFO_DEPTH),
                 .PORT_PRESENT(5'b11111), .PORT_EDGE(PORT_EDGE)) u_dut (
        .clk(clk), .resetn(resetn),
        .in_data(r_in_data), .in_valid(r_in_valid), .in_busy(r_in_busy),
        .out_data(r_out_data), .out_valid(r_out_valid), .out_busy(r_out_busy),
        .mon_err(mon_err));
endmodule
`default_nettype wire
