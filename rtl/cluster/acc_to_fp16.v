`default_nettype none
// acc_to_fp16: units.md C.7.5, one S1E7M14 lane to FP16, saturating
// (combinational; models/numerics/cluster.py acc_emit, bit for bit). The
// ADD_EMIT of an emitting GEMM and the OP_EMIT of a DRAIN.
//
//   e = 0 -> {s, 15'b0}
//   up = m[3] & (m[2:0] != 0 | m[4])         nearest even at mantissa bit 4
//   f = m[13:4] + up; e16 = e - 48 (+1 and f = 0 when f carries to 2^10)
//   e16 <= 0 -> {s, 15'b0} (flush, no FP16 subnormals)
//   e16 >= 31 -> {s, 0x1E, 0x3FF} (+-65504, never Inf)
//   else {s, e16[4:0], f[9:0]}
module acc_to_fp16 (
    input  wire [21:0] acc,
    output wire [15:0] h
);
    wire        s   = acc[21];
    wire [6:0]  e   = acc[20:14];
    wire [13:0] m   = acc[13:0];
    wire        up  = m[3] & ((|m[2:0]) | m[4]);
    wire [10:0] f   = {1'b0, m[13:4]} + {10'd0, up};
    wire        cy  = f[10];
    wire [8:0]  e16 = {2'd0, e} - 9'd48 + {8'd0, cy};         // two's complement
    wire        flush = e16[8] || (e16 == 9'd0);
    wire        sat   = !e16[8] && (e16 >= 9'd31);

    assign h = (e == 7'd0) ? {s, 15'd0} :
               flush       ? {s, 15'd0} :
               sat         ? {s, 5'h1E, 10'h3FF} :
                             {s, e16[4:0], f[9:0]};
endmodule
`default_nettype wire
