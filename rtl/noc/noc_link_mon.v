// Assertion monitor for one valid/busy link (spec section 3), placed at a receiver.
//
// The sender must hold valid and data unchanged until a cycle with busy = 0. A
// flit withdrawn (valid falls) or changed while held is the SENDER's fault; the
// message names the link so the offending side is clear. ROLE is a short text
// put in the message (e.g. "router(1,1) in W").
`default_nettype none
`timescale 1ns/1ps
module noc_link_mon #(
    parameter integer WIDTH = 288
) (
    input  wire             clk,
    input  wire             resetn,
    input  wire             valid,
    input  wire             busy,
    input  wire [WIDTH-1:0] data,
    output reg              mon_err
);
    reg             held;       // last cycle offered a flit that was not taken
    reg [WIDTH-1:0] held_data;

    initial mon_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            held    <= 1'b0;
            mon_err <= 1'b0;
        end else if (held || valid) begin
            if (held && !valid) begin
                $display("ERROR %m t=%0t: sender withdrew a held flit (valid fell while busy had not let it through): %h",
                         $time, held_data);
                mon_err <= 1'b1;
            end else if (held && data != held_data) begin
                $display("ERROR %m t=%0t: sender changed a held flit: was %h now %h", $time, held_data, data);
                mon_err <= 1'b1;
            end
            held <= valid && busy;
            // copied when a hold starts, and after a reported change (one message per change): a legal
            // hold copies the 288 bits once, not every cycle
            if (valid && busy && (!held || data != held_data)) held_data <= data;
        end
    end
endmodule
`default_nettype wire
