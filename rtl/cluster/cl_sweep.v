// The cluster's GEMM sweep and the array's timing: when each sub-tile command issues, and how long
// the array stays busy behind it, in the upstream cluster's cycles (KohakuTPU 7703ee8: the manager
// mx_cluster_mgr.v, the 4-TCU cascade mx_cluster_core.v, the accumulator mx_acu_fp.v, their wiring
// mx_cluster_node.v). Instantiated by cluster_cu.v, which owns L1 and the accumulator: this module
// says which command issues when (s1_*), cluster_cu applies it to the accumulator the next edge, and
// the delay lines here stand for the cascade and the accumulator stages the command then occupies.
//
// start (one cycle, the sequencer's gemm_start) latches the sweep: gm, gn, nk (0 read as 1 by the
// caller), aoff, boff, abank, bbank, acc, emit, anchor. The edge after start the sweep runs; from
// the next cycle one command issues per cycle (an issue edge I): K outermost, then g, then h; LOAD
// when kb == 0 && !acc, else ADD; every command of the last K block carries emit. Held (no issue,
// counters frozen) while `stall` (the drain queue's limit, cl_drain). Pacing: with nk > 1 and
// gm*gn < REUSE_MIN, after each issue the sweep idles ceil(REUSE_MIN / (gm*gn)) - 1 cycles
// (upstream's buckets: (1,1) one issue per 5 cycles, (1,2)/(2,1) per 3, (1,3)/(1,4)/(3,1)/(4,1)/(2,2)
// per 2), so one tile address recurs no sooner than REUSE_MIN cycles.
//
// Times (edge e ends cycle e; a command issues at edge I):
//   s1_*         hold the command in cycle I+1 (cluster_cu reads its L1 entries at edge I+1)
//   emit_issue   cycle I+ISSUE_LAT+1: the command reaches upstream's s2 stage (its drain credit)
//   X = I+SW_LEN (SW_LEN = ISSUE_LAT + CASCADE_LAT + 1): the cycle the command is at the
//                accumulator (upstream's part_valid); a DRAIN's or ADD_PEER's (`dcmd`) is there
//                the cycle after its issue edge
//   sweep_busy   running, or a command issued and not yet past the accumulator's input
//                (cycles I+1 .. I+SW_LEN)
//   gemm_busy    sweep_busy, or a command at the accumulator within ACU_STAGES cycles (X .. X +
//                ACU_STAGES), or REUSE_MIN cycles after that (upstream's busy tail)
// For G commands issued without pause, gemm_busy is low from G + 32 edges after the start edge
// (docs/cluster.md "Timing").
`default_nettype none
`timescale 1ns/1ps
module cl_sweep #(
    parameter integer ISSUE_LAT   = 2,   // issue to the operands at the cascade (mx_cluster_mgr.v: L1 read + s1b)
    parameter integer CASCADE_LAT = 17,  // operands to part_valid (mx_cluster_core.v: 11 + 2*(NTCU-1))
    parameter integer ACU_STAGES  = 6,   // command to the tile write (mx_acu_fp.v: v1 v1a v1b v2 v3 v4)
    parameter integer REUSE_MIN   = 5    // cycles between commands to one tile; busy tail (mx_acu_fp.v)
) (
    input  wire       clk,
    input  wire       resetn,
    input  wire       start,
    input  wire [8:0] gm,
    input  wire [8:0] gn,
    input  wire [8:0] nk,
    input  wire [7:0] aoff,
    input  wire [7:0] boff,
    input  wire       abank,
    input  wire       bbank,
    input  wire       acc,
    input  wire       emit,
    input  wire [7:0] anchor,
    input  wire       stall,
    input  wire       dcmd,          // a DRAIN or ADD_PEER command is at the accumulator this cycle
    output reg        s1_valid,
    output reg  [8:0] s1_ia,         // L1A entry {abank, offset}
    output reg  [8:0] s1_ib,         // L1B entry {bbank, offset}
    output reg  [7:0] s1_tile,
    output reg        s1_load,
    output reg        s1_emit,
    output reg  [7:0] s1_anchor,
    output wire       emit_issue,
    output wire       sweep_busy,
    output wire       gemm_busy
);
    localparam integer SW_LEN = ISSUE_LAT + CASCADE_LAT + 1;
    // widths that elaborate whatever the parameters, so a bad value reaches the $fatal below
    localparam integer SWW = (SW_LEN < 1) ? 1 : SW_LEN;
    localparam integer ILW = (ISSUE_LAT < 1) ? 1 : ISSUE_LAT;
    localparam integer ASW = (ACU_STAGES < 1) ? 1 : ACU_STAGES;
    initial begin
        if (ISSUE_LAT < 1 || CASCADE_LAT < 1 || ACU_STAGES < 1 || REUSE_MIN < 1 || REUSE_MIN > 15)
            $fatal(1, "cl_sweep %m: ISSUE_LAT=%0d CASCADE_LAT=%0d ACU_STAGES=%0d REUSE_MIN=%0d: need ISSUE_LAT, CASCADE_LAT, ACU_STAGES >= 1 and 1 <= REUSE_MIN <= 15 (the 4-bit pace and busy tail)",
                   ISSUE_LAT, CASCADE_LAT, ACU_STAGES, REUSE_MIN);
    end

    reg        run;
    reg [7:0]  kb, g, h;
    reg [8:0]  r_gm, r_gn, r_nk;
    reg [7:0]  r_aoff, r_boff;
    reg        r_abank, r_bbank, r_acc, r_emit;
    reg [3:0]  pace, pace_n;

    wire [17:0] tiles  = gm * gn;
    wire [16:0] g_nk   = g * r_nk;
    wire [16:0] h_nk   = h * r_nk;
    wire [15:0] tile   = g * r_gn + {8'd0, h};
    wire        last_h  = ({1'b0, h} == r_gn - 9'd1);
    wire        last_g  = ({1'b0, g} == r_gm - 9'd1);
    wire        last_kb = ({1'b0, kb} == r_nk - 9'd1);
    wire [17:0] reuse   = REUSE_MIN[17:0];
    // idle cycles after each issue: none when one K block never revisits a tile or gm*gn >= REUSE_MIN
    wire [17:0] pace_w  = (nk <= 9'd1 || tiles >= reuse) ? 18'd0 : (reuse + tiles - 18'd1) / tiles - 18'd1;

    always @(posedge clk) begin
        if (!resetn) begin
            run <= 1'b0;
            s1_valid <= 1'b0;
            pace <= 4'd0;
            pace_n <= 4'd0;
        end else begin
            s1_valid <= 1'b0;
            if (start && !run) begin
                run <= 1'b1;
                r_gm <= gm; r_gn <= gn; r_nk <= nk;
                r_aoff <= aoff; r_boff <= boff;
                r_abank <= abank; r_bbank <= bbank;
                r_acc <= acc; r_emit <= emit;
                s1_anchor <= anchor;
                kb <= 8'd0; g <= 8'd0; h <= 8'd0;
                pace <= 4'd0;
                pace_n <= pace_w[3:0];
            end else if (run && !stall) begin
                if (pace != 4'd0) begin
                    pace <= pace - 4'd1;
                end else begin
                    s1_valid <= 1'b1;
                    s1_ia    <= {r_abank, r_aoff + g_nk[7:0] + kb};   // 8-bit offsets wrap within their bank
                    s1_ib    <= {r_bbank, r_boff + h_nk[7:0] + kb};
                    s1_tile  <= tile[7:0];
                    s1_load  <= kb == 8'd0 && !r_acc;
                    s1_emit  <= r_emit && last_kb;
                    pace     <= pace_n;
                    if (!last_h) begin
                        h <= h + 8'd1;
                    end else begin
                        h <= 8'd0;
                        if (!last_g) begin
                            g <= g + 8'd1;
                        end else begin
                            g <= 8'd0;
                            kb <= kb + 8'd1;
                            if (last_kb) run <= 1'b0;
                        end
                    end
                end
            end
        end
    end

    // ---------------- delay lines: bit k is the command issued k+1 edges ago
    reg [SWW-1:0] sw_sr;             // issued, not yet at the accumulator (upstream: s1, s1b, s2, pending)
    reg [ILW:0]   em_sr;             // emitting commands, to upstream's s2 stage
    reg [ASW-1:0] acu_sr;            // at the accumulator 1..ACU_STAGES cycles ago
    reg [3:0]            tail;       // REUSE_MIN after the last stage empties
    integer k;
    wire issue    = run && !stall && pace == 4'd0;
    wire acu_cmd  = sw_sr[SWW-1] || dcmd;
    wire acu_live = acu_cmd || (|acu_sr);
    always @(posedge clk) begin
        if (!resetn) begin
            sw_sr <= {SWW{1'b0}};
            em_sr <= {(ILW + 1){1'b0}};
            acu_sr <= {ASW{1'b0}};
            tail <= 4'd0;
        end else if (issue || dcmd || (|sw_sr) || (|em_sr) || acu_live || tail != 4'd0) begin
            // (idle, every line is empty and stays so: the block is skipped, which keeps an idle cluster cheap
            // to simulate)
            sw_sr[0]  <= issue;
            em_sr[0]  <= issue && r_emit && last_kb;
            acu_sr[0] <= acu_cmd;
            for (k = 1; k < SWW; k = k + 1)  sw_sr[k]  <= sw_sr[k-1];
            for (k = 1; k <= ILW; k = k + 1) em_sr[k]  <= em_sr[k-1];
            for (k = 1; k < ASW; k = k + 1)  acu_sr[k] <= acu_sr[k-1];
            if (acu_live)          tail <= REUSE_MIN[3:0];
            else if (tail != 4'd0) tail <= tail - 4'd1;
        end
    end
    assign emit_issue = em_sr[ILW];
    assign sweep_busy = run || (|sw_sr);
    assign gemm_busy  = sweep_busy || acu_live || tail != 4'd0;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, g_nk[16:8], h_nk[16:8], tile[15:8], pace_w[17:4]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
