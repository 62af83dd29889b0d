// AHBM PE core (docs/ahbm.md §2-§5): the composite command queue, the DMA front-end that prefetches
// K / mask / V tiles `prefetch` commands ahead (a static input, 1..PREFETCH: PREFETCH sizes the tile
// slots, the run picks its depth), the composite engine running ATTN_TILE as one unit, the kernel-side
// commands (LOAD_Q, IPCQ_POP, MERGE, NORM_STORE, IPCQ_PUSH), the link engines (KV_SEND, KV_RECV), the
// carried state sets S0..S7 and the status / counter outputs. This module only wires its parts, one
// module a concern:
//   pe_cmdq    the command queues (main, TX, RX): where a command goes, the entries and sequence
//              numbers, the static checks of a command (its fault code, kept with it)
//   pe_front   the DMA front-end: tile slots, K / mask / V / Q loads ahead of the engine, data landed
//   pe_engine  the composite engine: the head command, the tile buffers, the state sets, the arithmetic
//              (pe_arith.vh) and the timing model (its header)
//   pe_link    a link engine, twice: u_tx (KV_SEND, RECV 0) and u_rx (KV_RECV, RECV 1), each running its
//              queue's head; each owns its IPCQ port while it moves a packet and lets the engine's
//              push / pop through otherwise
//   pe_fault   the FAULT register: the engines' fault requests, TX < RX < engine, and fault_clr
//   pe_stats   idle, the completions, evt, the cnt_* / cyc_* counters, the activity log and the
//              composite trace
// The command word is decoded by pe_cmd.vh (and pe_sizes.vh) in each of them.
//
// Read by the bench through the hierarchy (tb/ahbm/cube.py, tb/gtkw.py): this module's ports and
// e_st, pf_st, tx_act, rx_act below; the state sets u_eng.st_m / st_l / st_o, the activity log
// u_stats.alog / alog_n and the composite trace u_stats.tlog.
//
// Monitors (reset-guarded, sticky mon_err, an ERROR line), each in the module that owns the rule:
// pe_cmdq a command written while the queue is full (it is dropped); pe_front a `prefetch` outside
// 1..PREFETCH, a DMA word for a buffer that no command is waiting for; and the handshakes between the
// parts (see each header). Command faults are not monitor errors: they are the documented FAULT
// register (the faulting command is dropped and the queue stops until fault_clr).
`default_nettype none
`timescale 1ns/1ps
module pe_core #(
    parameter integer PE_ID       = 0,
    parameter integer D           = 128,       // head dim, a multiple of 32, <= 128
    parameter integer MAXROWS     = 64,        // rows per command, <= 64
    parameter integer MAXKEYS     = 128,       // keys per tile, <= 128
    parameter integer PREFETCH    = 2,         // the most tile commands `prefetch` may fetch ahead, 1..4
    parameter integer CMDQ_DEPTH  = 16,        // a power of two
    parameter integer MM_MACS     = 512,       // MACs per cycle of the MM unit
    parameter integer VEC_LANES   = 16,        // elements per cycle of the VEC unit
    parameter integer SLICE_BYTES = 1 << 20,   // <= 2**(24 + ADDR_SHIFT): what the address fields reach
    parameter integer ALOG        = 4096,      // activity log entries (pe_stats), a power of two >= 16
    parameter integer ADDR_SHIFT  = 0,         // address fields in bytes (0: 16 MiB) or 64-byte words (6: 1 GiB), pe_addr.vh
    parameter integer IPCQ_W      = 64,        // IPCQ link word width, bits per cycle: 64, 128, 256 or 512
    parameter [3:0]   EDGE        = 4'b0000,   // bit d: no neighbour in direction d
    parameter [31:0]  SCALE       = 32'h3DB504F3  // fp32(1/sqrt(D)); default for D = 128
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [2:0]   prefetch,       // tile commands fetched ahead of compute, 1..PREFETCH; static
    // command enqueue
    input  wire         cmd_valid,
    output wire         cmd_ready,
    input  wire [127:0] cmd_data,
    // status
    output wire [7:0]   cmdq_free,
    output wire [31:0]  cmd_done,       // completed commands
    output wire [7:0]   last_tag,
    output wire         idle,
    output wire [7:0]   fault_code,
    output wire [7:0]   fault_tag,
    input  wire         fault_clr,
    output wire [63:0]  pop_info,
    output wire         evt,            // toggles on every completion and every fault
    // counters (cleared by reset)
    output wire [31:0]  cnt_k,          // K tile loads issued
    output wire [31:0]  cnt_v,          // V tile loads issued
    output wire [31:0]  cnt_mask,       // mask tile loads issued
    output wire [31:0]  cnt_q,          // Q loads
    output wire [31:0]  cnt_comp,       // ATTN_TILE completed
    output wire [31:0]  cnt_push,       // (m,l,O) packets pushed (tail pushes and IPCQ_PUSH)
    output wire [31:0]  cnt_pop,        // packets popped
    output wire [31:0]  cnt_merge,      // MERGE completed
    output wire [31:0]  cnt_store,      // NORM_STORE completed
    output wire [31:0]  cnt_score,      // score elements computed (ROWS x KEYS a composite): the MM's work
    output wire [31:0]  cnt_fault,      // commands dropped by a fault
    output wire [31:0]  cnt_tx,         // KV_SEND packets sent
    output wire [31:0]  cnt_rx,         // KV_RECV packets received
    output wire [31:0]  cyc_busy,       // cycles with a command in the engine
    output wire [31:0]  cyc_mm,         // cycles the MM unit is busy
    output wire [31:0]  cyc_vec,        // cycles the VEC unit is busy
    output wire [31:0]  cyc_wait,       // cycles the engine waits for DMA data (K, mask, V, Q)
    output wire [31:0]  cyc_hidden,     // MM/VEC cycles while the DMA moves words out of the slice (compute hidden under DMA)
    output wire [31:0]  cyc_link,       // MM/VEC cycles while a KV_SEND / KV_RECV is moving words
    output wire [31:0]  cyc_pstall,     // cycles a pushed IPCQ word waited for the neighbour's full queue
    output wire [31:0]  cyc_mwait,      // cycles a streamed MERGE waited for the child's next word
    output wire [31:0]  cyc_first,      // cycle count at the first ATTN_TILE start
    output wire [31:0]  cyc_last,       // cycle count at the last ATTN_TILE completion
    output wire [31:0]  cyc_now,        // cycles since reset
    output wire [31:0]  cyc_dma_first,  // cycle of the first DMA request
    output wire [31:0]  cyc_dma_last,   // cycle after the last DMA word landed
    // DMA request (combinational valid, only while dma_req_ready) and data in
    output wire         dma_req_valid,
    input  wire         dma_req_ready,
    output wire [29:0]  dma_req_addr,
    output wire [23:0]  dma_req_len,
    output wire [3:0]   dma_req_buf,
    output wire [7:0]   dma_req_tag,
    input  wire         dma_out_valid,
    input  wire [511:0] dma_out_data,
    input  wire [3:0]   dma_out_buf,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [7:0]   dma_out_tag,    // a Q load's tag is its Q slot (bits [1:0])
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [17:0]  dma_out_idx,
    input  wire         dma_out_last,
    input  wire         dma_xfer,       // words leaving the slice this cycle (the engine's transfer)
    // slice write port (NORM_STORE)
    output wire         sl_wr_en,
    output wire [23:0]  sl_wr_addr,
    output wire [511:0] sl_wr_data,
    // second slice ports: KV_SEND reads, KV_RECV writes (the link engines)
    output wire [23:0]  sl_rd2_addr,
    input  wire [511:0] sl_rd2_data,
    output wire         sl_wr2_en,
    output wire [23:0]  sl_wr2_addr,
    output wire [511:0] sl_wr2_data,
    // IPCQ push ports (one data bus, valid per direction)
    output wire [3:0]   push_valid,
    input  wire [3:0]   push_ready,
    output wire [IPCQ_W-1:0] push_data,
    output wire [3:0]   push_last,
    // IPCQ pop ports (incoming queue of each direction)
    input  wire [3:0]   pop_valid,
    output wire [3:0]   pop_ready,
    input  wire [IPCQ_W-1:0] pop_data_n,
    input  wire [IPCQ_W-1:0] pop_data_e,
    input  wire [IPCQ_W-1:0] pop_data_s,
    input  wire [IPCQ_W-1:0] pop_data_w,
    input  wire [3:0]   pop_last,
    input  wire [3:0]   pop_avail,
    output wire         mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (D < 32 || D > 128 || D % 32 != 0 || MAXROWS < 1 || MAXROWS > 64 || MAXKEYS < 1 || MAXKEYS > 128 || PREFETCH < 1 || PREFETCH > 4 || CMDQ_DEPTH < 2 || (CMDQ_DEPTH & (CMDQ_DEPTH - 1)) != 0 || MM_MACS < 1 || VEC_LANES < 1 || (IPCQ_W != 64 && IPCQ_W != 128 && IPCQ_W != 256 && IPCQ_W != 512))
            $fatal(1, "pe_core %m: D=%0d MAXROWS=%0d MAXKEYS=%0d PREFETCH=%0d CMDQ_DEPTH=%0d MM_MACS=%0d VEC_LANES=%0d IPCQ_W=%0d: need D a multiple of 32 in 32..128, MAXROWS 1..64, MAXKEYS 1..128, PREFETCH 1..4, CMDQ_DEPTH a power of two >= 2, MM_MACS and VEC_LANES >= 1, IPCQ_W 64, 128, 256 or 512", D, MAXROWS, MAXKEYS, PREFETCH, CMDQ_DEPTH, MM_MACS, VEC_LANES, IPCQ_W);
        if ((ADDR_SHIFT != 0 && ADDR_SHIFT != 6) || SLICE_BYTES < 64 || SLICE_BYTES > (1 << (24 + ADDR_SHIFT)))
            $fatal(1, "pe_core %m: ADDR_SHIFT=%0d SLICE_BYTES=%0d: need ADDR_SHIFT 0 (byte addresses, a slice of at most 16 MiB) or 6 (64-byte-word addresses, at most 1 GiB) and SLICE_BYTES from 64 to what the 24-bit address fields reach (2**(24 + ADDR_SHIFT)); a larger slice needs ADDR_SHIFT 6",
                   ADDR_SHIFT, SLICE_BYTES);
    end

    localparam integer LQ = 4;                      // link (KV_SEND / KV_RECV) queue entries each
    localparam integer NFAULT = 3;                  // fault requesters: TX, RX, engine (the last wins)

    // ---------------------------------------------------------------- between the parts
    wire         enq_main, q_empty, head_valid, deq, tx_valid, tx_deq, rx_valid, rx_deq;
    wire [7:0]   head_fault, pf_fault, tx_hfault, rx_hfault;
    wire [31:0]  wr_seq, rd_seq, pf_seq;
    wire [127:0] head_cmd, pf_cmd, tx_hcmd, rx_hcmd;
    wire [3:0]   q_busy, q_rdy;
    wire         head_ok, slot_free;
    wire [2:0]   head_slot;
    wire [4:0]   k_rdy, v_rdy, m_rdy;
    wire         in_k, in_v, in_q, iss_k, iss_mask, iss_v, iss_q;
    wire [2:0]   in_slot, iss_slot;
    wire         halt, clear, raised;
    wire         e_fault, tx_fault, rx_fault;
    wire [7:0]   e_fcode, e_ftag, tx_fcode, tx_ftag, rx_fcode, rx_ftag;
    wire [3:0]   e_push_sel, e_push_last, e_pop_sel;
    wire [IPCQ_W-1:0] e_push_data;
    wire         holds_push, holds_pop, e_idle;
    wire         done, ev_s2, ev_s6, ev_comp, ev_push, ev_pop, ev_merge, ev_store;
    wire [7:0]   done_tag;
    wire [15:0]  s2_elems;
    wire         act_busy, act_mm, act_vec, act_wait, act_mwait, act_compute;
    wire [2:0]   act_class;
    wire         tx_fin, tx_ok, rx_fin, rx_ok;
    wire         cmdq_err, front_err, eng_err, tx_err, rx_err, fault_err;
    wire [4*IPCQ_W-1:0] pop_data = {pop_data_w, pop_data_s, pop_data_e, pop_data_n};
    wire         tx_act, rx_act;
    /* verilator lint_off UNUSEDSIGNAL */  // read by the bench through the hierarchy (tb/gtkw.py, test_pe_merge.py)
    wire [3:0]   e_st;
    wire [2:0]   pf_st;
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */  // the other direction's half of each pe_link, left open
    wire [IPCQ_W-1:0] rx_nc_data;
    wire [3:0]   rx_nc_last;
    wire [23:0]  rx_nc_rd_addr;
    wire         tx_nc_wr_en;
    wire [23:0]  tx_nc_wr_addr;
    wire [511:0] tx_nc_wr_data;
    /* verilator lint_on UNUSEDSIGNAL */

    pe_cmdq #(.D(D), .MAXROWS(MAXROWS), .MAXKEYS(MAXKEYS), .CMDQ_DEPTH(CMDQ_DEPTH), .LQ(LQ),
              .SLICE_BYTES(SLICE_BYTES), .ADDR_SHIFT(ADDR_SHIFT), .EDGE(EDGE)) u_cmdq (
        .clk(clk), .resetn(resetn), .cmd_valid(cmd_valid), .cmd_ready(cmd_ready), .cmd_data(cmd_data),
        .cmdq_free(cmdq_free), .enq_main(enq_main), .wr_seq(wr_seq), .rd_seq(rd_seq), .empty(q_empty),
        .deq(deq), .head_valid(head_valid), .head_cmd(head_cmd), .head_fault(head_fault),
        .pf_seq(pf_seq), .pf_cmd(pf_cmd), .pf_fault(pf_fault), .q_busy(q_busy),
        .tx_deq(tx_deq), .tx_valid(tx_valid), .tx_cmd(tx_hcmd), .tx_fault(tx_hfault),
        .rx_deq(rx_deq), .rx_valid(rx_valid), .rx_cmd(rx_hcmd), .rx_fault(rx_hfault), .mon_err(cmdq_err));

    pe_front #(.D(D), .PREFETCH(PREFETCH), .CMDQ_DEPTH(CMDQ_DEPTH), .ADDR_SHIFT(ADDR_SHIFT)) u_front (
        .clk(clk), .resetn(resetn), .prefetch(prefetch), .halt(halt),
        .wr_seq(wr_seq), .rd_seq(rd_seq), .enq_main(enq_main), .pf_seq(pf_seq), .pf_cmd(pf_cmd), .pf_fault(pf_fault),
        .q_busy(q_busy), .pf_st(pf_st), .head_ok(head_ok), .head_slot(head_slot), .slot_free(slot_free),
        .k_rdy(k_rdy), .v_rdy(v_rdy), .m_rdy(m_rdy), .q_rdy(q_rdy),
        .dma_req_valid(dma_req_valid), .dma_req_ready(dma_req_ready), .dma_req_addr(dma_req_addr),
        .dma_req_len(dma_req_len), .dma_req_buf(dma_req_buf), .dma_req_tag(dma_req_tag),
        .dma_out_valid(dma_out_valid), .dma_out_buf(dma_out_buf), .dma_out_qslot(dma_out_tag[1:0]),
        .dma_out_last(dma_out_last), .in_k(in_k), .in_v(in_v), .in_q(in_q), .in_slot(in_slot),
        .iss_k(iss_k), .iss_mask(iss_mask), .iss_v(iss_v), .iss_q(iss_q), .iss_slot(iss_slot), .mon_err(front_err));

    pe_engine #(.PE_ID(PE_ID), .D(D), .MAXROWS(MAXROWS), .MAXKEYS(MAXKEYS), .PREFETCH(PREFETCH), .MM_MACS(MM_MACS),
                .VEC_LANES(VEC_LANES), .IPCQ_W(IPCQ_W), .ADDR_SHIFT(ADDR_SHIFT), .SCALE(SCALE)) u_eng (
        .clk(clk), .resetn(resetn), .head_valid(head_valid), .head_cmd(head_cmd), .head_fault(head_fault),
        .head_ok(head_ok), .head_slot(head_slot), .deq(deq), .k_rdy(k_rdy), .v_rdy(v_rdy), .m_rdy(m_rdy),
        .q_rdy(q_rdy), .slot_free(slot_free), .halt(halt), .fault_clear(clear),
        .fault_req(e_fault), .fault_code(e_fcode), .fault_tag(e_ftag),
        .dma_out_valid(dma_out_valid), .dma_out_data(dma_out_data), .dma_out_idx(dma_out_idx),
        .in_k(in_k), .in_v(in_v), .in_q(in_q), .in_slot(in_slot),
        .push_ready(push_ready), .tx_act(tx_act), .push_sel(e_push_sel), .push_data(e_push_data),
        .push_last(e_push_last), .holds_push(holds_push),
        .pop_valid(pop_valid), .pop_last(pop_last), .pop_avail(pop_avail), .pop_data(pop_data), .rx_act(rx_act),
        .pop_sel(e_pop_sel), .holds_pop(holds_pop), .pop_info(pop_info),
        .sl_wr_en(sl_wr_en), .sl_wr_addr(sl_wr_addr), .sl_wr_data(sl_wr_data),
        .e_st(e_st), .e_idle(e_idle), .done(done), .done_tag(done_tag), .ev_s2(ev_s2), .ev_s6(ev_s6), .ev_comp(ev_comp),
        .s2_elems(s2_elems), .ev_push(ev_push), .ev_pop(ev_pop), .ev_merge(ev_merge), .ev_store(ev_store),
        .act_busy(act_busy), .act_mm(act_mm), .act_vec(act_vec), .act_wait(act_wait), .act_mwait(act_mwait),
        .act_compute(act_compute), .act_class(act_class), .mon_err(eng_err));

    pe_link #(.RECV(0), .PE_ID(PE_ID), .IPCQ_W(IPCQ_W), .ADDR_SHIFT(ADDR_SHIFT)) u_tx (
        .clk(clk), .resetn(resetn), .head_valid(tx_valid), .head_cmd(tx_hcmd), .head_fault(tx_hfault),
        .deq(tx_deq), .act(tx_act), .halt(halt), .yield(holds_push),
        .hs(push_ready), .last_in(4'd0), .data_in({4*IPCQ_W{1'b0}}),
        .eng_sel(e_push_sel), .eng_data(e_push_data), .eng_last(e_push_last),
        .port_sel(push_valid), .port_data(push_data), .port_last(push_last),
        .sl_rd_addr(sl_rd2_addr), .sl_rd_data(sl_rd2_data),
        .sl_wr_en(tx_nc_wr_en), .sl_wr_addr(tx_nc_wr_addr), .sl_wr_data(tx_nc_wr_data),
        .fin(tx_fin), .ok(tx_ok), .fault_req(tx_fault), .fault_code(tx_fcode), .fault_tag(tx_ftag),
        .mon_err(tx_err));

    pe_link #(.RECV(1), .PE_ID(PE_ID), .IPCQ_W(IPCQ_W), .ADDR_SHIFT(ADDR_SHIFT)) u_rx (
        .clk(clk), .resetn(resetn), .head_valid(rx_valid), .head_cmd(rx_hcmd), .head_fault(rx_hfault),
        .deq(rx_deq), .act(rx_act), .halt(halt), .yield(holds_pop),
        .hs(pop_valid), .last_in(pop_last), .data_in(pop_data),
        .eng_sel(e_pop_sel), .eng_data({IPCQ_W{1'b0}}), .eng_last(4'd0),
        .port_sel(pop_ready), .port_data(rx_nc_data), .port_last(rx_nc_last),
        .sl_rd_addr(rx_nc_rd_addr), .sl_rd_data(512'd0),
        .sl_wr_en(sl_wr2_en), .sl_wr_addr(sl_wr2_addr), .sl_wr_data(sl_wr2_data),
        .fin(rx_fin), .ok(rx_ok), .fault_req(rx_fault), .fault_code(rx_fcode), .fault_tag(rx_ftag),
        .mon_err(rx_err));

    pe_fault #(.N(NFAULT)) u_fault (
        .clk(clk), .resetn(resetn), .req({e_fault, rx_fault, tx_fault}),
        .req_code({e_fcode, rx_fcode, tx_fcode}), .req_tag({e_ftag, rx_ftag, tx_ftag}), .fault_clr(fault_clr),
        .fault_code(fault_code), .fault_tag(fault_tag), .raised(raised), .halt(halt), .clear(clear),
        .mon_err(fault_err));

    pe_stats #(.ALOG(ALOG)) u_stats (
        .clk(clk), .resetn(resetn), .q_empty(q_empty), .e_idle(e_idle),
        .idle(idle), .done(done), .done_tag(done_tag), .raised(raised),
        .tx_fin(tx_fin), .tx_ok(tx_ok), .rx_fin(rx_fin), .rx_ok(rx_ok),
        .iss_k(iss_k), .iss_mask(iss_mask), .iss_v(iss_v), .iss_q(iss_q), .iss_slot(iss_slot),
        .dma_req_valid(dma_req_valid), .dma_out_valid(dma_out_valid), .dma_out_last(dma_out_last), .land_k(in_k), .land_v(in_v),
        .land_slot(in_slot), .dma_xfer(dma_xfer),
        .ev_s2(ev_s2), .ev_s6(ev_s6), .s2_elems(s2_elems), .e_slot(head_slot), .ev_comp(ev_comp), .ev_push(ev_push), .ev_pop(ev_pop),
        .ev_merge(ev_merge), .ev_store(ev_store),
        .act_busy(act_busy), .act_mm(act_mm), .act_vec(act_vec), .act_wait(act_wait), .act_mwait(act_mwait),
        .act_compute(act_compute), .act_class(act_class), .tx_act(tx_act), .rx_act(rx_act),
        .push_valid(push_valid), .push_ready(push_ready),
        .cmd_done(cmd_done), .last_tag(last_tag), .evt(evt),
        .cnt_k(cnt_k), .cnt_v(cnt_v), .cnt_mask(cnt_mask), .cnt_q(cnt_q), .cnt_comp(cnt_comp), .cnt_push(cnt_push),
        .cnt_pop(cnt_pop), .cnt_merge(cnt_merge), .cnt_store(cnt_store), .cnt_fault(cnt_fault),
        .cnt_score(cnt_score), .cnt_tx(cnt_tx), .cnt_rx(cnt_rx),
        .cyc_busy(cyc_busy), .cyc_mm(cyc_mm), .cyc_vec(cyc_vec), .cyc_wait(cyc_wait), .cyc_hidden(cyc_hidden),
        .cyc_link(cyc_link), .cyc_pstall(cyc_pstall), .cyc_mwait(cyc_mwait), .cyc_first(cyc_first),
        .cyc_last(cyc_last), .cyc_now(cyc_now), .cyc_dma_first(cyc_dma_first), .cyc_dma_last(cyc_dma_last));

    assign mon_err = cmdq_err | front_err | eng_err | tx_err | rx_err | fault_err;
endmodule
`default_nettype wire
