// The vector core ('VC'): a programmable 16-lane E8M15 engine behind cu_base.
//
// Protocol facts (docs/spec protocol.md section 6) and our decisions, in full in
// docs/vector_core.md; models/vector_core.py computes the same bits.
//
// State: IMEM 512 x 32-bit program words; one flat L1 of 512 x 256-bit words
// (a word = 16 FP16 lanes, lane i at [16i+15:16i]; or 8 FP32, element j at
// [32j+31:32j]); 16 vector registers of 128 E8M15 elements (8 chunks of 16
// lanes); 16 scalar registers; constants K0=0, K1=1.0, K2=-1.0, K3 (VSETI);
// VL (1..128, reset 16); mode (FLAT only); 8 address descriptors
// {base, 4 x {stride, bound}, node target}.
//
// CU_INST payload opcode [255:252]:
//   1 IMEM  addr [251:243], word [31:0]                   retires at once
//   2 DESC  ad [251:249], fld [248:246], value [245:212]  retires at once
//           fld 0 base (34 bits); fld 1..4 dim k-1 = {stride[33:10] signed,
//           bound[9:0]} (bound 0 reads as 1); fld 5 node target
//           {node[33], 0[32], buf[31:24], dst_y[23:20], dst_x[19:16],
//           flags[15:8], ack_y[7:4], ack_x[3:0]}; fld 6, 7 fault F_OPCODE
//   3 RUN   pc [251:243]: runs to VHALT (result = the VHALT's address);
//           first reports a pending F_CUDATA (9) instead of running
//   other opcodes fault F_OPCODE (4).
// Faults retire through cu_base's exec_fault with the code as result:
//   1 DTYPE 2 VSRC 3 CHAIN 4 OPCODE 5 LEN 6 LOOP 7 VL 8 REDVL 9 CUDATA,
//   and 10 RANGE (ours: an L1 address outside 0..511).
//
// Inbound: CU_DATA bursts into L1 (buf 0 only, framed by count, one open
// stream, rejected never wrapped, DATA_RECEIVED only for a good burst with
// flags[0]); MEM_RD_RESP of this core's VFILL requests (txn = fill tag);
// every other type is taken and dropped.
//
// Monitors (ERROR line + sticky mon_err): an inbound CU_DATA whose last bit
// disagrees with its burst's count (sender's fault) or a descriptor with
// last=1; an L1 write outside 0..511; our own outbound flits: a CU_SIGNAL
// other than DATA_RECEIVED, a CU_DATA data flit beyond its descriptor's count
// or with a wrong last bit, MEM_WR_DATA without a MEM_WR_REQ, a fill tag
// issued while still in use.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module vector_core #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] noc_in_data,
    input  wire         noc_in_valid,
    output wire         noc_in_busy,
    output wire [287:0] noc_out_data,
    output wire         noc_out_valid,
    input  wire         noc_out_busy,
    output wire [15:0]  inst_space,
    output wire         busy,
    output wire         mon_err
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] MX4 = MAG_X[3:0];
    localparam [3:0] MY4 = MAG_Y[3:0];

    localparam [3:0] T_MEM_RD_REQ  = 4'h0;
    localparam [3:0] T_MEM_WR_REQ  = 4'h1;
    localparam [3:0] T_MEM_RD_RESP = 4'h2;
    localparam [3:0] T_MEM_WR_DATA = 4'h4;
    localparam [3:0] T_CU_SIGNAL   = 4'h6;
    localparam [3:0] T_CU_DATA     = 4'h8;
    localparam [7:0] SIG_DATA_RECEIVED = 8'h03;

    localparam [31:0] F_DTYPE = 32'd1, F_VSRC = 32'd2, F_CHAIN = 32'd3, F_OPCODE = 32'd4,
                      F_LEN = 32'd5, F_VL = 32'd7, F_CUDATA = 32'd9, F_RANGE = 32'd10;

    localparam [4:0] OP_VADD = 5'h03, OP_VSUB = 5'h04, OP_VMUL = 5'h05,
                     OP_VFMA = 5'h06, OP_VFNMA = 5'h07, OP_VMAX = 5'h08, OP_VMIN = 5'h09,
                     OP_VINV = 5'h10, OP_VLD = 5'h14, OP_VST = 5'h15,
                     OP_VSETVL = 5'h18, OP_VSETMODE = 5'h19, OP_VSETI = 5'h1A,
                     OP_VBAR = 5'h1C, OP_VFILL = 5'h1D, OP_VDRAIN = 5'h1E, OP_VHALT = 5'h1F;

    localparam [3:0] S_IDLE = 4'd0, S_DECODE = 4'd1, S_FETCH = 4'd2, S_SETUP = 4'd3,
                     S_ALU = 4'd4, S_LD = 4'd5, S_ST = 4'd6, S_FILL = 4'd7, S_DRAIN = 4'd8,
                     S_DWAIT = 4'd9, S_BAR = 4'd10, S_HALT = 4'd11;

    function automatic [287:0] mkflit(input [3:0] dx, input [3:0] dy, input [3:0] typ,
                                      input [7:0] txn, input last, input [255:0] payload);
        mkflit = {dx, dy, X4, Y4, typ, txn, last, 3'b000, payload};
    endfunction

    // ============================================================ cu_base
    /* verilator lint_off UNUSEDSIGNAL */  // the CU_INST header is cu_base's; payload bits no opcode reads
    wire [287:0] inst_flit;
    reg  [255:0] ci;                 // payload of the CU_INST being executed
    /* verilator lint_on UNUSEDSIGNAL */
    wire [287:0] recv_flit;
    wire         inst_valid, recv_valid, recv_ready, send_ready;
    reg          inst_ready, exec_done, exec_fault;
    reg  [31:0]  exec_result;
    reg  [287:0] send_flit;
    reg          send_valid;
    wire [63:0]  dbg_ctr;
    wire         base_err;

    cu_base #(.X(X), .Y(Y), .CU_TYPE(16'h5643), .CU_VERSION(8'h01), .N_BUFFERS(4'd1),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_base (
        .clk(clk), .resetn(resetn),
        .noc_in_data(noc_in_data), .noc_in_valid(noc_in_valid), .noc_in_busy(noc_in_busy),
        .noc_out_data(noc_out_data), .noc_out_valid(noc_out_valid), .noc_out_busy(noc_out_busy),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(inst_space), .busy(busy), .mon_err(base_err));

    // ============================================================ storage
    reg [31:0]  imem     [0:511];
    reg [255:0] l1       [0:511];
    reg [383:0] vr       [0:127];   // register r, chunk k at index {r, k}
    reg [23:0]  sr       [0:15];
    reg [33:0]  d_base   [0:7];
    reg [33:0]  d_dim    [0:31];    // descriptor ad, dim k at index {ad, k}
    reg [33:0]  d_tgt    [0:7];
    reg [255:0] iss_t;              // fill tag t in use = iss_t[t] ^ ret_t[t]
    reg [255:0] ret_t;
    reg [8:0]   fill_tag [0:255];   // L1 word of each outstanding fill

    integer i0;
    initial begin  // memories start at zero (reset does not clear them)
        for (i0 = 0; i0 < 512; i0 = i0 + 1) begin
            imem[i0] = 32'd0;
            l1[i0]   = 256'd0;
        end
        for (i0 = 0; i0 < 128; i0 = i0 + 1) vr[i0] = 384'd0;
        for (i0 = 0; i0 < 256; i0 = i0 + 1) fill_tag[i0] = 9'd0;
    end

    // ============================================================ exec state
    reg [3:0]   st;
    reg [9:0]   pc;                 // pc[9] = ran past the end of IMEM
    reg [31:0]  iw;                 // program word being executed
    reg [3:0]   ch;                 // ALU chunk
    reg [7:0]   vl;
    reg [23:0]  k3;
    reg [33:0]  w_base;
    /* verilator lint_off UNUSEDSIGNAL */  // bit 32 of a node target is reserved
    reg [33:0]  w_tgt;
    /* verilator lint_on UNUSEDSIGNAL */
    reg signed [23:0] w_s0, w_s1, w_s2, w_s3;
    reg [9:0]   w_b0, w_b1, w_b2, w_b3; // bounds, 0 already read as 1
    reg [9:0]   w_i0, w_i1, w_i2, w_i3;
    reg [8:0]   w_n;                // walk entry
    reg [8:0]   w_tot;              // walk length (1..256)
    reg [1:0]   ph;                 // drain phase: 0 WR_REQ, 1 WR_DATA, 2 CU_DATA desc, 3 CU_DATA data
    reg [7:0]   fptr;
    reg [15:0]  fills_iss;
    reg [15:0]  x_pushed;
    reg         cud_clr;
    reg [31:0]  x_words;

    wire [15:0] fills_done;
    wire [15:0] x_sent;
    wire        cud_fault;
    wire        xq_full;

    // ---------------------------------------------------------------- fetch
    wire [31:0] fw     = imem[pc[8:0]];
    wire [4:0]  f_op   = fw[31:27];
    wire [1:0]  f_sa   = fw[26:25], f_sb = fw[24:23], f_sc = fw[22:21];
    wire [1:0]  f_kva  = fw[16:15], f_kvb = fw[12:11], f_kvc = fw[8:7];   // K index bits above 3
    wire [1:0]  f_pm   = fw[2:1];
    wire [2:0]  f_ad   = fw[23:21];
    /* verilator lint_off UNUSEDSIGNAL */  // bits [31:24] of a VSETI immediate word are ignored
    wire [31:0] f_imm  = imem[pc[8:0] + 9'd1];
    /* verilator lint_on UNUSEDSIGNAL */
    wire        f_alu  = (f_op <= OP_VINV);
    wire        f_useb = (f_op == OP_VMUL) || (f_op == OP_VFMA) || (f_op == OP_VFNMA) ||
                         (f_op == OP_VMAX) || (f_op == OP_VMIN);
    wire        f_usec = (f_op == OP_VADD) || (f_op == OP_VSUB) || (f_op == OP_VFMA) || (f_op == OP_VFNMA);
    wire        f_chain = (f_sa == 2'd2) || (f_useb && f_sb == 2'd2) || (f_usec && f_sc == 2'd2);
    wire        f_kbad  = (f_sa == 2'd3 && f_kva != 2'd0) || (f_useb && f_sb == 2'd3 && f_kvb != 2'd0) ||
                          (f_usec && f_sc == 2'd3 && f_kvc != 2'd0);
    wire [15:0] alu_ok_l;            // per lane: the opcode is wired in vc_alu
    wire [15:0] cvt16_ok_l;
    wire [7:0]  cvt32_ok_l;
    wire        alu_ok  = &alu_ok_l;     // for f_op while fetching, i_op after
    wire [4:0]  lane_op;
    wire        fp16_ok = &cvt16_ok_l;
    wire        fp32_ok = &cvt32_ok_l;

    // ---------------------------------------------------------------- current word
    wire [4:0]  i_op    = iw[31:27];
    assign lane_op = (st == S_FETCH) ? f_op : i_op;
    wire [1:0]  i_sa    = iw[26:25], i_sb = iw[24:23], i_sc = iw[22:21];
    wire [3:0]  i_vd    = iw[20:17], i_va = iw[16:13], i_vb = iw[12:9], i_vc = iw[8:5];
    wire [1:0]  i_pm    = iw[2:1];
    wire [2:0]  i_dtype = iw[26:24];
    wire        i_fp32  = (i_dtype == 3'd2);
    wire signed [13:0] i_off = iw[13:0];
    wire        i_node  = w_tgt[33];
    // VLD/VST entries: ceil(VL/16) words for FP16, ceil(VL/8) for FP32
    wire [8:0]  ld_need = i_fp32 ? ({1'b0, vl} + 9'd7) >> 3 : ({1'b0, vl} + 9'd15) >> 4;
    wire [2:0]  dsc_fld = ci[248:246];
    wire [1:0]  dsc_dim = dsc_fld[1:0] - 2'd1;     // fld 1..4 -> dim 0..3

    // ---------------------------------------------------------------- walker
    wire signed [41:0] w_off = $signed({1'b0, w_i0}) * w_s0 + $signed({1'b0, w_i1}) * w_s1 +
                               $signed({1'b0, w_i2}) * w_s2 + $signed({1'b0, w_i3}) * w_s3;
    wire signed [41:0] w_la  = $signed({8'd0, w_base}) + {{28{i_off[13]}}, i_off} + w_off;  // L1 word (VLD/VST)
    wire        w_la_ok = (w_la >= 0) && (w_la <= 42'sd511);
    wire [39:0] w_da    = {6'd0, w_base} + w_off[39:0];                                     // DRAM byte (VFILL/VDRAIN)
    wire [39:0] w_prod  = {30'd0, w_b0} * {30'd0, w_b1} * {30'd0, w_b2} * {30'd0, w_b3};
    wire [9:0]  w_i0n   = w_i0 + 10'd1, w_i1n = w_i1 + 10'd1, w_i2n = w_i2 + 10'd1;
    wire [8:0]  w_n1    = w_n + 9'd1;
    wire        w_last  = (w_n1 == w_tot);
    wire signed [15:0] off_s = {{2{i_off[13]}}, i_off};
    wire [15:0] l1_end  = off_s + {6'd0, w_prod[9:0]} - 16'd1;   // last L1 word of a fill/drain
    wire [8:0]  xfer_la = i_off[8:0] + w_n;                       // L1 word of fill/drain entry w_n

    function automatic [9:0] bound1(input [9:0] b);
        bound1 = (b == 10'd0) ? 10'd1 : b;
    endfunction

    // ---------------------------------------------------------------- VL tail mask
    // chunk of the current VLD/VST entry (FP16: entry = chunk; FP32: two entries a chunk)
    wire [2:0]  w_chunk = i_fp32 ? w_n[3:1] : w_n[2:0];
    wire [2:0]  m_chunk = (st == S_ALU) ? ch[2:0] : w_chunk;
    wire [8:0]  rem     = {1'b0, vl} - {2'b0, m_chunk, 4'b0};
    wire [15:0] tail    = rem[8] ? 16'd0 : (rem >= 9'd16) ? 16'hFFFF : ((16'd1 << rem[3:0]) - 16'd1);
    wire [15:0] half_m  = i_fp32 ? (w_n[0] ? 16'hFF00 : 16'h00FF) : 16'hFFFF;
    wire [15:0] alu_m   = (i_pm == 2'd1) ? 16'd0 : tail;   // P registers are all zero (no compare opcode)
    wire [15:0] ld_m    = tail & half_m;

    // ---------------------------------------------------------------- lanes
    wire [383:0] row_a  = vr[{i_va, ch[2:0]}];
    wire [383:0] row_b  = vr[{i_vb, ch[2:0]}];
    wire [383:0] row_c  = vr[{i_vc, ch[2:0]}];
    wire [383:0] row_d  = vr[{i_vd, m_chunk}];
    wire [23:0]  s_a    = sr[i_va], s_b = sr[i_vb], s_c = sr[i_vc];
    function automatic [23:0] kval(input [1:0] k, input [23:0] k3v);
        case (k)
            2'd0: kval = 24'h000000;
            2'd1: kval = 24'h3F8000;
            2'd2: kval = 24'hBF8000;
            default: kval = k3v;
        endcase
    endfunction
    wire [23:0]  k_a = kval(i_va[1:0], k3), k_b = kval(i_vb[1:0], k3), k_c = kval(i_vc[1:0], k3);

    wire [8:0]   x_ra   = (st == S_DRAIN) ? xfer_la : w_la[8:0];
    wire [255:0] x_word = l1[x_ra];

    wire [383:0] row_new;   // row_d with the written lanes replaced (ALU, VLD)
    wire [255:0] st_word;   // x_word with the stored lanes replaced (VST)
    wire [255:0] st16, st32;
    wire         alu_on  = (st == S_ALU);
    wire         ld16_on = (st == S_LD) && !i_fp32, ld32_on = (st == S_LD) && i_fp32;
    wire         st16_on = (st == S_ST) && !i_fp32, st32_on = (st == S_ST) && i_fp32;
    wire [15:0]  st_m = tail;

    wire [383:0] e_h_all;   // FP16 -> E8M15 of the 16 lanes of x_word
    wire [191:0] e_f_all;   // FP32 -> E8M15 of the 8 elements of x_word
    wire [255:0] h_e_all;   // E8M15 -> FP16 of the 16 lanes of row_d
    wire [255:0] f_e_all;   // E8M15 -> FP32 of the 8 lanes 8*half.. of row_d
    genvar l;
    generate
        for (l = 0; l < 16; l = l + 1) begin : g_lane
            // operands held at 0 outside S_ALU: the lanes evaluate only while an ALU op runs
            wire [23:0] a = !alu_on ? 24'd0 : (i_sa == 2'd0) ? row_a[24*l +: 24] : (i_sa == 2'd1) ? s_a : k_a;
            wire [23:0] b = !alu_on ? 24'd0 : (i_sb == 2'd0) ? row_b[24*l +: 24] : (i_sb == 2'd1) ? s_b : k_b;
            wire [23:0] c = !alu_on ? 24'd0 : (i_sc == 2'd0) ? row_c[24*l +: 24] : (i_sc == 2'd1) ? s_c : k_c;
            wire [23:0] r;
            vc_alu u_alu (.op(lane_op), .a(a), .b(b), .c(c), .r(r), .ok(alu_ok_l[l]));
            vc_cvt16 u_cvt16 (.h_in(ld16_on ? x_word[16*l +: 16] : 16'd0), .e_in(st16_on ? row_d[24*l +: 24] : 24'd0),
                              .e_from_h(e_h_all[24*l +: 24]), .h_from_e(h_e_all[16*l +: 16]),
                              .ok(cvt16_ok_l[l]));
            wire [23:0] ld_v = i_fp32 ? e_f_all[24*(l % 8) +: 24] : e_h_all[24*l +: 24];
            wire        w_on = (st == S_ALU) ? alu_m[l] : ld_m[l];
            assign row_new[24*l +: 24] = w_on ? ((st == S_ALU) ? r : ld_v) : row_d[24*l +: 24];
            assign st16[16*l +: 16] = st_m[l] ? h_e_all[16*l +: 16] : x_word[16*l +: 16];
        end
        for (l = 0; l < 8; l = l + 1) begin : g_f32
            // element l of an FP32 word <-> register lane 8*half + l
            wire [23:0] e_st = w_n[0] ? row_d[24*(l + 8) +: 24] : row_d[24*l +: 24];
            vc_cvt32 u_cvt32 (.f_in(ld32_on ? x_word[32*l +: 32] : 32'd0), .e_in(st32_on ? e_st : 24'd0),
                              .e_from_f(e_f_all[24*l +: 24]), .f_from_e(f_e_all[32*l +: 32]),
                              .ok(cvt32_ok_l[l]));
            wire on32 = w_n[0] ? st_m[l + 8] : st_m[l];
            assign st32[32*l +: 32] = on32 ? f_e_all[32*l +: 32] : x_word[32*l +: 32];
        end
    endgenerate
    assign st_word = i_fp32 ? st32 : st16;

    // ---------------------------------------------------------------- outbound flits of the program
    wire [255:0] rdreq_pl  = {w_da, 8'd0, 8'd0, 8'd0, 24'd0, 2'd0, 8'd0, 158'd0};
    wire [255:0] wrreq_pl  = {w_da, 8'd0, 208'd0};
    wire [7:0]   tot_m1    = w_tot[7:0] - 8'd1;
    wire [255:0] cudesc_pl = {w_tgt[31:24], w_base[15:0], tot_m1, w_tgt[15:8], w_tgt[7:4], w_tgt[3:0], 208'd0};
    wire         slot_free = (iss_t[fptr] == ret_t[fptr]);
    reg  [287:0] x_flit;
    always @* begin
        case ({st == S_FILL, ph})
            3'b100, 3'b101, 3'b110, 3'b111:
                     x_flit = mkflit(MX4, MY4, T_MEM_RD_REQ, fptr, 1'b1, rdreq_pl);
            3'b000:  x_flit = mkflit(MX4, MY4, T_MEM_WR_REQ, w_n[7:0], 1'b0, wrreq_pl);
            3'b001:  x_flit = mkflit(MX4, MY4, T_MEM_WR_DATA, w_n[7:0], 1'b1, x_word);
            3'b010:  x_flit = mkflit(w_tgt[19:16], w_tgt[23:20], T_CU_DATA, 8'd0, 1'b0, cudesc_pl);
            default: x_flit = mkflit(w_tgt[19:16], w_tgt[23:20], T_CU_DATA, w_n[7:0], w_last, x_word);
        endcase
    end
    wire x_push = !xq_full && ((st == S_FILL && slot_free) || st == S_DRAIN);

    // L1 exec write port (VST)
    wire         x_we = (st == S_ST) && w_la_ok;

    // ============================================================ exec FSM
    integer k;
    always @(posedge clk) begin
        if (!resetn) begin
            st          <= S_IDLE;
            inst_ready  <= 1'b0;
            exec_done   <= 1'b0;
            exec_fault  <= 1'b0;
            exec_result <= 32'd0;
            vl          <= 8'd16;
            k3          <= 24'd0;
            fptr        <= 8'd0;
            fills_iss   <= 16'd0;
            x_pushed    <= 16'd0;
            cud_clr     <= 1'b0;
            x_words     <= 32'd0;
            pc          <= 10'd0;
            for (k = 0; k < 8; k = k + 1) begin
                d_base[k] <= 34'd0;
                d_tgt[k]  <= 34'd0;
            end
            for (k = 0; k < 32; k = k + 1) d_dim[k] <= 34'd0;
            for (k = 0; k < 16; k = k + 1) sr[k] <= 24'd0;
            iss_t <= 256'd0;
        end else begin
            inst_ready <= 1'b0;
            exec_done  <= 1'b0;
            cud_clr    <= 1'b0;
            if (x_push) x_pushed <= x_pushed + 16'd1;
            case (st)
                // ------------------------------------------------ envelope
                S_IDLE: if (inst_valid && !inst_ready && !exec_done) begin
                    inst_ready <= 1'b1;
                    ci         <= inst_flit[255:0];
                    st         <= S_DECODE;
                end
                S_DECODE: begin
                    st <= S_IDLE;
                    exec_done   <= 1'b1;
                    exec_fault  <= 1'b0;
                    exec_result <= 32'd0;
                    case (ci[255:252])
                        4'd1: imem[ci[251:243]] <= ci[31:0];
                        4'd2: case (dsc_fld)
                            3'd0:    d_base[ci[251:249]] <= ci[245:212];
                            3'd1, 3'd2, 3'd3, 3'd4:
                                     d_dim[{ci[251:249], dsc_dim}] <= ci[245:212];
                            3'd5:    d_tgt[ci[251:249]] <= ci[245:212];
                            default: begin exec_fault <= 1'b1; exec_result <= F_OPCODE; end
                        endcase
                        4'd3: if (cud_fault) begin
                            exec_fault  <= 1'b1;
                            exec_result <= F_CUDATA;
                            cud_clr     <= 1'b1;
                        end else begin
                            exec_done <= 1'b0;
                            pc        <= {1'b0, ci[251:243]};
                            st        <= S_FETCH;
                        end
                        default: begin exec_fault <= 1'b1; exec_result <= F_OPCODE; end
                    endcase
                end
                // ------------------------------------------------ program
                S_FETCH: begin
                    iw      <= fw;
                    ch      <= 4'd0;
                    x_words <= x_words + 32'd1;
                    // the walker of a memory-form instruction
                    w_base <= d_base[f_ad];
                    w_tgt  <= d_tgt[f_ad];
                    w_s0 <= d_dim[{f_ad, 2'd0}][33:10];  w_b0 <= bound1(d_dim[{f_ad, 2'd0}][9:0]);
                    w_s1 <= d_dim[{f_ad, 2'd1}][33:10];  w_b1 <= bound1(d_dim[{f_ad, 2'd1}][9:0]);
                    w_s2 <= d_dim[{f_ad, 2'd2}][33:10];  w_b2 <= bound1(d_dim[{f_ad, 2'd2}][9:0]);
                    w_s3 <= d_dim[{f_ad, 2'd3}][33:10];  w_b3 <= bound1(d_dim[{f_ad, 2'd3}][9:0]);
                    w_i0 <= 10'd0; w_i1 <= 10'd0; w_i2 <= 10'd0; w_i3 <= 10'd0;
                    w_n  <= 9'd0;
                    if (pc[9]) begin
                        retire_fault(F_OPCODE);
                    end else if (f_alu) begin
                        if (!alu_ok)           retire_fault(F_OPCODE);   // not wired in vc_alu
                        else if (f_pm == 2'd3) retire_fault(F_VSRC);
                        else if (f_chain)      retire_fault(F_CHAIN);
                        else if (f_kbad)       retire_fault(F_VSRC);
                        else                   st <= S_ALU;
                    end else begin
                        case (f_op)
                            OP_VLD, OP_VST, OP_VFILL, OP_VDRAIN: st <= S_SETUP;
                            OP_VSETVL: if (k3 >= 24'd1 && k3 <= 24'd128) begin
                                vl <= k3[7:0];
                                pc <= pc + 10'd1;
                            end else retire_fault(F_VL);
                            OP_VSETMODE: if (fw[26:25] == 2'd0) pc <= pc + 10'd1;
                                         else retire_fault(F_OPCODE);
                            OP_VSETI: if (pc[8:0] == 9'd511) retire_fault(F_OPCODE);
                                      else if (f_sa == 2'd0) begin
                                          k3 <= f_imm[23:0];
                                          pc <= pc + 10'd2;
                                      end else if (f_sa == 2'd1) begin
                                          sr[fw[20:17]] <= f_imm[23:0];
                                          pc <= pc + 10'd2;
                                      end else retire_fault(F_VSRC);
                            OP_VBAR:  st <= S_BAR;
                            OP_VHALT: st <= S_HALT;
                            default:  retire_fault(F_OPCODE);
                        endcase
                    end
                end
                S_SETUP: begin
                    w_tot <= w_prod[8:0];
                    ph    <= i_node ? 2'd2 : 2'd0;
                    if (i_op == OP_VLD || i_op == OP_VST) begin
                        if (!((i_dtype == 3'd1 && fp16_ok) || (i_dtype == 3'd2 && fp32_ok)))
                            retire_fault(F_DTYPE);
                        else if (w_prod < {31'd0, ld_need})
                            retire_fault(F_VL);
                        else begin
                            w_tot <= ld_need;
                            st    <= (i_op == OP_VLD) ? S_LD : S_ST;
                        end
                    end else begin
                        if (w_prod > 40'd256)
                            retire_fault(F_LEN);
                        else if (off_s < 0 || $signed(l1_end) > 16'sd511)
                            retire_fault(F_RANGE);
                        else
                            st <= (i_op == OP_VFILL) ? S_FILL : S_DRAIN;
                    end
                end
                S_ALU: begin
                    vr[{i_vd, ch[2:0]}] <= row_new;
                    ch <= ch + 4'd1;
                    if ({1'b0, ch[2:0], 4'b0} + 8'd16 >= vl) begin
                        pc <= pc + 10'd1;
                        st <= S_FETCH;
                    end
                end
                S_LD, S_ST: begin
                    if (!w_la_ok) begin
                        retire_fault(F_RANGE);
                    end else begin
                        if (st == S_LD) vr[{i_vd, w_chunk}] <= row_new;
                        walk_step();
                        if (w_last) begin
                            pc <= pc + 10'd1;
                            st <= S_FETCH;
                        end
                    end
                end
                S_FILL: if (x_push) begin
                    fill_tag[fptr] <= xfer_la;
                    iss_t[fptr]    <= ~iss_t[fptr];
                    fptr           <= fptr + 8'd1;
                    fills_iss      <= fills_iss + 16'd1;
                    walk_step();
                    if (w_last) begin
                        pc <= pc + 10'd1;
                        st <= S_FETCH;
                    end
                end
                S_DRAIN: if (x_push) begin
                    case (ph)
                        2'd0: ph <= 2'd1;
                        2'd2: ph <= 2'd3;
                        default: begin
                            if (ph == 2'd1) ph <= 2'd0;
                            walk_step();
                            if (w_last) st <= S_DWAIT;
                        end
                    endcase
                end
                S_DWAIT: if (x_sent == x_pushed) begin
                    pc <= pc + 10'd1;
                    st <= S_FETCH;
                end
                S_BAR: if (fills_iss == fills_done) begin
                    pc <= pc + 10'd1;
                    st <= S_FETCH;
                end
                S_HALT: if (fills_iss == fills_done) begin
                    st          <= S_IDLE;
                    exec_done   <= 1'b1;
                    exec_fault  <= 1'b0;
                    exec_result <= {23'd0, pc[8:0]};
                end
                default: st <= S_IDLE;
            endcase
        end
    end

    task automatic retire_fault(input [31:0] code);
        begin
            st          <= S_IDLE;
            exec_done   <= 1'b1;
            exec_fault  <= 1'b1;
            exec_result <= code;
        end
    endtask

    // mixed-radix step of the walk, dim 1 fastest; dim 4 is never wrapped
    task automatic walk_step;
        begin
            w_n <= w_n1;
            if (w_i0n != w_b0) w_i0 <= w_i0n;
            else begin
                w_i0 <= 10'd0;
                if (w_i1n != w_b1) w_i1 <= w_i1n;
                else begin
                    w_i1 <= 10'd0;
                    if (w_i2n != w_b2) w_i2 <= w_i2n;
                    else begin
                        w_i2 <= 10'd0;
                        w_i3 <= w_i3 + 10'd1;
                    end
                end
            end
        end
    endtask

    // ============================================================ receive
    wire         ack_full, ack_empty;
    wire [3:0]   r_type  = recv_flit[`NOC_TYPE];
    wire [7:0]   r_src   = {recv_flit[`NOC_SRC_X], recv_flit[`NOC_SRC_Y]};   // {x, y}
    wire [7:0]   r_txn   = recv_flit[`NOC_TXN];
    wire         r_last  = recv_flit[`NOC_LAST];
    wire [255:0] r_pl    = recv_flit[255:0];
    wire [7:0]   rd_buf  = r_pl[255:248];
    wire [15:0]  rd_off  = r_pl[247:232];
    wire [7:0]   rd_len  = r_pl[231:224];
    /* verilator lint_off UNUSEDSIGNAL */  // flags bits 7..1 are reserved (0)
    wire [7:0]   rd_flg  = r_pl[223:216];
    /* verilator lint_on UNUSEDSIGNAL */
    wire [7:0]   rd_ack  = r_pl[215:208];          // {ack_y, ack_x}
    wire [16:0]  rd_end  = {1'b0, rd_off} + {9'd0, rd_len};
    wire         rd_bad  = (rd_buf != 8'd0) || (rd_end > 17'd511);

    assign recv_ready = recv_valid && !ack_full;
    wire r_take = recv_ready;

    reg         b_open, b_bad, b_sig;
    reg [7:0]   b_src, b_ack, b_buf, b_txn;
    reg [8:0]   b_left;
    reg [16:0]  b_addr;
    reg         d_open;
    reg [7:0]   d_src;
    reg [8:0]   d_left;
    reg         cud_fault_r;
    reg [15:0]  fills_done_r;
    reg [31:0]  r_peer;
    reg         r_err;
    assign cud_fault  = cud_fault_r;
    assign fills_done = fills_done_r;

    wire is_cud = r_take && r_type == T_CU_DATA;
    wire from_b = b_open && r_src == b_src;
    wire from_d = d_open && r_src == d_src;
    wire c_data = is_cud && from_b;                    // data flit of the open burst
    wire c_drop = is_cud && !from_b && from_d;         // counted out and dropped
    wire c_intr = is_cud && b_open && !from_b && !from_d;  // a second sender mid-burst
    wire c_desc = is_cud && !b_open && !from_d;        // a new burst's descriptor

    wire       is_rsp = r_take && r_type == T_MEM_RD_RESP;
    wire [7:0] f_slot = r_txn;
    wire       f_ok   = is_rsp && r_src == {MX4, MY4} && (iss_t[f_slot] != ret_t[f_slot]);

    wire         r_we = (c_data && !b_bad) || f_ok;
    wire [16:0]  r_wa = f_ok ? {8'd0, fill_tag[f_slot]} : b_addr;

    wire         ack_push = c_data && b_left == 9'd1 && b_sig && !b_bad;
    wire [7:0]   ack_dst  = (b_ack == 8'd0) ? b_src : {b_ack[3:0], b_ack[7:4]};   // {x, y}
    wire [23:0]  ack_din  = {ack_dst, b_txn, b_buf};
    wire [23:0]  ack_dout;
    wire         ack_pop;
    wire         ack_err;
    noc_fifo #(.WIDTH(24), .DEPTH(4)) u_ackq (
        .clk(clk), .resetn(resetn), .push(ack_push), .din(ack_din), .pop(ack_pop),
        .dout(ack_dout), .empty(ack_empty), .full(ack_full), .mon_err(ack_err));

    always @(posedge clk) begin
        if (!resetn) begin
            b_open       <= 1'b0;
            b_bad        <= 1'b0;
            d_open       <= 1'b0;
            cud_fault_r  <= 1'b0;
            fills_done_r <= 16'd0;
            r_peer       <= 32'd0;
            r_err        <= 1'b0;
            ret_t <= 256'd0;
        end else begin
            if (cud_clr) cud_fault_r <= 1'b0;
            if (c_desc) begin
                b_open <= 1'b1;
                b_src  <= r_src;
                b_left <= {1'b0, rd_len} + 9'd1;
                b_addr <= {1'b0, rd_off};
                b_bad  <= rd_bad;
                b_sig  <= rd_flg[0];
                b_ack  <= rd_ack;
                b_buf  <= rd_buf;
                b_txn  <= r_txn;
                if (rd_bad) begin
                    cud_fault_r <= 1'b1;
                    $display("vector_core %m t=%0t: rejected a CU_DATA burst from (%0d,%0d): buf %0d off %0d len %0d (F_CUDATA at the next RUN, no ack)",
                             $time, r_src[7:4], r_src[3:0], rd_buf, rd_off, rd_len);
                end
                if (r_last) begin
                    $display("ERROR %m t=%0t: CU_DATA descriptor from (%0d,%0d) has last=1 (MUST be 0 on a descriptor): %h",
                             $time, r_src[7:4], r_src[3:0], recv_flit);
                    r_err <= 1'b1;
                end
            end
            if (c_data) begin
                b_addr <= b_addr + 17'd1;
                b_left <= b_left - 9'd1;
                if (!b_bad) r_peer <= r_peer + 32'd1;
                if (b_left == 9'd1) b_open <= 1'b0;
                if (r_last != (b_left == 9'd1)) begin
                    $display("ERROR %m t=%0t: CU_DATA data flit from (%0d,%0d) has last=%0d with %0d flit(s) of its burst left (the sender broke the count/last rule): %h",
                             $time, r_src[7:4], r_src[3:0], r_last, b_left, recv_flit);
                    r_err <= 1'b1;
                end
            end
            if (c_intr) begin
                b_bad       <= 1'b1;
                cud_fault_r <= 1'b1;
                if (!d_open) begin
                    d_open <= 1'b1;
                    d_src  <= r_src;
                    d_left <= {1'b0, rd_len} + 9'd1;
                end
                $display("vector_core %m t=%0t: CU_DATA from (%0d,%0d) while a burst from (%0d,%0d) is open: both bursts faulted (F_CUDATA at the next RUN)",
                         $time, r_src[7:4], r_src[3:0], b_src[7:4], b_src[3:0]);
            end
            if (c_drop) begin
                d_left <= d_left - 9'd1;
                if (d_left == 9'd1) d_open <= 1'b0;
            end
            if (f_ok) begin
                ret_t[f_slot] <= ~ret_t[f_slot];
                fills_done_r  <= fills_done_r + 16'd1;
            end
            if (is_rsp && !f_ok)
                $display("vector_core %m t=%0t: dropped a MEM_RD_RESP no fill of this core is waiting for: %h",
                         $time, recv_flit);
            else if (r_take && !is_cud && !is_rsp)
                $display("vector_core %m t=%0t: dropped an inbound flit of type %0d (not consumed): %h",
                         $time, r_type, recv_flit);
            if (r_we && r_wa > 17'd511) begin
                $display("ERROR %m t=%0t: L1 write at word %0d is outside 0..511 (a range check let it through)",
                         $time, r_wa);
                r_err <= 1'b1;
            end
        end
    end

    // ============================================================ L1 write ports
    // receive port (peer data, fill responses) then the VST port: the same word
    // in the same cycle from both is a program race; the VST wins.
    always @(posedge clk) begin
        if (r_we) l1[r_wa[8:0]] <= r_pl;
        if (x_we) l1[w_la[8:0]] <= st_word;
    end

    // ============================================================ send
    wire [287:0] xq_dout;
    wire         xq_empty, xq_err;
    reg          s_is_x;
    reg  [15:0]  x_sent_r;
    assign x_sent = x_sent_r;
    wire s_free = !send_valid || send_ready;
    assign ack_pop = s_free && !ack_empty;
    wire xq_pop = s_free && ack_empty && !xq_empty;
    noc_fifo #(.WIDTH(288), .DEPTH(2)) u_xq (
        .clk(clk), .resetn(resetn), .push(x_push), .din(x_flit), .pop(xq_pop),
        .dout(xq_dout), .empty(xq_empty), .full(xq_full), .mon_err(xq_err));

    wire [287:0] ack_flit = mkflit(ack_dout[23:20], ack_dout[19:16], T_CU_SIGNAL, ack_dout[15:8], 1'b1,
                                   {SIG_DATA_RECEIVED, 24'd0, ack_dout[7:0], 216'd0});
    always @(posedge clk) begin
        if (!resetn) begin
            send_valid <= 1'b0;
            s_is_x     <= 1'b0;
            x_sent_r   <= 16'd0;
        end else begin
            if (send_valid && send_ready && s_is_x) x_sent_r <= x_sent_r + 16'd1;
            if (s_free) begin
                if (!ack_empty) begin
                    send_flit  <= ack_flit;
                    send_valid <= 1'b1;
                    s_is_x     <= 1'b0;
                end else if (!xq_empty) begin
                    send_flit  <= xq_dout;
                    send_valid <= 1'b1;
                    s_is_x     <= 1'b1;
                end else begin
                    send_valid <= 1'b0;
                end
            end
        end
    end

    // ============================================================ outbound monitor (our own MUSTs)
    wire        s_go   = send_valid && send_ready;
    wire [3:0]  s_type = send_flit[`NOC_TYPE];
    reg  [8:0]  o_cd_left;    // CU_DATA data flits still owed by the open outbound burst
    reg  [8:0]  o_wr_left;    // MEM_WR_DATA still owed
    reg         o_err;
    always @(posedge clk) begin
        if (!resetn) begin
            o_cd_left <= 9'd0;
            o_wr_left <= 9'd0;
            o_err     <= 1'b0;
        end else if (s_go) begin
            if (s_type == T_CU_SIGNAL && send_flit[255:248] != SIG_DATA_RECEIVED) begin
                $display("ERROR %m t=%0t: the unit sent CU_SIGNAL code %0d itself (only cu_base sends completions): %h",
                         $time, send_flit[255:248], send_flit);
                o_err <= 1'b1;
            end
            if (s_type == T_CU_DATA) begin
                if (o_cd_left == 9'd0) begin
                    o_cd_left <= {1'b0, send_flit[231:224]} + 9'd1;
                    if (send_flit[`NOC_LAST]) begin
                        $display("ERROR %m t=%0t: outbound CU_DATA descriptor with last=1: %h", $time, send_flit);
                        o_err <= 1'b1;
                    end
                end else begin
                    o_cd_left <= o_cd_left - 9'd1;
                    if (send_flit[`NOC_LAST] != (o_cd_left == 9'd1)) begin
                        $display("ERROR %m t=%0t: outbound CU_DATA data flit with last=%0d and %0d flit(s) owed: %h",
                                 $time, send_flit[`NOC_LAST], o_cd_left, send_flit);
                        o_err <= 1'b1;
                    end
                end
            end
            if (s_type == T_MEM_WR_REQ) begin
                if (o_wr_left != 9'd0) begin
                    $display("ERROR %m t=%0t: MEM_WR_REQ while %0d MEM_WR_DATA of the previous write are owed", $time, o_wr_left);
                    o_err <= 1'b1;
                end
                o_wr_left <= {1'b0, send_flit[215:208]} + 9'd1;
            end
            if (s_type == T_MEM_WR_DATA) begin
                if (o_wr_left == 9'd0) begin
                    $display("ERROR %m t=%0t: MEM_WR_DATA with no open MEM_WR_REQ: %h", $time, send_flit);
                    o_err <= 1'b1;
                end else begin
                    o_wr_left <= o_wr_left - 9'd1;
                end
            end
        end
    end

    // exec-side checks
    reg x_err;
    always @(posedge clk) begin
        if (!resetn) begin
            x_err <= 1'b0;
        end else begin
            if (st == S_FILL && x_push && !slot_free) begin
                $display("ERROR %m t=%0t: fill tag %0d issued while still in use", $time, fptr);
                x_err <= 1'b1;
            end
            if (x_we && !w_la_ok) begin
                $display("ERROR %m t=%0t: VST write outside L1", $time);
                x_err <= 1'b1;
            end
        end
    end

    assign dbg_ctr = {x_words, r_peer};
    assign mon_err = base_err | r_err | o_err | x_err | ack_err | xq_err;
endmodule
`default_nettype wire
