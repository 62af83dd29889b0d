// A bench-only compute unit behind cu_base, to exercise the base alone.
//
// CU_INST payload: opcode [255:252]
//   1 WORK: retire after payload[15:0] cycles (0 reads as 1) with
//     exec_result = payload[63:32], exec_fault = payload[16];
//   2 SEND: send payload[23:16]+1 CU_DATA flits to (payload[110:107],
//     payload[106:103]), payload of flit i = {payload[63:32], i}, then retire;
//   anything else faults with result 4 (F_OPCODE).
// Everything on recv_* is accepted and dropped (counted in dbg_ctr[63:32]).
// `bug` (set by Python) makes the unit break one rule on its next instruction,
// to prove cu_base's monitors fire: 1 exec_done twice, 2 exec_done in the
// accept cycle, 3 a sent flit with a wrong src.
`default_nettype none
`timescale 1ns/1ps
module cu_null #(
    parameter integer X = 1,
    parameter integer Y = 1
) (
    input  wire         clk,
    input  wire         resetn,
    /* verilator lint_off UNUSEDSIGNAL */  // only the fields of the test ISA are read
    input  wire [287:0] inst_flit,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         inst_valid,
    output reg          inst_ready,
    output reg          exec_done,
    output reg  [31:0]  exec_result,
    output reg          exec_fault,
    output wire [63:0]  dbg_ctr,
    output reg  [287:0] send_flit,
    output reg          send_valid,
    input  wire         send_ready,
    /* verilator lint_off UNUSEDSIGNAL */  // dropped, only counted
    input  wire [287:0] recv_flit,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         recv_valid,
    output wire         recv_ready
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    reg [2:0]  bug = 3'd0;           // written by Python
    reg [1:0]  state;                // 0 idle, 1 working, 2 sending, 3 extra done (bug 1)
    reg [15:0] left;
    reg [7:0]  n_left;
    reg [7:0]  sent;
    reg [3:0]  dx, dy;
    reg [31:0] tag;
    reg [31:0] recv_count;
    reg [31:0] cycles;
    assign dbg_ctr    = {recv_count, cycles};
    assign recv_ready = recv_valid;

    always @(posedge clk) begin
        if (!resetn) begin
            state      <= 2'd0;
            inst_ready <= 1'b0;
            exec_done  <= 1'b0;
            exec_fault <= 1'b0;
            send_valid <= 1'b0;
            recv_count <= 32'd0;
            cycles     <= 32'd0;
        end else begin
            cycles     <= cycles + 32'd1;
            inst_ready <= 1'b0;
            exec_done  <= 1'b0;
            if (recv_valid) recv_count <= recv_count + 32'd1;
            case (state)
                2'd0: if (inst_valid && !inst_ready) begin
                    inst_ready  <= 1'b1;
                    exec_result <= inst_flit[63:32];
                    tag         <= inst_flit[63:32];
                    if (bug == 3'd2) begin
                        exec_done <= 1'b1;          // violation: done with the accept
                        bug       <= 3'd0;
                    end
                    case (inst_flit[255:252])
                        4'd1: begin
                            state      <= 2'd1;
                            left       <= (inst_flit[15:0] == 16'd0) ? 16'd1 : inst_flit[15:0];
                            exec_fault <= inst_flit[16];
                        end
                        4'd2: begin
                            state      <= 2'd2;
                            n_left     <= inst_flit[23:16];
                            sent       <= 8'd0;
                            dx         <= inst_flit[110:107];
                            dy         <= inst_flit[106:103];
                            exec_fault <= 1'b0;
                        end
                        default: begin
                            state       <= 2'd1;
                            left        <= 16'd1;
                            exec_fault  <= 1'b1;
                            exec_result <= 32'd4;
                        end
                    endcase
                end
                2'd1: begin
                    if (left <= 16'd1) begin
                        exec_done <= 1'b1;
                        state     <= (bug == 3'd1) ? 2'd3 : 2'd0;
                    end
                    left <= left - 16'd1;
                end
                2'd2: begin
                    if (!send_valid) begin
                        send_flit  <= {dx, dy, (bug == 3'd3) ? ~X4 : X4, Y4, 4'h8, sent, n_left == 8'd0,
                                       3'b000, tag, {216'd0, sent}};
                        send_valid <= 1'b1;
                        if (bug == 3'd3) bug <= 3'd0;
                    end else if (send_ready) begin
                        send_valid <= 1'b0;
                        sent       <= sent + 8'd1;
                        if (n_left == 8'd0) begin
                            exec_done <= 1'b1;
                            state     <= 2'd0;
                        end
                        n_left <= n_left - 8'd1;
                    end
                end
                default: begin                      // bug 1: a second exec_done
                    exec_done <= 1'b1;
                    bug       <= 3'd0;
                    state     <= 2'd0;
                end
            endcase
        end
    end
endmodule
`default_nettype wire
