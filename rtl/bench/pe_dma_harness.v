// Bench top for pe_dma + pe_slice (bench pe_dma, tb/ahbm/test_pe_dma.py).
//
// Requests come either from Python directly (py_valid & co., short monitor
// tests) or from a request list `plist` loaded in bulk ($readmemh of
// "pe_dma_plist.hex" on a rising plist_load_req, acked by plist_load_ack):
// entry {due[31:0], addr[23:0], len[23:0], buf[7:0], tag[7:0]} (96 bits); while
// run is high the player offers entry p from harness cycle `due` on (cyc counts
// cycles with run high, from 0) and raises req_valid only with req_ready
// (pe_dma's contract: a request while the queue is full is an error). Every taken request
// logs its cycle in acc_log[p]; every output word logs
// {cyc[31:0], 7'd0, last, buf[7:0], tag[7:0], idx[23:0], data[511:0]} (592 bits) in
// w_log and is written into the tile buffers tbuf[buf*BUF_WORDS + idx].
// A rising log_dump_req writes acc_log, w_log and tbuf to pe_dma_acc.hex,
// pe_dma_wlog.hex, pe_dma_tbuf.hex and raises log_dump_ack.
`default_nettype none
`timescale 1ns/1ps
module pe_dma_harness #(
    parameter integer WORDS     = 1024,
    parameter integer BW        = 64,
    parameter integer LAT       = 100,
    parameter integer QDEPTH    = 4,
    parameter integer NREQ      = 64,
    parameter integer NLOG      = 4096,
    parameter integer NBUF      = 4,
    parameter integer BUF_WORDS = 256
) ();
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    /* verilator lint_off UNUSEDSIGNAL */  // Python-driven controls and Python-read results
    reg          run = 1'b0;
    reg  [31:0]  play_n = 32'd0;
    reg          py_valid = 1'b0;
    reg  [23:0]  py_addr = 24'd0;
    reg  [23:0]  py_len = 24'd0;
    reg  [3:0]   py_buf = 4'd0;
    reg  [7:0]   py_tag = 8'd0;
    reg          plist_load_req = 1'b0;
    reg          plist_load_ack = 1'b0;
    reg          log_dump_req = 1'b0;
    reg          log_dump_ack = 1'b0;
    wire         req_ready;
    wire         idle;
    wire [31:0]  cnt_reqs;
    wire [31:0]  cnt_done;
    wire [31:0]  cnt_bytes;
    wire [31:0]  cnt_busy;
    wire         mon_err;
    reg  [31:0]  cyc;
    reg  [31:0]  p;
    reg  [31:0]  n_words;
    // Registered: Python awaits its rising edge, and a combinational AND of
    // registers updated in one time step can glitch high for zero time (the
    // player's count before the engine's queue), ending a run two words early.
    reg          play_done = 1'b0;
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) play_done <= resetn && run && (p >= play_n) && idle;

    reg [95:0]  plist   [0:NREQ-1];
    reg [31:0]  acc_log [0:NREQ-1];
    reg [591:0] w_log   [0:NLOG-1];
    reg [511:0] tbuf    [0:NBUF*BUF_WORDS-1];

    /* verilator lint_off BLKSEQ */  // bench backdoor, not logic
    always @(posedge plist_load_req) begin
        $readmemh("pe_dma_plist.hex", plist, 0, NREQ-1);
        plist_load_ack = 1'b1;
    end
    always @(negedge plist_load_req) plist_load_ack = 1'b0;
    always @(posedge log_dump_req) begin
        $writememh("pe_dma_acc.hex", acc_log);
        $writememh("pe_dma_wlog.hex", w_log);
        $writememh("pe_dma_tbuf.hex", tbuf);
        log_dump_ack = 1'b1;
    end
    always @(negedge log_dump_req) log_dump_ack = 1'b0;
    /* verilator lint_on BLKSEQ */

    /* verilator lint_off UNUSEDSIGNAL */  // buf[7:4] of an entry is unused
    wire [95:0] pl_head = plist[p[$clog2(NREQ)-1:0]];
    /* verilator lint_on UNUSEDSIGNAL */
    wire        pl_valid = run && (p < play_n) && (cyc >= pl_head[95:64]) && req_ready;
    wire        req_valid = pl_valid || py_valid;
    wire [23:0] req_addr = pl_valid ? pl_head[63:40] : py_addr;
    wire [23:0] req_len  = pl_valid ? pl_head[39:16] : py_len;
    wire [3:0]  req_buf  = pl_valid ? pl_head[11:8]  : py_buf;
    wire [7:0]  req_tag  = pl_valid ? pl_head[7:0]   : py_tag;

    wire [23:0]  sl_addr;
    wire [511:0] sl_data;
    wire         out_valid;
    wire [511:0] out_data;
    wire [3:0]   out_buf;
    wire [7:0]   out_tag;
    wire [17:0]  out_idx;
    wire         out_last;

    /* verilator lint_off UNUSEDSIGNAL */
    wire [511:0] sl_rd2_unused;     // the DMA bench uses the first read port only
    wire         dma_xfer_unused;   // and checks transfers through its logs
    /* verilator lint_on UNUSEDSIGNAL */
    pe_slice #(.WORDS(WORDS)) u_slice (
        .clk(clk), .rd_addr(sl_addr), .rd_data(sl_data),
        .wr_en(1'b0), .wr_addr(24'd0), .wr_data(512'd0),
        .rd2_addr(24'd0), .rd2_data(sl_rd2_unused), .wr2_en(1'b0), .wr2_addr(24'd0), .wr2_data(512'd0));

    pe_dma #(.WORDS(WORDS), .BW(BW), .LAT(LAT), .QDEPTH(QDEPTH)) u_dut (
        .clk(clk), .resetn(resetn), .lat(LAT),
        .req_valid(req_valid), .req_ready(req_ready), .req_addr({6'd0, req_addr}), .req_len(req_len),
        .req_buf(req_buf), .req_tag(req_tag),
        .sl_addr(sl_addr), .sl_data(sl_data),
        .out_valid(out_valid), .out_data(out_data), .out_buf(out_buf), .out_tag(out_tag),
        .out_idx(out_idx), .out_last(out_last), .idle(idle), .xfer(dma_xfer_unused),
        .cnt_reqs(cnt_reqs), .cnt_done(cnt_done), .cnt_bytes(cnt_bytes), .cnt_busy(cnt_busy),
        .mon_err(mon_err));

    localparam integer TB_A = $clog2(NBUF * BUF_WORDS);
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] t_idx = {28'd0, out_buf} * BUF_WORDS[31:0] + {14'd0, out_idx};
    /* verilator lint_on UNUSEDSIGNAL */

    // Player and logs: active only while run is high (idle otherwise).
    always @(posedge clk) begin
        if (!resetn) begin
            cyc <= 32'd0;
            p <= 32'd0;
            n_words <= 32'd0;
        end else if (run) begin
            cyc <= cyc + 32'd1;
            if (pl_valid) begin
                acc_log[p[$clog2(NREQ)-1:0]] <= cyc;
                p <= p + 32'd1;
            end
            if (out_valid) begin
                w_log[n_words[$clog2(NLOG)-1:0]] <= {cyc, 7'd0, out_last, 4'd0, out_buf, out_tag, 6'd0, out_idx, out_data};
                n_words <= n_words + 32'd1;
                if ({14'd0, out_idx} < BUF_WORDS[31:0])
                    tbuf[t_idx[TB_A-1:0]] <= out_data;
            end
        end
    end
endmodule
`default_nettype wire
