// The PE's composite engine (docs/ahbm.md §2-§3): it runs the head of the main queue, one command at a
// time, and owns what it computes on: the tile buffers the DMA fills (Q slots Q0..Q3, the K / V / mask
// tile slots), the carried state sets S0..S7 and the staging of the arithmetic (pe_arith.vh). Commands:
// ATTN_TILE as one unit (S2, S3+S4, S6, and with PUSH_EN the tail push of its (m,l,O) packet), LOAD_Q
// (waits for its load), IPCQ_POP, MERGE (from a state set, or streamed from the queue of DIR as the
// child's packet arrives, with PUSH_EN pushing the merged state behind it), NORM_STORE, IPCQ_PUSH, NOP.
// Separate from the queue, the front-end and the link engines, which it meets at the head entry, the
// slot flags and the IPCQ ports it borrows from the link engines (push_sel / pop_sel pass through them).
//
// Behavioural model. The arithmetic of a stage is computed at the clock edge the stage starts, with the
// fp32 functions of fp32_lib.vh in exactly the order of models/ahbm/attention.py (bit for bit); the stage
// then occupies its unit for a modelled number of cycles (docs/ahbm.md §3, "timing model"):
//   MM  stage (S2, S6):  ceil(ROWS*KEYS*D / MM_MACS)
//   VEC stage (S3+S4):   [MASK_EN] v(ROWS*KEYS) + 3 v(ROWS*KEYS) + v(ROWS*D),
//                        v(n) = ceil(n / VEC_LANES)
//   MERGE:               2 v(ROWS*D) + v(ROWS)
//   streamed MERGE:      a word of k O elements holds the VEC ceil(k / (VEC_LANES / 2)) cycles (at least
//                        one), the word completing the rows' m and l v(ROWS) more
//   NORM_STORE:          v(ROWS*D), then one slice word written per cycle
//   push / pop:          one IPCQ word per cycle, with backpressure.
// The compute stages of one command run in order and one command computes at a time; the DMA front-end
// (pe_front) runs ahead of them, so DMA overlaps compute.
//
// Structure: one combinational block decides the cycle (the next state, the events the other modules
// count or act on, the datapath actions), one clocked process holds the state, and one (the datapath)
// stores the DMA words and then runs the actions on the arrays, in that order and with blocking writes
// as the single process of the former pe_core did (a stage starting at an edge reads the words landing
// at it; the arithmetic's blocking temporaries and the fp32 functions' static frames stay in one process).
//
// Monitor (reset-guarded, sticky mon_err, an ERROR line): a tile slot's K (or, in S6's MM stage, V) data
// flag fell while the engine computed from that slot (the front-end MUST NOT give a slot again before the
// engine frees it).
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_engine #(
    parameter integer PE_ID     = 0,
    parameter integer D         = 128,       // head dim, a multiple of 32, <= 128
    parameter integer MAXROWS   = 64,        // rows per command, <= 64
    parameter integer MAXKEYS   = 128,       // keys per tile, <= 128
    parameter integer PREFETCH  = 2,         // tile slots built: PREFETCH + 1
    parameter integer MM_MACS   = 512,       // MACs per cycle of the MM unit
    parameter integer VEC_LANES = 16,        // elements per cycle of the VEC unit
    parameter integer IPCQ_W    = 64,        // IPCQ word width: 64, 128, 256 or 512
    parameter integer ADDR_SHIFT = 0,        // address fields in bytes (0) or 64-byte words (6): pe_addr.vh
    parameter [31:0]  SCALE     = 32'h3DB504F3  // fp32(1/sqrt(D))
) (
    input  wire         clk,
    input  wire         resetn,
    // the head of the main queue (pe_cmdq, pe_front)
    input  wire         head_valid,
    input  wire [127:0] head_cmd,
    input  wire [7:0]   head_fault,     // its static fault code
    input  wire         head_ok,        // its tile slot given, its loads issued
    input  wire [2:0]   head_slot,
    output wire         deq,            // the head is retired (completed or dropped)
    input  wire [4:0]   k_rdy,          // tile slot / Q slot data landed
    input  wire [4:0]   v_rdy,
    input  wire [4:0]   m_rdy,
    input  wire [3:0]   q_rdy,
    output wire         slot_free,      // the head's tile slot is free again
    // FAULT (pe_fault)
    input  wire         halt,
    input  wire         fault_clear,
    output wire         fault_req,      // the head is dropped with this code
    output reg  [7:0]   fault_code,
    output wire [7:0]   fault_tag,
    // DMA words (their destination decoded by pe_front)
    input  wire         dma_out_valid,
    input  wire [511:0] dma_out_data,
    input  wire [17:0]  dma_out_idx,
    input  wire         in_k,
    input  wire         in_v,
    input  wire         in_q,
    input  wire [2:0]   in_slot,
    // IPCQ: the engine's use of the ports (through the link engines) and the queues' state
    input  wire [3:0]   push_ready,
    input  wire         tx_act,         // the TX link engine holds the push port
    output wire [3:0]   push_sel,
    output reg  [IPCQ_W-1:0] push_data,
    output wire [3:0]   push_last,
    output wire         holds_push,     // the engine holds the push port: the TX engine starts nothing
    input  wire [3:0]   pop_valid,
    input  wire [3:0]   pop_last,
    input  wire [3:0]   pop_avail,
    input  wire [4*IPCQ_W-1:0] pop_data, // the four directions' words, N (0) lowest
    input  wire         rx_act,
    output wire [3:0]   pop_sel,
    output wire         holds_pop,
    output reg  [63:0]  pop_info,
    // slice write port (NORM_STORE)
    output reg          sl_wr_en,
    output reg  [23:0]  sl_wr_addr,
    output reg  [511:0] sl_wr_data,
    // report (pe_stats)
    output reg  [3:0]   e_st,
    output wire         e_idle,
    output wire         done,           // a command completed
    output wire [7:0]   done_tag,
    output wire         ev_s2,          // a composite's S2 / S6 starts
    output wire [15:0]  s2_elems,       // ... with ROWS x KEYS score elements (valid with ev_s2)
    output wire         ev_s6,
    output wire         ev_comp,        // a composite, a push, a pop, a MERGE, a NORM_STORE completed
    output wire         ev_push,
    output wire         ev_pop,
    output wire         ev_merge,
    output wire         ev_store,
    output wire         act_busy,
    output wire         act_mm,
    output wire         act_vec,
    output wire         act_wait,
    output wire         act_mwait,
    output wire         act_compute,
    output wire [2:0]   act_class,
    output reg          mon_err
);
    initial begin
        if (D < 32 || D > 128 || D % 32 != 0 || MAXROWS < 1 || MAXROWS > 64 || MAXKEYS < 1 || MAXKEYS > 128
            || PREFETCH < 1 || PREFETCH > 4 || MM_MACS < 1 || VEC_LANES < 1
            || (IPCQ_W != 64 && IPCQ_W != 128 && IPCQ_W != 256 && IPCQ_W != 512))
            $fatal(1, "pe_engine %m: D=%0d MAXROWS=%0d MAXKEYS=%0d PREFETCH=%0d MM_MACS=%0d VEC_LANES=%0d IPCQ_W=%0d: need D a multiple of 32 in 32..128, MAXROWS 1..64, MAXKEYS 1..128, PREFETCH 1..4, MM_MACS and VEC_LANES >= 1, IPCQ_W 64, 128, 256 or 512",
                   D, MAXROWS, MAXKEYS, PREFETCH, MM_MACS, VEC_LANES, IPCQ_W);
    end
