// The PE's command queues (docs/ahbm.md §4-§5): where a written command goes (KV_SEND to the TX link
// queue, KV_RECV to the RX link queue, every other to the main queue), cmd_ready and cmdq_free, the
// three queues' entries and their write / read sequence numbers, and the static checks of a command
// (cmd_fault), done once as the command enters: its code is kept beside it for whoever runs it (the
// engine, a link engine), which drops a faulting command there. Separate from the engines because it is
// the one place commands are stored and ordered: pe_front reads the main queue ahead of the engine
// (pf_seq), pe_engine and the two pe_link engines each retire their queue's head (deq), none writes an
// entry. The three queues are one ring design (g_ring[0] main, [1] TX, [2] RX); a link queue holds LQ.
//
// q_busy answers the front-end's question before it fetches a LOAD_Q early: which Q slots the commands
// from the head up to the front-end's (rd_seq .. pf_seq - 1) still read (ATTN_TILE) or load (LOAD_Q).
//
// Monitors (reset-guarded, sticky mon_err, an ERROR line): a command written while a queue is full (it
// is dropped); a retire (deq) of an empty queue.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_cmdq #(
    parameter integer D           = 128,
    parameter integer MAXROWS     = 64,
    parameter integer MAXKEYS     = 128,
    parameter integer CMDQ_DEPTH  = 16,        // main queue entries, a power of two
    parameter integer LQ          = 4,         // link (KV_SEND / KV_RECV) queue entries each, a power of two
    parameter integer SLICE_BYTES = 1 << 20,
    parameter integer ADDR_SHIFT  = 0,         // address fields in bytes (0) or 64-byte words (6): pe_addr.vh
    parameter [3:0]   EDGE        = 4'b0000    // bit d: no neighbour in direction d
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         cmd_valid,
    output wire         cmd_ready,
    input  wire [127:0] cmd_data,
    output wire [7:0]   cmdq_free,
    output wire         enq_main,       // the command written this cycle goes to the main queue
    output wire [31:0]  wr_seq,         // the main queue's sequence numbers
    output wire [31:0]  rd_seq,
    output wire         empty,          // all three queues
    input  wire         deq,            // the engine retires the main queue's head (completed or dropped)
    output wire         head_valid,
    output wire [127:0] head_cmd,
    output wire [7:0]   head_fault,     // its static fault code (F_NONE: it may run)
    input  wire [31:0]  pf_seq,         // the front-end's entry
    output wire [127:0] pf_cmd,
    output wire [7:0]   pf_fault,
    output reg  [3:0]   q_busy,
    input  wire         tx_deq,         // the TX / RX link engine retires its queue's head
    output wire         tx_valid,
    output wire [127:0] tx_cmd,
    output wire [7:0]   tx_fault,
    input  wire         rx_deq,
    output wire         rx_valid,
    output wire [127:0] rx_cmd,
    output wire [7:0]   rx_fault,
    output reg          mon_err
);
    initial begin
        if (CMDQ_DEPTH < 2 || (CMDQ_DEPTH & (CMDQ_DEPTH - 1)) != 0 || LQ < 2 || (LQ & (LQ - 1)) != 0
            || MAXROWS < 1 || MAXKEYS < 1 || SLICE_BYTES < 64)
            $fatal(1, "pe_cmdq %m: CMDQ_DEPTH=%0d LQ=%0d MAXROWS=%0d MAXKEYS=%0d SLICE_BYTES=%0d: need CMDQ_DEPTH and LQ powers of two >= 2, MAXROWS and MAXKEYS >= 1, SLICE_BYTES >= 64",
                   CMDQ_DEPTH, LQ, MAXROWS, MAXKEYS, SLICE_BYTES);
    end
