`default_nettype none
`timescale 1ns/1ps
// fp16_to_e8m15: FP16 -> E8M15, the VLD FP16 conversion of units.md V.7 (exact).
//
//   +-0                          -> {s, 0, 0}
//   Inf / NaN (e5 = 31)          -> {s, 0xFF, m10*32}
//   normal                       -> {s, e5 + 112, m10*32}
//   subnormal, top bit of m10 at p (0..9) -> {s, 103 + p, (m10 * 2^(15-p)) mod 2^15}
module fp16_to_e8m15 (
    input  wire [15:0] h,
    output wire [23:0] x
);
    wire       s   = h[15];
    wire [4:0] e5  = h[14:10];
    wire [9:0] m10 = h[9:0];

    // subnormal: normalise m10 (lz = 9 - p leading zeros in the 10-bit field)
    wire        z8 = (m10[9:2] == 8'd0);
    wire [9:0]  n1 = z8 ? {m10[1:0], 8'd0} : m10;
    wire        z4 = (n1[9:6] == 4'd0);
    wire [9:0]  n2 = z4 ? {n1[5:0], 4'd0} : n1;
    wire        z2 = (n2[9:8] == 2'd0);
    wire [9:0]  n3 = z2 ? {n2[7:0], 2'd0} : n2;
    wire        z1 = ~n3[9];
    wire [9:0]  n  = z1 ? {n3[8:0], 1'b0} : n3;   // m10 * 2^(9-p), top bit at 9
    wire [3:0]  lz = {z8, z4, z2, z1};             // 9 - p
    wire [7:0]  e_sub = 8'd112 - {4'd0, lz};       // 103 + p

    assign x = (e5 == 5'd0 && m10 == 10'd0) ? {s, 23'd0}
             : (e5 == 5'd31)                ? {s, 8'hFF, m10, 5'd0}
             : (e5 != 5'd0)                 ? {s, {3'd0, e5} + 8'd112, m10, 5'd0}
             :                                {s, e_sub, n[8:0], 6'd0};

    wire unused = &{1'b0, n[9]};
endmodule
`default_nettype wire
