// `AHBM_EDGE(clk, cond) <statement> `AHBM_EDGE_END: a clocked process that acts at a rising edge of clk
// only where `cond` holds at that edge; in the other cycles it changes nothing.
//
// Why a macro: Icarus runs every `always @(posedge clk)` process at every edge, even to find that it has
// nothing to do, and the AHBM CUBE has some 270 of them (8 PEs, 32 IPCQ queues) idle most of the time
// (docs/ahbm.md, "Speed on Icarus"). On Icarus the process instead sleeps on `cond` (wait), then takes
// the next edge and tests `cond` there again, so it runs at exactly the edges the plain form would
// (cond: registers and wires of registers, which change only after an edge's nonblocking updates or by
// a bench's write between edges), and an idle one costs nothing. Everywhere else (Verilator, lint) it is
// the plain `always @(posedge clk) if (cond)`. The body runs only where cond holds, so it does not test
// cond again (a reset branch first, then what the process does).
`ifndef AHBM_EDGE_VH
`define AHBM_EDGE_VH
`ifdef __ICARUS__
`define AHBM_EDGE(clk, cond) always begin wait (cond); @(posedge clk); if (cond)
`define AHBM_EDGE_END end
`else
`define AHBM_EDGE(clk, cond) always @(posedge clk) if (cond)
`define AHBM_EDGE_END
`endif
`endif
