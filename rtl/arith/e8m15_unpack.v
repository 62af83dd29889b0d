`default_nettype none
// e8m15_unpack: fields of an E8M15 pattern {s, E[7:0], M[14:0]}.
// value = (-1)^sign * sig * 2^lsb_exp for finite non-zero x (sig has the
// hidden one at bit 15, lsb_exp = E - 142).  E = 0 is a zero whatever M is;
// E = 255 is Inf (M = 0) or NaN.  sig is 0 for zeros, Inf and NaN.
module e8m15_unpack (
    input  wire [23:0]        x,
    output wire               sign,
    output wire [15:0]        sig,
    output wire signed [11:0] lsb_exp,
    output wire               is_zero,
    output wire               is_inf,
    output wire               is_nan
);
    wire [7:0] e = x[22:15];
    wire       special = (e == 8'hFF);
    assign sign    = x[23];
    assign is_zero = (e == 8'd0);
    assign is_inf  = special & (x[14:0] == 15'd0);
    assign is_nan  = special & (x[14:0] != 15'd0);
    assign sig     = (is_zero | special) ? 16'd0 : {1'b1, x[14:0]};
    assign lsb_exp = $signed({4'd0, e}) - 12'sd142;
endmodule
`default_nettype wire
