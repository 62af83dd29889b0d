// vc_lanes: the vector core's 16-lane datapath for one chunk (combinational).
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
// Every block's inputs are held at constants unless its enable is set, so an
// idle block costs the simulator nothing.
`default_nettype none
`timescale 1ns/1ps
module vc_lanes (
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

    // the FP16 side of the conversions: what e8m15_to_fp16 produced (VST FP16, VCVT) per lane
    wire [255:0] h16;
    genvar l;
    generate
        for (l = 0; l < 16; l = l + 1) begin : g_lane
            wire [23:0] t_lo   = (l < 8) ? tree[24*((2*l) % 16) +: 24] : 24'd0;
            wire [23:0] t_hi   = (l < 8) ? tree[24*((2*l+1) % 16) +: 24] : 24'd0;
            wire [23:0] t_self = tree[24*l +: 24];
            wire [23:0] c_l    = creg[24*l +: 24];
            wire [23:0] a = !alu_en ? 24'd0 : pick(src_a, row_a[24*l +: 24], const_a, c_l, t_lo, t_hi, t_self);
            wire [23:0] b = !alu_en ? 24'd0 : pick(src_b, row_b[24*l +: 24], const_b, c_l, t_lo, t_hi, t_self);
            wire [23:0] c = !alu_en ? 24'd0 : pick(src_c, row_c[24*l +: 24], const_c, c_l, t_lo, t_hi, t_self);
            vc_alu u_alu (.op(op), .en(alu_en), .a(a), .b(b), .c(c), .r(result[24*l +: 24]), .pred(pred[l]));

            wire [23:0] e_in = (st16_en || cvt_en) ? cvt_row[24*l +: 24] : 24'd0;
            e8m15_to_fp16 u_h (.x(e_in), .h(h16[16*l +: 16]));
            wire [15:0] h_in = ld16_en ? l1_word[16*l +: 16] : cvt_en ? h16[16*l +: 16] : 16'd0;
            fp16_to_e8m15 u_e (.h(h_in), .x(e_from_h[24*l +: 24]));
        end
        for (l = 0; l < 8; l = l + 1) begin : g_f32
            wire [31:0] f_in = ld32_en ? l1_word[32*l +: 32] : 32'd0;
            fp32_to_e8m15 u_e (.f(f_in), .x(e_from_f[24*l +: 24]));
            wire [23:0] e_in = !st32_en ? 24'd0 : half ? cvt_row[24*(l+8) +: 24] : cvt_row[24*l +: 24];
            e8m15_to_fp32 u_f (.x(e_in), .f(f_from_e[32*l +: 32]));
        end
    endgenerate
    assign h_from_e = h16;
endmodule
`default_nettype wire
