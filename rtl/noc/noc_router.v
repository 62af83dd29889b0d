// Five-port NoC router (spec sections 2 and 3).
//
// Micro-architecture (ours; the protocol only fixes the link and the routing):
//   input FIFO per port (depth FIFO_DEPTH) -> XY route on the FIFO head ->
//   round-robin arbitration per output -> one output register per port.
// A hop therefore costs at least two registered stages (FIFO write, output
// register), and every port moves at most one flit per cycle each way.
//
// Routing: X first on destination coordinates clamped into the router grid
// 1..NX x 1..NY; at the target router a raw off-grid destination takes the one
// outward hop, otherwise Local. No Y-to-X turn is ever requested by a legal flit.
//
// Assertion monitors (all print a line containing ERROR and raise mon_err,
// which stays high until the next reset):
//   * per input link: a sender withdrew or changed a held flit (noc_link_mon);
//   * per input FIFO: written while full / popped while empty (noc_fifo);
//   * impossible turn: a flit that came from a neighbouring ROUTER on the N or
//     S port asks to turn E/W, or asks to go back where it came from;
//   * undeliverable: a flit asks for a port with nothing attached (PORT_PRESENT)
//     or for a destination that is a corner or beyond the edge ring.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module noc_router #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer NX = 1,
    parameter integer NY = 1,
    parameter integer FIFO_DEPTH = 4,
    // bit p = something is attached to port p (N,E,S,W,L)
    parameter [4:0]   PORT_PRESENT = 5'b11111,
    // bit p = port p faces an edge endpoint (1) rather than a neighbouring router (0)
    parameter [4:0]   PORT_EDGE = 5'b11111
) (
    input  wire               clk,
    input  wire               resetn,
    input  wire [5*288-1:0]   in_data,
    input  wire [4:0]         in_valid,
    output wire [4:0]         in_busy,
    output wire [5*288-1:0]   out_data,
    output wire [4:0]         out_valid,
    input  wire [4:0]         out_busy,
    output wire               mon_err
);
    localparam integer W = `NOC_FLIT_W;
    localparam [3:0] X4  = X[3:0];
    localparam [3:0] Y4  = Y[3:0];
    localparam [3:0] NX4 = NX[3:0];
    localparam [3:0] NY4 = NY[3:0];

    // ------------------------------------------------------------ routing
    // Output port for a destination, seen from this router.
    function automatic [2:0] route_port(input [3:0] dx, input [3:0] dy);
        reg [3:0] cx;
        reg [3:0] cy;
        begin
            cx = (dx == 4'd0) ? 4'd1 : ((dx > NX4) ? NX4 : dx);
            cy = (dy == 4'd0) ? 4'd1 : ((dy > NY4) ? NY4 : dy);
            if (cx > X4)            route_port = 3'd`NOC_PORT_E;
            else if (cx < X4)       route_port = 3'd`NOC_PORT_W;
            else if (cy > Y4)       route_port = 3'd`NOC_PORT_S;
            else if (cy < Y4)       route_port = 3'd`NOC_PORT_N;
            else if (dx == 4'd0)    route_port = 3'd`NOC_PORT_W;
            else if (dx > NX4)      route_port = 3'd`NOC_PORT_E;
            else if (dy == 4'd0)    route_port = 3'd`NOC_PORT_N;
            else if (dy > NY4)      route_port = 3'd`NOC_PORT_S;
            else                    route_port = 3'd`NOC_PORT_L;
        end
    endfunction

    // A destination no endpoint can hold: a corner of the ring, or past it.
    function automatic bad_destination(input [3:0] dx, input [3:0] dy);
        reg xoff;
        reg yoff;
        begin
            xoff = (dx == 4'd0) || (dx > NX4);
            yoff = (dy == 4'd0) || (dy > NY4);
            /* verilator lint_off CMPCONST */  // constant when NX or NY is 14
            bad_destination = (xoff && yoff) || ({1'b0, dx} > {1'b0, NX4} + 5'd1)
                              || ({1'b0, dy} > {1'b0, NY4} + 5'd1);
            /* verilator lint_on CMPCONST */
        end
    endfunction

    // ------------------------------------------------------------ inputs
    wire [W-1:0] head     [0:4];
    wire [4:0]   head_vld;
    wire [2:0]   head_port[0:4];
    wire [4:0]   fifo_full;
    reg  [4:0]   pop;
    wire [4:0]   fifo_err;
    wire [4:0]   link_err;

    genvar p;
    generate
        for (p = 0; p < 5; p = p + 1) begin : g_in
            wire empty;
            noc_fifo #(.WIDTH(W), .DEPTH(FIFO_DEPTH)) u_fifo (
                .clk(clk), .resetn(resetn),
                .push(in_valid[p] && !fifo_full[p]), .din(in_data[p*W +: W]),
                .pop(pop[p]), .dout(head[p]),
                .empty(empty), .full(fifo_full[p]),
                .mon_err(fifo_err[p])
            );
            assign head_vld[p]  = !empty;
            assign head_port[p] = route_port(head[p][`NOC_DST_X], head[p][`NOC_DST_Y]);
            noc_link_mon #(.WIDTH(W)) u_mon (
                .clk(clk), .resetn(resetn),
                .valid(in_valid[p]), .busy(fifo_full[p]), .data(in_data[p*W +: W]),
                .mon_err(link_err[p])
            );
        end
    endgenerate
    assign in_busy = fifo_full;

    // ------------------------------------------------------------ arbitration
    reg [W-1:0] oreg      [0:4];
    reg [4:0]   oreg_vld;
    reg [2:0]   rr        [0:4];   // input that has priority next, per output
    reg [2:0]   grant     [0:4];
    reg [4:0]   grant_vld;

    integer o;
    integer k;
    reg [3:0] cand;
    always @* begin
        cand      = 4'd0;
        pop       = 5'b0;
        grant_vld = 5'b0;
        for (o = 0; o < 5; o = o + 1) begin
            grant[o] = 3'd0;
            // An output can take a new flit when empty or being emptied now.
            if (PORT_PRESENT[o] && (!oreg_vld[o] || !out_busy[o])) begin
                for (k = 0; k < 5; k = k + 1) begin
                    cand = {1'b0, rr[o]} + k[3:0];
                    if (cand >= 4'd5) cand = cand - 4'd5;
                    if (!grant_vld[o] && head_vld[cand[2:0]] && head_port[cand[2:0]] == o[2:0]) begin
                        grant_vld[o] = 1'b1;
                        grant[o]     = cand[2:0];
                    end
                end
            end
            if (grant_vld[o]) pop[grant[o]] = 1'b1;
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            oreg_vld <= 5'b0;
            for (o = 0; o < 5; o = o + 1) rr[o] <= 3'd0;
        end else begin
            for (o = 0; o < 5; o = o + 1) begin
                if (grant_vld[o]) begin
                    oreg[o]     <= head[grant[o]];
                    oreg_vld[o] <= 1'b1;
                    rr[o]       <= (grant[o] == 3'd4) ? 3'd0 : grant[o] + 3'd1;
                end else if (oreg_vld[o] && !out_busy[o]) begin
                    oreg_vld[o] <= 1'b0;
                end
            end
        end
    end

    generate
        for (p = 0; p < 5; p = p + 1) begin : g_out
            assign out_data[p*W +: W] = oreg[p];
            assign out_valid[p]       = oreg_vld[p];
        end
    endgenerate

    // ------------------------------------------------------------ monitors
    reg route_err;
    reg [4:0] reported;   // one message per offending head, not one per cycle
    initial route_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            reported  <= 5'b0;
            route_err <= 1'b0;
        end else begin
            for (k = 0; k < 5; k = k + 1) begin
                if (pop[k]) reported[k] <= 1'b0;
                if (head_vld[k] && !reported[k]) begin
                    if (!PORT_EDGE[k] && k != `NOC_PORT_L &&
                        ((k == `NOC_PORT_N || k == `NOC_PORT_S) &&
                         (head_port[k] == 3'd`NOC_PORT_E || head_port[k] == 3'd`NOC_PORT_W))) begin
                        $display("ERROR %m t=%0t: router(%0d,%0d) impossible Y-to-X turn: flit from neighbour router on port %0d asks for port %0d: %h",
                                 $time, X, Y, k, head_port[k], head[k]);
                        route_err   <= 1'b1;
                        reported[k] <= 1'b1;
                    end else if (!PORT_EDGE[k] && k != `NOC_PORT_L && head_port[k] == k[2:0]) begin
                        $display("ERROR %m t=%0t: router(%0d,%0d) impossible U-turn: flit from neighbour router on port %0d asks to go back: %h",
                                 $time, X, Y, k, head[k]);
                        route_err   <= 1'b1;
                        reported[k] <= 1'b1;
                    end else if (!PORT_PRESENT[head_port[k]]) begin
                        $display("ERROR %m t=%0t: router(%0d,%0d) flit on port %0d routed to port %0d where nothing is attached (dst=(%0d,%0d)): %h",
                                 $time, X, Y, k, head_port[k], head[k][`NOC_DST_X], head[k][`NOC_DST_Y], head[k]);
                        route_err   <= 1'b1;
                        reported[k] <= 1'b1;
                    end else if (head_port[k] != 3'd`NOC_PORT_L &&
                                 bad_destination(head[k][`NOC_DST_X], head[k][`NOC_DST_Y]) &&
                                 ((head_port[k] == 3'd`NOC_PORT_W && X == 1) ||
                                  (head_port[k] == 3'd`NOC_PORT_E && X == NX) ||
                                  (head_port[k] == 3'd`NOC_PORT_N && Y == 1) ||
                                  (head_port[k] == 3'd`NOC_PORT_S && Y == NY))) begin
                        $display("ERROR %m t=%0t: router(%0d,%0d) undeliverable destination (%0d,%0d) (a corner or past the edge ring): %h",
                                 $time, X, Y, head[k][`NOC_DST_X], head[k][`NOC_DST_Y], head[k]);
                        route_err   <= 1'b1;
                        reported[k] <= 1'b1;
                    end
                end
            end
        end
    end

    assign mon_err = route_err | (|fifo_err) | (|link_err);
endmodule
`default_nettype wire
