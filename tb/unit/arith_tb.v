`timescale 1ns/1ps
`default_nettype none
// arith_tb: pure-Verilog vector bench for the arithmetic blocks of rtl/arith.
//
// Applies the vectors of vin.hex to the block selected by OP (one block
// elaborated per build) and writes vout.hex (tb/unit/vector_bench.vh).  tests/unit/
// test_arith_rtl.py builds the vectors, runs this bench and compares every
// output bit with the Python model.  Input packing per OP (msb first):
//    0 fp16_to_e8m15   {h16}                                  -> {x24}
//    1 e8m15_to_fp16   {x24}                                  -> {h16}
//    2 fp32_to_e8m15   {f32}                                  -> {x24}
//    3 e8m15_to_fp32   {x24}                                  -> {f32}
//    4 e8m15_fma       {neg_prod, neg_add, a24, b24, c24}     -> {y24}
//    5 e8m15_add       {sub, a24, c24}                        -> {y24}
//    6 e8m15_mul       {a24, b24}                             -> {y24}
//    7 e8m15_minmax    {a24, b24}                             -> {max24, min24}
//    8 e8m15_negabs    {x24}                                  -> {neg24, abs24}
//    9 e8m15_exp2      {x24}                                  -> {y24}
//   10 e8m15_inv       {x24}                                  -> {y24}
//   11 acc_add         {x22, y22}                             -> {z22}
//   12 acc_to_fp16     {acc22}                                -> {h16}
//   13 acc_emit_subtile {acc_tile352}                         -> {granule256}
//   14 cu_gemm_subtile {accumulate, anchor8, acc_in352, b_entry1024, a_entry1024} -> {acc_out352}
//   15 chain: FP16 load, VADD x+x, FP16 store                 {h16} -> {h16}
//   16 chain: FP16 load, SiLU (VMUL -log2e, VEXP2, VADD 1.0, VINV, VMUL x), FP16 store
module arith_tb;
`include "vector_bench.vh"

    generate
        if (OP == 0) begin : g_op
            fp16_to_e8m15 u (.h(vin[15:0]), .x(vout[23:0]));
        end else if (OP == 1) begin : g_op
            e8m15_to_fp16 u (.x(vin[23:0]), .h(vout[15:0]));
        end else if (OP == 2) begin : g_op
            fp32_to_e8m15 u (.f(vin[31:0]), .x(vout[23:0]));
        end else if (OP == 3) begin : g_op
            e8m15_to_fp32 u (.x(vin[23:0]), .f(vout[31:0]));
        end else if (OP == 4) begin : g_op
            e8m15_fma u (.a(vin[71:48]), .b(vin[47:24]), .c(vin[23:0]),
                         .neg_prod(vin[73]), .neg_add(vin[72]), .y(vout[23:0]));
        end else if (OP == 5) begin : g_op
            e8m15_add u (.a(vin[47:24]), .c(vin[23:0]), .sub(vin[48]), .y(vout[23:0]));
        end else if (OP == 6) begin : g_op
            e8m15_mul u (.a(vin[47:24]), .b(vin[23:0]), .y(vout[23:0]));
        end else if (OP == 7) begin : g_op
            e8m15_minmax u (.a(vin[47:24]), .b(vin[23:0]), .max_y(vout[47:24]), .min_y(vout[23:0]));
        end else if (OP == 8) begin : g_op
            e8m15_negabs u (.x(vin[23:0]), .neg_y(vout[47:24]), .abs_y(vout[23:0]));
        end else if (OP == 9) begin : g_op
            e8m15_exp2 u (.x(vin[23:0]), .y(vout[23:0]));
        end else if (OP == 10) begin : g_op
            e8m15_inv u (.x(vin[23:0]), .y(vout[23:0]));
        end else if (OP == 11) begin : g_op
            acc_add u (.x(vin[43:22]), .y(vin[21:0]), .z(vout[21:0]));
        end else if (OP == 12) begin : g_op
            acc_to_fp16 u (.acc(vin[21:0]), .h(vout[15:0]));
        end else if (OP == 13) begin : g_op
            acc_emit_subtile u (.acc_tile(vin[351:0]), .granule(vout[255:0]));
        end else if (OP == 14) begin : g_op
            cu_gemm_subtile u (.a_entry(vin[1023:0]), .b_entry(vin[2047:1024]),
                               .acc_in(vin[2399:2048]), .anchor(vin[2407:2400]),
                               .accumulate(vin[2408]), .acc_out(vout[351:0]));
        end else if (OP == 15) begin : g_op
            wire [23:0] x, s;
            fp16_to_e8m15 u_ld (.h(vin[15:0]), .x(x));
            e8m15_add     u_add (.a(x), .c(x), .sub(1'b0), .y(s));
            e8m15_to_fp16 u_st (.x(s), .h(vout[15:0]));
        end else begin : g_op
            wire [23:0] x, t, e, d, r, y;
            fp16_to_e8m15 u_ld   (.h(vin[15:0]), .x(x));
            e8m15_mul     u_mul1 (.a(x), .b(24'hBFB8AA), .y(t));   // -log2(e), VSETI immediate
            e8m15_exp2    u_exp  (.x(t), .y(e));
            e8m15_add     u_add  (.a(e), .c(24'h3F8000), .sub(1'b0), .y(d));  // + K1
            e8m15_inv     u_inv  (.x(d), .y(r));
            e8m15_mul     u_mul2 (.a(r), .b(x), .y(y));
            e8m15_to_fp16 u_st   (.x(y), .h(vout[15:0]));
        end
    endgenerate

endmodule
`default_nettype wire