`include "fp32_lib.vh"
`include "pe_cmd.vh"
`include "pe_sizes.vh"
`include "pe_addr.vh"

    // ---------------------------------------------------------------- constants
    localparam integer NSLOT = PREFETCH + 1;
    localparam [31:0] NEG_INF = 32'hFF800000;
    localparam [7:0]  KIND_MLO = 8'h01;
    localparam integer SLOT_K = MAXKEYS * D;        // elements per K / V slot
    localparam integer SLOT_M = MAXROWS * 128;      // elements per mask slot (row stride <= 128)
    localparam integer EPW = IPCQ_W / 32;           // fp32 elements per IPCQ word ((m,l,O) packets)
    localparam integer WORD_BYTES = 64;             // a slice word (a DMA word, a NORM_STORE word)
    localparam integer WORD_BF16 = WORD_BYTES / 2;
    // timing model (header): VEC passes of S3+S4 over the scores besides the mask add (row max, exp and
    // its sum, the probabilities), of MERGE over O (both sides scaled), and O elements a streamed MERGE's
    // VEC merges per cycle (two multiplies and an add each)
    localparam integer S4_PASSES = 3;
    localparam integer MERGE_PASSES = 2;
    localparam integer MLANES = (VEC_LANES >= 2) ? VEC_LANES / 2 : 1;

    // ---------------------------------------------------------------- storage
    reg  [15:0]  qbuf [0:4*MAXROWS*D-1];      // Q slots Q0..Q3, bf16
    reg  [15:0]  kbuf [0:NSLOT*SLOT_K-1];     // K tile slots, bf16
    reg  [15:0]  vbuf [0:NSLOT*SLOT_K-1];     // V tile slots, bf16
    reg  [15:0]  mbuf [0:NSLOT*SLOT_M-1];     // mask tile slots, bf16
    reg  [31:0]  st_m [0:8*MAXROWS-1];        // carried state sets S0..S7 (read by the bench through the hierarchy)
    reg  [31:0]  st_l [0:8*MAXROWS-1];
    reg  [31:0]  st_o [0:8*MAXROWS*D-1];
    reg  [31:0]  sp   [0:MAXROWS*MAXKEYS-1];  // scores S, then probabilities P, of the computing tile
    reg  [31:0]  tf   [0:MAXKEYS*D-1];        // the K (S2) or V (S6) tile widened to fp32 once per tile
    reg  [31:0]  qf   [0:D-1];                // one Q row widened to fp32
    reg  [15:0]  obuf [0:MAXROWS*D-1];        // NORM_STORE staging, bf16
    reg  [31:0]  mb   [0:MAXROWS-1];          // streamed MERGE: the child's m, l of each row (until the
    reg  [31:0]  lb   [0:MAXROWS-1];          // row scales are known), exp(m_a - m) and exp(m_b - m)
    reg  [31:0]  mea  [0:MAXROWS-1];
    reg  [31:0]  meb  [0:MAXROWS-1];

    // ---------------------------------------------------------------- timing, (m,l,O) packets
    function [31:0] ceil_div(input [31:0] n, input [31:0] k);
        ceil_div = (n + k - 32'd1) / k;
    endfunction
    function [31:0] vcyc(input [31:0] n);
        vcyc = ceil_div(n, VEC_LANES);
    endfunction
    function [31:0] mm_cycles(input [7:0] rows, input [8:0] keys);
        mm_cycles = ceil_div(32'(rows) * 32'(keys) * 32'(D), MM_MACS);
    endfunction
    function [15:0] mlo_len(input [7:0] rows);      // body words of an (m,l,O) packet
        mlo_len = 16'((32'(rows) * 32'(2 + D) + 32'(EPW - 1)) / 32'(EPW));
    endfunction
    // header word of an (m,l,O) packet (docs/ahbm.md §6): the fields in [63:0], the rest zero
    function [IPCQ_W-1:0] mlo_header(input [6:0] rows_m1, input [7:0] push_tag);
        begin
            mlo_header = {IPCQ_W{1'b0}};
            mlo_header[63:0] = {16'd0, push_tag, 1'b0, rows_m1, 8'(PE_ID), KIND_MLO, mlo_len({1'b0, rows_m1} + 8'd1)};
        end
    endfunction
    // an (m,l,O) header that does not frame `rows` rows: KIND not 0x01 or LEN not mlo_len(rows)
    function bad_mlo_header(input [23:0] h, input [7:0] rows);   // {KIND, LEN} of the header
        bad_mlo_header = (h[23:16] != KIND_MLO) || (h[15:0] != mlo_len(rows));
    endfunction

`include "pe_arith.vh"

    // ---------------------------------------------------------------- state
    localparam [3:0] E_IDLE = 4'd0, E_WAIT_Q = 4'd1, E_WAIT_K = 4'd2, E_MM1 = 4'd3, E_WAIT_M = 4'd4,
                     E_VEC = 4'd5, E_WAIT_V = 4'd6, E_MM2 = 4'd7, E_PUSH = 4'd8, E_POP = 4'd9,
                     E_BUSY = 4'd10, E_STORE = 4'd11, E_FAULT = 4'd12, E_SMERGE = 4'd13;
    reg [127:0] e_cmd;
    reg [31:0]  e_left;      // cycles left in a timed stage / words left in a stream: counts down by itself
    reg         e_lz;        // e_left == 0, and e_left <= 1, registered beside it: the decision below reads
    reg         e_le1;       // these two, so a countdown does not re-evaluate it at every cycle
    reg [31:0]  e_word;      // word index of a push / pop / store stream
    // the stream flags, one register (the decision below copies them with one load and one store):
    localparam integer FL_FERR = 0;     // pop framing error seen
    // streamed MERGE (docs/ahbm.md §3, "the reduction"): the child's packet is merged word by word as
    // it arrives, and with PUSH_EN the merged state is pushed to PDIR word by word behind the merge
    localparam integer FL_IDONE = 1;    // the input packet's last word was taken
    localparam integer FL_XDONE = 2;    // every row's m and l have arrived: m, l merged, the row scales known
    localparam integer FL_PV = 3;       // a word of the output packet is on the push port
    localparam integer FL_PDONE = 4;    // the output packet's last word was taken
    reg  [4:0]  e_fl;
    wire        e_ferr = e_fl[FL_FERR], e_idone = e_fl[FL_IDONE], e_xdone = e_fl[FL_XDONE], e_pv = e_fl[FL_PV],
                e_pdone = e_fl[FL_PDONE];
    reg [31:0]  e_pword;     // index of the output word on the port (or the next to load), 0 = header

    wire [127:0] x_cmd = (e_st == E_IDLE) ? head_cmd : e_cmd;   // the command this cycle works on
    wire [7:0]  rows = f_rows(x_cmd);
    wire [8:0]  keys = f_keys(x_cmd);
    assign s2_elems = 16'(32'(rows) * 32'(keys));
    wire [1:0]  e_dir = f_dir(e_cmd);
    wire        e_smerge = (e_st == E_SMERGE);
    wire        e_spush = e_smerge && e_cmd[21];          // a streamed MERGE that pushes its result
    wire [1:0]  e_pdir = e_smerge ? e_cmd[33:32] : e_dir;  // the engine's push direction
    wire [IPCQ_W-1:0] pop_word = pop_data[IPCQ_W * e_dir +: IPCQ_W];

    // one packet at a time per port: a link engine that holds a port keeps it to the packet's end
    // (a streamed MERGE holds its pop port from its start and, with PUSH_EN, its push port too)
    wire [31:0] e_mlen = 32'(mlo_len(f_rows(e_cmd)));
    wire [31:0] e_pidx = e_smerge ? e_pword : e_word;     // index of the word on the engine's push port
    wire e_push_go = ((e_st == E_PUSH) || (e_spush && e_pv)) && !tx_act;
    wire e_pop_go  = ((e_st == E_POP) || (e_smerge && e_lz && !e_idone)) && !rx_act;
    wire push_take = e_push_go && push_ready[e_pdir];
    wire pop_take = e_pop_go && pop_valid[e_dir];
    assign holds_push = (e_st == E_PUSH) || e_spush;
    assign holds_pop  = (e_st == E_POP) || e_smerge;
    assign push_sel  = e_push_go ? (4'd1 << e_pdir) : 4'd0;
    assign push_last = (e_push_go && e_pidx == e_mlen) ? (4'd1 << e_pdir) : 4'd0;
    assign pop_sel   = e_pop_go ? ((4'd1 << e_dir) & pop_valid) : 4'd0;
    // output word j (0 = header) of a streamed MERGE can go on the port: the header once the input header
    // checked, a body word once the input word j is merged (the layouts are the same) and the rows' m, l too
    wire [31:0] e_pnext = e_pv ? e_pword + 32'd1 : e_pword;
    wire e_pavail = !e_ferr && ((e_pnext == 32'd0) ? (e_word >= 32'd1) : (e_word > e_pnext && e_xdone));

    // activity (pe_stats)
    assign act_wait = (e_st == E_WAIT_Q && !(head_ok && q_rdy[f_qreg(e_cmd)])) || (e_st == E_WAIT_K && !(head_ok && k_rdy[head_slot]))
                  || (e_st == E_WAIT_M && !m_rdy[head_slot]) || (e_st == E_WAIT_V && !v_rdy[head_slot]);
    assign act_class = (e_st == E_WAIT_Q || e_st == E_WAIT_K || e_st == E_WAIT_M || e_st == E_WAIT_V) ? 3'd1
                     : (e_st == E_MM1 || e_st == E_MM2) ? 3'd2
                     : (e_st == E_VEC) ? 3'd3
                     : (e_st == E_PUSH) ? 3'd4
                     : (e_st == E_POP) ? 3'd5
                     : (e_smerge || (e_st == E_BUSY && f_opc(e_cmd) == OP_MERGE)) ? 3'd6
                     : (e_st == E_BUSY || e_st == E_STORE) ? 3'd7 : 3'd0;
    assign act_compute = (e_st == E_MM1) || (e_st == E_MM2) || (e_st == E_VEC) || (e_st == E_BUSY)
                      || (e_smerge && (!e_lz || pop_take));
    assign e_idle = (e_st == E_IDLE);
    assign act_busy = (e_st != E_IDLE) && (e_st != E_FAULT);
    assign act_mm = (e_st == E_MM1) || (e_st == E_MM2);
    assign act_vec = (e_st == E_VEC) || (e_st == E_BUSY) || (e_smerge && act_compute);
    assign act_mwait = e_smerge && e_lz && !e_idone && !pop_take;

    // ---------------------------------------------------------------- this cycle's decision
    // Its one-bit results are the bits of one vector, dv, cleared by one store at each evaluation: Icarus
    // casts the signal at each store or load a process makes (a dynamic_cast, some 500 instructions, where
    // the operation itself is a few dozen), and the decision runs at each change of a busy PE's state.
    localparam integer D_LOAD = 0;      // e_cmd takes the head
    localparam integer D_LDLEFT = 1;    // e_left takes left_n (else it counts down to 0 by itself)
    localparam integer D_DONE = 2, D_FAULT = 3, D_FREE = 4;                         // done, fault_req, slot_free
    localparam integer D_S2 = 5, D_S6 = 6, D_COMP = 7, D_PUSH = 8, D_POP = 9, D_MERGE = 10, D_STORE = 11;  // ev_*
    localparam integer D_PKTEND = 12, D_PKTBAD = 13;   // E_POP / E_SMERGE: the packet ended, and it did not frame
    localparam integer A_INIT = 14, A_S2 = 15, A_S34 = 16, A_S6 = 17, A_MERGE = 18, A_NORM = 19,   // datapath
                       A_INFO = 20, A_TAKE = 21, A_HDR = 22, A_BODY = 23, A_STORE = 24;
    localparam integer DV_W = 25;
    reg  [DV_W-1:0] dv;
    reg  [3:0]  st_n;
    reg  [31:0] left_n, word_n, pword_n;
    reg  [4:0]  fl_n;
    wire        load = dv[D_LOAD], ld_left = dv[D_LDLEFT];
    assign done = dv[D_DONE];
    assign fault_req = dv[D_FAULT];
    assign slot_free = dv[D_FREE];
    assign ev_s2 = dv[D_S2];
    assign ev_s6 = dv[D_S6];
    assign ev_comp = dv[D_COMP];
    assign ev_push = dv[D_PUSH];
    assign ev_pop = dv[D_POP];
    assign ev_merge = dv[D_MERGE];
    assign ev_store = dv[D_STORE];
    wire        a_init = dv[A_INIT], a_s2 = dv[A_S2], a_s34 = dv[A_S34], a_s6 = dv[A_S6], a_merge = dv[A_MERGE],
                a_norm = dv[A_NORM], a_info = dv[A_INFO], a_take = dv[A_TAKE], a_hdr = dv[A_HDR], a_body = dv[A_BODY],
                a_store = dv[A_STORE];
    wire        a_any = |dv[A_STORE:A_INIT];
    reg  [7:0]  hdr_tag;             // a_hdr: the header's tag
    reg  [31:0] body_j;              // a_body: the body word
    // a streamed MERGE's input body word e_word (elements EPW (e_word - 1) ..): how many of its elements are O's
    // (the body is m, l, then O: [2 ROWS, 2 ROWS + ROWS D)), whether it holds the rows' last l (so completes
    // their m and l), and so how long the VEC holds it: ceil(n_o / MLANES) cycles (at least one), the row
    // scales v(ROWS) more. Continuous assignments, evaluated once a word, not a loop in the decision.
    wire [31:0] sm_e0 = 32'(EPW) * (e_word - 32'd1);
    wire [31:0] sm_r2 = 2 * 32'(rows);
    wire [31:0] sm_oend = sm_r2 + 32'(rows) * D;
    wire [31:0] sm_lo = (sm_e0 > sm_r2) ? sm_e0 : sm_r2;
    wire [31:0] sm_hi = (sm_e0 + 32'(EPW) < sm_oend) ? sm_e0 + 32'(EPW) : sm_oend;
    wire [31:0] sm_n_o = (sm_hi > sm_lo) ? sm_hi - sm_lo : 32'd0;
    wire        sm_x_now = (sm_r2 - 32'd1 >= sm_e0) && (sm_r2 - 32'd1 < sm_e0 + 32'(EPW));
    wire [31:0] sm_left = ((sm_n_o == 32'd0) ? 32'd0 : ceil_div(sm_n_o, MLANES) - 32'd1)
                          + (sm_x_now ? vcyc(32'(rows)) : 32'd0);
    assign deq = done || fault_req;
    assign done_tag = f_tag(x_cmd);
    assign fault_tag = f_tag(x_cmd);

    always @* begin
        st_n = e_st; dv = {DV_W{1'b0}}; left_n = 32'd0; word_n = e_word; pword_n = e_pword; fl_n = e_fl;
        fault_code = F_NONE; hdr_tag = 8'd0; body_j = 32'd0;
        case (e_st)
            E_IDLE: if (head_valid && !halt) begin
                dv[D_LOAD] = 1'b1;
                word_n = 32'd0;
                fl_n[FL_FERR] = 1'b0;
                if (head_fault != F_NONE || (f_opc(x_cmd) == OP_POP && !pop_avail[f_dir(x_cmd)])
                    || (f_opc(x_cmd) == OP_MERGE && x_cmd[34] && !pop_valid[f_dir(x_cmd)])) begin
                    dv[D_FAULT] = 1'b1;                             // the faulting command is dropped
                    fault_code = (head_fault != F_NONE) ? head_fault : F_EMPTY;
                end else begin
                    case (f_opc(x_cmd))
                        OP_NOP: begin                              // INIT=1: reset S_SREG (a PE with no visible tile)
                            dv[A_INIT] = x_cmd[22];
                            dv[D_DONE] = 1'b1;
                        end
                        OP_LOADQ: st_n = E_WAIT_Q;
                        OP_ATTN: st_n = E_WAIT_K;
                        OP_POP: st_n = E_POP;
                        OP_MERGE: if (x_cmd[34]) begin               // streamed: from the queue of DIR
                            dv[D_LDLEFT] = 1'b1; fl_n[FL_IDONE] = 1'b0; fl_n[FL_XDONE] = 1'b0;   // left_n 0
                            fl_n[FL_PV] = 1'b0; fl_n[FL_PDONE] = 1'b0; pword_n = 32'd0;
                            st_n = E_SMERGE;
                        end else begin
                            dv[A_MERGE] = 1'b1;
                            dv[D_LDLEFT] = 1'b1;
                            left_n = MERGE_PASSES * vcyc(32'(rows) * D) + vcyc(32'(rows));
                            st_n = E_BUSY;
                        end
                        OP_PUSH: begin
                            dv[A_HDR] = 1'b1;
                            hdr_tag = x_cmd[39:32];
                            st_n = E_PUSH;
                        end
                        OP_STORE: begin
                            dv[A_NORM] = 1'b1;
                            dv[D_LDLEFT] = 1'b1;
                            left_n = vcyc(32'(rows) * D);
                            st_n = E_BUSY;
                        end
                        default: dv[D_DONE] = 1'b1;
                    endcase
                end
            end
            E_WAIT_Q: if (head_ok && q_rdy[f_qreg(e_cmd)]) dv[D_DONE] = 1'b1;
            E_WAIT_K: if (head_ok && k_rdy[head_slot]) begin
                dv[D_S2] = 1'b1;
                dv[A_INIT] = e_cmd[22];
                dv[A_S2] = 1'b1;
                dv[D_LDLEFT] = 1'b1;
                left_n = mm_cycles(rows, keys);
                st_n = E_MM1;
            end
            E_MM1: if (e_le1) st_n = e_cmd[20] ? E_WAIT_M : E_VEC;
            E_WAIT_M: if (m_rdy[head_slot]) st_n = E_VEC;
            E_VEC: begin
                if (e_word == 32'd0) begin                   // first cycle: compute, set the duration
                    dv[A_S34] = 1'b1;
                    dv[D_LDLEFT] = 1'b1;
                    left_n = (e_cmd[20] ? vcyc(32'(rows) * 32'(keys)) : 32'd0)
                             + S4_PASSES * vcyc(32'(rows) * 32'(keys)) + vcyc(32'(rows) * D) - 32'd1;
                    word_n = 32'd1;
                end else if (e_lz) begin
                    word_n = 32'd0;
                    st_n = E_WAIT_V;
                end
            end
            E_WAIT_V: if (v_rdy[head_slot]) begin
                dv[D_S6] = 1'b1;
                dv[A_S6] = 1'b1;
                dv[D_LDLEFT] = 1'b1;
                left_n = mm_cycles(rows, keys);
                st_n = E_MM2;
            end
            E_MM2: if (e_le1) begin
                dv[D_FREE] = 1'b1;                       // the tile buffers are free again
                dv[D_COMP] = 1'b1;
                if (e_cmd[21]) begin
                    dv[A_HDR] = 1'b1;
                    hdr_tag = e_cmd[127:120];
                    st_n = E_PUSH;
                end else dv[D_DONE] = 1'b1;
            end
            E_PUSH: if (push_take) begin
                if (e_word == e_mlen) begin
                    dv[D_PUSH] = 1'b1;
                    dv[D_DONE] = 1'b1;
                end else begin
                    dv[A_BODY] = 1'b1;
                    body_j = e_word + 32'd1;
                    word_n = e_word + 32'd1;
                end
            end
            E_POP: if (pop_take) begin
                if (e_word == 32'd0) begin
                    dv[A_INFO] = 1'b1;
                    if (bad_mlo_header(pop_word[23:0], rows)) fl_n[FL_FERR] = 1'b1;
                end else if (!e_ferr) dv[A_TAKE] = 1'b1;
                word_n = e_word + 32'd1;
                if (pop_last[e_dir]) begin
                    dv[D_PKTEND] = 1'b1;
                    dv[D_PKTBAD] = e_ferr || (e_word == 32'd0 && bad_mlo_header(pop_word[23:0], rows)) || e_word != e_mlen;
                end
            end
            E_SMERGE: begin
                // input: the next word of the child's packet, when one is queued and the VEC is free
                if (e_lz && pop_take) begin
                    if (e_word == 32'd0) begin
                        dv[A_INFO] = 1'b1;
                        if (bad_mlo_header(pop_word[23:0], rows)) fl_n[FL_FERR] = 1'b1;
                    end else if (!e_ferr) begin
                        dv[A_TAKE] = 1'b1;
                        left_n = sm_left;
                        if (sm_x_now) fl_n[FL_XDONE] = 1'b1;
                    end
                    dv[D_LDLEFT] = 1'b1;                         // the header, or a word after a framing error: 0
                    word_n = e_word + 32'd1;
                    if (pop_last[e_dir]) begin
                        fl_n[FL_IDONE] = 1'b1;
                        if (e_word != e_mlen) fl_n[FL_FERR] = 1'b1;
                    end
                end
                // output (PUSH_EN): the merged state to PDIR, each word as soon as it is final
                if (e_cmd[21] && !e_pdone) begin
                    if (e_pv && push_take) begin                 // the word was taken
                        if (e_pword == e_mlen) begin
                            fl_n[FL_PV] = 1'b0;
                            fl_n[FL_PDONE] = 1'b1;
                            dv[D_PUSH] = 1'b1;
                        end else begin
                            if (e_pavail) begin
                                dv[A_BODY] = 1'b1;
                                body_j = e_pnext;
                            end else fl_n[FL_PV] = 1'b0;
                            pword_n = e_pword + 32'd1;
                        end
                    end else if (!e_pv && e_pavail) begin
                        if (e_pword == 32'd0) begin
                            dv[A_HDR] = 1'b1;
                            hdr_tag = e_cmd[47:40];
                        end else begin
                            dv[A_BODY] = 1'b1;
                            body_j = e_pword;
                        end
                        fl_n[FL_PV] = 1'b1;
                    end
                end
                if (e_idone && e_lz && (!e_cmd[21] || e_pdone || e_ferr)) begin
                    dv[D_PKTEND] = 1'b1;
                    dv[D_PKTBAD] = e_ferr;
                    dv[D_MERGE] = !e_ferr;
                end
            end
            E_BUSY: if (e_le1) begin
                if (f_opc(e_cmd) == OP_MERGE) begin
                    dv[D_MERGE] = 1'b1;
                    dv[D_DONE] = 1'b1;
                end else begin                                // NORM_STORE: write the words
                    word_n = 32'd0;
                    st_n = E_STORE;
                end
            end
            E_STORE: begin
                dv[A_STORE] = 1'b1;
                if (e_word + 32'd1 == 32'(rows_bytes(rows)) / WORD_BYTES) begin
                    dv[D_STORE] = 1'b1;
                    dv[D_DONE] = 1'b1;
                end else word_n = e_word + 32'd1;
            end
            E_FAULT: ;                                        // until fault_clr (below)
            default: st_n = E_IDLE;
        endcase
        if (dv[D_PKTEND]) begin                               // a popped or merged packet ended
            if (dv[D_PKTBAD]) begin
                dv[D_FAULT] = 1'b1;                        // the packet is consumed all the same
                fault_code = F_FRAME;
            end else begin
                dv[D_POP] = 1'b1;
                dv[D_DONE] = 1'b1;
            end
        end
        if (dv[D_DONE]) st_n = E_IDLE;
        if (dv[D_FAULT]) st_n = E_FAULT;
        if (fault_clear && e_st == E_FAULT) st_n = E_IDLE;   // FAULT cleared: every queue resumes
    end

    // ---------------------------------------------------------------- state
    // idle with no head, the combinational block keeps every value: nothing to do (each process's condition
    // a wire: its process loads one signal for it, not each term, at every test)
    wire st_go = !resetn || e_st != E_IDLE || head_valid;
    `AHBM_EDGE(clk, st_go) begin
        if (!resetn) begin
            e_st <= E_IDLE; e_cmd <= 128'd0; e_left <= 32'd0; e_lz <= 1'b1; e_le1 <= 1'b1; e_word <= 32'd0; e_fl <= 5'd0;
            e_pword <= 32'd0;
        end else begin
            e_st <= st_n;
            if (load) e_cmd <= head_cmd;
            // the countdown: a stage's duration loaded, else one less a cycle down to 0 (e_lz and e_le1 follow:
            // e_left - 1 is 0 where e_left <= 1, and <= 1 where e_left <= 2); at 0 it stays
            if (ld_left) begin
                e_left <= left_n;
                e_lz <= (left_n == 32'd0);
                e_le1 <= (left_n <= 32'd1);
            end else if (!e_lz) begin
                e_left <= e_left - 32'd1;
                e_lz <= e_le1;
                e_le1 <= (e_left <= 32'd2);
            end
            e_word <= word_n; e_fl <= fl_n; e_pword <= pword_n;
        end
    end `AHBM_EDGE_END

    // ---------------------------------------------------------------- datapath: the actions, in the order of a cycle
    /* verilator lint_off BLKSEQ */   // the arithmetic tasks use blocking temporaries (pe_arith.vh)
    wire dp_go = !resetn || sl_wr_en || dma_out_valid || a_any;     // a word lands, an action runs, a write ends
    `AHBM_EDGE(clk, dp_go) begin
        if (!resetn) begin
            push_data <= {IPCQ_W{1'b0}}; pop_info <= 64'd0;
            sl_wr_en <= 1'b0; sl_wr_addr <= 24'd0; sl_wr_data <= 512'd0;
        end else begin
            sl_wr_en <= 1'b0;
            if (dma_out_valid) begin      // DMA words into the tile buffers, first: what lands this edge is in
`ifdef AHBM_ARITH_VPI                     // the buffers for a stage starting at it (Icarus: the copy in C, pe_arith.vh)
                if (in_q) landed = $ahbm_land(qbuf, 32'(in_slot[1:0]) * MAXROWS * D + 32'(dma_out_idx) * WORD_BF16,
                                              dma_out_data);
                else if (in_k) landed = $ahbm_land(kbuf, 32'(in_slot) * SLOT_K + 32'(dma_out_idx) * WORD_BF16, dma_out_data);
                else if (in_v) landed = $ahbm_land(vbuf, 32'(in_slot) * SLOT_K + 32'(dma_out_idx) * WORD_BF16, dma_out_data);
                else landed = $ahbm_land(mbuf, 32'(in_slot) * SLOT_M + 32'(dma_out_idx) * WORD_BF16, dma_out_data);
                if (landed == 32'd0)
`endif
                for (t = 0; t < WORD_BF16; t = t + 1) begin
                    idx = 32'(dma_out_idx) * WORD_BF16 + t;
                    if (in_q) qbuf[32'(in_slot[1:0]) * MAXROWS * D + idx] = dma_out_data[16*t +: 16];
                    else if (in_k) kbuf[32'(in_slot) * SLOT_K + idx] = dma_out_data[16*t +: 16];
                    else if (in_v) vbuf[32'(in_slot) * SLOT_K + idx] = dma_out_data[16*t +: 16];
                    else mbuf[32'(in_slot) * SLOT_M + idx] = dma_out_data[16*t +: 16];
                end
            end
            if (dv[A_NORM:A_INIT] != 6'd0) begin   // a stage: once a command (one test here, not six, per word)
                if (a_init) do_init(f_sreg(x_cmd));
                if (a_s2) do_s2(f_qreg(x_cmd), head_slot, rows, keys);
                if (a_s34) do_s34(f_sreg(x_cmd), head_slot, rows, keys, x_cmd[20]);
                if (a_s6) do_s6(f_sreg(x_cmd), head_slot, rows, keys);
                if (a_merge) do_merge(f_sreg(x_cmd), f_sreg2(x_cmd), rows);
                if (a_norm) do_norm(f_sreg(x_cmd), rows);
            end
            if (a_info) pop_info <= pop_word[63:0];
            if (a_take) take_word(f_sreg(x_cmd), rows, e_word, pop_word, e_smerge);
            if (a_hdr) push_data <= mlo_header(x_cmd[30:24], hdr_tag);  // after a_take: a streamed MERGE
            if (a_body) push_data <= mlo_body(f_sreg(x_cmd), rows, body_j);  // pushes what it merged
            if (a_store) begin
                for (t = 0; t < WORD_BF16; t = t + 1)
                    sl_wr_data[16*t +: 16] <= obuf[e_word * WORD_BF16 + t];
                sl_wr_en <= 1'b1;
                sl_wr_addr <= 24'(32'(slice_word(x_cmd[55:32])) + e_word);
            end
        end
    end `AHBM_EDGE_END
    /* verilator lint_on BLKSEQ */

    // ---------------------------------------------------------------- monitor
    wire slot_lost = ((e_st == E_MM1 || e_st == E_WAIT_M || e_st == E_VEC || e_st == E_WAIT_V || e_st == E_MM2)
                      && !k_rdy[head_slot]) || (e_st == E_MM2 && !v_rdy[head_slot]);
    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, !resetn || slot_lost) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            $display("ERROR %m t=%0t: tile slot %0d was given again while the engine computed from it (k_rdy %b v_rdy %b)",
                     $time, head_slot, k_rdy, v_rdy);
            mon_err <= 1'b1;
        end
    end `AHBM_EDGE_END
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
