// Five-port NoC router (spec sections 2 and 3).
//
// Data ports are unpacked arrays indexed by port (N,E,S,W,L): Icarus updates a
// wide flat vector bit by bit for every part-select driver, which made a 4x4
// mesh 100x slower than this form.
//
// Micro-architecture, timed as upstream KohakuTPU's router
// (src/kohakuaccel/noc/router/noc_inport.v, noc_outport.v, at 7703ee8):
//   input FIFO per port (depth FIFO_DEPTH, first-word-fall-through, readable
//   the cycle after its write) -> ONE holding register per input that takes
//   the FIFO head together with its output direction, computed on the FIFO
//   head one cycle before the offer -> round-robin arbitration per output
//   over the five holding registers -> one output register per port.
// Timing facts (each from the upstream files above; they are the structure
// itself, three registers a hop, so no parameter changes them):
//   * a hop is 3 cycles: a flit taken into an input FIFO at edge e is in the
//     holding register at e+1, in the output register at e+2 and taken by the
//     next receiver at e+3 when it is not busy (FIFO write, hold, output);
//   * one flit per cycle per port each way: the holding register reloads in
//     the cycle it is granted, the output register in the cycle it is taken;
//   * input busy = FIFO full, no margin (noc_inport.v port_busy);
//   * the round-robin pointer of every output advances by one every cycle,
//     granted or not (a rotating priority: noc_outport.v port_rr); it starts
//     at input 0 (North) at reset; an output grants nothing while its
//     register holds a flit the receiver has not taken.
//
// Routing: X first on destination coordinates clamped into the router grid
// 1..NX x 1..NY; at the target router a raw off-grid destination takes the one
// outward hop, otherwise Local. No Y-to-X turn is ever requested by a legal flit.
//
// Assertion monitors (all print a line containing ERROR and raise mon_err,
// which stays high until the next reset):
//   * per input link: a sender withdrew or changed a held flit (noc_link_mon);
//   * per output link into an endpoint: the same rule, for this router's own side;
//   * per input FIFO: written while full / popped while empty (noc_fifo);
//   * impossible turn: a flit that came from a neighbouring ROUTER on the N or
//     S port asks to turn E/W towards another router, or asks to go back where
//     it came from (the outward hop into an edge endpoint is an ejection, legal);
//   * undeliverable: a flit asks for a port with nothing attached (PORT_PRESENT)
//     or for a destination that is a corner or beyond the edge ring.
// The route rules are checked on the flit in each holding register (the one
// offered to the outputs).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module noc_router #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer NX = 1,
    parameter integer NY = 1,
    parameter integer FIFO_DEPTH = 32,  // the reference configuration's input FIFO depth
    // bit p = something is attached to port p (N,E,S,W,L)
    parameter [4:0]   PORT_PRESENT = 5'b11111,
    // bit p = port p faces an edge endpoint (1) rather than a neighbouring router (0)
    parameter [4:0]   PORT_EDGE = 5'b11111
) (
    input  wire               clk,
    input  wire               resetn,
    input  wire [287:0]       in_data [0:4],
    input  wire [4:0]         in_valid,
    output wire [4:0]         in_busy,
    output wire [287:0]       out_data [0:4],
    output wire [4:0]         out_valid,
    input  wire [4:0]         out_busy,
    output wire               mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (NX < 1 || NX > 14 || NY < 1 || NY > 14 || X < 1 || X > NX || Y < 1 || Y > NY || FIFO_DEPTH < 1)
            $fatal(1, "noc_router %m: X=%0d Y=%0d NX=%0d NY=%0d FIFO_DEPTH=%0d: need 1 <= NX, NY <= 14 (4-bit coordinates, edges at 0 and N+1), 1 <= X <= NX, 1 <= Y <= NY, FIFO_DEPTH >= 1", X, Y, NX, NY, FIFO_DEPTH);
    end
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
    // Per input: the FIFO, then the holding register that offers its flit, with the output
    // direction computed from the FIFO head as the register loads.
    wire [W-1:0] fifo_head [0:4];
    wire [4:0]   fifo_empty;
    wire [4:0]   fifo_full;
    wire [4:0]   fifo_err;
    wire [4:0]   link_err;
    wire [4:0]   load;            // the holding register takes the FIFO head (the FIFO pops)
    wire [4:0]   taken;           // an output grants the holding register's flit this cycle
    reg  [W-1:0] hold      [0:4];
    reg  [2:0]   hold_port [0:4];
    reg  [4:0]   hold_vld;

    genvar p;
    generate
        for (p = 0; p < 5; p = p + 1) begin : g_in
            noc_fifo #(.WIDTH(W), .DEPTH(FIFO_DEPTH)) u_fifo (
                .clk(clk), .resetn(resetn),
                .push(in_valid[p] && !fifo_full[p]), .din(in_data[p]),
                .pop(load[p]), .dout(fifo_head[p]),
                .empty(fifo_empty[p]), .full(fifo_full[p]),
                .mon_err(fifo_err[p])
            );
            // Loads whenever it is empty or being emptied now: one flit per cycle through the port.
            assign load[p] = !fifo_empty[p] && (!hold_vld[p] || taken[p]);
            noc_link_mon #(.WIDTH(W)) u_mon (
                .clk(clk), .resetn(resetn),
                .valid(in_valid[p]), .busy(fifo_full[p]), .data(in_data[p]),
                .mon_err(link_err[p])
            );
        end
    endgenerate
    assign in_busy = fifo_full;

    // The five holding registers in one process that only works in a cycle that loads or empties one
    // (one wake-up a cycle per router in Icarus, not five).
    integer hp;
    always @(posedge clk) begin
        if (!resetn) begin
            hold_vld <= 5'b0;
        end else if (|load || |taken) begin
            for (hp = 0; hp < 5; hp = hp + 1) begin
                if (load[hp]) begin
                    hold[hp]      <= fifo_head[hp];
                    hold_port[hp] <= route_port(fifo_head[hp][`NOC_DST_X], fifo_head[hp][`NOC_DST_Y]);
                    hold_vld[hp]  <= 1'b1;
                end else if (taken[hp]) begin
                    hold_vld[hp]  <= 1'b0;
                end
            end
        end
    end

    // ------------------------------------------------------------ arbitration
    // Built from continuous assignments (evaluated only when an input changes)
    // rather than one combinational loop, which Icarus re-ran several times a
    // cycle per router and which dominated simulation time.

    // Round-robin pick among the requesting inputs, starting at `first`.
    // (`first` is 0..4; the result is the index of a set bit of `req`, or junk when req is 0.)
    function automatic [2:0] rr_pick(input [4:0] req, input [2:0] first);
        /* verilator lint_off UNUSEDSIGNAL */
        reg [9:0] twice;  // only [4:0] is read after the shift
        /* verilator lint_on UNUSEDSIGNAL */
        reg [3:0] idx;
        begin
            twice = {req, req} >> first;
            idx   = twice[0] ? 4'd0 : twice[1] ? 4'd1 : twice[2] ? 4'd2 : twice[3] ? 4'd3 : 4'd4;
            idx   = idx + {1'b0, first};
            idx   = (idx >= 4'd5) ? idx - 4'd5 : idx;
            rr_pick = idx[2:0];
        end
    endfunction

    // The round-robin pointer. Upstream keeps one per output, each reset to 0 and advanced every
    // cycle whether it granted or not, so all five always hold the same value: one register serves.
    reg  [2:0]   rr;

    reg  [W-1:0] oreg     [0:4];
    reg  [4:0]   oreg_vld;
    wire [2:0]   grant    [0:4];
    wire [4:0]   grant_vld;
    wire [4:0]   req      [0:4];   // req[o][i]: input i's holding register wants output o
    wire [4:0]   out_err;

    genvar o;
    generate
        for (o = 0; o < 5; o = o + 1) begin : g_arb
            // One assignment per output (five one-bit drivers would cost Icarus a
            // vector rebuild each).
            assign req[o] = {hold_vld[4] && hold_port[4] == o, hold_vld[3] && hold_port[3] == o,
                             hold_vld[2] && hold_port[2] == o, hold_vld[1] && hold_port[1] == o,
                             hold_vld[0] && hold_port[0] == o};
            // An output takes a new flit when its register is empty or being emptied now.
            assign grant_vld[o] = PORT_PRESENT[o] && (!oreg_vld[o] || !out_busy[o]) && (|req[o]);
            // The pointer only matters when two or more inputs request: the pick is re-evaluated when
            // they do, not every cycle the pointer moves (a cheap mux instead of a function call a cycle).
            wire [2:0] first = ((req[o] & (req[o] - 5'd1)) != 5'd0) ? rr : 3'd0;
            assign grant[o]     = rr_pick(req[o], first);

            assign out_data[o]  = oreg[o];
            assign out_valid[o] = oreg_vld[o];
            // Links into endpoints end here, so this router checks its own side of
            // them (links into a neighbour are checked by the neighbour's input).
            if (PORT_EDGE[o] || o == `NOC_PORT_L) begin : g_omon
                noc_link_mon #(.WIDTH(W)) u_mon (
                    .clk(clk), .resetn(resetn),
                    .valid(oreg_vld[o]), .busy(out_busy[o]), .data(oreg[o]),
                    .mon_err(out_err[o])
                );
            end else begin : g_nomon
                assign out_err[o] = 1'b0;
            end
        end
        // Each holding register requests one output at most, so `taken` is a plain OR.
        for (p = 0; p < 5; p = p + 1) begin : g_taken
            assign taken[p] = (grant_vld[0] && grant[0] == p) || (grant_vld[1] && grant[1] == p) ||
                              (grant_vld[2] && grant[2] == p) || (grant_vld[3] && grant[3] == p) ||
                              (grant_vld[4] && grant[4] == p);
        end
    endgenerate

    // The pointer and the five output registers in one process (one wake-up a cycle per router in
    // Icarus, not six); the registers' part only works in a cycle that grants or empties one.
    integer ob;
    always @(posedge clk) begin
        if (!resetn) begin
            rr       <= 3'd0;
            oreg_vld <= 5'b0;
        end else begin
            rr <= (rr == 3'd4) ? 3'd0 : rr + 3'd1;
            if ((|grant_vld) || (|oreg_vld)) begin
                for (ob = 0; ob < 5; ob = ob + 1) begin
                    if (grant_vld[ob]) begin
                        oreg[ob]     <= hold[grant[ob]];
                        oreg_vld[ob] <= 1'b1;
                    end else if (oreg_vld[ob] && !out_busy[ob]) begin
                        oreg_vld[ob] <= 1'b0;
                    end
                end
            end
        end
    end

    // ------------------------------------------------------------ monitors
    // The route rules are continuous per-port checks of each holding register (re-evaluated only when
    // it changes); the clocked block below runs its per-port loop only when a new violation appears or
    // a reported flit leaves, so a legal cycle costs one vector test.
    wire [4:0] turn_bad, uturn_bad, absent_bad, edge_bad;
    genvar q;
    generate
        for (q = 0; q < 5; q = q + 1) begin : g_rule
            // The outward hop into an edge endpoint is an ejection, like Local, so only a turn towards a
            // neighbouring ROUTER counts.
            assign turn_bad[q]   = !PORT_EDGE[q] && q != `NOC_PORT_L && (q == `NOC_PORT_N || q == `NOC_PORT_S) &&
                                   (hold_port[q] == 3'd`NOC_PORT_E || hold_port[q] == 3'd`NOC_PORT_W) &&
                                   !PORT_EDGE[hold_port[q]];
            assign uturn_bad[q]  = !PORT_EDGE[q] && q != `NOC_PORT_L && hold_port[q] == q;
            assign absent_bad[q] = !PORT_PRESENT[hold_port[q]];
            assign edge_bad[q]   = hold_port[q] != 3'd`NOC_PORT_L &&
                                   bad_destination(hold[q][`NOC_DST_X], hold[q][`NOC_DST_Y]) &&
                                   ((hold_port[q] == 3'd`NOC_PORT_W && X == 1) ||
                                    (hold_port[q] == 3'd`NOC_PORT_E && X == NX) ||
                                    (hold_port[q] == 3'd`NOC_PORT_N && Y == 1) ||
                                    (hold_port[q] == 3'd`NOC_PORT_S && Y == NY));
        end
    endgenerate
    wire [4:0] bad = hold_vld & (turn_bad | uturn_bad | absent_bad | edge_bad);

    integer mk;
    reg route_err;
    reg [4:0] reported;   // one message per offending flit, not one per cycle
    initial route_err = 1'b0;
    always @(posedge clk) begin
        if (!resetn) begin
            reported  <= 5'b0;
            route_err <= 1'b0;
        end else if (|(bad & ~reported) || |(taken & reported)) begin
            for (mk = 0; mk < 5; mk = mk + 1) begin
                if (taken[mk]) reported[mk] <= 1'b0;
                if (bad[mk] && !reported[mk]) begin
                    route_err    <= 1'b1;
                    reported[mk] <= 1'b1;
                    if (turn_bad[mk])
                        $display("ERROR %m t=%0t: router(%0d,%0d) impossible Y-to-X turn: flit from neighbour router on port %0d asks for port %0d: %h",
                                 $time, X, Y, mk, hold_port[mk], hold[mk]);
                    else if (uturn_bad[mk])
                        $display("ERROR %m t=%0t: router(%0d,%0d) impossible U-turn: flit from neighbour router on port %0d asks to go back: %h",
                                 $time, X, Y, mk, hold[mk]);
                    else if (absent_bad[mk])
                        $display("ERROR %m t=%0t: router(%0d,%0d) flit on port %0d routed to port %0d where nothing is attached (dst=(%0d,%0d)): %h",
                                 $time, X, Y, mk, hold_port[mk], hold[mk][`NOC_DST_X], hold[mk][`NOC_DST_Y], hold[mk]);
                    else
                        $display("ERROR %m t=%0t: router(%0d,%0d) undeliverable destination (%0d,%0d) (a corner or past the edge ring): %h",
                                 $time, X, Y, hold[mk][`NOC_DST_X], hold[mk][`NOC_DST_Y], hold[mk]);
                end
            end
        end
    end
    assign mon_err = route_err | (|fifo_err) | (|link_err) | (|out_err);
endmodule
`default_nettype wire
