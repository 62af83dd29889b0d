`default_nettype none
// fp16_to_e8m15: FP16 load.  Exact: FP16 subnormals become normal E8M15
// numbers, zeros keep their sign, Inf stays Inf, every NaN becomes 0x7FC000.
module fp16_to_e8m15 (
    input  wire [15:0] h,
    output wire [23:0] x
);
    wire [4:0]  e   = h[14:10];
    wire [10:0] sig = (e == 5'd0) ? {1'b0, h[9:0]} : {1'b1, h[9:0]};
    // lsb exponent: subnormal 2^-24, normal e - 25
    wire signed [11:0] lsb = (e == 5'd0) ? -12'sd24 : ($signed({7'd0, e}) - 12'sd25);
    wire [23:0] r;

    e8m15_round_pack #(.W(11)) u_pack (
        .sign(h[15]), .mag(sig), .lsb_exp(lsb), .sticky(1'b0), .y(r)
    );

    assign x = (e != 5'h1F)        ? r
             : (h[9:0] == 10'd0)   ? {h[15], 8'hFF, 15'd0}
             :                       24'h7FC000;
endmodule
`default_nettype wire
