`default_nettype none
`timescale 1ns/1ps
// e8m15_to_fp16: E8M15 -> FP16, the VST FP16 conversion of units.md V.7.
//
//   e = 0    -> +-0
//   NaN      -> {s, 31, 1, m[13:5]}
//   Inf      -> +-Inf
//   otherwise the 16-bit significand g = 0x8000 | m is rounded to 11 bits
//   (nearest even on m[4:0]), e5 = e - 112 + carry;
//     e5 >= 31 -> saturates to +-0x7BFF (+-65504), never Inf
//     e5 <= 0  -> subnormal: g * 2^32 shifted right by min(118 - e, 31), bits
//                 [42:32] rounded nearest even on bit 31 and the bits below
//                 (a carry lands in the exponent field)
module e8m15_to_fp16 (
    input  wire [23:0] x,
    output wire [15:0] h
);
    wire        s = x[23];
    wire [7:0]  e = x[22:15];
    wire [14:0] m = x[14:0];
    wire [15:0] g = {1'b1, m};

    // normal: round g to 11 bits
    wire        inc_n = m[4] & ((m[3:0] != 4'd0) | m[5]);
    wire [11:0] t     = {1'b0, g[15:5]} + {11'd0, inc_n};
    wire        carry = t[11];
    wire signed [9:0] e5 = $signed({2'd0, e}) - 10'sd112 + $signed({9'd0, carry});

    // subnormal: shift by min(118 - e, 31) (e <= 112 here, so at least 6)
    wire [7:0]  sh8   = 8'd118 - e;
    wire [4:0]  sh    = (e <= 8'd87) ? 5'd31 : sh8[4:0];
    wire [47:0] sub   = {g, 32'd0} >> sh;
    wire        inc_s = sub[31] & ((sub[30:0] != 31'd0) | sub[32]);
    wire [10:0] t_sub = sub[42:32] + {10'd0, inc_s};

    assign h = (e == 8'd0)                     ? {s, 15'd0}
             : (e == 8'hFF && m != 15'd0)      ? {s, 5'd31, 1'b1, m[13:5]}
             : (e == 8'hFF)                    ? {s, 5'd31, 10'd0}
             : (e5 >= 10'sd31)                 ? {s, 15'h7BFF}
             : (e5 <= 10'sd0)                  ? {s, 4'd0, t_sub}
             :                                   {s, e5[4:0], t[9:0]};

    wire unused = &{1'b0, t[10], sh8[7:5], sub[47:43]};
endmodule
`default_nettype wire
