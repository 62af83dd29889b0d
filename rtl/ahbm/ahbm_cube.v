// The AHBM CUBE (docs/ahbm.md §7): an R x C mesh of PEs wired by the IPCQ
// fabric (ipcq_mesh: PE p's push port d lands in neighbour q's queue for the
// opposite direction). PE p = r*C + c, row 0 north. Also the bench top: the
// clock comes from harness_clock, the kernel (tb/ahbm/) writes commands on
// cmd_valid/cmd_data per PE and reads status and counters through the
// hierarchy (g_pe[p].u_pe.u_core). Slice backdoor files: pe<p>_load.hex /
// pe<p>_dump.hex (two decimal digits).
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module ahbm_cube #(
    parameter integer R          = 2,
    parameter integer C          = 4,
    parameter integer D          = 128,
    parameter integer MAXROWS    = 64,
    parameter integer MAXKEYS    = 128,
    parameter integer PREFETCH   = 2,
    parameter integer CMDQ_DEPTH = 16,
    parameter integer MM_MACS    = 512,
    parameter integer VEC_LANES  = 16,
    parameter integer WORDS      = 4096,      // a PE's slice, 64-byte words (<= 2**18 at ADDR_SHIFT 0, 2**24 at 6)
    parameter integer ADDR_SHIFT = 0,         // the commands' address fields: bytes (0) or 64-byte words (6), docs/ahbm.md §4
    parameter integer ALOG       = 4096,      // each PE's activity log entries (pe_stats), a power of two >= 16
    parameter integer DMA_BW     = 64,
    parameter integer DMA_LAT    = 100,
    parameter integer DMA_QDEPTH = 4,
    parameter integer IPCQ_DEPTH = 1024,
    parameter integer IPCQ_W     = 64,        // IPCQ link word width: 64, 128, 256 or 512 bits per cycle
    parameter [31:0]  SCALE      = 32'h3DB504F3
) ();
    localparam integer NP = R * C;
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    /* verilator lint_off UNUSEDSIGNAL */  // driven and read by Python
    reg            cmd_valid [0:NP-1];      // unpacked: each PE's kernel drives its own
    reg  [127:0]   cmd_data  [0:NP-1];
    reg            fault_clr [0:NP-1];
    wire [NP-1:0]  cmd_ready;
    wire [NP-1:0]  idle;
    wire [NP-1:0]  evt;             // a bit per PE: toggles at its completions (a kernel waits on its own PE's)
    wire [NP-1:0]  faulted;         // a bit per PE: FAULT raised and not cleared (what a kernel's wait watches
                                    // for across its launch; the code and tag in the hierarchy)
    wire [NP-1:0]  pe_err;
    wire           ipcq_err;
    reg            mon_err = 1'b0;
    /* verilator lint_on UNUSEDSIGNAL */
    integer i;
    initial for (i = 0; i < NP; i = i + 1) begin
        cmd_valid[i] = 1'b0;
        cmd_data[i] = 128'd0;
        fault_clr[i] = 1'b0;
    end

    // Run-time configuration, written by the bench before a reset (tb/ahbm/cube.py): PREFETCH and
    // DMA_LAT size every PE's tile slots and DMA delay queue, IPCQ_DEPTH every IPCQ queue's storage; these
    // pick what a run uses, 1..PREFETCH, 1..DMA_LAT and 1..IPCQ_DEPTH, so one build serves a whole
    // PREFETCH x latency sweep, and the tight-queue cases run on the deep-queue build.
    reg [2:0]  cfg_prefetch   = 3'(PREFETCH);
    reg [31:0] cfg_dma_lat    = DMA_LAT;
    reg [31:0] cfg_ipcq_depth = IPCQ_DEPTH;

    wire [NP*4-1:0] push_valid, push_ready, push_last, pop_valid, pop_ready, pop_last, pop_avail;
    wire [IPCQ_W-1:0] push_data [0:NP*4-1];
    wire [IPCQ_W-1:0] pop_data  [0:NP*4-1];

    ipcq_mesh #(.R(R), .C(C), .W(IPCQ_W), .DEPTH(IPCQ_DEPTH)) u_ipcq (
        .clk(clk), .resetn(resetn), .depth(cfg_ipcq_depth),
        .push_valid(push_valid), .push_ready(push_ready), .push_data(push_data), .push_last(push_last),
        .pop_valid(pop_valid), .pop_ready(pop_ready), .pop_data(pop_data), .pop_last(pop_last),
        .pop_avail(pop_avail), .mon_err(ipcq_err));


    genvar p;
    generate
        for (p = 0; p < NP; p = p + 1) begin : g_pe
            localparam [3:0] EDGE = {(p % C) == 0, (p / C) == R - 1, (p % C) == C - 1, (p / C) == 0};
            localparam [15:0] DIG = {8'd48 + 8'(p / 10), 8'd48 + 8'(p % 10)};
            wire [IPCQ_W-1:0] pdata;
            assign push_data[p*4]   = pdata;
            assign push_data[p*4+1] = pdata;
            assign push_data[p*4+2] = pdata;
            assign push_data[p*4+3] = pdata;
            pe #(.PE_ID(p), .D(D), .MAXROWS(MAXROWS), .MAXKEYS(MAXKEYS), .PREFETCH(PREFETCH),
                 .CMDQ_DEPTH(CMDQ_DEPTH), .MM_MACS(MM_MACS), .VEC_LANES(VEC_LANES), .WORDS(WORDS), .ADDR_SHIFT(ADDR_SHIFT), .ALOG(ALOG),
                 .DMA_BW(DMA_BW), .DMA_LAT(DMA_LAT), .DMA_QDEPTH(DMA_QDEPTH), .IPCQ_W(IPCQ_W), .EDGE(EDGE), .SCALE(SCALE),
                 .LOAD_FILE({"pe", DIG, "_load.hex"}), .DUMP_FILE({"pe", DIG, "_dump.hex"})) u_pe (
                .clk(clk), .resetn(resetn), .prefetch(cfg_prefetch), .dma_lat(cfg_dma_lat),
                .cmd_valid(cmd_valid[p]), .cmd_ready(cmd_ready[p]), .cmd_data(cmd_data[p]), .fault_clr(fault_clr[p]),
                .push_valid(push_valid[p*4 +: 4]), .push_ready(push_ready[p*4 +: 4]), .push_data(pdata),
                .push_last(push_last[p*4 +: 4]),
                .pop_valid(pop_valid[p*4 +: 4]), .pop_ready(pop_ready[p*4 +: 4]),
                .pop_data_n(pop_data[p*4]), .pop_data_e(pop_data[p*4+1]), .pop_data_s(pop_data[p*4+2]),
                .pop_data_w(pop_data[p*4+3]), .pop_last(pop_last[p*4 +: 4]), .pop_avail(pop_avail[p*4 +: 4]),
                .idle(idle[p]), .evt(evt[p]), .faulted(faulted[p]), .mon_err(pe_err[p]));
        end
    endgenerate

    // sticky: any PE, DMA or IPCQ monitor fired since reset
    `AHBM_EDGE(clk, !resetn || (|pe_err) || ipcq_err) begin
        if (!resetn) mon_err <= 1'b0;
        else mon_err <= 1'b1;
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
