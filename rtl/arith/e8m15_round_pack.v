`default_nettype none
// e8m15_round_pack: the exact value (-1)^sign * (mag + sticky) * 2^lsb_exp
// rounded once into E8M15: nearest even at 16 bits, then a result under
// 2^-126 becomes a zero of the given sign (flush) and one of 2^128 or more
// becomes Inf.  A zero mag gives a zero of the given sign.
module e8m15_round_pack #(
    parameter integer W = 32
) (
    input  wire               sign,
    input  wire [W-1:0]       mag,
    input  wire signed [11:0] lsb_exp,
    input  wire               sticky,
    output wire [23:0]        y
);
    wire [15:0]        sig;
    wire signed [11:0] msb_exp;
    wire               zero;

    fp_round #(.W(W), .P(16), .EW(12), .EMIN(-2000)) u_round (
        .mag(mag), .lsb_exp(lsb_exp), .sticky(sticky),
        .sig(sig), .msb_exp(msb_exp), .zero(zero)
    );

    wire        flush  = zero | (msb_exp < -12'sd126);
    wire        over   = msb_exp > 12'sd127;
    wire [11:0] biased = msb_exp + 12'sd127;

    assign y = flush ? {sign, 23'd0}
             : over  ? {sign, 8'hFF, 15'd0}
             :         {sign, biased[7:0], sig[14:0]};

    wire unused = &{1'b0, sig[15], biased[11:8]};
endmodule
`default_nettype wire
