// AHBM PE core (docs/ahbm.md §2-§5; command decoding in pe_cmd.vh, arithmetic in pe_arith.vh): the composite command queue, the DMA
// front-end that prefetches K / mask / V tiles `prefetch` commands ahead (a static input,
// 1..PREFETCH: PREFETCH sizes the tile slots, the run picks its depth), the
// composite engine running ATTN_TILE as one unit, the kernel-side commands
// (LOAD_Q, IPCQ_POP, MERGE, NORM_STORE, IPCQ_PUSH), the carried state sets
// S0..S7 and the status / counter outputs.
//
// Behavioural model. The arithmetic of a stage is computed at the clock edge
// the stage starts, with the fp32 functions of fp32_lib.vh in exactly the
// order of models/ahbm/attention.py (bit for bit); the stage then occupies
// its unit for a modelled number of cycles (docs/ahbm.md §3, "timing model"):
//   MM  stage (S2, S6):  ceil(ROWS*KEYS*D / MM_MACS)
//   VEC stage (S3+S4):   [MASK_EN] v(ROWS*KEYS) + 3 v(ROWS*KEYS) + v(ROWS*D),
//                        v(n) = ceil(n / VEC_LANES)
//   MERGE:               2 v(ROWS*D) + v(ROWS)
//   NORM_STORE:          v(ROWS*D), then one slice word written per cycle
//   push / pop:          one IPCQ word per cycle, with backpressure.
// The compute stages of one command run in order and one command computes at
// a time; the DMA front-end runs ahead of them (K, then mask, then V of each
// tile, into a ring of PREFETCH+1 tile buffer slots), so DMA overlaps compute.
//
// Monitors (reset-guarded, sticky mon_err, an ERROR line): a command written
// while the queue is full (it is dropped); a DMA word for a buffer that no
// command is waiting for. Command faults are not monitor errors: they are the
// documented FAULT register (the faulting command is dropped and the queue
// stops until fault_clr).
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
    parameter integer SLICE_BYTES = 1 << 20,
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
    output reg  [31:0]  cmd_done,       // completed commands
    output reg  [7:0]   last_tag,
    output wire         idle,
    output reg  [7:0]   fault_code,
    output reg  [7:0]   fault_tag,
    input  wire         fault_clr,
    output reg  [63:0]  pop_info,
    output reg          evt,            // toggles on every completion and every fault
    // counters (cleared by reset)
    output reg  [31:0]  cnt_k,          // K tile loads issued
    output reg  [31:0]  cnt_v,          // V tile loads issued
    output reg  [31:0]  cnt_mask,       // mask tile loads issued
    output reg  [31:0]  cnt_q,          // Q loads
    output reg  [31:0]  cnt_comp,       // ATTN_TILE completed
    output reg  [31:0]  cnt_push,       // (m,l,O) packets pushed (tail pushes and IPCQ_PUSH)
    output reg  [31:0]  cnt_pop,        // packets popped
    output reg  [31:0]  cnt_merge,      // MERGE completed
    output reg  [31:0]  cnt_store,      // NORM_STORE completed
    output reg  [31:0]  cnt_fault,      // commands dropped by a fault
    output reg  [31:0]  cnt_tx,         // KV_SEND packets sent
    output reg  [31:0]  cnt_rx,         // KV_RECV packets received
    output reg  [31:0]  cyc_busy,       // cycles with a command in the engine
    output reg  [31:0]  cyc_mm,         // cycles the MM unit is busy
    output reg  [31:0]  cyc_vec,        // cycles the VEC unit is busy
    output reg  [31:0]  cyc_wait,       // cycles the engine waits for DMA data (K, mask, V, Q)
    output reg  [31:0]  cyc_hidden,     // MM/VEC cycles while the DMA moves words out of the slice (compute hidden under DMA)
    output reg  [31:0]  cyc_link,       // MM/VEC cycles while a KV_SEND / KV_RECV is moving words
    output reg  [31:0]  cyc_pstall,     // cycles a pushed IPCQ word waited for the neighbour's full queue
    output reg  [31:0]  cyc_mwait,      // cycles a streamed MERGE waited for the child's next word
    output reg  [31:0]  cyc_first,      // cycle count at the first ATTN_TILE start
    output reg  [31:0]  cyc_last,       // cycle count at the last ATTN_TILE completion
    output reg  [31:0]  cyc_now,        // cycles since reset
    output reg  [31:0]  cyc_dma_first,  // cycle of the first DMA request
    output reg  [31:0]  cyc_dma_last,   // cycle after the last DMA word landed
    // DMA request (combinational valid, only while dma_req_ready) and data in
    output wire         dma_req_valid,
    input  wire         dma_req_ready,
    output reg  [23:0]  dma_req_addr,
    output reg  [23:0]  dma_req_len,
    output reg  [3:0]   dma_req_buf,
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
    output reg          sl_wr_en,
    output reg  [17:0]  sl_wr_addr,
    output reg  [511:0] sl_wr_data,
    // second slice ports: KV_SEND reads, KV_RECV writes (the link engines)
    output wire [17:0]  sl_rd2_addr,
    input  wire [511:0] sl_rd2_data,
    output reg          sl_wr2_en,
    output reg  [17:0]  sl_wr2_addr,
    output reg  [511:0] sl_wr2_data,
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
    output reg          mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (D < 32 || D > 128 || D % 32 != 0 || MAXROWS < 1 || MAXROWS > 64 || MAXKEYS < 1 || MAXKEYS > 128 || PREFETCH < 1 || PREFETCH > 4 || CMDQ_DEPTH < 2 || (CMDQ_DEPTH & (CMDQ_DEPTH - 1)) != 0 || MM_MACS < 1 || VEC_LANES < 1 || (IPCQ_W != 64 && IPCQ_W != 128 && IPCQ_W != 256 && IPCQ_W != 512))
            $fatal(1, "pe_core %m: D=%0d MAXROWS=%0d MAXKEYS=%0d PREFETCH=%0d CMDQ_DEPTH=%0d MM_MACS=%0d VEC_LANES=%0d IPCQ_W=%0d: need D a multiple of 32 in 32..128, MAXROWS 1..64, MAXKEYS 1..128, PREFETCH 1..4, CMDQ_DEPTH a power of two >= 2, MM_MACS and VEC_LANES >= 1, IPCQ_W 64, 128, 256 or 512", D, MAXROWS, MAXKEYS, PREFETCH, CMDQ_DEPTH, MM_MACS, VEC_LANES, IPCQ_W);
    end
