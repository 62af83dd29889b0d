// A bank of NP bench endpoints: an injection source and a capture sink per port.
//
// Python hands stimulus over in bulk and reads results in bulk, so it never sits
// in a per-cycle loop (guides/method.md, "Speed"):
//   * it writes inj.hex (one 288-bit flit per line, all ports concatenated) and
//     inj_meta.hex (per port: {base[31:0], count[31:0]}) into the simulator's
//     working directory, then raises load_req and waits for load_ack;
//   * it sets the controls below, raises `start`, and awaits `done` or `stalled`
//     (expect_total counts captures since reset, so a later run without a reset
//     asks for the running total);
//   * between runs (start low) it may pulse cap_clear for one cycle: the capture
//     memory and its counts start again from 0, so a long sequence of runs
//     without a reset never fills CAP_DEPTH;
//   * it raises dump_req and waits for dump_ack, then reads cap.hex (one record
//     per captured flit: {cycle[31:0], port[7:0], flit[287:0]}), inj_time.hex
//     (per injected flit, the cycle its handshake happened; all ones = never) and
//     busy.hex (per port, the cycles its source offered a flit and the DUT's input
//     was busy, i.e. the FIFO behind it full: what functional coverage samples as
//     "a FIFO filled"; counted since reset or the last cap_clear).
// Stall patterns come from tb_pattern, seeded from `seed`.
//
// Hostile-sender modes (violate), to prove the receiver's monitors fire:
//   1 withdraw a held flit for one cycle; 2 change a held flit's payload.
// Recorder faults (fault_mode), to prove the scoreboard fires on data from a real
// run; applied to capture number fault_index:
//   1 drop it, 2 record it twice, 3 record it at port fault_port,
//   4 record it after the next capture at the same port, 5 flip payload bit 0.
`default_nettype none
// Bench code, linted with waivers stated here: the capture process records
// several flits in one cycle in order, so it uses blocking assignments on
// purpose (BLKSEQ); status registers are read by Python through VPI, not by
// Verilog (UNUSEDSIGNAL).
/* verilator lint_off BLKSEQ */
module tb_ep_bank #(
    parameter integer NP = 5,
    parameter [63:0]  PRESENT = 64'hffff_ffff_ffff_ffff,  // bit e = port e has an endpoint
    parameter integer INJ_DEPTH = 65536,
    parameter integer CAP_DEPTH = 65536
) (
    input  wire              clk,
    input  wire              resetn,
    input  wire              unit_busy,   // a unit under test is working: the run is not quiet
    // endpoint -> DUT
    output wire [287:0]      tx_data [0:NP-1],
    output wire              tx_valid [0:NP-1],
    input  wire              tx_busy  [0:NP-1],
    // DUT -> endpoint
    input  wire [287:0]      rx_data [0:NP-1],
    input  wire              rx_valid [0:NP-1],
    output wire              rx_busy  [0:NP-1]
);
    localparam integer CAPW = 32 + 8 + 288;

    // ---------------- controls, written by Python through VPI ----------------
    // (a bank with no endpoint present, a machine's, reads none of the sources' controls)
    /* verilator lint_off UNUSEDSIGNAL */
    reg [31:0] seed         = 32'd1;
    reg        reseed       = 1'b0;   // toggled by the bench with every configure: patterns restart from seed
    reg [1:0]  idle_mode    = 2'd0;
    reg [7:0]  idle_level   = 8'd0;
    reg [1:0]  bp_mode      = 2'd0;
    reg [7:0]  bp_level     = 8'd0;
    reg        start        = 1'b0;
    reg        load_req     = 1'b0;
    reg        dump_req     = 1'b0;
    reg [31:0] expect_total = 32'd0;
    reg [31:0] inj_total    = 32'd0;
    reg [31:0] quiet_limit  = 32'd10000;
    reg [2:0]  violate      = 3'd0;
    reg [2:0]  fault_mode   = 3'd0;
    reg [31:0] fault_index  = 32'd0;
    reg [7:0]  fault_port   = 8'd0;
    reg        cap_clear    = 1'b0;
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------- status, read by Python ----------------
    /* verilator lint_off UNUSEDSIGNAL */
    reg        load_ack = 1'b0;
    reg        dump_ack = 1'b0;
    reg [31:0] cycle;
    reg [31:0] inj_count;
    reg [31:0] cap_count;      // records written (faults included)
    reg [31:0] last_event;     // cycle of the last injection or capture
    reg        done;
    reg        stalled;
    /* verilator lint_on UNUSEDSIGNAL */

    // ---------------- storage ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // read by the sources only: none in a bank with no endpoint present
    reg [287:0]  inj_mem  [0:INJ_DEPTH-1];
    reg [63:0]   inj_meta [0:NP-1];
    /* verilator lint_on UNUSEDSIGNAL */
    reg [31:0]   inj_time [0:INJ_DEPTH-1];
    reg [CAPW-1:0] cap_mem [0:CAP_DEPTH-1];
    reg [31:0]   busy_cnt [0:NP-1];

    integer i;
    always @(posedge load_req) begin
        $readmemh("inj_meta.hex", inj_meta);
        if (inj_total != 32'd0) $readmemh("inj.hex", inj_mem, 0, inj_total - 1);
        for (i = 0; i < INJ_DEPTH; i = i + 1) inj_time[i] = 32'hffff_ffff;
        load_ack = 1'b1;
    end
    always @(negedge load_req) load_ack = 1'b0;

    always @(posedge dump_req) begin
        if (cap_count != 32'd0) $writememh("cap.hex", cap_mem, 0, cap_count - 1);
        else $writememh("cap.hex", cap_mem, 0, 0);
        if (inj_total != 32'd0) $writememh("inj_time.hex", inj_time, 0, inj_total - 1);
        $writememh("busy.hex", busy_cnt);
        dump_ack = 1'b1;
    end
    always @(negedge dump_req) dump_ack = 1'b0;

    // ---------------- sources ----------------
    // Per-port status as arrays, not vectors: Icarus rebuilds a whole vector for
    // every bit driver, which cost more than the mesh itself.
    wire          src_done [0:NP-1];
    genvar e;
    generate
        for (e = 0; e < NP; e = e + 1) begin : g_ep
          if (PRESENT[e]) begin : g_src
            reg         valid_r;
            reg [287:0] data_r;
            reg [31:0]  ptr;
            reg         violated;
            reg         hold_seen;
            reg         started;
            wire [31:0] base  = inj_meta[e][63:32];
            wire [31:0] limit = inj_meta[e][63:32] + inj_meta[e][31:0];
            wire idle;
            wire stall_rx;
            tb_pattern #(.SALT(32'h1000 + e)) u_idle (
                .clk(clk), .resetn(resetn), .reseed(reseed), .seed(seed), .mode(idle_mode), .level(idle_level),
                .stall(idle));
            tb_pattern #(.SALT(32'h2000 + e)) u_bp (
                .clk(clk), .resetn(resetn), .reseed(reseed), .seed(seed), .mode(bp_mode), .level(bp_level),
                .stall(stall_rx));

            // Next flit to offer after `p` (if any and not idling).
            wire [31:0] ptr_next = ptr + 32'd1;
            always @(posedge clk) begin
                if (!resetn || !start) begin
                    valid_r   <= 1'b0;
                    started   <= 1'b0;
                    violated  <= 1'b0;
                    hold_seen <= 1'b0;
                end else if (!started) begin
                    ptr       <= base;          // first cycle of a run: meta is loaded
                    started   <= 1'b1;
                end else begin
                    hold_seen <= valid_r && tx_busy[e];
                    if (valid_r && !tx_busy[e]) begin
                        inj_time[ptr] <= cycle;
                        ptr <= ptr_next;
                        if (ptr_next < limit && !idle) begin
                            data_r  <= inj_mem[ptr_next];
                            valid_r <= 1'b1;
                        end else begin
                            valid_r <= 1'b0;
                        end
                    end else if (valid_r && hold_seen && !violated && violate == 3'd1) begin
                        valid_r  <= 1'b0;           // withdraw a held flit: a protocol violation
                        violated <= 1'b1;
                    end else if (valid_r && hold_seen && !violated && violate == 3'd2) begin
                        data_r[0] <= ~data_r[0];    // change a held flit: a protocol violation
                        violated  <= 1'b1;
                    end else if (!valid_r && ptr < limit && !idle) begin
                        data_r  <= inj_mem[ptr];
                        valid_r <= 1'b1;
                    end
                end
            end
            assign tx_valid[e] = valid_r;
            assign tx_data[e]  = data_r;
            assign rx_busy[e]  = stall_rx;
            assign src_done[e] = started && !valid_r && ptr >= limit;
          end else begin : g_absent
            // No endpoint: never offers, always busy (so nothing is captured), done. No process at all,
            // so an absent port costs the simulator nothing per cycle.
            assign tx_valid[e] = 1'b0;
            assign tx_data[e]  = 288'd0;
            assign rx_busy[e]  = 1'b1;
            assign src_done[e] = 1'b1;
          end
        end
    endgenerate

    // ---------------- capture ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // its old cycle stamp is replaced on release
    reg [CAPW-1:0] held_rec;
    /* verilator lint_on UNUSEDSIGNAL */
    reg            held_vld;
    reg [7:0]      held_port;
    reg [31:0]     nth;        // captures seen so far (before faults)
    reg [CAPW-1:0] rec;
    reg [31:0]     wp;
    reg [31:0]     seen;       // index of the capture being recorded
    reg [31:0]     n_inj;      // injections this cycle
    reg            all_done;
    integer p;
    always @(posedge clk) begin
        if (!resetn) begin
            cycle      <= 32'd0;
            inj_count  <= 32'd0;
            cap_count  <= 32'd0;
            last_event <= 32'd0;
            nth        <= 32'd0;
            held_vld   <= 1'b0;
            done       <= 1'b0;
            stalled    <= 1'b0;
            for (p = 0; p < NP; p = p + 1) busy_cnt[p] = 32'd0;
        end else begin
            cycle <= cycle + 32'd1;
            wp = cap_count;
            seen = nth;
            n_inj = 32'd0;
            all_done = 1'b1;
            // an absent port never offers and is always busy, so a bank with none present skips the walk
            for (p = 0; p < ((PRESENT == 64'd0) ? 0 : NP); p = p + 1) begin
                if (tx_valid[p] && !tx_busy[p]) n_inj = n_inj + 32'd1;
                if (tx_valid[p] && tx_busy[p]) busy_cnt[p] = busy_cnt[p] + 32'd1;
                if (!src_done[p]) all_done = 1'b0;
                if (rx_valid[p] && !rx_busy[p]) begin
                    rec = {cycle, p[7:0], rx_data[p]};
                    if (fault_mode != 3'd0 && seen == fault_index) begin
                        case (fault_mode)
                            3'd1: ;                                   // drop
                            3'd2: begin cap_mem[wp] = rec; cap_mem[wp+1] = rec; wp = wp + 2; end
                            3'd3: begin cap_mem[wp] = {cycle, fault_port, rx_data[p]}; wp = wp + 1; end
                            3'd4: begin held_rec = rec; held_vld <= 1'b1; held_port = p[7:0]; end
                            3'd5: begin cap_mem[wp] = rec ^ {{(CAPW-1){1'b0}}, 1'b1}; wp = wp + 1; end
                            default: begin cap_mem[wp] = rec; wp = wp + 1; end
                        endcase
                    end else begin
                        cap_mem[wp] = rec;
                        wp = wp + 1;
                        if (held_vld && held_port == p[7:0]) begin
                            // Stamped now: a reordered flit really arrives late.
                            cap_mem[wp] = {cycle, held_rec[CAPW-33:0]};
                            wp = wp + 1;
                            held_vld <= 1'b0;
                        end
                    end
                    seen = seen + 32'd1;
                end
            end
            if (!start && cap_clear) begin      // nothing is captured while start is low
                nth       <= 32'd0;
                cap_count <= 32'd0;
                inj_count <= 32'd0;
                for (p = 0; p < NP; p = p + 1) busy_cnt[p] = 32'd0;
            end else begin
                nth       <= seen;
                cap_count <= wp;
                inj_count <= inj_count + n_inj;
            end
            if (seen != nth || n_inj != 32'd0 || !start || unit_busy) last_event <= cycle;
            // A run ends with start falling: done and stalled clear for the next
            // run, which may follow without a reset (captures keep accumulating).
            if (!start) begin
                done    <= 1'b0;
                stalled <= 1'b0;
            end else begin
                if (all_done && wp >= expect_total && !held_vld) done <= 1'b1;
                if (!done && cycle - last_event > quiet_limit) stalled <= 1'b1;
            end
        end
    end
endmodule
/* verilator lint_on BLKSEQ */
`default_nettype wire
