`default_nettype none
// e8m15_minmax: VMAX and VMIN.  Numeric order with -0 < +0; NaN if either
// operand is NaN (0x7FC000); the chosen operand comes out with a zero's
// mantissa cleared (an exponent-0 pattern is a zero).
module e8m15_minmax (
    input  wire [23:0] a,
    input  wire [23:0] b,
    output wire [23:0] max_y,
    output wire [23:0] min_y
);
    wire a_zero = (a[22:15] == 8'd0);
    wire b_zero = (b[22:15] == 8'd0);
    wire a_nan  = (a[22:15] == 8'hFF) && (a[14:0] != 15'd0);
    wire b_nan  = (b[22:15] == 8'hFF) && (b[14:0] != 15'd0);
    wire [23:0] a_c = a_zero ? {a[23], 23'd0} : a;
    wire [23:0] b_c = b_zero ? {b[23], 23'd0} : b;
    // order key: magnitude for +, -(magnitude)-1 for -  (so -0 < +0)
    wire signed [24:0] ka = a[23] ? -$signed({2'b00, a_c[22:0]}) - 25'sd1 : $signed({2'b00, a_c[22:0]});
    wire signed [24:0] kb = b[23] ? -$signed({2'b00, b_c[22:0]}) - 25'sd1 : $signed({2'b00, b_c[22:0]});
    wire nan = a_nan | b_nan;

    assign max_y = nan ? 24'h7FC000 : (ka >= kb) ? a_c : b_c;
    assign min_y = nan ? 24'h7FC000 : (ka <= kb) ? a_c : b_c;
endmodule
`default_nettype wire
