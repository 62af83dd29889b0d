// Shared endpoint base of every compute unit: it holds the unit's NoC port.
//
// What it does for the unit (so no unit does it itself):
//   * classifies every inbound flit by type: CU_INST into the instruction FIFO
//     (INST_DEPTH, 32 by default), CU_CTRL answered here (never reaches the
//     unit), MEM_WR_ACK and ERROR accepted and dropped here (nobody consumes
//     them), everything else into the receive FIFO (recv_*); the unit must
//     accept and drop what it does not consume;
//   * issues one instruction at a time (inst_valid only when none is in flight
//     and the completion queue has room) and remembers src, txn and last of it;
//   * on exec_done queues the completion, addressed to the src of the CU_INST,
//     txn echoed, last=1: FAULT (arg = exec_result) if exec_fault, else
//     BATCH_COMPLETE (arg = txn) if the instruction had last=1, else
//     INST_COMPLETE (arg = exec_result);
//   * answers CU_CTRL reads: index 0 CU_CAPS {cu_type, cu_version, n_buffers,
//     inst_depth, 20'b0}, 1 CU_STATUS {busy, error=0, 14'b0, inst_space, 32'b0},
//     2 CU_COUNTERS {instructions retired, busy cycles}, 3 the unit's dbg_ctr,
//     anything else 0. Reply payload {0x02, index, value[63:0], 0}; one reply
//     pending at a time (the input is busy until it has left);
//   * sends, in priority order, completions, the CU_CTRL reply, then the unit's
//     send_* flits verbatim from one output register held until taken.
// noc_in_busy = instruction FIFO full, receive FIFO full, or a reply pending:
// the base's own state only, never the arriving flit.
//
// Assertion monitors (ERROR line + sticky mon_err): the inbound link (sender's
// side) and the outbound link (this endpoint's side); the unit asserting
// exec_done with no instruction in flight or in the cycle it accepts one,
// inst_ready without inst_valid, recv_ready without recv_valid, send_valid
// withdrawn or changed before send_ready, and a unit flit whose src is not this
// endpoint's coordinate.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cu_base #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter [15:0]  CU_TYPE = 16'h0000,
    parameter [7:0]   CU_VERSION = 8'h01,
    parameter [3:0]   N_BUFFERS = 4'd0,
    parameter integer INST_DEPTH = 32,
    parameter integer RECV_DEPTH = 8
) (
    input  wire         clk,
    input  wire         resetn,
`include "noc_ep_ports.vh"
    // instruction issue / retirement
    output wire [287:0] inst_flit,
    output wire         inst_valid,
    input  wire         inst_ready,
    input  wire         exec_done,
    input  wire [31:0]  exec_result,
    input  wire         exec_fault,
    input  wire [63:0]  dbg_ctr,
    // unit -> NoC
    input  wire [287:0] send_flit,
    input  wire         send_valid,
    output wire         send_ready,
    // NoC -> unit (everything the base does not consume)
    output wire [287:0] recv_flit,
    output wire         recv_valid,
    input  wire         recv_ready,
    // status
    output wire [15:0]  inst_space,
    output wire         busy,
    output wire         mon_err
);
    // Parameter limits, refused at elaboration with the values and the rule (a direct Verilog user
    // and the framework see the same message; tb/run/runner.py runs this check before any test).
    initial begin
        if (X < 0 || X > 15 || Y < 0 || Y > 15 || INST_DEPTH < 2 || INST_DEPTH > 65535 || RECV_DEPTH < 1)
            $fatal(1, "cu_base %m: X=%0d Y=%0d INST_DEPTH=%0d RECV_DEPTH=%0d: need X, Y in 0..15 (4-bit coordinates), 2 <= INST_DEPTH <= 65535 (the 16-bit inst_space), RECV_DEPTH >= 1", X, Y, INST_DEPTH, RECV_DEPTH);
    end
    localparam [3:0] T_MEM_WR_ACK = 4'h3;
    localparam [3:0] T_CU_INST    = 4'h5;
    localparam [3:0] T_CU_SIGNAL  = 4'h6;
    localparam [3:0] T_CU_CTRL    = 4'h7;
    localparam [3:0] T_ERROR      = 4'hF;
    localparam [7:0] SIG_INST_COMPLETE  = 8'h00;
    localparam [7:0] SIG_BATCH_COMPLETE = 8'h01;
    localparam [7:0] SIG_FAULT          = 8'h04;
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam integer SIG_DEPTH = 16;

    // ------------------------------------------------------------ intake
    wire [3:0] in_type = noc_in_data[`NOC_TYPE];
    wire       take    = noc_in_valid && !noc_in_busy;

    wire inst_full, inst_empty, recv_full, recv_empty;
    wire inst_err, recv_err;
    reg  ctrl_pend;
    assign noc_in_busy = inst_full || recv_full || ctrl_pend;

    wire to_inst = take && in_type == T_CU_INST;
    wire to_ctrl = take && in_type == T_CU_CTRL;
    wire to_drop = take && (in_type == T_MEM_WR_ACK || in_type == T_ERROR);
    wire to_recv = take && !(in_type == T_CU_INST || in_type == T_CU_CTRL ||
                             in_type == T_MEM_WR_ACK || in_type == T_ERROR);

    wire issue = inst_valid && inst_ready;
    noc_fifo #(.WIDTH(288), .DEPTH(INST_DEPTH)) u_inst (
        .clk(clk), .resetn(resetn), .push(to_inst), .din(noc_in_data),
        .pop(issue), .dout(inst_flit), .empty(inst_empty), .full(inst_full), .mon_err(inst_err));
    noc_fifo #(.WIDTH(288), .DEPTH(RECV_DEPTH)) u_recv (
        .clk(clk), .resetn(resetn), .push(to_recv), .din(noc_in_data),
        .pop(recv_valid && recv_ready), .dout(recv_flit), .empty(recv_empty), .full(recv_full),
        .mon_err(recv_err));
    assign recv_valid = !recv_empty;

    // Free instruction slots, for CU_STATUS and the unit.
    reg [15:0] inst_count;
    always @(posedge clk) begin
        if (!resetn)                inst_count <= 16'd0;
        else if (to_inst && !issue) inst_count <= inst_count + 16'd1;
        else if (issue && !to_inst) inst_count <= inst_count - 16'd1;
    end
    assign inst_space = INST_DEPTH[15:0] - inst_count;

    // ------------------------------------------------------------ issue / retire
    reg        in_flight;
    reg [3:0]  cur_sx, cur_sy;
    reg [7:0]  cur_txn;
    reg        cur_last;

    // Completion queue: {dst_x, dst_y, txn, code, arg}
    localparam integer SIGW = 4 + 4 + 8 + 8 + 32;
    reg [SIGW-1:0] sig_mem [0:SIG_DEPTH-1];
    reg [4:0]      sig_count;
    reg [3:0]      sig_rd, sig_wr;
    wire           sig_full  = (sig_count == SIG_DEPTH[4:0]);
    wire           sig_empty = (sig_count == 5'd0);

    assign inst_valid = !inst_empty && !in_flight && !sig_full;
    wire retire = exec_done && in_flight;

    wire [7:0]  done_code = exec_fault ? SIG_FAULT : (cur_last ? SIG_BATCH_COMPLETE : SIG_INST_COMPLETE);
    wire [31:0] done_arg  = exec_fault ? exec_result : (cur_last ? {24'd0, cur_txn} : exec_result);

    // ------------------------------------------------------------ CU_CTRL
    reg  [3:0]  ctrl_dx, ctrl_dy;
    reg  [7:0]  ctrl_txn;
    reg  [7:0]  ctrl_idx;
    reg  [31:0] ctr_inst;
    reg  [31:0] ctr_busy;
    assign busy = in_flight || !inst_empty || !sig_empty;

    reg [63:0] ctrl_value;
    always @* begin
        case (ctrl_idx)
            8'd0:    ctrl_value = {CU_TYPE, CU_VERSION, N_BUFFERS, INST_DEPTH[15:0], 20'd0};
            8'd1:    ctrl_value = {busy, 1'b0, 14'd0, inst_space, 32'd0};
            8'd2:    ctrl_value = {ctr_inst, ctr_busy};
            8'd3:    ctrl_value = dbg_ctr;
            default: ctrl_value = 64'd0;
        endcase
    end

    // ------------------------------------------------------------ output register
    reg  [287:0] out_data;
    reg          out_valid;
    wire         out_free = !out_valid || !noc_out_busy;
    wire         send_sig  = out_free && !sig_empty;
    wire         send_ctrl = out_free && sig_empty && ctrl_pend;
    assign send_ready = out_free && sig_empty && !ctrl_pend;
    wire         send_unit = send_valid && send_ready;
    assign noc_out_data  = out_data;
    assign noc_out_valid = out_valid;

    wire [SIGW-1:0] sig_head = sig_mem[sig_rd];

    always @(posedge clk) begin
        if (!resetn) begin
            in_flight <= 1'b0;
            sig_count <= 5'd0;
            sig_rd    <= 4'd0;
            sig_wr    <= 4'd0;
            ctrl_pend <= 1'b0;
            out_valid <= 1'b0;
            ctr_inst  <= 32'd0;
            ctr_busy  <= 32'd0;
        end else if (busy || exec_done || to_ctrl || ctrl_pend || send_valid || out_valid) begin
            // (otherwise nothing below can change: issue, retire and send_sig need busy, send_ctrl
            // ctrl_pend, send_unit send_valid; on Icarus an idle unit costs one test a cycle)
            if (busy) ctr_busy <= ctr_busy + 32'd1;
            if (exec_done) ctr_inst <= ctr_inst + 32'd1;
            // issue
            if (issue) begin
                in_flight <= 1'b1;
                cur_sx    <= inst_flit[`NOC_SRC_X];
                cur_sy    <= inst_flit[`NOC_SRC_Y];
                cur_txn   <= inst_flit[`NOC_TXN];
                cur_last  <= inst_flit[`NOC_LAST];
            end else if (retire) begin
                in_flight <= 1'b0;
            end
            // completion queue
            if (retire) begin
                sig_mem[sig_wr] <= {cur_sx, cur_sy, cur_txn, done_code, done_arg};
                sig_wr <= sig_wr + 4'd1;
            end
            if (send_sig) sig_rd <= sig_rd + 4'd1;
            case ({retire, send_sig})
                2'b10:   sig_count <= sig_count + 5'd1;
                2'b01:   sig_count <= sig_count - 5'd1;
                default: sig_count <= sig_count;
            endcase
            // CU_CTRL request capture (input is busy while one is pending)
            if (to_ctrl) begin
                ctrl_pend <= 1'b1;
                ctrl_dx   <= noc_in_data[`NOC_SRC_X];
                ctrl_dy   <= noc_in_data[`NOC_SRC_Y];
                ctrl_txn  <= noc_in_data[`NOC_TXN];
                ctrl_idx  <= noc_in_data[247:240];
            end else if (send_ctrl) begin
                ctrl_pend <= 1'b0;
            end
            // output register
            if (send_sig) begin
                out_data  <= {sig_head[SIGW-1 -: 4], sig_head[SIGW-5 -: 4], X4, Y4, T_CU_SIGNAL,
                              sig_head[SIGW-9 -: 8], 1'b1, 3'b000,
                              sig_head[39:32], sig_head[31:0], 216'd0};
                out_valid <= 1'b1;
            end else if (send_ctrl) begin
                out_data  <= {ctrl_dx, ctrl_dy, X4, Y4, T_CU_CTRL, ctrl_txn, 1'b1, 3'b000,
                              8'h02, ctrl_idx, ctrl_value, 176'd0};
                out_valid <= 1'b1;
            end else if (send_unit) begin
                out_data  <= send_flit;
                out_valid <= 1'b1;
            end else if (out_valid && !noc_out_busy) begin
                out_valid <= 1'b0;
            end
        end
    end

    // ------------------------------------------------------------ monitors
    wire in_err, out_err;
    noc_link_mon #(.WIDTH(288)) u_in_mon (
        .clk(clk), .resetn(resetn), .valid(noc_in_valid), .busy(noc_in_busy), .data(noc_in_data),
        .mon_err(in_err));
    noc_link_mon #(.WIDTH(288)) u_out_mon (
        .clk(clk), .resetn(resetn), .valid(noc_out_valid), .busy(noc_out_busy), .data(noc_out_data),
        .mon_err(out_err));
    // The unit's send handshake follows the same hold-until-taken rule.
    wire send_err;
    noc_link_mon #(.WIDTH(288)) u_send_mon (
        .clk(clk), .resetn(resetn), .valid(send_valid), .busy(!send_ready), .data(send_flit),
        .mon_err(send_err));

    reg unit_err;
    always @(posedge clk) begin
        if (!resetn) begin
            unit_err <= 1'b0;
        end else if (exec_done || inst_ready || recv_ready || send_unit || to_drop) begin
            if (exec_done && !in_flight) begin
                $display("ERROR %m t=%0t: unit asserted exec_done with no instruction in flight (a lost or extra completion)", $time);
                unit_err <= 1'b1;
            end
            if (exec_done && issue) begin
                $display("ERROR %m t=%0t: unit asserted exec_done in the cycle it accepted an instruction", $time);
                unit_err <= 1'b1;
            end
            if (inst_ready && !inst_valid) begin
                $display("ERROR %m t=%0t: unit asserted inst_ready without inst_valid", $time);
                unit_err <= 1'b1;
            end
            if (recv_ready && !recv_valid) begin
                $display("ERROR %m t=%0t: unit asserted recv_ready without recv_valid", $time);
                unit_err <= 1'b1;
            end
            if (send_unit && (send_flit[`NOC_SRC_X] != X4 || send_flit[`NOC_SRC_Y] != Y4)) begin
                $display("ERROR %m t=%0t: unit at (%0d,%0d) sent a flit with src (%0d,%0d): src MUST be the sender's own coordinate: %h",
                         $time, X, Y, send_flit[`NOC_SRC_X], send_flit[`NOC_SRC_Y], send_flit);
                unit_err <= 1'b1;
            end
            if (to_drop)
                $display("cu_base %m t=%0t: dropped an inbound flit of type %0d (nobody consumes it): %h",
                         $time, in_type, noc_in_data);
        end
    end

    assign mon_err = in_err | out_err | send_err | unit_err | inst_err | recv_err;
endmodule
`default_nettype wire
