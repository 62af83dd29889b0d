`default_nettype none
// fp32_to_e8m15: FP32 load (dtype 2).  Nearest even to 16 bits; a result
// under 2^-126 (FP32 subnormals, except those rounding up to 2^-126) becomes
// a zero of the input's sign; rounding past the top gives Inf; Inf stays Inf;
// every NaN becomes 0x7FC000.
module fp32_to_e8m15 (
    input  wire [31:0] f,
    output wire [23:0] x
);
    wire [7:0]  e   = f[30:23];
    wire [23:0] sig = (e == 8'd0) ? {1'b0, f[22:0]} : {1'b1, f[22:0]};
    wire signed [11:0] lsb = (e == 8'd0) ? -12'sd149 : ($signed({4'd0, e}) - 12'sd150);
    wire [23:0] r;

    e8m15_round_pack #(.W(24)) u_pack (
        .sign(f[31]), .mag(sig), .lsb_exp(lsb), .sticky(1'b0), .y(r)
    );

    assign x = (e != 8'hFF)        ? r
             : (f[22:0] == 23'd0)  ? {f[31], 8'hFF, 15'd0}
             :                       24'h7FC000;
endmodule
`default_nettype wire
