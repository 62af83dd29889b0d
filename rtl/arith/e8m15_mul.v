`default_nettype none
// e8m15_mul: VMUL, y = a * b, one rounding.  The FMA datapath with addend -0:
// x + (-0) = x for every x (also for +0 and -0), so the product is unchanged.
module e8m15_mul (
    input  wire [23:0] a,
    input  wire [23:0] b,
    output wire [23:0] y
);
    e8m15_fma u_fma (.a(a), .b(b), .c(24'h800000), .neg_prod(1'b0), .neg_add(1'b0), .y(y));
endmodule
`default_nettype wire
