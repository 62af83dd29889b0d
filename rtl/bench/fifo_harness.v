// Bench top for noc_fifo alone: Python drives push/pop directly (a deliberately
// careless writer and reader) to prove the FIFO's monitor fires. Short runs only.
`default_nettype none
`timescale 1ns/1ps
module fifo_harness #(
    parameter integer DEPTH = 4
) ();
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    reg          push = 1'b0;
    reg          pop  = 1'b0;
    reg  [287:0] din  = 288'd0;
    /* verilator lint_off UNUSEDSIGNAL */  // outputs read by Python
    wire [287:0] dout;
    wire         empty;
    wire         full;
    wire         mon_err;
    /* verilator lint_on UNUSEDSIGNAL */

    noc_fifo #(.WIDTH(288), .DEPTH(DEPTH)) u_dut (
        .clk(clk), .resetn(resetn), .push(push), .din(din), .pop(pop),
        .dout(dout), .empty(empty), .full(full), .mon_err(mon_err));
endmodule
`default_nettype wire
