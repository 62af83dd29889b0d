// Behavioural DRAM behind the memory agent (rtl/mag/mag.v).
//
// Storage is ONE one-dimensional array `mem` of 256-bit words, word w holding
// bytes 32w .. 32w+31 (byte 32w+k in bits [8k+7:8k]). Machine tops instantiate
// this module as `dram`; benches reach `<top>.dram.mem` only through the bulk
// backdoor below, never word by word.
//
// Read port: a request is taken in a cycle with rd_req && rd_ready; its word
// comes back RD_LATENCY cycles later as one cycle of rd_valid with rd_data,
// in request order, and cannot be refused (the requester reserves room first).
// rd_ready falls for RD_INTERVAL-1 cycles after each taken request (the
// bandwidth knob: one word every RD_INTERVAL cycles). Write port: a word is written at the clock edge of a
// cycle with wr_req; always taken. A read and a write of one word in the same
// cycle read the old word (nothing orders them).
//
// Timing. The defaults (RD_LATENCY 1, RD_INTERVAL 1) are upstream's verification AXI RAM
// (KohakuTPU src/kohakuaccel/verif/axi_ram.v, which every upstream MAG and system bench puts
// behind the memory agent) as the agent drives it: the word of a burst asked in the cycle of the
// AR handshake (or of the previous beat) is valid the next cycle, one word a cycle (axi_ram.v
// 165-193); writes are taken one word a cycle. The RAM's one transaction per channel at a time
// (the next AR the cycle after a burst's last beat, the next AW the cycle after B) and the DRAM
// port's FIFOs in front of it are the agent's side (rtl/mag/mag_port.v): the agent is its only
// master and presents one burst at a time. A larger RD_LATENCY is a pipelined memory of that
// latency, one word a cycle (this model's earlier use: RD_LATENCY 6 on the fused4 machine);
// RD_INTERVAL > 1 a slower one.
//
// Backdoor (bench use, files in the simulator's working directory): set bd_lo
// and bd_hi (word range, inclusive), raise load_req and wait for load_ack
// ($readmemh of LOAD_FILE into mem[bd_lo..bd_hi]), or raise dump_req and wait for
// dump_ack ($writememh of mem[bd_lo..bd_hi] to DUMP_FILE); drop the request
// after the ack. tb/mag/dram.py is the Python side.
//
// Assertion monitor: an access past the end (word >= WORDS) prints an ERROR
// line (the first one after reset; later ones are counted in oob_count) and
// raises the sticky mon_err. Such a read returns zero, such a write is ignored.
`default_nettype none
`timescale 1ns/1ps
module mag_dram #(
    parameter integer WORDS = 65536,       // size in 256-bit words
    parameter integer RD_LATENCY = 1,      // cycles from a taken read to its data, >= 1 (axi_ram: 1)
    parameter integer RD_INTERVAL = 1,     // cycles between taken reads, >= 1 (axi_ram: 1)
    parameter integer INIT_ZERO = 1,       // 1: every word reads 0 until written or loaded
    parameter LOAD_FILE = "dram_load.hex",
    parameter DUMP_FILE = "dram_dump.hex"
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         rd_req,
    input  wire [34:0]  rd_addr,
    output wire         rd_ready,
    output wire         rd_valid,
    output wire [255:0] rd_data,
    input  wire         wr_req,
    input  wire [34:0]  wr_addr,
    input  wire [255:0] wr_data,
    output reg          mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (WORDS < 1 || RD_LATENCY < 1 || RD_INTERVAL < 1)
            $fatal(1, "mag_dram %m: WORDS=%0d RD_LATENCY=%0d RD_INTERVAL=%0d: each must be >= 1", WORDS, RD_LATENCY, RD_INTERVAL);
    end
    localparam integer AW = (WORDS <= 2) ? 1 : $clog2(WORDS);
    localparam integer LAT = (RD_LATENCY < 1) ? 1 : RD_LATENCY;
    localparam integer GAP = (RD_INTERVAL < 1) ? 1 : RD_INTERVAL;
    localparam integer QA = (LAT < 2) ? 1 : $clog2(LAT + 1);   // queue index bits
    localparam integer QD = 1 << QA;                             // >= LAT + 1 entries
    localparam [30:0]  WORDS31 = WORDS[30:0];   // WORDS < 2**31

    reg [255:0] mem [0:WORDS-1];

    // ---------------- backdoor, driven by Python through VPI ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // acks and counters are read by Python only
    reg        load_req /*verilator public_flat_rw*/ = 1'b0;
    reg        dump_req /*verilator public_flat_rw*/ = 1'b0;
    reg        load_ack = 1'b0;
    reg        dump_ack = 1'b0;
    reg [31:0] bd_lo /*verilator public_flat_rw*/ = 32'd0;
    reg [31:0] bd_hi /*verilator public_flat_rw*/ = 32'd0;
    reg [31:0] oob_count;
    reg [31:0] rd_words;   // words read and written through the ports since reset: the
    reg [31:0] wr_words;   // measured DRAM traffic (the backdoor is not counted)
    /* verilator lint_on UNUSEDSIGNAL */

    integer i;
    initial begin
        if (INIT_ZERO != 0)
            for (i = 0; i < WORDS; i = i + 1) mem[i] = 256'd0;
    end
    // A request is held high until its ack is seen, then dropped; the ack follows it.
    /* verilator lint_off BLKSEQ */  // bench backdoor, not logic: acts at once on a request edge
    always @(posedge load_req) begin
        $readmemh(LOAD_FILE, mem, bd_lo, bd_hi);
        load_ack = 1'b1;
    end
    always @(negedge load_req) load_ack = 1'b0;
    always @(posedge dump_req) begin
        $writememh(DUMP_FILE, mem, bd_lo, bd_hi);
        dump_ack = 1'b1;
    end
    always @(negedge dump_req) dump_ack = 1'b0;
    /* verilator lint_on BLKSEQ */

    // ---------------- read port ----------------
    // Words are read when the request is taken and wait in a small queue; a
    // shift register of valid bits (idle when empty) says when each is due.
    reg [255:0]  q_data [0:QD-1];
    reg [QA:0]   q_wr;
    reg [QA:0]   q_rd;
    reg [LAT-1:0] due;            // due[LAT-1]: the oldest word in flight is due now
    reg [7:0]    gap_left;        // cycles until the next request may be taken

    // At most LAT words are ever in flight (each leaves LAT cycles after it was
    // taken), so the queue of LAT+1 or more entries cannot overflow.
    assign rd_ready = gap_left == 8'd0;
    wire rd_take = rd_req && rd_ready;
    assign rd_valid = due[LAT-1];
    assign rd_data  = q_data[q_rd[QA-1:0]];

    wire [LAT-1:0] due_next;
    generate
        if (LAT == 1) begin : g_lat1
            assign due_next = rd_take;
        end else begin : g_latn
            assign due_next = {due[LAT-2:0], rd_take};
        end
    endgenerate

    wire rd_oob = (rd_addr[34:31] != 4'd0) || (rd_addr[30:0] >= WORDS31);
    wire wr_oob = (wr_addr[34:31] != 4'd0) || (wr_addr[30:0] >= WORDS31);

    always @(posedge clk) begin
        if (!resetn) begin
            q_wr     <= {(QA+1){1'b0}};
            q_rd     <= {(QA+1){1'b0}};
            due      <= {LAT{1'b0}};
            gap_left <= 8'd0;
        end else if (rd_take || (|due) || gap_left != 8'd0) begin
            if (rd_take) begin
                q_data[q_wr[QA-1:0]] <= rd_oob ? 256'd0 : mem[rd_addr[AW-1:0]];
                q_wr <= q_wr + 1'b1;
                gap_left <= GAP[7:0] - 8'd1;
            end else if (gap_left != 8'd0) begin
                gap_left <= gap_left - 8'd1;
            end
            due <= due_next;
            if (due[LAT-1]) q_rd <= q_rd + 1'b1;
        end
    end

    // ---------------- write port ----------------
    always @(posedge clk) begin
        if (resetn && wr_req && !wr_oob) mem[wr_addr[AW-1:0]] <= wr_data;
    end

    // ---------------- traffic counters ----------------
    always @(posedge clk) begin
        if (!resetn) begin
            rd_words <= 32'd0;
            wr_words <= 32'd0;
        end else if (rd_take || wr_req) begin
            if (rd_take) rd_words <= rd_words + 32'd1;
            if (wr_req)  wr_words <= wr_words + 32'd1;
        end
    end

    // ---------------- monitor ----------------
    initial mon_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            mon_err   <= 1'b0;
            oob_count <= 32'd0;
        end else if ((rd_take && rd_oob) || (wr_req && wr_oob)) begin
            if (oob_count == 32'd0)
                $display("ERROR %m t=%0t: DRAM %0s past the end: word 0x%h, the DRAM holds %0d words (read returns 0, write ignored; further ones counted, not shown)",
                         $time, (rd_take && rd_oob) ? "read" : "write",
                         (rd_take && rd_oob) ? rd_addr : wr_addr, WORDS);
            oob_count <= oob_count + 32'd1;
            mon_err   <= 1'b1;
        end
    end
endmodule
`default_nettype wire
