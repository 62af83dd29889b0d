// Pure-Verilog baseline of the speed benchmark (tb/perf): no cocotb, no VPI.
//
// Runs mesh_harness on the stimulus a cocotb run left behind (inj.hex and
// inj_meta.hex in the working directory; +total=<flits> says how many) and
// checks every delivered flit in Verilog, as it is captured:
//   * the slot tag in payload[255:224] names the injected flit (tag -> inj_mem
//     index map built once after the load);
//   * the captured flit equals the injected one, all 288 bits (CORRUPT);
//   * it arrives at the endpoint its header dst names (MISROUTE);
//   * it has not been captured before (DUPLICATE);
//   * per (source, destination) pair, flits arrive in injection order, which
//     within a source is increasing inj_mem index (REORDER).
// At the end every injected flit must have been seen once (LOST) and the mesh
// monitors must be quiet (mon_err). Prints one line
//   PURE PASS flits=N cycles=C errors=0      or
//   PURE FAIL flits=N cycles=C errors=E ...  (after the first errors)
// and calls $finish. Plusargs: +total=N (required), +max_cycles=N (run bound,
// default 200*N, at least 20000), +settle=N (cycles run after done, default 200,
// as the cocotb bench does), +quiet_limit=N (harness stall detector, default 5000),
// +max_shown=N (errors printed in full, default 10).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
// Bench code, linted with waivers stated here: the checker keeps its books with
// blocking assignments inside the clocked process, several captures per cycle
// in order (BLKSEQ); the run sequence drives the bank's start and its own
// checking flag nonblocking on a clock edge, so they take effect from the next
// edge exactly as a register would (INITIALDLY).
/* verilator lint_off BLKSEQ */
/* verilator lint_off INITIALDLY */
module mesh_pure_tb #(
    parameter integer NX = 4,
    parameter integer NY = 4,
    parameter integer FIFO_DEPTH = 4,
    parameter [63:0]  EDGE_MASK = 64'h0,
    parameter integer INJ_DEPTH = 65536,
    parameter integer CAP_DEPTH = 65536
) ();
    localparam integer NR = NX*NY;
    localparam integer NP = NR + 2*NX + 2*NY;

    mesh_harness #(
        .NX(NX), .NY(NY), .FIFO_DEPTH(FIFO_DEPTH), .EDGE_MASK(EDGE_MASK),
        .INJ_DEPTH(INJ_DEPTH), .CAP_DEPTH(CAP_DEPTH)
    ) h ();

    wire clk = h.clk;

    // ---------------- expectations, built once after the load ----------------
    localparam integer PADW = 32 - `NOC_POS_W;   // widens a coordinate to an integer
    integer idx_of_tag [0:INJ_DEPTH-1];     // slot tag -> inj_mem index (-1: none)
    integer src_of     [0:INJ_DEPTH-1];     // inj_mem index -> injecting port
    integer dst_of     [0:INJ_DEPTH-1];     // inj_mem index -> port its dst names (-1: none)
    reg     seen       [0:INJ_DEPTH-1];     // captured already
    integer last_idx   [0:NP*NP-1];         // per (src, dst): last inj_mem index delivered

    integer total;
    integer max_cycles;
    integer settle;
    integer quiet_limit;
    integer errors;
    integer end_cycle;
    integer max_shown;                      // errors printed in full
    integer captured;
    reg     checking;
    reg     timed_out;

    // Port index of an endpoint position (models/noc/mesh.py, noc_mesh.v), -1 if none.
    function integer port_of(input integer x, input integer y);
        begin
            if (x >= 1 && x <= NX && y >= 1 && y <= NY) port_of = (y - 1) * NX + (x - 1);
            else if (x >= 1 && x <= NX && y == 0)       port_of = NR + (x - 1);
            else if (x >= 1 && x <= NX && y == NY + 1)  port_of = NR + NX + (x - 1);
            else if (y >= 1 && y <= NY && x == 0)       port_of = NR + 2*NX + (y - 1);
            else if (y >= 1 && y <= NY && x == NX + 1)  port_of = NR + 2*NX + NY + (y - 1);
            else                                        port_of = -1;
        end
    endfunction

    function present(input integer port);
        begin
            if (port < 0 || port >= NP) present = 1'b0;
            else if (port < NR)         present = 1'b1;
            else                        present = EDGE_MASK[port - NR];
        end
    endfunction

    task report_error(input [8*10-1:0] kind, input integer port, input integer idx,
                      input [287:0] got);
        begin
            errors = errors + 1;
            if (errors <= max_shown) begin
                if (idx >= 0)
                    $display("PURE ERROR %0s at endpoint %0d cycle %0d: inj_mem[%0d] from port %0d to port %0d | got %h | injected %h",
                             kind, port, h.u_bank.cycle, idx, src_of[idx], dst_of[idx], got, h.u_bank.inj_mem[idx]);
                else
                    $display("PURE ERROR %0s at endpoint %0d cycle %0d | got %h",
                             kind, port, h.u_bank.cycle, got);
            end
        end
    endtask

    // ---------------- per-capture checks ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // table indices: only their low bits address a table
    integer tag;
    integer idx;
    integer pair;
    /* verilator lint_on UNUSEDSIGNAL */
    task check_capture(input integer port, input [287:0] flit);
        begin
            captured = captured + 1;
            tag = flit[255:224];
            idx = (tag >= 0 && tag < total) ? idx_of_tag[tag] : -1;
            if (idx < 0) begin
                report_error("UNKNOWN", port, -1, flit);
            end else begin
                if (flit !== h.u_bank.inj_mem[idx]) report_error("CORRUPT", port, idx, flit);
                if (port != dst_of[idx])             report_error("MISROUTE", port, idx, flit);
                if (seen[idx]) begin
                    report_error("DUPLICATE", port, idx, flit);
                end else begin
                    seen[idx] = 1'b1;
                    pair = src_of[idx] * NP + dst_of[idx];
                    // One out-of-order flit is one error: compare with the last
                    // delivery of the pair, whatever it was.
                    if (idx < last_idx[pair]) report_error("REORDER", port, idx, flit);
                    last_idx[pair] = idx;
                end
            end
        end
    endtask

    // Sample the mesh -> endpoint links at each edge, as the bank's sinks do.
    integer p;
    always @(posedge clk) begin
        if (checking) begin
            for (p = 0; p < NP; p = p + 1)
                if (h.rx_valid[p] && !h.rx_busy[p]) check_capture(p, h.rx_data[p]);
            if (h.u_bank.cycle >= max_cycles) timed_out <= 1'b1;
        end
    end

    // ---------------- the run ----------------
    integer i;
    integer e;
    integer base;
    integer count;
    integer sum;
    integer d;
    integer dx;
    integer dy;
    /* verilator lint_off UNUSEDSIGNAL */  // header fields other than dst and the tag
    reg [287:0] f;
    /* verilator lint_on UNUSEDSIGNAL */
    initial begin
        errors = 0;
        captured = 0;
        checking = 1'b0;
        timed_out = 1'b0;
        if (!$value$plusargs("total=%d", total)) begin
            $display("PURE FAIL flits=0 cycles=0 errors=1: no +total=<flits> plusarg");
            $finish;
        end
        if (total <= 0 || total > INJ_DEPTH) begin
            $display("PURE FAIL flits=%0d cycles=0 errors=1: +total must be 1..%0d (INJ_DEPTH)", total, INJ_DEPTH);
            $finish;
        end
        if (!$value$plusargs("max_cycles=%d", max_cycles)) max_cycles = (200 * total > 20000) ? 200 * total : 20000;
        if (!$value$plusargs("settle=%d", settle)) settle = 200;
        if (!$value$plusargs("quiet_limit=%d", quiet_limit)) quiet_limit = 5000;
        if (!$value$plusargs("max_shown=%d", max_shown)) max_shown = 10;

        // Out of the harness's power-on reset.
        @(posedge h.resetn);
        @(posedge clk);

        // Free-running controls, then the bulk load (tb_ep_bank's load protocol).
        h.u_bank.idle_mode    = 2'd0;
        h.u_bank.bp_mode      = 2'd0;
        h.u_bank.violate      = 3'd0;
        h.u_bank.fault_mode   = 3'd0;
        h.u_bank.quiet_limit  = quiet_limit;
        h.u_bank.inj_total    = total;
        h.u_bank.expect_total = total;
        @(posedge clk);
        h.u_bank.load_req = 1'b1;
        wait (h.u_bank.load_ack);
        h.u_bank.load_req = 1'b0;

        // Expectations: who sends each flit, where it must go, tag -> index.
        for (i = 0; i < total; i = i + 1) idx_of_tag[i] = -1;
        for (i = 0; i < NP * NP; i = i + 1) last_idx[i] = -1;
        sum = 0;
        for (e = 0; e < NP; e = e + 1) begin
            base  = h.u_bank.inj_meta[e][63:32];
            count = h.u_bank.inj_meta[e][31:0];
            if (count != 0 && (!present(e) || base < 0 || base + count > total)) begin
                errors = errors + 1;
                $display("PURE ERROR BAD_META port %0d: base %0d count %0d (total %0d, present %0d)",
                         e, base, count, total, present(e));
            end else begin
                for (i = base; i < base + count; i = i + 1) src_of[i] = e;
            end
            sum = sum + count;
        end
        if (sum != total) begin
            errors = errors + 1;
            $display("PURE ERROR BAD_META inj_meta.hex lists %0d flits, +total=%0d", sum, total);
        end
        for (i = 0; i < total; i = i + 1) begin
            f = h.u_bank.inj_mem[i];
            seen[i] = 1'b0;
            dx = {{PADW{1'b0}}, f[`NOC_DST_X]};
            dy = {{PADW{1'b0}}, f[`NOC_DST_Y]};
            d = port_of(dx, dy);
            if (!present(d)) begin
                errors = errors + 1;
                $display("PURE ERROR BAD_DST inj_mem[%0d] dst=(%0d,%0d) is not an endpoint | %h",
                         i, dx, dy, f);
                d = -1;
            end
            dst_of[i] = d;
            tag = f[255:224];
            if (tag < 0 || tag >= total || idx_of_tag[tag] != -1) begin
                errors = errors + 1;
                $display("PURE ERROR BAD_TAG inj_mem[%0d] slot tag %0d out of range or used twice", i, f[255:224]);
            end else begin
                idx_of_tag[tag] = i;
            end
        end

        // Start on a clock edge (nonblocking, so the sources see it from the next
        // edge on: their first cycle latches the base pointers), run to the end.
        @(posedge clk);
        checking <= 1'b1;
        h.u_bank.start <= 1'b1;
        wait (h.u_bank.done || h.u_bank.stalled || timed_out);
        if (h.u_bank.done) repeat (settle) @(posedge clk);   // a surplus flit shows up here
        @(posedge clk);
        end_cycle = h.u_bank.cycle;   // before this edge's update, as the cocotb bench reads it
        checking <= 1'b0;             // this edge's captures are still checked
        #1;

        if (!h.u_bank.done) begin
            errors = errors + 1;
            $display("PURE ERROR run ended by %0s at cycle %0d: %0d/%0d injected, %0d captured",
                     h.u_bank.stalled ? "stalled" : "timeout", h.u_bank.cycle, h.u_bank.inj_count, total, captured);
        end
        if (h.u_bank.inj_count != total) begin
            errors = errors + 1;
            $display("PURE ERROR %0d of %0d flits were injected", h.u_bank.inj_count, total);
        end
        for (i = 0; i < total; i = i + 1) begin
            if (!seen[i]) begin
                errors = errors + 1;
                if (errors <= max_shown)
                    $display("PURE ERROR LOST inj_mem[%0d] from port %0d to port %0d, never captured | %h",
                             i, src_of[i], dst_of[i], h.u_bank.inj_mem[i]);
            end
        end
        if (captured != total) begin
            errors = errors + 1;
            $display("PURE ERROR %0d flits captured, %0d expected", captured, total);
        end
        if (h.mon_err !== 1'b0) begin
            errors = errors + 1;
            $display("PURE ERROR an RTL assertion monitor raised mon_err (%b)", h.mon_err);
        end

        if (errors == 0)
            $display("PURE PASS flits=%0d cycles=%0d errors=0", total, end_cycle);
        else
            $display("PURE FAIL flits=%0d cycles=%0d errors=%0d (first %0d shown above)",
                     total, end_cycle, errors, (errors < max_shown) ? errors : max_shown);
        $finish;
    end
endmodule
/* verilator lint_on INITIALDLY */
/* verilator lint_on BLKSEQ */
`default_nettype wire
