// Bench top for ipcq_mesh: one seeded traffic generator per PE (every packet to a
// hashed neighbour direction, word by word, holding each word until taken) and
// one checking popper per (PE, in-direction), all in Verilog so Python only sets
// the controls, raises start and awaits done/stalled (a handful of awaits).
// The traffic functions mirror models/ahbm/ipcq.py bit for bit.
//
// Controls (set by Python before start): seed, npkt (packets per PE), idle/bp
// stall patterns (tb_pattern modes), fault: 0 none; 1 PE 0 ignores push_ready
// (treats a held word as taken); 2 PE 0's E-queue popper pops while empty;
// 3 PE 0 marks `last` on every header (framing disagrees with LEN); 4 PE 0
// offers a word towards North, where it has no neighbour.
`default_nettype none
`timescale 1ns/1ps
/* verilator lint_off DECLFILENAME */  // generator and checker live beside their only top

// The bench traffic functions (models/ahbm/ipcq.py mirrors them), as a macro so
// the generator and the checker share one text.
`define IPCQ_TRAFFIC_FUNCS \
    function automatic [31:0] mix32(input [31:0] x); \
        reg [31:0] a, b, c, m; \
        begin \
            a = x ^ (x << 13); b = a ^ (a >> 17); c = b ^ (b << 5); \
            m = c * 32'h9E3779B1; mix32 = m ^ (m >> 16); \
        end \
    endfunction \
    function automatic [1:0] choose_dir(input [31:0] sd, input [7:0] src, input [15:0] kk, input [3:0] nbm); \
        reg [31:0] h; reg [1:0] d0, d1, d2, d3; \
        begin \
            h = mix32(sd ^ {8'hD1, src, kk}); \
            d0 = h[1:0]; d1 = d0 + 2'd1; d2 = d0 + 2'd2; d3 = d0 + 2'd3; \
            choose_dir = nbm[d0] ? d0 : nbm[d1] ? d1 : nbm[d2] ? d2 : d3; \
        end \
    endfunction \
    function automatic [15:0] pkt_len(input [31:0] sd, input [7:0] src, input [1:0] dd, input [15:0] sq, \
                                      input integer maxlen); \
        reg [31:0] h; \
        begin \
            h = mix32(sd ^ {4'h1, 2'b00, dd, src, sq}) % (maxlen + 1); \
            pkt_len = h[15:0]; \
        end \
    endfunction \
    function automatic [63:0] body_word(input [31:0] sd, input [7:0] src, input [1:0] dd, input [11:0] sq, \
                                        input [9:0] i); \
        reg [31:0] key; \
        begin \
            key = sd ^ {src, dd, sq, i}; \
            body_word = {mix32(key), mix32(key ^ 32'h5BD1E995)}; \
        end \
    endfunction


module ipcq_tgen #(
    parameter integer SRC    = 0,
    parameter [3:0]   NBM    = 4'hF,
    parameter integer MAXLEN = 12
) (
    input  wire        clk,
    input  wire        resetn,
    input  wire        start,
    input  wire [31:0] seed,
    input  wire [11:0] npkt,
    input  wire        idle,
    input  wire        fault_ignore,
    input  wire        fault_frame,
    output wire [3:0]  push_valid,
    input  wire [3:0]  push_ready,
    output reg  [63:0] push_data,
    output reg         push_last,
    output wire        done
);
    /* verilator lint_off UNUSEDSIGNAL */  // hash bits beyond the field
    `IPCQ_TRAFFIC_FUNCS
    /* verilator lint_on UNUSEDSIGNAL */

    reg [11:0] k;
    reg [11:0] seqc [0:3];
    reg [1:0]  cd;
    reg [11:0] cseq;
    reg [15:0] clen;
    reg [15:0] idx;
    reg        active;
    reg        vld;

    assign push_valid = vld ? (4'b0001 << cd) : 4'b0000;
    assign done = (k == npkt) && !active;
    wire take = vld && (push_ready[cd] || fault_ignore);

    wire [1:0]  nd = choose_dir(seed, SRC[7:0], {4'd0, k}, NBM);     // next packet's direction
    wire [11:0] ns = seqc[nd];
    wire [15:0] nl = pkt_len(seed, SRC[7:0], nd, {4'd0, ns}, MAXLEN);
    always @(posedge clk) begin
        if (!resetn) begin
            k <= 12'd0; active <= 1'b0; vld <= 1'b0; cd <= 2'd0; cseq <= 12'd0; clen <= 16'd0; idx <= 16'd0;
            seqc[0] <= 12'd0; seqc[1] <= 12'd0; seqc[2] <= 12'd0; seqc[3] <= 12'd0;
            push_data <= 64'd0; push_last <= 1'b0;
        end else if (start) begin
            if (!active) begin
                if (k != npkt) begin
                    cd <= nd; cseq <= ns; clen <= nl; idx <= 16'd0; active <= 1'b1;
                    push_data <= {16'd0, 4'd0, ns, SRC[7:0], 8'h5A, nl};
                    push_last <= (nl == 16'd0) || fault_frame;
                    vld <= !idle;
                end
            end else if (take) begin
                if (idx == clen) begin
                    seqc[cd] <= seqc[cd] + 12'd1;
                    k <= k + 12'd1;
                    active <= 1'b0;
                    vld <= 1'b0;
                end else begin
                    idx <= idx + 16'd1;
                    push_data <= body_word(seed, SRC[7:0], cd, cseq, idx[9:0]);
                    push_last <= (idx + 16'd1 == clen);
                    vld <= !idle;
                end
            end else if (!vld) begin
                vld <= !idle;
            end
        end
    end
endmodule

module ipcq_tchk #(
    parameter integer HAS    = 1,
    parameter integer SRC    = 0,   // the neighbour feeding this queue
    parameter integer SDIR   = 0,   // the direction it pushes in
    parameter integer MAXLEN = 12
) (
    input  wire        clk,
    input  wire        resetn,
    input  wire [31:0] depth,       // the queue's run-time capacity (ipcq)
    input  wire        start,
    input  wire [31:0] seed,
    input  wire        stall,
    input  wire        fault_pop,
    input  wire        pop_valid,
    output wire        pop_ready,
    input  wire [63:0] pop_data,
    input  wire        pop_last,
    input  wire        pop_avail,
    input  wire        s_valid,     // the feeding push port (status reference)
    input  wire        s_ready,
    input  wire        s_last,
    output reg  [15:0] rx_count,
    output reg  [15:0] rx_words,
    output reg  [7:0]  err_count,
    output reg  [7:0]  status_err,
    output reg  [15:0] blk_count,
    output reg         avail_seen,
    output wire        idle_q
);
    /* verilator lint_off UNUSEDSIGNAL */  // hash bits beyond the field
    `IPCQ_TRAFFIC_FUNCS
    /* verilator lint_on UNUSEDSIGNAL */

    reg        in_pkt;
    reg [11:0] exp_seq;
    reg [11:0] cseq;
    reg [15:0] clen;
    reg [15:0] idx;
    reg [15:0] words;
    reg [15:0] pk;

    assign pop_ready = fault_pop || (HAS != 0 && start && pop_valid && !stall && (in_pkt || pop_avail));
    wire got   = pop_valid && pop_ready;
    wire s_acc = s_valid && s_ready;
    wire exp_avail = (pk != 16'd0) || ({16'd0, words} == depth);
    assign idle_q = (words == 16'd0) && !in_pkt;

    wire [15:0] el = pkt_len(seed, SRC[7:0], SDIR[1:0], {4'd0, exp_seq}, MAXLEN);  // next header's LEN
    always @(posedge clk) begin
        if (!resetn) begin
            in_pkt <= 1'b0; exp_seq <= 12'd0; cseq <= 12'd0; clen <= 16'd0; idx <= 16'd0;
            words <= 16'd0; pk <= 16'd0;
            rx_count <= 16'd0; rx_words <= 16'd0; err_count <= 8'd0; status_err <= 8'd0; blk_count <= 16'd0; avail_seen <= 1'b0;
        end else begin
            words <= words + {15'd0, s_acc} - {15'd0, got};
            pk <= pk + {15'd0, s_acc && s_last} - {15'd0, got && pop_last};
            if (pop_avail != exp_avail) begin
                $display("CHKFAIL %m t=%0t: pkt_avail=%0d but %0d complete packet(s), %0d word(s) queued",
                         $time, pop_avail, pk, words);
                if (status_err != 8'hFF) status_err <= status_err + 8'd1;
            end
            if (pop_avail) avail_seen <= 1'b1;
            if (s_valid && !s_ready) blk_count <= blk_count + 16'd1;
            if (got) rx_words <= rx_words + 16'd1;
            if (got) begin
                if (!in_pkt) begin
                    if (pop_data != {16'd0, 4'd0, exp_seq, SRC[7:0], 8'h5A, el} || pop_last != (el == 16'd0)) begin
                        $display("CHKFAIL %m t=%0t: header %h last=%0d, expected src=%0d seq=%0d len=%0d",
                                 $time, pop_data, pop_last, SRC, exp_seq, el);
                        if (err_count != 8'hFF) err_count <= err_count + 8'd1;
                    end
                    exp_seq <= exp_seq + 12'd1;
                    cseq <= exp_seq; clen <= el; idx <= 16'd0;
                    in_pkt <= !pop_last;
                    if (pop_last) rx_count <= rx_count + 16'd1;
                end else begin
                    if (pop_data != body_word(seed, SRC[7:0], SDIR[1:0], cseq, idx[9:0]) ||
                        pop_last != (idx + 16'd1 == clen)) begin
                        $display("CHKFAIL %m t=%0t: body word %0d of src=%0d seq=%0d: %h last=%0d", $time,
                                 idx, SRC, cseq, pop_data, pop_last);
                        if (err_count != 8'hFF) err_count <= err_count + 8'd1;
                    end
                    idx <= idx + 16'd1;
                    in_pkt <= !pop_last;
                    if (pop_last) rx_count <= rx_count + 16'd1;
                end
            end
        end
    end
endmodule

module ipcq_harness #(
    parameter integer R      = 2,
    parameter integer C      = 4,
    parameter integer DEPTH  = 8,
    parameter integer MAXLEN = 12
) ();
    localparam integer NP = R * C;
    localparam integer NL = NP * 4;

    wire clk;
    wire resetn;
    harness_clock u_clk (.clk(clk), .resetn(resetn));

    reg        start      = 1'b0;
    reg [31:0] seed       = 32'd1;
    reg [11:0] npkt       = 12'd0;
    reg [1:0]  idle_mode  = 2'd0;
    reg [7:0]  idle_level = 8'd0;
    reg [1:0]  bp_mode    = 2'd0;
    reg [7:0]  bp_level   = 8'd0;
    reg [2:0]  fault      = 3'd0;
    reg [31:0] cfg_depth  = DEPTH;   // every queue's run-time capacity, 1..DEPTH (ipcq)

    wire [NL-1:0] push_valid;
    wire [NL-1:0] push_ready;
    wire [63:0]   push_data [0:NL-1];
    wire [NL-1:0] push_last;
    wire [NL-1:0] pop_valid;
    wire [NL-1:0] pop_ready;
    wire [63:0]   pop_data [0:NL-1];
    wire [NL-1:0] pop_last;
    wire [NL-1:0] pop_avail;

    wire [NP-1:0] gen_done;
    wire [NL-1:0] chk_idle;
    /* verilator lint_off UNUSEDSIGNAL */  // read by Python
    wire             mon_err;
    wire [NL*16-1:0] rx_count_flat;
    wire [NL*16-1:0] words_flat;
    wire [NL*8-1:0]  err_flat;
    wire [NL*8-1:0]  serr_flat;
    wire [NL*16-1:0] blk_flat;
    wire [NL-1:0]    avail_seen;
    /* verilator lint_on UNUSEDSIGNAL */

    ipcq_mesh #(.R(R), .C(C), .W(64), .DEPTH(DEPTH)) u_dut (
        .clk(clk), .resetn(resetn), .depth(cfg_depth),
        .push_valid(push_valid), .push_ready(push_ready), .push_data(push_data), .push_last(push_last),
        .pop_valid(pop_valid), .pop_ready(pop_ready), .pop_data(pop_data), .pop_last(pop_last),
        .pop_avail(pop_avail), .mon_err(mon_err));

    genvar p, d;
    generate
        for (p = 0; p < NP; p = p + 1) begin : g_pe
            localparam integer PR = p / C;
            localparam integer PC = p % C;
            localparam [3:0] NBM = {(PC > 0) ? 1'b1 : 1'b0, (PR < R - 1) ? 1'b1 : 1'b0,
                                    (PC < C - 1) ? 1'b1 : 1'b0, (PR > 0) ? 1'b1 : 1'b0};
            wire        idle;
            wire [3:0]  gvalid;
            wire [63:0] gdata;
            wire        glast;
            tb_pattern #(.SALT(32'h100 + p)) u_idle (
                .clk(clk), .resetn(resetn), .reseed(1'b0), .seed(seed), .mode(idle_mode), .level(idle_level), .stall(idle));
            ipcq_tgen #(.SRC(p), .NBM(NBM), .MAXLEN(MAXLEN)) u_gen (
                .clk(clk), .resetn(resetn), .start(start), .seed(seed), .npkt(npkt), .idle(idle),
                .fault_ignore(fault == 3'd1 && p == 0), .fault_frame(fault == 3'd3 && p == 0),
                .push_valid(gvalid), .push_ready(push_ready[p*4 +: 4]),
                .push_data(gdata), .push_last(glast), .done(gen_done[p]));
            // fault 4: PE 0 also offers a word towards North, where it has no neighbour
            assign push_valid[p*4 +: 4] = gvalid | ((fault == 3'd4 && p == 0) ? 4'b0001 : 4'b0000);
            for (d = 0; d < 4; d = d + 1) begin : g_dir
                localparam integer HAS = (NBM[d] == 1'b1) ? 1 : 0;
                localparam integer NB  = (d == 0) ? p - C : (d == 1) ? p + 1 : (d == 2) ? p + C : p - 1;
                localparam integer OPP = (d + 2) % 4;
                localparam integer SI  = (HAS != 0) ? NB * 4 + OPP : p * 4 + d;   // feeding push port
                wire stall;
                assign push_data[p*4+d] = gdata;
                assign push_last[p*4+d] = glast;
                tb_pattern #(.SALT(32'h200 + p*4 + d)) u_bp (
                    .clk(clk), .resetn(resetn), .reseed(1'b0), .seed(seed), .mode(bp_mode), .level(bp_level), .stall(stall));
                ipcq_tchk #(.HAS(HAS), .SRC((HAS != 0) ? NB : 0), .SDIR(OPP), .MAXLEN(MAXLEN)) u_chk (
                    .clk(clk), .resetn(resetn), .depth(cfg_depth), .start(start), .seed(seed), .stall(stall),
                    .fault_pop(fault == 3'd2 && p == 0 && d == 1),
                    .pop_valid(pop_valid[p*4+d]), .pop_ready(pop_ready[p*4+d]), .pop_data(pop_data[p*4+d]),
                    .pop_last(pop_last[p*4+d]), .pop_avail(pop_avail[p*4+d]),
                    .s_valid((HAS != 0) ? push_valid[SI] : 1'b0), .s_ready((HAS != 0) ? push_ready[SI] : 1'b0),
                    .s_last((HAS != 0) ? push_last[SI] : 1'b0),
                    .rx_count(rx_count_flat[(p*4+d)*16 +: 16]),
                    .rx_words(words_flat[(p*4+d)*16 +: 16]), .err_count(err_flat[(p*4+d)*8 +: 8]),
                    .status_err(serr_flat[(p*4+d)*8 +: 8]), .blk_count(blk_flat[(p*4+d)*16 +: 16]),
                    .avail_seen(avail_seen[p*4+d]), .idle_q(chk_idle[p*4+d]));
            end
        end
    endgenerate

    // ---- run control: done when every generator finished and every queue drained ----
    wire       progress = |(push_valid & push_ready) | |(pop_valid & pop_ready);
    reg [31:0] cycles;
    reg [15:0] quiet;
    reg        done;
    reg        stalled;
    always @(posedge clk) begin
        if (!resetn || !start) begin
            cycles <= 32'd0; quiet <= 16'd0; done <= 1'b0; stalled <= 1'b0;
        end else if (!done && !stalled) begin
            cycles <= cycles + 32'd1;
            quiet  <= progress ? 16'd0 : quiet + 16'd1;
            if ((&gen_done) && (&chk_idle) && !progress) done <= 1'b1;
            else if (quiet == 16'd4000) stalled <= 1'b1;
        end
    end
endmodule
`default_nettype wire
