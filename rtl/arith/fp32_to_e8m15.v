`default_nettype none
`timescale 1ns/1ps
// fp32_to_e8m15: FP32 -> E8M15, the VLD FP32 conversion of units.md V.7.
//
//   e = 0 (zero or subnormal) -> +-0
//   NaN                       -> {s, 0xFF, 1, m[21:8]}
//   Inf                       -> +-Inf
//   otherwise m is rounded nearest even on bit 7 and the bits below, down to
//   15 bits; the carry propagates into the exponent, and a carry out of
//   e = 254 gives {s, 0xFF, 0} = +-Inf.
module fp32_to_e8m15 (
    input  wire [31:0] f,
    output wire [23:0] x
);
    wire        s = f[31];
    wire [7:0]  e = f[30:23];
    wire [22:0] m = f[22:0];
    wire        inc = m[7] & ((m[6:0] != 7'd0) | m[8]);
    wire [22:0] em  = {e, m[22:8]} + {22'd0, inc};

    assign x = (e == 8'd0)                 ? {s, 23'd0}
             : (e == 8'hFF && m != 23'd0)  ? {s, 8'hFF, 1'b1, m[21:8]}
             : (e == 8'hFF)                ? {s, 8'hFF, 15'd0}
             :                               {s, em};
endmodule
`default_nettype wire
