`timescale 1ns/1ps
`default_nettype none
// arith_tb: pure-Verilog vector bench for the arithmetic blocks of rtl/arith.
//
// Applies the vectors of vin.hex to the block selected by OP (one block
// elaborated per build) and writes vout.hex (rtl/bench/vector_bench.vh).  tests/unit/
// test_arith_rtl.py builds the vectors, runs this bench and compares every
// output bit with the Python model.  Input packing per OP (msb first):
//    0 fp16_to_e8m15   {h16}                                  -> {x24}
//    1 e8m15_to_fp16   {x24}                                  -> {h16}
//    2 fp32_to_e8m15   {f32}                                  -> {x24}
//    3 e8m15_to_fp32   {x24}                                  -> {f32}
//    4 vc_alu          {en, op5, a24, b24, c24}               -> {pred, r24}
//    5 e8m15_fma       {x24, y24, z24}                        -> {r24}
//    6 e8m15_cmp       {a24, b24}                             -> {lt, gt, eq_nonan}
//    7 e8m15_tcu       {fsel2, a24}                           -> {r24}
//    8 e8m15_pack      {mag48, ebase10, sign, stk, cancel}    -> {r24}
//   11 acc_add         {x22, y22}                             -> {z22}
//   12 acc_to_fp16     {acc22}                                -> {h16}
//   13 acc_emit_subtile {acc_tile352}                         -> {granule256}
//   14 cu_gemm_subtile {accumulate, anchor8, acc_in352, b_entry1024, a_entry1024} -> {acc_out352}
//   15 chain: FP16 load, VADD x+x (vc_alu), FP16 store        {h16} -> {h16}
//   16 chain: FP16 load, SiLU through vc_alu (VMUL by -log2e 0xBFB8AA, VEXP2,
//             VADD K1, VINV, VMUL by x), FP16 store           {h16} -> {h16}
//   17 acc_convert     {anchor8, sb8, sa8, dot19}             -> {x22}
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
            vc_alu u (.en(vin[77]), .op(vin[76:72]), .a(vin[71:48]), .b(vin[47:24]), .c(vin[23:0]),
                      .r(vout[23:0]), .pred(vout[24]));
        end else if (OP == 5) begin : g_op
            e8m15_fma u (.x(vin[71:48]), .y(vin[47:24]), .z(vin[23:0]), .r(vout[23:0]));
        end else if (OP == 6) begin : g_op
            e8m15_cmp u (.a(vin[47:24]), .b(vin[23:0]), .lt(vout[2]), .gt(vout[1]), .eq_nonan(vout[0]));
        end else if (OP == 7) begin : g_op
            e8m15_tcu u (.fsel(vin[25:24]), .a(vin[23:0]), .r(vout[23:0]));
        end else if (OP == 8) begin : g_op
            e8m15_pack u (.mag(vin[60:13]), .ebase(vin[12:3]), .sign(vin[2]), .stk(vin[1]),
                          .cancel(vin[0]), .r(vout[23:0]));
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
            wire        p;
            fp16_to_e8m15 u_ld  (.h(vin[15:0]), .x(x));
            vc_alu        u_add (.en(1'b1), .op(5'h03), .a(x), .b(24'd0), .c(x), .r(s), .pred(p));
            e8m15_to_fp16 u_st  (.x(s), .h(vout[15:0]));
        end else if (OP == 17) begin : g_op
            acc_convert u (.dot(vin[18:0]), .sa(vin[26:19]), .sb(vin[34:27]), .anchor(vin[42:35]),
                           .x(vout[21:0]));
        end else begin : g_op
            localparam [23:0] NEG_LOG2E = 24'hBFB8AA, K1 = 24'h3F8000;  // VSETI immediate, 1.0
            wire [23:0] x, t, e, d, q, y;
            wire [4:0]  p;
            fp16_to_e8m15 u_ld   (.h(vin[15:0]), .x(x));
            vc_alu        u_mul1 (.en(1'b1), .op(5'h05), .a(x), .b(NEG_LOG2E), .c(24'd0), .r(t), .pred(p[0]));
            vc_alu        u_exp  (.en(1'b1), .op(5'h0E), .a(t), .b(24'd0), .c(24'd0), .r(e), .pred(p[1]));
            vc_alu        u_add  (.en(1'b1), .op(5'h03), .a(e), .b(24'd0), .c(K1), .r(d), .pred(p[2]));
            vc_alu        u_inv  (.en(1'b1), .op(5'h10), .a(d), .b(24'd0), .c(24'd0), .r(q), .pred(p[3]));
            vc_alu        u_mul2 (.en(1'b1), .op(5'h05), .a(q), .b(x), .c(24'd0), .r(y), .pred(p[4]));
            e8m15_to_fp16 u_st   (.x(y), .h(vout[15:0]));
        end
    endgenerate

endmodule
`default_nettype wire
