`default_nettype none
// acc_to_fp16: OP_EMIT of one S1E7M14 accumulator element.  Nearest even with
// FP16 subnormals; beyond the FP16 range SATURATES to +-65504 (0x7bff /
// 0xfbff), never Inf; an accumulator zero (E = 0) gives 0x0000; a non-zero
// value under half of 2^-24 gives a zero of its sign.
module acc_to_fp16 (
    input  wire [21:0] acc,
    output wire [15:0] h
);
    wire zero = (acc[20:14] == 7'd0);
    wire signed [11:0] lsb = $signed({5'd0, acc[20:14]}) - 12'sd77;

    fp16_round_pack_sat #(.W(15)) u_pack (
        .sign(acc[21] & !zero), .mag(zero ? 15'd0 : {1'b1, acc[13:0]}), .lsb_exp(lsb), .y(h)
    );
endmodule
`default_nettype wire
