`default_nettype none
// fp16_round_pack_sat: the exact value (-1)^sign * mag * 2^lsb_exp rounded
// once into FP16: nearest even, with FP16 subnormals (the lsb never goes below
// 2^-24, gradual underflow), a result under half the smallest subnormal
// becoming a zero of the given sign, and anything at or above 2^16 after
// rounding SATURATING to +-65504 (0x7bff / 0xfbff): never Inf.
module fp16_round_pack_sat #(
    parameter integer W = 16
) (
    input  wire               sign,
    input  wire [W-1:0]       mag,
    input  wire signed [11:0] lsb_exp,
    output wire [15:0]        y
);
    wire [10:0]        sig;
    wire signed [11:0] msb_exp;
    wire               zero;

    fp_round #(.W(W), .P(11), .EW(12), .EMIN(-24)) u_round (
        .mag(mag), .lsb_exp(lsb_exp), .sticky(1'b0),
        .sig(sig), .msb_exp(msb_exp), .zero(zero)
    );

    wire        over   = msb_exp > 12'sd15;
    wire [11:0] biased = msb_exp + 12'sd15;

    assign y = zero     ? {sign, 15'd0}
             : over     ? {sign, 15'h7BFF}
             : !sig[10] ? {sign, 5'd0, sig[9:0]}
             :            {sign, biased[4:0], sig[9:0]};

    wire unused = &{1'b0, biased[11:5]};
endmodule
`default_nettype wire
