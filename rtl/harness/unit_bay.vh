// The bench bay every single-unit module bench shares (included inside a
// harness module body, so hierarchical names stay u_clk, u_bank, u_mesh).
//
// A 1x1 noc_mesh with the unit under test on its Local port (1,1), mesh port 0,
// and bench endpoints on the four edges (1,0), (1,2), (0,1), (2,1), mesh ports
// 1..4: instructions, CU_DATA bursts and CU_CTRL reads come from several
// sources at once, every answer must find its way back to its sender, and the
// west endpoint (0,1) stands at the memory agent's coordinate to capture a
// unit's memory traffic. The including module declares INJ_DEPTH and CAP_DEPTH
// and connects its unit to unit_in_* (mesh -> unit) and unit_out_* (unit -> mesh).
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

    // Bench port 0 (the Local endpoint) is absent in the bank: the unit is there.
    tb_ep_bank #(.NP(NP), .PRESENT(64'h1e), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    wire [287:0] unit_in_data  = rx_data[0];
    wire         unit_in_valid = rx_valid[0];
    wire         unit_in_busy;
    wire [287:0] unit_out_data;
    wire         unit_out_valid;
    wire         unit_out_busy = ep_in_busy_w[0];
    genvar e;
    generate
        for (e = 0; e < NP; e = e + 1) begin : g_ep
            if (e == 0) begin : g_unit
                assign ep_in_data[e]  = unit_out_data;
                assign ep_in_valid[e] = unit_out_valid;
                assign ep_out_busy[e] = unit_in_busy;
                assign tx_busy[e]     = 1'b1;
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
