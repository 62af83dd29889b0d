`default_nettype none
// e8m15_add: VADD (y = a + c) and VSUB (sub = 1: y = a - c), one rounding.
// The FMA datapath with b = 1.0 (a*1.0 is exact), so add and FMA share every
// rounding, zero-sign and special-case rule.
module e8m15_add (
    input  wire [23:0] a,
    input  wire [23:0] c,
    input  wire        sub,
    output wire [23:0] y
);
    e8m15_fma u_fma (.a(a), .b(24'h3F8000), .c(c), .neg_prod(1'b0), .neg_add(sub), .y(y));
endmodule
`default_nettype wire
