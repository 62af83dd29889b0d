// vc_decode: the vector core's decoder of the word at pc (units.md V.5, V.10), combinational; vc_exec.v
// instantiates it once (u_decode) and acts on its answer the cycle the word fires (vc_timing's tm_fire).
//
// What the word does when it fires: it faults (dc_fault, dc_code); or waits at S_DEC for the fills
// (dc_hold: VBAR, VFILL, VHALT); or retires the kernel (dc_halt: VHALT); or retires at decode as a
// one-cycle word moving pc by dc_by (dc_step); or goes on in state dc_next (an ALU word: S_ISSUE or
// S_GATHER). A word that does not fault or wait reports its issue to the hazard model at decode
// (dc_issue, class dc_cls; an ALU word issues at S_ISSUE instead), VRED also a predicate read (dc_hz_rd:
// dc_read of P[dc_rp]). dc_sr_we: the word writes S[vd] with dc_sr_d.
//
// Its inputs are the word, whether it is an ALU word and the mode's chain depth (vc_exec derives both
// for its own use too), and what the decision reads of the state: the immediate word after it, VL,
// mode, the fills outstanding, whether a loop is open, the last pr / pm (D4, D5), S[va], P[last pr] and
// element 0 of V[va] (VBCAST to S).
`default_nettype none
`timescale 1ns/1ps
module vc_decode (
    /* verilator lint_off UNUSEDSIGNAL */  // the decision reads the fields below, not every bit of the word
    input  wire [31:0]  fw,           // the word at pc
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         is_alu,       // the word is an ALU word (vc_exec's f_alu)
    input  wire [2:0]   depth,        // the mode's chain depth, 1, 2 or 4 (vc_exec's mode_depth)
    input  wire [23:0]  imm,          // the word after it, bits [23:0] (VSETI's immediate)
    input  wire [1:0]   mode,
    input  wire [7:0]   vl,
    input  wire [8:0]   fills_out,
    input  wire         lp_act,
    input  wire [1:0]   last_pr,
    input  wire [1:0]   last_pm,
    input  wire [23:0]  s_va,         // S[va]
    input  wire [127:0] p_last,       // P[last_pr]
    input  wire [23:0]  v_va0,        // element 0 of V[va]
    output reg          dc_fault,
    output reg  [31:0]  dc_code,
    output reg          dc_hold,
    output reg          dc_halt,
    output reg          dc_step,
    output reg  [8:0]   dc_by,
    output reg  [4:0]   dc_next,
    output reg          dc_issue,
    output reg  [1:0]   dc_cls,
    output reg          dc_hz_rd,
    output reg          dc_read,
    output reg  [1:0]   dc_rp,
    output reg          dc_anyall,
    output reg          dc_sr_we,
    output reg  [23:0]  dc_sr_d
);
`include "vc_exec_defs.vh"

    wire [4:0]  f_op = fw[31:27];
    wire [1:0]  f_sa = fw[26:25], f_sb = fw[24:23], f_sc = fw[22:21];
    wire [2:0]  f_dt = fw[26:24];
    wire [2:0]  f_vc = fw[7:5];
    wire [1:0]  f_pr = fw[4:3];
    wire        f_hasc = (f_sa == SRC_C) || (f_sb == SRC_C) || (f_sc == SRC_C);
    wire [127:0] vl_lanes = (vl >= 8'd128) ? {128{1'b1}} : ((128'd1 << vl) - 128'd1);

    always @* begin
        dc_fault = 1'b0; dc_code = 32'd0; dc_hold = 1'b0; dc_halt = 1'b0; dc_step = 1'b0; dc_by = 9'd1;
        dc_next = S_DEC; dc_cls = HZ_OTHER;
        dc_hz_rd = 1'b0; dc_read = 1'b0; dc_rp = f_pr; dc_anyall = 1'b0;
        dc_sr_we = 1'b0; dc_sr_d = imm;
        if (is_alu) begin
            if (mode == M_TREE) begin dc_fault = 1'b1; dc_code = F_OPCODE; end        // D6 (normative)
            else if (f_hasc)    begin dc_fault = 1'b1; dc_code = F_CHAIN; end
            else dc_next = (depth == 3'd1) ? S_ISSUE : S_GATHER;
        end else case (f_op)
            OP_VCVT: if (f_dt != 3'd1 && f_dt != 3'd2) begin dc_fault = 1'b1; dc_code = F_DTYPE; end
                     else begin dc_cls = HZ_DRAINS; dc_next = S_CVT; end
            OP_VRED: if (f_vc[2:1] == 2'b11) begin                                      // ANY / ALL on P[last_pr] (D4)
                         dc_hz_rd = 1'b1; dc_read = 1'b1; dc_rp = last_pr; dc_anyall = 1'b1;
                         dc_sr_we = 1'b1;
                         dc_sr_d  = (f_vc[0] ? ((p_last | ~vl_lanes) == {128{1'b1}})
                                             : ((p_last & vl_lanes) != 128'd0)) ? E8_ONE : 24'd0;
                         dc_step  = 1'b1;
                     end else if (vl[3:0] != 4'd0) begin dc_fault = 1'b1; dc_code = F_REDVL; end
                     else if (mode != M_TREE)      begin dc_fault = 1'b1; dc_code = F_OPCODE; end
                     else begin
                         dc_hz_rd = 1'b1; dc_read = (f_vc[2:0] == K_EXPSUM) && (last_pm != 2'd0);
                         dc_next  = S_RED;                                              // red_start begins the engine (vc_red)
                     end
            OP_VLD, OP_VST: if (f_dt != 3'd1 && f_dt != 3'd2) begin dc_fault = 1'b1; dc_code = F_DTYPE; end
                            else begin dc_cls = HZ_DRAINS; dc_next = (f_op == OP_VLD) ? S_LD : S_ST; end
            OP_VBCAST: begin
                dc_cls = HZ_DRAINS;
                if (f_sa == SRC_S) dc_next = S_BC;
                else begin dc_sr_we = 1'b1; dc_sr_d = v_va0; dc_step = 1'b1; end
            end
            OP_VSHUF:    begin dc_cls = HZ_DRAINS; dc_next = S_SHUF; end
            OP_VSETVL:   if (s_va == 24'd0 || s_va > 24'd128) begin dc_fault = 1'b1; dc_code = F_VL; end
                         else dc_step = 1'b1;
            OP_VSETMODE: begin dc_cls = HZ_DRAINS; dc_step = 1'b1; end
            OP_VSETI:    begin dc_sr_we = (f_sa != SRC_K); dc_step = 1'b1; dc_by = 9'd2; end
            OP_VLOOP:    if (lp_act) begin dc_fault = 1'b1; dc_code = F_LOOP; end
                         else dc_step = 1'b1;
            OP_VBAR:     if (fills_out == 9'd0) dc_step = 1'b1;
                         else dc_hold = 1'b1;
            OP_VFILL, OP_VDRAIN: if (f_op == OP_VDRAIN || fills_out == 9'd0) dc_next = S_XFER;
                                 else dc_hold = 1'b1;
            default:     if (fills_out == 9'd0) dc_halt = 1'b1;                        // VHALT
                         else dc_hold = 1'b1;
        endcase
        dc_issue = !is_alu && !dc_fault && !dc_hold && !dc_halt;
    end
endmodule
`default_nettype wire
