// The memory agent's DRAM port: the path between the agent's engines (rtl/mag/mag.v) and the
// word-level DRAM (rtl/mag/mag_dram.v), timed as upstream's (KohakuTPU at 7703ee8).
//
// Upstream puts an AXI4 master in each memory port (src/kohakuaccel/mas/core/mag_mem_port.v), a
// per-requester adapter that folds its AR and AW onto one request (mag.v 1075-1118), the DRAM port
// (mag_dram_port.v: registered request vector, captured grant, async FIFOs for AR, AW, W, B and R,
// a registered B pulse) and a 2-entry skid on the returning R data (mag_mem_port.v 344-353), and
// behind all of it the verification AXI RAM (src/kohakuaccel/verif/axi_ram.v). This module models
// that path cycle for cycle as the agent uses it (one requester, one burst per channel at a time):
//
//   read:  the engine's AR register set at edge T is presented to the adapter; the request is
//          registered (T+1), granted and captured (T+2; ar_ready is high in the cycle before, so
//          the engine clears its register at T+2), pushed into the AR FIFO (T+3), reaches the RAM
//          AR_FIFO_LAT edges later (handshake h = T+3+AR_FIFO_LAT); the RAM reads word k of the
//          burst at h+k (one a cycle, first beat the cycle after the handshake: here one DRAM word
//          request per cycle to mag_dram, whose RD_LATENCY 1 is that beat); each beat enters the
//          R FIFO the edge after it is valid, leaves it R_FIFO_LAT edges later into the skid, and
//          is offered to the engine (r_valid) the cycle after. So a beat the RAM returns at edge w
//          is consumable at edge w+R_FIFO_LAT+1, and a single-beat read taken at T is consumed at
//          T+5+AR_FIFO_LAT+R_FIFO_LAT (+ RD_LATENCY-1 for a slower DRAM).
//   write: the engine's AW register follows the same adapter and grant path into the AW FIFO
//          (edge P); the write-select FIFO (1 cycle) starts the W mux at P+1, the agent's beats
//          enter the W FIFO from P+2 one a cycle; the RAM takes AW at P+AW_FIFO_LAT (the same
//          latency as AR: AR_FIFO_LAT), W from the cycle after AW (never in the AW cycle) and as
//          each beat leaves the W FIFO (W_FIFO_LAT), one a cycle; B is valid the cycle after the
//          last W beat and taken at once (bready = B FIFO not full), leaves the B FIFO B_FIFO_LAT
//          edges later, and the port's registered pulse b_valid is high the cycle after that.
//          The write data itself is not carried here: the agent writes each word into the DRAM as
//          it arrives (mag.v), so only the transaction's time passes through this module.
//
// The adapter (upstream mag.v 1085-1118): when AR and AW are both offered at first offer the write
// wins, and the choice is held until granted (sel_h/sel_w), so a read offered beside a write waits
// for the write's grant (2 cycles). The RAM serves one transaction per channel at a time and takes
// the next AR the cycle after a burst's last beat (axi_ram.v R1, R4): the agent never presents a
// second read burst before the last beat of the previous one has reached it, which is later, so
// that rule never binds; the monitor below checks it (and the same for writes), so it cannot be
// violated silently. The R FIFO (R_FIFO_DEPTH) plus the 2-entry skid is where beats wait while the
// engine holds r_ready low (upstream's m_rready = R FIFO not full): the DRAM is asked for a word
// only while fewer than R_FIFO_DEPTH + 2 words are requested and not yet consumed.
//
// Timing facts (named parameters; defaults are upstream's values):
//   AR_FIFO_LAT, R_FIFO_LAT, W_FIFO_LAT, B_FIFO_LAT: the async FIFO stand-ins' latency on the AR
//     (also AW), R, W and B crossings (src/kohakuaccel/common/async_fifo.v, xpm_fifo_async FWFT,
//     CDC_SYNC_STAGES 2). Not readable from upstream's repository; AR + R = 6 is inferred from
//     the measured 12-cycle plain-read period of upstream's fused4 (6 + AR + R), and the split 3 + 3
//     (and W = B = 3) is the natural one; the write side is derived, not measured. 1 gives a
//     faster port (a plain-read period of 8).
//   R_FIFO_DEPTH: the R FIFO (mag_dram_port.v RQ = 64).
//
// Parameters are checked at elaboration (ERROR line, $finish): every latency 1..64, R_FIFO_DEPTH
// 1..1024. Assertion monitors (ERROR line, sticky mon_err): a read or write burst presented while
// the previous one on its channel is still in flight; a burst of 0 or more than 256 beats; a DRAM
// word returned with none requested.
`default_nettype none
`timescale 1ns/1ps
module mag_port #(
    parameter integer AR_FIFO_LAT  = 3,     // AR and AW async FIFOs (mag_dram_port.v 230-250)
    parameter integer R_FIFO_LAT   = 3,     // R async FIFO (mag_dram_port.v 338-347)
    parameter integer W_FIFO_LAT   = 3,     // W async FIFO (mag_dram_port.v 277-283)
    parameter integer B_FIFO_LAT   = 3,     // B async FIFO and the registered pulse (mag_dram_port.v 318-336)
    parameter integer R_FIFO_DEPTH = 64     // R FIFO entries (mag_dram_port.v RQ)
) (
    input  wire         clk,
    input  wire         resetn,
    // read burst (the engine's AR register, held until ar_ready)
    input  wire         ar_valid,
    input  wire [34:0]  ar_addr,        // first DRAM word
    input  wire [8:0]   ar_beats,       // 1..256
    output wire         ar_ready,
    // write burst (the engine's AW register, held until aw_ready)
    input  wire         aw_valid,
    input  wire [8:0]   aw_beats,       // 1..256
    output wire         aw_ready,
    // read beats, in order, after the skid
    output wire         r_valid,
    output wire [255:0] r_data,
    input  wire         r_ready,
    // write response: a one-cycle pulse per write
    output reg          b_valid,
    // the DRAM's word read port (mag_dram.v)
    output wire         mem_rd_req,
    output wire [34:0]  mem_rd_addr,
    input  wire         mem_rd_ready,
    input  wire         mem_rd_valid,
    input  wire [255:0] mem_rd_data,
    output wire         mon_err
);
    generate
        if (AR_FIFO_LAT < 1 || AR_FIFO_LAT > 64 || R_FIFO_LAT < 1 || R_FIFO_LAT > 64 || W_FIFO_LAT < 1
            || W_FIFO_LAT > 64 || B_FIFO_LAT < 1 || B_FIFO_LAT > 64 || R_FIFO_DEPTH < 1
            || R_FIFO_DEPTH > 1024) begin : g_bad_param
            initial begin
                $fatal(1, "mag_port %m: AR_FIFO_LAT=%0d R_FIFO_LAT=%0d W_FIFO_LAT=%0d B_FIFO_LAT=%0d R_FIFO_DEPTH=%0d: need every FIFO latency in 1..64 (a FIFO holds a word at least one edge) and R_FIFO_DEPTH in 1..1024",
                         AR_FIFO_LAT, R_FIFO_LAT, W_FIFO_LAT, B_FIFO_LAT, R_FIFO_DEPTH);
            end
        end
    endgenerate

    localparam integer LA = (AR_FIFO_LAT < 1) ? 1 : AR_FIFO_LAT;
    localparam integer LR = (R_FIFO_LAT < 1) ? 1 : R_FIFO_LAT;
    localparam integer LW = (W_FIFO_LAT < 1) ? 1 : W_FIFO_LAT;
    localparam integer LB = (B_FIFO_LAT < 1) ? 1 : B_FIFO_LAT;
    localparam integer RBUF = R_FIFO_DEPTH + 2;            // R FIFO + the skid's two entries
    localparam integer RCW = $clog2(RBUF + 1);
    // From the AW FIFO write (P) to the B pulse's edge: the first W beat the RAM takes is at
    // max(P + LA + 1, P + 2 + LW), the last L beats later, B at the next edge, out of the B FIFO
    // LB edges after that (b_valid set at that edge).
    localparam integer W_FIRST = (LA + 1 > 2 + LW) ? LA + 1 : 2 + LW;
    localparam [11:0]  B_BASE = W_FIRST[11:0] + 12'd1 + LB[11:0];     // + (beats - 1)
    localparam [6:0]   LA7 = LA[6:0];

    // ---------------------------------------------------------------- adapter + grant
    // One requester: the write wins at first offer and the choice holds until the grant.
    reg  sel_h;
    reg  sel_w;
    wire use_w   = sel_h ? sel_w : aw_valid;
    wire aw_r    = aw_valid && use_w;
    wire ar_r    = ar_valid && !use_w;
    wire q_valid = aw_r || ar_r;
    reg  rd_req_r, wr_req_r, rd_gnt, wr_gnt;     // registered requests; one-cycle re-grant block
    wire rd_take = rd_req_r && !rd_gnt && ar_r;
    wire wr_take = wr_req_r && !wr_gnt && aw_r;
    wire q_ready = rd_take || wr_take;
    assign ar_ready = rd_take;
    assign aw_ready = wr_take;
    reg        s1_rv, s1_wv;                     // captured grants, pushed into the AR/AW FIFO next
    reg [34:0] s1_addr;
    reg [8:0]  s1_rbeats, s1_wbeats;

    always @(posedge clk) begin
        if (!resetn) begin
            sel_h    <= 1'b0;
            sel_w    <= 1'b0;
            rd_req_r <= 1'b0;
            wr_req_r <= 1'b0;
            rd_gnt   <= 1'b0;
            wr_gnt   <= 1'b0;
            s1_rv    <= 1'b0;
            s1_wv    <= 1'b0;
        end else begin
            if (q_valid && !q_ready) begin
                if (!sel_h) sel_w <= aw_valid;
                sel_h <= 1'b1;
            end else begin
                sel_h <= 1'b0;
            end
            rd_req_r <= ar_r;
            wr_req_r <= aw_r;
            rd_gnt   <= rd_take;
            wr_gnt   <= wr_take;
            s1_rv    <= rd_take;
            s1_wv    <= wr_take;
            if (rd_take) begin
                s1_addr   <= ar_addr;
                s1_rbeats <= ar_beats;
            end
            if (wr_take) s1_wbeats <= aw_beats;
        end
    end

    // ---------------------------------------------------------------- read channel
    // A pushed AR waits LA edges (its FIFO), then the RAM reads one word a cycle (one DRAM request
    // each) while the R FIFO and skid have room for every word asked and not yet consumed.
    reg         ar_v;            // a burst at or on its way to the RAM
    reg  [6:0]  ar_t;            // edges left before the RAM's handshake
    reg  [34:0] ar_word;
    reg  [8:0]  ar_left;
    reg  [RCW-1:0] r_out;        // words asked of the DRAM, not yet consumed by the engine
    reg  [RCW-1:0] r_fly;        // words asked of the DRAM, not yet returned by it
    reg         rd_err;
    wire        r_take = r_valid && r_ready;
    assign mem_rd_req  = ar_v && ar_t == 7'd0 && r_out < RBUF[RCW-1:0];
    assign mem_rd_addr = ar_word;
    wire        mem_take = mem_rd_req && mem_rd_ready;

    always @(posedge clk) begin
        if (!resetn) begin
            ar_v  <= 1'b0;
            ar_t  <= 7'd0;
            r_out <= {RCW{1'b0}};
            r_fly <= {RCW{1'b0}};
            rd_err <= 1'b0;
        end else begin
            if (s1_rv) begin
                if (ar_v || r_fly != {RCW{1'b0}}) begin
                    $display("ERROR %m t=%0t: a read burst reached the DRAM port while the previous one was still in flight (one burst per channel: axi_ram R1/R4, RD_OUT 1)", $time);
                    rd_err <= 1'b1;
                end
                if (s1_rbeats == 9'd0 || s1_rbeats > 9'd256) begin
                    $display("ERROR %m t=%0t: a read burst of %0d beats (AXI: 1..256)", $time, s1_rbeats);
                    rd_err <= 1'b1;
                end
                ar_v    <= 1'b1;
                ar_t    <= LA7 - 7'd1;
                ar_word <= s1_addr;
                ar_left <= s1_rbeats;
            end else if (ar_v && ar_t != 7'd0) begin
                ar_t <= ar_t - 7'd1;
            end else if (mem_take) begin
                ar_word <= ar_word + 35'd1;
                ar_left <= ar_left - 9'd1;
                if (ar_left == 9'd1) ar_v <= 1'b0;
            end
            r_out <= r_out + {{(RCW-1){1'b0}}, mem_take} - {{(RCW-1){1'b0}}, r_take};
            r_fly <= r_fly + {{(RCW-1){1'b0}}, mem_take} - {{(RCW-1){1'b0}}, mem_rd_valid};
            if (mem_rd_valid && r_fly == {RCW{1'b0}}) begin
                $display("ERROR %m t=%0t: the DRAM returned a word with no read outstanding", $time);
                rd_err <= 1'b1;
            end
        end
    end

    // Return: a beat valid in the cycle after the DRAM's edge enters the R FIFO at the next edge
    // (stage 0 here), is in the skid LR edges later (pushed into rbuf, whose head is the skid's
    // output the cycle after), so the engine can take it LR + 1 edges after it entered.
    reg [255:0] dl_data [0:LR-1];
    reg [LR-1:0] dl_v;
    integer k;
    always @(posedge clk) begin
        if (!resetn) begin
            dl_v <= {LR{1'b0}};
        end else if (mem_rd_valid || dl_v != {LR{1'b0}}) begin
            dl_v[0]    <= mem_rd_valid;
            dl_data[0] <= mem_rd_data;
            for (k = 1; k < LR; k = k + 1) begin
                dl_v[k]    <= dl_v[k-1];
                dl_data[k] <= dl_data[k-1];
            end
        end
    end

    wire rbuf_empty;
    /* verilator lint_off UNUSEDSIGNAL */  // never rises: r_out bounds the words asked and not consumed
    wire rbuf_full;
    /* verilator lint_on UNUSEDSIGNAL */
    wire rbuf_err;
    noc_fifo #(.WIDTH(256), .DEPTH(RBUF)) u_rbuf (
        .clk(clk), .resetn(resetn), .push(dl_v[LR-1]), .din(dl_data[LR-1]),
        .pop(r_take), .dout(r_data), .empty(rbuf_empty), .full(rbuf_full), .mon_err(rbuf_err));
    assign r_valid = !rbuf_empty;

    // ---------------------------------------------------------------- write channel
    reg        w_v;              // a write between its AW FIFO write and its B pulse
    reg [11:0] w_t;              // edges left before b_valid is set
    reg        wr_err;
    always @(posedge clk) begin
        if (!resetn) begin
            wr_err  <= 1'b0;
            w_v     <= 1'b0;
            w_t     <= 12'd0;
            b_valid <= 1'b0;
        end else begin
            b_valid <= 1'b0;
            if (s1_wv) begin
                if (w_v) begin
                    $display("ERROR %m t=%0t: a write burst reached the DRAM port while the previous one had not had its B (one write at a time: axi_ram R1/R6)", $time);
                    wr_err <= 1'b1;
                end
                if (s1_wbeats == 9'd0 || s1_wbeats > 9'd256) begin
                    $display("ERROR %m t=%0t: a write burst of %0d beats (AXI: 1..256)", $time, s1_wbeats);
                    wr_err <= 1'b1;
                end
                w_v <= 1'b1;
                w_t <= B_BASE + {3'd0, s1_wbeats} - 12'd1;
            end else if (w_v) begin
                if (w_t == 12'd1) begin
                    w_v     <= 1'b0;
                    b_valid <= 1'b1;
                end
                w_t <= w_t - 12'd1;
            end
        end
    end

    assign mon_err = rd_err | wr_err | rbuf_err;
endmodule
`default_nettype wire
