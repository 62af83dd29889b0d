// Clock and reset for a bench top, generated in Verilog (never by Python on long runs).
//
// resetn is low for 8 cycles at time zero and again whenever Python raises
// rst_req (it drops rst_req after seeing resetn fall). Period is PERIOD_NS.
// With the plusarg agsim_elab_check the simulation stops at 1 ns (an elaboration check).
`default_nettype none
`timescale 1ns/1ps
module harness_clock #(
    parameter integer PERIOD_NS = 10
) (
    output reg clk = 1'b0,
    output reg resetn = 1'b0
);
    reg       rst_req = 1'b0;
    reg [3:0] rst_cnt = 4'd8;

    // `+agsim_elab_check`: run the parameter guards of time 0 (their $fatal) and stop, no test
    // (tb/run/runner.py does this after each build, before cocotb starts).
    initial if ($test$plusargs("agsim_elab_check")) #1 $finish;

    // A cocotb build on Verilator defines AGSIM_COCOTB_CLOCK and cocotb toggles clk instead
    // (tb/lib/harness.py start_cocotb_clock): Verilator evaluates a clock edge made here together with
    // the registers it clocks, so a coroutine woken by the edge would read their new values, while
    // cocotb's clock changes clk before the design is evaluated, as on an event-driven simulator.
`ifndef AGSIM_COCOTB_CLOCK
    /* verilator lint_off BLKSEQ */  // a free-running bench clock, not logic
    always #(PERIOD_NS/2) clk = ~clk;
    /* verilator lint_on BLKSEQ */
`else
    // the period cocotb's clock uses (tb/lib/harness.py reads it)
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] period_ns = PERIOD_NS;
    /* verilator lint_on UNUSEDSIGNAL */
`endif

    always @(posedge clk) begin
        if (rst_req) begin
            rst_cnt <= 4'd8;
            resetn  <= 1'b0;
        end else if (rst_cnt != 4'd0) begin
            rst_cnt <= rst_cnt - 4'd1;
            resetn  <= 1'b0;
        end else begin
            resetn  <= 1'b1;
        end
    end
endmodule
`default_nettype wire
