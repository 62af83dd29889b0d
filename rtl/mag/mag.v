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
// unit shares one read queue, one read engine and one write machine:
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

    // Past the end: first word + number of words > DRAM_WORDS (36-bit arithmetic).
    function automatic past_end(input [34:0] first, input [10:0] n);
        reg [35:0] end_word;
        begin
            end_word = {1'b0, first} + {25'd0, n};
            past_end = (end_word[35:31] != 5'd0) || (end_word[30:0] > WORDS31);
        end
    endfunction

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

    // ================================================================ write intake
    // Reassembly state per source coordinate {x,y}: open flag, discard flag (a staging-aperture
    // write: its beats are taken and dropped), first word, last beat, beats done, its slot. A
    // slot per write taken and not yet acknowledged: writer, txn, beats.
    reg [255:0] w_open;
    reg [255:0] w_disc;
    reg [34:0]  w_addr [0:255];
    reg [7:0]   w_len  [0:255];
    reg [7:0]   w_beat [0:255];
    reg [7:0]   w_txn  [0:255];
    reg [SLW-1:0] w_slot [0:255];
    reg [WR_SLOTS-1:0] sl_v;
    reg [7:0]   sl_src   [0:WR_SLOTS-1];
    reg [7:0]   sl_txn   [0:WR_SLOTS-1];
    reg [8:0]   sl_beats [0:WR_SLOTS-1];

    wire [7:0]  wsrc      = wq[279:272];
    wire        wq_is_req = wq[`NOC_TYPE] == T_WR_REQ;
    /* verilator lint_off UNUSEDSIGNAL */  // bits [4:0]: the byte within a word
    wire [39:0] wq_off    = wq[255:216] - BASE;   // byte offset into the DRAM (BASE and above)
    /* verilator lint_on UNUSEDSIGNAL */
    wire [34:0] wq_word   = wq_off[39:5];
    wire        w_is_open = w_open[wsrc];
    wire        wq_stage  = wq[255] && !wq[254];   // staging aperture (units.md M.4)
    wire [7:0]  w_cur_len = w_len[wsrc];
    wire [7:0]  w_cur_beat = w_beat[wsrc];
    wire        w_final   = w_cur_beat == w_cur_len;

    // lowest free slot (upstream allocates the same way)
    reg [SLW-1:0] sl_free;
    reg           sl_has_free;
    integer       si;
    always @* begin
        sl_free     = {SLW{1'b0}};
        sl_has_free = 1'b0;
        for (si = WR_SLOTS - 1; si >= 0; si = si - 1)
            if (!sl_v[si]) begin
                sl_free     = si[SLW-1:0];
                sl_has_free = 1'b1;
            end
    end

    // A request that opens a slot waits for a free one; one dropped or discarded needs none.
    wire   w_needs_slot = wq_is_req && !w_is_open && !wq_stage;
    assign wrq_pop      = !wrq_empty && (!w_needs_slot || sl_has_free);
    wire   w_data_in    = wrq_pop && !wq_is_req && w_is_open;
    assign mem_wr_req   = w_data_in && !w_disc[wsrc];
    assign mem_wr_addr  = w_addr[wsrc] + {27'd0, w_cur_beat};
    assign mem_wr_data  = wq[255:0];
    wire   rdyq_push    = mem_wr_req && w_final;       // all beats in: ready, in this order

    reg           ws_done;    // the write machine sent wr_cur's ack last edge: free its slot
    reg [SLW-1:0] wr_cur;

    // Wedged: a request waits for a slot while every slot still receives its beats, whose data can
    // only come from behind that request (upstream's deadlock when WR_SLOTS is below the writers).
    reg  [8:0] sl_recv;       // slots whose write is still receiving beats
    reg        w_wedged;
    wire       w_wedge = !wrq_empty && w_needs_slot && !sl_has_free && sl_recv == WR_SLOTS[8:0];

    reg w_err;
    initial w_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            w_open   <= 256'd0;
            w_disc   <= 256'd0;
            sl_v     <= {WR_SLOTS{1'b0}};
            sl_recv  <= 9'd0;
            w_wedged <= 1'b0;
            w_err    <= 1'b0;
        end else begin
            if (ws_done) sl_v[wr_cur] <= 1'b0;
            sl_recv <= sl_recv + {8'd0, wrq_pop && w_needs_slot} - {8'd0, rdyq_push};
            if (w_wedge && !w_wedged) begin
                $display("ERROR %m t=%0t: MAG(%0d,%0d) write intake wedged: MEM_WR_REQ from (%0d,%0d) waits for one of the WR_SLOTS=%0d write slots, all held by writes whose data is queued behind it; WR_SLOTS must be at least the number of units writing at once",
                         $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], WR_SLOTS);
                w_wedged <= 1'b1;
                w_err    <= 1'b1;
            end
            if (wrq_pop) begin
                if (wq_is_req) begin
                    if (w_is_open) begin
                        $display("ERROR %m t=%0t: MAG(%0d,%0d) second MEM_WR_REQ from (%0d,%0d) txn 0x%h while its write txn 0x%h is still open (%0d of %0d beats): request dropped",
                                 $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq[`NOC_TXN], w_txn[wsrc],
                                 w_cur_beat, w_cur_len + 9'd1);
                        w_err <= 1'b1;
                    end else begin
                        if (wq[215:208] > 8'd7) begin
                            $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_REQ from (%0d,%0d) txn 0x%h has len %0d > 7 (a write is at most 8 beats); served as %0d beats",
                                     $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq[`NOC_TXN], wq[215:208],
                                     wq[215:208] + 9'd1);
                            w_err <= 1'b1;
                        end
                        if (wq_stage) begin
                            $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_REQ from (%0d,%0d) txn 0x%h to the staging aperture (addr 0x%h): this agent has no staging; its %0d data beats are dropped, no ack (units.md M.4)",
                                     $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq[`NOC_TXN], wq[255:216],
                                     wq[215:208] + 9'd1);
                            w_err <= 1'b1;
                        end else begin
                            if (past_end(wq_word, {3'd0, wq[215:208]} + 11'd1)) begin
                                $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_REQ from (%0d,%0d) txn 0x%h writes outside the DRAM: addr 0x%h = DRAM word 0x%h + %0d, DRAM holds %0d words from byte address 0x%h",
                                         $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq[`NOC_TXN], wq[255:216], wq_word,
                                         wq[215:208] + 9'd1, DRAM_WORDS, BASE);
                                w_err <= 1'b1;
                            end
                            sl_v[sl_free]     <= 1'b1;
                            sl_src[sl_free]   <= wsrc;
                            sl_txn[sl_free]   <= wq[`NOC_TXN];
                            sl_beats[sl_free] <= {1'b0, wq[215:208]} + 9'd1;
                            w_slot[wsrc]      <= sl_free;
                        end
                        w_open[wsrc] <= 1'b1;
                        w_disc[wsrc] <= wq_stage;
                        w_addr[wsrc] <= wq_word;
                        w_len[wsrc]  <= wq[215:208];
                        w_beat[wsrc] <= 8'd0;
                        w_txn[wsrc]  <= wq[`NOC_TXN];
                    end
                end else if (!w_is_open) begin
                    $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_DATA from (%0d,%0d) with no open write: dropped: %h",
                             $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq);
                    w_err <= 1'b1;
                end else begin
                    if (wq[`NOC_LAST] != w_final) begin
                        $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_DATA from (%0d,%0d) beat %0d of %0d (write txn 0x%h) has last=%0d; the beat count ends the burst",
                                 $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], w_cur_beat + 9'd1, w_cur_len + 9'd1,
                                 w_txn[wsrc], wq[`NOC_LAST]);
                        w_err <= 1'b1;
                    end
                    if (w_final) w_open[wsrc] <= 1'b0;
                    else         w_beat[wsrc] <= w_cur_beat + 8'd1;
                end
            end
        end
    end

    // Ready slots in the order their last beat arrived (per writer: its write order).
    wire [SLW-1:0] rdyq_head;
    wire           rdyq_empty;
    wire           ws_issue;
    /* verilator lint_off UNUSEDSIGNAL */  // never rises: at most WR_SLOTS slots exist
    wire           rdyq_full;
    /* verilator lint_on UNUSEDSIGNAL */
    noc_fifo #(.WIDTH(SLW), .DEPTH(WR_SLOTS)) u_rdyq (
        .clk(clk), .resetn(resetn), .push(rdyq_push), .din(w_slot[wsrc]),
        .pop(ws_issue), .dout(rdyq_head), .empty(rdyq_empty), .full(rdyq_full), .mon_err(q_err[3]));

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
    localparam [1:0] RS_IDLE = 2'd0, RS_FILL = 2'd1, RS_WAIT = 2'd2;  // entry read engine
    reg [1:0]    st;
    reg [1:0]    rs;
    reg          e_act;       // the emit buffer holds an entry not yet sent to every destination
    reg          q_start;     // the quantiser is re-armed this cycle: no beat taken

    wire rd_free   = rs == RS_IDLE && !e_act;
    wire rq_ok     = !rdq_empty && !rq_stage;
    wire take_rd_x = !rdq_empty && rq_stage && rd_free && st != S_RD;   // dropped (no staging here)
    wire take_rd_e = rq_ok && rq_entry && rd_free && st != S_RD;
    wire take_rd_p = rq_ok && !rq_entry && rd_free && st == S_IDLE;
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
    wire emit_go  = e_act && out_free;
    wire st_out   = out_free && !emit_go;
    wire r_ready  = (st == S_RD && st_out) || (rs == RS_FILL && !q_start);
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

    // ---------------------------------------------------------------- quantiser timing
    // A QUANT beat taken at edge b is registered (b+1) and enters the quantiser at b+2; beats 0..6
    // are kept in q_raw, the 8th completes q_in (the converter's only input, so it converts once
    // per entry) and starts the latency count: q_done is high the cycle after QUANT_LAT edges.
    reg           rd_quant;
    reg           rd_blay;
    reg           q_bv;
    reg  [255:0]  q_bd;
    reg  [2:0]    q_n;
    reg  [6:0]    q_t;
    reg           q_done;
    reg  [1791:0] q_raw;
    reg  [2047:0] q_in;
    wire [1023:0] q_out;

    mag_quant u_quant (.raw(q_in), .blayout(rd_blay), .words(q_out));

    // The quantiser's inputs, q_in and rd_blay, run on q_clk: clk gated by their write conditions
    // (rtl/arith/clock_gate.v), so Verilator evaluates the quantiser only on the edges that load
    // an entry (or take an entry read), not on every edge of clk.
    wire          q_load = q_bv && !q_start && q_n == 3'd7;     // the 8th beat completes q_in
    wire          rd_take = rs == RS_IDLE && take_rd_e;         // an entry read starts: its packing
    wire          q_clk;
    clock_gate u_q_gate (.clk(clk), .en(!resetn || q_load || rd_take), .gclk(q_clk));
    always @(posedge q_clk) begin
        if (!resetn) begin
            rd_blay <= 1'b0;
        end else begin
            if (q_load)  q_in    <= {q_bd, q_raw};
            if (rd_take) rd_blay <= rq_blay;
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            q_bv   <= 1'b0;
            q_n    <= 3'd0;
            q_t    <= 7'd0;
            q_done <= 1'b0;
        end else begin
            q_bv   <= r_take && rs == RS_FILL && rd_quant;
            if (r_take) q_bd <= r_data;
            q_done <= q_t == 7'd1;
            if (q_t != 7'd0) q_t <= q_t - 7'd1;
            if (q_start) begin
                q_n <= 3'd0;
            end else if (q_bv) begin
                if (q_n != 3'd7) begin
                    q_raw[{q_n, 8'd0} +: 256] <= q_bd;
                    q_n <= q_n + 3'd1;
                end else begin           // q_in is loaded on q_clk
                    q_n  <= 3'd0;
                    q_t  <= QUANT_LAT[6:0];
                end
            end
        end
    end

    // ---------------------------------------------------------------- the engines and the output
    reg  [7:0]    pr_dst;     // plain read: requester {x,y}, txn
    reg  [7:0]    pr_txn;
    reg           wr_b;       // the write machine's B, caught while the output register was taken
    reg  [31:0]   rd_dest;    // entry read: destinations {x,y}, requester first
    reg  [1:0]    rd_nd;      // peers
    reg  [7:0]    rd_txn;
    reg  [8:0]    rd_cnt;     // entries
    reg  [7:0]    rd_ent;     // entry being fetched
    reg  [3:0]    rd_eb;      // DRAM words per entry
    reg  [1:0]    rd_elast;   // last response word of an entry
    reg  [34:0]   rd_anext;   // next entry's first word
    reg           q_rdy;      // the entry's words are ready for the emit buffer
    reg  [255:0]  p_w [0:3];  // an entry without QUANT: its words as they arrive
    reg  [1:0]    p_cnt;
    reg  [1023:0] e_w;        // the emit buffer
    reg  [7:0]    e_tag;
    reg  [1:0]    e_dst;
    reg  [1:0]    q_emit;
    wire          more_ent = {1'b0, rd_ent} + 9'd1 < rd_cnt;
    wire [7:0]    e_dest   = rd_dest[{e_dst, 3'b000} +: 8];

    reg r_err;
    initial r_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            st       <= S_IDLE;
            rs       <= RS_IDLE;
            out_v    <= 1'b0;
            out_ack  <= 1'b0;
            m_arv    <= 1'b0;
            m_awv    <= 1'b0;
            wr_b     <= 1'b0;
            ws_done  <= 1'b0;
            e_act    <= 1'b0;
            q_start  <= 1'b0;
            q_rdy    <= 1'b0;
            rd_quant <= 1'b0;
            bt_left  <= 9'd0;
            r_err    <= 1'b0;
        end else begin
            ws_done <= 1'b0;
            if (out_v && !noc_out_busy) out_v <= 1'b0;
            if (m_arv && ar_ready) m_arv <= 1'b0;
            if (m_awv && aw_ready) m_awv <= 1'b0;
            if (b_valid && st == S_WR) wr_b <= 1'b1;
            if (q_done) q_rdy <= 1'b1;
            if (r_take) bt_left <= bt_left - 9'd1;
            if (m_arv && !ar_ready && (take_rd_p || take_rd_e || (rs == RS_FILL && r_take && r_last && more_ent))) begin
                $display("ERROR %m t=%0t: MAG(%0d,%0d) read engine issued a burst while its previous one was not yet taken by the DRAM port", $time, X, Y);
                r_err <= 1'b1;
            end

            // ---- request checks at the take (both engines)
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

            // ---- plain reads and writes (upstream's `st`)
            case (st)
                S_IDLE: if (take_rd_p) begin
                    pr_dst     <= rq[279:272];
                    pr_txn     <= rq[`NOC_TXN];
                    m_arv      <= 1'b1;
                    m_ar_word  <= rq_word;
                    m_ar_beats <= {1'b0, rq_len} + 9'd1;
                    bt_left    <= {1'b0, rq_len} + 9'd1;
                    st         <= S_RD;
                end else if (ws_issue) begin
                    wr_cur     <= rdyq_head;
                    m_awv      <= 1'b1;
                    m_aw_beats <= sl_beats[rdyq_head];
                    wr_b       <= 1'b0;
                    st         <= S_WR;
                end
                S_RD: if (r_take) begin
                    out_r   <= {pr_dst, X4, Y4, T_RD_RESP, pr_txn, r_last, 3'd0, r_data};
                    out_v   <= 1'b1;
                    out_ack <= 1'b0;
                    if (r_last) st <= S_IDLE;
                end
                S_WR: if ((b_valid || wr_b) && st_out) begin
                    out_r   <= {sl_src[wr_cur], X4, Y4, T_WR_ACK, sl_txn[wr_cur], 1'b1, 3'd0, 256'd0};
                    out_v   <= 1'b1;
                    out_ack <= 1'b1;
                    wr_b    <= 1'b0;
                    ws_done <= 1'b1;
                    st      <= S_IDLE;
                end
                default: st <= S_IDLE;
            endcase

            // ---- entry reads (upstream's `rs`)
            case (rs)
                RS_IDLE: if (take_rd_e) begin
                    rd_dest    <= rq_dest;
                    rd_nd      <= rq_npeer;
                    rd_txn     <= rq[`NOC_TXN];
                    rd_cnt     <= rq_cnt;
                    rd_ent     <= 8'd0;
                    rd_quant   <= rq_quant;    // rd_blay <= rq_blay on q_clk
                    rd_eb      <= rq_eb;
                    rd_elast   <= rq_ew[1:0] - 2'd1;
                    rd_anext   <= rq_word + {31'd0, rq_eb};
                    m_arv      <= 1'b1;
                    m_ar_word  <= rq_word;
                    m_ar_beats <= {5'd0, rq_eb};
                    bt_left    <= {5'd0, rq_eb};
                    q_start    <= rq_quant;
                    p_cnt      <= 2'd0;
                    rs         <= RS_FILL;
                end
                RS_FILL: begin
                    q_start <= 1'b0;
                    if (r_take && !rd_quant) begin
                        p_w[p_cnt] <= r_data;
                        p_cnt      <= p_cnt + 2'd1;
                        if (r_last) q_rdy <= 1'b1;
                    end
                    if (r_take && r_last) begin
                        rs <= RS_WAIT;
                        if (more_ent) begin       // the next entry's burst at once
                            m_arv      <= 1'b1;
                            m_ar_word  <= rd_anext;
                            m_ar_beats <= {5'd0, rd_eb};
                            bt_left    <= {5'd0, rd_eb};
                            rd_anext   <= rd_anext + {31'd0, rd_eb};
                        end
                    end
                end
                RS_WAIT: if (q_rdy && !e_act) begin
                    e_w    <= rd_quant ? q_out : {p_w[3], p_w[2], p_w[1], p_w[0]};
                    e_tag  <= rd_txn + rd_ent;
                    e_act  <= 1'b1;
                    e_dst  <= 2'd0;
                    q_emit <= 2'd0;
                    q_rdy  <= 1'b0;
                    if (more_ent) begin
                        rd_ent  <= rd_ent + 8'd1;
                        q_start <= rd_quant;
                        p_cnt   <= 2'd0;
                        rs      <= RS_FILL;
                    end else begin
                        rs <= RS_IDLE;
                    end
                end
                default: rs <= RS_IDLE;
            endcase

            // ---- the emit buffer: ew words to each destination in turn, one a cycle
            if (emit_go) begin
                out_r   <= {e_dest, X4, Y4, T_RD_RESP, e_tag, q_emit == rd_elast, 1'b0, q_emit,
                            e_w[{q_emit, 8'd0} +: 256]};
                out_v   <= 1'b1;
                out_ack <= 1'b0;
                if (q_emit == rd_elast) begin
                    q_emit <= 2'd0;
                    if (e_dst != rd_nd) e_dst <= e_dst + 2'd1;
                    else                e_act <= 1'b0;
                end else begin
                    q_emit <= q_emit + 2'd1;
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
    wire writes_idle = wrq_empty && (w_open == 256'd0) && (sl_v == {WR_SLOTS{1'b0}}) && !(out_v && out_ack);
    /* verilator lint_on UNUSEDSIGNAL */

    assign mon_err = in_err | w_err | r_err | (|q_err);
endmodule
`default_nettype wire
