`default_nettype none
`timescale 1ns/1ps
// e8m15_to_fp32: E8M15 -> FP32, the VST FP32 conversion of units.md V.7 (exact).
//
//   e = 0     -> +-0 (a non-canonical zero, m != 0, too)
//   otherwise -> {s, e, m * 256} (Inf and NaN keep their fields)
module e8m15_to_fp32 (
    input  wire [23:0] x,
    output wire [31:0] f
);
    assign f = (x[22:15] == 8'd0) ? {x[23], 31'd0} : {x, 8'd0};
endmodule
`default_nettype wire
