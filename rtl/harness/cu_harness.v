// Bench top for cu_base with the cu_null test unit behind it.
//
// The unit sits on the Local port of a 1x1 noc_mesh at (1,1); bench endpoints
// stand on the four edge ports (1,0), (1,2), (0,1), (2,1) (mesh port indices
// 1..4), so instructions and CU_CTRL reads come from several sources at once
// and every reply must find its way back to its own sender.
`default_nettype none
`timescale 1ns/1ps
module cu_harness #(
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8,
    parameter integer INJ_DEPTH = 4096,
    parameter integer CAP_DEPTH = 4096
) ();
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
    wire [287:0] ep_in_data  [0:NP-1];
    wire         ep_in_valid [0:NP-1];
    wire         ep_out_busy [0:NP-1];
    wire         ep_in_busy_w [0:NP-1];
    wire         mesh_err, base_err;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire         mon_err = mesh_err | base_err;
    wire [15:0]  inst_space;
    wire         busy;
    /* verilator lint_on UNUSEDSIGNAL */

    // Bench port 0 (the Local endpoint) is absent in the bank: the unit is there.
    tb_ep_bank #(.NP(NP), .PRESENT(64'h1e), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    wire [287:0] unit_in_data,  unit_out_data;
    wire         unit_in_valid, unit_in_busy, unit_out_valid, unit_out_busy;
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
    assign unit_out_busy = ep_in_busy_w[0];
    assign unit_in_data  = rx_data[0];
    assign unit_in_valid = rx_valid[0];

    noc_mesh #(.NX(1), .NY(1), .FIFO_DEPTH(4), .EDGE_MASK(64'hf)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(ep_in_data), .ep_in_valid(ep_in_valid), .ep_in_busy(ep_in_busy_w),
        .ep_out_data(rx_data), .ep_out_valid(rx_valid), .ep_out_busy(ep_out_busy),
        .mon_err(mesh_err));

    wire [287:0] inst_flit, send_flit, recv_flit;
    wire inst_valid, inst_ready, exec_done, exec_fault, send_valid, send_ready, recv_valid, recv_ready;
    wire [31:0] exec_result;
    wire [63:0] dbg_ctr;

    cu_base #(.X(1), .Y(1), .CU_TYPE(16'h4e55), .CU_VERSION(8'h01), .N_BUFFERS(4'd0),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(unit_in_data), .noc_in_valid(unit_in_valid), .noc_in_busy(unit_in_busy),
        .noc_out_data(unit_out_data), .noc_out_valid(unit_out_valid), .noc_out_busy(unit_out_busy),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(inst_space), .busy(busy), .mon_err(base_err));

    cu_null #(.X(1), .Y(1)) u_unit (
        .clk(clk), .resetn(resetn),
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready));
endmodule
`default_nettype wire
