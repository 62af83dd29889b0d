// Vector-core arithmetic boundary: one lane of E8M15 arithmetic.
//
// vector_core.v instantiates 16 of these (one per lane). The core never
// computes a number itself: every arithmetic opcode goes through this
// boundary, and the numbers come from the E8M15 blocks of rtl/arith
// (docs/numerics.md states their rules; models/numerics computes the same bits).
//
//   op       the program word's opcode [31:27] (VMOV 00 .. VINV 10)
//   a, b, c  E8M15 operands (24 bits) after source selection; the opcodes read
//            VMOV/VNEG/VABS/VEXP2/VINV: a; VADD/VSUB: a, c;
//            VMUL/VMAX/VMIN: a, b; VFMA/VFNMA: a, b, c
//   r        the E8M15 result (24 bits)
//   ok       1 = `op` is wired to an implementation (depends on op only). The
//            core faults F_OPCODE (4) on an opcode 00..10 whose ok is 0
//            (VSEL, VCMPxx, VLOG2 today), so no program runs on an operation
//            that is not wired.
//
// Wiring: one e8m15_fma serves VADD (a*1.0 + c), VSUB (a*1.0 - c), VMUL
// (a*b + -0), VFMA (a*b + c) and VFNMA (c - a*b), exactly as rtl/arith's
// e8m15_add / e8m15_mul build them on the same datapath; e8m15_minmax (VMAX,
// VMIN), e8m15_negabs (VNEG, VABS), e8m15_exp2, e8m15_inv. VMOV passes a.
// Each block's inputs are held at 0 unless its opcode is the one executing,
// so Icarus evaluates a block only while it is in use.
`default_nettype none
`timescale 1ns/1ps
module vc_alu (
    input  wire [4:0]  op,
    input  wire [23:0] a,
    input  wire [23:0] b,
    input  wire [23:0] c,
    output reg  [23:0] r,
    output reg         ok
);
    localparam [4:0] OP_VMOV = 5'h00, OP_VNEG = 5'h01, OP_VABS = 5'h02, OP_VADD = 5'h03,
                     OP_VSUB = 5'h04, OP_VMUL = 5'h05, OP_VFMA = 5'h06, OP_VFNMA = 5'h07,
                     OP_VMAX = 5'h08, OP_VMIN = 5'h09, OP_VEXP2 = 5'h0E, OP_VINV = 5'h10;
    localparam [23:0] ONE = 24'h3F8000, NEG_ZERO = 24'h800000;

    wire is_addsub = (op == OP_VADD) || (op == OP_VSUB);
    wire is_fma    = is_addsub || (op == OP_VMUL) || (op == OP_VFMA) || (op == OP_VFNMA);
    wire is_mm     = (op == OP_VMAX) || (op == OP_VMIN);
    wire is_na     = (op == OP_VNEG) || (op == OP_VABS);

    wire [23:0] fa = is_fma ? a : 24'd0;
    wire [23:0] fb = is_addsub ? ONE : (is_fma ? b : 24'd0);
    wire [23:0] fc = (op == OP_VMUL) ? NEG_ZERO : (is_fma ? c : 24'd0);
    wire [23:0] fma_y, max_y, min_y, neg_y, abs_y, exp_y, inv_y;
    e8m15_fma    u_fma (.a(fa), .b(fb), .c(fc), .neg_prod(op == OP_VFNMA), .neg_add(op == OP_VSUB), .y(fma_y));
    e8m15_minmax u_mm  (.a(is_mm ? a : 24'd0), .b(is_mm ? b : 24'd0), .max_y(max_y), .min_y(min_y));
    e8m15_negabs u_na  (.x(is_na ? a : 24'd0), .neg_y(neg_y), .abs_y(abs_y));
    e8m15_exp2   u_exp (.x((op == OP_VEXP2) ? a : 24'd0), .y(exp_y));
    e8m15_inv    u_inv (.x((op == OP_VINV) ? a : 24'd0), .y(inv_y));

    always @* begin
        ok = 1'b1;
        case (op)
            OP_VMOV:  r = a;
            OP_VNEG:  r = neg_y;
            OP_VABS:  r = abs_y;
            OP_VADD, OP_VSUB, OP_VMUL, OP_VFMA, OP_VFNMA: r = fma_y;
            OP_VMAX:  r = max_y;
            OP_VMIN:  r = min_y;
            OP_VEXP2: r = exp_y;
            OP_VINV:  r = inv_y;
            default:  begin r = 24'd0; ok = 1'b0; end
        endcase
    end
endmodule
`default_nettype wire
