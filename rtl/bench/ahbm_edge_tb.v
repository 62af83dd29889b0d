// AHBM_EDGE (rtl/ahbm/ahbm_edge.vh) against the plain clocked process it stands for, on Icarus: the gated
// process must act at exactly the edges where `always @(posedge clk) if (cond)` acts.
//
// The condition changes every way it does in the CUBE: by a register written at an edge (nonblocking),
// by a bench writing between edges (at the falling edge, as the cocotb kernels do), by a combinational
// glitch that rises and falls between two edges, and through reset. Each process counts the edges it
// acted at and records the cycle of the last one; the two must agree at every edge. Prints
// "AHBM_EDGE OK <edges acted> <cycles>" or "AHBM_EDGE MISMATCH ..." and stops.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module ahbm_edge_tb;
    reg clk = 1'b0;
    reg resetn = 1'b0;
    always #5 clk = ~clk;

    reg  [31:0] lfsr = 32'h1234_5678;      // drives the register-made part of cond
    reg         q = 1'b0;                  // a register, nonblocking at the edge
    reg         w = 1'b0;                  // written by the "bench" at the falling edge
    reg         g = 1'b0;                  // a glitch between edges
    reg  [31:0] cyc = 32'd0;
    wire        cond = !resetn || q || w || g;

    always @(posedge clk) begin
        lfsr <= {lfsr[30:0], lfsr[31] ^ lfsr[21] ^ lfsr[1] ^ lfsr[0]};
        q <= lfsr[3] & lfsr[7];            // about a quarter of the edges
        cyc <= cyc + 32'd1;
    end
    always @(negedge clk) w = lfsr[11] & lfsr[13] & lfsr[17];
    always @(negedge clk) if (lfsr[5]) begin #2 g = 1'b1; #1 g = 1'b0; end   // never held at an edge

    reg [31:0] n_plain = 32'd0, n_gated = 32'd0, at_plain = 32'd0, at_gated = 32'd0;
    always @(posedge clk) if (cond) begin
        n_plain <= n_plain + 32'd1;
        at_plain <= cyc;
    end
`ifdef AHBM_EDGE_TB_NAIVE   // the checker's own test: sleeping on cond without testing it again at the edge
    always begin wait (cond); @(posedge clk); begin
        n_gated <= n_gated + 32'd1;
        at_gated <= cyc;
    end end
`else
    `AHBM_EDGE(clk, cond) begin
        n_gated <= n_gated + 32'd1;
        at_gated <= cyc;
    end `AHBM_EDGE_END
`endif

    initial begin
        #23 resetn = 1'b1;                 // 2 edges in reset
        #5000 resetn = 1'b0;               // a reset again, mid-run
        #37 resetn = 1'b1;
    end
    always @(negedge clk) begin
        if (n_plain != n_gated || at_plain != at_gated) begin
            $display("AHBM_EDGE MISMATCH at cycle %0d: plain acted %0d times (last at %0d), gated %0d (last at %0d)",
                     cyc, n_plain, at_plain, n_gated, at_gated);
            $finish;
        end
        if (cyc == 32'd20000) begin
            $display("AHBM_EDGE OK %0d %0d", n_plain, cyc);
            $finish;
        end
    end
endmodule
`default_nettype wire
