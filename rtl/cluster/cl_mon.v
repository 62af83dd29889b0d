// The cluster's assertion monitors on what it sends and on its receive queue
// (ERROR line + sticky err), instantiated by cluster_cu.v (whose header lists
// them): the write and CU_DATA framing of what leaves the send register, a
// MEM_RD_REQ outside a FILL or a second in one, a DATA_RECEIVED no burst
// asked for, a DRAIN retiring before the write port's flits left (its own,
// or for a fused DRAIN the emitting GEMM's), two accumulator commands in one
// cycle, and an inbound flit held for HOLD_LIMIT cycles (a held MEM_RD_RESP
// named as such, units.md C.3).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cl_mon #(
    parameter integer HOLD_LIMIT = 200000
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire [287:0] send_flit,
    input  wire         snd_taken,     // the send register's flit left this cycle
    input  wire         snd_is_wp,     // ... and it is a write-port flit
    input  wire         fill_start,
    input  wire         fill_active,
    input  wire         wp_start,
    input  wire         wp_retire,     // a DRAIN retires (its flits, or the emitted ones, should have left)
    input  wire [15:0]  wp_expect,     // flits of the write port's transfer
    input  wire         engine_clash,  // more than one accumulator command this cycle
    input  wire         rx_acked,      // a burst that asked for an ack has ended
    input  wire         recv_valid,
    input  wire         recv_ready,
    input  wire         recv_held,
    input  wire [287:0] recv_flit,
    output reg          err
);
    localparam [3:0] T_RD_REQ = 4'h0, T_WR_REQ = 4'h1, T_WR_DATA = 4'h4, T_SIGNAL = 4'h6, T_CU_DATA = 4'h8;

    wire [3:0] s_type = send_flit[`NOC_TYPE];
    wire       s_last = send_flit[`NOC_LAST];
    reg        m_wr_open, m_cd_open, m_rd_allowed;
    reg [3:0]  m_wr_left, m_cd_left;
    reg [15:0] m_acks_owed, m_wp_flits;
    reg [19:0] m_hold;
    wire       m_ack_sent = snd_taken && s_type == T_SIGNAL && send_flit[255:248] == 8'h03;
    always @(posedge clk) begin
        if (!resetn) begin
            m_wr_open <= 1'b0;
            m_cd_open <= 1'b0;
            m_wr_left <= 4'd0;
            m_cd_left <= 4'd0;
            m_acks_owed <= 16'd0;
            m_wp_flits <= 16'd0;
            m_rd_allowed <= 1'b0;
            m_hold <= 20'd0;
            err <= 1'b0;
        end else begin
            if (fill_start) m_rd_allowed <= 1'b1;  // one request per FILL at most (none from a follower)
            if (wp_start) m_wp_flits <= 16'd0;
            else if (snd_taken && snd_is_wp) m_wp_flits <= m_wp_flits + 16'd1;
            if (snd_taken) begin
                case (s_type)
                    T_WR_REQ: begin
                        if (m_wr_open) begin
                            $display("ERROR %m t=%0t: cluster opened a second write while one was open (one open write per source): %h", $time, send_flit);
                            err <= 1'b1;
                        end
                        if (send_flit[215:208] > 8'd7 || s_last) begin
                            $display("ERROR %m t=%0t: cluster MEM_WR_REQ with len %0d (max 7) or last=1: %h", $time, send_flit[215:208], send_flit);
                            err <= 1'b1;
                        end
                        m_wr_open <= 1'b1;
                        m_wr_left <= send_flit[211:208] + 4'd1;
                    end
                    T_WR_DATA: begin
                        if (!m_wr_open || s_last != (m_wr_left == 4'd1)) begin
                            $display("ERROR %m t=%0t: cluster MEM_WR_DATA with no open write or last=%0d with %0d beats due: %h",
                                     $time, s_last, m_wr_left, send_flit);
                            err <= 1'b1;
                        end
                        m_wr_left <= m_wr_left - 4'd1;
                        if (m_wr_left == 4'd1) m_wr_open <= 1'b0;
                    end
                    T_CU_DATA: begin
                        if (!m_cd_open) begin
                            if (send_flit[231:224] > 8'd7 || s_last) begin
                                $display("ERROR %m t=%0t: cluster CU_DATA descriptor with len %0d (WBURST is 8) or last=1: %h",
                                         $time, send_flit[231:224], send_flit);
                                err <= 1'b1;
                            end
                            m_cd_open <= 1'b1;
                            m_cd_left <= send_flit[227:224] + 4'd1;
                        end else begin
                            if (s_last != (m_cd_left == 4'd1)) begin
                                $display("ERROR %m t=%0t: cluster CU_DATA data flit last=%0d with %0d due: %h", $time, s_last, m_cd_left, send_flit);
                                err <= 1'b1;
                            end
                            m_cd_left <= m_cd_left - 4'd1;
                            if (m_cd_left == 4'd1) m_cd_open <= 1'b0;
                        end
                    end
                    T_RD_REQ: begin
                        if (!m_rd_allowed || !fill_active) begin
                            $display("ERROR %m t=%0t: cluster sent a MEM_RD_REQ outside a FILL, or a second one in one FILL: %h", $time, send_flit);
                            err <= 1'b1;
                        end
                        m_rd_allowed <= 1'b0;
                    end
                    default: ;
                endcase
            end
            case ({rx_acked, m_ack_sent})
                2'b10: m_acks_owed <= m_acks_owed + 16'd1;
                2'b01: m_acks_owed <= m_acks_owed - 16'd1;
                default: ;
            endcase
            if (m_ack_sent && !rx_acked && m_acks_owed == 16'd0) begin
                $display("ERROR %m t=%0t: cluster sent a DATA_RECEIVED no burst asked for: %h", $time, send_flit);
                err <= 1'b1;
            end
            if (wp_retire && m_wp_flits != wp_expect) begin
                $display("ERROR %m t=%0t: DRAIN retired when %0d of the write port's %0d flits had left the CU (it retires when the last has left)",
                         $time, m_wp_flits, wp_expect);
                err <= 1'b1;
            end
            if (engine_clash) begin
                $display("ERROR %m t=%0t: two accumulator commands in one cycle (sweep, DRAIN and ADD_PEER take turns)", $time);
                err <= 1'b1;
            end
            if (recv_valid && !recv_ready) begin
                m_hold <= m_hold + 20'd1;
                if (m_hold == HOLD_LIMIT[19:0]) begin
                    if (recv_held)
                        $display("ERROR %m t=%0t: a MEM_RD_RESP outside any FILL has blocked the receive queue for %0d cycles (units.md C.3: it waits for the next FILL, and none came): %h",
                                 $time, HOLD_LIMIT, recv_flit);
                    else
                        $display("ERROR %m t=%0t: cluster held an inbound flit for %0d cycles: %h", $time, HOLD_LIMIT, recv_flit);
                    err <= 1'b1;
                end
            end else begin
                m_hold <= 20'd0;
            end
        end
    end

endmodule
`default_nettype wire
