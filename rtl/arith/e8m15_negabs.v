`default_nettype none
// e8m15_negabs: VNEG and VABS act on the sign bit only (like IEEE negate and
// abs): no rounding, NaN payloads and non-canonical zeros pass through.
module e8m15_negabs (
    input  wire [23:0] x,
    output wire [23:0] neg_y,
    output wire [23:0] abs_y
);
    assign neg_y = {~x[23], x[22:0]};
    assign abs_y = {1'b0, x[22:0]};
endmodule
`default_nettype wire
