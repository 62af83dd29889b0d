`timescale 1ns/1ps
`default_nettype none
// ahbm_arith_tb: pure-Verilog vector bench for the AHBM PE numerics blocks of
// rtl/ahbm (fp32_* and bf16_*).
//
// Reads N input vectors from vin.hex ($readmemh), applies each to the block
// selected by OP (one block elaborated per build) and writes the N outputs to
// vout.hex ($writememh) in the current directory.  tests/unit/
// test_ahbm_arith_rtl.py builds the vectors, runs this bench and compares
// every output bit with models/ahbm/numerics.py.  Input packing (msb first):
//    0 fp32_add      {sub, a32, b32}   -> {y32}   (sub: y = a - b)
//    1 fp32_mul      {a32, b32}        -> {y32}
//    2 fp32_max      {a32, b32}        -> {y32}
//    3 bf16_to_fp32  {h16}             -> {f32}
//    4 fp32_to_bf16  {f32}             -> {h16}
//    5 fp32_exp      {x32}             -> {y32}
//    6 chain: bf16 load, exp, bf16 store   {h16} -> {h16}
module ahbm_arith_tb;
    parameter integer OP    = 0;
    parameter integer IN_W  = 32;
    parameter integer OUT_W = 32;
    parameter integer N     = 1;

    reg  [IN_W-1:0]  vin_mem  [0:N-1];
    reg  [OUT_W-1:0] vout_mem [0:N-1];
    reg  [IN_W-1:0]  vin;
    wire [OUT_W-1:0] vout;

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
        end else begin : g_op
            wire [31:0] x, e;
            bf16_to_fp32 u_ld  (.h(vin[15:0]), .f(x));
            fp32_exp     u_exp (.x(x), .y(e));
            fp32_to_bf16 u_st  (.f(e), .h(vout[15:0]));
        end
    endgenerate

    integer i;
    initial begin
        $readmemh("vin.hex", vin_mem);
        for (i = 0; i < N; i = i + 1) begin
            vin = vin_mem[i];
            #1;
            vout_mem[i] = vout;
        end
        $writememh("vout.hex", vout_mem);
        $finish;
    end
endmodule
`default_nettype wire
