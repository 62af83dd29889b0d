`timescale 1ns/1ps
`default_nettype none
// ahbm_arith_tb: pure-Verilog vector bench for the AHBM PE numerics blocks of
// rtl/ahbm (fp32_* and bf16_*).
//
// Applies the vectors of vin.hex to the block selected by OP (one block
// elaborated per build) and writes vout.hex (rtl/bench/vector_bench.vh).  tests/unit/
// test_ahbm_arith_rtl.py builds the vectors, runs this bench and compares
// every output bit with models/ahbm/numerics.py.  Input packing (msb first):
//    0 fp32_add      {sub, a32, b32}   -> {y32}   (sub: y = a - b)
//    1 fp32_mul      {a32, b32}        -> {y32}
//    2 fp32_max      {a32, b32}        -> {y32}
//    3 bf16_to_fp32  {h16}             -> {f32}
//    4 fp32_to_bf16  {f32}             -> {h16}
//    5 fp32_exp      {x32}             -> {y32}
//    6 chain: bf16 load, exp, bf16 store   {h16} -> {h16}
//    7 fp32_div      {a32, b32}        -> {y32}   (y = a / b)
module ahbm_arith_tb;
`include "vector_bench.vh"

    generate
        if (OP == 0) begin : g_op
            fp32_add u (.a(vin[63:32]), .b(vin[31:0]), .sub(vin[64]), .y(vout[31:0]));
        end else if (OP == 1) begin : g_op
            fp32_mul u (.a(vin[63:32]), .b(vin[31:0]), .y(vout[31:0]));
        end else if (OP == 2) begin : g_op
            fp32_max u (.a(vin[63:32]), .b(vin[31:0]), .y(vout[31:0]));
        end else if (OP == 3) begin : g_op
            bf16_to_fp32 u (.h(vin[15:0]), .f(vout[31:0]));
        end else if (OP == 4) begin : g_op
            fp32_to_bf16 u (.f(vin[31:0]), .h(vout[15:0]));
        end else if (OP == 5) begin : g_op
            fp32_exp u (.x(vin[31:0]), .y(vout[31:0]));
        end else if (OP == 7) begin : g_op
            fp32_div u (.a(vin[63:32]), .b(vin[31:0]), .y(vout[31:0]));
        end else begin : g_op
            wire [31:0] x, e;
            bf16_to_fp32 u_ld  (.h(vin[15:0]), .f(x));
            fp32_exp     u_exp (.x(x), .y(e));
            fp32_to_bf16 u_st  (.f(e), .h(vout[15:0]));
        end
    endgenerate

endmodule
`default_nettype wire
