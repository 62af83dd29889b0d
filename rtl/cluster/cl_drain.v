// The cluster's drain sequencer and drain queue, in the upstream cluster's cycles (KohakuTPU 7703ee8
// mx_cluster_node.v: the pipelined drain sequencer and the 128-deep queue between the accumulator and
// the write port). Instantiated by cluster_cu.v, which applies each command to the accumulator (the
// edge after a DRAIN command issues, two after a sweep command) and pushes the granules it produces
// here; cl_wport.v takes them from the head.
//
// A transfer of `gran` granules is either an explicit DRAIN (start: n sub-tiles, send = OP_SEND two
// granules each, else OP_EMIT one) or an emitting GEMM's sweep (fstart: the sweep's ADD_EMITs are its
// commands, counted by emit_issue). One transfer at a time (the sequencer starts one only when `busy`
// is low and the write port is idle). A fused DRAIN of n (fdrain, its drain_start) waits, as
// upstream's barrier (d_wait), until n granules of the transfer have been taken, or all of them.
//   * explicit: from the cycle after start, one command a cycle (`iss`, tile `iss_tile`), every other
//     cycle for OP_SEND, while fewer than DQ_LIMIT granules are issued and not yet taken (d_out);
//   * stall (to the sweep): d_out >= DQ_LIMIT;
//   * busy: issuing, a granule issued and not yet taken, or a fused DRAIN waiting;
//   * more: granules of the transfer are still to come, or a fused DRAIN waits (the write port
//     hands over a partial bank only when not `more`: upstream's flush on !drain_busy, which with
//     upstream's timing is low only after the transfer's last granule; ours for any timing, so
//     bursts are full except the last).
// The queue: cluster_cu pushes each granule as it applies the command (push, with `psweep`: an
// ADD_EMIT of the sweep, `psend`: an OP_SEND half), and the granule becomes readable at the head
// in the cycle upstream's queue would hold it (docs/cluster.md "Timing"):
//   OP_EMIT   (issue edge D)  D + ACU_STAGES + 4     (emit 8 edges after the command, +1 queue write)
//   OP_SEND   low D + ACU_STAGES + 3, high one later (pushed the cycle after the low half)
//   ADD_EMIT  (issue edge I)  I + SW_LEN + ACU_STAGES + 3
// `head_idx` is the granule's index within its transfer (upstream's d_got).
`default_nettype none
`timescale 1ns/1ps
module cl_drain #(
    parameter integer SW_LEN     = 20,   // sweep issue to the accumulator (cl_sweep: ISSUE_LAT + CASCADE_LAT + 1)
    parameter integer ACU_STAGES = 6,    // command to the tile write (mx_acu_fp.v)
    parameter integer DQ_DEPTH   = 128,  // drain queue (mx_cluster_node.v DQ_DEPTH)
    parameter integer DQ_LIMIT   = 112   // granules outstanding before issue holds (mx_cluster_node.v DQ_DEPTH - 16)
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         start,
    input  wire [8:0]   n,
    input  wire         send,
    input  wire         fstart,
    input  wire [9:0]   gran,
    input  wire         fdrain,
    input  wire         emit_issue,
    output wire         iss,
    output wire [7:0]   iss_tile,
    output wire         busy,
    output wire         more,
    output wire         stall,
    output wire         idle_for_peer,   // no command issuing, nothing outstanding (upstream's peer_ready terms)
    input  wire         push,
    input  wire         psweep,
    input  wire         psend,
    input  wire [255:0] pdata,
    output wire         head_valid,
    output wire [255:0] head_data,
    output wire [15:0]  head_idx,
    input  wire         take,
    output wire         mon_err
);
    localparam integer D_EMIT  = ACU_STAGES + 3;          // push edge D+1 -> readable D+ACU_STAGES+4
    localparam integer D_SEND  = ACU_STAGES + 2;
    localparam integer D_SWEEP = SW_LEN + ACU_STAGES + 1; // push edge I+2 -> readable I+SW_LEN+ACU_STAGES+3
    localparam integer VIS_LEN = (D_SWEEP < 3) ? 3 : D_SWEEP;   // elaborates whatever the parameters
    localparam integer CW      = (DQ_DEPTH <= 2) ? 2 : $clog2(DQ_DEPTH) + 1;
    localparam integer QD      = (DQ_DEPTH < 1) ? 1 : DQ_DEPTH;
    initial begin
        if (SW_LEN < 3 || ACU_STAGES < 1 || DQ_DEPTH < 16 || DQ_LIMIT < 2 || DQ_LIMIT > DQ_DEPTH - 4)
            $fatal(1, "cl_drain %m: SW_LEN=%0d ACU_STAGES=%0d DQ_DEPTH=%0d DQ_LIMIT=%0d: need SW_LEN >= 3, ACU_STAGES >= 1, DQ_DEPTH >= 16 and 2 <= DQ_LIMIT <= DQ_DEPTH - 4 (room for the granules issued while the limit is seen)",
                   SW_LEN, ACU_STAGES, DQ_DEPTH, DQ_LIMIT);
    end

    reg        run, dsend, gap, fwait;
    reg [8:0]  d_iss, d_n;
    reg [9:0]  total, pops, fn;
    reg [15:0] d_got, d_out;
    wire       pop = head_valid && take;
    assign iss      = run && {7'd0, d_iss} < {7'd0, d_n} && d_out < DQ_LIMIT[15:0] && !gap;
    assign iss_tile = d_iss[7:0];
    assign busy     = run || d_out != 16'd0 || fwait;
    assign more     = run || pops != total || fwait;
    assign stall    = d_out >= DQ_LIMIT[15:0];
    assign idle_for_peer = !run && d_out == 16'd0;

    always @(posedge clk) begin
        if (!resetn) begin
            run <= 1'b0;
            gap <= 1'b0;
            dsend <= 1'b0;
            d_iss <= 9'd0;
            d_n <= 9'd0;
            d_got <= 16'd0;
            d_out <= 16'd0;
            total <= 10'd0;
            pops <= 10'd0;
            fwait <= 1'b0;
            fn <= 10'd0;
        end else if (start || fstart) begin
            run   <= start;
            dsend <= start && send;
            gap   <= 1'b0;
            d_iss <= 9'd0;
            d_n   <= n;
            d_got <= 16'd0;
            d_out <= 16'd0;
            total <= gran;
            pops  <= 10'd0;
            fwait <= 1'b0;
        end else if (push || pop || fdrain || fwait || iss || gap || emit_issue) begin   // else nothing changes
            if (push) d_got <= d_got + 16'd1;
            if (pop)  pops <= pops + 10'd1;
            // the barrier: armed at the fused DRAIN's start, released the edge after its n are taken
            if (fdrain) begin
                fwait <= pops < {1'b0, n} && pops != total;
                fn    <= {1'b0, n};
            end else if (fwait && (pops >= fn || pops == total)) begin
                fwait <= 1'b0;
            end
            d_out <= d_out + (iss ? (dsend ? 16'd2 : 16'd1) : 16'd0) + (emit_issue ? 16'd1 : 16'd0)
                           - (pop ? 16'd1 : 16'd0);
            if (iss) begin
                d_iss <= d_iss + 9'd1;
                gap   <= dsend;
                if (d_iss + 9'd1 == d_n) run <= 1'b0;
            end else if (gap) begin
                gap <= 1'b0;
            end
        end
    end

    // ---------------- the queue and when its entries become readable
    wire [271:0] q_head;
    wire         q_empty, q_full, q_err;
    noc_fifo #(.WIDTH(272), .DEPTH(QD)) u_q (
        .clk(clk), .resetn(resetn), .push(push), .din({d_got, pdata}),
        .pop(pop), .dout(q_head), .empty(q_empty), .full(q_full), .mon_err(q_err));
    assign head_data = q_head[255:0];
    assign head_idx  = q_head[271:256];

    // bit k: a pushed granule becomes readable k+1 cycles from now; `nvis` readable and not yet taken
    reg  [VIS_LEN-1:0] vis;
    reg  [CW-1:0]      nvis;
    wire [VIS_LEN-1:0] vis_next = vis >> 1;
    wire [VIS_LEN-1:0] vis_bit  = {{(VIS_LEN-1){1'b0}}, 1'b1} << (psweep ? D_SWEEP - 1 : psend ? D_SEND - 1 : D_EMIT - 1);
    assign head_valid = !q_empty && (nvis != {CW{1'b0}} || vis[0]);
    reg err;
    always @(posedge clk) begin
        if (!resetn) begin
            vis <= {VIS_LEN{1'b0}};
            nvis <= {CW{1'b0}};
            err <= 1'b0;
        end else if (push || pop || (|vis)) begin   // else nothing changes
            vis  <= push ? (vis_next | vis_bit) : vis_next;
            nvis <= nvis + {{(CW-1){1'b0}}, vis[0]} - {{(CW-1){1'b0}}, pop};
            if (push && |(vis_next & vis_bit)) begin
                $display("ERROR %m t=%0t: two drain-queue granules would become readable in one cycle (one push a cycle, in order)", $time);
                err <= 1'b1;
            end
            if (push && q_full) begin
                $display("ERROR %m t=%0t: drain queue overflow (%0d deep, DQ_LIMIT %0d): a granule is lost", $time, DQ_DEPTH, DQ_LIMIT);
                err <= 1'b1;
            end
        end
    end
    assign mon_err = err | q_err;
endmodule
`default_nettype wire
