`default_nettype none
// acc_round_pack: the exact value (-1)^sign * mag * 2^lsb_exp rounded once
// into the S1E7M14 accumulator {s, E[6:0], M[13:0]}, bias 63: nearest even
// at 15 bits; a result under 2^-62 (and any zero) becomes +0 (22'd0); one
// above the largest finite value (2^64 * (2 - 2^-14)) saturates to it.
module acc_round_pack #(
    parameter integer W = 26
) (
    input  wire               sign,
    input  wire [W-1:0]       mag,
    input  wire signed [11:0] lsb_exp,
    output wire [21:0]        y
);
    wire [14:0]        sig;
    wire signed [11:0] msb_exp;
    wire               zero;

    fp_round #(.W(W), .P(15), .EW(12), .EMIN(-2000)) u_round (
        .mag(mag), .lsb_exp(lsb_exp), .sticky(1'b0),
        .sig(sig), .msb_exp(msb_exp), .zero(zero)
    );

    wire        flush  = zero | (msb_exp < -12'sd62);
    wire        over   = msb_exp > 12'sd64;
    wire [11:0] biased = msb_exp + 12'sd63;

    assign y = flush ? 22'd0
             : over  ? {sign, 7'h7F, 14'h3FFF}
             :         {sign, biased[6:0], sig[13:0]};

    wire unused = &{1'b0, sig[14], biased[11:7]};
endmodule
`default_nettype wire
