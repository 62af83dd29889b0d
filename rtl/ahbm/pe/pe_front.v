// The PE's DMA front-end (docs/ahbm.md §2-§3): it walks the main queue ahead of the engine (pf_seq),
// gives each ATTN_TILE one of `prefetch` + 1 tile slots (a ring of the PREFETCH + 1 built) and issues its
// K, then mask, then V load, and a LOAD_Q's load once no command from the head on still uses its Q slot
// (pe_cmdq's q_busy); a FENCE command (bit 23) holds it until the command has completed. It keeps, per
// queue entry, the slot given and whether the loads are issued (what the engine waits for at the head),
// and per slot which of its K / mask / V data have landed (the last word of a load, from pe_dma), and it
// decodes where each DMA word goes (in_*: the engine stores the data). Separate from the engine so that
// DMA overlaps compute: the two meet only at the head entry's flags and the slot the engine frees.
//
// DMA buffer ids: K of slot s = s, V = 5 + s, mask = 10 + s, Q = 15 (the Q slot in the tag's [1:0]).
//
// Monitors (reset-guarded, sticky mon_err, an ERROR line): `prefetch` outside 1..PREFETCH (it runs as
// PREFETCH); a DMA word for a buffer that no tile slot uses; a slot freed that was never given.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_front #(
    parameter integer D          = 128,
    parameter integer PREFETCH   = 2,       // the most tile commands `prefetch` may fetch ahead, 1..4
    parameter integer CMDQ_DEPTH = 16,      // a power of two
    parameter integer ADDR_SHIFT = 0        // address fields in bytes (0) or 64-byte words (6): pe_addr.vh
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [2:0]   prefetch,           // 1..PREFETCH; static
    input  wire         halt,               // a FAULT is pending: allocate and issue nothing new
    input  wire [31:0]  wr_seq,
    input  wire [31:0]  rd_seq,
    input  wire         enq_main,           // a command enters the main queue at wr_seq
    output reg  [31:0]  pf_seq,
    input  wire [127:0] pf_cmd,
    input  wire [7:0]   pf_fault,
    input  wire [3:0]   q_busy,
    output reg  [2:0]   pf_st,
    // the head entry (the engine's) and the engine's release of its slot
    output wire         head_ok,            // its slot is given and its loads issued
    output wire [2:0]   head_slot,
    input  wire         slot_free,
    output reg  [4:0]   k_rdy,              // slot s: its data landed (bits >= prefetch + 1 unused)
    output reg  [4:0]   v_rdy,
    output reg  [4:0]   m_rdy,
    output reg  [3:0]   q_rdy,              // Q slot s loaded
    // DMA requests (valid only while dma_req_ready) and the words coming back
    output wire         dma_req_valid,
    input  wire         dma_req_ready,
    output reg  [29:0]  dma_req_addr,
    output reg  [23:0]  dma_req_len,
    output reg  [3:0]   dma_req_buf,
    output wire [7:0]   dma_req_tag,
    input  wire         dma_out_valid,
    input  wire [3:0]   dma_out_buf,
    input  wire [1:0]   dma_out_qslot,      // dma_out_tag[1:0]: a Q load's slot
    input  wire         dma_out_last,
    output wire         in_k,               // this DMA word is K / V / Q data (else mask data) of slot in_slot
    output wire         in_v,
    output wire         in_q,
    output wire [2:0]   in_slot,
    // what was issued this cycle (counters, composite trace)
    output wire         iss_k,
    output wire         iss_mask,
    output wire         iss_v,
    output wire         iss_q,
    output wire [2:0]   iss_slot,
    output reg          mon_err
);
    initial begin
        if (PREFETCH < 1 || PREFETCH > 4 || CMDQ_DEPTH < 2 || (CMDQ_DEPTH & (CMDQ_DEPTH - 1)) != 0 || D < 1)
            $fatal(1, "pe_front %m: PREFETCH=%0d CMDQ_DEPTH=%0d D=%0d: need PREFETCH 1..4, CMDQ_DEPTH a power of two >= 2, D >= 1",
                   PREFETCH, CMDQ_DEPTH, D);
    end
