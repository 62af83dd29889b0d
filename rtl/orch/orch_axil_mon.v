// Handshake monitor for one AXI4-Lite channel (VALID/READY plus its payload).
//
// AXI rule checked: once VALID is high it stays high, with the payload
// unchanged, until the cycle READY is also high. A VALID that falls before
// READY, or a payload that moves while waiting, prints a line containing ERROR
// that names the channel and the side at fault (SIDE: "host" for AW/W/AR,
// "orchestrator" for B/R), and raises mon_err until the next reset.
// The process only does work while a transfer is offered or waiting.
`default_nettype none
`timescale 1ns/1ps
module orch_axil_mon #(
    parameter integer W = 8,
    parameter         CHAN = "AW",
    parameter         SIDE = "host"
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         valid,
    input  wire         ready,
    input  wire [W-1:0] payload,
    output reg          mon_err
);
    reg         waiting;        // last cycle offered a transfer that was not taken
    reg [W-1:0] waiting_pl;

    initial mon_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            waiting <= 1'b0;
            mon_err <= 1'b0;
        end else if (waiting || valid) begin
            if (waiting && !valid) begin
                $display("ERROR %m t=%0t: AXI %0s channel: the %0s dropped %0sVALID before %0sREADY (payload was %h)",
                         $time, CHAN, SIDE, CHAN, CHAN, waiting_pl);
                mon_err <= 1'b1;
            end else if (waiting && payload != waiting_pl) begin
                $display("ERROR %m t=%0t: AXI %0s channel: the %0s changed the payload while waiting for %0sREADY: was %h now %h",
                         $time, CHAN, SIDE, CHAN, waiting_pl, payload);
                mon_err <= 1'b1;
            end
            waiting <= valid && !ready;
            if (valid && !ready) waiting_pl <= payload;
        end
    end
endmodule
`default_nettype wire
