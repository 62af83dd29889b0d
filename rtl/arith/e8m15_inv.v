`default_nettype none
// e8m15_inv: VINV, y = 1/x correctly rounded (nearest even).
//   q = floor(2^34 / sig), sticky = (2^34 mod sig) != 0, sig the 16-bit
//   significand (so q has 19 or 20 bits); 1/x = q * 2^(-19-e), rounded once.
// A result under 2^-126 becomes a zero of x's sign (x >= 2^126 * 1.0001...);
// 1/+-0 = +-Inf, 1/+-Inf = +-0, NaN -> 0x7FC000.  The divider is written as
// '/' and '%': any implementation (restoring, SRT, Newton) must return the
// same correctly rounded bits.
module e8m15_inv (
    input  wire [23:0] x,
    output wire [23:0] y
);
    wire               s;
    wire [15:0]        sig;
    wire signed [11:0] lsb;
    wire               is_zero, is_inf, is_nan;

    e8m15_unpack u_unpack (
        .x(x), .sign(s), .sig(sig), .lsb_exp(lsb),
        .is_zero(is_zero), .is_inf(is_inf), .is_nan(is_nan)
    );

    localparam [34:0] NUM = 35'h4_0000_0000;  // 2^34
    wire [34:0] d   = (sig == 16'd0) ? 35'd1 : {19'd0, sig};
    wire [34:0] q   = NUM / d;
    wire [34:0] rem = NUM % d;

    wire [23:0] packed_y;
    e8m15_round_pack #(.W(20)) u_pack (
        .sign(s), .mag(q[19:0]), .lsb_exp(-12'sd34 - lsb), .sticky(rem != 35'd0), .y(packed_y)
    );

    assign y = is_nan  ? 24'h7FC000
             : is_zero ? {s, 8'hFF, 15'd0}
             : is_inf  ? {s, 23'd0}
             :           packed_y;

    wire unused = &{1'b0, q[34:20]};
endmodule
`default_nettype wire