`include "pe_cmd.vh"
`include "pe_sizes.vh"
`include "pe_addr.vh"
    localparam integer CQA = $clog2(CMDQ_DEPTH);
    localparam integer NQ = 3;                   // queues: 0 main, 1 TX, 2 RX

    // ---------------------------------------------------------------- static checks (F_EMPTY / F_FRAME are the engines')
    function [7:0] range_fault(input [23:0] field, input [23:0] len);   // field: pe_addr.vh
        reg [29:0] addr;
        begin
            addr = slice_byte(field);
            if (addr[5:0] != 6'd0)
                range_fault = F_ALIGN;
            else if ({1'b0, addr} + {7'd0, len} > 31'(SLICE_BYTES))
                range_fault = F_RANGE;
            else
                range_fault = F_NONE;
        end
    endfunction

    function [7:0] cmd_fault(input [127:0] c);
        reg [7:0] rows;
        reg [8:0] keys;
        begin
            rows = f_rows(c);
            keys = f_keys(c);
            cmd_fault = F_NONE;
            if (f_opc(c) > OP_KVRECV)
                cmd_fault = F_OPCODE;
            else if (c[31] || 32'(rows) > 32'(MAXROWS) || (f_opc(c) == OP_ATTN && 32'(keys) > 32'(MAXKEYS)))
                cmd_fault = F_ROWS;
            else begin
                case (f_opc(c))
                    OP_ATTN: begin
                        if (c[47:42] != 6'd0) cmd_fault = F_RSVD;
                        else if (c[21] && EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                        else if (range_fault(c[71:48], kv_bytes(keys)) != F_NONE)
                            cmd_fault = range_fault(c[71:48], kv_bytes(keys));
                        else if (range_fault(c[95:72], kv_bytes(keys)) != F_NONE)
                            cmd_fault = range_fault(c[95:72], kv_bytes(keys));
                        else if (c[20] && range_fault(c[119:96], mask_bytes(rows, keys)) != F_NONE)
                            cmd_fault = range_fault(c[119:96], mask_bytes(rows, keys));
                    end
                    OP_POP:   if (c[127:32] != 96'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                    OP_MERGE: if (c[127:48] != 80'd0 || c[39:35] != 5'd0 || (c[34] && c[17:15] != 3'd0)
                                  || (c[21] && !c[34]) || (!c[34] && c[33:32] != 2'd0)) cmd_fault = F_RSVD;
                              else if (c[34] && EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                              else if (c[21] && EDGE[c[33:32]]) cmd_fault = F_EDGE;
                    OP_STORE: if (c[127:56] != 72'd0) cmd_fault = F_RSVD;
                              else cmd_fault = range_fault(c[55:32], rows_bytes(rows));
                    OP_PUSH:  if (c[127:40] != 88'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                    OP_LOADQ: if (c[39:32] != 8'd0 || c[47:42] != 6'd0 || c[127:72] != 56'd0) cmd_fault = F_RSVD;
                              else cmd_fault = range_fault(c[71:48], rows_bytes(rows));
                    OP_KVSEND, OP_KVRECV:
                              if (c[47:32] != 16'd0 || c[127:96] != 32'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                              else if (c[77:72] != 6'd0 || c[95:72] == 24'd0) cmd_fault = F_ALIGN;
                              else if (c[95:91] != 5'd0) cmd_fault = F_RANGE;     // > 65535 IPCQ words
                              else cmd_fault = range_fault(c[71:48], c[95:72]);
                    default:  if (c[127:32] != 96'd0) cmd_fault = F_RSVD;     // NOP
                endcase
            end
        end
    endfunction

    // ---------------------------------------------------------------- the queues
    wire [NQ-1:0]  push, pop, room, none;
    wire [136*NQ-1:0] heads;                     // {fault code, command} at each queue's head
    genvar g;
    generate
        for (g = 0; g < NQ; g = g + 1) begin : g_ring
            localparam integer DEPTH = (g == 0) ? CMDQ_DEPTH : LQ;
            localparam integer AW = $clog2(DEPTH);
            reg [135:0] mem [0:DEPTH-1];
            /* verilator lint_off UNUSEDSIGNAL */  // read of the main ring only (TX and RX commands use no Q slot)
            reg [2:0]   q_use [0:DEPTH-1];     // {reads or loads a Q slot (ATTN_TILE, LOAD_Q), that slot}: q_busy's
            /* verilator lint_on UNUSEDSIGNAL */
            reg [31:0]  wr, rd;
            `AHBM_EDGE(clk, !resetn || push[g] || pop[g]) begin
                if (!resetn) begin
                    wr <= 32'd0;
                    rd <= 32'd0;
                end else begin
                    if (push[g]) begin
                        mem[wr[AW-1:0]] <= {cmd_fault(cmd_data), cmd_data};
                        q_use[wr[AW-1:0]] <= {f_opc(cmd_data) == OP_ATTN || f_opc(cmd_data) == OP_LOADQ, f_qreg(cmd_data)};
                        wr <= wr + 32'd1;
                    end
                    if (pop[g]) rd <= rd + 32'd1;
                end
            end `AHBM_EDGE_END
            assign room[g] = (32'(wr - rd) < DEPTH);
            assign none[g] = (wr == rd);
            assign heads[136*g +: 136] = mem[rd[AW-1:0]];
        end
    endgenerate

    assign cmd_ready = &room;
    wire   take = cmd_valid && cmd_ready;
    wire   to_tx = f_opc(cmd_data) == OP_KVSEND;
    wire   to_rx = f_opc(cmd_data) == OP_KVRECV;
    assign push = {take && to_rx, take && to_tx, take && !to_tx && !to_rx};
    assign pop = {rx_deq, tx_deq, deq};
    assign enq_main = push[0];
    assign empty = &none;
    assign wr_seq = g_ring[0].wr;
    assign rd_seq = g_ring[0].rd;
    assign cmdq_free = 8'(CMDQ_DEPTH - 32'(wr_seq - rd_seq));
    assign {head_fault, head_cmd} = heads[0 +: 136];
    assign {tx_fault, tx_cmd} = heads[136 +: 136];
    assign {rx_fault, rx_cmd} = heads[272 +: 136];
    assign {head_valid, tx_valid, rx_valid} = {!none[0], !none[1], !none[2]};
    assign {pf_fault, pf_cmd} = g_ring[0].mem[pf_seq[CQA-1:0]];

    // Q slots of the commands ahead of the front-end (what a LOAD_Q fetched early would overwrite)
    // (from the 3-bit q_use each entry got when pushed, not the 136-bit entry: the block runs at every push,
    // retire and front-end step, and decoding every entry ahead at each was an AHBM bench's largest cost on
    // Icarus)
    integer qi;
    reg [2:0] q_ent;
    always @* begin
        q_busy = 4'd0;
        q_ent = 3'd0;
        for (qi = 0; qi < CMDQ_DEPTH && 32'(qi) < pf_seq - rd_seq; qi = qi + 1) begin
            // The ring index is cast to CQA bits: the sum must wrap past the ring's end. Icarus evaluates an
            // unsized index sum wider (it read X past the end, so a tile there did not hold its Q slot).
            q_ent = g_ring[0].q_use[CQA'(rd_seq[CQA-1:0] + qi[CQA-1:0])];
            if (q_ent[2]) q_busy[q_ent[1:0]] = 1'b1;
        end
    end

    // ---------------------------------------------------------------- monitors
    integer mq;
    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, !resetn || cmd_valid || pop != {NQ{1'b0}}) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            if (cmd_valid && !cmd_ready) begin
                $display("ERROR %m t=%0t: command written while the queue is full (%0d entries): 0x%h dropped",
                         $time, CMDQ_DEPTH, cmd_data);
                mon_err <= 1'b1;
            end
            for (mq = 0; mq < NQ; mq = mq + 1)
                if (pop[mq] && none[mq]) begin
                    $display("ERROR %m t=%0t: queue %0d (0 main, 1 TX, 2 RX) retired a command while empty", $time, mq);
                    mon_err <= 1'b1;
                end
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
