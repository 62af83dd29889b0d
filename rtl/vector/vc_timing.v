// vc_timing: when the vector core's words execute, in the upstream core's cycles.
//
// The sequencer (vc_exec) computes each word's result in few cycles; this module says when the next
// word may enter execute, so that every word executes at the kernel count the upstream vector core
// gives it and a kernel reports upstream's cycle count. The rules and every parameter below are facts
// measured on the upstream RTL (KohakuTPU 7703ee8 `vec_cu`: the sequencer `vec_core`, the lanes
// `vec_lanes` / `vec_alu`): clients/vec_timing/latency.md states them (rules 1..10) and the corpus beside
// it (909 programs) is replayed by the `vec_timing` bench; docs/vector_core.md §"Timing" names the
// upstream mechanism of each.
//
// Times are kernel counts (`now`, vc_exec's `cycles`): 1 in the cycle after a RUN starts.
//   t        the count at which the current word entered execute (`exec` strobe)
//   t_next   the earliest count at which the next word may enter execute
//   drain    the count from which upstream's lane pipeline reads empty (last beat + PIPE_DRAIN)
//   ready[r] the count from which a word may issue a beat that names V[r] (the scoreboard)
//   fills_done  the count from which the last VFILL response counts as landed
// Events (one-cycle strobes from the sequencer, at most one a cycle):
//   exec     a word enters execute (its first cycle in S_DEC with `may_exec`)
//   fire     the word at S_DEC proceeds (decode runs): the class of `word` sets t_next; ALU words and
//            chains wait for `issue`, VFILL / VDRAIN for `xfer`
//   issue    an ALU word or chain issues its beats: head sources `va, vb, vc`, last stage's `vd`,
//            `depth` (1, 2, 4), `wcmp` (the last stage is a compare: no scoreboard entry)
//   xfer     a VFILL / VDRAIN starts its flits: `xn` elements, `node` (node-form VDRAIN)
`default_nettype none
`timescale 1ns/1ps
module vc_timing #(
`include "vc_timing_params.vh"
) (
    input  wire        clk,
    input  wire        resetn,
    input  wire        start,
    input  wire [31:0] now,
    input  wire [3:0]  nc,
    input  wire [8:0]  fills_out,
    // the word at S_DEC
    /* verilator lint_off UNUSEDSIGNAL */  // the timing reads the opcode, dt, VBCAST's sa and VRED's kind
    input  wire [31:0] word,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        may_exec,    // the next word may enter execute
    output wire        may_fire,    // the word at S_DEC may proceed (may_exec, and its fill condition)
    output wire [31:0] halt_count,  // VHALT: the kernel's cycle count
    input  wire        exec,
    input  wire        fire,
    // ALU words and chains
    input  wire        issue,
    input  wire [3:0]  va, vb, vc, vd,
    input  wire [2:0]  depth,
    input  wire        wcmp,
    // VFILL / VDRAIN
    input  wire        xfer,
    input  wire [15:0] xn,
    input  wire        node
);
    // opcodes with a rule of their own; VSETVL, VLOOP and VRED ANY / ALL take FETCH (rule 8)
    localparam [4:0] OP_ALU_LAST = 5'h11, OP_VCVT = 5'h12, OP_VRED = 5'h13, OP_VLD = 5'h14, OP_VST = 5'h15,
                     OP_VBCAST = 5'h16, OP_VSHUF = 5'h17, OP_VSETMODE = 5'h19, OP_VSETI = 5'h1A,
                     OP_VBAR = 5'h1C, OP_VFILL = 5'h1D, OP_VDRAIN = 5'h1E, OP_VHALT = 5'h1F;
    localparam [1:0] SRC_S = 2'd1;
    /* verilator lint_off UNUSEDPARAM */  // XFER_LEAD is vc_xfer's (the list is shared)
    localparam integer UNUSED_LEAD = XFER_LEAD;
    /* verilator lint_on UNUSEDPARAM */
    initial begin
        if (PEND_BITS < 1 || PEND_BITS > 8)
            $fatal(1, "vc_timing %m: PEND_BITS=%0d: need 1..8 (a chain issues at most 32 beats)", PEND_BITS);
    end

    reg [31:0] t_ex, t_next, drain, fills_done, ready [0:15];
    reg        fills_busy;
    reg [31:0] x_p;              // VFILL: the count its requests start from; VDRAIN: t
    integer    r;

    // ------------------------------------------------------------ the current word and the fills
    wire [31:0] t      = exec ? now : t_ex;
    wire        f_land = fills_busy && (fills_out == 9'd0);          // the last response just landed
    wire [31:0] f_done = f_land ? now + FILL_LAND : fills_done;
    wire [4:0]  op     = word[31:27];
    wire [2:0]  dt     = word[26:24];
    wire [31:0] ncw    = {28'd0, nc};
    wire        op_x_fill = (op == OP_VFILL);  // at `xfer` the word is still the one fired (pc holds)
    function automatic [31:0] max2(input [31:0] a, input [31:0] b);
        max2 = (a > b) ? a : b;
    endfunction
    wire [31:0] halt_at = max2(max2(t + 32'd1, drain), f_done) + HALT_TAIL;
    assign halt_count = halt_at;

    assign may_exec = (now >= t_next);
    wire fill_quiet = (fills_out == 9'd0);
    assign may_fire = may_exec && (
        (op == OP_VBAR)   ? fill_quiet :
        (op == OP_VFILL)  ? fill_quiet && (now >= f_done) :
        (op == OP_VHALT)  ? fill_quiet && (now + HALT_LEAD >= halt_at) :
        1'b1);

    // ------------------------------------------------------------ the next word after a fired word
    wire [31:0] p_drain = max2(t, drain);
    reg  [31:0] fire_next;
    reg         fire_sets, fire_drains;
    reg  [31:0] fire_drain;
    always @* begin
        fire_sets = 1'b1; fire_drains = 1'b0; fire_drain = drain;
        fire_next = t + FETCH;
        case (op)
            OP_VSETMODE: fire_next = p_drain + FETCH;
            OP_VLD:      fire_next = p_drain + PORT_SETUP + ((dt == 3'd2) ? LD32_CHUNK : LD16_CHUNK) * ncw;
            OP_VST:      fire_next = p_drain + PORT_SETUP + ((dt == 3'd2) ? ST32_CHUNK : ST16_CHUNK) * ncw;
            OP_VCVT, OP_VSHUF: fire_next = p_drain + PORT_SETUP + XFORM_CHUNK * ncw;
            OP_VBCAST:   fire_next = (word[26:25] == SRC_S) ? p_drain + PORT_SETUP + XFORM_CHUNK * ncw
                                                            : p_drain + V2S_T;
            OP_VRED: if (word[7:6] != 2'b11) begin                     // kinds 0..5 (6, 7: ANY / ALL)
                fire_drains = 1'b1;
                fire_drain  = max2(t + ((word[7:5] >= 3'd3) ? 32'd2 * ncw : ncw) + PIPE_DRAIN, drain) + PIPE_DRAIN;
                fire_next   = fire_drain - PIPE_DRAIN + RED_TAIL;
            end
            OP_VSETI:    fire_next = t + SETI_T;
            OP_VBAR:     fire_next = max2(t + 32'd1, f_done) + BAR_TAIL;
            OP_VFILL, OP_VDRAIN, OP_VHALT: fire_sets = 1'b0;         // set at `xfer`; VHALT ends the RUN
            default:     fire_sets = (op > OP_ALU_LAST);               // ALU words: set at `issue`
        endcase
    end

    // ------------------------------------------------------------ ALU words and chains (rules 3, 4, 6)
    wire [31:0] dw    = {29'd0, depth};
    wire [31:0] beats = ncw * dw;
    wire [31:0] b0    = max2(max2(t + 32'd1 + FETCH * (dw - 32'd1), max2(ready[va], ready[vb])),
                             max2(ready[vc], ready[vd]));
    wire [31:0] last_beat = b0 + beats - 32'd1;
    wire        wraps = (beats[PEND_BITS-1:0] == {PEND_BITS{1'b0}});  // H4: the pending count wraps to 0

    always @(posedge clk) begin
        if (!resetn) begin
            t_ex <= 32'd0; t_next <= FIRST_T; drain <= 32'd0; fills_done <= 32'd0; fills_busy <= 1'b0;
            x_p <= 32'd0;
            for (r = 0; r < 16; r = r + 1) ready[r] <= 32'd0;
        end else if (start || fire || issue || xfer || exec || fills_busy || fills_out != 9'd0) begin
            // (else nothing changes: skipped, so a core waiting for its time is cheap to simulate)
            fills_busy <= (fills_out != 9'd0);
            if (f_land) fills_done <= f_done;
            if (exec) t_ex <= now;
            if (start) begin
                t_next <= FIRST_T; drain <= 32'd0; fills_done <= 32'd0;
                for (r = 0; r < 16; r = r + 1) ready[r] <= 32'd0;
            end else if (fire) begin
                if (fire_sets) t_next <= fire_next;
                if (fire_drains) drain <= fire_drain;
                x_p <= (op == OP_VFILL) ? now : t;
            end else if (issue) begin
                t_next <= b0 + beats + FETCH;
                drain  <= last_beat + PIPE_DRAIN;
                if (!wcmp && !wraps) ready[vd] <= last_beat + RAW_LAT + STAGE_LAT * (dw - 32'd1);
            end else if (xfer) begin
                t_next <= x_p + XFER_GAP * {16'd0, xn} +
                          (node ? DRAIN_SETUP + ((xn >= 16'd2) ? NODE_EXTRA : 0) :
                           (op_x_fill ? FILL_SETUP : DRAIN_SETUP));
            end
        end
    end
endmodule
`default_nettype wire