`include "pe_cmd.vh"
`include "pe_sizes.vh"
`include "pe_addr.vh"
    localparam integer CQA = $clog2(CMDQ_DEPTH);
    localparam integer NSLOT = PREFETCH + 1;
    localparam [3:0] BUF_V0 = 4'd5, BUF_M0 = 4'd10, BUF_Q = 4'd15;   // DMA buffer ids (header)
    localparam [2:0] PF_SCAN = 3'd0, PF_K = 3'd1, PF_MASK = 3'd2, PF_V = 3'd3, PF_Q = 3'd4, PF_FENCE = 3'd5;

    reg  [2:0]   ent_slot [0:CMDQ_DEPTH-1];   // tile slot of an ATTN_TILE entry
    reg  [CMDQ_DEPTH-1:0] ent_ok;             // its slot allocated / its loads issued
    reg  [31:0]  slots_alloc, slots_freed;

    // tile slots in use: prefetch + 1 of the NSLOT built (a prefetch outside 1..PREFETCH is reported by
    // the monitor below and runs as PREFETCH, so no slot index ever leaves the buffers)
    wire       pf_ok = prefetch >= 3'd1 && {29'd0, prefetch} <= PREFETCH;
    wire [2:0] nslot = pf_ok ? prefetch + 3'd1 : 3'(NSLOT);
    wire [2:0] pf_slot = 3'(slots_alloc % {29'd0, nslot});
    wire [2:0] pf_cur_slot = ent_slot[pf_seq[CQA-1:0]];
    wire       pf_issue = (pf_st == PF_K) || (pf_st == PF_MASK) || (pf_st == PF_V) || (pf_st == PF_Q);
    assign dma_req_valid = pf_issue && dma_req_ready;
    assign dma_req_tag = (pf_st == PF_Q) ? {6'd0, f_qreg(pf_cmd)} : 8'(pf_seq);
    always @* begin
        dma_req_addr = slice_byte(pf_cmd[71:48]);
        dma_req_len  = kv_bytes(f_keys(pf_cmd));
        dma_req_buf  = {1'b0, pf_cur_slot};
        case (pf_st)
            PF_MASK: begin
                dma_req_addr = slice_byte(pf_cmd[119:96]);
                dma_req_len  = mask_bytes(f_rows(pf_cmd), f_keys(pf_cmd));
                dma_req_buf  = BUF_M0 + {1'b0, pf_cur_slot};
            end
            PF_V: begin
                dma_req_addr = slice_byte(pf_cmd[95:72]);
                dma_req_buf  = BUF_V0 + {1'b0, pf_cur_slot};
            end
            PF_Q: begin
                dma_req_len = rows_bytes(f_rows(pf_cmd));
                dma_req_buf = BUF_Q;
            end
            default: ;
        endcase
    end
    assign iss_k = dma_req_valid && pf_st == PF_K;
    assign iss_mask = dma_req_valid && pf_st == PF_MASK;
    assign iss_v = dma_req_valid && pf_st == PF_V;
    assign iss_q = dma_req_valid && pf_st == PF_Q;
    assign iss_slot = pf_cur_slot;

    assign head_ok = ent_ok[rd_seq[CQA-1:0]];
    assign head_slot = ent_slot[rd_seq[CQA-1:0]];

    // where the DMA word goes
    wire [2:0] vslot = 3'(dma_out_buf - BUF_V0);
    wire [2:0] mslot = 3'(dma_out_buf - BUF_M0);
    assign in_q = dma_out_buf == BUF_Q;
    assign in_k = !in_q && dma_out_buf < BUF_V0;
    assign in_v = !in_q && !in_k && dma_out_buf < BUF_M0;
    assign in_slot = in_q ? {1'b0, dma_out_qslot} : in_k ? dma_out_buf[2:0] : in_v ? vslot : mslot;

    // (the process's condition a wire: the process loads one signal for it, not each term, at every test)
    wire pf_go = !resetn || enq_main || slot_free || (dma_out_valid && dma_out_last) || pf_st != PF_SCAN
                 || pf_seq != wr_seq || pf_seq < rd_seq;
    `AHBM_EDGE(clk, pf_go) begin
        if (!resetn) begin
            pf_seq <= 32'd0; pf_st <= PF_SCAN; slots_alloc <= 32'd0; slots_freed <= 32'd0;
            ent_ok <= {CMDQ_DEPTH{1'b0}};
            k_rdy <= 5'd0; v_rdy <= 5'd0; m_rdy <= 5'd0; q_rdy <= 4'd0;
        end else begin
            if (enq_main) ent_ok[wr_seq[CQA-1:0]] <= 1'b0;
            if (slot_free) slots_freed <= slots_freed + 32'd1;     // the engine is done with its tile buffers
            if (dma_out_valid && dma_out_last) begin               // a load's data have landed
                if (in_q) q_rdy[in_slot[1:0]] <= 1'b1;
                else if (in_k) k_rdy[in_slot] <= 1'b1;
                else if (in_v) v_rdy[in_slot] <= 1'b1;
                else m_rdy[in_slot] <= 1'b1;
            end

            // allocate tile slots and issue K, mask, V (and Q) loads in command order
            case (pf_st)
                PF_SCAN: begin
                    if (pf_seq < rd_seq) begin
                        pf_seq <= rd_seq;                      // the engine ran past (non-tile commands, faults)
                    end else if (pf_seq != wr_seq && !halt && pf_fault == F_NONE) begin
                        if (f_opc(pf_cmd) == OP_ATTN) begin
                            if (slots_alloc - slots_freed < {29'd0, nslot}) begin
                                ent_slot[pf_seq[CQA-1:0]] <= pf_slot;
                                k_rdy[pf_slot] <= 1'b0; v_rdy[pf_slot] <= 1'b0; m_rdy[pf_slot] <= 1'b0;
                                slots_alloc <= slots_alloc + 32'd1;
                                pf_st <= PF_K;
                            end
                        end else if (f_opc(pf_cmd) == OP_LOADQ) begin
                            if (!q_busy[f_qreg(pf_cmd)]) begin
                                q_rdy[f_qreg(pf_cmd)] <= 1'b0;
                                pf_st <= PF_Q;
                            end
                        end else begin
                            pf_st <= pf_cmd[23] ? PF_FENCE : PF_SCAN;
                            if (!pf_cmd[23]) pf_seq <= pf_seq + 32'd1;
                        end
                    end
                end
                PF_K: if (dma_req_ready) pf_st <= pf_cmd[20] ? PF_MASK : PF_V;
                PF_MASK: if (dma_req_ready) pf_st <= PF_V;
                PF_V, PF_Q: if (dma_req_ready) begin
                    ent_ok[pf_seq[CQA-1:0]] <= 1'b1;
                    if (pf_cmd[23]) pf_st <= PF_FENCE;
                    else begin pf_st <= PF_SCAN; pf_seq <= pf_seq + 32'd1; end
                end
                PF_FENCE: if (rd_seq > pf_seq) begin         // FENCE: nothing after it before it completes
                    pf_st <= PF_SCAN;
                    pf_seq <= pf_seq + 32'd1;
                end
                default: pf_st <= PF_SCAN;
            endcase
        end
    end `AHBM_EDGE_END

    // ---------------------------------------------------------------- monitors
    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, !resetn || !pf_ok || dma_out_valid || slot_free) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            if (!pf_ok && !mon_err)
                $display("ERROR %m t=%0t: prefetch=%0d is outside 1..%0d (PREFETCH, the tile slots built)",
                         $time, prefetch, PREFETCH);
            if (!pf_ok) mon_err <= 1'b1;
            if (dma_out_valid && dma_out_buf != BUF_Q && (dma_out_buf >= BUF_Q || 32'(dma_out_buf) % 32'(BUF_V0) >= {29'd0, nslot})) begin
                $display("ERROR %m t=%0t: DMA word for buffer %0d, which no tile slot uses", $time, dma_out_buf);
                mon_err <= 1'b1;
            end
            if (slot_free && slots_freed == slots_alloc) begin
                $display("ERROR %m t=%0t: the engine freed a tile slot that was never given (%0d given)", $time, slots_alloc);
                mon_err <= 1'b1;
            end
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
