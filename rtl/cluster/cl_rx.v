// The cluster's CU_DATA receiver (protocol.md §4): one open burst framed by
// count, the range checks, the ADD_PEER pair staging and the acknowledgement
// queue. Instantiated by cluster_cu.v, which owns L1 and the accumulator:
// this module says what to write (l1_*, peer_*) and what to send (ack_*);
// models/cluster/core.py predicts the same.
//
// flit/take: a CU_DATA flit the sequencer takes from the receive FIFO this
// cycle. With no burst open it is a descriptor: buf [255:248], off [247:232],
// len [231:224], flags [223:216] (bit 0: acknowledge), ack_y [215:212],
// ack_x [211:208]. Rejected (counted out and dropped, never wrapped): a buf
// other than 0, 1, 2; off+len past the buffer (granule 2047 of L1A/L1B, 511
// of buf 2); for buf 2 an odd off or an odd granule count. A CU_DATA from
// another source while a burst is open is dropped and rejects the open burst.
// Data of an accepted burst: buf 0/1 -> l1_we at granule off (entry off[10:2],
// word off[1:0]); buf 2 -> granule pairs (off even, off+1) -> one peer pair
// for tile off/2 (peer_pend until the accumulator engine takes it with
// peer_take). The burst's last data flit queues one DATA_RECEIVED (code 0x03,
// arg = buf, txn = the descriptor's, last 1) when flags[0], to {ack_y,ack_x}
// or the descriptor's source when that is 0 - also for a rejected burst.
// stall: the sequencer must not take `flit` this cycle (the ack queue is full,
// or the second half of a peer pair meets one still pending).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cl_rx #(
    parameter integer X = 1,
    parameter integer Y = 1
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] flit,
    input  wire         is_cu_data,    // flit is a CU_DATA (the receive FIFO's head)
    input  wire         take,          // flit is taken this cycle (a CU_DATA)
    output wire         stall,
    output wire         l1_we,
    output wire         l1_side,
    output wire [10:0]  l1_gran,
    output reg          peer_pend,
    output reg  [7:0]   peer_tile,
    output reg  [351:0] peer_val,
    input  wire         peer_take,
    output wire         ack_valid,
    output wire [287:0] ack_flit,
    input  wire         ack_pop,
    output wire         burst_acked,   // a burst that asked for an ack has ended this cycle
    output wire         dropped,       // an interleaved CU_DATA was dropped this cycle
    output wire         rejected,      // a rejected burst has ended this cycle
    output wire         landed         // a granule of an accepted burst was applied this cycle
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] T_SIGNAL = 4'h6;

    wire [3:0]  sx = flit[`NOC_SRC_X];
    wire [3:0]  sy = flit[`NOC_SRC_Y];
    reg         open_, bad;
    reg [3:0]   bsx, bsy, ax, ay;
    reg [7:0]   buf_id, txn;
    reg         sig;
    reg [15:0]  off;
    reg [8:0]   left;
    reg [255:0] peer_lo;

    wire [7:0]  d_buf = flit[255:248];
    wire [15:0] d_off = flit[247:232];
    wire [7:0]  d_len = flit[231:224];
    wire [16:0] d_end = {1'b0, d_off} + {9'd0, d_len};
    wire        d_ok  = (d_buf == 8'd0 || d_buf == 8'd1) ? (d_end < 17'd2048) :
                        (d_buf == 8'd2) ? (!d_off[0] && d_len[0] && d_end < 17'd512) : 1'b0;
    wire        mine  = open_ && sx == bsx && sy == bsy;
    wire        data  = take && mine;
    wire        ending = data && left == 9'd1;

    // acks waiting for the send register: {x, y, txn, buf}
    reg [23:0]  ackq [0:3];
    reg [1:0]   rd, wr;
    reg [2:0]   cnt;
    wire        full = cnt == 3'd4;
    wire        peer_stall = is_cu_data && mine && !bad && buf_id == 8'd2 && off[0] && peer_pend;
    assign stall = is_cu_data && (full || peer_stall);

    assign l1_we       = data && !bad && buf_id != 8'd2;
    assign l1_side     = buf_id[0];
    assign l1_gran     = off[10:0];
    assign burst_acked = ending && sig;
    assign dropped     = take && open_ && !mine;
    assign rejected    = ending && bad;
    assign landed      = data && !bad;
    wire [23:0] head   = ackq[rd];
    assign ack_valid   = cnt != 3'd0;
    assign ack_flit    = {head[23:20], head[19:16], X4, Y4, T_SIGNAL, head[15:8], 1'b1, 3'b000,
                          8'h03, 24'd0, head[7:0], 216'd0};

    function automatic [351:0] unpack_pair(input [255:0] lo, input [255:0] hi);
        integer e;
        begin
            for (e = 0; e < 8; e = e + 1) begin
                unpack_pair[e*22 +: 22]     = lo[e*32 +: 22];
                unpack_pair[(8+e)*22 +: 22] = hi[e*32 +: 22];
            end
        end
    endfunction

    always @(posedge clk) begin
        if (!resetn) begin
            open_ <= 1'b0;
            bad <= 1'b0;
            peer_pend <= 1'b0;
            rd <= 2'd0;
            wr <= 2'd0;
            cnt <= 3'd0;
        end else begin
            if (peer_take) peer_pend <= 1'b0;
            if (take && !open_) begin
                open_  <= 1'b1;
                bsx    <= sx;
                bsy    <= sy;
                buf_id <= d_buf;
                off    <= d_off;
                left   <= {1'b0, d_len} + 9'd1;
                sig    <= flit[216];
                txn    <= flit[`NOC_TXN];
                ay     <= (flit[215:208] == 8'd0) ? sy : flit[215:212];
                ax     <= (flit[215:208] == 8'd0) ? sx : flit[211:208];
                bad    <= !d_ok;
                if (!d_ok)
                    $display("cluster_cu %m t=%0t: note: CU_DATA burst from (%0d,%0d) rejected (buf %0d off %0d len %0d); its %0d data flits are counted out and dropped",
                             $time, sx, sy, d_buf, d_off, d_len, d_len + 8'd1);
                if (flit[`NOC_LAST])
                    $display("cluster_cu %m t=%0t: note: CU_DATA descriptor from (%0d,%0d) has last=1 (a sender's rule)",
                             $time, sx, sy);
            end else if (dropped) begin
                bad <= 1'b1;
                $display("cluster_cu %m t=%0t: note: CU_DATA from (%0d,%0d) while a burst from (%0d,%0d) is open: dropped, and the open burst is rejected",
                         $time, sx, sy, bsx, bsy);
            end else if (data) begin
                if (!bad && buf_id == 8'd2) begin
                    if (!off[0]) begin
                        peer_lo <= flit[255:0];
                    end else begin
                        peer_val  <= unpack_pair(peer_lo, flit[255:0]);
                        peer_tile <= off[8:1];
                        peer_pend <= 1'b1;
                    end
                end
                if (flit[`NOC_LAST] != (left == 9'd1))
                    $display("cluster_cu %m t=%0t: note: CU_DATA from (%0d,%0d) has last=%0d with %0d data flits still due (a sender's rule)",
                             $time, sx, sy, flit[`NOC_LAST], left);
                off  <= off + 16'd1;
                left <= left - 9'd1;
                if (ending) begin
                    open_ <= 1'b0;
                    if (sig) begin
                        ackq[wr] <= {ax, ay, txn, buf_id};
                        wr <= wr + 2'd1;
                    end
                end
            end
            if (ack_pop) rd <= rd + 2'd1;
            case ({burst_acked, ack_pop})
                2'b10:   cnt <= cnt + 3'd1;
                2'b01:   cnt <= cnt - 3'd1;
                default: cnt <= cnt;
            endcase
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, flit[287:268], flit[258:256], flit[223:217], off[15:11]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
