`default_nettype none
// e8m15_to_fp16: FP16 store.  Nearest even with FP16 subnormals; a value
// beyond the FP16 range, and Inf, saturates to +-65504 (0x7bff / 0xfbff);
// zeros keep their sign; NaN becomes 0x7E00.
module e8m15_to_fp16 (
    input  wire [23:0] x,
    output wire [15:0] h
);
    wire               sign;
    wire [15:0]        sig;
    wire signed [11:0] lsb;
    wire               is_zero, is_inf, is_nan;
    wire [15:0]        r;

    e8m15_unpack u_unpack (
        .x(x), .sign(sign), .sig(sig), .lsb_exp(lsb),
        .is_zero(is_zero), .is_inf(is_inf), .is_nan(is_nan)
    );
    fp16_round_pack_sat #(.W(16)) u_pack (
        .sign(sign), .mag(sig), .lsb_exp(lsb), .y(r)
    );

    assign h = is_nan ? 16'h7E00 : is_inf ? {sign, 15'h7BFF} : r;

    wire unused = &{1'b0, is_zero};
endmodule
`default_nettype wire
