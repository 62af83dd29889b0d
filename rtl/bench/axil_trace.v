// A log of every AXI4-Lite handshake on the host pins of a generated machine harness.
//
// Why: the host's bus timing is a measured fact (a write and a read each take
// a fixed number of cycles, docs/orch.md "Host timing"); a change to whatever drives the
// pins must keep every handshake on the same cycle. With the plusarg
// `+agsim_axil_trace` (tb/run/runner.py passes it when AGSIM_AXIL_TRACE=1) each
// handshake is written to axil_trace.txt in the simulator's working
// directory, one line: the simulated time in ns, the channel and its payload
// (AW/AR: address; W: data and strobes; B: response; R: data and response).
// Two runs whose files are equal put every transfer on the same cycle.
// Without the plusarg the module does nothing.
`default_nettype none
`timescale 1ns/1ps
module axil_trace #(
    parameter integer ADDR_W = 16
) (
    input wire              clk,
    input wire [ADDR_W-1:0] awaddr,
    input wire              awvalid,
    input wire              awready,
    input wire [63:0]       wdata,
    input wire [7:0]        wstrb,
    input wire              wvalid,
    input wire              wready,
    input wire [1:0]        bresp,
    input wire              bvalid,
    input wire              bready,
    input wire [ADDR_W-1:0] araddr,
    input wire              arvalid,
    input wire              arready,
    input wire [63:0]       rdata,
    input wire [1:0]        rresp,
    input wire              rvalid,
    input wire              rready
);
    integer fd = 0;
    initial if ($test$plusargs("agsim_axil_trace")) fd = $fopen("axil_trace.txt", "w");

    always @(posedge clk) begin
        if (fd != 0) begin
            if (awvalid && awready) $fwrite(fd, "%0t AW %h\n", $time, awaddr);
            if (wvalid && wready)   $fwrite(fd, "%0t W %h %h\n", $time, wdata, wstrb);
            if (bvalid && bready)   $fwrite(fd, "%0t B %h\n", $time, bresp);
            if (arvalid && arready) $fwrite(fd, "%0t AR %h\n", $time, araddr);
            if (rvalid && rready)   $fwrite(fd, "%0t R %h %h\n", $time, rdata, rresp);
        end
    end
endmodule
`default_nettype wire