`include "fp32_lib.vh"

    // ---------------------------------------------------------------- constants
    localparam integer NSLOT = PREFETCH + 1;
    localparam integer CQA = $clog2(CMDQ_DEPTH);
    localparam [3:0] OP_NOP = 4'd0, OP_ATTN = 4'd1, OP_POP = 4'd2, OP_MERGE = 4'd3,
                     OP_STORE = 4'd4, OP_PUSH = 4'd5, OP_LOADQ = 4'd6, OP_KVSEND = 4'd7, OP_KVRECV = 4'd8;
    localparam [7:0] F_NONE = 8'd0, F_OPCODE = 8'd1, F_ROWS = 8'd2, F_ALIGN = 8'd3, F_RANGE = 8'd4,
                     F_EMPTY = 8'd5, F_FRAME = 8'd6, F_EDGE = 8'd7, F_RSVD = 8'd8;
    localparam [3:0] BUF_Q = 4'd15;     // DMA buffer ids: K slot s = s, V = 5 + s, mask = 10 + s, Q = 15
    localparam [31:0] NEG_INF = 32'hFF800000;
    localparam [7:0] KIND_MLO = 8'h01;
    localparam [7:0] KIND_KV  = 8'h02;
    localparam integer LQ = 4;                      // link (KV_SEND / KV_RECV) queue entries each
    localparam integer SLOT_K = MAXKEYS * D;        // elements per K / V slot
    localparam integer SLOT_M = MAXROWS * 128;      // elements per mask slot (row stride <= 128)
    localparam integer EPW = IPCQ_W / 32;           // fp32 elements per IPCQ word ((m,l,O) packets)
    localparam integer SPW = 512 / IPCQ_W;          // IPCQ words per 64-byte slice word (KV packets)
    localparam integer KVSH = $clog2(IPCQ_W / 8);   // KV packet: LEN = bytes >> KVSH
    localparam integer MLANES = (VEC_LANES >= 2) ? VEC_LANES / 2 : 1;  // O elements merged per cycle

    // ---------------------------------------------------------------- storage
    reg  [127:0] cmdq [0:CMDQ_DEPTH-1];
    reg  [2:0]   ent_slot [0:CMDQ_DEPTH-1];   // tile slot of an ATTN_TILE entry
    reg  [CMDQ_DEPTH-1:0] ent_ok;             // the front-end has allocated its slot / issued its loads
    reg  [31:0]  wr_seq, rd_seq, pf_seq;      // monotonic command sequence numbers

    reg  [15:0]  qbuf [0:4*MAXROWS*D-1];      // Q slots Q0..Q3, bf16
    reg  [15:0]  kbuf [0:NSLOT*SLOT_K-1];     // K tile slots, bf16
    reg  [15:0]  vbuf [0:NSLOT*SLOT_K-1];     // V tile slots, bf16
    reg  [15:0]  mbuf [0:NSLOT*SLOT_M-1];     // mask tile slots, bf16
    reg  [4:0]   k_rdy, v_rdy, m_rdy;          // slot s data landed (bits >= NSLOT unused)
    reg  [3:0]   q_rdy;                       // Q slot s loaded (its LOAD_Q's data landed)

    reg  [31:0]  st_m [0:8*MAXROWS-1];        // carried state sets S0..S7
    reg  [31:0]  st_l [0:8*MAXROWS-1];
    reg  [31:0]  st_o [0:8*MAXROWS*D-1];
    reg  [31:0]  sp   [0:MAXROWS*MAXKEYS-1];  // scores S, then probabilities P, of the computing tile
    reg  [31:0]  tf   [0:MAXKEYS*D-1];        // the K (S2) or V (S6) tile widened to fp32 once per tile
    reg  [31:0]  qf   [0:D-1];                // one Q row widened to fp32
    reg  [15:0]  obuf [0:MAXROWS*D-1];        // NORM_STORE staging, bf16

    // Composite trace (read by the bench through the hierarchy): entry i =
    // composite i (mod TLOG), the cycles (cyc_now) of
    // {K issued, K landed, V issued, V landed, S2 start, S6 start}.
    localparam integer TLOG = 256;
    /* verilator lint_off UNUSEDSIGNAL */  // read by the bench only
    reg  [191:0] tlog [0:TLOG-1];
    /* verilator lint_on UNUSEDSIGNAL */
    reg  [31:0]  t_kiss [0:4];
    reg  [31:0]  t_viss [0:4];
    reg  [31:0]  t_kland [0:4];
    reg  [31:0]  t_vland [0:4];
    reg  [31:0]  t_s2;

    // Activity log (read by the bench through the hierarchy: the per-PE timeline of tb/ahbm/plots.py):
    // entry i = {cyc_now, code} of the i-th change (mod ALOG) of code = {DMA moving words, engine class},
    // class 0 idle, 1 waiting for DMA data, 2 MM, 3 VEC, 4 push, 5 pop, 6 merge, 7 store; alog_n changes.
    localparam integer ALOG = 4096;
    /* verilator lint_off UNUSEDSIGNAL */  // read by the bench only
    reg  [35:0]  alog [0:ALOG-1];
    reg  [31:0]  alog_n;
    /* verilator lint_on UNUSEDSIGNAL */
    reg  [3:0]   act_prev;

    // ---------------------------------------------------------------- command decoding, arithmetic
`include "pe_cmd.vh"
`include "pe_arith.vh"

    // ---------------------------------------------------------------- command queue
    // link queues (KV_SEND -> tx, KV_RECV -> rx), each in order, concurrent with the main queue
    reg  [127:0] txq [0:LQ-1];
    reg  [127:0] rxq [0:LQ-1];
    reg  [31:0]  tx_wr, tx_rd, rx_wr, rx_rd;
    wire main_ok = (32'(wr_seq - rd_seq) < CMDQ_DEPTH);
    wire tx_ok = (32'(tx_wr - tx_rd) < LQ);
    wire rx_ok = (32'(rx_wr - rx_rd) < LQ);
    assign cmd_ready = main_ok && tx_ok && rx_ok;
    assign cmdq_free = 8'(CMDQ_DEPTH - 32'(wr_seq - rd_seq));
    wire [127:0] rd_cmd = cmdq[rd_seq[CQA-1:0]];
    wire [127:0] pf_cmd = cmdq[pf_seq[CQA-1:0]];

    // ---------------------------------------------------------------- front-end (DMA issue) state
    localparam [2:0] PF_SCAN = 3'd0, PF_K = 3'd1, PF_MASK = 3'd2, PF_V = 3'd3, PF_Q = 3'd4, PF_FENCE = 3'd5;
    reg [2:0]  pf_st;
    reg [31:0] slots_alloc, slots_freed;
    // tile slots in use: prefetch + 1 of the NSLOT built (a prefetch outside 1..PREFETCH is reported by
    // the monitor below and runs as PREFETCH, so no slot index ever leaves the buffers)
    wire       pf_ok = prefetch >= 3'd1 && {29'd0, prefetch} <= PREFETCH;
    wire [2:0] nslot = pf_ok ? prefetch + 3'd1 : 3'(NSLOT);
    wire [2:0] pf_slot = 3'(slots_alloc % {29'd0, nslot});
    wire [2:0] pf_cur_slot = ent_slot[pf_seq[CQA-1:0]];
    wire       pf_issue = (pf_st == PF_K) || (pf_st == PF_MASK) || (pf_st == PF_V) || (pf_st == PF_Q);
    assign dma_req_valid = pf_issue && dma_req_ready;
    assign dma_req_tag = (pf_st == PF_Q) ? {6'd0, f_qreg(pf_cmd)} : 8'(pf_seq);
    // a LOAD_Q is fetched ahead like a tile once no command before it (from the engine's on) reads or
    // loads its Q slot: the ATTN_TILEs of the previous contents of the slot have all computed
    reg q_hazard;
    integer qi;
    reg [127:0] q_ent;
    always @* begin
        q_hazard = 1'b0;
        q_ent = 128'd0;
        for (qi = 0; qi < CMDQ_DEPTH; qi = qi + 1) begin
            q_ent = cmdq[rd_seq[CQA-1:0] + qi[CQA-1:0]];
            if (32'(qi) < pf_seq - rd_seq && (f_opc(q_ent) == OP_ATTN || f_opc(q_ent) == OP_LOADQ)
                && f_qreg(q_ent) == f_qreg(pf_cmd))
                q_hazard = 1'b1;
        end
    end
    always @* begin
        dma_req_addr = pf_cmd[71:48];
        dma_req_len  = kv_bytes(f_keys(pf_cmd));
        dma_req_buf  = {1'b0, pf_cur_slot};
        case (pf_st)
            PF_MASK: begin
                dma_req_addr = pf_cmd[119:96];
                dma_req_len  = mask_bytes(f_rows(pf_cmd), f_keys(pf_cmd));
                dma_req_buf  = 4'd10 + {1'b0, pf_cur_slot};
            end
            PF_V: begin
                dma_req_addr = pf_cmd[95:72];
                dma_req_buf  = 4'd5 + {1'b0, pf_cur_slot};
            end
            PF_Q: begin
                dma_req_len = rows_bytes(f_rows(pf_cmd));
                dma_req_buf = BUF_Q;
            end
            default: ;
        endcase
    end

    // ---------------------------------------------------------------- engine state
    localparam [3:0] E_IDLE = 4'd0, E_WAIT_Q = 4'd1, E_WAIT_K = 4'd2, E_MM1 = 4'd3, E_WAIT_M = 4'd4,
                     E_VEC = 4'd5, E_WAIT_V = 4'd6, E_MM2 = 4'd7, E_PUSH = 4'd8, E_POP = 4'd9,
                     E_BUSY = 4'd10, E_STORE = 4'd11, E_FAULT = 4'd12, E_SMERGE = 4'd13;
    reg [3:0]   e_st;
    reg [127:0] e_cmd;
    reg [31:0]  e_left;      // cycles left in a timed stage / words left in a stream
    reg [31:0]  e_word;      // word index of a push / pop / store stream
    reg         e_ferr;      // pop framing error seen
    // streamed MERGE (docs/ahbm.md §3, "the reduction"): the child's packet is merged word by word as
    // it arrives, and with PUSH_EN the merged state is pushed to PDIR word by word behind the merge
    reg         e_idone;     // the input packet's last word was taken
    reg         e_xdone;     // every row's m and l have arrived: m, l merged, the row scales known
    reg         e_pv;        // a word of the output packet is on the push port
    reg         e_pdone;     // the output packet's last word was taken
    reg [31:0]  e_pword;     // index of the output word on the port (or the next to load), 0 = header
    reg [31:0]  mb [0:MAXROWS-1];      // the child's m, l of each row (until the row scales are known)
    reg [31:0]  lb [0:MAXROWS-1];
    reg [31:0]  mea [0:MAXROWS-1];     // exp(m_a - m) and exp(m_b - m) of each row
    reg [31:0]  meb [0:MAXROWS-1];

    wire [1:0] e_dir = f_dir(e_cmd);
    wire       e_smerge = (e_st == E_SMERGE);
    wire       e_spush = e_smerge && e_cmd[21];          // a streamed MERGE that pushes its result
    wire [1:0] e_pdir = e_smerge ? e_cmd[33:32] : e_dir;  // the engine's push direction
    wire [2:0] e_slot = ent_slot[rd_seq[CQA-1:0]];
    // ---- link engines' state (declared here: the port muxes below need it)
    reg         tx_act, rx_act;
    reg [127:0] tx_cmd, rx_cmd;
    reg [31:0]  tx_word, rx_word;
    reg         rx_ferr;
    reg [511:0] rx_line;                              // the lanes received of the slice word being assembled
    wire [1:0]  tx_dir = f_dir(tx_cmd);
    wire [1:0]  rx_dir = f_dir(rx_cmd);
    wire [31:0] tx_len = 32'(tx_cmd[95:72]) >> KVSH;  // body words = bytes / (IPCQ_W / 8)
    wire [31:0] rx_len = 32'(rx_cmd[95:72]) >> KVSH;
    wire [31:0] tx_body = tx_word - 32'd1;
    assign sl_rd2_addr = 18'(32'(tx_cmd[71:54]) + tx_body / 32'(SPW));
    wire [IPCQ_W-1:0] tx_data = (tx_word == 32'd0) ? kv_header(tx_cmd)
                              : sl_rd2_data[IPCQ_W * (tx_body % 32'(SPW)) +: IPCQ_W];
    reg  [IPCQ_W-1:0] e_pdata;

    // one packet at a time per port: the link engine that holds a port keeps it to the packet's end
    // (a streamed MERGE holds its pop port from its start and, with PUSH_EN, its push port too)
    wire [31:0] e_mlen = 32'(mlo_len(f_rows(e_cmd)));
    wire [31:0] e_pidx = e_smerge ? e_pword : e_word;     // index of the word on the engine's push port
    wire e_push_go = ((e_st == E_PUSH) || (e_spush && e_pv)) && !tx_act;
    wire e_pop_go  = ((e_st == E_POP) || (e_smerge && e_left == 32'd0 && !e_idone)) && !rx_act;
    wire e_holds_push = (e_st == E_PUSH) || e_spush;        // the TX engine may not start a packet
    wire e_holds_pop  = (e_st == E_POP) || e_smerge;        // the RX engine may not start a packet
    assign push_valid = tx_act ? (4'd1 << tx_dir) : e_push_go ? (4'd1 << e_pdir) : 4'd0;
    assign push_data  = tx_act ? tx_data : e_pdata;
    assign push_last  = tx_act ? ((tx_word == tx_len) ? (4'd1 << tx_dir) : 4'd0)
                      : (e_push_go && e_pidx == e_mlen) ? (4'd1 << e_pdir) : 4'd0;
    assign pop_ready  = rx_act ? ((4'd1 << rx_dir) & pop_valid) : e_pop_go ? ((4'd1 << e_dir) & pop_valid) : 4'd0;
    reg [IPCQ_W-1:0] rx_pop;
    always @* begin
        case (rx_dir)
            2'd0: rx_pop = pop_data_n;
            2'd1: rx_pop = pop_data_e;
            2'd2: rx_pop = pop_data_s;
            default: rx_pop = pop_data_w;
        endcase
    end
    reg [IPCQ_W-1:0] pop_word;
    always @* begin
        case (e_dir)
            2'd0: pop_word = pop_data_n;
            2'd1: pop_word = pop_data_e;
            2'd2: pop_word = pop_data_s;
            default: pop_word = pop_data_w;
        endcase
    end
    assign idle = (wr_seq == rd_seq) && (e_st == E_IDLE) && (tx_wr == tx_rd) && !tx_act && (rx_wr == rx_rd) && !rx_act;
    wire e_ent = ent_ok[rd_seq[CQA-1:0]];
    wire e_waiting = (e_st == E_WAIT_Q && !(e_ent && q_rdy[f_qreg(e_cmd)])) || (e_st == E_WAIT_K && !(e_ent && k_rdy[e_slot]))
                  || (e_st == E_WAIT_M && !m_rdy[e_slot]) || (e_st == E_WAIT_V && !v_rdy[e_slot]);
    wire [2:0] e_class = (e_st == E_WAIT_Q || e_st == E_WAIT_K || e_st == E_WAIT_M || e_st == E_WAIT_V) ? 3'd1
                       : (e_st == E_MM1 || e_st == E_MM2) ? 3'd2
                       : (e_st == E_VEC) ? 3'd3
                       : (e_st == E_PUSH) ? 3'd4
                       : (e_st == E_POP) ? 3'd5
                       : (e_smerge || (e_st == E_BUSY && f_opc(e_cmd) == OP_MERGE)) ? 3'd6
                       : (e_st == E_BUSY || e_st == E_STORE) ? 3'd7 : 3'd0;
    wire [3:0] act = {dma_xfer, e_class};
    wire e_compute = (e_st == E_MM1) || (e_st == E_MM2) || (e_st == E_VEC) || (e_st == E_BUSY)
                  || (e_smerge && (e_left != 32'd0 || (e_pop_go && pop_valid[e_dir])));
    // output word j (0 = header) of a streamed MERGE can go on the port: the header once the input header
    // checked, a body word once the input word j is merged (the layouts are the same) and the rows' m, l too
    wire [31:0] e_pnext = e_pv ? e_pword + 32'd1 : e_pword;
    wire e_pavail = !e_ferr && ((e_pnext == 32'd0) ? (e_word >= 32'd1) : (e_word > e_pnext && e_xdone));

    // a command faults: FAULT = {code, its tag}; every queue stops until fault_clr
    task automatic raise_fault(input [7:0] code, input [127:0] cm);
        begin
            fault_code <= code;
            fault_tag <= f_tag(cm);
            cnt_fault <= cnt_fault + 32'd1;
            evt <= ~evt;
        end
    endtask

    task automatic complete(input [127:0] cm);
        begin
            cmd_done <= cmd_done + 32'd1;
            last_tag <= f_tag(cm);
            evt <= ~evt;
            rd_seq <= rd_seq + 32'd1;
            e_st <= E_IDLE;
        end
    endtask

    wire [3:0] dma_vslot = dma_out_buf - 4'd5;
    wire [3:0] dma_mslot = dma_out_buf - 4'd10;

    // ---------------------------------------------------------------- the one clocked process
    /* verilator lint_off BLKSEQ */   // behavioural compute: the arithmetic tasks use blocking temporaries
    always @(posedge clk) begin
        if (!resetn) begin
            wr_seq <= 32'd0; rd_seq <= 32'd0; pf_seq <= 32'd0;
            ent_ok <= {CMDQ_DEPTH{1'b0}};
            pf_st <= PF_SCAN; slots_alloc <= 32'd0; slots_freed <= 32'd0;
            k_rdy <= 5'd0; v_rdy <= 5'd0; m_rdy <= 5'd0; q_rdy <= 4'd0;
            e_st <= E_IDLE; e_cmd <= 128'd0; e_left <= 32'd0; e_word <= 32'd0; e_ferr <= 1'b0;
            cmd_done <= 32'd0; last_tag <= 8'd0; fault_code <= F_NONE; fault_tag <= 8'd0; pop_info <= 64'd0;
            evt <= 1'b0; sl_wr_en <= 1'b0; sl_wr_addr <= 18'd0; sl_wr_data <= 512'd0; e_pdata <= {IPCQ_W{1'b0}};
            e_idone <= 1'b0; e_xdone <= 1'b0; e_pv <= 1'b0; e_pdone <= 1'b0; e_pword <= 32'd0;
            tx_wr <= 32'd0; tx_rd <= 32'd0; rx_wr <= 32'd0; rx_rd <= 32'd0; tx_act <= 1'b0; rx_act <= 1'b0;
            tx_cmd <= 128'd0; rx_cmd <= 128'd0; tx_word <= 32'd0; rx_word <= 32'd0; rx_ferr <= 1'b0;
            rx_line <= 512'd0; sl_wr2_en <= 1'b0; sl_wr2_addr <= 18'd0; sl_wr2_data <= 512'd0;
            cnt_tx <= 32'd0; cnt_rx <= 32'd0;
            cnt_k <= 32'd0; cnt_v <= 32'd0; cnt_mask <= 32'd0; cnt_q <= 32'd0; cnt_comp <= 32'd0;
            cnt_push <= 32'd0; cnt_pop <= 32'd0; cnt_merge <= 32'd0; cnt_store <= 32'd0; cnt_fault <= 32'd0;
            cyc_busy <= 32'd0; cyc_mm <= 32'd0; cyc_vec <= 32'd0; cyc_wait <= 32'd0; cyc_hidden <= 32'd0; cyc_link <= 32'd0; cyc_pstall <= 32'd0; cyc_mwait <= 32'd0;
            cyc_first <= 32'd0; cyc_last <= 32'd0; cyc_now <= 32'd0; cyc_dma_first <= 32'd0; cyc_dma_last <= 32'd0;
            alog_n <= 32'd0; act_prev <= 4'd0;
        end else begin
            cyc_now <= cyc_now + 32'd1;
            if (act != act_prev) begin
                alog[alog_n % ALOG] <= {cyc_now, act};
                alog_n <= alog_n + 32'd1;
                act_prev <= act;
            end
            sl_wr_en <= 1'b0;
            sl_wr2_en <= 1'b0;

            // ---- enqueue (KV_SEND / KV_RECV go to their link queue)
            if (cmd_valid && cmd_ready) begin
                if (f_opc(cmd_data) == OP_KVSEND) begin
                    txq[tx_wr[1:0]] <= cmd_data;
                    tx_wr <= tx_wr + 32'd1;
                end else if (f_opc(cmd_data) == OP_KVRECV) begin
                    rxq[rx_wr[1:0]] <= cmd_data;
                    rx_wr <= rx_wr + 32'd1;
                end else begin
                    cmdq[wr_seq[CQA-1:0]] <= cmd_data;
                    ent_ok[wr_seq[CQA-1:0]] <= 1'b0;
                    wr_seq <= wr_seq + 32'd1;
                end
            end

            // ---- TX link engine: KV_SEND streams a slice range as one packet (8 IPCQ words per slice word)
            if (!tx_act) begin
                if (tx_wr != tx_rd && fault_code == F_NONE && !e_holds_push) begin
                    if (cmd_fault(txq[tx_rd[1:0]]) != F_NONE) begin
                        raise_fault(cmd_fault(txq[tx_rd[1:0]]), txq[tx_rd[1:0]]);
                        tx_rd <= tx_rd + 32'd1;
                    end else begin
                        tx_cmd <= txq[tx_rd[1:0]];
                        tx_word <= 32'd0;
                        tx_act <= 1'b1;
                    end
                end
            end else if (push_ready[tx_dir]) begin
                if (tx_word == tx_len) begin
                    tx_act <= 1'b0;
                    tx_rd <= tx_rd + 32'd1;
                    cnt_tx <= cnt_tx + 32'd1;
                    evt <= ~evt;
                end else tx_word <= tx_word + 32'd1;
            end

            // ---- RX link engine: KV_RECV pops one KV packet into a slice range
            if (!rx_act) begin
                if (rx_wr != rx_rd && fault_code == F_NONE && !e_holds_pop) begin
                    if (cmd_fault(rxq[rx_rd[1:0]]) != F_NONE) begin
                        raise_fault(cmd_fault(rxq[rx_rd[1:0]]), rxq[rx_rd[1:0]]);
                        rx_rd <= rx_rd + 32'd1;
                    end else begin
                        rx_cmd <= rxq[rx_rd[1:0]];
                        rx_word <= 32'd0;
                        rx_ferr <= 1'b0;
                        rx_act <= 1'b1;
                    end
                end
            end else if (pop_valid[rx_dir]) begin
                if (rx_word == 32'd0) begin
                    if (rx_pop[23:16] != KIND_KV || 32'(rx_pop[15:0]) != rx_len) rx_ferr <= 1'b1;
                end else if (!rx_ferr) begin
                    rx_tmp = rx_line;
                    rx_tmp[IPCQ_W * kv_lane(rx_word) +: IPCQ_W] = rx_pop;
                    rx_line <= rx_tmp;
                    if (kv_lane(rx_word) == 32'(SPW - 1)) begin
                        sl_wr2_en <= 1'b1;
                        sl_wr2_addr <= 18'(32'(rx_cmd[71:54]) + (rx_word - 32'd1) / 32'(SPW));
                        sl_wr2_data <= rx_tmp;
                    end
                end
                rx_word <= rx_word + 32'd1;
                if (pop_last[rx_dir]) begin
                    rx_act <= 1'b0;
                    rx_rd <= rx_rd + 32'd1;
                    evt <= ~evt;
                    if (rx_ferr || rx_word != rx_len
                        || (rx_word == 32'd0 && (rx_pop[23:16] != KIND_KV || 32'(rx_pop[15:0]) != rx_len))) begin
                        raise_fault(F_FRAME, rx_cmd);
                    end else cnt_rx <= cnt_rx + 32'd1;
                end
            end

            // ---- DMA data in: unpack 32 bf16 per word into the destination buffer
            if (dma_out_valid) begin
                for (t = 0; t < 32; t = t + 1) begin
                    idx = 32'(dma_out_idx) * 32 + t;
                    if (dma_out_buf == BUF_Q)
                        qbuf[32'(dma_out_tag[1:0]) * MAXROWS * D + idx] = dma_out_data[16*t +: 16];
                    else if (dma_out_buf < 4'd5)
                        kbuf[32'(dma_out_buf) * SLOT_K + idx] = dma_out_data[16*t +: 16];
                    else if (dma_out_buf < 4'd10)
                        vbuf[32'(dma_vslot) * SLOT_K + idx] = dma_out_data[16*t +: 16];
                    else
                        mbuf[32'(dma_mslot) * SLOT_M + idx] = dma_out_data[16*t +: 16];
                end
                if (dma_out_last) begin
                    if (dma_out_buf == BUF_Q) q_rdy[dma_out_tag[1:0]] <= 1'b1;
                    else if (dma_out_buf < 4'd5) begin
                        k_rdy[dma_out_buf[2:0]] <= 1'b1;
                        t_kland[dma_out_buf[2:0]] <= cyc_now;
                    end else if (dma_out_buf < 4'd10) begin
                        v_rdy[dma_vslot[2:0]] <= 1'b1;
                        t_vland[dma_vslot[2:0]] <= cyc_now;
                    end
                    else m_rdy[dma_mslot[2:0]] <= 1'b1;
                end
            end

            // ---- front-end: allocate tile slots and issue K, mask, V (and Q) loads in command order
            case (pf_st)
                PF_SCAN: begin
                    if (pf_seq < rd_seq) begin
                        pf_seq <= rd_seq;                      // the engine ran past (non-tile commands, faults)
                    end else if (pf_seq != wr_seq && fault_code == F_NONE && cmd_fault(pf_cmd) == F_NONE) begin
                        if (f_opc(pf_cmd) == OP_ATTN) begin
                            if (slots_alloc - slots_freed < {29'd0, nslot}) begin
                                ent_slot[pf_seq[CQA-1:0]] <= pf_slot;
                                k_rdy[pf_slot] <= 1'b0; v_rdy[pf_slot] <= 1'b0; m_rdy[pf_slot] <= 1'b0;
                                slots_alloc <= slots_alloc + 32'd1;
                                pf_st <= PF_K;
                            end
                        end else if (f_opc(pf_cmd) == OP_LOADQ) begin
                            if (!q_hazard) begin
                                q_rdy[f_qreg(pf_cmd)] <= 1'b0;
                                pf_st <= PF_Q;
                            end
                        end else begin
                            pf_st <= pf_cmd[23] ? PF_FENCE : PF_SCAN;
                            if (!pf_cmd[23]) pf_seq <= pf_seq + 32'd1;
                        end
                    end
                end
                PF_K: if (dma_req_ready) begin
                    cnt_k <= cnt_k + 32'd1;
                    t_kiss[pf_cur_slot] <= cyc_now;
                    pf_st <= pf_cmd[20] ? PF_MASK : PF_V;
                end
                PF_MASK: if (dma_req_ready) begin
                    cnt_mask <= cnt_mask + 32'd1;
                    pf_st <= PF_V;
                end
                PF_V: if (dma_req_ready) begin
                    cnt_v <= cnt_v + 32'd1;
                    t_viss[pf_cur_slot] <= cyc_now;
                    ent_ok[pf_seq[CQA-1:0]] <= 1'b1;
                    if (pf_cmd[23]) pf_st <= PF_FENCE;
                    else begin pf_st <= PF_SCAN; pf_seq <= pf_seq + 32'd1; end
                end
                PF_Q: if (dma_req_ready) begin
                    cnt_q <= cnt_q + 32'd1;
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

            // ---- engine
            if (e_st != E_IDLE && e_st != E_FAULT) cyc_busy <= cyc_busy + 32'd1;
            if (e_st == E_MM1 || e_st == E_MM2) cyc_mm <= cyc_mm + 32'd1;
            if (e_st == E_VEC || e_st == E_BUSY || (e_smerge && e_compute)) cyc_vec <= cyc_vec + 32'd1;
            if (e_smerge && e_left == 32'd0 && !e_idone && !(e_pop_go && pop_valid[e_dir])) cyc_mwait <= cyc_mwait + 32'd1;
            if (e_waiting) cyc_wait <= cyc_wait + 32'd1;
            if (e_compute && dma_xfer) cyc_hidden <= cyc_hidden + 32'd1;
            if (dma_req_valid && cnt_k + cnt_v + cnt_mask + cnt_q == 32'd0) cyc_dma_first <= cyc_now;
            if (dma_out_valid && dma_out_last) cyc_dma_last <= cyc_now + 32'd1;
            if (e_compute && (tx_act || rx_act)) cyc_link <= cyc_link + 32'd1;
            if ((push_valid & ~push_ready) != 4'd0) cyc_pstall <= cyc_pstall + 32'd1;

            case (e_st)
                E_IDLE: if (rd_seq != wr_seq && fault_code == F_NONE) begin
                    e_cmd <= rd_cmd;
                    e_word <= 32'd0;
                    e_ferr <= 1'b0;
                    if (cmd_fault(rd_cmd) != F_NONE || (f_opc(rd_cmd) == OP_POP && !pop_avail[f_dir(rd_cmd)])
                        || (f_opc(rd_cmd) == OP_MERGE && rd_cmd[34] && !pop_valid[f_dir(rd_cmd)])) begin
                        raise_fault((cmd_fault(rd_cmd) != F_NONE) ? cmd_fault(rd_cmd) : F_EMPTY, rd_cmd);
                        rd_seq <= rd_seq + 32'd1;             // the faulting command is dropped
                        e_st <= E_FAULT;
                    end else begin
                        case (f_opc(rd_cmd))
                            OP_NOP: begin                          // INIT=1: reset S_SREG (a PE with no visible tile)
                                if (rd_cmd[22]) do_init(f_sreg(rd_cmd));
                                complete(rd_cmd);
                            end
                            OP_LOADQ: e_st <= E_WAIT_Q;
                            OP_ATTN: e_st <= E_WAIT_K;
                            OP_POP: e_st <= E_POP;
                            OP_MERGE: if (rd_cmd[34]) begin          // streamed: from the queue of DIR
                                e_left <= 32'd0; e_idone <= 1'b0; e_xdone <= 1'b0;
                                e_pv <= 1'b0; e_pdone <= 1'b0; e_pword <= 32'd0;
                                e_st <= E_SMERGE;
                            end else begin
                                do_merge(f_sreg(rd_cmd), f_sreg2(rd_cmd), f_rows(rd_cmd));
                                e_left <= 2 * vcyc(32'(f_rows(rd_cmd)) * D) + vcyc(32'(f_rows(rd_cmd)));
                                e_st <= E_BUSY;
                            end
                            OP_PUSH: begin
                                e_pdata <= mlo_header(rd_cmd[30:24], rd_cmd[39:32]);
                                e_st <= E_PUSH;
                            end
                            OP_STORE: begin
                                do_norm(f_sreg(rd_cmd), f_rows(rd_cmd));
                                e_left <= vcyc(32'(f_rows(rd_cmd)) * D);
                                e_st <= E_BUSY;
                            end
                            default: complete(rd_cmd);
                        endcase
                    end
                end
                E_WAIT_Q: if (ent_ok[rd_seq[CQA-1:0]] && q_rdy[f_qreg(e_cmd)]) begin
                    complete(e_cmd);
                end
                E_WAIT_K: if (ent_ok[rd_seq[CQA-1:0]] && k_rdy[e_slot]) begin
                    if (cnt_comp == 32'd0 && cyc_first == 32'd0) cyc_first <= cyc_now;
                    t_s2 <= cyc_now;
                    if (e_cmd[22]) do_init(f_sreg(e_cmd));
                    do_s2(f_qreg(e_cmd), e_slot, f_rows(e_cmd), f_keys(e_cmd));
                    e_left <= mm_cycles(f_rows(e_cmd), f_keys(e_cmd));
                    e_st <= E_MM1;
                end
                E_MM1: if (e_left <= 32'd1) e_st <= e_cmd[20] ? E_WAIT_M : E_VEC;
                       else e_left <= e_left - 32'd1;
                E_WAIT_M: if (m_rdy[e_slot]) e_st <= E_VEC;
                E_VEC: begin
                    if (e_word == 32'd0) begin                   // first cycle: compute, set the duration
                        do_s34(f_sreg(e_cmd), e_slot, f_rows(e_cmd), f_keys(e_cmd), e_cmd[20]);
                        e_left <= (e_cmd[20] ? vcyc(32'(f_rows(e_cmd)) * 32'(f_keys(e_cmd))) : 32'd0)
                                  + 3 * vcyc(32'(f_rows(e_cmd)) * 32'(f_keys(e_cmd))) + vcyc(32'(f_rows(e_cmd)) * D) - 32'd1;
                        e_word <= 32'd1;
                    end else if (e_left == 32'd0) begin
                        e_word <= 32'd0;
                        e_st <= E_WAIT_V;
                    end else e_left <= e_left - 32'd1;
                end
                E_WAIT_V: if (v_rdy[e_slot]) begin
                    tlog[cnt_comp % TLOG] <= {t_kiss[e_slot], t_kland[e_slot], t_viss[e_slot], t_vland[e_slot], t_s2, cyc_now};
                    do_s6(f_sreg(e_cmd), e_slot, f_rows(e_cmd), f_keys(e_cmd));
                    e_left <= mm_cycles(f_rows(e_cmd), f_keys(e_cmd));
                    e_st <= E_MM2;
                end
                E_MM2: if (e_left <= 32'd1) begin
                    slots_freed <= slots_freed + 32'd1;          // the tile buffers are free again
                    cnt_comp <= cnt_comp + 32'd1;
                    cyc_last <= cyc_now + 32'd1;
                    if (e_cmd[21]) begin
                        e_pdata <= mlo_header(e_cmd[30:24], e_cmd[127:120]);
                        e_st <= E_PUSH;
                    end else complete(e_cmd);
                end else e_left <= e_left - 32'd1;
                E_PUSH: if (e_push_go && push_ready[e_dir]) begin
                    if (e_word == 32'(mlo_len(f_rows(e_cmd)))) begin
                        cnt_push <= cnt_push + 32'd1;
                        complete(e_cmd);
                    end else begin
                        e_pdata <= mlo_body(f_sreg(e_cmd), f_rows(e_cmd), e_word + 32'd1);
                        e_word <= e_word + 32'd1;
                    end
                end
                E_POP: if (e_pop_go && pop_valid[e_dir]) begin
                    if (e_word == 32'd0) begin
                        pop_info <= pop_word[63:0];
                        if (bad_mlo_header(pop_word[23:0], f_rows(e_cmd))) e_ferr <= 1'b1;
                    end else if (!e_ferr) begin
                        for (t = 0; t < EPW; t = t + 1) begin
                            idx = EPW * (e_word - 32'd1) + t;
                            a32 = pop_word[32*t +: 32];
                            if (idx < 32'(f_rows(e_cmd)))
                                st_m[32'(f_sreg(e_cmd)) * MAXROWS + idx] = a32;
                            else if (idx < 2 * 32'(f_rows(e_cmd)))
                                st_l[32'(f_sreg(e_cmd)) * MAXROWS + idx - 32'(f_rows(e_cmd))] = a32;
                            else if (idx < 2 * 32'(f_rows(e_cmd)) + 32'(f_rows(e_cmd)) * D)
                                st_o[32'(f_sreg(e_cmd)) * MAXROWS * D + idx - 2 * 32'(f_rows(e_cmd))] = a32;
                        end
                    end
                    e_word <= e_word + 32'd1;
                    if (pop_last[e_dir]) begin
                        if (e_ferr || (e_word == 32'd0 && bad_mlo_header(pop_word[23:0], f_rows(e_cmd)))
                            || (e_word != 32'(mlo_len(f_rows(e_cmd))))) begin
                            raise_fault(F_FRAME, e_cmd);            // the packet is consumed all the same
                            rd_seq <= rd_seq + 32'd1;
                            e_st <= E_FAULT;
                        end else begin
                            cnt_pop <= cnt_pop + 32'd1;
                            complete(e_cmd);
                        end
                    end
                end
                E_SMERGE: begin
                    // input: the next word of the child's packet, when one is queued and the VEC is free
                    if (e_left != 32'd0) e_left <= e_left - 32'd1;
                    else if (e_pop_go && pop_valid[e_dir]) begin
                        n_o = 0;
                        x_now = 1'b0;
                        if (e_word == 32'd0) begin
                            pop_info <= pop_word[63:0];
                            if (bad_mlo_header(pop_word[23:0], f_rows(e_cmd))) e_ferr <= 1'b1;
                        end else if (!e_ferr) begin
                            for (t = 0; t < EPW; t = t + 1) begin
                                idx = EPW * (e_word - 32'd1) + t;
                                a32 = pop_word[32*t +: 32];
                                if (idx < 32'(f_rows(e_cmd)))
                                    mb[idx] = a32;
                                else if (idx < 2 * 32'(f_rows(e_cmd))) begin
                                    lb[idx - 32'(f_rows(e_cmd))] = a32;
                                    if (idx == 2 * 32'(f_rows(e_cmd)) - 1) begin
                                        do_mexp(f_sreg(e_cmd), f_rows(e_cmd));
                                        x_now = 1'b1;
                                    end
                                end else if (idx < 2 * 32'(f_rows(e_cmd)) + 32'(f_rows(e_cmd)) * D) begin
                                    b32 = idx - 2 * 32'(f_rows(e_cmd));              // O element, row-major
                                    c = 32'(f_sreg(e_cmd)) * MAXROWS * D + b32;
                                    st_o[c] = f32_add(f32_mul(st_o[c], mea[b32 / D]), f32_mul(a32, meb[b32 / D]));
                                    n_o = n_o + 1;
                                end
                            end
                        end
                        // the VEC holds the word ceil(n_o / MLANES) cycles (at least one), the row scales v(ROWS) more
                        e_left <= ((n_o == 0) ? 32'd0 : ceil_div(32'(n_o), MLANES) - 32'd1)
                                  + (x_now ? vcyc(32'(f_rows(e_cmd))) : 32'd0);
                        if (x_now) e_xdone <= 1'b1;
                        e_word <= e_word + 32'd1;
                        if (pop_last[e_dir]) begin
                            e_idone <= 1'b1;
                            if (e_word != e_mlen) e_ferr <= 1'b1;
                        end
                    end
                    // output (PUSH_EN): the merged state to PDIR, each word as soon as it is final
                    if (e_cmd[21] && !e_pdone) begin
                        if (e_pv && e_push_go && push_ready[e_pdir]) begin            // the word was taken
                            if (e_pword == e_mlen) begin
                                e_pv <= 1'b0;
                                e_pdone <= 1'b1;
                                cnt_push <= cnt_push + 32'd1;
                            end else begin
                                if (e_pavail) e_pdata <= mlo_body(f_sreg(e_cmd), f_rows(e_cmd), e_pnext);
                                else e_pv <= 1'b0;
                                e_pword <= e_pword + 32'd1;
                            end
                        end else if (!e_pv && e_pavail) begin
                            e_pdata <= (e_pword == 32'd0) ? mlo_header(e_cmd[30:24], e_cmd[47:40])
                                                          : mlo_body(f_sreg(e_cmd), f_rows(e_cmd), e_pword);
                            e_pv <= 1'b1;
                        end
                    end
                    if (e_idone && e_left == 32'd0 && (!e_cmd[21] || e_pdone || e_ferr)) begin
                        if (e_ferr) begin
                            raise_fault(F_FRAME, e_cmd);                // the packet is consumed all the same
                            rd_seq <= rd_seq + 32'd1;
                            e_st <= E_FAULT;
                        end else begin
                            cnt_merge <= cnt_merge + 32'd1;
                            cnt_pop <= cnt_pop + 32'd1;
                            complete(e_cmd);
                        end
                    end
                end
                E_BUSY: if (e_left <= 32'd1) begin
                    if (f_opc(e_cmd) == OP_MERGE) begin
                        cnt_merge <= cnt_merge + 32'd1;
                        complete(e_cmd);
                    end else begin                                // NORM_STORE: write the words
                        e_word <= 32'd0;
                        e_st <= E_STORE;
                    end
                end else e_left <= e_left - 32'd1;
                E_STORE: begin
                    for (t = 0; t < 32; t = t + 1)
                        sl_wr_data[16*t +: 16] <= obuf[e_word * 32 + t];
                    sl_wr_en <= 1'b1;
                    sl_wr_addr <= 18'(32'(e_cmd[55:38]) + e_word);
                    if (e_word + 32'd1 == 32'(rows_bytes(f_rows(e_cmd))) / 64) begin
                        cnt_store <= cnt_store + 32'd1;
                        complete(e_cmd);
                    end else e_word <= e_word + 32'd1;
                end
                E_FAULT: ;                                        // until fault_clr (below)
                default: e_st <= E_IDLE;
            endcase
            if (fault_clr && fault_code != F_NONE) begin          // FAULT cleared: every queue resumes
                fault_code <= F_NONE;
                fault_tag <= 8'd0;
                if (e_st == E_FAULT) e_st <= E_IDLE;
            end
        end
    end
    /* verilator lint_on BLKSEQ */

    // ---------------------------------------------------------------- monitors
    initial mon_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            if (!pf_ok && !mon_err)
                $display("ERROR %m t=%0t: prefetch=%0d is outside 1..%0d (PREFETCH, the tile slots built)",
                         $time, prefetch, PREFETCH);
            if (!pf_ok) mon_err <= 1'b1;
            if (cmd_valid && !cmd_ready) begin
                $display("ERROR %m t=%0t: command written while the queue is full (%0d entries): 0x%h dropped",
                         $time, CMDQ_DEPTH, cmd_data);
                mon_err <= 1'b1;
            end
            if (dma_out_valid && dma_out_buf != BUF_Q && (dma_out_buf >= 4'd15 || 32'(dma_out_buf) % 5 >= {29'd0, nslot})) begin
                $display("ERROR %m t=%0t: DMA word for buffer %0d, which no tile slot uses", $time, dma_out_buf);
                mon_err <= 1'b1;
            end
        end
    end

endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
