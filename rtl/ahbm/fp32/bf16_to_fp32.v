`default_nettype none
// bf16_to_fp32: exact widening, fp32 bits = bf16 bits << 16 (every pattern,
// NaN payloads included), as models/ahbm/numerics.bf16_to_f32.
module bf16_to_fp32 (
    input  wire [15:0] h,
    output wire [31:0] f
);
    assign f = {h, 16'd0};
endmodule
`default_nettype wire
