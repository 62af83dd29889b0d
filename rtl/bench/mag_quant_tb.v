`timescale 1ns/1ps
`default_nettype none
// mag_quant_tb: pure-Verilog vector bench for the memory agent's QUANT block (rtl/mag/mag_quant.v).
//
// Applies the vectors of vin.hex to the block selected by OP and writes vout.hex
// (rtl/bench/vector_bench.vh); tests/unit/mag/test_mag_quant_rtl.py builds the vectors and
// compares every output bit with models/numerics/mxfp7.py.  Packing per OP (msb first):
//    0 mag_quant            {blayout, raw2048}      -> {words1024}
//    1 its element rule     {h16, scale8}           -> {q7}   (any scale byte, through
//                                                              the block's own function)
module mag_quant_tb;
`include "vector_bench.vh"

    generate
        if (OP == 0) begin : g_op
            mag_quant u (.raw(vin[2047:0]), .blayout(vin[2048]), .words(vout[1023:0]));
        end else begin : g_op
            wire [1023:0] unused_words;
            mag_quant u (.raw(2048'd0), .blayout(1'b0), .words(unused_words));
            assign vout[6:0] = u.elem_code(vin[23:8], vin[7:0]);
        end
    endgenerate
endmodule
`default_nettype wire
