// The AHBM fp32 functions against their compiled twins (rtl/ahbm/vpi/ahbm_arith.c), on Icarus with the
// module loaded (tests/unit/ahbm/test_ahbm_arith_vpi.py). Reads N vectors {a, b} from vin.hex and writes,
// for each, the Verilog function's and the twin's result of every operation side by side to vout.hex:
// word 2k is fp32_lib.vh's, word 2k + 1 the twin's, for k = add, sub, mul, div, max, exp(a),
// f32_to_bf16(a), bf16_to_f32(a[15:0]), and f32_add(f32_mul(a, b), f32_mul(c, d)) against $ahbm_f32_mac2
// with c, d the halves of a and b crossed. The test compares the pairs.
`timescale 1ns/1ps
`default_nettype none
module ahbm_arith_vpi_tb;
`include "fp32_lib.vh"
    parameter integer N = 1;
    localparam integer W = 18;              // output words per vector
    reg [63:0] vin [0:N-1];
    reg [31:0] vout [0:W*N-1];
    reg [31:0] a, b, c, d;
    integer i;
    initial begin
        $readmemh("vin.hex", vin);
        for (i = 0; i < N; i = i + 1) begin
            a = vin[i][63:32];
            b = vin[i][31:0];
            c = {a[15:0], b[31:16]};
            d = {b[15:0], a[31:16]};
            vout[W*i + 0]  = f32_add(a, b);              vout[W*i + 1]  = $ahbm_f32_add(a, b);
            vout[W*i + 2]  = f32_sub(a, b);              vout[W*i + 3]  = $ahbm_f32_sub(a, b);
            vout[W*i + 4]  = f32_mul(a, b);              vout[W*i + 5]  = $ahbm_f32_mul(a, b);
            vout[W*i + 6]  = f32_div(a, b);              vout[W*i + 7]  = $ahbm_f32_div(a, b);
            vout[W*i + 8]  = f32_max(a, b);              vout[W*i + 9]  = $ahbm_f32_max(a, b);
            vout[W*i + 10] = f32_exp(a);                 vout[W*i + 11] = $ahbm_f32_exp(a);
            vout[W*i + 12] = {16'd0, f32_to_bf16(a)};    vout[W*i + 13] = {16'd0, $ahbm_f32_to_bf16(a)};
            vout[W*i + 14] = bf16_to_f32(a[15:0]);       vout[W*i + 15] = $ahbm_bf16_to_f32(a[15:0]);
            vout[W*i + 16] = f32_add(f32_mul(a, b), f32_mul(c, d));
            vout[W*i + 17] = $ahbm_f32_mac2(a, b, c, d);
        end
        $writememh("vout.hex", vout);
        $finish;
    end
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
