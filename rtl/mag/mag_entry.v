// mag_entry: the memory agent's entry read engine (upstream's `rs`), its quantiser timing and the
// emit buffer; rtl/mag/mag.v instantiates it once as u_entry. mag.v owns the request queue, the
// plain read / write machine, the AR register in front of the DRAM port and the output register;
// this block decides when an entry read starts, when each entry's burst goes out, and what the
// emit buffer sends. Semantics and timing are described in mag.v's header; upstream: KohakuTPU at
// 7703ee8, src/kohakuaccel/mas/core/mag_mem_port.v 478-524, 662-933 (entry engine, quantiser
// hand-over, emit) and src/kohakutpu/transform/mx_quant.v 171-304 (QUANT_LAT).
//
// Handshakes with mag.v:
//   take        the head request is an entry read and the engine is idle (mag.v: take_rd_e);
//               the rq_* fields are the head's, decoded by mag.v (units.md M.1, M.2);
//   ar_go       the cycle a burst is to be written into mag.v's AR register: the first entry's
//               at the take, the next entry's the cycle the current one's last beat is taken;
//   fill_ready  the engine takes DRAM beats (filling an entry, not re-arming the quantiser);
//   emit_go     the emit buffer puts a word in the output register this cycle (it has the
//               register first: mag.v's plain beats and acks wait while it sends).
`default_nettype none
`timescale 1ns/1ps
module mag_entry #(
    parameter integer QUANT_LAT = 8         // checked by mag.v (1..64)
) (
    input  wire          clk,
    input  wire          resetn,
    input  wire          take,
    input  wire [31:0]   rq_dest,     // destinations {x,y}, requester first
    input  wire [1:0]    rq_npeer,
    input  wire [7:0]    rq_txn,
    input  wire [8:0]    rq_cnt,      // entries
    input  wire          rq_quant,
    input  wire          rq_blay,
    input  wire [3:0]    rq_eb,       // DRAM words per entry
    input  wire [1:0]    rq_elast,    // last response word of an entry (ew - 1)
    input  wire [34:0]   rq_word,     // the first entry's first DRAM word
    output wire          idle,        // no request in the engine, nothing left to emit
    output wire          ar_go,
    output wire [34:0]   ar_word,
    output wire [3:0]    ar_beats,
    output wire          fill_ready,
    input  wire          r_take,
    input  wire          r_last,
    input  wire [255:0]  r_data,
    input  wire          out_free,
    output wire          emit_go,
    output wire [7:0]    emit_dest,
    output wire [7:0]    emit_tag,
    output wire          emit_last,   // the entry's last word to this destination
    output wire [1:0]    emit_word,   // the word's index in the entry
    output wire [255:0]  emit_data
);
    localparam [1:0] RS_IDLE = 2'd0, RS_FILL = 2'd1, RS_WAIT = 2'd2;
    reg  [1:0]    rs;
    reg           e_act;      // the emit buffer holds an entry not yet sent to every destination
    reg           q_start;    // the quantiser is re-armed this cycle: no beat taken
    reg           rd_quant;
    reg           rd_blay;
    reg  [31:0]   rd_dest;
    reg  [1:0]    rd_nd;      // peers
    reg  [7:0]    rd_txn;
    reg  [8:0]    rd_cnt;     // entries
    reg  [7:0]    rd_ent;     // entry being fetched
    reg  [3:0]    rd_eb;      // DRAM words per entry
    reg  [1:0]    rd_elast;   // last response word of an entry
    reg  [34:0]   rd_anext;   // next entry's first word
    reg           q_rdy;      // the entry's words are ready for the emit buffer
    reg  [255:0]  p_w [0:3];  // an entry without QUANT: its words as they arrive
    reg  [1:0]    p_cnt;
    reg  [1023:0] e_w;        // the emit buffer
    reg  [7:0]    e_tag;
    reg  [1:0]    e_dst;
    reg  [1:0]    q_emit;

    wire start      = rs == RS_IDLE && take;
    wire more_ent   = {1'b0, rd_ent} + 9'd1 < rd_cnt;
    wire next_burst = rs == RS_FILL && r_take && r_last && more_ent;
    wire load_emit  = rs == RS_WAIT && q_rdy && !e_act;
    assign idle       = rs == RS_IDLE && !e_act;
    assign fill_ready = rs == RS_FILL && !q_start;
    assign ar_go      = start || next_burst;
    assign ar_word    = start ? rq_word : rd_anext;
    assign ar_beats   = start ? rq_eb : rd_eb;
    assign emit_go    = e_act && out_free;
    assign emit_dest  = rd_dest[{e_dst, 3'b000} +: 8];
    assign emit_tag   = e_tag;
    assign emit_last  = q_emit == rd_elast;
    assign emit_word  = q_emit;
    assign emit_data  = e_w[{q_emit, 8'd0} +: 256];

    // ---------------------------------------------------------------- quantiser timing
    // A QUANT beat taken at edge b is registered (b+1) and enters the quantiser at b+2; beats 0..6
    // are kept in q_raw, the 8th completes q_in (the converter's only input, so it converts once
    // per entry) and starts the latency count: q_done is high the cycle after QUANT_LAT edges.
    reg           q_bv;
    reg  [255:0]  q_bd;
    reg  [2:0]    q_n;
    reg  [6:0]    q_t;
    reg           q_done;
    reg  [1791:0] q_raw;
    reg  [2047:0] q_in;
    wire [1023:0] q_out;

    mag_quant u_quant (.raw(q_in), .blayout(rd_blay), .words(q_out));

    // The quantiser's inputs, q_in and rd_blay, run on q_clk: clk gated by their write conditions
    // (rtl/arith/clock_gate.v), so Verilator evaluates the quantiser only on the edges that load
    // an entry (or take an entry read), not on every edge of clk.
    wire          q_load = q_bv && !q_start && q_n == 3'd7;     // the 8th beat completes q_in
    wire          q_clk;
    clock_gate u_q_gate (.clk(clk), .en(!resetn || q_load || start), .gclk(q_clk));
    always @(posedge q_clk) begin
        if (!resetn) begin
            rd_blay <= 1'b0;
        end else begin
            if (q_load) q_in    <= {q_bd, q_raw};
            if (start)  rd_blay <= rq_blay;
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            q_bv   <= 1'b0;
            q_n    <= 3'd0;
            q_t    <= 7'd0;
            q_done <= 1'b0;
        end else begin
            q_bv   <= r_take && rs == RS_FILL && rd_quant;
            if (r_take) q_bd <= r_data;
            q_done <= q_t == 7'd1;
            if (q_t != 7'd0) q_t <= q_t - 7'd1;
            if (q_start) begin
                q_n <= 3'd0;
            end else if (q_bv) begin
                if (q_n != 3'd7) begin
                    q_raw[{q_n, 8'd0} +: 256] <= q_bd;
                    q_n <= q_n + 3'd1;
                end else begin           // q_in is loaded on q_clk
                    q_n  <= 3'd0;
                    q_t  <= QUANT_LAT[6:0];
                end
            end
        end
    end

    // ---------------------------------------------------------------- the entry engine
    always @(posedge clk) begin
        if (!resetn) begin
            rs       <= RS_IDLE;
            q_start  <= 1'b0;
            q_rdy    <= 1'b0;
            rd_quant <= 1'b0;
        end else begin
            if (q_done) q_rdy <= 1'b1;
            case (rs)
                RS_IDLE: if (take) begin
                    rd_dest  <= rq_dest;
                    rd_nd    <= rq_npeer;
                    rd_txn   <= rq_txn;
                    rd_cnt   <= rq_cnt;
                    rd_ent   <= 8'd0;
                    rd_quant <= rq_quant;    // rd_blay <= rq_blay on q_clk
                    rd_eb    <= rq_eb;
                    rd_elast <= rq_elast;
                    rd_anext <= rq_word + {31'd0, rq_eb};
                    q_start  <= rq_quant;
                    p_cnt    <= 2'd0;
                    rs       <= RS_FILL;
                end
                RS_FILL: begin
                    q_start <= 1'b0;
                    if (r_take && !rd_quant) begin
                        p_w[p_cnt] <= r_data;
                        p_cnt      <= p_cnt + 2'd1;
                        if (r_last) q_rdy <= 1'b1;
                    end
                    if (r_take && r_last) begin
                        rs <= RS_WAIT;
                        if (more_ent) rd_anext <= rd_anext + {31'd0, rd_eb};  // its burst: ar_go
                    end
                end
                RS_WAIT: if (load_emit) begin
                    q_rdy <= 1'b0;
                    if (more_ent) begin
                        rd_ent  <= rd_ent + 8'd1;
                        q_start <= rd_quant;
                        p_cnt   <= 2'd0;
                        rs      <= RS_FILL;
                    end else begin
                        rs <= RS_IDLE;
                    end
                end
                default: rs <= RS_IDLE;
            endcase
        end
    end

    // ---------------------------------------------------------------- the emit buffer
    // ew words to each destination in turn, one a cycle, whenever the output register is free.
    always @(posedge clk) begin
        if (!resetn) begin
            e_act <= 1'b0;
        end else if (load_emit) begin
            e_w    <= rd_quant ? q_out : {p_w[3], p_w[2], p_w[1], p_w[0]};
            e_tag  <= rd_txn + rd_ent;
            e_act  <= 1'b1;
            e_dst  <= 2'd0;
            q_emit <= 2'd0;
        end else if (emit_go) begin
            if (emit_last) begin
                q_emit <= 2'd0;
                if (e_dst != rd_nd) e_dst <= e_dst + 2'd1;
                else                e_act <= 1'b0;
            end else begin
                q_emit <= q_emit + 2'd1;
            end
        end
    end
endmodule
`default_nettype wire
