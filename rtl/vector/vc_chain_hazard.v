// vc_chain_hazard: where upstream's chains could compute something else (units.md V.8 H2, H4).
//
// Our core runs each chain with its own stages and interlocks every register,
// so every result is the normative one; this block only tells the user where
// upstream's pipeline may not, with the rules of models/vector/chain_hazards.py
// (docs/vector_core.md "Hazards"). Since the last draining word of the RUN
// (`drain`: VSETMODE, VLD, VST, VCVT, VSHUF, VBCAST S->V; `clear` starts a RUN):
//   H2  a chain head issuing (`issue` with depth 2 or 4) whose stage 1..D-1
//       settings differ from the previous chain's (upstream shares one set of
//       stage registers). `stages` packs stage k (1..3) at [95*(k-1) +: 95] as
//       {op 5, sa sb sc 6, S/K register numbers 3 x 4, S/K values 3 x 24}.
//   H4  a word reading (`reads`, at `issue` or `vread`) a V register that a D4
//       chain at VL 113..128 wrote (`wide`, `dest`): upstream's 5-bit pending
//       count wraps at those 32 beats. The lowest such register is named.
// Each report prints one HAZARD line and counts in `count_h2` / `count_h4`.
`default_nettype none
`timescale 1ns/1ps
module vc_chain_hazard (
    input  wire         clk,
    input  wire         resetn,
    input  wire         clear,
    input  wire         drain,
    input  wire         issue,        // an ALU word or chain head issues (all stages gathered)
    input  wire [2:0]   depth,        // 1, 2 or 4
    input  wire [284:0] stages,
    input  wire         wide,         // the issuing chain is D4 at VL 113..128 and writes V[dest]
    input  wire [3:0]   dest,
    input  wire         vread,        // a non-ALU word that reads V without draining (VBCAST V->S)
    input  wire [15:0]  reads,        // the V registers the word at pc reads
    input  wire [8:0]   pc,
    input  wire [31:0]  word,
    output reg  [31:0]  count_h2,
    output reg  [31:0]  count_h4
);
    localparam integer STAGE_BITS = 95;

    reg         have_prev;
    reg [8:0]   prev_pc;
    reg [284:0] prev_stages;
    reg [15:0]  unguarded;
    reg [8:0]   chain_pc [0:15];

    // H2: which of stages 1..D-1 differ from the previous chain's
    wire [2:0] used = (depth == 3'd4) ? 3'b111 : (depth == 3'd2) ? 3'b001 : 3'b000;
    wire [2:0] differ;
    genvar g;
    generate
        for (g = 0; g < 3; g = g + 1) begin : g_stage
            assign differ[g] = used[g] &&
                               (stages[STAGE_BITS*g +: STAGE_BITS] != prev_stages[STAGE_BITS*g +: STAGE_BITS]);
        end
    endgenerate
    wire chained = (depth != 3'd1);
    wire h2 = issue && chained && have_prev && (differ != 3'd0);

    // H4: the lowest unguarded register the word reads
    wire [15:0] hit = reads & unguarded;
    wire        h4 = (issue || vread) && (hit != 16'd0);
    reg  [3:0]  hit_r;
    integer j;
    always @* begin
        hit_r = 4'd0;
        for (j = 15; j >= 0; j = j - 1)
            if (hit[j]) hit_r = j[3:0];
    end

    integer k;
    always @(posedge clk) begin
        if (!resetn) begin
            count_h2    <= 32'd0;
            count_h4    <= 32'd0;
            have_prev   <= 1'b0;
            prev_pc     <= 9'd0;
            prev_stages <= 285'd0;
            unguarded   <= 16'd0;
            for (k = 0; k < 16; k = k + 1) chain_pc[k] <= 9'd0;
        end else if (clear || drain) begin
            have_prev <= 1'b0;
            unguarded <= 16'd0;
        end else if (h2 || h4 || issue) begin
            if (h2) begin
                count_h2 <= count_h2 + 32'd1;
                $display("HAZARD H2 pc=%0d inst=%08h prev_pc=%0d depth=%0d stages=%0s%0s%0s (%m t=%0t)",
                         pc, word, prev_pc, depth, differ[0] ? "1" : "", differ[1] ? "2" : "",
                         differ[2] ? "3" : "", $time);
            end
            if (h4) begin
                count_h4 <= count_h4 + 32'd1;
                $display("HAZARD H4 pc=%0d inst=%08h v=%0d chain_pc=%0d (%m t=%0t)",
                         pc, word, hit_r, chain_pc[hit_r], $time);
            end
            if (issue && chained) begin
                have_prev   <= 1'b1;
                prev_pc     <= pc;
                prev_stages <= stages;
            end
            if (issue && wide) begin
                unguarded[dest] <= 1'b1;
                chain_pc[dest]  <= pc;
            end
        end
    end
endmodule
`default_nettype wire
