// vc_link: the vector core's side of the link, behind cu_base (units.md V.11, V.12; protocol.md §4).
//
// Receive (everything cu_base hands on; one flit a cycle):
// * CU_DATA (V.12): one open burst {src, ptr, left}, framed by count. A
//   descriptor with buf != 0 or off + len >= 512 is rejected: its data is
//   counted out and dropped, no ack, F_CUDATA pending (`cud_set`). A data flit
//   from another source than the open burst's counts toward the open burst,
//   is dropped with the rest of that burst, and makes F_CUDATA pending. An
//   accepted burst writes L1[off + i] raw and, if flags[0], queues one
//   DATA_RECEIVED (code 0x03, arg = buf, txn 0, last 1) to {ack_y, ack_x}, or
//   to the source when that field is 0.
// * MEM_RD_RESP: the response to the VFILL request with txn t writes
//   L1[{bank[t], t}] (bit 8 of the L1 word is kept per outstanding txn) and
//   retires t. A response for a txn no fill is waiting for is a protocol
//   error of its sender: ERROR line, dropped.
// * every other type is taken and dropped (a note in the log).
// Send: the queued acknowledgements first, then the kernel's flits (VFILL
// requests, VDRAIN writes and CU_DATA) from a 2-deep queue, one output
// register held until cu_base takes it. `x_sent` counts the kernel's flits
// that have left.
// Monitors (ERROR + sticky mon_err): an inbound CU_DATA descriptor with
// last = 1 or a data flit whose last disagrees with its burst's count (the
// sender's fault); a stray MEM_RD_RESP; our own outbound flits: a CU_SIGNAL
// other than DATA_RECEIVED, a CU_DATA data flit beyond its descriptor's count
// or with a wrong last, MEM_WR_DATA without a MEM_WR_REQ (or a MEM_WR_REQ
// while data is owed), a fill issued on a txn still outstanding.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module vc_link #(
    parameter integer X = 1,
    parameter integer Y = 1
) (
    input  wire         clk,
    input  wire         resetn,
    // cu_base
    input  wire [287:0] recv_flit,
    input  wire         recv_valid,
    output wire         recv_ready,
    output reg  [287:0] send_flit,
    output reg          send_valid,
    input  wire         send_ready,
    // the kernel
    input  wire         x_push,
    input  wire [287:0] x_flit,
    output wire         xq_full,
    output wire [15:0]  x_sent,
    input  wire         fill_issue,
    input  wire [8:0]   fill_l1,         // the L1 word the issued request's response lands in
    output wire [8:0]   fills_out,       // responses still outstanding
    output wire         l1_we,
    output wire [8:0]   l1_wa,
    output wire [255:0] l1_wd,
    output wire         cud_set,
    output wire [31:0]  peer_words,      // L1 words written by accepted CU_DATA bursts
    output wire         mon_err
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] T_MEM_RD_RESP = 4'h2, T_MEM_WR_REQ = 4'h1, T_MEM_WR_DATA = 4'h4,
                     T_CU_SIGNAL = 4'h6, T_CU_DATA = 4'h8;
    localparam [7:0] SIG_DATA_RECEIVED = 8'h03;

    // ============================================================ receive
    wire [3:0]   r_type = recv_flit[`NOC_TYPE];
    wire [7:0]   r_src  = {recv_flit[`NOC_SRC_X], recv_flit[`NOC_SRC_Y]};   // {x, y}
    wire [7:0]   r_txn  = recv_flit[`NOC_TXN];
    wire         r_last = recv_flit[`NOC_LAST];
    wire [255:0] r_pl   = recv_flit[255:0];
    wire [7:0]   rd_buf = r_pl[255:248];
    wire [15:0]  rd_off = r_pl[247:232];
    wire [7:0]   rd_len = r_pl[231:224];
    wire         rd_sig = r_pl[216];
    wire [7:0]   rd_ack = r_pl[215:208];                                      // {ack_y, ack_x}
    wire [16:0]  rd_end = {1'b0, rd_off} + {9'd0, rd_len};
    wire         rd_bad = (rd_buf != 8'd0) || (rd_end >= 17'd512);

    wire ack_full, ack_empty;
    assign recv_ready = recv_valid && !ack_full;
    wire take = recv_ready;

    reg         b_open, b_drop, b_sig;
    reg [7:0]   b_src, b_dst, b_buf;
    reg [8:0]   b_left, b_ptr;
    reg         cud_set_r;
    reg [31:0]  peer_r;
    reg         r_err;
    reg [255:0] iss_t, ret_t;        // txn t outstanding = iss_t[t] ^ ret_t[t]
    reg         bank [0:255];
    reg [8:0]   outstanding;

    wire is_cud  = take && r_type == T_CU_DATA;
    wire c_desc  = is_cud && !b_open;
    wire c_data  = is_cud && b_open;
    wire c_alien = c_data && (r_src != b_src);
    wire c_write = c_data && !b_drop && !c_alien;
    wire c_close = c_data && (b_left == 9'd1);
    wire is_rsp  = take && r_type == T_MEM_RD_RESP;
    wire rsp_ok  = is_rsp && (iss_t[r_txn] != ret_t[r_txn]);

    assign l1_we = c_write || rsp_ok;
    assign l1_wa = rsp_ok ? {bank[r_txn], r_txn} : b_ptr;
    assign l1_wd = r_pl;
    assign cud_set = cud_set_r;
    assign peer_words = peer_r;
    assign fills_out = outstanding;

    wire         ack_push = c_close && b_sig && !c_alien;
    wire [15:0]  ack_din  = {b_dst, b_buf};
    wire [15:0]  ack_dout;
    wire         ack_pop, ack_err;
    noc_fifo #(.WIDTH(16), .DEPTH(4)) u_ackq (
        .clk(clk), .resetn(resetn), .push(ack_push), .din(ack_din), .pop(ack_pop),
        .dout(ack_dout), .empty(ack_empty), .full(ack_full), .mon_err(ack_err));

    always @(posedge clk) begin
        if (!resetn) begin
            b_open      <= 1'b0;
            b_drop      <= 1'b0;
            b_sig       <= 1'b0;
            cud_set_r   <= 1'b0;
            peer_r      <= 32'd0;
            r_err       <= 1'b0;
            ret_t       <= 256'd0;
            outstanding <= 9'd0;
        end else if (take || fill_issue || cud_set_r) begin   // (every change below needs one of them)
            cud_set_r <= 1'b0;
            if (c_desc) begin
                b_open <= 1'b1;
                b_src  <= r_src;
                b_left <= {1'b0, rd_len} + 9'd1;
                b_ptr  <= rd_off[8:0];
                b_drop <= rd_bad;
                b_sig  <= rd_sig && !rd_bad;
                b_dst  <= (rd_ack == 8'd0) ? r_src : {rd_ack[3:0], rd_ack[7:4]};   // {x, y}
                b_buf  <= rd_buf;
                if (rd_bad) begin
                    cud_set_r <= 1'b1;
                    $display("vector_core %m t=%0t: rejected a CU_DATA burst from (%0d,%0d): buf %0d off %0d len %0d (counted out, no ack, F_CUDATA pending)",
                             $time, r_src[7:4], r_src[3:0], rd_buf, rd_off, rd_len);
                end
                if (r_last) begin
                    $display("ERROR %m t=%0t: CU_DATA descriptor from (%0d,%0d) has last=1 (MUST be 0 on a descriptor): %h",
                             $time, r_src[7:4], r_src[3:0], recv_flit);
                    r_err <= 1'b1;
                end
            end
            if (c_data) begin
                b_ptr  <= b_ptr + 9'd1;
                b_left <= b_left - 9'd1;
                if (c_close) b_open <= 1'b0;
                if (c_write) peer_r <= peer_r + 32'd1;
                if (c_alien) begin
                    b_drop    <= 1'b1;
                    b_sig     <= 1'b0;
                    cud_set_r <= 1'b1;
                    $display("vector_core %m t=%0t: CU_DATA flit from (%0d,%0d) inside the open burst of (%0d,%0d): the rest of that burst is dropped, F_CUDATA pending",
                             $time, r_src[7:4], r_src[3:0], b_src[7:4], b_src[3:0]);
                end else if (r_last != c_close) begin
                    $display("ERROR %m t=%0t: CU_DATA data flit from (%0d,%0d) has last=%0d with %0d flit(s) of its burst left (the sender broke the count/last rule): %h",
                             $time, r_src[7:4], r_src[3:0], r_last, b_left, recv_flit);
                    r_err <= 1'b1;
                end
            end
            if (rsp_ok) ret_t[r_txn] <= ~ret_t[r_txn];
            outstanding <= outstanding + {8'd0, fill_issue} - {8'd0, rsp_ok};
            if (is_rsp && !rsp_ok) begin
                $display("ERROR %m t=%0t: MEM_RD_RESP txn %0d from (%0d,%0d) matches no outstanding VFILL request (dropped): %h",
                         $time, r_txn, r_src[7:4], r_src[3:0], recv_flit);
                r_err <= 1'b1;
            end
            if (take && !is_cud && !is_rsp)
                $display("vector_core %m t=%0t: dropped an inbound flit of type %0d (not consumed): %h",
                         $time, r_type, recv_flit);
        end
    end

    // fill issue: the txn's bank bit and its outstanding toggle
    always @(posedge clk) begin
        if (!resetn) begin
            iss_t <= 256'd0;            // bank[] is written at every issue before any response reads it
        end else if (fill_issue) begin
            iss_t[fill_l1[7:0]] <= ~iss_t[fill_l1[7:0]];
            bank[fill_l1[7:0]]  <= fill_l1[8];
        end
    end

    // ============================================================ send
    wire [287:0] xq_dout;
    wire         xq_empty, xq_err;
    reg          s_is_x;
    reg  [15:0]  x_sent_r;
    assign x_sent = x_sent_r;
    wire s_free = !send_valid || send_ready;
    assign ack_pop = s_free && !ack_empty;
    wire xq_pop = s_free && ack_empty && !xq_empty;
    noc_fifo #(.WIDTH(288), .DEPTH(2)) u_xq (
        .clk(clk), .resetn(resetn), .push(x_push), .din(x_flit), .pop(xq_pop),
        .dout(xq_dout), .empty(xq_empty), .full(xq_full), .mon_err(xq_err));

    wire [287:0] ack_flit = {ack_dout[15:12], ack_dout[11:8], X4, Y4, T_CU_SIGNAL, 8'd0, 1'b1, 3'b000,
                             SIG_DATA_RECEIVED, 24'd0, ack_dout[7:0], 216'd0};
    always @(posedge clk) begin
        if (!resetn) begin
            send_valid <= 1'b0;
            send_flit  <= 288'd0;
            s_is_x     <= 1'b0;
            x_sent_r   <= 16'd0;
        end else if (send_valid || !ack_empty || !xq_empty) begin
            if (send_valid && send_ready && s_is_x) x_sent_r <= x_sent_r + 16'd1;
            if (s_free) begin
                if (!ack_empty) begin
                    send_flit  <= ack_flit;
                    send_valid <= 1'b1;
                    s_is_x     <= 1'b0;
                end else if (!xq_empty) begin
                    send_flit  <= xq_dout;
                    send_valid <= 1'b1;
                    s_is_x     <= 1'b1;
                end else begin
                    send_valid <= 1'b0;
                end
            end
        end
    end

    // ============================================================ outbound monitor (our own MUSTs)
    wire        s_go   = send_valid && send_ready;
    wire [3:0]  s_type = send_flit[`NOC_TYPE];
    reg  [8:0]  o_cd_left;    // CU_DATA data flits still owed by the open outbound burst
    reg  [8:0]  o_wr_left;    // MEM_WR_DATA still owed
    reg         o_err;
    always @(posedge clk) begin
        if (!resetn) begin
            o_cd_left <= 9'd0;
            o_wr_left <= 9'd0;
            o_err     <= 1'b0;
        end else if (fill_issue || s_go) begin
            if (fill_issue && iss_t[fill_l1[7:0]] != ret_t[fill_l1[7:0]]) begin
                $display("ERROR %m t=%0t: VFILL request issued on txn %0d while its previous request is outstanding",
                         $time, fill_l1[7:0]);
                o_err <= 1'b1;
            end
            if (s_go) begin
                if (s_type == T_CU_SIGNAL && send_flit[255:248] != SIG_DATA_RECEIVED) begin
                    $display("ERROR %m t=%0t: the unit sent CU_SIGNAL code %0d itself (only cu_base sends completions): %h",
                             $time, send_flit[255:248], send_flit);
                    o_err <= 1'b1;
                end
                if (s_type == T_CU_DATA) begin
                    if (o_cd_left == 9'd0) begin
                        o_cd_left <= {1'b0, send_flit[231:224]} + 9'd1;
                        if (send_flit[`NOC_LAST]) begin
                            $display("ERROR %m t=%0t: outbound CU_DATA descriptor with last=1: %h", $time, send_flit);
                            o_err <= 1'b1;
                        end
                    end else begin
                        o_cd_left <= o_cd_left - 9'd1;
                        if (send_flit[`NOC_LAST] != (o_cd_left == 9'd1)) begin
                            $display("ERROR %m t=%0t: outbound CU_DATA data flit with last=%0d and %0d flit(s) owed: %h",
                                     $time, send_flit[`NOC_LAST], o_cd_left, send_flit);
                            o_err <= 1'b1;
                        end
                    end
                end
                if (s_type == T_MEM_WR_REQ) begin
                    if (o_wr_left != 9'd0) begin
                        $display("ERROR %m t=%0t: MEM_WR_REQ while %0d MEM_WR_DATA of the previous write are owed",
                                 $time, o_wr_left);
                        o_err <= 1'b1;
                    end
                    o_wr_left <= {1'b0, send_flit[215:208]} + 9'd1;
                end
                if (s_type == T_MEM_WR_DATA) begin
                    if (o_wr_left == 9'd0) begin
                        $display("ERROR %m t=%0t: MEM_WR_DATA with no open MEM_WR_REQ: %h", $time, send_flit);
                        o_err <= 1'b1;
                    end else begin
                        o_wr_left <= o_wr_left - 9'd1;
                    end
                end
            end
        end
    end

    assign mon_err = r_err | o_err | ack_err | xq_err;
endmodule
`default_nettype wire
