// mag_write: the memory agent's write intake (rtl/mag/mag.v instantiates it once as u_write):
// MEM_WR_REQ / MEM_WR_DATA reassembly bound by source coordinate, the WR_SLOTS write slots, the
// DRAM write port (each data beat is written the cycle it is taken) and the queue of slots whose
// beats are all in, in the order their last beat arrived. mag.v's write machine pops that queue
// (ws_issue), runs the slot's AW/W/B through the DRAM port, sends the MEM_WR_ACK from ack_src /
// ack_txn and frees the slot with ws_done the edge after. Upstream: KohakuTPU at 7703ee8,
// src/kohakuaccel/mas/core/mag_mem_port.v 34-40 (slots, freed the edge after the ack); the
// write semantics and every monitor below are described in mag.v's header.
//
// Assertion monitors (an ERROR line each; err is sticky until reset): the intake wedged (a request
// waits for a slot while every slot still receives beats queued behind it); a second MEM_WR_REQ
// from a source whose write is open; MEM_WR_REQ with len > 7, to the staging aperture, or past
// the DRAM; MEM_WR_DATA with no open write, or whose last bit disagrees with the beat count.
// The ready queue's own monitor (noc_fifo) drives q_err.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module mag_write #(
    parameter integer X = 0,
    parameter integer Y = 1,
    parameter integer DRAM_WORDS = 65536,   // checked by mag.v
    parameter [39:0]  BASE = 40'd0,
    parameter integer WR_SLOTS = 16,
    parameter integer SLW = 4               // slot index width: mag.v's (WR_SLOTS <= 2) ? 1 : $clog2(WR_SLOTS)
) (
    input  wire           clk,
    input  wire           resetn,
    // the write queue's head (MEM_WR_REQ and MEM_WR_DATA, in arrival order)
    input  wire [287:0]   wq,
    input  wire           wrq_empty,
    output wire           wrq_pop,
    // the DRAM write port: one word written per cycle with mem_wr_req, always taken
    output wire           mem_wr_req,
    output wire [34:0]    mem_wr_addr,
    output wire [255:0]   mem_wr_data,
    // the ready queue, popped by mag.v's write machine; the slot it serves, and its ack's fields
    input  wire           ws_issue,
    output wire [SLW-1:0] rdyq_head,
    output wire           rdyq_empty,
    output wire [8:0]     head_beats,   // beats of the slot at the ready queue's head
    input  wire [SLW-1:0] wr_cur,       // the slot whose transaction runs
    input  wire           ws_done,      // its ack left last edge: free the slot
    output wire [7:0]     ack_src,      // its writer {x,y}
    output wire [7:0]     ack_txn,      // its request's txn
    output wire           none_open,    // no write open, no slot held
    output wire           q_err,
    output wire           err
);
    localparam [3:0]  T_WR_REQ = 4'h1;
    localparam [30:0] WORDS31 = DRAM_WORDS[30:0];

    generate
        if (WR_SLOTS < 1 || WR_SLOTS > 256 || SLW != ((WR_SLOTS <= 2) ? 1 : $clog2(WR_SLOTS))) begin : g_bad_param
            initial $fatal(1, "mag_write %m: WR_SLOTS=%0d SLW=%0d: need WR_SLOTS in 1..256 and SLW = %0d (its slot index width)",
                           WR_SLOTS, SLW, (WR_SLOTS <= 2) ? 1 : $clog2(WR_SLOTS));
        end
    endgenerate

`include "mag_window.vh"

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
    /* verilator lint_off UNUSEDSIGNAL */  // never rises: at most WR_SLOTS slots exist
    wire rdyq_full;
    /* verilator lint_on UNUSEDSIGNAL */
    noc_fifo #(.WIDTH(SLW), .DEPTH(WR_SLOTS)) u_rdyq (
        .clk(clk), .resetn(resetn), .push(rdyq_push), .din(w_slot[wsrc]),
        .pop(ws_issue), .dout(rdyq_head), .empty(rdyq_empty), .full(rdyq_full), .mon_err(q_err));

    assign head_beats = sl_beats[rdyq_head];
    assign ack_src    = sl_src[wr_cur];
    assign ack_txn    = sl_txn[wr_cur];
    assign none_open  = (w_open == 256'd0) && (sl_v == {WR_SLOTS{1'b0}});
    assign err        = w_err;
endmodule
`default_nettype wire
