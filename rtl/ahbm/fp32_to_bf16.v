`default_nettype none
// fp32_to_bf16: store rounding of models/ahbm/numerics.f32_to_bf16.
// Non-NaN: h = (f + 0x7FFF + f[16]) >> 16 (round to nearest even on the bit
// pattern; subnormals kept, overflow rounds to +-inf, +-inf and +-0 kept).
// NaN: h = {sign, 15'h7FC0} (quiet, payload dropped).
module fp32_to_bf16 (
    input  wire [31:0] f,
    output wire [15:0] h
);
    wire        nan = f[30:0] > 31'h7F800000;
    // carry of f[15:0] + 0x7FFF + f[16] into bit 16
    wire        c   = (f[15:0] > 16'h8000) || ((f[15:0] == 16'h8000) && f[16]);
    wire [15:0] rnd = f[31:16] + {15'd0, c};  // no wrap for non-NaN f
    assign h = nan ? {f[31], 15'h7FC0} : rnd;
endmodule
`default_nettype wire
