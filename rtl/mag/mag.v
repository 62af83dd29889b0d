// Memory agent (MAG): one NoC endpoint in front of a DRAM (rtl/mag/mag_dram.v).
//
// Protocol (fixed: protocol.md §5, units.md M.1-M.4; flit fields in models/flit.py):
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
//     the writer once the last word is written;
//   * staging aperture (addr[39] = 1, addr[38] = 0, M.4): this agent has no
//     staging, so such a read is dropped without a response, and such a write
//     takes its data beats and drops them, no ack (both also reported, below);
//   * any other type is taken and dropped (a plain $display line, not an error).
//
// Micro-architecture (ours):
//   intake: a read queue (MEM_RD_REQ) and a write queue (MEM_WR_REQ and
//     MEM_WR_DATA); busy = either queue full, so it depends only on our state;
//   write engine: pops the write queue one flit a cycle, keeps a reassembly
//     slot per source coordinate (256 of them), writes each data word straight
//     into the DRAM and queues the ack when the last one is written;
//   read engine: takes one descriptor at a time and issues its words to the
//     DRAM in chunks (an entry of an entry read: 8 words with QUANT, ew
//     without; up to four words of a plain read); each chunk owns one of
//     SLOTS four-word buffers, which the send stage drains to every
//     destination before freeing it. A plain or non-QUANT chunk may start
//     sending as its first word lands; a QUANT entry collects its 8 words in
//     q_raw/q_in, and the cycle after the 8th word its four converted words
//     are written into the slot (one conversion per entry);
//   output: one register on the NoC output, shared by read responses and acks
//     (taking turns when both wait).
//
// writes_idle (internal wire, read through the hierarchy by the host loader):
//   1 when no write flit is queued, no write is open and no MEM_WR_ACK is
//   queued or held in the output register; every write that reached the agent
//   has then been written into the DRAM.
//
// Parameters are checked at elaboration (an ERROR line, then $finish): X, Y in
// 0..15; 1 <= DRAM_WORDS < 2**31; BASE 32-byte aligned; SLOTS a power of two
// >= 2; queue depths >= 1.
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
//   * a read or write reaching outside the DRAM (below BASE or past
//     DRAM_WORDS; such words read as 0);
//   * a DRAM read word returned with no read outstanding; the queues' own
//     write-while-full / pop-while-empty monitors (noc_fifo).
// models/mag.py (MagModel, MagUnit) is the golden model.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module mag #(
    parameter integer X = 0,
    parameter integer Y = 1,
    parameter integer DRAM_WORDS = 65536,   // words of the DRAM behind us (< 2**31)
    parameter [39:0]  BASE = 40'd0,         // byte address of DRAM word 0 (the machine's memory window)
    parameter integer RDQ_DEPTH = 4,        // read descriptors waiting
    parameter integer WRQ_DEPTH = 4,        // write requests and data flits waiting
    parameter integer ACKQ_DEPTH = 4,       // write acks waiting for the output
    parameter integer SLOTS = 4             // four-word read buffers (a power of two, >= 2)
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] noc_in_data,
    input  wire         noc_in_valid,
    output wire         noc_in_busy,
    output wire [287:0] noc_out_data,
    output wire         noc_out_valid,
    input  wire         noc_out_busy,
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
    localparam integer SW = (SLOTS <= 2) ? 1 : $clog2(SLOTS);

    generate
        if (X < 0 || X > 15 || Y < 0 || Y > 15 || DRAM_WORDS < 1 || DRAM_WORDS > 32'h7FFF_FFFF
            || BASE[4:0] != 5'd0 || SLOTS < 2 || (SLOTS & (SLOTS - 1)) != 0
            || RDQ_DEPTH < 1 || WRQ_DEPTH < 1 || ACKQ_DEPTH < 1) begin : g_bad_param
            initial begin
                $fatal(1, "mag %m: X=%0d Y=%0d DRAM_WORDS=%0d BASE=0x%h SLOTS=%0d RDQ_DEPTH=%0d WRQ_DEPTH=%0d ACKQ_DEPTH=%0d: need X, Y in 0..15 (4-bit coordinates), 1 <= DRAM_WORDS < 2**31, BASE 32-byte aligned (it is DRAM word 0), SLOTS a power of two >= 2, every depth >= 1",
                         X, Y, DRAM_WORDS, BASE, SLOTS, RDQ_DEPTH, WRQ_DEPTH, ACKQ_DEPTH);
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
    wire        rdq_full;
    wire        wrq_full;
    assign noc_in_busy = rdq_full || wrq_full;
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
    wire [4:0]   q_err;

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
        end else if (in_take) begin
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

    // ================================================================ write engine
    // Reassembly slot per source coordinate {x,y}: open flag, discard flag (a staging-aperture
    // write: its beats are taken and dropped), next word, last beat, beats done, txn.
    reg [255:0] w_open;
    reg [255:0] w_disc;
    reg [34:0]  w_addr [0:255];
    reg [7:0]   w_len  [0:255];
    reg [7:0]   w_beat [0:255];
    reg [7:0]   w_txn  [0:255];

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
    wire        ackq_full;
    wire        ackq_empty;
    wire [15:0] ackq_head;    // {writer {x,y}, txn}
    wire        take_ack;

    assign wrq_pop     = !wrq_empty && !ackq_full;
    assign mem_wr_req  = wrq_pop && !wq_is_req && w_is_open && !w_disc[wsrc];
    assign mem_wr_addr = w_addr[wsrc] + {27'd0, w_cur_beat};
    assign mem_wr_data = wq[255:0];
    wire   ack_push    = mem_wr_req && w_final;

    noc_fifo #(.WIDTH(16), .DEPTH(ACKQ_DEPTH)) u_ackq (
        .clk(clk), .resetn(resetn), .push(ack_push), .din({wsrc, w_txn[wsrc]}),
        .pop(take_ack), .dout(ackq_head), .empty(ackq_empty), .full(ackq_full), .mon_err(q_err[3]));

    reg w_err;
    initial w_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            w_open <= 256'd0;
            w_disc <= 256'd0;
            w_err  <= 1'b0;
        end else if (wrq_pop) begin
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
                    end else if (past_end(wq_word, {3'd0, wq[215:208]} + 11'd1)) begin
                        $display("ERROR %m t=%0t: MAG(%0d,%0d) MEM_WR_REQ from (%0d,%0d) txn 0x%h writes outside the DRAM: addr 0x%h = DRAM word 0x%h + %0d, DRAM holds %0d words from byte address 0x%h",
                                 $time, X, Y, wq[`NOC_SRC_X], wq[`NOC_SRC_Y], wq[`NOC_TXN], wq[255:216], wq_word,
                                 wq[215:208] + 9'd1, DRAM_WORDS, BASE);
                        w_err <= 1'b1;
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

    // ================================================================ read engine: issue
    // Descriptor fields of the read queue head (units.md M.1, M.2).
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

    reg          is_act;      // a descriptor is being issued
    reg [34:0]   is_addr;     // next DRAM word
    reg [9:0]    is_rem;      // words left (plain) or entries left (entry read)
    reg          is_entry;
    reg          is_quant;
    reg          is_blay;
    reg [2:0]    is_ew;
    reg [7:0]    is_txn;
    reg [31:0]   is_dest;
    reg [1:0]    is_ndm1;     // destinations - 1
    reg [2:0]    is_w;        // DRAM word of the current chunk

    // Read buffers: SLOTS chunks of up to four response words, and what to do with each.
    reg [255:0]  ebuf    [0:SLOTS*4-1];
    reg [2:0]    sl_nw   [0:SLOTS-1];   // response words in the chunk (1..4)
    reg [7:0]    sl_txn  [0:SLOTS-1];
    reg          sl_entry[0:SLOTS-1];   // entry read: rsvd = word index, last on its final word
    reg          sl_quant[0:SLOTS-1];   // 8 DRAM words through the quantiser make the 4 words
    reg          sl_blay [0:SLOTS-1];
    reg          sl_lastc[0:SLOTS-1];   // plain read: this chunk holds the final beat
    reg [31:0]   sl_dest [0:SLOTS-1];
    reg [1:0]    sl_ndm1 [0:SLOTS-1];
    reg [SW:0]   alloc_ptr;             // chunks claimed (issue)
    reg [SW:0]   fill_ptr;              // chunk the DRAM words go to
    reg [2:0]    fill_w;
    reg [SW:0]   done_ptr;              // chunks whose words are all in their slot
    reg [SW:0]   free_ptr;              // chunk being sent (output)

    wire [SW:0]   in_use    = alloc_ptr - free_ptr;
    wire          slots_full = in_use == SLOTS[SW:0];
    wire [2:0]    ck_nw     = is_entry ? is_ew : ((is_rem >= 10'd4) ? 3'd4 : is_rem[2:0]);
    wire [2:0]    ck_last_w = is_quant ? 3'd7 : ck_nw - 3'd1;   // last DRAM word of the chunk
    wire          ck_final  = is_entry ? (is_rem == 10'd1) : (is_rem <= 10'd4);
    wire [SW-1:0] alloc_idx = alloc_ptr[SW-1:0];

    assign rdq_pop     = !is_act && !rdq_empty;
    assign mem_rd_req  = is_act && (is_w != 3'd0 || !slots_full);
    assign mem_rd_addr = is_addr;
    wire   is_go       = mem_rd_req && mem_rd_ready;

    reg r_err;
    initial r_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            is_act    <= 1'b0;
            is_w      <= 3'd0;
            alloc_ptr <= {(SW+1){1'b0}};
            r_err     <= 1'b0;
        end else if (rdq_pop) begin
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
                is_act   <= 1'b1;
            end
            is_addr  <= rq_word;
            is_rem   <= rq_entry ? {1'b0, rq_cnt} : {2'd0, rq_len} + 10'd1;
            is_entry <= rq_entry;
            is_quant <= rq_quant;
            is_blay  <= rq_blay;
            is_ew    <= rq_entry ? rq_ew : 3'd4;
            is_txn   <= rq[`NOC_TXN];
            is_dest  <= rq_dest;
            is_ndm1  <= rq_entry ? rq_npeer : 2'd0;
            is_w     <= 3'd0;
        end else if (is_go) begin
            if (is_w == 3'd0) begin    // first word of a chunk: claim a slot
                sl_nw[alloc_idx]    <= ck_nw;
                sl_txn[alloc_idx]   <= is_txn;
                sl_entry[alloc_idx] <= is_entry;
                sl_quant[alloc_idx] <= is_quant;
                sl_blay[alloc_idx]  <= is_blay;
                sl_lastc[alloc_idx] <= ck_final;
                sl_dest[alloc_idx]  <= is_dest;
                sl_ndm1[alloc_idx]  <= is_ndm1;
                alloc_ptr           <= alloc_ptr + 1'b1;
            end
            is_addr <= is_addr + 35'd1;
            if (is_w == ck_last_w) begin
                is_w   <= 3'd0;
                is_rem <= is_rem - (is_entry ? 10'd1 : {7'd0, ck_nw});
                if (is_entry) is_txn <= is_txn + 8'd1;
                if (ck_final) is_act <= 1'b0;
            end else begin
                is_w <= is_w + 3'd1;
            end
        end
    end

    // ================================================================ read engine: fill
    // A plain or non-QUANT chunk: each DRAM word goes straight into its slot. A QUANT entry:
    // words 0..6 into q_raw, word 7 completes q_in (the quantiser's only input, so it converts
    // once per entry); the next cycle (q_go) writes the four converted words into the slot.
    wire [SW-1:0] fill_idx = fill_ptr[SW-1:0];
    reg  [1791:0] q_raw;
    reg  [2047:0] q_in;
    reg           q_blay;
    reg           q_go;
    reg  [SW-1:0] q_slot;
    wire [1023:0] q_out;

    mag_quant u_quant (.raw(q_in), .blayout(q_blay), .words(q_out));

    wire fill_quant = sl_quant[fill_idx];
    wire fill_last  = fill_w == (fill_quant ? 3'd7 : sl_nw[fill_idx] - 3'd1);
    wire fill_take  = mem_rd_valid && fill_ptr != alloc_ptr;
    wire plain_done = fill_take && fill_last && !fill_quant;   // a chunk without QUANT completes

    reg f_err;
    initial f_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            fill_ptr <= {(SW+1){1'b0}};
            fill_w   <= 3'd0;
            done_ptr <= {(SW+1){1'b0}};
            q_go     <= 1'b0;
            f_err    <= 1'b0;
        end else begin
            if (mem_rd_valid && !fill_take) begin
                $display("ERROR %m t=%0t: MAG(%0d,%0d) DRAM returned a word with no read outstanding", $time, X, Y);
                f_err <= 1'b1;
            end
            if (fill_take) begin
                if (!fill_quant)
                    ebuf[{fill_idx, fill_w[1:0]}] <= mem_rd_data;
                else if (!fill_last)
                    q_raw[{fill_w, 8'd0} +: 256] <= mem_rd_data;
                else begin
                    q_in   <= {mem_rd_data, q_raw};
                    q_blay <= sl_blay[fill_idx];
                    q_slot <= fill_idx;
                end
                if (fill_last) begin
                    fill_w   <= 3'd0;
                    fill_ptr <= fill_ptr + 1'b1;
                end else begin
                    fill_w <= fill_w + 3'd1;
                end
            end
            q_go <= fill_take && fill_last && fill_quant;
            if (q_go) begin
                ebuf[{q_slot, 2'd0}] <= q_out[255:0];
                ebuf[{q_slot, 2'd1}] <= q_out[511:256];
                ebuf[{q_slot, 2'd2}] <= q_out[767:512];
                ebuf[{q_slot, 2'd3}] <= q_out[1023:768];
            end
            // chunks complete in order: a QUANT entry one cycle after its last word
            done_ptr <= done_ptr + {{SW{1'b0}}, q_go} + {{SW{1'b0}}, plain_done};
        end
    end

    // ================================================================ send + output
    reg  [1:0]    send_d;       // destination of the head chunk being sent
    reg  [2:0]    send_w;       // word of the head chunk being sent
    reg  [287:0]  out_r;
    reg           out_v;
    reg           out_ack;      // out_r holds a MEM_WR_ACK
    reg           ack_turn;     // an ack goes first when both wait

    wire [SW-1:0] head_idx = free_ptr[SW-1:0];
    // The head chunk is complete once done_ptr has moved past it; a chunk without QUANT
    // that is still being filled may send the fill_w words already in.
    wire          rd_avail = (in_use != {(SW+1){1'b0}}) &&
                             ((done_ptr != free_ptr) ||
                              (fill_ptr == free_ptr && !sl_quant[head_idx] && send_w < fill_w));
    wire [31:0]   h_dest   = sl_dest[head_idx];
    wire [7:0]    sd_dest  = h_dest[{send_d, 3'b000} +: 8];
    wire          sd_lastw = send_w == sl_nw[head_idx] - 3'd1;
    wire          sd_last  = sd_lastw && (sl_entry[head_idx] || sl_lastc[head_idx]);
    wire [2:0]    sd_rsvd  = sl_entry[head_idx] ? {1'b0, send_w[1:0]} : 3'd0;
    wire [287:0]  rd_flit  = {sd_dest, X4, Y4, T_RD_RESP, sl_txn[head_idx], sd_last, sd_rsvd,
                              ebuf[{head_idx, send_w[1:0]}]};
    wire [287:0]  ack_flit = {ackq_head[15:8], X4, Y4, T_WR_ACK, ackq_head[7:0], 1'b1, 3'd0, 256'd0};

    wire out_free = !out_v || !noc_out_busy;
    assign take_ack = out_free && !ackq_empty && (!rd_avail || ack_turn);
    wire   take_rd  = out_free && rd_avail && !take_ack;

    always @(posedge clk) begin
        if (!resetn) begin
            out_v    <= 1'b0;
            out_ack  <= 1'b0;
            free_ptr <= {(SW+1){1'b0}};
            send_d   <= 2'd0;
            send_w   <= 3'd0;
            ack_turn <= 1'b0;
        end else if (take_ack) begin
            out_r    <= ack_flit;
            out_v    <= 1'b1;
            out_ack  <= 1'b1;
            ack_turn <= 1'b0;
        end else if (take_rd) begin
            out_r    <= rd_flit;
            out_v    <= 1'b1;
            out_ack  <= 1'b0;
            ack_turn <= 1'b1;
            if (sd_lastw) begin
                send_w <= 3'd0;
                if (send_d == sl_ndm1[head_idx]) begin
                    send_d   <= 2'd0;
                    free_ptr <= free_ptr + 1'b1;
                end else begin
                    send_d <= send_d + 2'd1;
                end
            end else begin
                send_w <= send_w + 3'd1;
            end
        end else if (out_v && !noc_out_busy) begin
            out_v <= 1'b0;
        end
    end
    assign noc_out_data  = out_r;
    assign noc_out_valid = out_v;

    noc_link_mon #(.WIDTH(288)) u_out_mon (
        .clk(clk), .resetn(resetn), .valid(out_v), .busy(noc_out_busy), .data(out_r),
        .mon_err(q_err[4]));

    // ================================================================ writes_idle
    // Read by the host's loader through the hierarchy (<agent>.writes_idle) to know that every
    // write which reached the agent is in the DRAM: nothing queued, nothing open, no ack waiting.
    /* verilator lint_off UNUSEDSIGNAL */  // read through the hierarchy only
    wire writes_idle = wrq_empty && (w_open == 256'd0) && ackq_empty && !(out_v && out_ack);
    /* verilator lint_on UNUSEDSIGNAL */

    assign mon_err = in_err | w_err | r_err | f_err | (|q_err);
endmodule
`default_nettype wire
