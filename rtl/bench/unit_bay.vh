// The bench bay every single-unit module bench shares (included inside a
// harness module body, so hierarchical names stay u_clk, u_bank, u_mesh).
//
// A 1x1 noc_mesh with the unit under test on its Local port (1,1), mesh port 0,
// and bench endpoints on the four edges (1,0), (1,2), (0,1), (2,1), mesh ports
// 1..4: instructions, CU_DATA bursts and CU_CTRL reads come from several
// sources at once, every answer must find its way back to its sender, and the
// west endpoint (0,1) stands at the memory agent's coordinate to capture a
// unit's memory traffic. The including module declares INJ_DEPTH, CAP_DEPTH and
// BAY_MAG, and connects its unit's NoC endpoint to the wires noc_in_* (mesh ->
// unit) and noc_out_* (unit -> mesh), named as the unit's own ports so that
// noc_ep_pass.vh connects them, and its busy output to `busy` (declared here: a
// busy unit keeps the bank's quiet detector from ending the run). With BAY_MAG = 1 the west endpoint (0,1) is a real memory
// agent (u_mag) with its DRAM (dram, BAY_DRAM_WORDS words from byte address
// BAY_DRAM_BASE, read latency BAY_RD_LATENCY) instead of a bench endpoint, so a unit's reads are answered
// and its writes land; Python loads and reads the DRAM through dram's backdoor.
    localparam integer NP = 5;
    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    wire [287:0] tx_data  [0:NP-1];
    wire         tx_valid [0:NP-1];
    wire         tx_busy  [0:NP-1];
    wire [287:0] rx_data  [0:NP-1];
    wire         rx_valid [0:NP-1];
    wire         rx_busy  [0:NP-1];
    wire [287:0] ep_in_data   [0:NP-1];
    wire         ep_in_valid  [0:NP-1];
    wire         ep_in_busy_w [0:NP-1];
    wire         ep_out_busy  [0:NP-1];
    wire         mesh_err;

    localparam integer MAG_PORT = 3;   // (0,1)
    // Bench port 0 (the Local endpoint) is absent in the bank: the unit is there; so is port 3 with BAY_MAG.
    wire         busy;          // the unit's busy output (the including harness connects it); keeps a run from reading as quiet
    tb_ep_bank #(.NP(NP), .PRESENT((BAY_MAG != 0) ? 64'h16 : 64'h1e), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn), .unit_busy(busy),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    wire [287:0] noc_in_data  = rx_data[0];
    wire         noc_in_valid = rx_valid[0];
    wire         noc_in_busy;
    wire [287:0] noc_out_data;
    wire         noc_out_valid;
    wire         noc_out_busy = ep_in_busy_w[0];
    genvar e;
    generate
        for (e = 0; e < NP; e = e + 1) begin : g_ep
            if (e == 0) begin : g_unit
                assign ep_in_data[e]  = noc_out_data;
                assign ep_in_valid[e] = noc_out_valid;
                assign ep_out_busy[e] = noc_in_busy;
                assign tx_busy[e]     = 1'b1;
            end else if (BAY_MAG != 0 && e == MAG_PORT) begin : g_mag
                assign tx_busy[e] = 1'b1;
            end else begin : g_bank
                assign ep_in_data[e]  = tx_data[e];
                assign ep_in_valid[e] = tx_valid[e];
                assign ep_out_busy[e] = rx_busy[e];
                assign tx_busy[e]     = ep_in_busy_w[e];
            end
        end
    endgenerate

    noc_mesh #(.NX(1), .NY(1), .FIFO_DEPTH(4), .EDGE_MASK(64'hf)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(ep_in_data), .ep_in_valid(ep_in_valid), .ep_in_busy(ep_in_busy_w),
        .ep_out_data(rx_data), .ep_out_valid(rx_valid), .ep_out_busy(ep_out_busy),
        .mon_err(mesh_err));

    wire bay_mag_err;
    generate
        if (BAY_MAG != 0) begin : g_bay_mag
            wire mem_rd_req, mem_rd_ready, mem_rd_valid, mem_wr_req, mag_err, dram_err;
            wire [34:0] mem_rd_addr, mem_wr_addr;
            wire [255:0] mem_rd_data, mem_wr_data;
            mag #(.X(0), .Y(1), .DRAM_WORDS(BAY_DRAM_WORDS), .BASE(BAY_DRAM_BASE)) u_mag (
                .clk(clk), .resetn(resetn),
                .noc_in_data(rx_data[MAG_PORT]), .noc_in_valid(rx_valid[MAG_PORT]), .noc_in_busy(ep_out_busy[MAG_PORT]),
                .noc_out_data(ep_in_data[MAG_PORT]), .noc_out_valid(ep_in_valid[MAG_PORT]),
                .noc_out_busy(ep_in_busy_w[MAG_PORT]),
                .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),
                .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data),
                .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data),
                .mon_err(mag_err));
            mag_dram #(.WORDS(BAY_DRAM_WORDS), .RD_LATENCY(BAY_RD_LATENCY), .RD_INTERVAL(1)) dram (
                .clk(clk), .resetn(resetn),
                .rd_req(mem_rd_req), .rd_addr(mem_rd_addr), .rd_ready(mem_rd_ready),
                .rd_valid(mem_rd_valid), .rd_data(mem_rd_data),
                .wr_req(mem_wr_req), .wr_addr(mem_wr_addr), .wr_data(mem_wr_data),
                .mon_err(dram_err));
            assign bay_mag_err = mag_err | dram_err;
        end else begin : g_no_mag
            assign bay_mag_err = 1'b0;
        end
    endgenerate
