// clock_gate: a glitch-free clock gate (the latch-and-AND of an integrated
// clock-gating cell), so that a datapath whose operand registers it clocks is
// evaluated only on the cycles that load them.
//
// Why: Verilator 5 schedules combinational logic under the triggers of the
// registers that feed it. A wide combinational datapath fed by registers on
// `clk` is evaluated on every edge of `clk`, working or not; fed by registers
// on `gclk`, only on the edges `gclk` has. Behaviour is unchanged: the gated
// registers are written only on cycles with `en` set, and on those cycles
// `gclk` rises with `clk`.
//
//   en    the gated registers are written at the next rising edge of clk
//         (combinational from registers on clk, settled while clk is low)
//   gclk  clk & en_l, en_l = en held by a latch transparent while clk is low:
//         it cannot change while clk is high, so gclk has no glitch and rises
//         only together with clk. Both simulators see clk's and gclk's rising
//         edges in the same evaluation (Icarus: the AND is an active event of
//         clk's edge; Verilator: gclk is a clock computed in its 'act' region
//         before any register of either clock is updated), so a register on
//         gclk samples the same pre-edge values as one on clk.
// A negative-edge gate (fall_edge = 1) is the same cell for registers on the
// falling edge: gclk = clk | ~en_l, en_l latched while clk is high, gclk falls
// only together with clk on cycles with en set (en settled while clk is high).
`default_nettype none
`timescale 1ns/1ps
module clock_gate #(
    parameter integer FALL_EDGE = 0   // 0: gate rising edges, 1: gate falling edges
) (
    input  wire clk,
    input  wire en,
    output wire gclk
);
    reg en_l = 1'b0;
    generate
        if (FALL_EDGE == 0) begin : g_rise
            /* verilator lint_off LATCH */
            always @* if (!clk) en_l = en;      // transparent while clk is low
            /* verilator lint_on LATCH */
            assign gclk = clk & en_l;
        end else begin : g_fall
            /* verilator lint_off LATCH */
            always @* if (clk) en_l = en;       // transparent while clk is high
            /* verilator lint_on LATCH */
            assign gclk = clk | ~en_l;
        end
    endgenerate
    initial begin
        if (FALL_EDGE != 0 && FALL_EDGE != 1)
            $fatal(1, "clock_gate %m: FALL_EDGE=%0d: expected 0 (gate rising edges) or 1 (gate falling edges)",
                   FALL_EDGE);
    end
endmodule
`default_nettype wire
