// The cluster's write port: a DRAIN's sub-tiles, or an emitting GEMM's, as
// bursts of at most WBURST = 8 granules (protocol.md §4, §6; units.md C.6).
// Instantiated by cluster_cu.v, which owns the accumulator (read through
// rd_tile/rd_val) and the send register (has_flit/flit/load, sent);
// models/cluster/flits.py write_port predicts the same flits.
//
// start (one cycle) with n_tiles (1..256) and mode: send_mode (OP_SEND, a
// node drain into buf 2: two granules per sub-tile, lanes 8h..8h+7 of granule
// h at [(e%8)*32 +: 22], other bits 0) or OP_EMIT (one FP16 granule per
// sub-tile, cl_emit). Destination fields from ip (the same positions for
// GEMM and DRAIN): addr {[68:63],[251:218]}, dnode, dst, dbuf, dflags, dack.
//   dnode 0: MEM_WR_REQ {addr + 32*q_first, len = k-1} (last 0) to (MAG_X,
//     MAG_Y), then k MEM_WR_DATA (last on the k-th): one write open at a time;
//   dnode 1: CU_DATA descriptor {dbuf, addr[20:5] + q_first, k-1, dflags,
//     dack_y, dack_x} (last 0) to (dst_x, dst_y), then k data flits.
// q counts granules; txn of every flit = the burst's index mod 256. Bursts are
// full except the last (the data is resident). done (one cycle) once every
// flit has been taken by cu_base (sent): the port closes at that edge.
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
    input  wire         send_mode,
    input  wire [8:0]   n_tiles,
    input  wire [255:0] ip,
    output wire [7:0]   rd_tile,
    input  wire [351:0] rd_val,
    output wire         has_flit,
    output reg  [287:0] flit,
    input  wire         load,          // the send register takes `flit` this cycle
    input  wire         sent,          // the send register's write-port flit left this cycle
    output reg          active,
    output wire         done,
    output wire [15:0]  expected       // flits this transfer sends (granules + bursts), for the monitors
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] MX4 = MAG_X[3:0];
    localparam [3:0] MY4 = MAG_Y[3:0];
    localparam [3:0] T_WR_REQ = 4'h1, T_WR_DATA = 4'h4, T_CU_DATA = 4'h8;

    wire [39:0] addr   = {ip[68:63], ip[251:218]};
    wire        dnode  = ip[111];
    wire [3:0]  dst_x  = ip[110:107];
    wire [3:0]  dst_y  = ip[106:103];
    wire [7:0]  dbuf   = ip[102:95];
    wire [7:0]  dflags = ip[94:87];
    wire [3:0]  dack_y = ip[86:83];
    wire [3:0]  dack_x = ip[82:79];

    reg         send, desc, loaded_all;
    reg [9:0]   q, total, bend;      // granule index, total granules, end of the burst
    reg [7:0]   burst;
    reg [15:0]  n_sent, n_expect;
    reg [351:0] val;                 // the sub-tile of granule q

    function automatic [255:0] send_half(input [351:0] v, input hi);
        integer e;
        begin
            send_half = 256'd0;
            for (e = 0; e < 8; e = e + 1)
                send_half[e*32 +: 22] = v[(8*(hi ? 1 : 0) + e)*22 +: 22];
        end
    endfunction

    wire [255:0] emit_out;
    cl_emit u_emit (.acc(val), .fp16(emit_out));

    wire [9:0]  nq     = q + 10'd1;
    wire [8:0]  nt     = send ? nq[9:1] : nq[8:0];   // sub-tile of the next granule
    wire [8:0]  t_now  = send ? q[9:1] : q[8:0];
    wire [9:0]  left   = total - q;
    wire [9:0]  blen   = (left > 10'd8) ? 10'd8 : left;
    wire [15:0] goff   = addr[20:5] + {6'd0, q};
    wire [39:0] maddr  = addr + {25'd0, q, 5'd0};
    wire        dlast  = (nq == bend);
    wire [255:0] data  = send ? send_half(val, q[0]) : emit_out;
    wire [9:0]  gran   = send_mode ? {n_tiles, 1'b0} : {1'b0, n_tiles};
    assign rd_tile  = start ? 8'd0 : nt[7:0];
    assign has_flit = active && !loaded_all;
    assign done     = active && n_sent == n_expect;
    assign expected = n_expect;

    always @* begin
        if (!dnode) begin
            if (desc) flit = {MX4, MY4, X4, Y4, T_WR_REQ, burst, 1'b0, 3'b000, maddr, blen[7:0] - 8'd1, 208'd0};
            else      flit = {MX4, MY4, X4, Y4, T_WR_DATA, burst, dlast, 3'b000, data};
        end else begin
            if (desc) flit = {dst_x, dst_y, X4, Y4, T_CU_DATA, burst, 1'b0, 3'b000,
                              dbuf, goff, blen[7:0] - 8'd1, dflags, dack_y, dack_x, 208'd0};
            else      flit = {dst_x, dst_y, X4, Y4, T_CU_DATA, burst, dlast, 3'b000, data};
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            active <= 1'b0;
            loaded_all <= 1'b0;
            desc <= 1'b1;
            n_sent <= 16'd0;
            n_expect <= 16'd0;
        end else if (start) begin
            active     <= 1'b1;
            send       <= send_mode;
            total      <= gran;
            n_expect   <= {6'd0, gran} + ({6'd0, gran} + 16'd7) / 16'd8;
            n_sent     <= 16'd0;
            q          <= 10'd0;
            desc       <= 1'b1;
            burst      <= 8'd0;
            val        <= rd_val;
            loaded_all <= 1'b0;
        end else begin
            if (sent) n_sent <= n_sent + 16'd1;
            if (done) active <= 1'b0;
            if (load) begin
                if (desc) begin
                    desc <= 1'b0;
                    bend <= q + blen;
                end else begin
                    q <= nq;
                    if (dlast) begin
                        desc  <= 1'b1;
                        burst <= burst + 8'd1;
                    end
                    if (nt != t_now && nt < 9'd256) val <= rd_val;
                    if (nq == total) loaded_all <= 1'b1;
                end
            end
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, ip[255:252], ip[217:112], ip[78:69], ip[62:0], maddr[4:0], addr[39:21], nt[8]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
