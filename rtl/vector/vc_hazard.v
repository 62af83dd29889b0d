// vc_hazard: where upstream hardware would read a stale predicate (units.md V.8 H1).
//
// Our core interlocks predicates (units.md, normative), so every result is
// the normative one; this block only tells the user where the upstream
// pipeline would have computed something else, with the same rule as
// models/vector/hazards.py (docs/vector_core.md "Hazards"):
//   per predicate register, since the last compare that wrote it in this RUN:
//   no read hazard once a draining instruction (VSETMODE, VHALT, VLD, VST,
//   VCVT, VSHUF, VBCAST) or two instructions have issued; a read by the very
//   next instruction is H1 ("measured"); with one intervening FLAT ALU word it
//   is H1 at VL <= 32 ("measured"), none at VL >= 64, and "unmeasured" at VL
//   33..63; any other single intervening word, or a compare that was a chain's
//   last stage, makes it "unmeasured".
// `clear` starts a RUN. `issue` records an issued instruction (class, whether
// it writes a predicate); `read` checks a predicate read by the instruction
// about to issue (checked before that instruction's own `issue`, same cycle
// allowed). Each hazard prints one HAZARD line and counts in `count`.
`default_nettype none
`timescale 1ns/1ps
module vc_hazard (
    input  wire        clk,
    input  wire        resetn,
    input  wire        clear,
    input  wire        issue,
    input  wire [1:0]  issue_cls,     // 0 drains, 1 FLAT ALU word, 2 other
    input  wire        issue_wp,      // the instruction writes P[issue_p]
    input  wire [1:0]  issue_p,
    input  wire        issue_chained,
    input  wire [8:0]  issue_pc,
    input  wire        read,
    input  wire [1:0]  read_p,
    input  wire        read_anyall,
    input  wire [8:0]  read_pc,
    input  wire [31:0] read_word,
    input  wire [7:0]  vl,
    output reg  [31:0] count
);
    localparam [1:0] C_DRAINS = 2'd0, C_FLAT = 2'd1;

    reg [3:0] valid, drained, flat1, chained;
    reg [1:0] nb [0:3];         // instructions issued since the writer, saturating at 2
    reg [8:0] wpc [0:3];

    wire [1:0] q = read_p;
    wire       stale_win = valid[q] && !drained[q] && (nb[q] < 2'd2);
    wire       fresh_vl  = (nb[q] == 2'd1) && flat1[q] && (vl >= 8'd64);
    wire       unmeasured = chained[q] || ((nb[q] == 2'd1) && (!flat1[q] || (vl > 8'd32 && vl < 8'd64)));
    wire       hazard = read && stale_win && !fresh_vl;

    integer k;
    always @(posedge clk) begin
        if (!resetn) begin
            count   <= 32'd0;
            valid   <= 4'd0;
            drained <= 4'd0;
            flat1   <= 4'd0;
            chained <= 4'd0;
            for (k = 0; k < 4; k = k + 1) begin
                nb[k]  <= 2'd0;
                wpc[k] <= 9'd0;
            end
        end else if (clear) begin
            valid <= 4'd0;
        end else if (hazard || issue) begin
            if (hazard) begin
                count <= count + 32'd1;
                $display("HAZARD H1 pc=%0d inst=%08h p=%0d compare_pc=%0d vl=%0d window=%0s%0s (%m t=%0t)",
                         read_pc, read_word, q, wpc[q], vl, unmeasured ? "unmeasured" : "measured",
                         read_anyall ? " read=ANY/ALL" : "", $time);
            end
            if (issue) begin
                for (k = 0; k < 4; k = k + 1) begin
                    if (issue_wp && issue_p == k[1:0]) begin
                        valid[k]   <= 1'b1;
                        drained[k] <= 1'b0;
                        flat1[k]   <= 1'b0;
                        chained[k] <= issue_chained;
                        nb[k]      <= 2'd0;
                        wpc[k]     <= issue_pc;
                    end else if (valid[k]) begin
                        if (issue_cls == C_DRAINS) drained[k] <= 1'b1;
                        if (nb[k] == 2'd0) flat1[k] <= (issue_cls == C_FLAT);
                        if (nb[k] != 2'd2) nb[k] <= nb[k] + 2'd1;
                    end
                end
            end
        end
    end
endmodule
`default_nettype wire
