`default_nettype none
// e8m15_to_fp32: FP32 store, exact.  Zeros keep their sign (mantissa
// cleared), Inf stays Inf, NaN becomes 0x7FC00000.
module e8m15_to_fp32 (
    input  wire [23:0] x,
    output wire [31:0] f
);
    wire [7:0] e = x[22:15];
    assign f = (e == 8'd0)                          ? {x[23], 31'd0}
             : (e == 8'hFF && x[14:0] != 15'd0)     ? 32'h7FC00000
             :                                        {x, 8'd0};
endmodule
`default_nettype wire
