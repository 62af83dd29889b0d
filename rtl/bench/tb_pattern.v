// Seeded stall pattern for one bench-owned link end (a source's idle or a sink's busy).
//
// Generated in Verilog so Python never toggles a signal per cycle. MODE:
//   0 never stall; 1 stall each cycle with probability LEVEL/256;
//   2 bursts: with probability LEVEL/256 start a stall of 1..16 cycles;
//   3 always stall (a hostile extreme for directed tests; bounded by the bench).
// The xorshift32 state is seeded from SEED and the instance's SALT, so every
// endpoint gets its own stream and a run replays from the printed seed. The
// state is loaded from `seed` in reset and at the clock edge after `reseed`
// toggles (the bench toggles it each time it configures a run), so a test's
// streams start from its own seed whatever ran before it, in or out of reset.
// The state only advances when a mode needs it: in mode 0 the block costs the
// simulator one comparison a cycle.
`default_nettype none
module tb_pattern #(
    parameter [31:0] SALT = 32'h0
) (
    input  wire        clk,
    input  wire        resetn,
    input  wire        reseed,       // a toggle: each change reloads the state from seed
    input  wire [31:0] seed,
    input  wire [1:0]  mode,
    input  wire [7:0]  level,
    output reg         stall
);
    reg [31:0] s;
    reg        reseed_q = 1'b0;
    reg [4:0]  burst;      // remaining stall cycles of the current burst, this one included

`include "tb_xorshift.vh"

    // A non-zero start state from seed and salt (xorshift must not start at 0).
    function automatic [31:0] start_state(input [31:0] sd);
        reg [31:0] m;
        begin
            m = (sd ^ SALT ^ 32'h6d2b79f5) * 32'h9e3779b1;
            start_state = (m == 32'd0) ? 32'h1 : m;
        end
    endfunction

    wire [31:0] x = xorshift(s);   // re-evaluated only when s moves

    always @(posedge clk) begin
        reseed_q <= reseed;
        if (!resetn || reseed != reseed_q) begin
            s     <= start_state(seed);
            burst <= 5'd0;
            stall <= 1'b0;
        end else if (mode == 2'd0) begin
            stall <= 1'b0;
        end else begin
            s <= x;
            case (mode)
                2'd1: stall <= (x[7:0] < level);
                2'd2: begin
                    if (burst > 5'd1) begin
                        burst <= burst - 5'd1;
                        stall <= 1'b1;
                    end else if (x[7:0] < level) begin
                        burst <= {1'b0, x[11:8]} + 5'd1;
                        stall <= 1'b1;
                    end else begin
                        burst <= 5'd0;
                        stall <= 1'b0;
                    end
                end
                default: stall <= 1'b1;
            endcase
        end
    end
endmodule
`default_nettype wire
