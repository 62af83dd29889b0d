// The PE's status, counters and logs (docs/ahbm.md §5, §12): `idle`, the completions (cmd_done, last_tag),
// `evt`, the cnt_* event counters, the cyc_* cycle counters, the activity log and the composite trace.
// Every input is an event or a state of this cycle from the module that owns it (the engine, the
// front-end, the link engines, the FAULT register); this module only counts and records them. Separate
// so that the engines carry no bookkeeping and every number the bench reads is kept in one place.
//
// evt toggles once in a cycle with any completion, packet end (TX / RX) or fault, however many there are.
//
// Activity log (read by the bench through the hierarchy: the per-PE timeline of tb/perf/ahbm_plots.py):
// entry i = {cyc_now, code} of the i-th change (mod ALOG) of code = {DMA moving words, engine class},
// class 0 idle, 1 waiting for DMA data, 2 MM, 3 VEC, 4 push, 5 pop, 6 merge, 7 store; alog_n changes.
// Composite trace (read by the bench through the hierarchy, tb/ahbm/pe_bench.py): entry i = composite
// i (mod TLOG), the cycles (cyc_now) of {K issued, K landed, V issued, V landed, S2 start, S6 start}.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_stats #(
    parameter integer ALOG = 4096       // activity log entries, a power of two >= 16 (a long launch needs more)
) (
    input  wire         clk,
    input  wire         resetn,
    // status
    input  wire         q_empty,        // the three command queues
    input  wire         e_idle,         // the engine (and tx_act / rx_act below: the link engines)
    output wire         idle,
    // events of this cycle
    input  wire         done,           // the engine completed a command
    input  wire [7:0]   done_tag,
    input  wire         raised,         // a fault was raised
    input  wire         tx_fin,         // a KV packet ended on the push / pop port
    input  wire         tx_ok,          // ... and it counts (RX: it framed)
    input  wire         rx_fin,
    input  wire         rx_ok,
    input  wire         iss_k,          // the front-end issued a K / mask / V / Q load
    input  wire         iss_mask,
    input  wire         iss_v,
    input  wire         iss_q,
    input  wire [2:0]   iss_slot,       // ... for this tile slot
    input  wire         dma_req_valid,
    input  wire         dma_out_valid,  // a DMA word lands,
    input  wire         dma_out_last,   // ... the last of its load
    input  wire         land_k,         // ... of a K / V load of slot land_slot
    input  wire         land_v,
    input  wire [2:0]   land_slot,
    input  wire         dma_xfer,       // the DMA moves words out of the slice
    input  wire         ev_s2,          // the engine: a composite's S2 starts
    input  wire         ev_s6,          // ... its S6 starts, on tile slot e_slot
    input  wire [15:0]  s2_elems,       // ... ROWS x KEYS of the composite whose S2 starts
    input  wire [2:0]   e_slot,
    input  wire         ev_comp,        // ... a composite completed, a packet pushed / popped,
    input  wire         ev_push,        //     a MERGE, a NORM_STORE completed
    input  wire         ev_pop,
    input  wire         ev_merge,
    input  wire         ev_store,
    // states of this cycle
    input  wire         act_busy,       // the engine holds a command
    input  wire         act_mm,         // the MM unit is busy
    input  wire         act_vec,        // the VEC unit is busy
    input  wire         act_wait,       // the engine waits for DMA data
    input  wire         act_mwait,      // a streamed MERGE waits for the child's next word
    input  wire         act_compute,    // MM or VEC work
    input  wire [2:0]   act_class,      // the engine's activity class (header)
    input  wire         tx_act,
    input  wire         rx_act,
    input  wire [3:0]   push_valid,
    input  wire [3:0]   push_ready,
    // outputs: pe_core's ports of the same names
    output reg  [31:0]  cmd_done,
    output reg  [7:0]   last_tag,
    output reg          evt,
    output reg  [31:0]  cnt_k, cnt_v, cnt_mask, cnt_q, cnt_comp, cnt_push, cnt_pop, cnt_merge, cnt_store,
    output reg  [31:0]  cnt_fault, cnt_tx, cnt_rx,
    output reg  [31:0]  cnt_score,      // score elements computed: ROWS x KEYS summed over S2s
    output reg  [31:0]  cyc_busy, cyc_mm, cyc_vec, cyc_wait, cyc_hidden, cyc_link, cyc_pstall, cyc_mwait,
    output reg  [31:0]  cyc_first, cyc_last, cyc_now, cyc_dma_first, cyc_dma_last
);
    initial begin
        if (ALOG < 16 || (ALOG & (ALOG - 1)) != 0)
            $fatal(1, "pe_stats %m: ALOG=%0d: need a power of two >= 16 (activity log entries)", ALOG);
    end
    localparam integer TLOG = 256;
    localparam integer SLOTS = 5;       // tile slots at the largest PREFETCH (4)

    assign idle = q_empty && e_idle && !tx_act && !rx_act;
    wire land = dma_out_valid && dma_out_last;
    // any event the event counters count: in the other cycles they change nothing
    wire any_ev = done || raised || tx_fin || rx_fin || tx_ok || rx_ok || iss_k || iss_mask || iss_v || iss_q
                  || ev_s2 || ev_comp || ev_push || ev_pop || ev_merge || ev_store;

    // ---------------------------------------------------------------- completions and event counters
    `AHBM_EDGE(clk, !resetn || any_ev) begin
        if (!resetn) begin
            cmd_done <= 32'd0; last_tag <= 8'd0; evt <= 1'b0;
            cnt_k <= 32'd0; cnt_v <= 32'd0; cnt_mask <= 32'd0; cnt_q <= 32'd0; cnt_comp <= 32'd0;
            cnt_push <= 32'd0; cnt_pop <= 32'd0; cnt_merge <= 32'd0; cnt_store <= 32'd0; cnt_fault <= 32'd0;
            cnt_score <= 32'd0;
            cnt_tx <= 32'd0; cnt_rx <= 32'd0;
        end else begin
            if (done) begin
                cmd_done <= cmd_done + 32'd1;
                last_tag <= done_tag;
            end
            if (done || raised || tx_fin || rx_fin) evt <= ~evt;
            if (raised) cnt_fault <= cnt_fault + 32'd1;
            if (tx_ok) cnt_tx <= cnt_tx + 32'd1;
            if (rx_ok) cnt_rx <= cnt_rx + 32'd1;
            if (iss_k) cnt_k <= cnt_k + 32'd1;
            if (iss_mask) cnt_mask <= cnt_mask + 32'd1;
            if (iss_v) cnt_v <= cnt_v + 32'd1;
            if (iss_q) cnt_q <= cnt_q + 32'd1;
            if (ev_comp) cnt_comp <= cnt_comp + 32'd1;
            if (ev_push) cnt_push <= cnt_push + 32'd1;
            if (ev_pop) cnt_pop <= cnt_pop + 32'd1;
            if (ev_merge) cnt_merge <= cnt_merge + 32'd1;
            if (ev_store) cnt_store <= cnt_store + 32'd1;
            if (ev_s2) cnt_score <= cnt_score + 32'(s2_elems);
        end
    end `AHBM_EDGE_END

    // ---------------------------------------------------------------- cycle counters
    // what each counter counts, as one vector, and the rarer marks as one flag: the process loads each once a
    // cycle (Icarus casts the signal at each load a process makes, some 500 instructions each)
    localparam integer C_BUSY = 0, C_MM = 1, C_VEC = 2, C_MWAIT = 3, C_WAIT = 4, C_HIDDEN = 5, C_LINK = 6, C_PSTALL = 7;
    wire [7:0] cact = {(push_valid & ~push_ready) != 4'd0, act_compute && (tx_act || rx_act), act_compute && dma_xfer,
                       act_wait, act_mwait, act_vec, act_mm, act_busy};
    wire       cmark = dma_req_valid || land || ev_s2 || ev_comp;   // a first / last cycle may be marked
    always @(posedge clk) begin
        if (!resetn) begin
            cyc_busy <= 32'd0; cyc_mm <= 32'd0; cyc_vec <= 32'd0; cyc_wait <= 32'd0; cyc_hidden <= 32'd0;
            cyc_link <= 32'd0; cyc_pstall <= 32'd0; cyc_mwait <= 32'd0;
            cyc_first <= 32'd0; cyc_last <= 32'd0; cyc_now <= 32'd0; cyc_dma_first <= 32'd0; cyc_dma_last <= 32'd0;
        end else begin
            cyc_now <= cyc_now + 32'd1;
            if (cact != 8'd0) begin
                if (cact[C_BUSY]) cyc_busy <= cyc_busy + 32'd1;
                if (cact[C_MM]) cyc_mm <= cyc_mm + 32'd1;
                if (cact[C_VEC]) cyc_vec <= cyc_vec + 32'd1;
                if (cact[C_MWAIT]) cyc_mwait <= cyc_mwait + 32'd1;
                if (cact[C_WAIT]) cyc_wait <= cyc_wait + 32'd1;
                if (cact[C_HIDDEN]) cyc_hidden <= cyc_hidden + 32'd1;
                if (cact[C_LINK]) cyc_link <= cyc_link + 32'd1;
                if (cact[C_PSTALL]) cyc_pstall <= cyc_pstall + 32'd1;
            end
            if (cmark) begin
                if (dma_req_valid && cnt_k + cnt_v + cnt_mask + cnt_q == 32'd0) cyc_dma_first <= cyc_now;
                if (land) cyc_dma_last <= cyc_now + 32'd1;
                if (ev_s2 && cnt_comp == 32'd0 && cyc_first == 32'd0) cyc_first <= cyc_now;
                if (ev_comp) cyc_last <= cyc_now + 32'd1;
            end
        end
    end

    // ---------------------------------------------------------------- activity log, composite trace
    /* verilator lint_off UNUSEDSIGNAL */  // read by the bench only
    reg  [35:0]  alog [0:ALOG-1];
    reg  [31:0]  alog_n;
    reg  [191:0] tlog [0:TLOG-1];
    /* verilator lint_on UNUSEDSIGNAL */
    reg  [3:0]   act_prev;
    reg  [31:0]  t_kiss [0:SLOTS-1];
    reg  [31:0]  t_viss [0:SLOTS-1];
    reg  [31:0]  t_kland [0:SLOTS-1];
    reg  [31:0]  t_vland [0:SLOTS-1];
    reg  [31:0]  t_s2;
    wire [3:0]   act = {dma_xfer, act_class};

    wire log_go = !resetn || act != act_prev || iss_k || iss_v || land || ev_s2 || ev_s6;   // one load per test
    `AHBM_EDGE(clk, log_go) begin
        if (!resetn) begin
            alog_n <= 32'd0;
            act_prev <= 4'd0;
        end else begin
            if (act != act_prev) begin
                alog[alog_n % ALOG] <= {cyc_now, act};
                alog_n <= alog_n + 32'd1;
                act_prev <= act;
            end
            if (iss_k) t_kiss[iss_slot] <= cyc_now;
            if (iss_v) t_viss[iss_slot] <= cyc_now;
            if (land && land_k) t_kland[land_slot] <= cyc_now;
            if (land && land_v) t_vland[land_slot] <= cyc_now;
            if (ev_s2) t_s2 <= cyc_now;
            if (ev_s6) tlog[cnt_comp % TLOG] <= {t_kiss[e_slot], t_kland[e_slot], t_viss[e_slot], t_vland[e_slot], t_s2, cyc_now};
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
