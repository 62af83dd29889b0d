// One AHBM PE without its IPCQ queues (docs/ahbm.md §2): the core (command
// queue, DMA front-end, composite engine, state sets), its DMA engine and its
// local memory slice. The incoming IPCQ queues live in the CUBE's ipcq_mesh
// (storage at the receiver); this module exposes the push and pop ports.
`default_nettype none
`timescale 1ns/1ps
module pe #(
    parameter integer PE_ID      = 0,
    parameter integer D          = 128,
    parameter integer MAXROWS    = 64,
    parameter integer MAXKEYS    = 128,
    parameter integer PREFETCH   = 2,
    parameter integer CMDQ_DEPTH = 16,
    parameter integer MM_MACS    = 512,
    parameter integer VEC_LANES  = 16,
    parameter integer WORDS      = 4096,      // slice size, 64-byte words (<= 2**18 at ADDR_SHIFT 0, 2**24 at 6)
    parameter integer ADDR_SHIFT = 0,
    parameter integer ALOG       = 4096,      // activity log entries a PE (pe_stats)         // the commands' address fields: bytes (0) or 64-byte words (6)
    parameter integer DMA_BW     = 64,
    parameter integer DMA_LAT    = 100,
    parameter integer DMA_QDEPTH = 4,
    parameter integer IPCQ_W     = 64,        // IPCQ link word width (pe_core)
    parameter [3:0]   EDGE       = 4'b0000,
    parameter [31:0]  SCALE      = 32'h3DB504F3,
    parameter LOAD_FILE = "pe_slice_load.hex",
    parameter DUMP_FILE = "pe_slice_dump.hex"
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [2:0]   prefetch,       // 1..PREFETCH (pe_core), static
    input  wire [31:0]  dma_lat,        // 1..DMA_LAT (pe_dma), static
    input  wire         cmd_valid,
    output wire         cmd_ready,
    input  wire [127:0] cmd_data,
    input  wire         fault_clr,
    output wire [3:0]   push_valid,
    input  wire [3:0]   push_ready,
    output wire [IPCQ_W-1:0] push_data,
    output wire [3:0]   push_last,
    input  wire [3:0]   pop_valid,
    output wire [3:0]   pop_ready,
    input  wire [IPCQ_W-1:0] pop_data_n,
    input  wire [IPCQ_W-1:0] pop_data_e,
    input  wire [IPCQ_W-1:0] pop_data_s,
    input  wire [IPCQ_W-1:0] pop_data_w,
    input  wire [3:0]   pop_last,
    input  wire [3:0]   pop_avail,
    output wire         idle,
    output wire         evt,
    output wire         faulted,        // FAULT raised and not yet cleared (fault_code != 0)
    output wire         mon_err
);
    /* verilator lint_off UNUSEDSIGNAL */  // status and counters: read by the bench through the hierarchy
    wire [7:0]   cmdq_free, last_tag, fault_code, fault_tag;
    wire [31:0]  cmd_done;
    wire [63:0]  pop_info;
    wire [31:0]  cnt_k, cnt_v, cnt_mask, cnt_q, cnt_comp, cnt_push, cnt_pop, cnt_merge, cnt_store, cnt_fault;
    wire [31:0]  cnt_tx, cnt_rx, cnt_score;
    wire [31:0]  cyc_busy, cyc_mm, cyc_vec, cyc_wait, cyc_hidden, cyc_link, cyc_first, cyc_last, cyc_now;
    wire [31:0]  cyc_dma_first, cyc_dma_last, cyc_pstall, cyc_mwait;
    wire [31:0]  dma_reqs, dma_done, dma_bytes, dma_busy_cyc;
    wire         dma_idle;
    /* verilator lint_on UNUSEDSIGNAL */
    assign faulted = fault_code != 8'd0;
    wire         dma_req_valid, dma_req_ready;
    wire [29:0]  dma_req_addr;
    wire [23:0]  dma_req_len;
    wire [3:0]   dma_req_buf;
    wire [7:0]   dma_req_tag;
    wire [23:0]  sl_addr;
    wire [511:0] sl_data;
    wire         dma_out_valid, dma_out_last, dma_xfer;
    wire [511:0] dma_out_data;
    wire [3:0]   dma_out_buf;
    wire [7:0]   dma_out_tag;
    wire [17:0]  dma_out_idx;
    wire         sl_wr_en;
    wire [23:0]  sl_wr_addr;
    wire [511:0] sl_wr_data;
    wire         core_err, dma_err;
    wire [23:0]  sl_rd2_addr;
    wire [511:0] sl_rd2_data;
    wire         sl_wr2_en;
    wire [23:0]  sl_wr2_addr;
    wire [511:0] sl_wr2_data;

    pe_core #(.PE_ID(PE_ID), .D(D), .MAXROWS(MAXROWS), .MAXKEYS(MAXKEYS), .PREFETCH(PREFETCH),
              .CMDQ_DEPTH(CMDQ_DEPTH), .MM_MACS(MM_MACS), .VEC_LANES(VEC_LANES),
              .SLICE_BYTES(WORDS * 64), .ADDR_SHIFT(ADDR_SHIFT), .ALOG(ALOG), .IPCQ_W(IPCQ_W), .EDGE(EDGE), .SCALE(SCALE)) u_core (
        .clk(clk), .resetn(resetn), .prefetch(prefetch),
        .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_data(cmd_data),
        .cmdq_free(cmdq_free), .cmd_done(cmd_done), .last_tag(last_tag), .idle(idle),
        .fault_code(fault_code), .fault_tag(fault_tag), .fault_clr(fault_clr), .pop_info(pop_info), .evt(evt),
        .cnt_k(cnt_k), .cnt_v(cnt_v), .cnt_mask(cnt_mask), .cnt_q(cnt_q), .cnt_comp(cnt_comp),
        .cnt_push(cnt_push), .cnt_pop(cnt_pop), .cnt_merge(cnt_merge), .cnt_store(cnt_store), .cnt_fault(cnt_fault),
        .cnt_score(cnt_score), .cnt_tx(cnt_tx), .cnt_rx(cnt_rx),
        .cyc_busy(cyc_busy), .cyc_mm(cyc_mm), .cyc_vec(cyc_vec), .cyc_wait(cyc_wait), .cyc_hidden(cyc_hidden), .cyc_link(cyc_link), .cyc_pstall(cyc_pstall), .cyc_mwait(cyc_mwait),
        .cyc_first(cyc_first), .cyc_last(cyc_last), .cyc_now(cyc_now),
        .cyc_dma_first(cyc_dma_first), .cyc_dma_last(cyc_dma_last),
        .dma_req_valid(dma_req_valid), .dma_req_ready(dma_req_ready), .dma_req_addr(dma_req_addr),
        .dma_req_len(dma_req_len), .dma_req_buf(dma_req_buf), .dma_req_tag(dma_req_tag),
        .dma_out_valid(dma_out_valid), .dma_out_data(dma_out_data), .dma_out_buf(dma_out_buf), .dma_out_tag(dma_out_tag),
        .dma_out_idx(dma_out_idx), .dma_out_last(dma_out_last), .dma_xfer(dma_xfer),
        .sl_wr_en(sl_wr_en), .sl_wr_addr(sl_wr_addr), .sl_wr_data(sl_wr_data),
        .sl_rd2_addr(sl_rd2_addr), .sl_rd2_data(sl_rd2_data),
        .sl_wr2_en(sl_wr2_en), .sl_wr2_addr(sl_wr2_addr), .sl_wr2_data(sl_wr2_data),
        .push_valid(push_valid), .push_ready(push_ready), .push_data(push_data), .push_last(push_last),
        .pop_valid(pop_valid), .pop_ready(pop_ready), .pop_data_n(pop_data_n), .pop_data_e(pop_data_e),
        .pop_data_s(pop_data_s), .pop_data_w(pop_data_w), .pop_last(pop_last), .pop_avail(pop_avail),
        .mon_err(core_err));

    pe_dma #(.WORDS(WORDS), .BW(DMA_BW), .LAT(DMA_LAT), .QDEPTH(DMA_QDEPTH)) u_dma (
        .clk(clk), .resetn(resetn), .lat(dma_lat),
        .req_valid(dma_req_valid), .req_ready(dma_req_ready), .req_addr(dma_req_addr), .req_len(dma_req_len),
        .req_buf(dma_req_buf), .req_tag(dma_req_tag), .sl_addr(sl_addr), .sl_data(sl_data),
        .out_valid(dma_out_valid), .out_data(dma_out_data), .out_buf(dma_out_buf), .out_tag(dma_out_tag),
        .out_idx(dma_out_idx), .out_last(dma_out_last), .idle(dma_idle), .xfer(dma_xfer),
        .cnt_reqs(dma_reqs), .cnt_done(dma_done), .cnt_bytes(dma_bytes), .cnt_busy(dma_busy_cyc),
        .mon_err(dma_err));

    pe_slice #(.WORDS(WORDS), .LOAD_FILE(LOAD_FILE), .DUMP_FILE(DUMP_FILE)) u_slice (
        .clk(clk), .rd_addr(sl_addr), .rd_data(sl_data),
        .wr_en(sl_wr_en), .wr_addr(sl_wr_addr), .wr_data(sl_wr_data),
        .rd2_addr(sl_rd2_addr), .rd2_data(sl_rd2_data),
        .wr2_en(sl_wr2_en), .wr2_addr(sl_wr2_addr), .wr2_data(sl_wr2_data));

    assign mon_err = core_err | dma_err;
endmodule
`default_nettype wire
