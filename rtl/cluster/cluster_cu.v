// Cluster CU (cu_type 'MG'): int7 x int7 matmul with E5M3 block scales into a
// resident S1E7M14 accumulator, behind the shared endpoint base cu_base.
// What crosses the port follows units.md §C and protocol.md §4-§6 (fixed
// protocol); everything inside is ours, stated here and in docs/cluster.md;
// models/cluster predicts every flit bit for bit.
//
// CU_INST payload (every field at its fixed position under every opcode):
//   op [255:252] 1 FILL, 2 GEMM, 3 DRAIN; addr {[68:63],[251:218]} (bytes);
//   n [217:202]; sel [201]; acc [200]; gm [199:192]; gn [191:184];
//   nk [183:176]; anchor [175:168]; peers [167:144]; npeer [143:142];
//   preq [141]; eoff [140:133]; aoff [132:125]; boff [124:117]; emit [116];
//   fuse [115]; abank [114]; bbank [113]; fbank [112]; dnode [111];
//   dst_x [110:107]; dst_y [106:103]; dbuf [102:95]; dflags [94:87];
//   dack_y [86:83]; dack_x [82:79]; dmesh [78:77]; dfin [76:69].
//   n, gm, gn and nk of 0 read as 1.
//
// Storage: L1A and L1B, 512 entries (two banks of 256) x 4 granules each
// (CU_DATA: entry off[10:2], word off[1:0]); accumulator 256 sub-tiles x 16
// S1E7M14. Reset does not clear them (they read as zero from time 0).
//
// FILL (cl_fill.v, units.md C.2-C.4): a leader sends one MEM_RD_REQ; leader
//   and followers take MEM_RD_RESP of any origin until n entries are
//   committed, word 3 committing the collecting register to L1 entry {fbank,
//   txn} of side sel. n > 255 faults F_FILL_RANGE (upstream hangs).
// GEMM: for kb < nk: for g < gm: for h < gn: L1A {abank, (aoff+g*nk+kb) mod
//   256} x L1B {bbank, (boff+h*nk+kb) mod 256} -> tile g*gn+h, LOAD when
//   kb == 0 && !acc else ADD (units.md C.5, C.7), one command a cycle
//   (cl_sweep.v). The GEMM retires when its sweep starts; the sweep runs on
//   behind later instructions. gm*gn > 256 faults F_GEMM_RANGE. With emit
//   (and a last K block that is not a LOAD) every command of the last block
//   is an ADD_EMIT: the write port sends tiles 0..gm*gn-1 as FP16 to the
//   GEMM's own destination fields (the values the ADD_EMITs wrote back), and
//   gm*gn emitted sub-tiles are credited. emit with dmesh or dfin != 0 faults F_REMOTE.
// DRAIN: n sub-tiles through the drain queue (cl_drain.v) and the write port
//   (cl_wport.v): OP_SEND for dnode 1 with dbuf 2, OP_EMIT otherwise; retires
//   when the last flit has left the CU. fuse: sends nothing; once every
//   emitted sub-tile has left, claims n of them, or faults F_FUSE when fewer
//   were emitted (upstream waits forever). F_REMOTE when dmesh or dfin != 0,
//   F_DRAIN_RANGE when n > 256.
// Timing (upstream's cycles, KohakuTPU 7703ee8 mx_cluster_cu.v; docs/cluster.md
//   "Timing"): accepted -> op state -> S_DONE raises exec_done, one instruction
//   at a time. FILL: the request is in the send register the edge after the
//   accept; retires two edges after its n-th entry commits. GEMM: gemm_start
//   the edge after the accept once the array is free (the previous sweep no
//   longer issuing when gm*gn >= REUSE_MIN, the whole array idle when smaller),
//   exec_done 3 edges later: 6 cycles accept to accept. DRAIN: drain_start
//   once the array is idle, one EMIT a cycle, retires when the last flit has
//   left (~22 + 10 n/8 cycles for n a multiple of 8).
// Completions: FILL, GEMM and DRAIN retire with exec_result = the running
//   count of retired FILL/GEMM/DRAIN (units.md C.6; faults are not counted).
// Receive (one flit a cycle from cu_base's receive FIFO): CU_DATA -> cl_rx.v
//   (L1A/L1B granules, ADD_PEER pairs, acks - also for a rejected burst);
//   MEM_RD_RESP -> cl_fill.v while a FILL accepts, otherwise HELD at the head
//   (units.md C.3: it blocks the receive queue, CU_DATA included, until the
//   next FILL takes it); anything else is taken and dropped.
// Ordering (ours): an instruction is accepted once every receive flit that
//   arrived before it has been taken - or the head is a held MEM_RD_RESP -
//   and no ADD_PEER is pending. A peer pair waits while a sweep issues, while
//   an accepted GEMM or DRAIN has not started, and while a DRAIN issues or
//   its granules wait in the drain queue (then the drain has read every
//   sub-tile it sends); the accumulator applies commands in issue order.
// Send register priority: acks, the FILL request, the write port.
//
// Fault codes (FAULT arg, ours): 4 F_OPCODE (opcode not 1..3), 0x10
// F_FILL_RANGE, 0x11 F_GEMM_RANGE, 0x12 F_DRAIN_RANGE, 0x13 F_REMOTE, 0x14
// F_FUSE. dbg_ctr (CU_CTRL index 3) = {inbound flits dropped[15:0], rejected
// bursts[15:0], acks sent[15:0], L1 granules written[15:0]}.
//
// Assertion monitors (cl_mon.v; ERROR line + sticky mon_err), on what this unit sends:
// a MEM_WR_REQ with len > 7 or last=1, or while a write is open; MEM_WR_DATA
// with no open write or a last bit that disagrees with the beat count; a
// CU_DATA descriptor with len > 7 (WBURST) or last=1, a data flit whose last
// disagrees with the count; a MEM_RD_REQ outside a FILL or a second in one; a
// DATA_RECEIVED not owed; a DRAIN retiring before all its write-port
// flits left; an inbound flit held for HOLD_LIMIT cycles (a held MEM_RD_RESP
// named as such: no FILL came for it); two accumulator commands in one cycle;
// the drain queue's overflow or order (cl_drain.v). Plus cu_base's own monitors.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cluster_cu #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer HOLD_LIMIT = 200000,  // > the longest sweep (256 x 255 commands, one a cycle)
    // Timing facts of the upstream cluster (KohakuTPU 7703ee8), docs/cluster.md "Timing":
    parameter integer ISSUE_LAT   = 2,    // sweep issue to the operands at the cascade (mx_cluster_mgr.v)
    parameter integer CASCADE_LAT = 17,   // operands to the partial at the accumulator (mx_cluster_core.v)
    parameter integer ACU_STAGES  = 6,    // accumulator command to its tile write (mx_acu_fp.v)
    parameter integer REUSE_MIN   = 5,    // cycles between commands to one tile; sweep pacing (mx_acu_fp.v)
    parameter integer DQ_DEPTH    = 128,  // drain queue (mx_cluster_node.v)
    parameter integer DQ_LIMIT    = 112   // granules outstanding before issue holds (mx_cluster_node.v)
) (
    input  wire         clk,
    input  wire         resetn,
`include "noc_ep_ports.vh"
    output wire         busy,
    output wire         mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test). The
    // timing parameters are checked by cl_sweep and cl_drain.
    initial begin
        if (MAG_X < 0 || MAG_X > 15 || MAG_Y < 0 || MAG_Y > 15 || HOLD_LIMIT < 0)
            $fatal(1, "cluster_cu %m: MAG_X=%0d MAG_Y=%0d HOLD_LIMIT=%0d: need MAG_X, MAG_Y in 0..15 and HOLD_LIMIT >= 0", MAG_X, MAG_Y, HOLD_LIMIT);
    end
    localparam [3:0] T_RD_RESP = 4'h2, T_CU_DATA = 4'h8;
    localparam [31:0] F_OPCODE = 32'h04, F_FILL_RANGE = 32'h10, F_GEMM_RANGE = 32'h11,
                      F_DRAIN_RANGE = 32'h12, F_REMOTE = 32'h13, F_FUSE = 32'h14;
    localparam integer L1_WORDS = 2048;
    localparam integer TILES = 256;

    // ------------------------------------------------------------ endpoint base
    localparam [15:0] CU_TYPE    = 16'h4D47;   // 'MG'
    localparam [7:0]  CU_VERSION = 8'h01;
    localparam [3:0]  N_BUFFERS  = 4'd3;
    reg          inst_ready;
    reg          exec_done, exec_fault;
    reg  [31:0]  exec_result;
    reg  [287:0] send_flit;
    reg          send_valid;
    wire         recv_ready;
    wire [63:0]  dbg_ctr;
`include "cu_base_inst.vh"

    // ------------------------------------------------------------ storage
    reg [255:0] l1a [0:L1_WORDS-1];
    reg [255:0] l1b [0:L1_WORDS-1];
    reg [351:0] accm [0:TILES-1];

    // ------------------------------------------------------------ the instruction
    reg  [255:0] ip;                     // payload of the instruction in flight
    wire [3:0]   i_op     = ip[255:252];
    wire [16:0]  i_n      = (ip[217:202] == 16'd0) ? 17'd1 : {1'b0, ip[217:202]};
    wire         i_acc    = ip[200];
    wire [8:0]   i_gm     = (ip[199:192] == 8'd0) ? 9'd1 : {1'b0, ip[199:192]};
    wire [8:0]   i_gn     = (ip[191:184] == 8'd0) ? 9'd1 : {1'b0, ip[191:184]};
    wire [8:0]   i_nk     = (ip[183:176] == 8'd0) ? 9'd1 : {1'b0, ip[183:176]};
    wire         i_emit   = ip[116];
    wire         i_fuse   = ip[115];
    wire         i_dnode  = ip[111];
    wire [7:0]   i_dbuf   = ip[102:95];
    wire [1:0]   i_dmesh  = ip[78:77];
    wire [7:0]   i_dfin   = ip[76:69];
    wire         i_remote = i_dmesh != 2'd0 || i_dfin != 8'd0;   // a remote-mesh drain (not modelled)
    wire [17:0]  gm_x_gn  = i_gm * i_gn;
    wire         emitting = i_emit && !(i_nk == 9'd1 && !i_acc);   // the last K block is not a LOAD
    wire         i_send   = i_dnode && i_dbuf == 8'd2;             // a node drain into buf 2: OP_SEND
    // upstream's i_wide: the next sweep need only wait for this one to stop issuing
    wire         wide     = gm_x_gn >= REUSE_MIN[17:0];

    localparam [2:0] S_IDLE = 3'd0, S_FILL = 3'd1, S_GEMM = 3'd2, S_GWAIT = 3'd3, S_DRAIN = 3'd4,
                     S_DWAIT = 3'd5, S_DONE = 3'd6;
    reg [2:0]  state;
    reg        done_fault;               // what S_DONE reports
    reg [31:0] done_code;
    reg [31:0] n_retired;                // exec_result of the next success - 1
    reg [31:0] n_emitted;                // emitted sub-tiles not yet claimed by a fused DRAIN
    reg        gemm_start, drain_start;

    // ------------------------------------------------------------ FILL
    wire         fill_start, fill_active, fill_accepting, fill_req_pend, fill_commit, fill_sel, fill_done;
    wire [287:0] fill_flit;
    wire [8:0]   fill_entry;
    wire [1023:0] fill_data;
    wire         take;
    wire [3:0]   r_type = recv_flit[`NOC_TYPE];
    reg          snd_fill;               // the send register takes the FILL request this cycle
    wire         fill_ok = i_n <= 17'd255;
    assign fill_start = state == S_FILL && !fill_active && fill_ok;
    cl_fill #(.X(X), .Y(Y), .MAG_X(MAG_X), .MAG_Y(MAG_Y)) u_fill (
        .clk(clk), .resetn(resetn), .start(fill_start), .ip(ip),
        .resp(take && r_type == T_RD_RESP), .resp_flit(recv_flit), .req_taken(snd_fill),
        .active(fill_active), .accepting(fill_accepting), .req_pend(fill_req_pend), .req_flit(fill_flit),
        .commit(fill_commit), .commit_sel(fill_sel), .commit_entry(fill_entry), .commit_data(fill_data),
        .done(fill_done));

    // ------------------------------------------------------------ CU_DATA receiver
    wire         rx_stall, rx_we, rx_side, peer_pend, ack_valid, rx_acked, rx_dropped, rx_rejected, rx_landed;
    wire [10:0]  rx_gran;
    wire [7:0]   peer_tile;
    wire [351:0] peer_val;
    wire [287:0] ack_flit;
    wire         peer_take;
    reg          snd_ack;
    cl_rx #(.X(X), .Y(Y)) u_rx (
        .clk(clk), .resetn(resetn), .flit(recv_flit), .is_cu_data(recv_valid && r_type == T_CU_DATA),
        .take(take && r_type == T_CU_DATA), .stall(rx_stall), .l1_we(rx_we), .l1_side(rx_side), .l1_gran(rx_gran),
        .peer_pend(peer_pend), .peer_tile(peer_tile), .peer_val(peer_val), .peer_take(peer_take),
        .ack_valid(ack_valid), .ack_flit(ack_flit), .ack_pop(snd_ack), .burst_acked(rx_acked),
        .dropped(rx_dropped), .rejected(rx_rejected), .landed(rx_landed));

    // receive: RD_RESP outside an accepting FILL is held at the head
    wire recv_held = recv_valid && r_type == T_RD_RESP && !fill_accepting;
    assign recv_ready = recv_valid && !rx_stall && !recv_held;
    assign take = recv_valid && recv_ready;

    // ------------------------------------------------------------ the sweep and the array's timing
    localparam integer SW_LEN = ISSUE_LAT + CASCADE_LAT + 1;
    wire        s1_valid, s1_load, s1_emit, emit_issue, sweep_busy, gemm_busy, dr_stall;
    wire [8:0]  s1_ia, s1_ib;
    wire [7:0]  s1_tile, s1_anchor;
    reg         dcmd;                    // a DRAIN or ADD_PEER command is at the accumulator this cycle
    cl_sweep #(.ISSUE_LAT(ISSUE_LAT), .CASCADE_LAT(CASCADE_LAT), .ACU_STAGES(ACU_STAGES), .REUSE_MIN(REUSE_MIN)) u_sweep (
        .clk(clk), .resetn(resetn), .start(gemm_start), .gm(i_gm), .gn(i_gn), .nk(i_nk),
        .aoff(ip[132:125]), .boff(ip[124:117]), .abank(ip[114]), .bbank(ip[113]), .acc(i_acc), .emit(emitting),
        .anchor(ip[175:168]), .stall(dr_stall), .dcmd(dcmd),
        .s1_valid(s1_valid), .s1_ia(s1_ia), .s1_ib(s1_ib), .s1_tile(s1_tile), .s1_load(s1_load), .s1_emit(s1_emit),
        .s1_anchor(s1_anchor), .emit_issue(emit_issue), .sweep_busy(sweep_busy), .gemm_busy(gemm_busy));

    // ------------------------------------------------------------ drain queue and write port
    wire         dr_iss, dr_busy, dr_more, dr_peer_ok, dr_head_valid, dr_err, wp_take, wp_has, wp_idle;
    wire [7:0]   dr_tile;
    wire [255:0] dr_head_data;
    wire [15:0]  dr_head_idx, wp_expect;
    wire [287:0] wp_flit;
    wire         e_push, e_psweep, e_psend;
    wire [255:0] e_pdata;
    reg          snd_wp, snd_is_wp;
    wire         snd_taken = send_valid && send_ready;
    wire         dr_start  = drain_start && !i_fuse;
    wire         dr_fstart = gemm_start && emitting;
    wire         wp_start  = dr_start || dr_fstart;
    wire [9:0]   tr_gran   = dr_fstart ? gm_x_gn[9:0] : (i_send ? {i_n[8:0], 1'b0} : {1'b0, i_n[8:0]});
    cl_drain #(.SW_LEN(SW_LEN), .ACU_STAGES(ACU_STAGES), .DQ_DEPTH(DQ_DEPTH), .DQ_LIMIT(DQ_LIMIT)) u_drain (
        .clk(clk), .resetn(resetn), .start(dr_start), .n(i_n[8:0]), .send(i_send), .fstart(dr_fstart),
        .gran(tr_gran), .fdrain(drain_start && i_fuse),
        .emit_issue(emit_issue), .iss(dr_iss), .iss_tile(dr_tile), .busy(dr_busy), .more(dr_more), .stall(dr_stall),
        .idle_for_peer(dr_peer_ok), .push(e_push), .psweep(e_psweep), .psend(e_psend), .pdata(e_pdata),
        .head_valid(dr_head_valid), .head_data(dr_head_data), .head_idx(dr_head_idx), .take(wp_take),
        .mon_err(dr_err));
    cl_wport #(.X(X), .Y(Y), .MAG_X(MAG_X), .MAG_Y(MAG_Y)) u_wport (
        .clk(clk), .resetn(resetn), .start(wp_start),
        .gran(tr_gran), .ip(ip),
        .head_valid(dr_head_valid), .head_data(dr_head_data), .head_idx(dr_head_idx), .more(dr_more),
        .take(wp_take), .has_flit(wp_has), .flit(wp_flit), .load(snd_wp),
        .idle(wp_idle), .expected(wp_expect));
    // nothing collected, no burst being sent, none of its flits in the send register
    wire wp_quiet = wp_idle && !(send_valid && snd_is_wp);

    // ------------------------------------------------------------ the accumulator engine
    // One command a cycle, in issue order, taken into e_* and applied at the next edge: a sweep
    // command the edge after its issue (its L1 entries read then, as upstream's manager reads them),
    // a DRAIN's EMIT / SEND or an ADD_PEER at its issue edge. The array's own delays are cl_sweep's
    // delay lines; the drain queue (cl_drain) makes each produced granule readable when upstream's
    // accumulator would emit it.
    localparam [2:0] E_LOAD = 3'd0, E_ADD = 3'd1, E_PEER = 3'd2, E_EMIT = 3'd3, E_SEND = 3'd4;
    wire         peer_ok = !sweep_busy && dr_peer_ok && state != S_GEMM && state != S_GWAIT && state != S_DRAIN;
    assign peer_take = peer_pend && peer_ok;
    reg          e_v, e_emit, e_hi;
    reg  [2:0]   e_op;
    reg  [7:0]   e_tile, e_anchor;
    reg  [1023:0] e_a, e_b;
    reg  [351:0] e_acc, e_peer;
    reg  [255:0] e_hi_data;              // OP_SEND: the second granule, pushed the next cycle
    wire         e_wr = e_v && (e_op == E_LOAD || e_op == E_ADD || e_op == E_PEER);
    // The engine's operand registers (e_op, e_anchor, e_acc, e_a, e_b, e_peer: all cl_mac and cl_emit
    // read) are written only when a command is taken (or at reset), so they run on e_clk, clk gated
    // by that condition (rtl/arith/clock_gate.v): Verilator then evaluates the MAC and the emit
    // conversion only on the cycles that load a command, not on every edge of clk.
    wire         e_load = !resetn || s1_valid || dr_iss || peer_take;
    wire         e_clk;
    clock_gate u_e_gate (.clk(clk), .en(e_load), .gclk(e_clk));
    wire [351:0] mac_out;
    wire [255:0] emit_fp16;
    cl_mac u_mac (.op(e_op[1:0]), .a_ent(e_a), .b_ent(e_b), .anchor(e_anchor), .acc_in(e_acc),
                  .peer_in(e_peer), .acc_out(mac_out));
    cl_emit u_emit (.acc(e_op == E_EMIT ? e_acc : mac_out), .fp16(emit_fp16));
    // what the command applied this cycle gives the drain queue: an EMIT's or ADD_EMIT's FP16 granule,
    // a SEND's first granule (its second the next cycle)
    assign e_push   = (e_v && (e_op == E_EMIT || e_op == E_SEND || (e_emit && e_op == E_ADD))) || e_hi;
    assign e_psweep = e_v && e_emit && e_op == E_ADD;
    assign e_psend  = (e_v && e_op == E_SEND) || e_hi;
    assign e_pdata  = e_hi ? e_hi_data : (e_v && e_op == E_SEND) ? send_half(e_acc, 1'b0) : emit_fp16;
    // the tile as the next command sees it: the value being written this cycle when it is that tile
    function automatic [351:0] acc_now(input [7:0] t);
        acc_now = (e_wr && e_tile == t) ? mac_out : accm[t];
    endfunction
    // OP_SEND granule h: lanes 8h..8h+7, lane e at [(e%8)*32 +: 22], other bits 0
    function automatic [255:0] send_half(input [351:0] v, input hi);
        integer e;
        begin
            send_half = 256'd0;
            for (e = 0; e < 8; e = e + 1)
                send_half[e*32 +: 22] = v[(8*(hi ? 1 : 0) + e)*22 +: 22];
        end
    endfunction

    // the command taken this cycle, into the operand registers (on e_clk: written only when e_load)
    always @(posedge e_clk) begin
        if (!resetn) begin
            e_op <= E_LOAD;
        end else if (s1_valid) begin
            e_op     <= s1_load ? E_LOAD : E_ADD;
            e_anchor <= s1_anchor;
            e_acc    <= acc_now(s1_tile);
            e_a      <= {l1a[{s1_ia, 2'd3}], l1a[{s1_ia, 2'd2}], l1a[{s1_ia, 2'd1}], l1a[{s1_ia, 2'd0}]};
            e_b      <= {l1b[{s1_ib, 2'd3}], l1b[{s1_ib, 2'd2}], l1b[{s1_ib, 2'd1}], l1b[{s1_ib, 2'd0}]};
        end else if (dr_iss) begin
            e_op     <= i_send ? E_SEND : E_EMIT;
            e_acc    <= acc_now(dr_tile);
        end else if (peer_take) begin
            e_op     <= E_PEER;
            e_acc    <= acc_now(peer_tile);
            e_peer   <= peer_val;
        end
    end

    // ------------------------------------------------------------ arrival order
    // Count the flits the base puts into its receive FIFO (its classification,
    // seen on our own input port) and stamp each CU_INST with that count; the
    // head instruction is accepted once as many receive-FIFO flits were taken,
    // or when the receive queue is blocked by a held MEM_RD_RESP.
    wire [3:0]  in_type = noc_in_data[`NOC_TYPE];
    wire        in_take = noc_in_valid && !noc_in_busy;
    wire        in_inst = in_take && in_type == 4'h5;
    wire        in_recv = in_take && !(in_type == 4'h5 || in_type == 4'h7 || in_type == 4'h3 || in_type == 4'hF);
    localparam integer SAW = (INST_DEPTH <= 2) ? 1 : $clog2(INST_DEPTH);
    reg [31:0]  rx_pushed, rx_taken;
    reg [31:0]  stamp [0:INST_DEPTH-1];
    reg [SAW-1:0] stamp_wr, stamp_rd;
    wire [31:0] ahead = stamp[stamp_rd] - rx_taken;          // receive flits still ahead of the head
    wire        in_order = (ahead == 32'd0) || ahead[31] || recv_held;
    always @(posedge clk) begin
        if (!resetn) begin
            rx_pushed <= 32'd0;
            rx_taken  <= 32'd0;
            stamp_wr  <= {SAW{1'b0}};
            stamp_rd  <= {SAW{1'b0}};
        end else if (in_recv || take || in_inst || inst_ready) begin
            if (in_recv) rx_pushed <= rx_pushed + 32'd1;
            if (take)    rx_taken  <= rx_taken + 32'd1;
            if (in_inst) begin
                stamp[stamp_wr] <= rx_pushed;
                stamp_wr <= (stamp_wr == INST_DEPTH[SAW-1:0] - 1'b1) ? {SAW{1'b0}} : stamp_wr + 1'b1;
            end
            if (inst_ready)
                stamp_rd <= (stamp_rd == INST_DEPTH[SAW-1:0] - 1'b1) ? {SAW{1'b0}} : stamp_rd + 1'b1;
        end
    end

    // counters for dbg_ctr
    reg [15:0] c_drop, c_rej, c_ack, c_gran;
    assign dbg_ctr = {c_drop, c_rej, c_ack, c_gran};

    // ------------------------------------------------------------ the unit
    wire snd_free = !send_valid || send_ready;
    // L1 and the accumulator are storage, not state: reset leaves them alone
    // (as upstream's tile memory, which has no reset); they read as zero
    // until first written.
    integer r;
    initial begin
        for (r = 0; r < L1_WORDS; r = r + 1) begin
            l1a[r] = 256'd0;
            l1b[r] = 256'd0;
        end
        for (r = 0; r < TILES; r = r + 1)
            accm[r] = 352'd0;
    end

    // the send register's choice this cycle
    always @* begin
        snd_ack  = snd_free && ack_valid;
        snd_fill = snd_free && !ack_valid && fill_req_pend;
        snd_wp   = snd_free && !ack_valid && !fill_req_pend && wp_has;
    end

    // the op state's fault: retire at once through S_DONE with the code, nothing sent, not counted
    task automatic fault(input [31:0] code);
        begin
            done_fault <= 1'b1;
            done_code  <= code;
            state      <= S_DONE;
        end
    endtask

    task automatic finish_ok;
        begin
            done_fault <= 1'b0;
            state      <= S_DONE;
        end
    endtask

    // Four clocked processes, one per concern; each register is written by exactly one of them.

    // ---------------- receive writes: CU_DATA granules and FILL commits into L1; drops, rejects, granules
    always @(posedge clk) begin
        if (!resetn) begin
            c_drop <= 16'd0;
            c_rej  <= 16'd0;
            c_gran <= 16'd0;
        end else if (rx_we || fill_commit || take || rx_dropped || rx_rejected || rx_landed) begin
            if (rx_we) begin
                if (rx_side) l1b[rx_gran] <= recv_flit[255:0];
                else         l1a[rx_gran] <= recv_flit[255:0];
            end
            if (fill_commit) begin
                if (fill_sel) begin
                    l1b[{fill_entry, 2'd0}] <= fill_data[255:0];
                    l1b[{fill_entry, 2'd1}] <= fill_data[511:256];
                    l1b[{fill_entry, 2'd2}] <= fill_data[767:512];
                    l1b[{fill_entry, 2'd3}] <= fill_data[1023:768];
                end else begin
                    l1a[{fill_entry, 2'd0}] <= fill_data[255:0];
                    l1a[{fill_entry, 2'd1}] <= fill_data[511:256];
                    l1a[{fill_entry, 2'd2}] <= fill_data[767:512];
                    l1a[{fill_entry, 2'd3}] <= fill_data[1023:768];
                end
            end
            if (take && r_type != T_CU_DATA && r_type != T_RD_RESP) c_drop <= c_drop + 16'd1;
            else if (rx_dropped) c_drop <= c_drop + 16'd1;
            if (rx_rejected) c_rej <= c_rej + 16'd1;
            if (rx_landed) c_gran <= c_gran + 16'd1;
            else if (fill_commit) c_gran <= c_gran + 16'd4;
        end
    end

    // ---------------- accumulator engine: apply last cycle's command, take this cycle's
    always @(posedge clk) begin
        if (!resetn) begin
            dcmd <= 1'b0;
            e_v  <= 1'b0;
            e_hi <= 1'b0;
        end else if (e_v || e_hi || dcmd || s1_valid || dr_iss || peer_take) begin
            // (otherwise e_hi, dcmd and e_v stay 0 and e_hi_data already holds the half of an e_acc
            // unchanged since the last active cycle: one test a cycle on Icarus while the engine idles)
            if (e_wr) accm[e_tile] <= mac_out;
            e_hi     <= e_v && e_op == E_SEND;
            e_hi_data <= send_half(e_acc, 1'b1);
            dcmd     <= dr_iss || peer_take;
            e_v      <= s1_valid || dr_iss || peer_take;
            if (s1_valid) begin
                e_emit   <= s1_emit;
                e_tile   <= s1_tile;
            end else if (dr_iss) begin
                e_emit   <= 1'b0;
                e_tile   <= dr_tile;
            end else if (peer_take) begin
                e_emit   <= 1'b0;
                e_tile   <= peer_tile;
            end
        end
    end

    // ---------------- send register: acks, the FILL request, the write port
    always @(posedge clk) begin
        if (!resetn) begin
            send_valid <= 1'b0;
            send_flit  <= 288'd0;
            snd_is_wp  <= 1'b0;
            c_ack      <= 16'd0;
        end else if (send_valid || snd_is_wp || ack_valid || fill_req_pend || wp_has) begin
            if (snd_free) begin
                snd_is_wp <= 1'b0;
                if (snd_ack) begin
                    send_flit  <= ack_flit;
                    send_valid <= 1'b1;
                    c_ack      <= c_ack + 16'd1;
                end else if (snd_fill) begin
                    send_flit  <= fill_flit;
                    send_valid <= 1'b1;
                end else if (snd_wp) begin
                    send_flit  <= wp_flit;
                    send_valid <= 1'b1;
                    snd_is_wp  <= 1'b1;
                end else begin
                    send_valid <= 1'b0;
                end
            end
        end
    end

    // ---------------- instruction sequencer (upstream mx_cluster_cu.v's states)
    always @(posedge clk) begin
        if (!resetn) begin
            state       <= S_IDLE;
            inst_ready  <= 1'b0;
            exec_done   <= 1'b0;
            exec_fault  <= 1'b0;
            exec_result <= 32'd0;
            done_fault  <= 1'b0;
            done_code   <= 32'd0;
            gemm_start  <= 1'b0;
            drain_start <= 1'b0;
            n_retired   <= 32'd0;
            n_emitted   <= 32'd0;
        end else if (state != S_IDLE || inst_valid || inst_ready || exec_done || gemm_start || drain_start) begin
            inst_ready  <= 1'b0;
            exec_done   <= 1'b0;
            gemm_start  <= 1'b0;
            drain_start <= 1'b0;
            case (state)
                S_IDLE: if (inst_valid && in_order && !peer_pend) begin
                    inst_ready <= 1'b1;
                    ip         <= inst_flit[255:0];
                    case (inst_flit[255:252])
                        4'd1:    state <= S_FILL;
                        4'd2:    state <= S_GEMM;
                        4'd3:    state <= S_DRAIN;
                        default: fault(F_OPCODE);
                    endcase
                end
                S_FILL: if (!fill_ok) begin
                    fault(F_FILL_RANGE);
                end else if (fill_done) begin
                    finish_ok;
                end
                S_GEMM: if (gm_x_gn > 18'd256) begin
                    fault(F_GEMM_RANGE);
                end else if (i_emit && i_remote) begin
                    fault(F_REMOTE);
                end else if (!(wide ? sweep_busy : gemm_busy) && (!emitting || (!dr_busy && wp_quiet))) begin
                    gemm_start <= 1'b1;
                    if (emitting) n_emitted <= n_emitted + {14'd0, gm_x_gn};
                    state <= S_GWAIT;
                end
                S_GWAIT: if (!gemm_start) finish_ok;
                S_DRAIN: if (i_remote) begin
                    fault(F_REMOTE);
                end else if (i_n > 17'd256) begin
                    fault(F_DRAIN_RANGE);
                end else if (i_fuse || (!gemm_busy && !dr_busy && wp_quiet)) begin
                    drain_start <= 1'b1;
                    state       <= S_DWAIT;
                end
                // retires when its last flit has left; a fused DRAIN once every emitted sub-tile has
                S_DWAIT: if (!drain_start && !dr_busy && wp_quiet && !(i_fuse && sweep_busy)) begin
                    if (!i_fuse) begin
                        finish_ok;
                    end else if (n_emitted < {15'd0, i_n}) begin
                        fault(F_FUSE);
                    end else begin
                        n_emitted <= n_emitted - {15'd0, i_n};
                        finish_ok;
                    end
                end
                S_DONE: begin
                    exec_done   <= 1'b1;
                    exec_fault  <= done_fault;
                    exec_result <= done_fault ? done_code : n_retired + 32'd1;
                    if (!done_fault) n_retired <= n_retired + 32'd1;
                    state       <= S_IDLE;
                end
                default: state <= S_IDLE;
            endcase
        end
    end

    // ------------------------------------------------------------ monitors
    wire m_err;
    wire drain_retire = state == S_DWAIT && !drain_start && !dr_busy && wp_quiet && !(i_fuse && sweep_busy);
    cl_mon #(.HOLD_LIMIT(HOLD_LIMIT)) u_mon (
        .clk(clk), .resetn(resetn), .send_flit(send_flit), .snd_taken(snd_taken), .snd_is_wp(snd_is_wp),
        .fill_start(fill_start), .fill_active(fill_active), .wp_start(wp_start),
        .wp_retire(drain_retire), .wp_expect(wp_expect),
        .engine_clash((s1_valid && dr_iss) || (s1_valid && peer_take) || (dr_iss && peer_take)),
        .rx_acked(rx_acked), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .recv_held(recv_held), .recv_flit(recv_flit), .err(m_err));

    assign mon_err = base_err | m_err | dr_err;
    // the unit is busy while an instruction is queued or in flight, a sweep or the array runs, or a
    // drain's granules have not all left (keeps a bench's quiet detector off during a long sweep)
    assign busy = base_busy || gemm_busy || dr_busy || !wp_quiet;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, base_inst_space, inst_flit[287:256], ip[251:218], ip[201], ip[167:133], ip[112],
                       ip[110:103], ip[94:79], ip[76:0], gm_x_gn[17:10], i_n[16:9], i_op, e_op[2]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
