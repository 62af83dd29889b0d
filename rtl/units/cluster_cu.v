// Cluster CU (cu_type 'MG'): int7 x int7 matmul with E5M3 block scales into a
// resident S1E7M14 accumulator tile, behind the shared endpoint base cu_base.
// Protocol: spec section 6 (instruction), section 4 (CU_DATA, acks), section 5
// (memory). Everything inside is ours and documented here and in
// docs/cluster.md; models/cluster.py predicts every flit bit for bit.
//
// CU_INST payload (every field at its fixed position under every opcode):
//   op [255:252] 1 FILL, 2 GEMM, 3 DRAIN; addr {[68:63],[251:218]} (bytes);
//   n [217:202] (0 reads as 1); sel [201]; acc [200]; gm [199:192];
//   gn [191:184]; nk [183:176]; anchor [175:168]; eoff [140:133];
//   aoff [132:125]; boff [124:117]; emit [116]; fuse [115]; dnode [111];
//   dst_x [110:107]; dst_y [106:103]; dbuf [102:95]; dflags [94:87];
//   dack_y [86:83]; dack_x [82:79]; dmesh [78:77]; dfin [76:69].
//   gm, gn and nk of 0 read as 1 (like n).
//
// Storage: L1A and L1B, 512 entries x 4 granules each (2048 x 256 bit per
// side, the reach of CU_DATA's entry = off[10:2], word = off[1:0]);
// accumulator 256 sub-tiles x 16 S1E7M14. Reset does not clear them (they
// read as zero from time 0 until first written).
//
// FILL: one MEM_RD_REQ to the memory agent (MAG_X, MAG_Y): STREAM, count n,
//   entry_words 4, len 3, txn = eoff, addr = full byte address, last 1. Each
//   MEM_RD_RESP is written at entry txn, word rsvd[1:0] of L1A (sel 0) or L1B
//   (sel 1); FILL retires when 4n response words arrived. Responses are
//   placed by their tags, never by arrival order. A response outside the
//   running FILL's window (or with no FILL running) is dropped with a note.
//   Faults F_FILL_RANGE when n > 255 or eoff + n > 256 (the 8-bit txn tag
//   would wrap and alias entries), before any request.
// GEMM: for kb < nk: for g < gm: for h < gn: L1A[aoff+g*nk+kb],
//   L1B[boff+h*nk+kb] -> tile g*gn+h, LOAD when kb==0 && !acc else ADD.
//   Faults F_GEMM_RANGE when gm*gn > 256 or an L1 index would pass entry 511
//   (aoff + gm*nk > 512, boff + gn*nk > 512): nothing is computed, nothing
//   wraps. Two cycles per sub-tile command; retires when the last is written.
//   anchor is applied as cl_mac.v documents (the arithmetic of rtl/arith); emit is accepted and needs
//   nothing more (the tile holds the same final values an ADD_EMIT would have
//   handed out).
// DRAIN: n sub-tiles, t = 0..n-1 in tile order (t = g*gn + h of the sweep).
//   Faults F_DRAIN_RANGE when n > 256, F_REMOTE when dmesh != 0 (remote-mesh
//   drains are not modelled). fuse is accepted and drains like a plain DRAIN.
//   dnode=0: OP_EMIT to memory at (MAG_X, MAG_Y): bursts of 8 sub-tiles, each
//     MEM_WR_REQ {addr + 32*t_first, len = k-1} then k MEM_WR_DATA (last on
//     the k-th); one write open at a time.
//   dnode=1: CU_DATA bursts of at most WBURST = 8 granules to (dst_x, dst_y),
//     descriptor {buf=dbuf, off=addr[20:5]+q_first, len=k-1, flags=dflags,
//     ack={dack_y,dack_x}}, last 0; data last on the k-th. q counts granules:
//     OP_EMIT (dbuf != 2): one FP16 granule per sub-tile (q = t);
//     OP_SEND (dbuf == 2): the accumulator's own format, two granules per
//     sub-tile (q = 2t, 2t+1): granule h carries elements 8h..8h+7, element
//     e at [(e%8)*32 +: 22], the other bits 0.
//   txn of every drain flit = the burst's index (low 8 bits).
//   Retires when the last flit has been taken by cu_base (has left the CU),
//   never when it lands.
// CU_DATA receive (one open burst, framed by count): buf 0 L1A, 1 L1B
//   (granule off -> linear word off[10:0]), 2 the accumulator (ADD_PEER: each
//   granule pair off, off+1 with off even adds into tile off/2). Rejected
//   (counted out and dropped, never wrapped): any other buf, off+len past
//   the buffer (2047 granules for L1, 511 for buf 2), and for buf 2 an odd
//   off or an odd granule count. A CU_DATA from another source while a burst
//   is open is dropped and rejects the open burst. Ack: if flags[0], one
//   CU_SIGNAL DATA_RECEIVED (0x03, arg = buf_id, txn = the descriptor's) per
//   burst after its last data flit, to {ack_y,ack_x} or to the descriptor's
//   source when that is 0, EVEN FOR A REJECTED BURST (the cluster's known
//   divergence from the vector core).
// Every other inbound type the base hands over (CU_SIGNAL, stray memory
// types, reserved types) is taken and dropped, never held.
// Ordering: an instruction is accepted only once every flit that reached the
// cluster before it (counted on the input port, per the base's classification)
// has been taken from the receive FIFO and no ADD_PEER is pending or being
// written, so operands or a peer burst sent ahead of a GEMM or DRAIN by the
// same source are applied first. What arrives after an instruction is NOT
// held back for it: a sender sequences a write behind a running sweep or drain
// on that instruction's completion (or an ack), as upstream. A peer pair that
// arrives while a GEMM sweeps waits for the sweep to end (the pair after it is
// held in the receive FIFO meanwhile: bounded by the sweep); during a DRAIN it
// is applied at once, so a self-addressed OP_SEND cannot deadlock (a DRAIN
// reads each sub-tile before any of its own granules can come back).
// Outbound priority on the one send register: acks, the FILL request, drain.
//
// Fault codes (FAULT arg): 4 F_OPCODE (opcode not 1..3), 0x10 F_FILL_RANGE,
// 0x11 F_GEMM_RANGE, 0x12 F_DRAIN_RANGE, 0x13 F_REMOTE. Success: result 0.
// dbg_ctr (CU_CTRL index 3) = {inbound flits dropped[15:0], rejected
// bursts[15:0], acks sent[15:0], L1 granules written[15:0]}.
//
// Assertion monitors (ERROR line + sticky mon_err), on what this unit sends:
// a MEM_WR_REQ with len > 7 or last=1, or while a write is open; MEM_WR_DATA
// with no open write or a last bit that disagrees with the beat count; a
// CU_DATA descriptor with len > 7 (WBURST) or last=1, a data flit whose last
// disagrees with the count; a MEM_RD_REQ whose txn + count - 1 passes 255; a
// DATA_RECEIVED not owed; a DRAIN retiring before all its flits left; an
// inbound flit held for HOLD_LIMIT cycles (longer than any GEMM sweep).
// Plus cu_base's own monitors.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cluster_cu #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer HOLD_LIMIT = 200000   // > the longest GEMM (2 x 256 x 255 cycles)
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] noc_in_data,
    input  wire         noc_in_valid,
    output wire         noc_in_busy,
    output wire [287:0] noc_out_data,
    output wire         noc_out_valid,
    input  wire         noc_out_busy,
    output wire         busy,
    output wire         mon_err
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] MX4 = MAG_X[3:0];
    localparam [3:0] MY4 = MAG_Y[3:0];
    localparam [3:0] T_RD_REQ = 4'h0, T_WR_REQ = 4'h1, T_RD_RESP = 4'h2, T_WR_DATA = 4'h4;
    localparam [3:0] T_SIGNAL = 4'h6, T_CU_DATA = 4'h8;
    localparam [31:0] F_OPCODE = 32'h04, F_FILL_RANGE = 32'h10, F_GEMM_RANGE = 32'h11,
                      F_DRAIN_RANGE = 32'h12, F_REMOTE = 32'h13;
    localparam integer L1_WORDS = 2048;
    localparam integer TILES = 256;

    // ------------------------------------------------------------ endpoint base
    wire [287:0] inst_flit, recv_flit;
    wire         inst_valid, recv_valid, send_ready;
    reg          inst_ready;
    reg          exec_done, exec_fault;
    reg  [31:0]  exec_result;
    reg  [287:0] send_flit;
    reg          send_valid;
    wire         recv_ready;
    wire [63:0]  dbg_ctr;
    wire [15:0]  inst_space;
    wire         base_err;

    cu_base #(.X(X), .Y(Y), .CU_TYPE(16'h4D47), .CU_VERSION(8'h01), .N_BUFFERS(4'd3),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_base (
        .clk(clk), .resetn(resetn),
        .noc_in_data(noc_in_data), .noc_in_valid(noc_in_valid), .noc_in_busy(noc_in_busy),
        .noc_out_data(noc_out_data), .noc_out_valid(noc_out_valid), .noc_out_busy(noc_out_busy),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(inst_space), .busy(busy), .mon_err(base_err));

    // ------------------------------------------------------------ storage
    reg [255:0] l1a [0:L1_WORDS-1];
    reg [255:0] l1b [0:L1_WORDS-1];
    reg [351:0] accm [0:TILES-1];

    // ------------------------------------------------------------ the instruction
    reg  [255:0] ip;                     // payload of the instruction in flight
    wire [3:0]   i_op     = ip[255:252];
    wire [39:0]  i_addr   = {ip[68:63], ip[251:218]};
    wire [16:0]  i_n      = (ip[217:202] == 16'd0) ? 17'd1 : {1'b0, ip[217:202]};
    wire         i_sel    = ip[201];
    wire         i_acc    = ip[200];
    wire [8:0]   i_gm     = (ip[199:192] == 8'd0) ? 9'd1 : {1'b0, ip[199:192]};
    wire [8:0]   i_gn     = (ip[191:184] == 8'd0) ? 9'd1 : {1'b0, ip[191:184]};
    wire [8:0]   i_nk     = (ip[183:176] == 8'd0) ? 9'd1 : {1'b0, ip[183:176]};
    wire [7:0]   i_anchor = ip[175:168];
    wire [7:0]   i_eoff   = ip[140:133];
    wire [7:0]   i_aoff   = ip[132:125];
    wire [7:0]   i_boff   = ip[124:117];
    wire         i_dnode  = ip[111];
    wire [3:0]   i_dst_x  = ip[110:107];
    wire [3:0]   i_dst_y  = ip[106:103];
    wire [7:0]   i_dbuf   = ip[102:95];
    wire [7:0]   i_dflags = ip[94:87];
    wire [3:0]   i_dack_y = ip[86:83];
    wire [3:0]   i_dack_x = ip[82:79];
    wire [1:0]   i_dmesh  = ip[78:77];
    // (eoff window, GEMM reach and tile count, all without wrapping)
    wire [17:0]  gm_x_gn  = i_gm * i_gn;
    wire [17:0]  a_reach  = {10'd0, i_aoff} + i_gm * i_nk;
    wire [17:0]  b_reach  = {10'd0, i_boff} + i_gn * i_nk;
    wire [17:0]  e_reach  = {10'd0, i_eoff} + {1'b0, i_n};

    localparam [2:0] S_IDLE = 3'd0, S_ACCEPT = 3'd1, S_DECODE = 3'd2, S_FILL = 3'd3,
                     S_GEMM = 3'd4, S_DRAIN = 3'd5;
    reg [2:0] state;

    // FILL
    reg        fill_active, fill_req_pend;
    reg [10:0] fill_words;
    // GEMM sweep
    reg        gemm_run;
    reg [7:0]  g_kb, g_g, g_h;
    wire [16:0] g_ia = {9'd0, i_aoff} + g_g * i_nk + {9'd0, g_kb};
    wire [16:0] g_ib = {9'd0, i_boff} + g_h * i_nk + {9'd0, g_kb};
    wire [15:0] g_tile = g_g * i_gn + {8'd0, g_h};
    wire        g_last_h  = ({1'b0, g_h} == i_gn - 9'd1);
    wire        g_last_g  = ({1'b0, g_g} == i_gm - 9'd1);
    wire        g_last_kb = ({1'b0, g_kb} == i_nk - 9'd1);
    // accumulator engine: one command in two cycles (read, then write)
    reg        ae_wr;
    reg [1:0]  ae_op;
    reg [7:0]  ae_tile;
    reg [1023:0] ae_a, ae_b;
    reg [351:0] ae_acc, ae_peer;
    wire [351:0] mac_out;
    cl_mac u_mac (.op(ae_op), .a_ent(ae_a), .b_ent(ae_b), .anchor(i_anchor), .acc_in(ae_acc),
                  .peer_in(ae_peer), .acc_out(mac_out));
    // DRAIN
    reg        dr_active, dr_loaded_all, dr_final_in_reg, dr_desc;
    reg        dr_send;                  // OP_SEND: two granules per sub-tile
    reg [9:0]  dr_q, dr_total, dr_bend;  // granule index, total granules, end of burst
    reg [7:0]  dr_burst;
    reg [15:0] dr_flits, dr_expect;      // drain flits taken by the base (left the CU) / owed
    reg        snd_is_dr;                // the send register holds a drain flit
    reg [351:0] dr_val;                  // accumulator sub-tile of granule dr_q
    wire [255:0] emit_out;
    cl_emit u_emit (.acc(dr_val), .fp16(emit_out));

    // ------------------------------------------------------------ receive path
    wire [3:0] r_type = recv_flit[`NOC_TYPE];
    wire [3:0] r_sx   = recv_flit[`NOC_SRC_X];
    wire [3:0] r_sy   = recv_flit[`NOC_SRC_Y];
    wire       r_last = recv_flit[`NOC_LAST];
    // open inbound burst
    reg        rb_open, rb_bad;
    reg [3:0]  rb_sx, rb_sy, rb_ax, rb_ay;
    reg [7:0]  rb_buf, rb_txn;
    reg        rb_sig;                   // flags[0]: acknowledge
    reg [15:0] rb_off;
    reg [8:0]  rb_left;                  // data flits still to come
    // ADD_PEER staging
    reg [255:0] peer_lo;
    reg         peer_pend;
    reg [7:0]   peer_tile;
    reg [351:0] peer_val;
    // acks waiting for the send register: {x, y, txn, buf}
    reg [23:0] ackq [0:3];
    reg [1:0]  ackq_rd, ackq_wr;
    reg [2:0]  ackq_cnt;
    wire       ackq_full = (ackq_cnt == 3'd4);
    // descriptor checks
    wire [7:0]  d_buf = recv_flit[255:248];
    wire [15:0] d_off = recv_flit[247:232];
    wire [7:0]  d_len = recv_flit[231:224];
    wire [16:0] d_end = {1'b0, d_off} + {9'd0, d_len};          // last granule, no wrap
    wire        d_ok  = (d_buf == 8'd0 || d_buf == 8'd1) ? (d_end < 17'd2048) :
                        (d_buf == 8'd2) ? (!d_off[0] && d_len[0] && d_end < 17'd512) : 1'b0;
    wire        r_is_data = (r_type == T_CU_DATA) && rb_open && r_sx == rb_sx && r_sy == rb_sy;
    // the second granule of a peer pair waits while the previous pair is pending
    wire        peer_stall = r_is_data && !rb_bad && rb_buf == 8'd2 && rb_off[0] && peer_pend;
    assign recv_ready = recv_valid && !ackq_full && !peer_stall;
    wire        take = recv_valid && recv_ready;
    wire [7:0]  fill_entry = recv_flit[`NOC_TXN];
    wire        fill_hit = fill_active && fill_entry >= i_eoff && {1'b0, fill_entry} < e_reach[8:0] &&
                           e_reach <= 18'd256;

    // Arrival order between instructions and everything else: count the
    // flits the base puts into its receive FIFO (its classification, seen on
    // our own input port) and stamp each CU_INST with that count; the head
    // instruction is accepted once as many receive-FIFO flits were taken.
    wire [3:0]  in_type = noc_in_data[`NOC_TYPE];
    wire        in_take = noc_in_valid && !noc_in_busy;
    wire        in_inst = in_take && in_type == 4'h5;
    wire        in_recv = in_take && !(in_type == 4'h5 || in_type == 4'h7 || in_type == 4'h3 || in_type == 4'hF);
    localparam integer SAW = (INST_DEPTH <= 2) ? 1 : $clog2(INST_DEPTH);
    reg [31:0]  rx_pushed, rx_taken;
    reg [31:0]  stamp [0:INST_DEPTH-1];
    reg [SAW-1:0] stamp_wr, stamp_rd;
    wire [31:0] ahead = stamp[stamp_rd] - rx_taken;          // receive flits still ahead of the head
    wire        in_order = (ahead == 32'd0) || ahead[31];
    always @(posedge clk) begin
        if (!resetn) begin
            rx_pushed <= 32'd0;
            rx_taken  <= 32'd0;
            stamp_wr  <= {SAW{1'b0}};
            stamp_rd  <= {SAW{1'b0}};
        end else begin
            if (in_recv) rx_pushed <= rx_pushed + 32'd1;
            if (take)    rx_taken  <= rx_taken + 32'd1;
            if (in_inst) begin
                stamp[stamp_wr] <= rx_pushed;
                stamp_wr <= (stamp_wr == INST_DEPTH[SAW-1:0] - 1'b1) ? {SAW{1'b0}} : stamp_wr + 1'b1;
            end
            if (inst_ready)
                stamp_rd <= (stamp_rd == INST_DEPTH[SAW-1:0] - 1'b1) ? {SAW{1'b0}} : stamp_rd + 1'b1;
        end
    end

    // counters for dbg_ctr
    reg [15:0] c_drop, c_rej, c_ack, c_gran;
    assign dbg_ctr = {c_drop, c_rej, c_ack, c_gran};

    // ------------------------------------------------------------ outbound flits
    function automatic [255:0] send_half(input [351:0] v, input hi);
        integer e;
        begin
            send_half = 256'd0;
            for (e = 0; e < 8; e = e + 1)
                send_half[e*32 +: 22] = v[(8*(hi ? 1 : 0) + e)*22 +: 22];
        end
    endfunction

    function automatic [351:0] peer_unpack(input [255:0] lo, input [255:0] hi);
        integer e;
        begin
            for (e = 0; e < 8; e = e + 1) begin
                peer_unpack[e*22 +: 22]       = lo[e*32 +: 22];
                peer_unpack[(8+e)*22 +: 22]   = hi[e*32 +: 22];
            end
        end
    endfunction

    wire [23:0] ack_head = ackq[ackq_rd];
    wire [287:0] ack_flit = {ack_head[23:20], ack_head[19:16], X4, Y4, T_SIGNAL, ack_head[15:8], 1'b1, 3'b000,
                             8'h03, 24'd0, ack_head[7:0], 216'd0};
    wire [287:0] fill_flit = {MX4, MY4, X4, Y4, T_RD_REQ, i_eoff, 1'b1, 3'b000,
                              i_addr, 8'd3, 8'h40, i_n[7:0], 24'd0, 2'd0, 8'd4, 158'd0};

    // the drain's next flit
    wire [9:0]  dr_left  = dr_total - dr_q;
    wire [9:0]  dr_blen  = (dr_left > 10'd8) ? 10'd8 : dr_left;
    wire [15:0] dr_off   = i_addr[20:5] + {6'd0, dr_q};
    wire [39:0] dr_maddr = i_addr + {25'd0, dr_q, 5'd0};
    wire        dr_dlast = (dr_q + 10'd1 == dr_bend);
    wire [255:0] dr_data = dr_send ? send_half(dr_val, dr_q[0]) : emit_out;
    reg  [287:0] dr_flit;
    always @* begin
        if (!i_dnode) begin
            if (dr_desc)
                dr_flit = {MX4, MY4, X4, Y4, T_WR_REQ, dr_burst, 1'b0, 3'b000,
                           dr_maddr, dr_blen[7:0] - 8'd1, 208'd0};
            else
                dr_flit = {MX4, MY4, X4, Y4, T_WR_DATA, dr_burst, dr_dlast, 3'b000, dr_data};
        end else begin
            if (dr_desc)
                dr_flit = {i_dst_x, i_dst_y, X4, Y4, T_CU_DATA, dr_burst, 1'b0, 3'b000,
                           i_dbuf, dr_off, dr_blen[7:0] - 8'd1, i_dflags, i_dack_y, i_dack_x, 208'd0};
            else
                dr_flit = {i_dst_x, i_dst_y, X4, Y4, T_CU_DATA, dr_burst, dr_dlast, 3'b000, dr_data};
        end
    end

    // ------------------------------------------------------------ the unit
    wire snd_free = !send_valid || send_ready;
    wire snd_taken = send_valid && send_ready;
    // L1 and the accumulator are storage, not state: reset leaves them alone
    // (as upstream's tile memory, which has no reset); they read as zero
    // until first written.
    integer r;
    initial begin
        for (r = 0; r < L1_WORDS; r = r + 1) begin
            l1a[r] = 256'd0;
            l1b[r] = 256'd0;
        end
        for (r = 0; r < TILES; r = r + 1)
            accm[r] = 352'd0;
    end
    wire [9:0] nq = dr_q + 10'd1;
    wire [8:0] nt = dr_send ? nq[9:1] : nq[8:0];     // sub-tile of the next granule
    wire [8:0] dr_t = dr_send ? dr_q[9:1] : dr_q[8:0];

    always @(posedge clk) begin
        if (!resetn) begin
            state <= S_IDLE;
            inst_ready <= 1'b0;
            exec_done <= 1'b0;
            exec_fault <= 1'b0;
            exec_result <= 32'd0;
            send_valid <= 1'b0;
            send_flit <= 288'd0;
            snd_is_dr <= 1'b0;
            fill_active <= 1'b0;
            fill_req_pend <= 1'b0;
            fill_words <= 11'd0;
            gemm_run <= 1'b0;
            ae_wr <= 1'b0;
            ae_op <= 2'd0;
            dr_active <= 1'b0;
            dr_loaded_all <= 1'b0;
            dr_final_in_reg <= 1'b0;
            rb_open <= 1'b0;
            rb_bad <= 1'b0;
            peer_pend <= 1'b0;
            ackq_rd <= 2'd0;
            ackq_wr <= 2'd0;
            ackq_cnt <= 3'd0;
            c_drop <= 16'd0;
            c_rej <= 16'd0;
            c_ack <= 16'd0;
            c_gran <= 16'd0;
        end else begin
            inst_ready <= 1'b0;
            exec_done  <= 1'b0;

            // ---------------- receive: one flit a cycle, never held for long
            if (take) begin
                if (r_type == T_CU_DATA && !rb_open) begin
                    rb_open  <= 1'b1;
                    rb_sx    <= r_sx;
                    rb_sy    <= r_sy;
                    rb_buf   <= d_buf;
                    rb_off   <= d_off;
                    rb_left  <= {1'b0, d_len} + 9'd1;
                    rb_sig   <= recv_flit[216];
                    rb_txn   <= recv_flit[`NOC_TXN];
                    rb_ay    <= (recv_flit[215:208] == 8'd0) ? r_sy : recv_flit[215:212];
                    rb_ax    <= (recv_flit[215:208] == 8'd0) ? r_sx : recv_flit[211:208];
                    rb_bad   <= !d_ok;
                    if (!d_ok)
                        $display("cluster_cu %m t=%0t: note: CU_DATA burst from (%0d,%0d) rejected (buf %0d off %0d len %0d); its %0d data flits are counted out and dropped",
                                 $time, r_sx, r_sy, d_buf, d_off, d_len, d_len + 8'd1);
                    if (r_last)
                        $display("cluster_cu %m t=%0t: note: CU_DATA descriptor from (%0d,%0d) has last=1 (a sender's rule)",
                                 $time, r_sx, r_sy);
                end else if (r_type == T_CU_DATA && !r_is_data) begin
                    c_drop <= c_drop + 16'd1;
                    rb_bad <= 1'b1;
                    $display("cluster_cu %m t=%0t: note: CU_DATA from (%0d,%0d) while a burst from (%0d,%0d) is open: dropped, and the open burst is rejected",
                             $time, r_sx, r_sy, rb_sx, rb_sy);
                end else if (r_is_data) begin
                    if (!rb_bad) begin
                        c_gran <= c_gran + 16'd1;
                        case (rb_buf)
                            8'd0: l1a[rb_off[10:0]] <= recv_flit[255:0];
                            8'd1: l1b[rb_off[10:0]] <= recv_flit[255:0];
                            default: begin
                                if (!rb_off[0]) begin
                                    peer_lo <= recv_flit[255:0];
                                end else begin
                                    peer_val  <= peer_unpack(peer_lo, recv_flit[255:0]);
                                    peer_tile <= rb_off[8:1];
                                    peer_pend <= 1'b1;
                                end
                            end
                        endcase
                    end
                    if (r_last != (rb_left == 9'd1))
                        $display("cluster_cu %m t=%0t: note: CU_DATA from (%0d,%0d) has last=%0d with %0d data flits still due (a sender's rule)",
                                 $time, r_sx, r_sy, r_last, rb_left);
                    rb_off  <= rb_off + 16'd1;
                    rb_left <= rb_left - 9'd1;
                    if (rb_left == 9'd1) begin
                        rb_open <= 1'b0;
                        if (rb_bad) c_rej <= c_rej + 16'd1;
                        if (rb_sig) begin
                            ackq[ackq_wr] <= {rb_ax, rb_ay, rb_txn, rb_buf};
                            ackq_wr <= ackq_wr + 2'd1;
                        end
                    end
                end else if (r_type == T_RD_RESP && fill_hit) begin
                    c_gran <= c_gran + 16'd1;
                    if (i_sel) l1b[{1'b0, fill_entry, recv_flit[257:256]}] <= recv_flit[255:0];
                    else       l1a[{1'b0, fill_entry, recv_flit[257:256]}] <= recv_flit[255:0];
                    fill_words <= fill_words + 11'd1;
                end else begin
                    c_drop <= c_drop + 16'd1;
                    if (r_type == T_RD_RESP)
                        $display("cluster_cu %m t=%0t: note: MEM_RD_RESP txn 0x%h from (%0d,%0d) outside any running FILL: dropped",
                                 $time, fill_entry, r_sx, r_sy);
                end
            end

            // ---------------- accumulator engine (the sweep first; ADD_PEER between sweeps)
            if (ae_wr) begin
                accm[ae_tile] <= mac_out;
                ae_wr <= 1'b0;
            end else if (!gemm_run && peer_pend) begin
                ae_op     <= 2'd2;
                ae_tile   <= peer_tile;
                ae_acc    <= accm[peer_tile];
                ae_peer   <= peer_val;
                peer_pend <= 1'b0;
                ae_wr     <= 1'b1;
            end else if (gemm_run) begin
                ae_op   <= (g_kb == 8'd0 && !i_acc) ? 2'd0 : 2'd1;
                ae_tile <= g_tile[7:0];
                ae_acc  <= accm[g_tile[7:0]];
                ae_a    <= {l1a[{g_ia[8:0], 2'd3}], l1a[{g_ia[8:0], 2'd2}], l1a[{g_ia[8:0], 2'd1}], l1a[{g_ia[8:0], 2'd0}]};
                ae_b    <= {l1b[{g_ib[8:0], 2'd3}], l1b[{g_ib[8:0], 2'd2}], l1b[{g_ib[8:0], 2'd1}], l1b[{g_ib[8:0], 2'd0}]};
                ae_wr   <= 1'b1;
                if (!g_last_h) begin
                    g_h <= g_h + 8'd1;
                end else begin
                    g_h <= 8'd0;
                    if (!g_last_g) begin
                        g_g <= g_g + 8'd1;
                    end else begin
                        g_g <= 8'd0;
                        g_kb <= g_kb + 8'd1;
                        if (g_last_kb) gemm_run <= 1'b0;
                    end
                end
            end

            // ---------------- send register: acks, the FILL request, the drain
            if (snd_taken && dr_final_in_reg) dr_final_in_reg <= 1'b0;
            if (snd_taken && snd_is_dr) dr_flits <= dr_flits + 16'd1;
            if (snd_free) begin
                snd_is_dr <= 1'b0;
                if (ackq_cnt != 3'd0) begin
                    send_flit  <= ack_flit;
                    send_valid <= 1'b1;
                    ackq_rd    <= ackq_rd + 2'd1;
                    c_ack      <= c_ack + 16'd1;
                end else if (fill_req_pend) begin
                    send_flit     <= fill_flit;
                    send_valid    <= 1'b1;
                    fill_req_pend <= 1'b0;
                end else if (dr_active && !dr_loaded_all) begin
                    send_flit  <= dr_flit;
                    send_valid <= 1'b1;
                    snd_is_dr  <= 1'b1;
                    if (dr_desc) begin
                        dr_desc <= 1'b0;
                        dr_bend <= dr_q + dr_blen;
                    end else begin
                        dr_q <= nq;
                        if (dr_dlast) begin
                            dr_desc  <= 1'b1;
                            dr_burst <= dr_burst + 8'd1;
                        end
                        if (nt != dr_t && nt < 9'd256)
                            dr_val <= accm[nt[7:0]];
                        if (nq == dr_total) begin
                            dr_loaded_all   <= 1'b1;
                            dr_final_in_reg <= 1'b1;
                        end
                    end
                end else begin
                    send_valid <= 1'b0;
                end
            end
            case ({take && r_is_data && rb_left == 9'd1 && rb_sig, snd_free && ackq_cnt != 3'd0})
                2'b10:   ackq_cnt <= ackq_cnt + 3'd1;
                2'b01:   ackq_cnt <= ackq_cnt - 3'd1;
                default: ackq_cnt <= ackq_cnt;
            endcase

            // ---------------- instruction sequencer
            case (state)
                S_IDLE: if (inst_valid && in_order && !peer_pend && !ae_wr) begin
                    inst_ready <= 1'b1;
                    ip         <= inst_flit[255:0];
                    state      <= S_ACCEPT;
                end
                S_ACCEPT: state <= S_DECODE;      // the base pops the instruction here
                S_DECODE: begin
                    exec_fault  <= 1'b0;
                    exec_result <= 32'd0;
                    case (i_op)
                        4'd1: if (i_n > 17'd255 || e_reach > 18'd256) begin
                                  exec_fault <= 1'b1; exec_result <= F_FILL_RANGE; exec_done <= 1'b1; state <= S_IDLE;
                              end else begin
                                  fill_active   <= 1'b1;
                                  fill_req_pend <= 1'b1;
                                  fill_words    <= 11'd0;
                                  state         <= S_FILL;
                              end
                        4'd2: if (gm_x_gn > 18'd256 || a_reach > 18'd512 || b_reach > 18'd512) begin
                                  exec_fault <= 1'b1; exec_result <= F_GEMM_RANGE; exec_done <= 1'b1; state <= S_IDLE;
                              end else begin
                                  g_kb <= 8'd0; g_g <= 8'd0; g_h <= 8'd0;
                                  gemm_run <= 1'b1;
                                  state    <= S_GEMM;
                              end
                        4'd3: if (i_dmesh != 2'd0) begin
                                  exec_fault <= 1'b1; exec_result <= F_REMOTE; exec_done <= 1'b1; state <= S_IDLE;
                              end else if (i_n > 17'd256) begin
                                  exec_fault <= 1'b1; exec_result <= F_DRAIN_RANGE; exec_done <= 1'b1; state <= S_IDLE;
                              end else begin
                                  dr_send   <= i_dnode && i_dbuf == 8'd2;
                                  dr_total  <= (i_dnode && i_dbuf == 8'd2) ? {i_n[8:0], 1'b0} : i_n[9:0];
                                  dr_expect <= ((i_dnode && i_dbuf == 8'd2) ? {6'd0, i_n[8:0], 1'b0} : {6'd0, i_n[9:0]}) +
                                               (((i_dnode && i_dbuf == 8'd2) ? {6'd0, i_n[8:0], 1'b0} : {6'd0, i_n[9:0]}) + 16'd7) / 16'd8;
                                  dr_q      <= 10'd0;
                                  dr_desc   <= 1'b1;
                                  dr_burst  <= 8'd0;
                                  dr_flits  <= 16'd0;
                                  dr_val    <= accm[0];
                                  dr_active <= 1'b1;
                                  dr_loaded_all   <= 1'b0;
                                  dr_final_in_reg <= 1'b0;
                                  state     <= S_DRAIN;
                              end
                        default: begin
                            exec_fault <= 1'b1; exec_result <= F_OPCODE; exec_done <= 1'b1; state <= S_IDLE;
                        end
                    endcase
                end
                S_FILL: if (!fill_req_pend && fill_words == {i_n[8:0], 2'b00}) begin
                    fill_active <= 1'b0;
                    exec_done   <= 1'b1;
                    state       <= S_IDLE;
                end
                S_GEMM: if (!gemm_run && !ae_wr) begin
                    exec_done <= 1'b1;
                    state     <= S_IDLE;
                end
                S_DRAIN: if (dr_loaded_all && (!dr_final_in_reg || snd_taken)) begin
                    dr_active <= 1'b0;
                    exec_done <= 1'b1;
                    state     <= S_IDLE;
                end
                default: state <= S_IDLE;
            endcase
        end
    end

    // ------------------------------------------------------------ monitors
    wire [3:0] s_type = send_flit[`NOC_TYPE];
    wire       s_last = send_flit[`NOC_LAST];
    reg        m_wr_open, m_cd_open;
    reg [3:0]  m_wr_left, m_cd_left;
    reg [15:0] m_acks_owed;
    reg [19:0] m_hold;
    reg        m_err;
    wire       m_burst_acked = take && r_is_data && rb_left == 9'd1 && rb_sig;
    wire       m_ack_sent    = snd_taken && s_type == T_SIGNAL && send_flit[255:248] == 8'h03;
    always @(posedge clk) begin
        if (!resetn) begin
            m_wr_open <= 1'b0;
            m_cd_open <= 1'b0;
            m_wr_left <= 4'd0;
            m_cd_left <= 4'd0;
            m_acks_owed <= 16'd0;
            m_hold <= 20'd0;
            m_err <= 1'b0;
        end else begin
            if (snd_taken) begin
                case (s_type)
                    T_WR_REQ: begin
                        if (m_wr_open) begin
                            $display("ERROR %m t=%0t: cluster opened a second write while one was open (one open write per source): %h", $time, send_flit);
                            m_err <= 1'b1;
                        end
                        if (send_flit[215:208] > 8'd7 || s_last) begin
                            $display("ERROR %m t=%0t: cluster MEM_WR_REQ with len %0d (max 7) or last=1: %h", $time, send_flit[215:208], send_flit);
                            m_err <= 1'b1;
                        end
                        m_wr_open <= 1'b1;
                        m_wr_left <= send_flit[211:208] + 4'd1;
                    end
                    T_WR_DATA: begin
                        if (!m_wr_open || s_last != (m_wr_left == 4'd1)) begin
                            $display("ERROR %m t=%0t: cluster MEM_WR_DATA with no open write or last=%0d with %0d beats due: %h",
                                     $time, s_last, m_wr_left, send_flit);
                            m_err <= 1'b1;
                        end
                        m_wr_left <= m_wr_left - 4'd1;
                        if (m_wr_left == 4'd1) m_wr_open <= 1'b0;
                    end
                    T_CU_DATA: begin
                        if (!m_cd_open) begin
                            if (send_flit[231:224] > 8'd7 || s_last) begin
                                $display("ERROR %m t=%0t: cluster CU_DATA descriptor with len %0d (WBURST is 8) or last=1: %h",
                                         $time, send_flit[231:224], send_flit);
                                m_err <= 1'b1;
                            end
                            m_cd_open <= 1'b1;
                            m_cd_left <= send_flit[227:224] + 4'd1;
                        end else begin
                            if (s_last != (m_cd_left == 4'd1)) begin
                                $display("ERROR %m t=%0t: cluster CU_DATA data flit last=%0d with %0d due: %h", $time, s_last, m_cd_left, send_flit);
                                m_err <= 1'b1;
                            end
                            m_cd_left <= m_cd_left - 4'd1;
                            if (m_cd_left == 4'd1) m_cd_open <= 1'b0;
                        end
                    end
                    T_RD_REQ: begin
                        if ({1'b0, send_flit[`NOC_TXN]} + {1'b0, send_flit[199:192]} > 9'd256 || send_flit[199:192] == 8'd0) begin
                            $display("ERROR %m t=%0t: cluster MEM_RD_REQ txn 0x%h + count %0d - 1 passes 255 (the entry tags would wrap): %h",
                                     $time, send_flit[`NOC_TXN], send_flit[199:192], send_flit);
                            m_err <= 1'b1;
                        end
                    end
                    default: ;
                endcase
            end
            case ({m_burst_acked, m_ack_sent})
                2'b10: m_acks_owed <= m_acks_owed + 16'd1;
                2'b01: m_acks_owed <= m_acks_owed - 16'd1;
                default: ;
            endcase
            if (m_ack_sent && !m_burst_acked && m_acks_owed == 16'd0) begin
                $display("ERROR %m t=%0t: cluster sent a DATA_RECEIVED no burst asked for: %h", $time, send_flit);
                m_err <= 1'b1;
            end
            if (exec_done && !exec_fault && i_op == 4'd3 && dr_flits != dr_expect) begin
                $display("ERROR %m t=%0t: DRAIN retired when %0d of its %0d flits had left the CU (it retires when the last has left)",
                         $time, dr_flits, dr_expect);
                m_err <= 1'b1;
            end
            if (recv_valid && !recv_ready) begin
                m_hold <= m_hold + 20'd1;
                if (m_hold == HOLD_LIMIT[19:0]) begin
                    $display("ERROR %m t=%0t: cluster held an inbound flit for %0d cycles (a unit drops, never holds): %h",
                             $time, HOLD_LIMIT, recv_flit);
                    m_err <= 1'b1;
                end
            end else begin
                m_hold <= 20'd0;
            end
        end
    end

    assign mon_err = base_err | m_err;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, inst_space, inst_flit[287:256], ip[167:141], ip[116:112], ip[76:69], ip[62:0],
                       gm_x_gn[17:9], g_tile[15:8], g_ia[16:9], g_ib[16:9], dr_maddr[4:0], i_addr[39:21],
                       recv_flit[258], r_last};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
