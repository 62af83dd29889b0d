`default_nettype none
// acc_emit_subtile: OP_EMIT of a 4x4 accumulator sub-tile into one 256-bit
// FP16 granule.  Element (r, c) is acc_tile[(4r+c)*22 +: 22] in and
// granule[(4r+c)*16 +: 16] out (acc_to_fp16 on each).
module acc_emit_subtile (
    input  wire [351:0] acc_tile,
    output wire [255:0] granule
);
    genvar e;
    generate
        for (e = 0; e < 16; e = e + 1) begin : g_el
            acc_to_fp16 u_emit (.acc(acc_tile[e*22 +: 22]), .h(granule[e*16 +: 16]));
        end
    endgenerate
endmodule
`default_nettype wire
