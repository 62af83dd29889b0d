// Latency-throughput bench of the mesh (tb/noc/sweep.py): traffic made in Verilog, no cocotb.
//
// Every Local endpoint of an NX x NY noc_mesh is a source and a sink. Each cycle a
// source creates a flit with probability LOAD/65536 (its own xorshift32 generator),
// chooses its destination by the pattern and puts {destination, creation cycle} in
// its source queue (QDEPTH entries; a flit created while the queue is full is
// counted as refused at the source, so the offered load stays what was asked);
// the queue head is offered on the link and leaves when the mesh takes it (valid
// and not busy at an edge, the protocol's handshake). Sinks never stall.
//   pattern 0 uniform:   any other node, equally likely;
//   pattern 1 transpose: (x, y) -> (y, x); nodes on the diagonal send nothing;
//   pattern 2 hotspot:   with probability HOT_FRAC/65536 the node HOT, else uniform.
// A flit carries its creation cycle, source and sequence number in its payload.
// Cycles [WARMUP, WARMUP+MEASURE) are the window: flits created in it are timed
// (latency = arrival - creation, source queueing included) and flits arriving in
// it are counted per source (throughput). After the window the sources stop
// creating and the bench drains until every created flit has arrived (or DRAIN
// cycles pass, which is an error). Every arrival is checked: at the endpoint its
// header names, its payload intact, in order per source and destination, once.
// Output, one line each:
//   LOAD RESULT pattern=P load=L created=N refused=N delivered=N lat_n=N lat_sum=N lat_max=N
//        in_flight=N errors=N cycles=N
//   LOAD SRC s sent=N delivered=N        (every source; delivered = arrivals in the window)
//   LOAD HOP h n=N sum=N                 (timed flits by hop count, hops = |dx| + |dy|)
//   LOAD PASS / LOAD FAIL <first error>
// Plusargs: +load=N (0..65536) +pattern=N +hot=N +hot_frac=N +warmup=N +measure=N +drain=N +seed=N;
// +corrupt_at=N flips a payload bit of the N-th arrival before it is checked (the checker's self-test).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
// Bench code: the generator and the books are kept with blocking assignments in one clocked
// process, in order (BLKSEQ, waived for the module).
/* verilator lint_off BLKSEQ */
module mesh_load_tb #(
    parameter integer NX = 4,
    parameter integer NY = 4,
    parameter integer FIFO_DEPTH = 32,
    parameter integer QDEPTH = 1024
) ();
    localparam integer NR = NX*NY;
    localparam integer NP = NR + 2*NX + 2*NY;
    localparam integer MAXHOP = NX + NY - 2;
    localparam [63:0]  NR_M1 = {32'd0, NR[31:0] - 32'd1};
    initial begin
        if (NX < 1 || NY < 1 || NX > 14 || NY > 14 || QDEPTH < 2 || (QDEPTH & (QDEPTH - 1)) != 0)
            $fatal(1, "mesh_load_tb %m: NX=%0d NY=%0d QDEPTH=%0d: need 1 <= NX, NY <= 14 and QDEPTH a power of two >= 2", NX, NY, QDEPTH);
    end

    reg clk = 1'b0;
    reg resetn = 1'b0;
    always #5 clk = ~clk;

    reg  [287:0] in_data  [0:NP-1];
    reg          in_valid [0:NP-1];
    wire         in_busy  [0:NP-1];
    wire [287:0] out_data  [0:NP-1];
    wire         out_valid [0:NP-1];
    reg          out_busy  [0:NP-1];
    wire         mon_err;

    noc_mesh #(.NX(NX), .NY(NY), .FIFO_DEPTH(FIFO_DEPTH), .EDGE_MASK(64'h0)) u_mesh (
        .clk(clk), .resetn(resetn),
        .ep_in_data(in_data), .ep_in_valid(in_valid), .ep_in_busy(in_busy),
        .ep_out_data(out_data), .ep_out_valid(out_valid), .ep_out_busy(out_busy),
        .mon_err(mon_err));

    // ---------------- run parameters ----------------
    integer load, pattern, hot, hot_frac, warmup, measure, drain, seed, corrupt_at;
    integer cycle;
    reg     creating;

    // ---------------- per-source state ----------------
    reg [31:0]  rng      [0:NR-1];
    integer     q_dst    [0:NR*QDEPTH-1];
    reg [31:0]  q_time   [0:NR*QDEPTH-1];
    integer     q_head   [0:NR-1];
    integer     q_count  [0:NR-1];
    integer     seq_out  [0:NR-1];          // next sequence number a source puts on the link
    integer     sent     [0:NR-1];
    integer     got_src  [0:NR-1];          // arrivals in the window, by source
    integer     last_seq [0:NR*NR-1];       // per (source, destination): last sequence number seen
    integer     hop_n    [0:MAXHOP];
    integer     hop_sum  [0:MAXHOP];

    integer created, refused, delivered, arrived_all, lat_n, lat_sum, lat_max, errors;
    reg [8*96-1:0] first_error;

