// Bench top of the timing-corpus replay (bench vec_timing, tb/vector/test_vec_timing.py).
//
// The vector core (vector_core.v) at (3,3) with its memory port at (1,1), its NoC port driven
// directly (no mesh), played the way upstream's bench fed the programs of clients/vec_timing/
// (README.md there, "How the bench feeds a program"):
//   * the flits of a record (flits[0 .. n_flits-1]: the CU_DATA burst, then the CU_INST flits) are
//     presented one per cycle, at most one every FEED_INTERVAL cycles, only in a cycle where the
//     core's noc_in_busy is low and no memory response is presented (responses have priority);
//     a flit is presented only with busy low, so every presentation is a transfer;
//   * plain MEM_RD_REQ (protocol.md §5: STREAM = QUANT = 0) are queued and answered in order, one
//     beat per response slot, from dram[] at line = address bits [20:5]: a response enters the core
//     MEM_FIRST cycles after the request was taken into an empty queue, and while requests are
//     queued one enters every MEM_INTERVAL cycles; each beat is MEM_RD_RESP {dst = the requester,
//     src = (1,1), txn echoed, last on the final beat, rsvd 0, the line};
//   * MEM_WR_REQ (len <= 7) + MEM_WR_DATA write lines of dram[] (data bound by source); nothing is
//     acknowledged; the core's outbound link is never back-pressured;
//   * CU_SIGNAL flits are logged with the cycle they were seen (sig_log), CU_DATA flits the core
//     sends (node-form VDRAIN) are logged whole (cudo_log), every DRAM write is logged (wlog);
//   * a passive probe logs {RUN number, pc, cycles} of u_dut.u_exec in every cycle its execute
//     probe word_exec is 1 (trace), and {start cycle, end cycle, fault, result} of every RUN
//     (run_log: result = the cycle count, or the fault code);
//   * the record ends END_CYCLES cycles after the n_inst-th completion (INST_COMPLETE,
//     BATCH_COMPLETE or FAULT), or after MAX_CYCLES cycles (err bit 6, the watchdog): rec_done.
// Anything else the core sends the memory port is an error of the core's protocol, counted in err
// (sticky until reset) and printed as an ERROR line: bit 0 an entry read (STREAM or QUANT), bit 1
// a memory flit addressed elsewhere than (1,1), bit 2 MEM_WR_DATA without an open write from its
// source, or MEM_WR_REQ while data is owed, bit 3 MEM_WR_REQ with len > 7, bit 4 an outbound type
// the bench does not take; bit 5: a log or the read queue overflowed (the record did not fit);
// bit 6: the watchdog.
//
// Python (tb/vector/vec_timing/sim.py) drives it, many records in one simulation:
//   load_req:  $readmemh of vt_flits.hex into flits and of vt_dram.hex (sparse, @line) into dram
//   clear_req: power-on state of the core's memories (u_dut.u_exec imem, l1, vr = 0; upstream's
//              two-state simulation read never-written state as 0), and with clear_dram every line
//   reset (harness_clock), then n_flits / n_inst and go = 1; rec_done rises at the end
//   dump_req:  $writememh of the logs and of dram[bd_lo..bd_hi] (when dump_dram)
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module vt_harness #(
    parameter integer FLIT_DEPTH  = 1024,
    parameter integer SIG_DEPTH   = 256,
    parameter integer TRACE_DEPTH = 2048,
    parameter integer RUN_DEPTH   = 16,
    parameter integer CUDO_DEPTH  = 512,
    parameter integer WLOG_DEPTH  = 1024,
    parameter integer RDQ_DEPTH   = 512,
    parameter integer MLOG_DEPTH  = 1024,
    parameter integer MAX_CYCLES  = 100000,
    // upstream's bench, clients/vec_timing/README.md "How the bench feeds a program"
    parameter integer FEED_INTERVAL = 2,    // "at most one every second cycle"
    parameter integer MEM_FIRST     = 5,    // "the first entering the core 5 cycles after the bench took the request"
    parameter integer MEM_INTERVAL  = 4,    // "one response every 4 cycles"
    parameter integer END_CYCLES    = 20,   // "the bench ends 20 cycles after every CU_INST has retired"
    // upstream's vec_cu build (README.md "Source of the numbers"): instruction FIFO 32, receive queue 64
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 64
) ();
    // coordinates of the corpus: the core at (3,3), its memory port (1,1), the host (0,0)
    localparam integer CORE_X = 3, CORE_Y = 3, MAG_X = 1, MAG_Y = 1;
    localparam [3:0] MAG_X4 = 4'd1, MAG_Y4 = 4'd1;
    localparam [3:0] T_MEM_RD_REQ = 4'h0, T_MEM_WR_REQ = 4'h1, T_MEM_RD_RESP = 4'h2, T_MEM_WR_DATA = 4'h4,
                     T_CU_SIGNAL = 4'h6, T_CU_DATA = 4'h8;
    localparam integer DRAM_LINES = 65536;  // line = byte address bits [20:5]
    localparam integer FA = $clog2(FLIT_DEPTH), SA = $clog2(SIG_DEPTH), TA = $clog2(TRACE_DEPTH),
                       RA = $clog2(RUN_DEPTH), CA = $clog2(CUDO_DEPTH), WA = $clog2(WLOG_DEPTH),
                       QA = $clog2(RDQ_DEPTH), MA = $clog2(MLOG_DEPTH);

    initial begin
        if (FLIT_DEPTH < 2 || FLIT_DEPTH > 65535 || SIG_DEPTH < 2 || SIG_DEPTH > 65535 || TRACE_DEPTH < 2 ||
            RUN_DEPTH < 2 || RUN_DEPTH > 255 || CUDO_DEPTH < 2 || WLOG_DEPTH < 2 || RDQ_DEPTH < 2 || MLOG_DEPTH < 2 ||
            (RDQ_DEPTH & (RDQ_DEPTH - 1)) != 0)
            $fatal(1, "vt_harness %m: FLIT_DEPTH=%0d SIG_DEPTH=%0d TRACE_DEPTH=%0d RUN_DEPTH=%0d CUDO_DEPTH=%0d WLOG_DEPTH=%0d RDQ_DEPTH=%0d MLOG_DEPTH=%0d: need every depth >= 2, FLIT_DEPTH and SIG_DEPTH <= 65535 (16-bit counts), RUN_DEPTH <= 255 (8-bit RUN number), RDQ_DEPTH a power of two (its pointers wrap)",
                   FLIT_DEPTH, SIG_DEPTH, TRACE_DEPTH, RUN_DEPTH, CUDO_DEPTH, WLOG_DEPTH, RDQ_DEPTH, MLOG_DEPTH);
        if (FEED_INTERVAL < 1 || MEM_INTERVAL < 1 || MEM_FIRST < MEM_INTERVAL || MEM_FIRST > 255 || END_CYCLES < 1 || MAX_CYCLES < 1)
            $fatal(1, "vt_harness %m: FEED_INTERVAL=%0d MEM_FIRST=%0d MEM_INTERVAL=%0d END_CYCLES=%0d MAX_CYCLES=%0d: need FEED_INTERVAL >= 1, 1 <= MEM_INTERVAL <= MEM_FIRST <= 255, END_CYCLES >= 1, MAX_CYCLES >= 1",
                   FEED_INTERVAL, MEM_FIRST, MEM_INTERVAL, END_CYCLES, MAX_CYCLES);
    end

    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    /* verilator lint_off UNUSEDSIGNAL */  // Python-driven controls and Python-read results
    reg          go = 1'b0;
    reg  [15:0]  n_flits = 16'd0;
    reg  [15:0]  n_inst = 16'd0;
    reg          load_req = 1'b0, load_ack = 1'b0;
    reg          clear_req = 1'b0, clear_ack = 1'b0, clear_dram = 1'b0;
    reg          dump_req = 1'b0, dump_ack = 1'b0, dump_dram = 1'b0;
    reg  [15:0]  bd_lo = 16'd0, bd_hi = 16'd0;
    reg          rec_done;
    reg  [31:0]  cyc;                        // cycles since go
    reg  [31:0]  sig_n, tr_n, run_n, cudo_n, wl_n, rq_n, rs_n, retired;
    reg  [6:0]   err;
    wire         core_err;
    wire         mon_err = core_err || (err[4:0] != 5'd0);  // a core monitor or a harness protocol error
    wire [127:0] hazards;                    // the core's HAZARD report counts {H4, H3, H2, H1}
    wire [15:0]  inst_space;
    wire         core_busy;
    /* verilator lint_on UNUSEDSIGNAL */

    reg [287:0] flits    [0:FLIT_DEPTH-1];
    reg [255:0] dram     [0:DRAM_LINES-1];
    reg [87:0]  sig_log  [0:SIG_DEPTH-1];    // {cycle 32, dst {x,y} 8, txn 8, code 8, arg 32}
    reg [55:0]  trace    [0:TRACE_DEPTH-1];  // {RUN number 8, 7'b0, pc 9, cycles 32}
    reg [103:0] run_log  [0:RUN_DEPTH-1];    // {start cycle 32, end cycle 32 (all ones: no end), 7'b0, fault 1, result 32}
    reg [287:0] cudo_log [0:CUDO_DEPTH-1];
    reg [271:0] wlog     [0:WLOG_DEPTH-1];   // {line 16, data 256}
    reg [31:0]  rq_log   [0:MLOG_DEPTH-1];   // the cycle each read request was taken
    reg [31:0]  rs_log   [0:MLOG_DEPTH-1];   // the cycle each response beat was presented
    reg [39:0]  rdq      [0:RDQ_DEPTH-1];    // {requester {x,y} 8, txn 8, line 16, len 8}

    integer i;
    initial for (i = 0; i < DRAM_LINES; i = i + 1) dram[i] = 256'd0;

    /* verilator lint_off BLKSEQ */  // bench backdoor, not logic
    always @(posedge load_req) begin
        $readmemh("vt_flits.hex", flits);
        $readmemh("vt_dram.hex", dram);
        load_ack = 1'b1;
    end
    always @(negedge load_req) load_ack = 1'b0;
    always @(posedge clear_req) begin
        for (i = 0; i < 512; i = i + 1) begin
            u_dut.u_exec.imem[i] = 32'd0;
            u_dut.u_exec.l1[i] = 256'd0;
        end
        for (i = 0; i < 128; i = i + 1) u_dut.u_exec.vr[i] = 384'd0;
        if (clear_dram) for (i = 0; i < DRAM_LINES; i = i + 1) dram[i] = 256'd0;
        clear_ack = 1'b1;
    end
    always @(negedge clear_req) clear_ack = 1'b0;
    always @(posedge dump_req) begin
        if (sig_n != 0)  $writememh("vt_sig.hex", sig_log, 0, (sig_n < SIG_DEPTH ? sig_n : SIG_DEPTH) - 1);
        if (tr_n != 0)   $writememh("vt_trace.hex", trace, 0, (tr_n < TRACE_DEPTH ? tr_n : TRACE_DEPTH) - 1);
        if (run_n != 0)  $writememh("vt_run.hex", run_log, 0, (run_n < RUN_DEPTH ? run_n : RUN_DEPTH) - 1);
        if (cudo_n != 0) $writememh("vt_cudo.hex", cudo_log, 0, (cudo_n < CUDO_DEPTH ? cudo_n : CUDO_DEPTH) - 1);
        if (wl_n != 0)   $writememh("vt_wlog.hex", wlog, 0, (wl_n < WLOG_DEPTH ? wl_n : WLOG_DEPTH) - 1);
        if (rq_n != 0)   $writememh("vt_rq.hex", rq_log, 0, (rq_n < MLOG_DEPTH ? rq_n : MLOG_DEPTH) - 1);
        if (rs_n != 0)   $writememh("vt_rs.hex", rs_log, 0, (rs_n < MLOG_DEPTH ? rs_n : MLOG_DEPTH) - 1);
        if (dump_dram)   $writememh("vt_drain.hex", dram, bd_lo, bd_hi);
        dump_ack = 1'b1;
    end
    always @(negedge dump_req) dump_ack = 1'b0;
    /* verilator lint_on BLKSEQ */

    // ============================================================ the core
    wire [287:0] in_data;
    wire         in_valid, in_busy;
    wire [287:0] out_data;
    wire         out_valid;
    vector_core #(.X(CORE_X), .Y(CORE_Y), .MAG_X(MAG_X), .MAG_Y(MAG_Y), .INST_DEPTH(INST_DEPTH),
                  .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(in_data), .noc_in_valid(in_valid), .noc_in_busy(in_busy),
        .noc_out_data(out_data), .noc_out_valid(out_valid), .noc_out_busy(1'b0),
        .inst_space(inst_space), .busy(core_busy), .hazards(hazards), .mon_err(core_err));

    wire active = resetn && go;

    // ============================================================ memory responses
    reg  [QA:0]  q_count;
    reg  [QA-1:0] q_rp, q_wp;
    reg  [7:0]   q_beat;                     // beat of the head request being answered
    reg  [7:0]   mw;                         // cycles since the queue filled or the last response
    wire         q_full = (q_count == RDQ_DEPTH[QA:0]);
    wire [39:0]  q_head = rdq[q_rp];
    wire [15:0]  rsp_line = q_head[23:8] + {8'd0, q_beat};
    wire         rsp_last = (q_beat == q_head[7:0]);
    wire         rsp_due  = active && (q_count != 0) && (mw >= MEM_FIRST[7:0] - 8'd1);
    wire         rsp_fire = rsp_due && !in_busy;
    wire [287:0] rsp_flit = {q_head[39:36], q_head[35:32], MAG_X4, MAG_Y4, T_MEM_RD_RESP, q_head[31:24],
                             rsp_last, 3'b000, dram[rsp_line]};

    // ============================================================ the feeder
    reg  [15:0]  fd_ptr;
    reg  [7:0]   fd_wait;
    wire         feed_fire = active && (fd_ptr < n_flits) && (fd_wait == 8'd0) && !in_busy && !rsp_due;
    assign in_valid = rsp_fire || feed_fire;
    assign in_data  = rsp_fire ? rsp_flit : flits[fd_ptr[FA-1:0]];

    // ============================================================ the outbound link
    wire [3:0]   o_type = out_data[`NOC_TYPE];
    wire [7:0]   o_dst  = {out_data[`NOC_DST_X], out_data[`NOC_DST_Y]};
    wire [7:0]   o_src  = {out_data[`NOC_SRC_X], out_data[`NOC_SRC_Y]};
    wire [7:0]   o_txn  = out_data[`NOC_TXN];
    wire         o_entry = out_data[206] || out_data[204];  // flags [207:200]: STREAM bit 6, QUANT bit 4
    wire [15:0]  o_line = out_data[236:221];  // byte address [255:216], bits [20:5]
    wire [7:0]   o_len  = out_data[215:208];
    wire         o_mem  = (o_type == T_MEM_RD_REQ) || (o_type == T_MEM_WR_REQ) || (o_type == T_MEM_WR_DATA);
    wire         o_here = (o_dst == {MAG_X4, MAG_Y4});
    wire         o_rd   = out_valid && o_here && (o_type == T_MEM_RD_REQ) && !o_entry && !q_full;
    wire         q_pop  = rsp_fire && rsp_last;
    wire         o_done = out_valid && (o_type == T_CU_SIGNAL) &&
                          (out_data[255:248] == 8'h00 || out_data[255:248] == 8'h01 || out_data[255:248] == 8'h04);

    reg          wr_open;
    reg  [7:0]   wr_src;
    reg  [15:0]  wr_line;
    reg  [7:0]   wr_left;
    reg  [7:0]   end_cnt;
    reg  [31:0]  run_t0;                     // start cycle of the RUN in progress
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0]  run_cur = run_n - 32'd1;    // its index (RA bits used)
    /* verilator lint_on UNUSEDSIGNAL */

    task automatic flag(input integer bit_no, input [287:0] flit);
        begin
            err[bit_no] <= 1'b1;
            if (!err[bit_no]) $display("ERROR vt_harness cycle %0d: err bit %0d, flit %h", cyc, bit_no, flit);
        end
    endtask

    always @(posedge clk) begin
        if (!resetn || !go) begin
            cyc <= 32'd0; rec_done <= 1'b0; err <= 7'd0; end_cnt <= 8'd0;
            sig_n <= 32'd0; tr_n <= 32'd0; run_n <= 32'd0; cudo_n <= 32'd0; wl_n <= 32'd0;
            rq_n <= 32'd0; rs_n <= 32'd0; retired <= 32'd0;
            fd_ptr <= 16'd0; fd_wait <= 8'd0;
            q_count <= 0; q_rp <= 0; q_wp <= 0; q_beat <= 8'd0; mw <= 8'd0;
            wr_open <= 1'b0; wr_src <= 8'd0; wr_line <= 16'd0; wr_left <= 8'd0; run_t0 <= 32'd0;
        end else begin
            cyc <= cyc + 32'd1;
            // feeder
            if (feed_fire) begin
                fd_ptr  <= fd_ptr + 16'd1;
                fd_wait <= FEED_INTERVAL[7:0] - 8'd1;
            end else if (fd_wait != 8'd0) fd_wait <= fd_wait - 8'd1;
            // response rhythm: mw counts from the take into an empty queue, or from the last response
            if (q_count == 0) mw <= 8'd0;
            else if (rsp_fire) mw <= MEM_FIRST[7:0] - MEM_INTERVAL[7:0];
            else if (mw < MEM_FIRST[7:0] - 8'd1) mw <= mw + 8'd1;
            if (rsp_fire) begin
                if (rs_n < MLOG_DEPTH) rs_log[rs_n[MA-1:0]] <= cyc;
                rs_n   <= rs_n + 32'd1;
                q_beat <= rsp_last ? 8'd0 : q_beat + 8'd1;
            end
            if (q_pop) q_rp <= q_rp + 1'b1;
            q_count <= q_count + {{QA{1'b0}}, o_rd} - {{QA{1'b0}}, q_pop};
            // outbound flits
            if (out_valid) begin
                if (o_mem && !o_here) flag(1, out_data);
                else case (o_type)
                    T_MEM_RD_REQ:
                        if (o_entry) flag(0, out_data);
                        else if (q_full) flag(5, out_data);
                        else begin
                            rdq[q_wp] <= {o_src, o_txn, o_line, o_len};
                            q_wp <= q_wp + 1'b1;
                            if (rq_n < MLOG_DEPTH) rq_log[rq_n[MA-1:0]] <= cyc;
                            rq_n <= rq_n + 32'd1;
                        end
                    T_MEM_WR_REQ:
                        if (wr_open) flag(2, out_data);
                        else if (o_len > 8'd7) flag(3, out_data);
                        else begin
                            wr_open <= 1'b1; wr_src <= o_src; wr_line <= o_line; wr_left <= o_len;
                        end
                    T_MEM_WR_DATA:
                        if (!wr_open || o_src != wr_src) flag(2, out_data);
                        else begin
                            dram[wr_line] <= out_data[255:0];
                            if (wl_n < WLOG_DEPTH) wlog[wl_n[WA-1:0]] <= {wr_line, out_data[255:0]};
                            else flag(5, out_data);
                            wl_n    <= wl_n + 32'd1;
                            wr_line <= wr_line + 16'd1;
                            wr_left <= wr_left - 8'd1;
                            if (wr_left == 8'd0) wr_open <= 1'b0;
                        end
                    T_CU_SIGNAL: begin
                        if (sig_n < SIG_DEPTH) sig_log[sig_n[SA-1:0]] <= {cyc, o_dst, o_txn, out_data[255:216]};
                        else flag(5, out_data);
                        sig_n <= sig_n + 32'd1;
                    end
                    T_CU_DATA: begin
                        if (cudo_n < CUDO_DEPTH) cudo_log[cudo_n[CA-1:0]] <= out_data;
                        else flag(5, out_data);
                        cudo_n <= cudo_n + 32'd1;
                    end
                    default: flag(4, out_data);
                endcase
            end
            // the probe: every executed word, every RUN
            if (u_dut.u_exec.start) begin
                if (run_n < RUN_DEPTH) run_log[run_n[RA-1:0]] <= {cyc, 32'hFFFF_FFFF, 40'd0};
                else flag(5, 288'd0);
                run_n  <= run_n + 32'd1;
                run_t0 <= cyc;
            end
            if (u_dut.u_exec.done && run_n != 0 && run_n <= RUN_DEPTH)
                run_log[run_cur[RA-1:0]] <= {run_t0, cyc, 7'd0, u_dut.u_exec.fault, u_dut.u_exec.result};
            if (u_dut.u_exec.word_exec) begin
                if (tr_n < TRACE_DEPTH) trace[tr_n[TA-1:0]] <= {run_n[7:0], 7'd0, u_dut.u_exec.pc, u_dut.u_exec.cycles};
                else flag(5, 288'd0);
                tr_n <= tr_n + 32'd1;
            end
            // the end
            if (o_done) retired <= retired + 32'd1;
            if (retired >= {16'd0, n_inst}) begin
                if (end_cnt == END_CYCLES[7:0] - 8'd1) rec_done <= 1'b1;
                else end_cnt <= end_cnt + 8'd1;
            end
            if (cyc == MAX_CYCLES - 1) begin
                err[6]   <= 1'b1;
                rec_done <= 1'b1;
            end
        end
    end
endmodule
`default_nettype wire
