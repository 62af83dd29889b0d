// vc_lanes: the vector core's 16-lane datapath for one chunk.
//
// Its clock: the operands are taken into registers at the falling edge of clk
// on the cycles `en` is set (l_clk: clk's falling edges gated by en,
// rtl/arith/clock_gate.v), and the lanes are combinational from those
// registers; the results are read at the next rising edge, as when the lanes
// were combinational from the operands themselves: every operand comes from
// registers on clk's rising edge, so it has settled by the falling edge and
// holds until the rising one. The owner sets `en` on every cycle it may read a
// result; on the other cycles the results are stale, and on Verilator the
// lanes are not evaluated at all (its scheduler evaluates combinational logic
// only on the edges of the clocks of the registers that feed it).
//
// * 16 vc_alu lanes (units.md V.6) computing `op` on operands a, b, c chosen
//   per operand by a 3-bit source code:
//     0 ROW   lane l of the V row given for that operand (row_a, row_b, row_c)
//     1 CONST the 24-bit value given for that operand (an S or K register, or a
//             reduction identity), the same in every lane
//     2 CREG  lane l of the chain register (the previous chain stage, "C")
//     3 TLO   tree[2l]   4 THI  tree[2l+1]   5 TSELF tree[l]
//             (the VRED combine steps of V.9 pair neighbouring tree slots)
// * the load/store conversions of V.7: FP16 -> E8M15 of the 16 lanes of an L1
//   word (VLD FP16) or of the FP16 rounding of a V row (VCVT dt 1), E8M15 ->
//   FP16 of a V row (VST FP16), FP32 -> E8M15 of the 8 elements of an L1 word
//   (VLD FP32) and E8M15 -> FP32 of one half of a V row (VST FP32).
// Within a working cycle, every block's inputs are held at constants unless
// its own enable is set.
`default_nettype none
`timescale 1ns/1ps
module vc_lanes (
    input  wire         clk,
    input  wire         en,           // a result is read at the next rising edge of clk
    input  wire         alu_en,
    input  wire [4:0]   op,
    input  wire [2:0]   src_a,
    input  wire [2:0]   src_b,
    input  wire [2:0]   src_c,
    input  wire [23:0]  const_a,
    input  wire [23:0]  const_b,
    input  wire [23:0]  const_c,
    input  wire [383:0] row_a,
    input  wire [383:0] row_b,
    input  wire [383:0] row_c,
    input  wire [383:0] creg,
    input  wire [383:0] tree,
    output wire [383:0] result,
    output wire [15:0]  pred,
    // conversions
    input  wire         ld16_en,      // VLD FP16: l1_word -> e_from_h
    input  wire         cvt_en,       // VCVT dt 1: FP16 rounding of cvt_row -> e_from_h
    input  wire         st16_en,      // VST FP16: cvt_row -> h_from_e
    input  wire         ld32_en,      // VLD FP32: l1_word -> e_from_f (8 elements)
    input  wire         st32_en,      // VST FP32: half of cvt_row -> f_from_e
    input  wire         half,         // FP32: 0 = elements 0..7 of the chunk, 1 = 8..15
    input  wire [255:0] l1_word,
    input  wire [383:0] cvt_row,
    output wire [383:0] e_from_h,
    output wire [255:0] h_from_e,
    output wire [191:0] e_from_f,
    output wire [255:0] f_from_e
);
    localparam [2:0] ROW = 3'd0, CONST = 3'd1, CREG = 3'd2, TLO = 3'd3, THI = 3'd4, TSELF = 3'd5;

    function automatic [23:0] pick(input [2:0] src, input [23:0] row_l, input [23:0] kval, input [23:0] c_l,
                                   input [23:0] t_lo, input [23:0] t_hi, input [23:0] t_self);
        case (src)
            ROW:     pick = row_l;
            CONST:   pick = kval;
            CREG:    pick = c_l;
            TLO:     pick = t_lo;
            THI:     pick = t_hi;
            TSELF:   pick = t_self;
            default: pick = 24'd0;
        endcase
    endfunction

    // the operands, taken at the falling edge of l_clk (zero until the first), all in one register
    wire l_clk;
    clock_gate #(.FALL_EDGE(1)) u_gate (.clk(clk), .en(en), .gclk(l_clk));
    wire         q_alu_en, q_ld16_en, q_cvt_en, q_st16_en, q_ld32_en, q_st32_en, q_half;
    wire [4:0]   q_op;
    wire [2:0]   q_src_a, q_src_b, q_src_c;
    wire [23:0]  q_const_a, q_const_b, q_const_c;
    wire [383:0] q_row_a, q_row_b, q_row_c, q_creg, q_tree, q_cvt_row;
    wire [255:0] q_l1_word;
    localparam integer OPS_W = 7 + 5 + 3 * 3 + 3 * 24 + 6 * 384 + 256;
    reg  [OPS_W-1:0] ops_q = {OPS_W{1'b0}};
    always @(negedge l_clk)
        ops_q <= {alu_en, ld16_en, cvt_en, st16_en, ld32_en, st32_en, half, op, src_a, src_b, src_c,
                  const_a, const_b, const_c, row_a, row_b, row_c, creg, tree, cvt_row, l1_word};
    assign {q_alu_en, q_ld16_en, q_cvt_en, q_st16_en, q_ld32_en, q_st32_en, q_half, q_op, q_src_a, q_src_b, q_src_c,
            q_const_a, q_const_b, q_const_c, q_row_a, q_row_b, q_row_c, q_creg, q_tree, q_cvt_row, q_l1_word} = ops_q;

    // the FP16 side of the conversions: what e8m15_to_fp16 produced (VST FP16, VCVT) per lane
    wire [255:0] h16;
    genvar l;
    generate
        for (l = 0; l < 16; l = l + 1) begin : g_lane
            wire [23:0] t_lo   = (l < 8) ? q_tree[24*((2*l) % 16) +: 24] : 24'd0;
            wire [23:0] t_hi   = (l < 8) ? q_tree[24*((2*l+1) % 16) +: 24] : 24'd0;
            wire [23:0] t_self = q_tree[24*l +: 24];
            wire [23:0] c_l    = q_creg[24*l +: 24];
            wire [23:0] a = !q_alu_en ? 24'd0 : pick(q_src_a, q_row_a[24*l +: 24], q_const_a, c_l, t_lo, t_hi, t_self);
            wire [23:0] b = !q_alu_en ? 24'd0 : pick(q_src_b, q_row_b[24*l +: 24], q_const_b, c_l, t_lo, t_hi, t_self);
            wire [23:0] c = !q_alu_en ? 24'd0 : pick(q_src_c, q_row_c[24*l +: 24], q_const_c, c_l, t_lo, t_hi, t_self);
            vc_alu u_alu (.op(q_op), .en(q_alu_en), .a(a), .b(b), .c(c), .r(result[24*l +: 24]), .pred(pred[l]));

            wire [23:0] e_in = (q_st16_en || q_cvt_en) ? q_cvt_row[24*l +: 24] : 24'd0;
            e8m15_to_fp16 u_h (.x(e_in), .h(h16[16*l +: 16]));
            wire [15:0] h_in = q_ld16_en ? q_l1_word[16*l +: 16] : q_cvt_en ? h16[16*l +: 16] : 16'd0;
            fp16_to_e8m15 u_e (.h(h_in), .x(e_from_h[24*l +: 24]));
        end
        for (l = 0; l < 8; l = l + 1) begin : g_f32
            wire [31:0] f_in = q_ld32_en ? q_l1_word[32*l +: 32] : 32'd0;
            fp32_to_e8m15 u_e (.f(f_in), .x(e_from_f[24*l +: 24]));
            wire [23:0] e_in = !q_st32_en ? 24'd0 : q_half ? q_cvt_row[24*(l+8) +: 24] : q_cvt_row[24*l +: 24];
            e8m15_to_fp32 u_f (.x(e_in), .f(f_from_e[32*l +: 32]));
        end
    endgenerate
    assign h_from_e = h16;
endmodule
`default_nettype wire
