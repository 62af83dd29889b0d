// mag_timed_tb: the memory agent and its DRAM alone, fed flits at given edges; prints the edge each flit is
// taken (IN) and the edge the router would take each flit it sends (OUT). The bench of
// tests/unit/timed/test_timed_mag.py, which holds models/timed/mag.py to these edges.
`default_nettype none
`timescale 1ns/1ps
module tmag_tb;
    parameter integer N = 1;
    parameter integer DRAIN = 400;
    parameter integer RD_LATENCY = 1, RD_INTERVAL = 1, RDQ_DEPTH = 64, WRQ_DEPTH = 64, Q_MARGIN = 4,
                      WR_SLOTS = 16, QUANT_LAT = 8, AR_FIFO_LAT = 3, R_FIFO_LAT = 3, W_FIFO_LAT = 3,
                      B_FIFO_LAT = 3, R_FIFO_DEPTH = 64;
    reg clk = 0, resetn = 0;
    always #5 clk = ~clk;
    reg  [287:0] in_data = 0;
    reg          in_valid = 0;
    wire         in_busy;
    wire [287:0] out_data;
    wire         out_valid;
    wire mem_rd_req, mem_rd_ready, mem_rd_valid, mem_wr_req, mag_err, dram_err;
    wire [34:0] mem_rd_addr, mem_wr_addr;
    wire [255:0] mem_rd_data, mem_wr_data;
    mag #(.X(0), .Y(1), .DRAM_WORDS(4096), .RDQ_DEPTH(RDQ_DEPTH), .WRQ_DEPTH(WRQ_DEPTH), .Q_MARGIN(Q_MARGIN),
          .WR_SLOTS(WR_SLOTS), .QUANT_LAT(QUANT_LAT), .AR_FIFO_LAT(AR_FIFO_LAT), .R_FIFO_LAT(R_FIFO_LAT),
          .W_FIFO_LAT(W_FIFO_LAT), .B_FIFO_LAT(B_FIFO_LAT), .R_FIFO_DEPTH(R_FIFO_DEPTH)) u_mag (
        .clk(clk), .resetn(resetn), .noc_in_data(in_data), .noc_in_valid(in_valid), .noc_in_busy(in_busy),
        .noc_out_data(out_data), .noc_out_valid(out_valid), .noc_out_busy(1'b0),
        .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),
        .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data),
        .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data), .mon_err(mag_err));
    mag_dram #(.WORDS(4096), .RD_LATENCY(RD_LATENCY), .RD_INTERVAL(RD_INTERVAL)) dram (
        .clk(clk), .resetn(resetn), .rd_req(mem_rd_req), .rd_addr(mem_rd_addr), .rd_ready(mem_rd_ready),
        .rd_valid(mem_rd_valid), .rd_data(mem_rd_data), .wr_req(mem_wr_req), .wr_addr(mem_wr_addr),
        .wr_data(mem_wr_data), .mon_err(dram_err));
    reg [287:0] flits [0:N-1];
    reg [31:0]  at    [0:N-1];
    integer cyc = 0;     // edges since reset was released (the first is edge 0)
    integer i = 0;
    always @(posedge clk) if (resetn) begin
        if (out_valid) $display("OUT %0d %h", cyc, out_data);
        cyc <= cyc + 1;
    end
    initial begin
        $readmemh("flits.hex", flits);
        $readmemh("at.hex", at);
        repeat (4) @(posedge clk);
        #1 resetn = 1;
        while (i < N) begin
            in_valid = at[i] <= cyc;      // flit i offered from edge at[i], held until taken
            in_data  = flits[i];
            @(posedge clk);
            if (in_valid && !in_busy) begin
                $display("IN %0d", cyc);
                i = i + 1;
            end
            #1;
        end
        in_valid = 0;
        repeat (DRAIN) @(posedge clk);
        $display("END mon_err=%0d", mag_err | dram_err);
        $finish;
    end
endmodule
