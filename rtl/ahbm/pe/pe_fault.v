// The PE's FAULT register (docs/ahbm.md §4-§5): fault_code / fault_tag, written by whichever engine
// drops a command, cleared by fault_clr. Separate so that the engines that fault (the TX and RX link
// engines and the main engine) only raise a request with their code and tag, and one place decides.
//
// Arbitration: request i (of N) wins over every request below it; pe_core numbers them TX 0, RX 1,
// engine 2, so in one cycle the engine's code beats RX's, which beats TX's. Each request is recorded
// whether or not a code is already held (a frame error found at a packet's end replaces a pending code;
// the engines only start commands while none is). A fault_clr while a code is held clears it, and wins
// over a request in the same cycle; a fault_clr with no code held does nothing. The code is visible the
// cycle after the request (a register). `raised` (any request) is what cnt_fault counts and evt shows:
// two requests in one cycle count once. `halt`: a code is held, every queue stops.
//
// Monitor (reset-guarded, sticky mon_err, an ERROR line): a request MUST carry a code (not F_NONE).
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_fault #(
    parameter integer N = 3             // requesters
) (
    input  wire           clk,
    input  wire           resetn,
    input  wire [N-1:0]   req,
    input  wire [8*N-1:0] req_code,     // request i's code in [8i+7:8i]
    input  wire [8*N-1:0] req_tag,
    input  wire           fault_clr,
    output reg  [7:0]     fault_code,
    output reg  [7:0]     fault_tag,
    output wire           raised,
    output wire           halt,
    output wire           clear,        // this cycle's fault_clr takes effect
    output reg            mon_err
);
    initial begin
        if (N < 1)
            $fatal(1, "pe_fault %m: N=%0d: need at least one requester", N);
    end
    localparam [7:0] F_NONE = 8'd0;

    reg [7:0] win_code, win_tag;
    integer i, m;
    always @* begin
        win_code = F_NONE;
        win_tag = 8'd0;
        for (i = 0; i < N; i = i + 1)
            if (req[i]) begin
                win_code = req_code[8*i +: 8];
                win_tag = req_tag[8*i +: 8];
            end
    end
    assign raised = |req;
    assign halt = fault_code != F_NONE;
    assign clear = fault_clr && halt;

    `AHBM_EDGE(clk, !resetn || clear || raised) begin
        if (!resetn) begin
            fault_code <= F_NONE;
            fault_tag <= 8'd0;
        end else if (clear) begin
            fault_code <= F_NONE;
            fault_tag <= 8'd0;
        end else begin
            fault_code <= win_code;
            fault_tag <= win_tag;
        end
    end `AHBM_EDGE_END

    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, !resetn || raised) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            for (m = 0; m < N; m = m + 1)
                if (req[m] && req_code[8*m +: 8] == F_NONE) begin
                    $display("ERROR %m t=%0t: fault request %0d carries no code (F_NONE)", $time, m);
                    mon_err <= 1'b1;
                end
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
