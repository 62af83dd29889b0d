// Host address decoder of the orchestrator (one per AXI direction).
//
// Byte address -> region and index (the low three bits are ignored: every
// register is one 64-bit word):
//   0x0000..0x0FFF  registers       reg_idx = addr[11:3]
//   0x1000..0x17FF  NODE_STATUS     node    = addr[10:3] = {y,x}
//   0x2000 + slot*40 + word*8       STAGE   slot, word 0..4 (low word first)
//   anything else   nothing (reads 0, writes ignored)
// Pure continuous logic: it only re-evaluates when the address moves.
`default_nettype none
`timescale 1ns/1ps
module orch_addr_dec #(
    parameter integer ADDR_W = 16,
    parameter integer SLOTS = 256,
    parameter integer SW = 8
) (
    /* verilator lint_off UNUSEDSIGNAL */  // addr[2:0]: the byte within a word is ignored
    input  wire [ADDR_W-1:0] addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [1:0]        sel,      // 0 register, 1 node status, 2 stage, 3 nothing
    output wire [8:0]        reg_idx,
    output wire [7:0]        node,
    output wire [SW-1:0]     slot,
    output wire [2:0]        word
);
    localparam [1:0] SEL_REG = 2'd0, SEL_NODE = 2'd1, SEL_STAGE = 2'd2, SEL_NONE = 2'd3;
    localparam [31:0] STAGE_W0 = 32'h400;                      // 0x2000 / 8
    localparam [31:0] STAGE_WORDS = SLOTS * 5;

    wire [31:0] w = {{(35-ADDR_W){1'b0}}, addr[ADDR_W-1:3]};   // 64-bit word address
    wire [31:0] so = w - STAGE_W0;                              // word offset into STAGE
    /* verilator lint_off UNUSEDSIGNAL */  // only the low bits of quotient and remainder are used
    wire [31:0] slot32 = so / 32'd5;
    wire [31:0] word32 = so - slot32 * 32'd5;
    /* verilator lint_on UNUSEDSIGNAL */

    assign sel = (w < 32'h200) ? SEL_REG :
                 (w < 32'h300) ? SEL_NODE :
                 (w >= STAGE_W0 && so < STAGE_WORDS) ? SEL_STAGE : SEL_NONE;
    assign reg_idx = w[8:0];
    assign node    = w[7:0];
    assign slot    = slot32[SW-1:0];
    assign word    = word32[2:0];
endmodule
`default_nettype wire
