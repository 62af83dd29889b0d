// PE local memory slice (docs/ahbm.md §2): Q, K cache, V cache, mask tiles and
// O output of one PE, byte-addressed, stored as WORDS words of 64 bytes
// (byte 64w+k in bits [8k+7:8k] of mem[w]); every operand address is 64-byte
// aligned, so ports carry word addresses (byte address >> 6): 24 bits, for a slice of up to 2**24 words
// (1 GiB; the commands reach 16 MiB with byte addresses, 1 GiB with 64-byte-word addresses: pe_core's
// ADDR_SHIFT, docs/ahbm.md §4).
//
// Read ports: combinational, rd_data = mem[rd_addr] (the DMA engine reads one
// word per beat; rd2 for the PE's KV_SEND). Write ports: mem[wr_addr] <= wr_data
// at the edge of a cycle with wr_en (wr for NORM_STORE, wr2 for KV_RECV; the PE
// never writes one word through both in one cycle). The user keeps addresses below WORDS (pe_dma refuses requests
// past the slice); an out-of-range write is ignored.
//
// Backdoor (bench use, files in the simulator's working directory, copied from
// rtl/mag/mag_dram.v): set bd_lo/bd_hi (word range, inclusive), raise load_req
// and wait for load_ack ($readmemh of LOAD_FILE), or raise dump_req and wait
// for dump_ack ($writememh to DUMP_FILE); drop the request after the ack.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_slice #(
    parameter integer WORDS = 1024,        // size in 64-byte words (<= 2**24)
    parameter LOAD_FILE = "pe_slice_load.hex",
    parameter DUMP_FILE = "pe_slice_dump.hex"
) (
    input  wire         clk,
    input  wire [23:0]  rd_addr,
    output wire [511:0] rd_data,
    input  wire         wr_en,
    input  wire [23:0]  wr_addr,
    input  wire [511:0] wr_data,
    // second read and write ports (the PE's KV_SEND / KV_RECV link engines)
    input  wire [23:0]  rd2_addr,
    output wire [511:0] rd2_data,
    input  wire         wr2_en,
    input  wire [23:0]  wr2_addr,
    input  wire [511:0] wr2_data
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (WORDS < 1 || WORDS > (1 << 24))
            $fatal(1, "pe_slice %m: WORDS=%0d: need 1 <= WORDS <= 2**24 (64-byte words of a 1 GiB slice)", WORDS);
    end
    localparam integer AW = (WORDS <= 2) ? 1 : $clog2(WORDS);
    localparam [24:0] WORDS25 = WORDS[24:0];

    reg [511:0] mem [0:WORDS-1];

    /* verilator lint_off UNUSEDSIGNAL */  // backdoor registers, driven and read by Python
    reg        load_req /*verilator public_flat_rw*/ = 1'b0;
    reg        dump_req /*verilator public_flat_rw*/ = 1'b0;
    reg        load_ack = 1'b0;
    reg        dump_ack = 1'b0;
    reg [31:0] bd_lo /*verilator public_flat_rw*/ = 32'd0;
    reg [31:0] bd_hi /*verilator public_flat_rw*/ = 32'd0;
    /* verilator lint_on UNUSEDSIGNAL */

    integer i;
    initial for (i = 0; i < WORDS; i = i + 1) mem[i] = 512'd0;

    /* verilator lint_off BLKSEQ */  // bench backdoor, not logic
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

    assign rd_data = mem[rd_addr[AW-1:0]];
    assign rd2_data = mem[rd2_addr[AW-1:0]];

    `AHBM_EDGE(clk, wr_en || wr2_en) begin
        if (wr_en && ({1'b0, wr_addr} < WORDS25)) mem[wr_addr[AW-1:0]] <= wr_data;
        if (wr2_en && ({1'b0, wr2_addr} < WORDS25)) mem[wr2_addr[AW-1:0]] <= wr2_data;
    end `AHBM_EDGE_END

    /* verilator lint_off UNUSEDSIGNAL */
    wire [47:0] unused_hi = {rd_addr, rd2_addr};  // bits above AW are unused (the users range-check)
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
