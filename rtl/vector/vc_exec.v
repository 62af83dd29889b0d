// vc_exec: the vector core's kernel: architectural state and the sequencer (units.md V.1-V.11).
//
// State: IMEM 512 x 32, L1 512 x 256 (one write port of its own, one from the
// link), V0..V15 (128 E8M15 elements, chunk k of register r at vr[{r,k}]),
// S0..S15, K3, P0..P3, VL, mode, descriptors A0..A7 (40-bit base, four
// {18-bit signed stride, 16-bit bound}), the loop and the pending F_CUDATA.
// `start` runs the kernel from `start_pc` until VHALT or a fault, then pulses
// `done` with `fault` and `result` (the fault code, or the cycle count).
//
// One word at a time, in order; vc_timing holds each word at S_DEC until upstream's cycle (docs/vector_core.md):
//   S_BOUND   an instruction boundary: a pending F_CUDATA faults here, then the
//             loop closes if pc == loop_end (count > 1: back to the top)
//   S_DEC     decode the word at pc; faults checked at decode; one-cycle words
//             retire here; VBAR, VHALT and a VFILL behind an outstanding one
//             wait here
//   S_GATHER  chains (D2, D4): take the next D-1 words as stages
//   S_ISSUE   an ALU word or chain: the hazard reports (H1, H2, H4), then S_ALU
//   S_ALU     one stage of one chunk per cycle through the 16 lanes; the last
//             stage writes V[vd] (elements below VL, under pm) or P[pr]
//   S_CVT, S_SHUF, S_BC   one chunk per cycle, whole chunks
//   S_LD, S_ST            one walk element per cycle (FP32: two per chunk)
//   S_RED     VRED kinds 0..5 in the exact order of V.9 (a tree register of
//             16 slots, pairs combined in the lanes, one tree level a cycle)
//   S_XFER    VFILL / VDRAIN: vc_xfer sends the flits (F_LEN first); a VDRAIN
//             retires once its last flit has left
//
// Structure: the decoder of the word at pc is vc_decode.v (dc_*: fault, wait, one-cycle retirement or the
// next state, its hazard report and S write); here a combinational block decides how the cycle ends
// (end_*: the kernel retires, or the word retires and pc moves on), then six clocked processes, one per concern,
// each register written by exactly one: the envelope's writes (IMEM, descriptors); the sequencer (st,
// pc, the word, chunk / half / stage, the loop, the cycle count); the ALU word's stages (the chain
// gathered at S_GATHER); write-back (V, P, S, K3, VL, mode, the last pr / pm, L1); the hazard report's
// strobes; retirement (done, fault, result, insts, F_CUDATA pending).
`default_nettype none
`timescale 1ns/1ps
module vc_exec #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
`include "vc_timing_params.vh"
) (
    input  wire         clk,
    input  wire         resetn,
    // the envelope (IMEM / DESC writes happen only while no kernel runs)
    input  wire         imem_we,
    input  wire [8:0]   imem_wa,
    input  wire [31:0]  imem_wd,
    input  wire         desc_we,
    input  wire [2:0]   desc_ad,
    input  wire [2:0]   desc_fld,
    input  wire [39:0]  desc_val,
    input  wire         start,
    input  wire [8:0]   start_pc,
    output reg          done,
    output reg          fault,
    output reg  [31:0]  result,
    // the link
    output wire         x_push,
    output wire [287:0] x_flit,
    input  wire         xq_full,
    input  wire [15:0]  x_sent,
    output wire         fill_issue,
    output wire [8:0]   fill_l1,
    input  wire [8:0]   fills_out,
    input  wire         ext_we,
    input  wire [8:0]   ext_wa,
    input  wire [255:0] ext_wd,
    input  wire         cud_set,
    // status
    output wire [127:0] hazards,      // report counts {H4, H3, H2, H1} (units.md V.8), 32 bits each
    output reg  [31:0]  insts,
    output wire         running
);
`include "vc_exec_defs.vh"

    // ============================================================ state
    reg [31:0]  imem [0:511];
    reg [255:0] l1   [0:511];
    reg [383:0] vr   [0:127];
    reg [23:0]  sr   [0:15];
    reg [127:0] preg [0:3];
    reg [23:0]  k3;
    reg [7:0]   vl;
    reg [1:0]   mode;
    reg [39:0]  d_base [0:7];
    reg [17:0]  d_st   [0:31];      // {ad, dim}
    reg [15:0]  d_bd   [0:31];
    reg         lp_act;
    reg [23:0]  lp_cnt;
    reg [8:0]   lp_top, lp_end;
    reg [1:0]   last_pr, last_pm;   // of the most recent ALU / VRED / chain word (D4) and ALU word (D5)
    reg         cud_pend;

    integer i0;
    initial begin  // memories start at zero (power-on); reset does not clear IMEM, L1 and V (units.md V.1)
        for (i0 = 0; i0 < 512; i0 = i0 + 1) begin
            imem[i0] = 32'd0;
            l1[i0]   = 256'd0;
        end
        for (i0 = 0; i0 < 128; i0 = i0 + 1) vr[i0] = 384'd0;
    end

    // ============================================================ sequencer registers
    reg [4:0]   st;
    reg [8:0]   pc;
    reg [31:0]  ir;
    reg [31:0]  cycles;
    reg [2:0]   ch;                 // chunk
    reg         half;               // FP32: second word of the chunk
    reg [1:0]   stg;                // chain stage being computed
    reg [2:0]   depth;              // 1, 2 or 4
    reg [2:0]   g_k;                // next stage to gather
    reg [19:0]  g_op;               // 4 x 5 bits
    reg [23:0]  g_sel;              // 4 x {sa, sb, sc}
    reg [287:0] g_kv;               // 4 x {ka, kb, kc}, 24 bits each
    reg [35:0]  g_rn;               // stages 1..3: {S/K register number of a, b, c}, 4 bits each (H2 only)
    reg [3:0]   h_va, h_vb, h_vc;   // the head's vector sources
    reg [3:0]   g_vd;
    reg [1:0]   g_pr, g_pm;
    reg         g_cmp;
    reg [383:0] creg;
    reg [3:0]   shift;
    reg         xf_go;              // the cycle vc_xfer takes a VFILL / VDRAIN
    reg         cud_clr;

    assign running = (st != S_IDLE);
    // ============================================================ timing (vc_timing: upstream's cycles)
    // A word waits at S_DEC until vc_timing lets it enter execute (`word_exec`, the execute probe: `cycles`
    // is then its execute time t in upstream's kernel-count terms, clients/vec_timing/README.md), then until
    // it may proceed (`tm_fire`: VBAR, VFILL and VHALT also wait for the fills).
    wire        tm_may_exec, tm_may_fire;
    wire [31:0] tm_halt;
    reg         dec_seen;                               // the word at S_DEC has entered execute
    wire        word_exec = (st == S_DEC) && tm_may_exec && !dec_seen;
    wire        tm_fire   = (st == S_DEC) && tm_may_fire;

    // ============================================================ decode of the word at pc
    wire [31:0] fw   = imem[pc];
    /* verilator lint_off UNUSEDSIGNAL */  // bit 0 of a gathered stage and bits [31:24] of an immediate are not read
    wire [8:0]  g_addr = pc + {6'd0, g_k};      // IMEM addresses wrap modulo 512 (a 9-bit pc)
    wire [8:0]  i_addr = pc + 9'd1;
    wire [31:0] gw   = imem[g_addr];
    wire [31:0] immw = imem[i_addr];
    /* verilator lint_on UNUSEDSIGNAL */
    wire [4:0]  f_op = fw[31:27];
    wire [1:0]  f_sa = fw[26:25], f_sb = fw[24:23], f_sc = fw[22:21];
    wire [3:0]  f_vd = fw[20:17], f_va = fw[16:13], f_vb = fw[12:9], f_vc = fw[8:5];
    wire [1:0]  f_pr = fw[4:3], f_pm = fw[2:1];
    wire [2:0]  f_dt = fw[26:24], f_ad = fw[23:21];
    wire        f_alu = (f_op <= OP_ALU_LAST);
    wire        f_cmp = (f_op >= 5'h0B) && (f_op <= 5'h0D);
    wire [4:0]  g_opc = gw[31:27];
    wire [1:0]  g_sa = gw[26:25], g_sb = gw[24:23], g_sc = gw[22:21];
    wire        g_hasv = (g_sa == SRC_V) || (g_sb == SRC_V) || (g_sc == SRC_V);
    wire [2:0]  i_kind = ir[7:5];
    wire [3:0]  i_vd = ir[20:17], i_va = ir[16:13], i_vb = ir[12:9];
    wire [2:0]  i_dt = ir[26:24];
    wire [2:0]  mode_depth = (mode == 2'd1) ? 3'd2 : (mode == 2'd2) ? 3'd4 : 3'd1;

    function automatic [3:0] sk_num(input [1:0] sel, input [3:0] idx);   // K registers are numbered mod 4
        sk_num = (sel == SRC_S) ? idx : (sel == SRC_K) ? {2'd0, idx[1:0]} : 4'd0;
    endfunction

    function automatic [23:0] kval(input [1:0] sel, input [1:0] idx, input [23:0] sv, input [23:0] k3v);
        if (sel == SRC_S) kval = sv;
        else if (sel == SRC_K)
            case (idx)
                2'd0: kval = 24'h000000;
                2'd1: kval = 24'h3F8000;
                2'd2: kval = 24'hBF8000;
                default: kval = k3v;
            endcase
        else kval = 24'd0;
    endfunction

    // ============================================================ VL masks
    wire [3:0]  nchunk = vl[7:4] + {3'd0, vl[3:0] != 4'd0};
    wire [2:0]  red_chunk;
    wire [2:0]  cur_ch = (st == S_RED) ? red_chunk : ch;
    wire [8:0]  rem    = {1'b0, vl} - {2'd0, cur_ch, 4'd0};
    wire [15:0] tail   = rem[8] ? 16'd0 : (rem >= 9'd16) ? 16'hFFFF : ((16'd1 << rem[3:0]) - 16'd1);
    wire        last_ch = ({1'b0, cur_ch} + 4'd1 == nchunk);
    function automatic [15:0] pmask(input [1:0] pm, input [15:0] p);
        pmask = (pm == 2'd0) ? 16'hFFFF : (pm == 2'd1) ? p : ~p;
    endfunction
    function automatic [383:0] merge(input [383:0] old, input [383:0] nw, input [15:0] m);
        integer l;
        begin
            for (l = 0; l < 16; l = l + 1) merge[24*l +: 24] = m[l] ? nw[24*l +: 24] : old[24*l +: 24];
        end
    endfunction

    // ============================================================ register reads
    reg [3:0] ra, rb, rc, rd;
    always @* begin
        ra = h_va; rb = h_vb; rc = h_vc; rd = g_vd;
        case (st)
            S_CVT, S_SHUF: begin ra = i_va; rd = i_vd; end
            S_RED:         begin ra = i_va; rb = i_vb; rd = i_vb; end
            S_LD, S_BC:    rd = i_vd;
            S_ST:          ra = i_vd;     // VST's source register is vd
            default: ;
        endcase
    end
    wire [383:0] row_a = vr[{ra, cur_ch}];
    wire [383:0] row_b = vr[{rb, cur_ch}];
    wire [383:0] row_c = vr[{rc, cur_ch}];
    wire [383:0] row_d = vr[{rd, cur_ch}];
    /* verilator lint_off UNUSEDSIGNAL */  // VBCAST to S reads element 0 only
    wire [383:0] row_va0 = vr[{f_va, 3'd0}];
    /* verilator lint_on UNUSEDSIGNAL */

    // ============================================================ the walk
    wire        agu_start = tm_fire && ((f_op == OP_VLD || f_op == OP_VST) || (f_op == OP_VDRAIN) || (f_op == OP_VFILL));
    wire [39:0] agu_off = (f_op == OP_VLD || f_op == OP_VST) ? {{26{fw[13]}}, fw[13:0]} : 40'd0;
    wire [39:0] agu_addr;
    wire [15:0] agu_total;
    wire        xf_step;
    wire        agu_step = (st == S_LD) || (st == S_ST) || xf_step;
    vc_agu u_agu (.clk(clk), .resetn(resetn), .start(agu_start), .base(d_base[f_ad]), .off(agu_off),
                  .strides({d_st[{f_ad, 2'd3}], d_st[{f_ad, 2'd2}], d_st[{f_ad, 2'd1}], d_st[{f_ad, 2'd0}]}),
                  .bounds({d_bd[{f_ad, 2'd3}], d_bd[{f_ad, 2'd2}], d_bd[{f_ad, 2'd1}], d_bd[{f_ad, 2'd0}]}),
                  .step(agu_step), .addr(agu_addr), .total(agu_total));
    wire [255:0] l1_at_walk = l1[agu_addr[8:0]];
    wire [8:0]   x_l1;                                 // L1 side of VFILL / VDRAIN: consecutive words
    wire [255:0] l1_x   = l1[x_l1];
    wire         xf_fault, xf_done;
    vc_xfer #(.X(X), .Y(Y), .MAG_X(MAG_X), .MAG_Y(MAG_Y), .XFER_LEAD(XFER_LEAD), .XFER_GAP(XFER_GAP)) u_xfer (
        .clk(clk), .resetn(resetn), .go(xf_go), .ir(ir), .rec(d_base[ir[23:21]]), .addr(agu_addr),
        .total(agu_total), .step(xf_step), .l1_addr(x_l1), .l1_data(l1_x), .x_push(x_push), .x_flit(x_flit),
        .xq_full(xq_full), .x_sent(x_sent), .fill_issue(fill_issue), .fill_l1(fill_l1), .len_fault(xf_fault),
        .done(xf_done));

    // ============================================================ lanes
    reg          alu_en;
    reg  [4:0]   l_op;
    reg  [2:0]   src_a, src_b, src_c;
    reg  [23:0]  const_a, const_b, const_c;
    wire [383:0] l_res;
    wire [15:0]  l_pred;
    wire [383:0] e_from_h;
    wire [255:0] h_from_e, f_from_e;
    wire [191:0] e_from_f;
    wire         ld16 = (st == S_LD) && (i_dt == 3'd1), ld32 = (st == S_LD) && (i_dt == 3'd2);
    wire         st16 = (st == S_ST) && (i_dt == 3'd1), st32 = (st == S_ST) && (i_dt == 3'd2);
    wire         cvt1 = (st == S_CVT) && (i_dt == 3'd1);
    // the states whose cycles read a result of the lanes (the lanes take their operands only then)
    wire         lanes_on = (st == S_ALU) || (st == S_CVT) || (st == S_LD) || (st == S_ST) || (st == S_RED);
    vc_lanes u_lanes (
        .clk(clk), .en(lanes_on), .alu_en(alu_en), .op(l_op), .src_a(src_a), .src_b(src_b), .src_c(src_c),
        .const_a(const_a), .const_b(const_b), .const_c(const_c),
        .row_a(row_a), .row_b(row_b), .row_c(row_c), .creg(creg), .tree(red_tree),
        .result(l_res), .pred(l_pred),
        .ld16_en(ld16), .cvt_en(cvt1), .st16_en(st16), .ld32_en(ld32), .st32_en(st32), .half(half),
        .l1_word(l1_at_walk), .cvt_row(row_a),
        .e_from_h(e_from_h), .h_from_e(h_from_e), .e_from_f(e_from_f), .f_from_e(f_from_e));

    // VRED kinds 0..5: the engine says what the lanes compute (V.9)
    wire         red_on = (st == S_RED);
    wire         red_start = tm_fire && (f_op == OP_VRED) && (f_vc[2:1] != 2'b11) && (vl[3:0] == 4'd0) &&
                             (mode == M_TREE);
    wire [383:0] red_tree;
    wire         red_alu, red_leaf_we, red_done;
    wire [4:0]   red_op;
    wire [2:0]   red_sa, red_sb, red_sc;
    wire [23:0]  red_ident, red_result;
    vc_red u_red (.clk(clk), .resetn(resetn), .start(red_start), .active(red_on),
                  .kind(red_start ? f_vc[2:0] : i_kind), .nchunk(vl[7:4]), .row_a(row_a), .l_res(l_res),
                  .chunk(red_chunk), .tree_out(red_tree), .alu_en(red_alu), .op(red_op), .src_a(red_sa),
                  .src_b(red_sb), .src_c(red_sc), .ident(red_ident), .leaf_we(red_leaf_we), .done(red_done),
                  .result(red_result));

    always @* begin
        alu_en = 1'b0; l_op = 5'd0;
        src_a = L_ROW; src_b = L_ROW; src_c = L_ROW;
        const_a = 24'd0; const_b = 24'd0; const_c = 24'd0;
        if (st == S_ALU) begin
            alu_en  = 1'b1;
            l_op    = g_op[5*stg +: 5];
            src_a   = (stg == 2'd0) ? ((g_sel[6*stg+4 +: 2] == SRC_V) ? L_ROW : L_CONST)
                                    : ((g_sel[6*stg+4 +: 2] == SRC_C) ? L_CREG : L_CONST);
            src_b   = (stg == 2'd0) ? ((g_sel[6*stg+2 +: 2] == SRC_V) ? L_ROW : L_CONST)
                                    : ((g_sel[6*stg+2 +: 2] == SRC_C) ? L_CREG : L_CONST);
            src_c   = (stg == 2'd0) ? ((g_sel[6*stg +: 2] == SRC_V) ? L_ROW : L_CONST)
                                    : ((g_sel[6*stg +: 2] == SRC_C) ? L_CREG : L_CONST);
            const_a = g_kv[72*stg+48 +: 24];
            const_b = g_kv[72*stg+24 +: 24];
            const_c = g_kv[72*stg +: 24];
        end else if (red_on) begin
            alu_en = red_alu; l_op = red_op; src_a = red_sa; src_b = red_sb; src_c = red_sc;
            const_b = red_ident; const_c = red_ident;
        end
    end

    // ============================================================ predicate hazards (report only)
    reg        hz_clear, hz_issue, hz_wp, hz_chained, hz_read, hz_anyall;
    reg [1:0]  hz_cls, hz_p, hz_rp;
    reg [31:0] hz_word;
    reg [8:0]  hz_pc;
    vc_hazard u_hazard (.clk(clk), .resetn(resetn), .clear(hz_clear), .issue(hz_issue), .issue_cls(hz_cls),
                        .issue_wp(hz_wp), .issue_p(hz_p), .issue_chained(hz_chained), .issue_pc(hz_pc),
                        .read(hz_read), .read_p(hz_rp), .read_anyall(hz_anyall), .read_pc(hz_pc),
                        .read_word(hz_word), .vl(vl), .count(hazards[31:0]));

    // ============================================================ upstream hazards H2, H3, H4 (report only)
    // Strobes of the cycle a word issues: S_ISSUE for ALU words and chains, S_DEC for the words below
    // (each leaves S_DEC after one cycle).
    // units.md V.8 H4: a D4 chain of 8 chunks (VL 113..128) issues 8 x 4 = 32 beats, which wrap upstream's
    // 5-bit pending-beat count of its destination
    localparam [3:0] H4_NCHUNK = 4'd8;
    wire        up_dec   = tm_fire;
    wire        up_issue = (st == S_ISSUE);
    wire        up_drain = up_dec && ((f_op == OP_VSETMODE) || (f_op == OP_VLD) || (f_op == OP_VST) ||
                                      (f_op == OP_VCVT) || (f_op == OP_VSHUF) || (f_op == OP_VBCAST && f_sa == SRC_S));
    wire        up_vread = up_dec && (f_op == OP_VBCAST) && (f_sa != SRC_S);
    wire [15:0] head_reads = ((g_sel[5:4] == SRC_V) ? (16'd1 << h_va) : 16'd0) |
                             ((g_sel[3:2] == SRC_V) ? (16'd1 << h_vb) : 16'd0) |
                             ((g_sel[1:0] == SRC_V) ? (16'd1 << h_vc) : 16'd0);
    wire [15:0] up_reads = up_issue ? head_reads : (16'd1 << f_va);
    wire [284:0] up_stages;
    genvar gs;
    generate
        for (gs = 1; gs < 4; gs = gs + 1) begin : g_up_stage
            assign up_stages[95*(gs-1) +: 95] = {g_op[5*gs +: 5], g_sel[6*gs +: 6], g_rn[12*(gs-1) +: 12],
                                                 g_kv[72*gs +: 72]};
        end
    endgenerate
    vc_chain_hazard u_chain_hazard (.clk(clk), .resetn(resetn), .clear((st == S_IDLE) && start), .drain(up_drain),
                                    .issue(up_issue), .depth(depth), .stages(up_stages),
                                    .wide((depth == 3'd4) && (nchunk == H4_NCHUNK) && !g_cmp), .dest(g_vd),
                                    .vread(up_vread), .reads(up_reads), .pc(pc), .word(fw),
                                    .count_h2(hazards[63:32]), .count_h4(hazards[127:96]));
    vc_store_hazard u_store_hazard (.clk(clk), .resetn(resetn), .store(up_dec && (f_op == OP_VST) && (f_dt == 3'd2)),
                                    .pc(pc), .word(fw), .vl(vl), .count(hazards[95:64]));

    vc_timing #(
`include "vc_timing_pass.vh"
    ) u_timing (.clk(clk), .resetn(resetn), .start((st == S_IDLE) && start), .now(cycles), .nc(nchunk),
                        .fills_out(fills_out), .word(fw), .may_exec(tm_may_exec), .may_fire(tm_may_fire),
                        .halt_count(tm_halt), .exec(word_exec), .fire(tm_fire),
                        .issue(st == S_ISSUE), .va(h_va), .vb(h_vb), .vc(h_vc), .vd(g_vd), .depth(depth), .wcmp(g_cmp),
                        .xfer(xf_go), .xn(agu_total), .node(ir[24]));

    // ============================================================ the decoder (the word at pc, at S_DEC)
    // vc_decode.v: what the word does when it fires (fault, wait, retire, the next state, its hazard
    // report and S write); its header lists the answers.
    /* verilator lint_off UNUSEDSIGNAL */  // bits [23:4] of the shuffle count are not read
    wire [23:0]  s_va = sr[f_va], s_vb = sr[f_vb];
    /* verilator lint_on UNUSEDSIGNAL */
    wire         dc_fault, dc_hold, dc_halt, dc_step, dc_issue, dc_hz_rd, dc_read, dc_anyall, dc_sr_we;
    wire [31:0]  dc_code;
    wire [8:0]   dc_by;
    wire [4:0]   dc_next;
    wire [1:0]   dc_cls, dc_rp;
    wire [23:0]  dc_sr_d;
    vc_decode u_decode (
        .fw(fw), .is_alu(f_alu), .depth(mode_depth), .imm(immw[23:0]), .mode(mode), .vl(vl), .fills_out(fills_out), .lp_act(lp_act),
        .last_pr(last_pr), .last_pm(last_pm), .s_va(s_va), .p_last(preg[last_pr]), .v_va0(row_va0[23:0]),
        .dc_fault(dc_fault), .dc_code(dc_code), .dc_hold(dc_hold), .dc_halt(dc_halt), .dc_step(dc_step),
        .dc_by(dc_by), .dc_next(dc_next), .dc_issue(dc_issue), .dc_cls(dc_cls), .dc_hz_rd(dc_hz_rd),
        .dc_read(dc_read), .dc_rp(dc_rp), .dc_anyall(dc_anyall), .dc_sr_we(dc_sr_we), .dc_sr_d(dc_sr_d));

    // ============================================================ how this cycle ends the word in flight
    // end_ret: the kernel retires (done, with end_fault and end_code); end_adv: the word retires and pc
    // moves on by end_by, through S_BOUND. A word retired (end_word) is counted in `insts`.
    wire cud_fault = cud_pend && !cud_clr && (((st == S_IDLE) && start) || (st == S_BOUND));   // F_CUDATA
    wire g_bad     = (g_opc > OP_ALU_LAST) || g_hasv;                      // a gathered stage that faults
    reg        end_ret, end_fault, end_adv, end_word;
    reg [31:0] end_code;
    reg [8:0]  end_by;
    always @* begin
        end_ret = 1'b0; end_fault = 1'b1; end_code = 32'd0; end_adv = 1'b0; end_by = 9'd1;
        case (st)
            S_IDLE, S_BOUND: begin end_ret = cud_fault; end_code = F_CUDATA; end
            S_DEC: if (tm_fire) begin
                end_ret   = dc_fault || dc_halt;
                end_fault = !dc_halt;
                end_code  = dc_halt ? tm_halt : dc_code;
                end_adv   = dc_step;
                end_by    = dc_by;
            end
            S_GATHER: begin
                end_ret  = g_bad;
                end_code = (g_opc > OP_ALU_LAST) ? F_OPCODE : F_VSRC;              // F_OPCODE: ours, undefined in V.5
            end
            S_ALU: begin
                end_adv = ({1'b0, stg} + 3'd1 == depth) && last_ch;
                end_by  = {6'd0, depth};
            end
            S_CVT, S_SHUF, S_BC: end_adv = last_ch;
            S_LD, S_ST:          end_adv = !(i_dt == 3'd2 && !half) && last_ch;
            S_RED:               end_adv = red_done;
            S_XFER: begin
                end_ret  = xf_fault;
                end_code = F_LEN;
                end_adv  = !xf_fault && xf_done;
            end
            default: ;
        endcase
        end_word = end_adv || (end_ret && !end_fault);                         // VHALT is a retired word
    end

    // Six clocked processes, one per concern; each register is written by exactly one of them.

    // ---------------- the envelope's writes: IMEM and the descriptors (only while no kernel runs)
    integer ke;
    always @(posedge clk) begin
        if (!resetn) begin
            for (ke = 0; ke < 8; ke = ke + 1) d_base[ke] <= 40'd0;
            for (ke = 0; ke < 32; ke = ke + 1) begin
                d_st[ke] <= 18'd0;
                d_bd[ke] <= 16'd1;
            end
        end else if (imem_we || desc_we) begin
            if (imem_we) imem[imem_wa] <= imem_wd;
            if (desc_we) begin
                if (desc_fld == 3'd0) d_base[desc_ad] <= desc_val;
                else if (desc_fld <= 3'd4) begin
                    d_st[{desc_ad, desc_fld[1:0] - 2'd1}] <= desc_val[33:16];
                    d_bd[{desc_ad, desc_fld[1:0] - 2'd1}] <= desc_val[15:0];
                end
            end
        end
    end

    // ---------------- the sequencer: state, pc, the word, its chunk / half / stage, the loop, the cycle count
    always @(posedge clk) begin
        if (!resetn) begin
            st <= S_IDLE; pc <= 9'd0; ir <= 32'd0; cycles <= 32'd0; dec_seen <= 1'b0;
            ch <= 3'd0; half <= 1'b0; stg <= 2'd0; creg <= 384'd0; shift <= 4'd0; xf_go <= 1'b0;
            lp_act <= 1'b0; lp_cnt <= 24'd0; lp_top <= 9'd0; lp_end <= 9'd0;
        end else if (st != S_IDLE || start || dec_seen || xf_go) begin   // an idle core: one test a cycle
            if (st == S_DEC || dec_seen) dec_seen <= (st == S_DEC) && (dec_seen || word_exec) && !tm_fire;
            xf_go <= 1'b0;
            if (st != S_IDLE) cycles <= cycles + 32'd1;
            case (st)
                S_IDLE: if (start) begin
                    lp_act <= 1'b0;
                    cycles <= 32'd1;
                    pc     <= start_pc;
                    st     <= S_DEC;
                end
                S_BOUND: if (!cud_fault) begin                  // the loop closes at its end
                    if (lp_act && pc == lp_end) begin
                        if (lp_cnt > 24'd1) begin
                            lp_cnt <= lp_cnt - 24'd1;
                            pc     <= lp_top;
                        end else lp_act <= 1'b0;
                    end
                    st <= S_DEC;
                end
                S_DEC: if (tm_fire) begin
                    ir   <= fw;
                    ch   <= 3'd0;
                    half <= 1'b0;
                    if (!dc_hold) st <= dc_next;
                    if (f_op == OP_VSHUF) shift <= s_vb[3:0];
                    if (dc_issue && dc_next == S_XFER) xf_go <= 1'b1;
                    if (dc_step && f_op == OP_VLOOP) begin
                        lp_act <= 1'b1;
                        lp_cnt <= s_va;
                        lp_top <= pc + 9'd1;
                        lp_end <= pc + 9'd1 + {5'd0, f_vb};
                    end
                end
                S_GATHER: if (g_k + 3'd1 == depth) st <= S_ISSUE;
                S_ISSUE: begin
                    ch  <= 3'd0;
                    stg <= 2'd0;
                    st  <= S_ALU;
                end
                S_ALU: if ({1'b0, stg} + 3'd1 == depth) begin
                    stg <= 2'd0;
                    if (!last_ch) ch <= ch + 3'd1;
                end else begin
                    creg <= l_res;
                    stg  <= stg + 2'd1;
                end
                S_CVT, S_SHUF, S_BC: if (!last_ch) ch <= ch + 3'd1;
                S_LD, S_ST: if (i_dt == 3'd2 && !half) half <= 1'b1;
                    else begin
                        half <= 1'b0;
                        if (!last_ch) ch <= ch + 3'd1;
                    end
                S_RED, S_XFER: ;
                default: st <= S_IDLE;
            endcase
            // every state ends a word the same two ways
            if (end_ret) st <= S_IDLE;
            else if (end_adv) begin
                pc <= pc + end_by;
                st <= S_BOUND;
            end
        end
    end

    // ---------------- the ALU word's stages: the head at S_DEC, the chain's further words at S_GATHER (D2, D4)
    always @(posedge clk) begin
        if (!resetn) begin
            depth <= 3'd1; g_k <= 3'd0; g_op <= 20'd0; g_sel <= 24'd0; g_kv <= 288'd0; g_rn <= 36'd0;
            h_va <= 4'd0; h_vb <= 4'd0; h_vc <= 4'd0; g_vd <= 4'd0; g_pr <= 2'd0; g_pm <= 2'd0; g_cmp <= 1'b0;
        end else if (tm_fire && f_alu && !dc_fault) begin
            g_op[4:0]  <= f_op;
            g_sel[5:0] <= {f_sa, f_sb, f_sc};
            g_kv[71:0] <= {kval(f_sa, f_va[1:0], s_va, k3), kval(f_sb, f_vb[1:0], s_vb, k3),
                           kval(f_sc, f_vc[1:0], sr[f_vc], k3)};
            h_va <= f_va; h_vb <= f_vb; h_vc <= f_vc;
            g_vd <= f_vd; g_pr <= f_pr; g_pm <= f_pm; g_cmp <= f_cmp;
            depth <= mode_depth;
            g_k   <= 3'd1;
        end else if (st == S_GATHER && !g_bad) begin
            g_op[5*g_k +: 5]   <= g_opc;
            g_sel[6*g_k +: 6]  <= {g_sa, g_sb, g_sc};
            g_kv[72*g_k +: 72] <= {kval(g_sa, gw[14:13], sr[gw[16:13]], k3),
                                   kval(g_sb, gw[10:9], sr[gw[12:9]], k3),
                                   kval(g_sc, gw[6:5], sr[gw[8:5]], k3)};
            g_rn[12*(g_k-3'd1) +: 12] <= {sk_num(g_sa, gw[16:13]), sk_num(g_sb, gw[12:9]), sk_num(g_sc, gw[8:5])};
            g_vd  <= gw[20:17];
            g_pr  <= gw[4:3];
            g_pm  <= gw[2:1];
            g_cmp <= (g_opc >= 5'h0B) && (g_opc <= 5'h0D);
            if (g_k + 3'd1 != depth) g_k <= g_k + 3'd1;
        end
    end

    // ---------------- write-back: V, P, S, K3, VL, mode, the last pr / pm (D4, D5), and L1's two write ports
    integer kw;
    always @(posedge clk) begin
        if (!resetn) begin
            vl <= 8'd128; mode <= 2'd0; k3 <= 24'd0; last_pr <= 2'd0; last_pm <= 2'd0;
            for (kw = 0; kw < 16; kw = kw + 1) sr[kw] <= 24'd0;
            for (kw = 0; kw < 4; kw = kw + 1) preg[kw] <= 128'd0;
        end else if (st != S_IDLE || ext_we) begin                     // tm_fire needs S_DEC
            if (tm_fire) begin                                  // the word at S_DEC
                if (f_alu || f_op == OP_VRED) last_pr <= f_pr;
                if (f_alu) last_pm <= f_pm;
                if (dc_sr_we) sr[f_vd] <= dc_sr_d;
                if (dc_step && f_op == OP_VSETVL) vl <= s_va[7:0];
                if (dc_step && f_op == OP_VSETMODE) mode <= f_va[1:0];
                if (dc_step && f_op == OP_VSETI && f_sa == SRC_K) k3 <= immw[23:0];
            end
            case (st)
                S_GATHER: begin
                    last_pr <= gw[4:3];
                    last_pm <= gw[2:1];
                end
                S_ALU: if ({1'b0, stg} + 3'd1 == depth) begin  // the last stage writes V[vd] or P[pr]
                    if (g_cmp) preg[g_pr][16*ch +: 16] <= (l_pred & tail) | (preg[g_pr][16*ch +: 16] & ~tail);
                    else vr[{g_vd, ch}] <= merge(row_d, l_res, tail & pmask(g_pm, preg[g_pr][16*ch +: 16]));
                end
                S_CVT:  vr[{i_vd, ch}] <= (i_dt == 3'd2) ? row_a : e_from_h;
                S_SHUF: vr[{i_vd, ch}] <= rotate(row_a, shift);
                S_BC:   vr[{i_vd, ch}] <= {16{sr[i_va]}};
                S_LD: if (i_dt == 3'd1) vr[{i_vd, ch}] <= e_from_h;
                      else vr[{i_vd, ch}] <= half ? {e_from_f, row_d[191:0]} : {row_d[383:192], e_from_f};
                S_ST: l1[agu_addr[8:0]] <= (i_dt == 3'd1) ? h_from_e : f_from_e;
                S_RED: begin
                    if (red_leaf_we)   // EXPSUM: V[vb] = VEXP2(V[va]) under P[pr] and the last ALU pm (D5)
                        vr[{i_vb, red_chunk}] <= merge(row_b, l_res, tail & pmask(last_pm, preg[ir[4:3]][16*red_chunk +: 16]));
                    if (red_done) sr[i_vd] <= red_result;
                end
                default: ;
            endcase
            // the other write port of L1: peer bursts and fill responses (a VST to the same word wins)
            if (ext_we && !(st == S_ST && agu_addr[8:0] == ext_wa)) l1[ext_wa] <= ext_wd;
        end
    end

    // ---------------- the hazard report's strobes (vc_hazard): issue and predicate read of the word issuing
    wire iss_dec = tm_fire && dc_issue;                         // every other word issues at decode
    wire iss_alu = (st == S_ISSUE);                             // an ALU word or chain
    always @(posedge clk) begin
        if (!resetn) begin
            hz_clear <= 1'b0; hz_issue <= 1'b0; hz_wp <= 1'b0; hz_chained <= 1'b0; hz_read <= 1'b0;
            hz_anyall <= 1'b0; hz_cls <= 2'd0; hz_p <= 2'd0; hz_rp <= 2'd0; hz_word <= 32'd0; hz_pc <= 9'd0;
        end else if (st != S_IDLE || start || hz_clear || hz_issue || hz_read) begin
            hz_clear <= (st == S_IDLE) && start;
            hz_issue <= iss_dec || iss_alu;
            hz_read  <= iss_alu ? (!g_cmp && (g_pm != 2'd0)) : (tm_fire && dc_hz_rd && dc_read);
            if (tm_fire || iss_alu) hz_word <= fw;
            if (iss_dec || iss_alu) begin
                hz_pc      <= pc;
                hz_cls     <= iss_alu ? ((depth == 3'd1) ? HZ_FLAT : HZ_OTHER) : dc_cls;
                hz_wp      <= iss_alu && g_cmp;
                hz_p       <= iss_alu ? g_pr : 2'd0;
                hz_chained <= iss_alu && (depth != 3'd1);
            end
            if (iss_alu || (tm_fire && dc_hz_rd)) begin
                hz_rp     <= iss_alu ? g_pr : dc_rp;
                hz_anyall <= !iss_alu && dc_anyall;
            end
        end
    end

    // ---------------- retirement: done with the fault and result, the words retired, F_CUDATA pending
    always @(posedge clk) begin
        if (!resetn) begin
            done <= 1'b0; fault <= 1'b0; result <= 32'd0; insts <= 32'd0; cud_pend <= 1'b0; cud_clr <= 1'b0;
        end else if (st != S_IDLE || start || done || cud_pend || cud_clr || cud_set) begin
            done <= end_ret;
            if (end_ret) begin
                fault  <= end_fault;
                result <= end_code;
            end
            if (end_word) insts <= insts + 32'd1;
            cud_pend <= (cud_pend && !cud_clr) || cud_set;
            cud_clr  <= cud_fault;
        end
    end

    function automatic [383:0] rotate(input [383:0] row, input [3:0] by);
        /* verilator lint_off UNUSEDSIGNAL */
        reg [767:0] two;
        /* verilator lint_on UNUSEDSIGNAL */
        begin
            two    = {row, row} >> (24 * by);
            rotate = two[383:0];
        end
    endfunction

endmodule
`default_nettype wire