`include "tb_xorshift.vh"

    // A uniform node other than `src` from a random word.
    function integer other_node(input integer src, input [31:0] r);
        /* verilator lint_off UNUSEDSIGNAL */  // the product's high word is the draw
        reg [63:0] prod;
        /* verilator lint_on UNUSEDSIGNAL */
        integer    d;
        begin
            prod = {32'd0, r} * NR_M1;
            d = prod[63:32];
            other_node = (d >= src) ? d + 1 : d;
        end
    endfunction

    function integer hops(input integer a, input integer b);
        integer dx, dy;
        begin
            dx = (a % NX) - (b % NX);
            dy = (a / NX) - (b / NX);
            hops = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
        end
    endfunction

    task note_error(input [8*96-1:0] what);
        begin
            if (errors == 0) first_error = what;
            errors = errors + 1;
        end
    endtask

    // ---------------- sources and sinks, one clocked process ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // indices: only their low bits address a table
    integer s, d, slot, lat, src, sq, tmp;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [31:0] r;
    reg        wants;
    /* verilator lint_off UNUSEDSIGNAL */  // the header fields other than dst
    reg [287:0] f;
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        if (resetn) begin
            // 1. arrivals (out_busy is always 0: every valid output is taken at this edge)
            for (d = 0; d < NR; d = d + 1) begin
                if (out_valid[d]) begin
                    f = out_data[d];
                    if (arrived_all + 1 == corrupt_at) f[100] = ~f[100];  // checker self-test
                    src = f[63:32];
                    sq  = f[95:64];
                    arrived_all = arrived_all + 1;
                    if (src < 0 || src >= NR) begin
                        note_error("arrival with a source field outside the mesh");
                    end else begin
                        if ({28'd0, f[`NOC_DST_X]} != (d % NX) + 1 || {28'd0, f[`NOC_DST_Y]} != (d / NX) + 1)
                            note_error("a flit arrived at an endpoint other than its destination");
                        if (f[255:96] != {5{32'hA5A5_5A5A}})
                            note_error("a flit's payload changed on the way");
                        if (sq <= last_seq[src * NR + d])
                            note_error("a flit arrived out of order or twice (per source and destination)");
                        last_seq[src * NR + d] = sq;
                        lat = cycle - f[31:0];
                        if (cycle >= warmup && cycle < warmup + measure) begin
                            delivered = delivered + 1;
                            got_src[src] = got_src[src] + 1;
                        end
                        if (f[31:0] >= warmup && f[31:0] < warmup + measure) begin
                            lat_n = lat_n + 1;
                            lat_sum = lat_sum + lat;
                            if (lat > lat_max) lat_max = lat;
                            tmp = hops(src, d);
                            hop_n[tmp] = hop_n[tmp] + 1;
                            hop_sum[tmp] = hop_sum[tmp] + lat;
                        end
                    end
                end
            end
            for (s = 0; s < NR; s = s + 1) begin
                // 2. the link: the head left if it was offered and not refused at this edge
                if (in_valid[s] && !in_busy[s]) begin
                    q_head[s] = (q_head[s] + 1) % QDEPTH;
                    q_count[s] = q_count[s] - 1;
                    seq_out[s] = seq_out[s] + 1;
                    sent[s] = sent[s] + 1;
                end
                // 3. creation
                r = xorshift(rng[s]);
                rng[s] = r;
                wants = creating && ({16'd0, r[31:16]} < load);
                if (wants && pattern == 1 && (s % NX) == (s / NX)) wants = 1'b0;  // transpose: the diagonal is silent
                if (wants) begin
                    r = xorshift(rng[s]);
                    rng[s] = r;
                    case (pattern)
                        1: d = (s % NX) * NX + (s / NX);
                        2: begin
                               if (s != hot && {16'd0, r[15:0]} < hot_frac) d = hot;
                               else begin
                                   r = xorshift(rng[s]);
                                   rng[s] = r;
                                   d = other_node(s, r);
                               end
                           end
                        default: d = other_node(s, r);
                    endcase
                    if (q_count[s] == QDEPTH) begin
                        refused = refused + 1;
                    end else begin
                        slot = s * QDEPTH + (q_head[s] + q_count[s]) % QDEPTH;
                        q_dst[slot] = d;
                        q_time[slot] = cycle;
                        q_count[s] = q_count[s] + 1;
                        created = created + 1;
                    end
                end
                // 4. offer the head for the next edge
                if (q_count[s] != 0) begin
                    slot = s * QDEPTH + q_head[s];
                    in_valid[s] <= 1'b1;
                    in_data[s]  <= {4'((q_dst[slot] % NX) + 1), 4'((q_dst[slot] / NX) + 1),
                                    4'((s % NX) + 1), 4'((s / NX) + 1), 4'd0, 8'd0, 1'b1, 3'd0,
                                    {5{32'hA5A5_5A5A}}, 32'(seq_out[s]), 32'(s), q_time[slot]};
                end else begin
                    in_valid[s] <= 1'b0;
                end
            end
            if (mon_err) note_error("a mesh monitor raised mon_err");
            cycle = cycle + 1;
        end
    end

    // ---------------- the run ----------------
    integer i;
    initial begin
        if (!$value$plusargs("load=%d", load)) load = 0;
        if (!$value$plusargs("pattern=%d", pattern)) pattern = 0;
        if (!$value$plusargs("hot=%d", hot)) hot = 0;
        if (!$value$plusargs("hot_frac=%d", hot_frac)) hot_frac = 0;
        if (!$value$plusargs("warmup=%d", warmup)) warmup = 1000;
        if (!$value$plusargs("measure=%d", measure)) measure = 4000;
        if (!$value$plusargs("drain=%d", drain)) drain = 20000;
        if (!$value$plusargs("seed=%d", seed)) seed = 1;
        if (!$value$plusargs("corrupt_at=%d", corrupt_at)) corrupt_at = 0;
        if (load < 0 || load > 65536 || pattern < 0 || pattern > 2 || hot < 0 || hot >= NR
            || hot_frac < 0 || hot_frac > 65536 || (pattern == 1 && NX != NY)) begin
            $display("LOAD FAIL bad plusargs: load=%0d (0..65536) pattern=%0d (0..2) hot=%0d (0..%0d) hot_frac=%0d (0..65536); transpose needs NX == NY",
                     load, pattern, hot, NR - 1, hot_frac);
            $finish;
        end
        cycle = 0; created = 0; refused = 0; delivered = 0; arrived_all = 0;
        lat_n = 0; lat_sum = 0; lat_max = 0; errors = 0; first_error = "";
        for (i = 0; i < NP; i = i + 1) begin
            in_valid[i] = 1'b0;
            in_data[i] = 288'd0;
            out_busy[i] = 1'b0;
        end
        for (i = 0; i < NR; i = i + 1) begin
            rng[i] = 32'h9E37_79B9 ^ (seed * 32'd2654435761) ^ (i * 32'd40503 + 1);
            q_head[i] = 0; q_count[i] = 0; seq_out[i] = 1; sent[i] = 0; got_src[i] = 0;
        end
        for (i = 0; i < NR * NR; i = i + 1) last_seq[i] = 0;
        for (i = 0; i <= MAXHOP; i = i + 1) begin hop_n[i] = 0; hop_sum[i] = 0; end
        creating = 1'b1;
        repeat (8) @(posedge clk);
        resetn = 1'b1;
        wait (cycle >= warmup + measure);
        creating = 1'b0;
        wait (arrived_all == created || cycle >= warmup + measure + drain);
        if (arrived_all != created) note_error("the mesh did not deliver every created flit within the drain bound");
        repeat (2) @(posedge clk);
        $display("LOAD RESULT pattern=%0d load=%0d created=%0d refused=%0d delivered=%0d lat_n=%0d lat_sum=%0d lat_max=%0d in_flight=%0d errors=%0d cycles=%0d",
                 pattern, load, created, refused, delivered, lat_n, lat_sum, lat_max, created - arrived_all, errors, cycle);
        for (i = 0; i < NR; i = i + 1) $display("LOAD SRC %0d sent=%0d delivered=%0d", i, sent[i], got_src[i]);
        for (i = 0; i <= MAXHOP; i = i + 1) $display("LOAD HOP %0d n=%0d sum=%0d", i, hop_n[i], hop_sum[i]);
        if (errors == 0) $display("LOAD PASS");
        else $display("LOAD FAIL %0d errors, the first: %0s", errors, first_error);
        $finish;
    end
endmodule
/* verilator lint_on BLKSEQ */
`default_nettype wire
