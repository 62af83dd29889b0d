// The cluster's write port: a DRAIN's granules, or an emitting GEMM's, as bursts of at most
// WBURST = 8 granules (protocol.md §4, §6; units.md C.6), at the upstream cluster's pace (KohakuTPU
// 7703ee8 mx_cluster_cu.v, the result write-back: two 8-entry banks, one collected while the other
// is sent; a burst is one descriptor then its data, one flit a cycle). Instantiated by cluster_cu.v,
// which owns the send register (has_flit/flit/load); the granules come from the drain queue
// (cl_drain.v: head_*, take). models/cluster/flits.py write_port predicts the same flits.
//
// start (one cycle) opens a transfer of `gran` granules and latches its destination from ip (the
// same positions for GEMM and DRAIN): addr {[68:63],[251:218]}, dnode, dst, dbuf, dflags, dack.
//   dnode 0: MEM_WR_REQ {addr + 32*q_first, len = k-1} (last 0) to (MAG_X, MAG_Y), then k MEM_WR_DATA
//     (last on the k-th): one write open at a time;
//   dnode 1: CU_DATA descriptor {dbuf, addr[20:5] + q_first, k-1, dflags, dack_y, dack_x} (last 0)
//     to (dst_x, dst_y), then k data flits.
// q counts granules (head_idx); txn of every flit = the burst's index in the transfer mod 256.
// Timing (upstream's): a granule is collected the cycle it is readable at the head, unless the
// collecting bank is full; a bank is handed to the sender when it is full, or when the source says
// no more granules come (`more` low, cl_drain.v) with granules in it; the hand-over takes the cycle
// the sender is idle, the descriptor and each data flit one cycle each once the send register
// can take them: 10 cycles per full burst. idle: nothing collected and no burst being sent.
`default_nettype none
`timescale 1ns/1ps
module cl_wport #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         start,
    input  wire [9:0]   gran,
    input  wire [255:0] ip,
    input  wire         head_valid,
    input  wire [255:0] head_data,
    input  wire [15:0]  head_idx,
    input  wire         more,
    output wire         take,
    output wire         has_flit,
    output reg  [287:0] flit,
    input  wire         load,          // the send register takes `flit` this cycle
    output wire         idle,
    output wire [15:0]  expected       // flits of the transfer (granules + bursts), for the monitors
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] MX4 = MAG_X[3:0];
    localparam [3:0] MY4 = MAG_Y[3:0];
    localparam [3:0] T_WR_REQ = 4'h1, T_WR_DATA = 4'h4, T_CU_DATA = 4'h8;
    localparam [3:0] WBURST = 4'd8;
    localparam [1:0] W_IDLE = 2'd0, W_REQ = 2'd1, W_DATA = 2'd2;

    // the transfer's destination
    reg [39:0] addr;
    reg        dnode;
    reg [3:0]  dst_x, dst_y, dack_y, dack_x;
    reg [7:0]  dbuf, dflags;
    reg [15:0] n_expect;

    // collector: two banks of WBURST granules
    reg [255:0] bank [0:2*WBURST-1];
    reg         cb, sb;            // bank being collected / sent
    reg [3:0]   fill;              // granules in the collecting bank
    reg [15:0]  cfirst, sfirst;    // granule index of each bank's first granule
    // sender
    reg [1:0]   st;
    reg [3:0]   len, snd;          // beats of the burst being sent, which one is next
    reg [7:0]   burst;

    wire full  = fill == WBURST;
    wire flush = fill != 4'd0 && (full || !more);
    wire hand  = st == W_IDLE && flush;
    assign take     = head_valid && !full;
    assign has_flit = st != W_IDLE;
    assign idle     = st == W_IDLE && fill == 4'd0;
    assign expected = n_expect;

    wire        dlast = snd + 4'd1 == len;
    wire [7:0]  dlen  = {4'd0, len} - 8'd1;
    wire [39:0] maddr = addr + {19'd0, sfirst, 5'd0};
    wire [15:0] goff  = addr[20:5] + sfirst;
    wire [255:0] data = bank[{sb, snd[2:0]}];
    always @* begin
        if (!dnode) begin
            if (st == W_REQ) flit = {MX4, MY4, X4, Y4, T_WR_REQ, burst, 1'b0, 3'b000, maddr, dlen, 208'd0};
            else             flit = {MX4, MY4, X4, Y4, T_WR_DATA, burst, dlast, 3'b000, data};
        end else begin
            if (st == W_REQ) flit = {dst_x, dst_y, X4, Y4, T_CU_DATA, burst, 1'b0, 3'b000,
                                     dbuf, goff, dlen, dflags, dack_y, dack_x, 208'd0};
            else             flit = {dst_x, dst_y, X4, Y4, T_CU_DATA, burst, dlast, 3'b000, data};
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            st <= W_IDLE;
            fill <= 4'd0;
            cb <= 1'b0;
            sb <= 1'b0;
            burst <= 8'd0;
            n_expect <= 16'd0;
        end else begin
            if (start) begin
                addr     <= {ip[68:63], ip[251:218]};
                dnode    <= ip[111];
                dst_x    <= ip[110:107];
                dst_y    <= ip[106:103];
                dbuf     <= ip[102:95];
                dflags   <= ip[94:87];
                dack_y   <= ip[86:83];
                dack_x   <= ip[82:79];
                n_expect <= {6'd0, gran} + ({6'd0, gran} + 16'd7) / 16'd8;
                burst    <= 8'd0;
            end
            // collection runs every cycle there is room, into the bank the sender does not hold
            if (take) begin
                bank[{cb, fill[2:0]}] <= head_data;
                if (fill == 4'd0) cfirst <= head_idx;
                fill <= fill + 4'd1;
            end else if (hand) begin
                cb   <= ~cb;
                fill <= 4'd0;
            end
            case (st)
                W_IDLE: if (hand) begin
                    sb     <= cb;
                    len    <= fill;
                    sfirst <= cfirst;
                    snd    <= 4'd0;
                    st     <= W_REQ;
                end
                W_REQ: if (load) st <= W_DATA;
                W_DATA: if (load) begin
                    if (dlast) begin
                        st    <= W_IDLE;
                        burst <= burst + 8'd1;
                    end else begin
                        snd <= snd + 4'd1;
                    end
                end
                default: st <= W_IDLE;
            endcase
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, ip[255:252], ip[217:112], ip[78:69], ip[62:0], addr[39:21]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
