// vc_store_hazard: upstream's FP32 store (units.md V.8 H3), reported, not reproduced.
//
// Upstream writes elements 0..7 and then 8..15 of chunk c to walk element 2c
// and leaves 2c+1 unwritten (timing-dependent), so every VST with dt = 2 may
// leave walk elements 0 .. 2*nchunk-1 different from V.7's layout, which our
// core writes. `store` marks a VST with dt = 2 at decode (one cycle); each
// prints one HAZARD line, as models/vector/chain_hazards.py does, and counts.
`default_nettype none
`timescale 1ns/1ps
module vc_store_hazard (
    input  wire        clk,
    input  wire        resetn,
    input  wire        store,
    input  wire [8:0]  pc,
    input  wire [31:0] word,
    input  wire [7:0]  vl,
    output reg  [31:0] count
);
    wire [3:0] nchunk = vl[7:4] + {3'd0, vl[3:0] != 4'd0};
    wire [4:0] last_elem = {nchunk, 1'b0} - 5'd1;

    always @(posedge clk) begin
        if (!resetn) count <= 32'd0;
        else if (store) begin
            count <= count + 32'd1;
            $display("HAZARD H3 pc=%0d inst=%08h vl=%0d walk=0..%0d (%m t=%0t)", pc, word, vl, last_elem, $time);
        end
    end
endmodule
`default_nettype wire
