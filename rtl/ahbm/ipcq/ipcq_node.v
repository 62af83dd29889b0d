// The IPCQ of one PE: four queue pairs, directions N=0, E=1, S=2, W=3.
// Each pair is an outgoing push port (wired by ipcq_mesh straight to the
// neighbour's incoming queue) and an incoming queue (an ipcq instance held
// here) with its pop port and pkt_avail status. Port index = direction.
`default_nettype none
`timescale 1ns/1ps
module ipcq_node #(
    parameter integer W     = 64,
    parameter integer DEPTH = 16
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [31:0]  depth,      // run-time capacity of each queue, 1..DEPTH (ipcq)
    // link side: words arriving from the neighbour in direction d
    input  wire [3:0]   in_valid,
    output wire [3:0]   in_ready,
    input  wire [W-1:0] in_data_n,
    input  wire [W-1:0] in_data_e,
    input  wire [W-1:0] in_data_s,
    input  wire [W-1:0] in_data_w,
    input  wire [3:0]   in_last,
    // PE side: pop port and status of the queue from direction d
    output wire [3:0]   pop_valid,
    input  wire [3:0]   pop_ready,
    output wire [W-1:0] pop_data_n,
    output wire [W-1:0] pop_data_e,
    output wire [W-1:0] pop_data_s,
    output wire [W-1:0] pop_data_w,
    output wire [3:0]   pop_last,
    output wire [3:0]   pop_avail,
    output wire         mon_err
);
    // one named data port per direction (Icarus cannot bind a slice of an
    // unpacked array to an array port); indexed copies for the generate loop
    wire [W-1:0] in_data  [0:3];
    wire [W-1:0] pop_data [0:3];
    assign in_data[0] = in_data_n;
    assign in_data[1] = in_data_e;
    assign in_data[2] = in_data_s;
    assign in_data[3] = in_data_w;
    assign pop_data_n = pop_data[0];
    assign pop_data_e = pop_data[1];
    assign pop_data_s = pop_data[2];
    assign pop_data_w = pop_data[3];
    wire [3:0] q_err;
    genvar d;
    generate
        for (d = 0; d < 4; d = d + 1) begin : g_q
            ipcq #(.W(W), .DEPTH(DEPTH)) u_q (
                .clk(clk), .resetn(resetn), .depth(depth),
                .in_valid(in_valid[d]), .in_ready(in_ready[d]), .in_data(in_data[d]), .in_last(in_last[d]),
                .out_valid(pop_valid[d]), .out_ready(pop_ready[d]), .out_data(pop_data[d]),
                .out_last(pop_last[d]), .pkt_avail(pop_avail[d]), .mon_err(q_err[d]));
        end
    endgenerate
    assign mon_err = |q_err;
endmodule
`default_nettype wire
