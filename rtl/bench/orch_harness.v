// Bench top of the orchestrator: the orchestrator on the Local port of router
// (OX,OY) of an NX x NY noc_mesh, bench endpoints (tb_ep_bank) on every other
// Local port, and one more bench port wired straight to the orchestrator.
//
// Bank port index space: 0 .. NX*NY-1 are the mesh's Local endpoints
// (models/noc/mesh.py numbering; the orchestrator's own index is absent from the
// bank), NX*NY is the DIRECT port. Python sets `direct` before a reset:
//   direct = 0  the orchestrator talks to the mesh (the direct port is idle);
//   direct = 1  the orchestrator talks to the direct port only (the mesh Local
//               port of the orchestrator is tied off), so a bench source can
//               break the link protocol right at the orchestrator's input.
// The AXI4-Lite master pins (s_axil_*) are registers here, driven by Python
// (cocotbext-axi's AxiLiteMaster, or directly to break the protocol on purpose).
`default_nettype none
`timescale 1ns/1ps
// Bench code, linted with waivers stated here: registers written only by
// Python look undriven to Verilator, and status signals are read only by
// Python (UNUSEDSIGNAL); edge-ring ports of the mesh are tied off.
module orch_harness #(
    parameter integer NX = 2,
    parameter integer NY = 2,
    parameter integer OX = 1,
    parameter integer OY = 1,
    parameter integer FIFO_DEPTH = 4,
    parameter integer STAGE_SLOTS = 256,
    parameter integer BUSY_LIMIT = 2000,
    parameter integer INJ_DEPTH = 4096,
    parameter integer CAP_DEPTH = 4096
) ();
    localparam integer NR  = NX*NY;
    localparam integer NPM = NR + 2*NX + 2*NY;       // mesh endpoint ports
    localparam integer NPB = NR + 1;                 // bank ports: Local ones and DIRECT
    localparam integer OI  = (OY-1)*NX + (OX-1);     // the orchestrator's Local index
    localparam integer DP  = NR;                     // the direct port
    localparam [63:0]  PRESENT = (({64{1'b1}} >> (64 - NPB))) & ~(64'd1 << OI);
    localparam integer ADDR_W = 16;

    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    // ---------------- controls and host pins, written by Python ----------------
    reg              direct = 1'b0;
    reg [ADDR_W-1:0] s_axil_awaddr  = {ADDR_W{1'b0}};
    reg              s_axil_awvalid = 1'b0;
    reg [63:0]       s_axil_wdata   = 64'd0;
    reg [7:0]        s_axil_wstrb   = 8'd0;
    reg              s_axil_wvalid  = 1'b0;
    reg              s_axil_bready  = 1'b0;
    reg [ADDR_W-1:0] s_axil_araddr  = {ADDR_W{1'b0}};
    reg              s_axil_arvalid = 1'b0;
    reg              s_axil_rready  = 1'b0;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire             s_axil_awready;
    wire             s_axil_wready;
    wire [1:0]       s_axil_bresp;
    wire             s_axil_bvalid;
    wire             s_axil_arready;
    wire [63:0]      s_axil_rdata;
    wire [1:0]       s_axil_rresp;
    wire             s_axil_rvalid;
    wire             mon_err;        // the orchestrator's monitors
    wire             mesh_mon_err;   // the mesh's monitors
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------- bench endpoints ----------------
    wire [287:0] tx_data  [0:NPB-1];
    wire         tx_valid [0:NPB-1];
    wire         tx_busy  [0:NPB-1];
    wire [287:0] rx_data  [0:NPB-1];
    wire         rx_valid [0:NPB-1];
    wire         rx_busy  [0:NPB-1];
    tb_ep_bank #(.NP(NPB), .PRESENT(PRESENT), .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)) u_bank (
        .clk(clk), .resetn(resetn), .unit_busy(1'b0),
        .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),
        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));

    // ---------------- the mesh ----------------
    wire [287:0] m_in_data  [0:NPM-1];
    wire         m_in_valid [0:NPM-1];
    wire         m_in_busy  [0:NPM-1];
    wire [287:0] m_out_data [0:NPM-1];
    wire         m_out_valid[0:NPM-1];
    wire         m_out_busy [0:NPM-1];
    noc_mesh #(.NX(NX), .NY(NY), .FIFO_DEPTH(FIFO_DEPTH), .EDGE_MASK(64'd0)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(m_in_data), .ep_in_valid(m_in_valid), .ep_in_busy(m_in_busy),
        .ep_out_data(m_out_data), .ep_out_valid(m_out_valid), .ep_out_busy(m_out_busy),
        .mon_err(mesh_mon_err));

    // ---------------- the orchestrator ----------------
    wire [287:0] o_in_data;
    wire         o_in_valid;
    wire         o_in_busy;
    wire [287:0] o_out_data;
    wire         o_out_valid;
    wire         o_out_busy;
    orchestrator #(.X(OX), .Y(OY), .STAGE_SLOTS(STAGE_SLOTS), .ADDR_W(ADDR_W), .BUSY_LIMIT(BUSY_LIMIT)) u_dut (
        .clk(clk), .resetn(resetn),
        .noc_in_data(o_in_data), .noc_in_valid(o_in_valid), .noc_in_busy(o_in_busy),
        .noc_out_data(o_out_data), .noc_out_valid(o_out_valid), .noc_out_busy(o_out_busy),
        .s_axil_awaddr(s_axil_awaddr), .s_axil_awvalid(s_axil_awvalid), .s_axil_awready(s_axil_awready),
        .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(s_axil_wstrb), .s_axil_wvalid(s_axil_wvalid),
        .s_axil_wready(s_axil_wready),
        .s_axil_bresp(s_axil_bresp), .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready),
        .s_axil_araddr(s_axil_araddr), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
        .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
        .s_axil_rready(s_axil_rready),
        .mon_err(mon_err));

    // The orchestrator's link goes to the mesh or to the direct port.
    assign o_in_data  = direct ? tx_data[DP]  : m_out_data[OI];
    assign o_in_valid = direct ? tx_valid[DP] : m_out_valid[OI];
    assign o_out_busy = direct ? rx_busy[DP]  : m_in_busy[OI];
    assign tx_busy[DP]  = direct ? o_in_busy : 1'b1;
    assign rx_data[DP]  = o_out_data;
    assign rx_valid[DP] = direct && o_out_valid;

    genvar p;
    generate
        for (p = 0; p < NPM; p = p + 1) begin : g_port
            if (p == OI) begin : g_orch
                assign m_in_data[p]  = o_out_data;
                assign m_in_valid[p] = !direct && o_out_valid;
                assign m_out_busy[p] = direct ? 1'b1 : o_in_busy;
                assign tx_busy[p]    = 1'b1;     // the bank has no endpoint here
                assign rx_data[p]    = 288'd0;
                assign rx_valid[p]   = 1'b0;
            end else if (p < NR) begin : g_bank
                assign m_in_data[p]  = tx_data[p];
                assign m_in_valid[p] = tx_valid[p];
                assign tx_busy[p]    = m_in_busy[p];
                assign rx_data[p]    = m_out_data[p];
                assign rx_valid[p]   = m_out_valid[p];
                assign m_out_busy[p] = rx_busy[p];
            end else begin : g_tie     // edge ring: no endpoints in this bench
                assign m_in_data[p]  = 288'd0;
                assign m_in_valid[p] = 1'b0;
                assign m_out_busy[p] = 1'b1;
            end
        end
    endgenerate

    // ---------------- timing stamps, read by Python ----------------
    // The bank's cycle (the stamp its captures carry) at the last handshake of each AXI channel, and at
    // the first edge the orchestrator's run bit is seen low after a dispatch ran: the orchestrator's
    // timing is measured in the simulator, never from Python's wake-ups.
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    reg [31:0] aw_at = 32'd0, w_at = 32'd0, b_at = 32'd0, ar_at = 32'd0, r_at = 32'd0, run_low_at = 32'd0;
    /* verilator lint_on UNUSEDSIGNAL */
    reg        run_seen = 1'b0;
    always @(posedge clk) begin
        if (s_axil_awvalid && s_axil_awready) aw_at <= u_bank.cycle;
        if (s_axil_wvalid && s_axil_wready)   w_at  <= u_bank.cycle;
        if (s_axil_bvalid && s_axil_bready)   b_at  <= u_bank.cycle;
        if (s_axil_arvalid && s_axil_arready) ar_at <= u_bank.cycle;
        if (s_axil_rvalid && s_axil_rready)   r_at  <= u_bank.cycle;
        if (run_seen != u_dut.running) begin
            run_seen <= u_dut.running;
            if (run_seen) run_low_at <= u_bank.cycle;
        end
    end
endmodule
`default_nettype wire
