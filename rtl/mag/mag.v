// Memory agent (MAG): one NoC endpoint in front of a DRAM (rtl/mag/mag_dram.v), timed as
// upstream's memory port (KohakuTPU at 7703ee8, src/kohakuaccel/mas/core/mag_mem_port.v).
//
// Protocol (fixed: protocol.md §5, units.md M.1-M.4; flit fields in models/noc/flit.py):
//   MEM_RD_REQ / MEM_WR_REQ payload: byte address [255:216], len [215:208]
//   (beats-1), flags [207:200] (bit 6 STREAM, bit 5 BLAYOUT, bit 4 QUANT; bits
//   0..3 ignored), count [199:192], peer [191:168], n_peer [167:166],
//   entry_words [165:158]. DRAM word = byte address >> 5. The DRAM holds the
//   byte addresses BASE .. BASE + 32*DRAM_WORDS - 1 (ours: a machine's memory
//   window, e.g. 0x8000_0000 for the compiled bundles); word w of the DRAM is
//   byte address BASE + 32*w.
//   * plain read (STREAM = QUANT = 0): len+1 MEM_RD_RESP to the requester, txn
//     echoed, rsvd 0, last on the final beat; count, entry_words, peers ignored;
//   * entry read (STREAM or QUANT; len ignored): count = STREAM ? count (0 read
//     as 1) : 1 entries; ew = 4 if QUANT or entry_words is 0 or > 4, else
//     entry_words; entry i at byte addr + i*EB, EB = 256 with QUANT, 32*ew
//     otherwise. Without QUANT the ew DRAM words go out unchanged as words
//     0..ew-1; with QUANT the entry's 8 DRAM words pass through mag_quant.v
//     (FP16 -> MXFP7, A packing or, with BLAYOUT, B packing) and go out as
//     words 0..3. Every response: txn = request txn + i (mod 256), rsvd =
//     {0, w[1:0]}, last on each entry's final word; each entry is read from
//     DRAM and converted once and sent to the requester, then to each of
//     n_peer peers (peer k in peer[8k+7:8k], a {y[7:4],x[3:0]} byte);
//   * write: MEM_WR_REQ then len+1 MEM_WR_DATA from the same source, bound by
//     source coordinate only (one open write per source); the agent's beat
//     counter ends the burst; MEM_WR_ACK (txn echoed, payload 0, last 1) to
//     the writer once its write transaction has completed (below);
//   * staging aperture (addr[39] = 1, addr[38] = 0, M.4): this agent has no
//     staging, so such a read is dropped without a response, and such a write
//     takes its data beats and drops them, no ack (both also reported, below);
//   * any other type is taken and dropped (a plain $display line, not an error).
//
// Micro-architecture: upstream's memory port, one of them (fused4 has MEM_PORTS 1), so every
// unit shares one read queue, one read engine and one write machine. This file holds the intake,
// the plain read / write machine, the AR register, the output register and the read checks; the
// entry read engine with its quantiser timing and emit buffer is rtl/mag/mag_entry.v (u_entry),
// the write intake with its slots rtl/mag/mag_write.v (u_write):
//   intake: a read queue (MEM_RD_REQ) and a write queue (MEM_WR_REQ, MEM_WR_DATA) of RDQ_DEPTH and
//     WRQ_DEPTH flits; busy once either holds DEPTH - Q_MARGIN (it depends only on our state);
//   reads, strictly one request at a time in arrival order (one head for every requester):
//     - a plain read is taken when the read engine is idle (no entry in it, nothing being emitted)
//       and no write transaction is in flight; it is ONE burst of len+1 beats, each beat becomes
//       a MEM_RD_RESP in the output register the cycle it is taken (a beat is taken only when the
//       register is free), and the next request can be taken the cycle after its last beat;
//     - an entry read is taken when the read engine is idle and no plain read is in flight; per
//       entry it issues ONE burst (8 beats with QUANT, else ew), and the next entry's burst the
//       cycle the current one's last beat is taken. A QUANT entry's beats are registered once more
//       and enter the quantiser one a cycle; it finishes QUANT_LAT edges after the 8th, the
//       engine latches that the edge after, and the edge after that hands the four words to the
//       emit buffer and re-arms the quantiser (one more cycle with no beat taken): 20 cycles an
//       entry at the defaults. Without QUANT the ew beats are the words, handed over the edge
//       after the last. While the engine waits for the quantiser or the emit buffer, the next
//       entry's beats wait in the DRAM port (mag_port.v);
//     - the emit buffer sends its entry as ew flits, one a cycle, to the requester, then the same
//       words to each peer; it has the output register first (plain-read beats and acks wait);
//       the engine takes a new request only once the last entry has left it;
//   writes: a MEM_WR_REQ opens one of WR_SLOTS slots (a write taken and not yet acknowledged; the
//     write queue's head waits while none is free, so WR_SLOTS must be at least the number of units
//     writing at once, else the queue can wedge: reported below), its MEM_WR_DATA (bound by source) are written
//     into the DRAM as they arrive, one a cycle; a slot whose beats are all in is ready, ready
//     slots issue in ready order, one write transaction at a time: AW, W and B through the DRAM
//     port, then the MEM_WR_ACK, then the next (a plain read waiting at the same time goes
//     first). The data is in the DRAM from its arrival, up to ~20 cycles before upstream's RAM
//     takes it: a read ordered after the write's ack sees it in both; a read racing the write is
//     unordered in both (units.md M; models/mag/model.py refuses such a run);
//   output: one register on the NoC output.
//
// Timing facts (named parameters; defaults are upstream's; the DRAM port's are in mag_port.v):
//   RDQ_DEPTH, WRQ_DEPTH = 64, Q_MARGIN = 4: mag_mem_port.v 41-42, 126-141 (two sync FIFOs of
//     Q_DEPTH, busy when either count >= Q_DEPTH - Q_MARGIN);
//   WR_SLOTS = 16: mag_mem_port.v 34-40 (write slots, freed the edge after the ack);
//   QUANT_LAT = 8: src/kohakutpu/transform/mx_quant.v 171-304 (done raised 8 edges after the 8th
//     beat is captured: fold, normalise, scale, 4 pack passes, tail);
//   one request at a time, plain read vs entry read vs write, output priority, the quantiser
//     hand-over (q_beat, q_rdy, re-arm): mag_mem_port.v 355-363, 478-524, 594-600, 662-933;
//   AR_FIFO_LAT, R_FIFO_LAT, W_FIFO_LAT, B_FIFO_LAT = 3, R_FIFO_DEPTH = 64: passed to mag_port.v.
//   Derived at the defaults (DRAM RD_LATENCY 1): a single-beat plain read is served every
//   5 + RD_LATENCY + AR_FIFO_LAT + R_FIFO_LAT = 12 cycles; an entry run of n QUANT entries costs
//   7 + RD_LATENCY + AR_FIFO_LAT + R_FIFO_LAT + 20n cycles from take to the next take; a write of
//   L+1 beats holds the write machine 14 + L cycles from issue to the next issue.
//
// writes_idle (internal wire, read through the hierarchy by the host loader):
//   1 when no write flit is queued, no write is open, no write slot waits for its transaction or
//   ack, and no MEM_WR_ACK is held in the output register; every write that reached the agent has
//   then been written into the DRAM and acknowledged.
//
// Parameters are checked at elaboration (an ERROR line, then $finish): X, Y in 0..15;
// 1 <= DRAM_WORDS < 2**31; BASE 32-byte aligned; RDQ_DEPTH, WRQ_DEPTH in 1..1024; 0 <= Q_MARGIN <
// both depths; WR_SLOTS in 1..256; QUANT_LAT in 1..64 (mag_port.v checks its own).
//
// Assertion monitors (each prints a line containing ERROR naming who broke
// what, and raises the sticky mon_err until reset):
//   * input link: the sender withdrew or changed a held flit (noc_link_mon);
//   * output link: this agent withdrew or changed a held flit (its own side);
//   * a flit delivered here whose dst is not this agent's coordinate;
//   * MEM_RD_REQ with flags bit 7 set (not defined by units.md M.1; served as
//     if clear);
//   * a read or write to the staging aperture (dropped, see above);
//   * MEM_WR_REQ with len > 7, a second MEM_WR_REQ from a source whose write
//     is still open (dropped), MEM_WR_DATA from a source with no open write
//     (dropped), a data flit whose last bit disagrees with the beat count;
//   * the write intake wedged: a MEM_WR_REQ waits for a slot while every slot's write is still
//     receiving beats (queued behind it): WR_SLOTS below the number of units writing at once, a
//     deadlock upstream's port has too (mag_mem_port.v 34-40);
//   * a read or write reaching outside the DRAM (below BASE or past
//     DRAM_WORDS; such words read as 0);
//   * the engine presenting a burst while its previous one is not yet taken by the port; the
//     port's own monitors (mag_port.v); the queues' write-while-full / pop-while-empty (noc_fifo).
// models/mag/model.py (MagModel, MagUnit) is the golden model of what the agent answers.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module mag #(
    parameter integer X = 0,
    parameter integer Y = 1,
    parameter integer DRAM_WORDS = 65536,   // words of the DRAM behind us (< 2**31)
    parameter [39:0]  BASE = 40'd0,         // byte address of DRAM word 0 (the machine's memory window)
    parameter integer RDQ_DEPTH = 64,       // read-request intake (mag_mem_port.v Q_DEPTH)
    parameter integer WRQ_DEPTH = 64,       // write intake (mag_mem_port.v Q_DEPTH)
    parameter integer Q_MARGIN = 4,         // busy at DEPTH - Q_MARGIN flits (mag_mem_port.v Q_MARGIN)
    parameter integer WR_SLOTS = 16,        // writes taken and not yet acknowledged (mag_mem_port.v WR_SLOTS)
    parameter integer QUANT_LAT = 8,        // quantiser: done this many edges after the 8th beat (mx_quant.v)
    parameter integer AR_FIFO_LAT = 3,      // DRAM port crossings (mag_port.v): AR and AW,
    parameter integer R_FIFO_LAT = 3,       //   R,
    parameter integer W_FIFO_LAT = 3,       //   W,
    parameter integer B_FIFO_LAT = 3,       //   B
    parameter integer R_FIFO_DEPTH = 64     //   R FIFO entries
) (
    input  wire         clk,
    input  wire         resetn,
`include "noc_ep_ports.vh"
    // DRAM read port (see mag_dram.v): taken when mem_rd_req && mem_rd_ready;
    // words return in order, one per mem_rd_valid cycle, and are never refused.
    output wire         mem_rd_req,
    output wire [34:0]  mem_rd_addr,
    input  wire         mem_rd_ready,
    input  wire         mem_rd_valid,
    input  wire [255:0] mem_rd_data,
    // DRAM write port: one word written per cycle with mem_wr_req, always taken.
    output wire         mem_wr_req,
    output wire [34:0]  mem_wr_addr,
    output wire [255:0] mem_wr_data,
    output wire         mon_err
);
    localparam [3:0] T_RD_REQ  = 4'h0;
    localparam [3:0] T_WR_REQ  = 4'h1;
    localparam [3:0] T_RD_RESP = 4'h2;
    localparam [3:0] T_WR_ACK  = 4'h3;
    localparam [3:0] T_WR_DATA = 4'h4;
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [30:0] WORDS31 = DRAM_WORDS[30:0];
    localparam integer SLW = (WR_SLOTS <= 2) ? 1 : $clog2(WR_SLOTS);
    localparam [10:0] RD_BUSY_AT = RDQ_DEPTH[10:0] - Q_MARGIN[10:0];
    localparam [10:0] WR_BUSY_AT = WRQ_DEPTH[10:0] - Q_MARGIN[10:0];

    generate
        if (X < 0 || X > 15 || Y < 0 || Y > 15 || DRAM_WORDS < 1 || DRAM_WORDS > 32'h7FFF_FFFF
            || BASE[4:0] != 5'd0 || RDQ_DEPTH < 1 || RDQ_DEPTH > 1024 || WRQ_DEPTH < 1 || WRQ_DEPTH > 1024
            || Q_MARGIN < 0 || Q_MARGIN >= RDQ_DEPTH || Q_MARGIN >= WRQ_DEPTH || WR_SLOTS < 1 || WR_SLOTS > 256
            || QUANT_LAT < 1 || QUANT_LAT > 64) begin : g_bad_param
            initial begin
                $fatal(1, "mag %m: X=%0d Y=%0d DRAM_WORDS=%0d BASE=0x%h RDQ_DEPTH=%0d WRQ_DEPTH=%0d Q_MARGIN=%0d WR_SLOTS=%0d QUANT_LAT=%0d: need X, Y in 0..15 (4-bit coordinates), 1 <= DRAM_WORDS < 2**31, BASE 32-byte aligned (it is DRAM word 0), each queue depth in 1..1024, 0 <= Q_MARGIN < both depths, WR_SLOTS in 1..256, QUANT_LAT in 1..64",
                         X, Y, DRAM_WORDS, BASE, RDQ_DEPTH, WRQ_DEPTH, Q_MARGIN, WR_SLOTS, QUANT_LAT);
            end
        end
    endgenerate

`include "mag_window.vh"

    // ================================================================ intake
    wire [3:0]  in_type = noc_in_data[`NOC_TYPE];
    reg  [10:0] rq_n;         // flits in the read queue
    reg  [10:0] wq_n;         // flits in the write queue
    assign noc_in_busy = (rq_n >= RD_BUSY_AT) || (wq_n >= WR_BUSY_AT);
    wire        in_take  = noc_in_valid && !noc_in_busy;
    wire        rdq_push = in_take && in_type == T_RD_REQ;
    wire        wrq_push = in_take && (in_type == T_WR_REQ || in_type == T_WR_DATA);

    /* verilator lint_off UNUSEDSIGNAL */  // whole flits are queued; a read uses only its descriptor bits
    wire [287:0] rq;          // read queue head
    /* verilator lint_on UNUSEDSIGNAL */
    wire         rdq_empty;
    wire         rdq_pop;
    wire [287:0] wq;          // write queue head
    wire         wrq_empty;
    wire         wrq_pop;
    wire [5:0]   q_err;
    /* verilator lint_off UNUSEDSIGNAL */  // never rise: busy comes from rq_n / wq_n at or below the depth
    wire         rdq_full;
    wire         wrq_full;
    /* verilator lint_on UNUSEDSIGNAL */

    noc_fifo #(.WIDTH(288), .DEPTH(RDQ_DEPTH)) u_rdq (
        .clk(clk), .resetn(resetn), .push(rdq_push), .din(noc_in_data),
        .pop(rdq_pop), .dout(rq), .empty(rdq_empty), .full(rdq_full), .mon_err(q_err[0]));
    noc_fifo #(.WIDTH(288), .DEPTH(WRQ_DEPTH)) u_wrq (
        .clk(clk), .resetn(resetn), .push(wrq_push), .din(noc_in_data),
        .pop(wrq_pop), .dout(wq), .empty(wrq_empty), .full(wrq_full), .mon_err(q_err[1]));

    noc_link_mon #(.WIDTH(288)) u_in_mon (
        .clk(clk), .resetn(resetn), .valid(noc_in_valid), .busy(noc_in_busy), .data(noc_in_data),
        .mon_err(q_err[2]));

    reg in_err;
    initial in_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            in_err <= 1'b0;
            rq_n   <= 11'd0;
            wq_n   <= 11'd0;
        end else begin
            rq_n <= rq_n + {10'd0, rdq_push} - {10'd0, rdq_pop};
            wq_n <= wq_n + {10'd0, wrq_push} - {10'd0, wrq_pop};
            if (in_take) begin
                if (noc_in_data[287:280] != {X4, Y4}) begin
                    $display("ERROR %m t=%0t: MAG(%0d,%0d) was delivered a flit addressed to (%0d,%0d) (from (%0d,%0d)): %h",
                             $time, X, Y, noc_in_data[`NOC_DST_X], noc_in_data[`NOC_DST_Y],
                             noc_in_data[`NOC_SRC_X], noc_in_data[`NOC_SRC_Y], noc_in_data);
                    in_err <= 1'b1;
                end
                if (!rdq_push && !wrq_push)
                    $display("%m t=%0t: MAG(%0d,%0d) dropped a flit of type 0x%h from (%0d,%0d) txn 0x%h (not a memory request)",
                             $time, X, Y, in_type, noc_in_data[`NOC_SRC_X], noc_in_data[`NOC_SRC_Y],
                             noc_in_data[`NOC_TXN]);
            end
        end
    end

    // ================================================================ write intake (mag_write.v)
    wire [SLW-1:0] rdyq_head;
    wire           rdyq_empty;
    wire           ws_issue;
    wire [8:0]     w_head_beats;
    wire [7:0]     ack_src;
    wire [7:0]     ack_txn;
    wire           w_none_open;
    wire           w_err;
    reg            ws_done;    // the write machine sent wr_cur's ack last edge: free its slot
    reg  [SLW-1:0] wr_cur;
    mag_write #(.X(X), .Y(Y), .DRAM_WORDS(DRAM_WORDS), .BASE(BASE), .WR_SLOTS(WR_SLOTS), .SLW(SLW)) u_write (
        .clk(clk), .resetn(resetn), .wq(wq), .wrq_empty(wrq_empty), .wrq_pop(wrq_pop),
        .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data),
        .ws_issue(ws_issue), .rdyq_head(rdyq_head), .rdyq_empty(rdyq_empty), .head_beats(w_head_beats),
        .wr_cur(wr_cur), .ws_done(ws_done), .ack_src(ack_src), .ack_txn(ack_txn), .none_open(w_none_open),
        .q_err(q_err[3]), .err(w_err));

    // ================================================================ read queue head
    // Descriptor fields (units.md M.1, M.2).
    /* verilator lint_off UNUSEDSIGNAL */  // bits [4:0]: the byte within a word
    wire [39:0] rq_off   = rq[255:216] - BASE;   // byte offset into the DRAM (BASE and above)
    /* verilator lint_on UNUSEDSIGNAL */
    wire [34:0] rq_word  = rq_off[39:5];
    wire [7:0]  rq_len   = rq[215:208];
    wire        rq_flag7 = rq[207];               // not defined by M.1
    wire        rq_strm  = rq[206];
    wire        rq_blay  = rq[205];
    wire        rq_quant = rq[204];
    wire        rq_entry = rq_strm || rq_quant;   // an entry read; else a plain read of len+1 beats
    wire        rq_stage = rq[255] && !rq[254];   // staging aperture (M.4): dropped
    wire [7:0]  rq_count = rq[199:192];
    wire [23:0] rq_peer  = rq[191:168];
    wire [1:0]  rq_npeer = rq[167:166];
    wire [7:0]  rq_ewf   = rq[165:158];
    wire [2:0]  rq_ew    = (rq_quant || rq_ewf == 8'd0 || rq_ewf > 8'd4) ? 3'd4 : rq_ewf[2:0];
    wire [3:0]  rq_eb    = rq_quant ? 4'd8 : {1'b0, rq_ew};                // DRAM words per entry
    wire [8:0]  rq_cnt   = !rq_strm ? 9'd1 : (rq_count == 8'd0) ? 9'd1 : {1'b0, rq_count};
    wire [10:0] rq_nw    = {2'd0, rq_cnt} * {7'd0, rq_eb};                 // at most 255 * 8
    wire [10:0] rq_words = rq_entry ? rq_nw : {3'd0, rq_len} + 11'd1;
    // Destinations in header order {x,y}: requester, then the peers ({y,x} bytes).
    wire [31:0] rq_dest  = {rq_peer[19:16], rq_peer[23:20], rq_peer[11:8], rq_peer[15:12],
                            rq_peer[3:0], rq_peer[7:4], rq[279:272]};

    // ================================================================ engines
    localparam [1:0] S_IDLE = 2'd0, S_RD = 2'd1, S_WR = 2'd2;        // plain read / write machine
    reg [1:0]    st;

    // The entry read engine, its quantiser and the emit buffer (mag_entry.v).
    wire         e_idle;
    wire         e_ar_go;
    wire [34:0]  e_ar_word;
    wire [3:0]   e_ar_beats;
    wire         e_fill_ready;
    wire         emit_go;
    wire [7:0]   emit_dest;
    wire [7:0]   emit_tag;
    wire         emit_last;
    wire [1:0]   emit_word;
    wire [255:0] emit_data;

    wire rq_ok     = !rdq_empty && !rq_stage;
    wire take_rd_x = !rdq_empty && rq_stage && e_idle && st != S_RD;   // dropped (no staging here)
    wire take_rd_e = rq_ok && rq_entry && e_idle && st != S_RD;
    wire take_rd_p = rq_ok && !rq_entry && e_idle && st == S_IDLE;
    assign rdq_pop  = take_rd_x || take_rd_e || take_rd_p;
    assign ws_issue = st == S_IDLE && !rdyq_empty && !take_rd_p;     // a waiting plain read goes first

    // The engine's AR and AW registers, held until the DRAM port takes them (mag_port.v).
    reg          m_arv;
    reg  [34:0]  m_ar_word;
    reg  [8:0]   m_ar_beats;
    reg          m_awv;
    reg  [8:0]   m_aw_beats;
    wire         ar_ready;
    wire         aw_ready;
    wire         r_valid;
    wire [255:0] r_data;
    wire         b_valid;
    reg  [8:0]   bt_left;     // beats of the current read burst not yet taken
    wire         r_last = bt_left == 9'd1;

    // Output register arbitration: the emit buffer first; a plain-read beat or an ack otherwise.
    reg  [287:0] out_r;
    reg          out_v;
    reg          out_ack;     // out_r holds a MEM_WR_ACK
    wire out_free = !out_v || !noc_out_busy;
    wire st_out   = out_free && !emit_go;
    wire r_ready  = (st == S_RD && st_out) || e_fill_ready;
    wire r_take   = r_valid && r_ready;

    wire port_err;
    mag_port #(.AR_FIFO_LAT(AR_FIFO_LAT), .R_FIFO_LAT(R_FIFO_LAT), .W_FIFO_LAT(W_FIFO_LAT),
               .B_FIFO_LAT(B_FIFO_LAT), .R_FIFO_DEPTH(R_FIFO_DEPTH)) u_port (
        .clk(clk), .resetn(resetn),
        .ar_valid(m_arv), .ar_addr(m_ar_word), .ar_beats(m_ar_beats), .ar_ready(ar_ready),
        .aw_valid(m_awv), .aw_beats(m_aw_beats), .aw_ready(aw_ready),
        .r_valid(r_valid), .r_data(r_data), .r_ready(r_ready), .b_valid(b_valid),
        .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),
        .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data), .mon_err(port_err));

    mag_entry #(.QUANT_LAT(QUANT_LAT)) u_entry (
        .clk(clk), .resetn(resetn), .take(take_rd_e),
        .rq_dest(rq_dest), .rq_npeer(rq_npeer), .rq_txn(rq[`NOC_TXN]), .rq_cnt(rq_cnt), .rq_quant(rq_quant),
        .rq_blay(rq_blay), .rq_eb(rq_eb), .rq_elast(rq_ew[1:0] - 2'd1), .rq_word(rq_word), .idle(e_idle),
        .ar_go(e_ar_go), .ar_word(e_ar_word), .ar_beats(e_ar_beats), .fill_ready(e_fill_ready),
        .r_take(r_take), .r_last(r_last), .r_data(r_data), .out_free(out_free), .emit_go(emit_go),
        .emit_dest(emit_dest), .emit_tag(emit_tag), .emit_last(emit_last), .emit_word(emit_word),
        .emit_data(emit_data));

    // ---------------------------------------------------------------- plain reads and writes
    // Upstream's `st`: a plain read is one burst, each beat a MEM_RD_RESP; a write transaction is
    // AW, then B, then the MEM_WR_ACK (mag_mem_port.v 594-600, 662-760).
    reg  [7:0]    pr_dst;     // plain read: requester {x,y}, txn
    reg  [7:0]    pr_txn;
    reg           wr_b;       // the write machine's B, caught while the output register was taken
    wire          pr_beat = st == S_RD && r_take;
    wire          wr_ack  = st == S_WR && (b_valid || wr_b) && st_out;
    always @(posedge clk) begin
        if (!resetn) begin
            st      <= S_IDLE;
            m_awv   <= 1'b0;
            wr_b    <= 1'b0;
            ws_done <= 1'b0;
        end else begin
            ws_done <= 1'b0;
            if (m_awv && aw_ready) m_awv <= 1'b0;
            if (b_valid && st == S_WR) wr_b <= 1'b1;
            case (st)
                S_IDLE: if (take_rd_p) begin
                    pr_dst     <= rq[279:272];
                    pr_txn     <= rq[`NOC_TXN];
                    st         <= S_RD;
                end else if (ws_issue) begin
                    wr_cur     <= rdyq_head;
                    m_awv      <= 1'b1;
                    m_aw_beats <= w_head_beats;
                    wr_b       <= 1'b0;
                    st         <= S_WR;
                end
                S_RD: if (r_take && r_last) st <= S_IDLE;
                S_WR: if (wr_ack) begin
                    wr_b    <= 1'b0;
                    ws_done <= 1'b1;
                    st      <= S_IDLE;
                end
                default: st <= S_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------- the AR register
    // One burst at a time for both engines: a plain read's len+1 beats, an entry's eb.
    always @(posedge clk) begin
        if (!resetn) begin
            m_arv   <= 1'b0;
            bt_left <= 9'd0;
        end else begin
            if (m_arv && ar_ready) m_arv <= 1'b0;
            if (r_take) bt_left <= bt_left - 9'd1;
            if (take_rd_p) begin                        // take_rd_p is taken in S_IDLE only
                m_arv      <= 1'b1;
                m_ar_word  <= rq_word;
                m_ar_beats <= {1'b0, rq_len} + 9'd1;
                bt_left    <= {1'b0, rq_len} + 9'd1;
            end
            if (e_ar_go) begin
                m_arv      <= 1'b1;
                m_ar_word  <= e_ar_word;
                m_ar_beats <= {5'd0, e_ar_beats};
                bt_left    <= {5'd0, e_ar_beats};
            end
        end
    end

    // ---------------------------------------------------------------- the output register
    always @(posedge clk) begin
        if (!resetn) begin
            out_v   <= 1'b0;
            out_ack <= 1'b0;
        end else if (emit_go) begin
            out_r   <= {emit_dest, X4, Y4, T_RD_RESP, emit_tag, emit_last, 1'b0, emit_word, emit_data};
            out_v   <= 1'b1;
            out_ack <= 1'b0;
        end else if (wr_ack) begin
            out_r   <= {ack_src, X4, Y4, T_WR_ACK, ack_txn, 1'b1, 3'd0, 256'd0};
            out_v   <= 1'b1;
            out_ack <= 1'b1;
        end else if (pr_beat) begin
            out_r   <= {pr_dst, X4, Y4, T_RD_RESP, pr_txn, r_last, 3'd0, r_data};
            out_v   <= 1'b1;
            out_ack <= 1'b0;
        end else if (out_v && !noc_out_busy) begin
            out_v   <= 1'b0;
        end
    end

    // ---------------------------------------------------------------- read request checks
    reg r_err;
    initial r_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            r_err <= 1'b0;
        end else begin
            if (m_arv && !ar_ready && (take_rd_p || e_ar_go)) begin
                $display("ERROR %m t=%0t: MAG(%0d,%0d) read engine issued a burst while its previous one was not yet taken by the DRAM port", $time, X, Y);
                r_err <= 1'b1;
            end
            if (rdq_pop) begin
                if (rq_stage) begin
                    $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_RD_REQ from (%0d,%0d) txn 0x%h to the staging aperture (addr 0x%h, flags 0x%h): this agent has no staging; dropped without a response (units.md M.4)",
                             $time, X, Y, rq[`NOC_SRC_X], rq[`NOC_SRC_Y], rq[`NOC_TXN], rq[255:216], rq[207:200]);
                    r_err <= 1'b1;
                end else begin
                    if (rq_flag7) begin
                        $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_RD_REQ from (%0d,%0d) txn 0x%h has flags 0x%h: bit 7 is not defined by units.md M.1; served as if it were clear",
                                 $time, X, Y, rq[`NOC_SRC_X], rq[`NOC_SRC_Y], rq[`NOC_TXN], rq[207:200]);
                        r_err <= 1'b1;
                    end
                    if (past_end(rq_word, rq_words)) begin
                        $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_RD_REQ from (%0d,%0d) txn 0x%h reads outside the DRAM: addr 0x%h = DRAM word 0x%h + %0d, DRAM holds %0d words from byte address 0x%h (those read as 0)",
                                 $time, X, Y, rq[`NOC_SRC_X], rq[`NOC_SRC_Y], rq[`NOC_TXN], rq[255:216], rq_word,
                                 rq_words, DRAM_WORDS, BASE);
                        r_err <= 1'b1;
                    end
                end
            end
        end
    end
    assign noc_out_data  = out_r;
    assign noc_out_valid = out_v;

    noc_link_mon #(.WIDTH(288)) u_out_mon (
        .clk(clk), .resetn(resetn), .valid(out_v), .busy(noc_out_busy), .data(out_r),
        .mon_err(q_err[4]));
    assign q_err[5] = port_err;

    // ================================================================ writes_idle
    // Read by the host's loader through the hierarchy (<agent>.writes_idle) to know that every
    // write which reached the agent is in the DRAM and acknowledged.
    /* verilator lint_off UNUSEDSIGNAL */  // read through the hierarchy only
    wire writes_idle = wrq_empty && w_none_open && !(out_v && out_ack);
    /* verilator lint_on UNUSEDSIGNAL */

    assign mon_err = in_err | w_err | r_err | (|q_err);
endmodule
`default_nettype wire
