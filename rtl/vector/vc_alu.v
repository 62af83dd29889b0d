`default_nettype none
`timescale 1ns/1ps
// vc_alu: one lane of the vector core's E8M15 arithmetic, opcodes 00..11 of
// units.md V.8, with the numerics of V.6 (vector_core.v instantiates one per
// lane).
//
//   op       the ISA opcode: 00 VMOV 01 VNEG 02 VABS 03 VADD 04 VSUB 05 VMUL
//            06 VFMA 07 VFNMA 08 VMAX 09 VMIN 0A VSEL 0B VCMPLT 0C VCMPGT
//            0D VCMPEQ 0E VEXP2 0F VLOG2 10 VINV 11 VRSQRT
//   en       1 = the lane computes; 0 = every sub-block's inputs are held at
//            constants (and r, pred are 0), so the simulator does not
//            re-evaluate idle lanes
//   a, b, c  E8M15 operands after source selection
//   r        the E8M15 result; for 0B..0D the chain-stage value, 1.0 or +0
//   pred     the compare bit for 0B..0D (V.6.1), 0 for every other op
//
// Every op 00..0D is X*Y + Z through e8m15_fma (V.6.3) with X, Y, Z chosen
// by the operand-selection table of V.6.2:
//   VMOV   a            1.0  +0       VMUL   a          b    +0
//   VNEG   -a           1.0  +0       VFMA   a          b    c
//   VABS   |a|          1.0  +0       VFNMA  -a         b    c
//   VADD   a            1.0  c        VMAX   lt ? b : a 1.0  +0
//   VSUB   a            1.0  -c       VMIN   gt ? b : a 1.0  +0
//   VSEL   c[22:0] != 0 ? a : b   1.0  +0
//   VCMPxx pred ? 1.0 : +0        1.0  +0
// (lt, gt, eq from e8m15_cmp on (a, b); VSEL selects on the value of c, not
// on a predicate). Ops 0E..11 go through e8m15_tcu (V.6.4) with
// fsel = op - 0x0E. Opcodes above 0x11 give r = 0, pred = 0.
// Only the block an op needs sees changing inputs: e8m15_cmp for VMAX, VMIN
// and VCMPxx, e8m15_fma for 00..0D, e8m15_tcu for 0E..11.
module vc_alu (
    input  wire [4:0]  op,
    input  wire        en,
    input  wire [23:0] a,
    input  wire [23:0] b,
    input  wire [23:0] c,
    output wire [23:0] r,
    output wire        pred
);
    localparam [4:0] OP_VMOV = 5'h00, OP_VNEG = 5'h01, OP_VABS = 5'h02, OP_VADD = 5'h03,
                     OP_VSUB = 5'h04, OP_VMUL = 5'h05, OP_VFMA = 5'h06, OP_VFNMA = 5'h07,
                     OP_VMAX = 5'h08, OP_VMIN = 5'h09, OP_VSEL = 5'h0A, OP_VCMPLT = 5'h0B,
                     OP_VCMPGT = 5'h0C, OP_VCMPEQ = 5'h0D, OP_VEXP2 = 5'h0E, OP_VRSQRT = 5'h11;
    localparam [23:0] ONE = 24'h3F8000, ZERO = 24'h000000, SIGN = 24'h800000;

    wire use_fma = en && (op <= OP_VCMPEQ);
    wire use_tcu = en && (op >= OP_VEXP2) && (op <= OP_VRSQRT);
    wire is_cmp  = (op == OP_VCMPLT) || (op == OP_VCMPGT) || (op == OP_VCMPEQ);
    wire use_cmp = en && (is_cmp || (op == OP_VMAX) || (op == OP_VMIN));

    // --- compare (V.6.1) ----------------------------------------------------------
    wire lt, gt, eqn;
    e8m15_cmp u_cmp (.a(use_cmp ? a : ZERO), .b(use_cmp ? b : ZERO), .lt(lt), .gt(gt), .eq_nonan(eqn));
    wire p_cmp = (op == OP_VCMPLT) ? lt : (op == OP_VCMPGT) ? gt : (op == OP_VCMPEQ) ? eqn : 1'b0;

    // --- operand selection (V.6.2) and the FMA datapath (V.6.3) --------------------
    // A function, so the selection is one update of {x, y, z} (a reg written step by
    // step in an always block would show the simulator every intermediate value).
    function [71:0] select_xyz(input [4:0] o, input [23:0] va, input [23:0] vb, input [23:0] vc,
                               input lt_ab, input gt_ab, input p_ab);
        reg [23:0] sx, sy, sz;
        begin
            sx = ZERO;
            sy = ONE;
            sz = ZERO;
            case (o)
                OP_VMOV:   sx = va;
                OP_VNEG:   sx = va ^ SIGN;
                OP_VABS:   sx = {1'b0, va[22:0]};
                OP_VADD:   begin sx = va; sz = vc; end
                OP_VSUB:   begin sx = va; sz = vc ^ SIGN; end
                OP_VMUL:   begin sx = va; sy = vb; end
                OP_VFMA:   begin sx = va; sy = vb; sz = vc; end
                OP_VFNMA:  begin sx = va ^ SIGN; sy = vb; sz = vc; end
                OP_VMAX:   sx = lt_ab ? vb : va;
                OP_VMIN:   sx = gt_ab ? vb : va;
                OP_VSEL:   sx = (vc[22:0] != 23'd0) ? va : vb;
                OP_VCMPLT, OP_VCMPGT, OP_VCMPEQ: sx = p_ab ? ONE : ZERO;
                default:   ;
            endcase
            select_xyz = {sx, sy, sz};
        end
    endfunction

    wire [71:0] xyz = use_fma ? select_xyz(op, a, b, c, lt, gt, p_cmp) : 72'd0;
    wire [23:0] fma_r;
    e8m15_fma u_fma (.x(xyz[71:48]), .y(xyz[47:24]), .z(xyz[23:0]), .r(fma_r));

    // --- transcendentals (V.6.4) ---------------------------------------------------
    wire [4:0]  fsel5 = op - OP_VEXP2;
    wire [23:0] tcu_r;
    e8m15_tcu u_tcu (.fsel(use_tcu ? fsel5[1:0] : 2'd0), .a(use_tcu ? a : ZERO), .r(tcu_r));

    assign r    = use_fma ? fma_r : use_tcu ? tcu_r : ZERO;
    assign pred = en & p_cmp;

    wire unused = &{1'b0, fsel5[4:2]};
endmodule
`default_nettype wire
