// Bench top: an NX x NY noc_mesh with a bench endpoint on every port.
// Python drives it through u_bank (tb/lib/harness.py, EndpointBank) and u_clk.
`default_nettype none
`timescale 1ns/1ps
module mesh_harness #(
    parameter integer NX = 2,
    parameter integer NY = 2,
    parameter integer FIFO_DEPTH = 4,
    parameter [63:0]  EDGE_MASK = 64'h0,
    parameter integer INJ_DEPTH = 65536,
    parameter integer CAP_DEPTH = 65536
) ();
    localparam integer NR = NX*NY;
    localparam integer NP = NR + 2*NX + 2*NY;
    // Local endpoints always exist; edge endpoints where EDGE_MASK says so.
    localparam [63:0] PRESENT = ({64{1'b1}} >> (64 - NR)) | (EDGE_MASK << NR);

    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    wire [287:0]      tx_data [0:NP-1];
    wire              tx_valid [0:NP-1];
    wire              tx_busy  [0:NP-1];
    wire [287:0]      rx_data [0:NP-1];
    wire              rx_valid [0:NP-1];
    wire              rx_busy  [0:NP-1];
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire              mon_err;
    /* verilator lint_on UNUSEDSIGNAL */

    tb_ep_bank #(.NP(NP), .PRESENT(PRESENT), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn), .unit_busy(1'b0),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    noc_mesh #(.NX(NX), .NY(NY), .FIFO_DEPTH(FIFO_DEPTH), .EDGE_MASK(EDGE_MASK)) u_dut (
        .clk(clk), .resetn(resetn),
        .ep_in_data(tx_data), .ep_in_valid(tx_valid), .ep_in_busy(tx_busy),
        .ep_out_data(rx_data), .ep_out_valid(rx_valid), .ep_out_busy(rx_busy),
        .mon_err(mon_err));
endmodule
`default_nettype wire
