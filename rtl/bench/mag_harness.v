// Bench top: the memory agent (u_mag) and its DRAM (dram) on one endpoint of a
// small noc_mesh, bench endpoints (u_bank) on every other present endpoint.
//
// The mesh is NX x NY with Local endpoints and the edge endpoints EDGE_MASK
// selects; the agent sits at (MAG_X, MAG_Y) (default the west edge (0,1)),
// whose ring bit is added to EDGE_MASK here. Bank port e is mesh endpoint e
// (the index space of models/noc/mesh.py); the bank's port at the agent's index is
// absent (never offers, never accepts), the agent is wired there instead. So
// several bench sources talk to the agent at once and their flits interleave
// in the mesh before reaching it; peers of a multicast read are bank ports.
// Python reads NX, NY, EDGE_MASK, MAG_X, MAG_Y, BASE and the timing parameters back from this module
// (tb/mag/bench.py) and loads/dumps the DRAM through dram's backdoor.
`default_nettype none
`timescale 1ns/1ps
module mag_harness #(
    parameter integer NX = 2,
    parameter integer NY = 1,
    parameter [63:0]  EDGE_MASK = 64'h3f,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
    parameter integer FIFO_DEPTH = 4,
    parameter integer DRAM_WORDS = 4096,
    parameter [39:0]  BASE = 40'd0,         // the agent's memory window: byte address of DRAM word 0
    // the agent and its DRAM, upstream's timing by default (rtl/mag/mag.v, mag_port.v, mag_dram.v)
    parameter integer RD_LATENCY = 1,
    parameter integer RD_INTERVAL = 1,
    parameter integer RDQ_DEPTH = 64,
    parameter integer WRQ_DEPTH = 64,
    parameter integer Q_MARGIN = 4,
    parameter integer WR_SLOTS = 16,
    parameter integer QUANT_LAT = 8,
    parameter integer AR_FIFO_LAT = 3,
    parameter integer R_FIFO_LAT = 3,
    parameter integer W_FIFO_LAT = 3,
    parameter integer B_FIFO_LAT = 3,
    parameter integer R_FIFO_DEPTH = 64,
    parameter integer INJ_DEPTH = 8192,
    parameter integer CAP_DEPTH = 16384
) ();
    localparam integer NR = NX*NY;
    localparam integer NP = NR + 2*NX + 2*NY;
    // The agent's endpoint index (models/noc/mesh.py MeshGeometry.port_index).
    localparam integer MAG_PORT =
        (MAG_X >= 1 && MAG_X <= NX && MAG_Y >= 1 && MAG_Y <= NY) ? (MAG_Y-1)*NX + MAG_X-1 :
        (MAG_Y == 0)    ? NR + MAG_X - 1 :
        (MAG_Y == NY+1) ? NR + NX + MAG_X - 1 :
        (MAG_X == 0)    ? NR + 2*NX + MAG_Y - 1 :
                          NR + 2*NX + NY + MAG_Y - 1;
    localparam [63:0] MESH_EDGE = (MAG_PORT >= NR) ? (EDGE_MASK | (64'd1 << (MAG_PORT - NR))) : EDGE_MASK;
    localparam [63:0] PRESENT   = ({64{1'b1}} >> (64 - NR)) | (MESH_EDGE << NR);
    localparam [63:0] BANK_PRESENT = PRESENT & ~(64'd1 << MAG_PORT);

    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    // bank side
    /* verilator lint_off UNUSEDSIGNAL */  // the bank's port at the agent's index is left open
    wire [287:0] tx_data  [0:NP-1];
    wire         tx_valid [0:NP-1];
    /* verilator lint_on UNUSEDSIGNAL */
    wire         tx_busy  [0:NP-1];
    wire [287:0] rx_data  [0:NP-1];
    wire         rx_valid [0:NP-1];
    /* verilator lint_off UNUSEDSIGNAL */
    wire         rx_busy  [0:NP-1];
    /* verilator lint_on UNUSEDSIGNAL */
    // mesh side
    wire [287:0] ep_in_data   [0:NP-1];
    wire         ep_in_valid  [0:NP-1];
    wire         ep_in_busy   [0:NP-1];
    wire [287:0] ep_out_data  [0:NP-1];
    wire         ep_out_valid [0:NP-1];
    wire         ep_out_busy  [0:NP-1];
    // agent
    wire [287:0] mag_in_data;
    wire         mag_in_valid;
    wire         mag_in_busy;
    wire [287:0] mag_out_data;
    wire         mag_out_valid;
    wire         mag_out_busy;

    genvar e;
    generate
        for (e = 0; e < NP; e = e + 1) begin : g_port
            if (e == MAG_PORT) begin : g_mag
                assign ep_in_data[e]  = mag_out_data;
                assign ep_in_valid[e] = mag_out_valid;
                assign mag_out_busy   = ep_in_busy[e];
                assign mag_in_data    = ep_out_data[e];
                assign mag_in_valid   = ep_out_valid[e];
                assign ep_out_busy[e] = mag_in_busy;
                assign tx_busy[e]     = 1'b1;
                assign rx_data[e]     = 288'd0;
                assign rx_valid[e]    = 1'b0;
            end else begin : g_bank
                assign ep_in_data[e]  = tx_data[e];
                assign ep_in_valid[e] = tx_valid[e];
                assign tx_busy[e]     = ep_in_busy[e];
                assign rx_data[e]     = ep_out_data[e];
                assign rx_valid[e]    = ep_out_valid[e];
                assign ep_out_busy[e] = rx_busy[e];
            end
        end
    endgenerate

    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire mon_err;
    wire mesh_mon_err;
    wire mag_mon_err;
    wire dram_mon_err;
    /* verilator lint_on UNUSEDSIGNAL */
    assign mon_err = mesh_mon_err | mag_mon_err | dram_mon_err;

    tb_ep_bank #(.NP(NP), .PRESENT(BANK_PRESENT), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn), .unit_busy(1'b0),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    noc_mesh #(.NX(NX), .NY(NY), .FIFO_DEPTH(FIFO_DEPTH), .EDGE_MASK(MESH_EDGE)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(ep_in_data), .ep_in_valid(ep_in_valid), .ep_in_busy(ep_in_busy),
        .ep_out_data(ep_out_data), .ep_out_valid(ep_out_valid), .ep_out_busy(ep_out_busy),
        .mon_err(mesh_mon_err));

    wire         mem_rd_req;
    wire [34:0]  mem_rd_addr;
    wire         mem_rd_ready;
    wire         mem_rd_valid;
    wire [255:0] mem_rd_data;
    wire         mem_wr_req;
    wire [34:0]  mem_wr_addr;
    wire [255:0] mem_wr_data;

    mag #(.X(MAG_X), .Y(MAG_Y), .DRAM_WORDS(DRAM_WORDS), .BASE(BASE), .RDQ_DEPTH(RDQ_DEPTH),
          .WRQ_DEPTH(WRQ_DEPTH), .Q_MARGIN(Q_MARGIN), .WR_SLOTS(WR_SLOTS), .QUANT_LAT(QUANT_LAT),
          .AR_FIFO_LAT(AR_FIFO_LAT), .R_FIFO_LAT(R_FIFO_LAT), .W_FIFO_LAT(W_FIFO_LAT),
          .B_FIFO_LAT(B_FIFO_LAT), .R_FIFO_DEPTH(R_FIFO_DEPTH)) u_mag (
        .clk(clk), .resetn(resetn),
        .noc_in_data(mag_in_data), .noc_in_valid(mag_in_valid), .noc_in_busy(mag_in_busy),
        .noc_out_data(mag_out_data), .noc_out_valid(mag_out_valid), .noc_out_busy(mag_out_busy),
        .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),
        .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data),
        .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data),
        .mon_err(mag_mon_err));

    mag_dram #(.WORDS(DRAM_WORDS), .RD_LATENCY(RD_LATENCY), .RD_INTERVAL(RD_INTERVAL)) dram (
        .clk(clk), .resetn(resetn),
        .rd_req(mem_rd_req), .rd_addr(mem_rd_addr), .rd_ready(mem_rd_ready),
        .rd_valid(mem_rd_valid), .rd_data(mem_rd_data),
        .wr_req(mem_wr_req), .wr_addr(mem_wr_addr), .wr_data(mem_wr_data),
        .mon_err(dram_mon_err));

    // ---------------- the agent's own link, watched in Verilog for the timing tests (Python reads it after
    // the run, so no coroutine wakes every cycle): while `ag_arm` is 1, each flit the agent hands out with
    // the cycle it is taken (counted from arming) and the most flits its read queue held
    localparam integer AG_DEPTH = 1024;
    /* verilator lint_off UNUSEDSIGNAL */  // written and read by Python
    reg          ag_arm = 1'b0;
    reg  [31:0]  ag_clk, ag_n;
    reg  [31:0]  ag_cyc  [0:AG_DEPTH-1];
    reg  [287:0] ag_flit [0:AG_DEPTH-1];
    reg  [10:0]  ag_rq_peak;
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        if (!ag_arm) begin
            ag_clk <= 32'd0; ag_n <= 32'd0; ag_rq_peak <= 11'd0;
        end else begin
            ag_clk <= ag_clk + 32'd1;
            if (resetn && mag_out_valid && !mag_out_busy && ag_n < AG_DEPTH) begin
                ag_cyc[ag_n[9:0]]  <= ag_clk + 32'd1;
                ag_flit[ag_n[9:0]] <= mag_out_data;
                ag_n <= ag_n + 32'd1;
            end
            if (resetn && u_mag.rq_n > ag_rq_peak) ag_rq_peak <= u_mag.rq_n;
        end
    end
endmodule
`default_nettype wire
