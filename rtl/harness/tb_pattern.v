// Seeded stall pattern for one bench-owned link end (a source's idle or a sink's busy).
//
// Generated in Verilog so Python never toggles a signal per cycle. MODE:
//   0 never stall; 1 stall each cycle with probability LEVEL/256;
//   2 bursts: with probability LEVEL/256 start a stall of 1..16 cycles;
//   3 always stall (a hostile extreme for directed tests; bounded by the bench).
// The xorshift32 state is seeded from SEED and the instance's SALT, so every
// endpoint gets its own stream and a run replays from the printed seed.
`default_nettype none
module tb_pattern #(
    parameter [31:0] SALT = 32'h0
) (
    input  wire        clk,
    input  wire        resetn,
    input  wire [31:0] seed,
    input  wire [1:0]  mode,
    input  wire [7:0]  level,
    output wire        stall
);
    reg [31:0] s;
    reg [4:0]  burst;      // remaining stall cycles of the current burst
    wire [31:0] x1 = s ^ (s << 13);
    wire [31:0] x2 = x1 ^ (x1 >> 17);
    wire [31:0] nxt = x2 ^ (x2 << 5);

    // A non-zero start state derived from seed and salt (xorshift must not be 0).
    wire [31:0] mixed = (seed ^ SALT ^ 32'h6d2b79f5) * 32'h9e3779b1;

    always @(posedge clk) begin
        if (!resetn) begin
            s     <= (mixed == 32'd0) ? 32'h1 : mixed;
            burst <= 5'd0;
        end else begin
            s <= nxt;
            if (burst != 5'd0)                        burst <= burst - 5'd1;
            else if (mode == 2'd2 && s[7:0] < level)  burst <= {1'b0, s[11:8]} + 5'd1;
        end
    end

    assign stall = (mode == 2'd3) ||
                   (mode == 2'd1 && s[7:0] < level) ||
                   (mode == 2'd2 && burst != 5'd0);
endmodule
`default_nettype wire
