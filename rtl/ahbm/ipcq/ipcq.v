// One IPCQ link: the queue from a PE's push port (one direction) to the
// neighbour's pop port for the opposite direction. The storage lives at the
// receiver; the link is the whole path (see docs/ahbm.md, "IPCQ").
//
// Framing (W >= 32): a packet is one header word then LEN body words; `last`
// marks the final word (the header itself when LEN = 0). Header fields:
//   [15:0] LEN (body words)  [23:16] KIND  [31:24] SRC PE  [W-1:32] tag/seq.
// Push is word by word with backpressure: a word is taken exactly when
// in_valid && in_ready; in_ready = !full. The pusher holds the word (valid
// and data unchanged) until it is taken, so a full queue blocks the pusher
// and nothing is ever lost or overwritten. A packet longer than DEPTH simply
// streams through.
// Pop: out_valid = a word at the head; out_ready is a TAKE: it must only be
// raised with out_valid (raising it on an empty queue is a pop of an empty
// queue, reported). pkt_avail (the status the kernel polls) = a complete
// packet is queued, or the queue is full (so an over-long packet still drains).
// Capacity: DEPTH words of storage; `depth` (1..DEPTH, a run-time input held
// steady) is how many of them a run uses: the queue is full at `depth` words,
// exactly as a build with DEPTH = depth, so one build serves several depths.
//
// Monitors (reset-guarded, sticky mon_err, a line containing ERROR):
//   - pusher withdrew or changed a held word while the queue was full (it
//     ignored in_ready: that word would be lost);
//   - a word written while full (internal; never happens by construction);
//   - pop of an empty queue;
//   - framing: `last` disagrees with the header's LEN;
//   - `depth` outside 1..DEPTH.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module ipcq #(
    parameter integer W     = 64,
    parameter integer DEPTH = 16
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [31:0]  depth,
    input  wire         in_valid,
    output wire         in_ready,
    input  wire [W-1:0] in_data,
    input  wire         in_last,
    output wire         out_valid,
    input  wire         out_ready,
    output wire [W-1:0] out_data,
    output wire         out_last,
    output wire         pkt_avail,
    output reg          mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (W < 32 || DEPTH < 1)
            $fatal(1, "ipcq %m: W=%0d DEPTH=%0d: need W >= 32 (the header word) and DEPTH >= 1", W, DEPTH);
    end
    localparam integer AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;

    reg [W:0]  mem [0:DEPTH-1];     // {last, data}
    reg [AW-1:0] wp;
    reg [AW-1:0] rp;
    reg [AW:0]   count;
    reg [AW:0]   pkts;              // complete packets queued

    // full at the run's depth; the build's DEPTH bounds it whatever `depth` holds (a bad one is reported)
    wire full  = (count == DEPTH[AW:0]) || (32'(count) >= depth);
    wire empty = (count == {(AW+1){1'b0}});
    wire wr    = in_valid && !full;
    wire rd    = out_ready && !empty;

    assign in_ready  = !full;
    assign out_valid = !empty;
    assign out_data  = mem[rp][W-1:0];
    assign out_last  = mem[rp][W];
    assign pkt_avail = (pkts != {(AW+1){1'b0}}) || full;

    wire [AW-1:0] wp_next = (wp == DEPTH[AW-1:0] - 1'b1) ? {AW{1'b0}} : wp + 1'b1;
    wire [AW-1:0] rp_next = (rp == DEPTH[AW-1:0] - 1'b1) ? {AW{1'b0}} : rp + 1'b1;

    `AHBM_EDGE(clk, wr) begin
        mem[wp] <= {in_last, in_data};
    end `AHBM_EDGE_END

    // The clocked processes below do nothing in a cycle where no word moves, none is offered and none
    // held: `AHBM_EDGE` names that condition, and on Icarus an idle queue's processes sleep on it
    // instead of waking at every edge (ahbm_edge.vh; docs/ahbm.md, "Speed on Icarus").
    // (Each process's condition, and what its body tests, are continuous assignments: a process then loads
    // one signal where it loaded several, and on Icarus each load of a signal in a process is a
    // dynamic_cast of it, some 500 instructions.)
    wire       ptr_go = !resetn || wr || rd;
    wire [1:0] moves = {wr && in_last, rd && out_last};   // a packet's last word comes in, goes out
    `AHBM_EDGE(clk, ptr_go) begin
        if (!resetn) begin
            wp    <= {AW{1'b0}};
            rp    <= {AW{1'b0}};
            count <= {(AW+1){1'b0}};
            pkts  <= {(AW+1){1'b0}};
        end else begin
            if (wr) wp <= wp_next;
            if (rd) rp <= rp_next;
            case ({wr, rd})
                2'b10:   count <= count + 1'b1;
                2'b01:   count <= count - 1'b1;
                default: ;
            endcase
            case (moves)
                2'b10:   pkts <= pkts + 1'b1;
                2'b01:   pkts <= pkts - 1'b1;
                default: ;
            endcase
        end
    end `AHBM_EDGE_END

    // ---- assertion monitors ----
    reg         held;               // last cycle offered a word that was not taken
    reg [W:0]   held_word;
    reg         f_body;             // framing: inside a packet body
    reg [15:0]  f_rem;              // body words still expected
    wire        depth_bad = (depth == 32'd0) || (depth > DEPTH);

    // the monitor acts in a cycle that writes a word, holds one, ends a hold or meets an error (in the
    // others it would change nothing): its checks are continuous assignments, tested one by one only in
    // a cycle where one of them fails
    wire        held_n = in_valid && full;                 // this cycle offers a word that is not taken
    wire        f_bad = wr && (f_body ? ((f_rem == 16'd1) != in_last) : ((in_data[15:0] == 16'd0) != in_last));
    wire        m_bad = (held && (!in_valid || {in_last, in_data} != held_word)) || depth_bad || (wr && full)
                        || (out_ready && empty) || f_bad;
    wire        mon_go = !resetn || wr || held_n || held || m_bad;

    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, mon_go) begin
        if (!resetn) begin
            held    <= 1'b0;
            f_body  <= 1'b0;
            f_rem   <= 16'd0;
            mon_err <= 1'b0;
        end else begin
            if (m_bad) begin
                if (held && !in_valid) begin
                    $display("ERROR %m t=%0t: pusher withdrew a word held while the queue was full (ignored ready; word lost): %h",
                             $time, held_word);
                    mon_err <= 1'b1;
                end else if (held && {in_last, in_data} != held_word) begin
                    $display("ERROR %m t=%0t: pusher changed a word held while the queue was full (ignored ready): was %h now %h",
                             $time, held_word, {in_last, in_data});
                    mon_err <= 1'b1;
                end
                if (depth_bad) begin
                    $display("ERROR %m t=%0t: run-time depth %0d outside 1..%0d (the build's DEPTH)", $time, depth, DEPTH);
                    mon_err <= 1'b1;
                end
                if (wr && full) begin
                    $display("ERROR %m t=%0t: queue written while full (word would overwrite)", $time);
                    mon_err <= 1'b1;
                end
                if (out_ready && empty) begin
                    $display("ERROR %m t=%0t: pop of an empty queue (popper raised ready without valid)", $time);
                    mon_err <= 1'b1;
                end
                if (f_bad && !f_body) begin
                    $display("ERROR %m t=%0t: framing: header LEN=%0d but last=%0d on the header", $time,
                             in_data[15:0], in_last);
                    mon_err <= 1'b1;
                end
                if (f_bad && f_body) begin
                    $display("ERROR %m t=%0t: framing: last=%0d with %0d body word(s) still expected by LEN",
                             $time, in_last, f_rem - 16'd1);
                    mon_err <= 1'b1;
                end
            end
            held <= held_n;
            if (held_n) held_word <= {in_last, in_data};
            if (wr) begin
                f_body <= !in_last;
                f_rem  <= f_body ? f_rem - 16'd1 : in_data[15:0];
            end
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
