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
//   kb == 0 && !acc else ADD (units.md C.5, C.7). Two cycles per command.
//   gm*gn > 256 faults F_GEMM_RANGE. With emit (and a last K block that is
//   not a LOAD) the sweep is followed by the write port sending tiles 0..
//   gm*gn-1 as FP16 to the GEMM's own destination fields (the values the last
//   block's ADD_EMITs wrote back); the GEMM retires when they have left and
//   credits gm*gn emitted sub-tiles. emit with dmesh != 0 faults F_REMOTE.
// DRAIN: n sub-tiles through the write port (cl_wport.v): OP_SEND for dnode
//   1 with dbuf 2, OP_EMIT otherwise; retires when the last flit has left the
//   CU. fuse: sends nothing, claims n emitted sub-tiles, or faults F_FUSE when
//   fewer were emitted (upstream waits forever). F_REMOTE when dmesh != 0,
//   F_DRAIN_RANGE when n > 256.
// Completions: FILL, GEMM and DRAIN retire with exec_result = the running
//   count of retired FILL/GEMM/DRAIN (units.md C.6; faults are not counted).
// Receive (one flit a cycle from cu_base's receive FIFO): CU_DATA -> cl_rx.v
//   (L1A/L1B granules, ADD_PEER pairs, acks - also for a rejected burst);
//   MEM_RD_RESP -> cl_fill.v while a FILL accepts, otherwise HELD at the head
//   (units.md C.3: it blocks the receive queue, CU_DATA included, until the
//   next FILL takes it); anything else is taken and dropped.
// Ordering (ours): an instruction is accepted once every receive flit that
//   arrived before it has been taken - or the head is a held MEM_RD_RESP -
//   and no ADD_PEER is pending or being written. A peer pair arriving during
//   a sweep waits for the sweep's end; during a DRAIN it is applied at once.
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
// DATA_RECEIVED not owed; a DRAIN or emitting GEMM retiring before all its
// flits left; an inbound flit held for HOLD_LIMIT cycles (a held MEM_RD_RESP
// named as such: no FILL came for it). Plus cu_base's own monitors.
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
    parameter integer HOLD_LIMIT = 200000   // > the longest GEMM (2 x 256 x 255 cycles)
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] noc_in_data,
    input  wire         noc_in_valid,
    output wire         noc_in_busy,
    output wire [287:0] noc_out_data,
    output wire         noc_out_valid,
    input  wire         noc_out_busy,
    output wire         busy,
    output wire         mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/runner.py runs this check before any test).
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
    wire [287:0] inst_flit, recv_flit;
    wire         inst_valid, recv_valid, send_ready;
    reg          inst_ready;
    reg          exec_done, exec_fault;
    reg  [31:0]  exec_result;
    reg  [287:0] send_flit;
    reg          send_valid;
    wire         recv_ready;
    wire [63:0]  dbg_ctr;
    wire [15:0]  inst_space;
    wire         base_err;

    cu_base #(.X(X), .Y(Y), .CU_TYPE(16'h4D47), .CU_VERSION(8'h01), .N_BUFFERS(4'd3),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_base (
        .clk(clk), .resetn(resetn),
        .noc_in_data(noc_in_data), .noc_in_valid(noc_in_valid), .noc_in_busy(noc_in_busy),
        .noc_out_data(noc_out_data), .noc_out_valid(noc_out_valid), .noc_out_busy(noc_out_busy),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(inst_space), .busy(busy), .mon_err(base_err));

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
    wire [7:0]   i_anchor = ip[175:168];
    wire [7:0]   i_aoff   = ip[132:125];
    wire [7:0]   i_boff   = ip[124:117];
    wire         i_emit   = ip[116];
    wire         i_fuse   = ip[115];
    wire         i_abank  = ip[114];
    wire         i_bbank  = ip[113];
    wire         i_dnode  = ip[111];
    wire [7:0]   i_dbuf   = ip[102:95];
    wire [1:0]   i_dmesh  = ip[78:77];
    wire [17:0]  gm_x_gn  = i_gm * i_gn;
    wire         emitting = i_emit && !(i_nk == 9'd1 && !i_acc);   // the last K block is not a LOAD

    localparam [2:0] S_IDLE = 3'd0, S_ACCEPT = 3'd1, S_DECODE = 3'd2, S_FILL = 3'd3,
                     S_GEMM = 3'd4, S_EMIT = 3'd5, S_DRAIN = 3'd6;
    reg [2:0]  state;
    reg [31:0] n_retired;                // exec_result of the next success - 1
    reg [31:0] n_emitted;                // emitted sub-tiles not yet claimed by a fused DRAIN

    // ------------------------------------------------------------ FILL
    reg          fill_start;
    wire         fill_active, fill_accepting, fill_req_pend, fill_commit, fill_sel, fill_done;
    wire [287:0] fill_flit;
    wire [8:0]   fill_entry;
    wire [1023:0] fill_data;
    wire         take;
    wire [3:0]   r_type = recv_flit[`NOC_TYPE];
    reg          snd_fill;               // the send register takes the FILL request this cycle
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
    reg          peer_take, snd_ack;
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

    // ------------------------------------------------------------ write port
    reg          wp_start, wp_send, snd_wp, snd_is_wp;
    reg  [8:0]   wp_tiles;
    wire         wp_has, wp_active, wp_done;
    wire [7:0]   wp_tile;
    wire [287:0] wp_flit;
    wire [15:0]  wp_expect;
    wire         snd_taken = send_valid && send_ready;
    cl_wport #(.X(X), .Y(Y), .MAG_X(MAG_X), .MAG_Y(MAG_Y)) u_wport (
        .clk(clk), .resetn(resetn), .start(wp_start), .send_mode(wp_send), .n_tiles(wp_tiles), .ip(ip),
        .rd_tile(wp_tile), .rd_val(accm[wp_tile]), .has_flit(wp_has), .flit(wp_flit), .load(snd_wp),
        .sent(snd_taken && snd_is_wp), .active(wp_active), .done(wp_done), .expected(wp_expect));

    // ------------------------------------------------------------ GEMM sweep
    reg        gemm_run;
    reg [7:0]  g_kb, g_g, g_h;
    wire [16:0] g_gnk = g_g * i_nk;
    wire [16:0] g_hnk = g_h * i_nk;
    wire [7:0]  g_oa = i_aoff + g_gnk[7:0] + g_kb;   // 8-bit offsets wrap within their bank
    wire [7:0]  g_ob = i_boff + g_hnk[7:0] + g_kb;
    wire [8:0]  g_ia = {i_abank, g_oa};
    wire [8:0]  g_ib = {i_bbank, g_ob};
    wire [15:0] g_tile = g_g * i_gn + {8'd0, g_h};
    wire        g_last_h  = ({1'b0, g_h} == i_gn - 9'd1);
    wire        g_last_g  = ({1'b0, g_g} == i_gm - 9'd1);
    wire        g_last_kb = ({1'b0, g_kb} == i_nk - 9'd1);
    // accumulator engine: one command in two cycles (read, then write)
    reg        ae_wr;
    reg [1:0]  ae_op;
    reg [7:0]  ae_tile;
    reg [1023:0] ae_a, ae_b;
    reg [351:0] ae_acc, ae_peer;
    wire [351:0] mac_out;
    cl_mac u_mac (.op(ae_op), .a_ent(ae_a), .b_ent(ae_b), .anchor(i_anchor), .acc_in(ae_acc),
                  .peer_in(ae_peer), .acc_out(mac_out));

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
        end else begin
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

    task automatic retire_ok;
        begin
            exec_done   <= 1'b1;
            exec_fault  <= 1'b0;
            exec_result <= n_retired + 32'd1;
            n_retired   <= n_retired + 32'd1;
            state       <= S_IDLE;
        end
    endtask

    task automatic retire_fault(input [31:0] code);
        begin
            exec_done   <= 1'b1;
            exec_fault  <= 1'b1;
            exec_result <= code;
            state       <= S_IDLE;
        end
    endtask

    always @(posedge clk) begin
        if (!resetn) begin
            state <= S_IDLE;
            inst_ready <= 1'b0;
            exec_done <= 1'b0;
            exec_fault <= 1'b0;
            exec_result <= 32'd0;
            send_valid <= 1'b0;
            send_flit <= 288'd0;
            snd_is_wp <= 1'b0;
            fill_start <= 1'b0;
            wp_start <= 1'b0;
            wp_send <= 1'b0;
            wp_tiles <= 9'd1;
            gemm_run <= 1'b0;
            ae_wr <= 1'b0;
            ae_op <= 2'd0;
            peer_take <= 1'b0;
            n_retired <= 32'd0;
            n_emitted <= 32'd0;
            c_drop <= 16'd0;
            c_rej <= 16'd0;
            c_ack <= 16'd0;
            c_gran <= 16'd0;
        end else begin
            inst_ready <= 1'b0;
            exec_done  <= 1'b0;
            fill_start <= 1'b0;
            wp_start   <= 1'b0;
            peer_take  <= 1'b0;

            // ---------------- receive writes: CU_DATA granules, FILL commits; drops
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

            // ---------------- accumulator engine (the sweep first; ADD_PEER between sweeps)
            if (ae_wr) begin
                accm[ae_tile] <= mac_out;
                ae_wr <= 1'b0;
            end else if (!gemm_run && peer_pend && !peer_take) begin
                ae_op     <= 2'd2;
                ae_tile   <= peer_tile;
                ae_acc    <= accm[peer_tile];
                ae_peer   <= peer_val;
                peer_take <= 1'b1;
                ae_wr     <= 1'b1;
            end else if (gemm_run) begin
                ae_op   <= (g_kb == 8'd0 && !i_acc) ? 2'd0 : 2'd1;
                ae_tile <= g_tile[7:0];
                ae_acc  <= accm[g_tile[7:0]];
                ae_a    <= {l1a[{g_ia, 2'd3}], l1a[{g_ia, 2'd2}], l1a[{g_ia, 2'd1}], l1a[{g_ia, 2'd0}]};
                ae_b    <= {l1b[{g_ib, 2'd3}], l1b[{g_ib, 2'd2}], l1b[{g_ib, 2'd1}], l1b[{g_ib, 2'd0}]};
                ae_wr   <= 1'b1;
                if (!g_last_h) begin
                    g_h <= g_h + 8'd1;
                end else begin
                    g_h <= 8'd0;
                    if (!g_last_g) begin
                        g_g <= g_g + 8'd1;
                    end else begin
                        g_g <= 8'd0;
                        g_kb <= g_kb + 8'd1;
                        if (g_last_kb) gemm_run <= 1'b0;
                    end
                end
            end

            // ---------------- send register: acks, the FILL request, the write port
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

            // ---------------- instruction sequencer
            case (state)
                S_IDLE: if (inst_valid && in_order && !peer_pend && !ae_wr) begin
                    inst_ready <= 1'b1;
                    ip         <= inst_flit[255:0];
                    state      <= S_ACCEPT;
                end
                S_ACCEPT: state <= S_DECODE;      // the base pops the instruction here
                S_DECODE: begin
                    case (i_op)
                        4'd1: if (i_n > 17'd255) begin
                                  retire_fault(F_FILL_RANGE);
                              end else begin
                                  fill_start <= 1'b1;
                                  state      <= S_FILL;
                              end
                        4'd2: if (gm_x_gn > 18'd256) begin
                                  retire_fault(F_GEMM_RANGE);
                              end else if (i_emit && i_dmesh != 2'd0) begin
                                  retire_fault(F_REMOTE);
                              end else begin
                                  g_kb <= 8'd0; g_g <= 8'd0; g_h <= 8'd0;
                                  gemm_run <= 1'b1;
                                  state    <= S_GEMM;
                              end
                        4'd3: if (i_dmesh != 2'd0) begin
                                  retire_fault(F_REMOTE);
                              end else if (i_n > 17'd256) begin
                                  retire_fault(F_DRAIN_RANGE);
                              end else if (i_fuse) begin
                                  if (n_emitted < {15'd0, i_n}) begin
                                      retire_fault(F_FUSE);
                                  end else begin
                                      n_emitted <= n_emitted - {15'd0, i_n};
                                      retire_ok;
                                  end
                              end else begin
                                  wp_start <= 1'b1;
                                  wp_send  <= i_dnode && i_dbuf == 8'd2;
                                  wp_tiles <= i_n[8:0];
                                  state    <= S_DRAIN;
                              end
                        default: retire_fault(F_OPCODE);
                    endcase
                end
                S_FILL: if (fill_done) retire_ok;
                S_GEMM: if (!gemm_run && !ae_wr) begin
                    if (emitting) begin
                        wp_start <= 1'b1;
                        wp_send  <= 1'b0;
                        wp_tiles <= gm_x_gn[8:0];
                        state    <= S_EMIT;
                    end else begin
                        retire_ok;
                    end
                end
                S_EMIT: if (wp_done) begin
                    n_emitted <= n_emitted + {23'd0, wp_tiles};
                    retire_ok;
                end
                S_DRAIN: if (wp_done) retire_ok;
                default: state <= S_IDLE;
            endcase
        end
    end

    // ------------------------------------------------------------ monitors
    wire m_err;
    cl_mon #(.HOLD_LIMIT(HOLD_LIMIT)) u_mon (
        .clk(clk), .resetn(resetn), .send_flit(send_flit), .snd_taken(snd_taken), .snd_is_wp(snd_is_wp),
        .fill_start(fill_start), .fill_active(fill_active), .wp_start(wp_start),
        .wp_retire((state == S_DRAIN || state == S_EMIT) && wp_done), .wp_is_drain(state == S_DRAIN),
        .wp_expect(wp_expect), .rx_acked(rx_acked), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .recv_held(recv_held), .recv_flit(recv_flit), .err(m_err));

    assign mon_err = base_err | m_err;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, inst_space, inst_flit[287:256], ip[251:218], ip[201], ip[167:133], ip[112],
                       ip[110:103], ip[94:79], ip[76:0], gm_x_gn[17:9], g_tile[15:8], g_gnk[16:8], g_hnk[16:8],
                       i_n[16:9], wp_active};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
