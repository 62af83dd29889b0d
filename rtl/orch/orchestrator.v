// The orchestrator: the host's window onto the mesh.
//
// The host reaches it over a 64-bit AXI4-Lite slave. It stages instruction
// flits in a RAM, dispatches a run of them to one compute unit under credit
// flow control, and summarises every CU_SIGNAL addressed to it into a status
// word per source node.
//
// Host registers (64-bit words; other offsets read 0 and ignore writes):
//   0x0010 CAPS        [15:0] FLIT_WIDTH=288, [23:16] POS_WIDTH=4,
//                      [47:32] STAGE_SLOTS, [63:56] own {y,x}   (read only)
//   0x0040 PROG_DST    {y,x} of the dispatch target ([7:4] y, [3:0] x)
//   0x0048 PROG_LEN    flits to send
//   0x0050 PROG_KICK   any write starts a dispatch (reads 0)
//   0x0058 PROG_STAT   [0] run, [16:1] flits left, [32:17] credit (read only)
//   0x0060 PROG_CRED   credit: a write seeds it, a read returns the live value
//   0x0068 PROG_BASE   first staging slot of the dispatch
//   0x0070 SIG_DONE    CU_SIGNALs summarised since reset or the last clear;
//                      any write clears it
//   0x1000 + {y,x}*8   NODE_STATUS of node (x,y) (read only):
//                      {code[63:56], arg[55:24], count[23:8], 7'b0, valid[0]}
//   0x2000 + slot*40   STAGE: the flit of a slot as five words, low word first
//                      (word 4 holds the header [287:256] in its bits [31:0])
// Writes honour wstrb per byte (PROG_KICK and SIG_DONE act on any write).
// Every response is OKAY. One write and one read are in progress at a time.
//
// Dispatch: PROG_KICK sends PROG_LEN flits from slots PROG_BASE.. in order,
// each with dst rewritten to PROG_DST and src to this orchestrator's (X,Y);
// type, txn, last, the reserved bits and the payload go out untouched. Each
// CU_INST pushed costs one credit; at credit 0 the next CU_INST waits here
// (other types need none). Only a CU_SIGNAL INST_COMPLETE (code 0x00)
// addressed here refills one credit. "Flits left" counts flits not yet taken
// by the NoC; run = flits left != 0.
//
// Inbound: a CU_SIGNAL addressed here updates NODE_STATUS[{src_y,src_x}]
// (code, arg, count+1 mod 2^16, valid=1; cumulative, cleared only by reset)
// and counts in SIG_DONE. Any other type is accepted and dropped with a NOTE
// line. Summarising holds the input for SIG_CYCLES cycles (a read-modify-write
// of the status RAM): noc_in_busy is high for SIG_CYCLES-1 cycles after each
// flit taken, from that counter alone.
//
// Assertion monitors (each prints a line containing ERROR naming the side at
// fault, and raises mon_err until reset):
//   * the inbound link (the NoC is the sender) and the outbound link (this
//     orchestrator is the sender): a held flit withdrawn or changed;
//   * the outbound link held busy for more than BUSY_LIMIT cycles (the NoC);
//   * each AXI channel: VALID dropped before READY or payload changed while
//     waiting (the host on AW/W/AR, this orchestrator on B/R);
//   * a dispatch kicked with PROG_BASE+PROG_LEN past the staging RAM, or
//     kicked while one is running (the host; the kick is ignored);
//   * a flit delivered here whose dst is not this orchestrator (the NoC);
//   * credit overflowing 0xFFFF (more INST_COMPLETE than credits), and a
//     CU_INST pushed at credit 0 (cannot happen: a design assertion).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module orchestrator #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer STAGE_SLOTS = 256,
    parameter integer ADDR_W = 16,
    parameter integer SIG_CYCLES = 3,
    parameter integer BUSY_LIMIT = 100000,   // 0: no bound checked
    parameter integer SW = (STAGE_SLOTS > 1) ? $clog2(STAGE_SLOTS) : 1   // do not override
) (
    input  wire              clk,
    input  wire              resetn,
    // NoC endpoint
    input  wire [287:0]      noc_in_data,
    input  wire              noc_in_valid,
    output wire              noc_in_busy,
    output wire [287:0]      noc_out_data,
    output wire              noc_out_valid,
    input  wire              noc_out_busy,
    // AXI4-Lite slave, 64-bit data
    input  wire [ADDR_W-1:0] s_axil_awaddr,
    input  wire              s_axil_awvalid,
    output wire              s_axil_awready,
    input  wire [63:0]       s_axil_wdata,
    input  wire [7:0]        s_axil_wstrb,
    input  wire              s_axil_wvalid,
    output wire              s_axil_wready,
    output wire [1:0]        s_axil_bresp,
    output wire              s_axil_bvalid,
    input  wire              s_axil_bready,
    input  wire [ADDR_W-1:0] s_axil_araddr,
    input  wire              s_axil_arvalid,
    output wire              s_axil_arready,
    output wire [63:0]       s_axil_rdata,
    output wire [1:0]        s_axil_rresp,
    output wire              s_axil_rvalid,
    input  wire              s_axil_rready,
    output wire              mon_err
);
    localparam [3:0]  X4 = X[3:0];
    localparam [3:0]  Y4 = Y[3:0];
    localparam [7:0]  HOLD = SIG_CYCLES[7:0] - 8'd1;
    localparam [31:0] BUSY_LIM = BUSY_LIMIT;
    localparam [1:0]  SEL_REG = 2'd0, SEL_NODE = 2'd1, SEL_STAGE = 2'd2;
    localparam [8:0]  R_CAPS = 9'd2, R_DST = 9'd8, R_LEN = 9'd9, R_KICK = 9'd10, R_STAT = 9'd11,
                      R_CRED = 9'd12, R_BASE = 9'd13, R_SIG_DONE = 9'd14;
    localparam [3:0]  T_CU_INST = 4'd5, T_CU_SIGNAL = 4'd6;
    localparam [7:0]  C_INST_COMPLETE = 8'h00;
    localparam [15:0] SLOTS16 = STAGE_SLOTS[15:0];

    initial begin
        if (STAGE_SLOTS < 1 || STAGE_SLOTS > 65535 || 64'h2000 + 64'd40 * STAGE_SLOTS > (64'd1 << ADDR_W)) begin
            $fatal(1, "orchestrator %m: STAGE_SLOTS=%0d does not fit: 1..65535 slots, and 0x2000 + 40*slots must fit the %0d-bit host address",
                   STAGE_SLOTS, ADDR_W);
        end
        if (SIG_CYCLES < 1 || SIG_CYCLES > 255) begin
            $fatal(1, "orchestrator %m: SIG_CYCLES=%0d is outside 1..255", SIG_CYCLES);
        end
    end

    // ================================================================ storage
    // Staging RAM, one array per 64-bit word of a flit so a whole flit reads in one cycle.
    reg [63:0] st_w0  [0:STAGE_SLOTS-1];
    reg [63:0] st_w1  [0:STAGE_SLOTS-1];
    reg [63:0] st_w2  [0:STAGE_SLOTS-1];
    reg [63:0] st_w3  [0:STAGE_SLOTS-1];
    reg [31:0] st_hdr [0:STAGE_SLOTS-1];
    // NODE_STATUS per {y,x}: {code, arg, count}; valid bits apart so reset clears them at once.
    reg [55:0]  ns_mem [0:255];
    reg [255:0] ns_valid;

    // ================================================================ registers
    reg [7:0]  prog_dst;     // {y,x}
    reg [15:0] prog_len;
    reg [15:0] prog_base;
    reg [15:0] credit;
    reg [15:0] left;         // flits not yet taken by the NoC
    reg [15:0] load_left;    // flits not yet read out of the staging RAM
    reg [SW-1:0] ptr;
    reg [31:0] sig_done;

    // ================================================================ AXI write side
    // Handshake state starts defined (not X) so a host sampling READY/VALID
    // before the first reset edge sees a clean idle slave.
    reg              aw_full = 1'b0;
    reg [ADDR_W-1:0] aw_addr_q;
    reg              w_full = 1'b0;
    reg [63:0]       w_data_q;
    reg [7:0]        w_strb_q;
    reg              bvalid_r = 1'b0;

    wire aw_hs  = s_axil_awvalid && !aw_full;
    wire w_hs   = s_axil_wvalid && !w_full;
    wire b_done = bvalid_r && s_axil_bready;
    // The write happens once both halves are in and the previous response is leaving.
    wire do_wr  = aw_full && w_full && (!bvalid_r || s_axil_bready);

    assign s_axil_awready = !aw_full;
    assign s_axil_wready  = !w_full;
    assign s_axil_bvalid  = bvalid_r;
    assign s_axil_bresp   = 2'b00;

    wire [1:0]    wr_sel;
    wire [8:0]    wr_reg;
    /* verilator lint_off UNUSEDSIGNAL */  // NODE_STATUS is read only
    wire [7:0]    wr_node;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [SW-1:0] wr_slot;
    wire [2:0]    wr_word;
    orch_addr_dec #(.ADDR_W(ADDR_W), .SLOTS(STAGE_SLOTS), .SW(SW)) u_wdec (
        .addr(aw_addr_q), .sel(wr_sel), .reg_idx(wr_reg), .node(wr_node), .slot(wr_slot), .word(wr_word));

    wire [63:0] wmask = {{8{w_strb_q[7]}}, {8{w_strb_q[6]}}, {8{w_strb_q[5]}}, {8{w_strb_q[4]}},
                         {8{w_strb_q[3]}}, {8{w_strb_q[2]}}, {8{w_strb_q[1]}}, {8{w_strb_q[0]}}};
    wire [63:0] wbits = w_data_q & wmask;

    wire wr_reg_hit = do_wr && wr_sel == SEL_REG;
    wire kick     = wr_reg_hit && wr_reg == R_KICK;
    wire cred_wr  = wr_reg_hit && wr_reg == R_CRED;
    wire sd_clear = wr_reg_hit && wr_reg == R_SIG_DONE;

    // Byte-merged new values of the narrow registers (only their low bytes exist).
    /* verilator lint_off UNUSEDSIGNAL */  // the upper bytes of a merge have no register behind them
    wire [63:0] m_dst  = wbits | ({56'd0, prog_dst}  & ~wmask);
    wire [63:0] m_len  = wbits | ({48'd0, prog_len}  & ~wmask);
    wire [63:0] m_base = wbits | ({48'd0, prog_base} & ~wmask);
    wire [63:0] m_cred = wbits | ({48'd0, credit}    & ~wmask);
    /* verilator lint_on UNUSEDSIGNAL */

    always @(posedge clk) begin
        if (!resetn) begin
            aw_full   <= 1'b0;
            w_full    <= 1'b0;
            bvalid_r  <= 1'b0;
            prog_dst  <= 8'd0;
            prog_len  <= 16'd0;
            prog_base <= 16'd0;
        end else if (aw_hs || w_hs || do_wr || b_done) begin
            if (aw_hs) begin
                aw_full   <= 1'b1;
                aw_addr_q <= s_axil_awaddr;
            end
            if (w_hs) begin
                w_full   <= 1'b1;
                w_data_q <= s_axil_wdata;
                w_strb_q <= s_axil_wstrb;
            end
            if (do_wr) begin
                aw_full  <= 1'b0;
                w_full   <= 1'b0;
                bvalid_r <= 1'b1;
                if (wr_sel == SEL_REG) begin
                    case (wr_reg)
                        R_DST:  prog_dst  <= m_dst[7:0];
                        R_LEN:  prog_len  <= m_len[15:0];
                        R_BASE: prog_base <= m_base[15:0];
                        default: ;   // KICK, CRED, SIG_DONE act elsewhere; the rest is read only
                    endcase
                end else if (wr_sel == SEL_STAGE) begin
                    case (wr_word)
                        3'd0: st_w0[wr_slot]  <= wbits | (st_w0[wr_slot] & ~wmask);
                        3'd1: st_w1[wr_slot]  <= wbits | (st_w1[wr_slot] & ~wmask);
                        3'd2: st_w2[wr_slot]  <= wbits | (st_w2[wr_slot] & ~wmask);
                        3'd3: st_w3[wr_slot]  <= wbits | (st_w3[wr_slot] & ~wmask);
                        default: st_hdr[wr_slot] <= wbits[31:0] | (st_hdr[wr_slot] & ~wmask[31:0]);
                    endcase
                end
            end else if (b_done) begin
                bvalid_r <= 1'b0;
            end
        end
    end

    // ================================================================ inbound: summarise CU_SIGNALs
    reg [7:0] in_hold = 8'd0;     // cycles the summariser still holds the input
    reg       in_err;

    assign noc_in_busy = (in_hold != 8'd0);
    wire       in_acc    = noc_in_valid && !noc_in_busy;
    wire [3:0] in_dx     = noc_in_data[`NOC_DST_X];
    wire [3:0] in_dy     = noc_in_data[`NOC_DST_Y];
    wire [3:0] in_sx     = noc_in_data[`NOC_SRC_X];
    wire [3:0] in_sy     = noc_in_data[`NOC_SRC_Y];
    wire [3:0] in_type   = noc_in_data[`NOC_TYPE];
    wire [7:0] in_code   = noc_in_data[255:248];
    wire [31:0] in_arg   = noc_in_data[247:216];
    wire       in_for_me = (in_dx == X4) && (in_dy == Y4);
    wire       in_sig    = in_acc && in_for_me && in_type == T_CU_SIGNAL;
    wire       refill    = in_sig && in_code == C_INST_COMPLETE;
    wire [7:0] in_node   = {in_sy, in_sx};

    always @(posedge clk) begin
        if (!resetn) begin
            in_hold  <= 8'd0;
            ns_valid <= 256'd0;
            sig_done <= 32'd0;
            in_err   <= 1'b0;
        end else if (in_acc || noc_in_busy || sd_clear) begin
            if (in_acc) in_hold <= HOLD;
            else if (noc_in_busy) in_hold <= in_hold - 8'd1;
            if (in_sig) begin
                ns_mem[in_node]   <= {in_code, in_arg,
                                      ns_valid[in_node] ? ns_mem[in_node][15:0] + 16'd1 : 16'd1};
                ns_valid[in_node] <= 1'b1;
            end else if (in_acc && !in_for_me) begin
                $display("ERROR %m t=%0t: the NoC delivered a flit addressed to (%0d,%0d) to the orchestrator at (%0d,%0d); dropped: %h",
                         $time, in_dx, in_dy, X, Y, noc_in_data);
                in_err <= 1'b1;
            end else if (in_acc) begin
                $display("NOTE %m t=%0t: dropped an inbound flit of type %0d from (%0d,%0d) (only CU_SIGNAL is consumed here): %h",
                         $time, in_type, in_sx, in_sy, noc_in_data);
            end
            if (sd_clear) sig_done <= {31'd0, in_sig};
            else if (in_sig) sig_done <= sig_done + 32'd1;
        end
    end

    // ================================================================ dispatch
    reg         out_valid_r = 1'b0;
    reg [287:0] out_data_r;
    reg         disp_err;

    wire [15:0] nxt_hdr   = st_hdr[ptr][15:0];                      // type, txn, last, rsvd
    wire        nxt_inst  = nxt_hdr[15:12] == T_CU_INST;            // type is header [15:12]
    wire        out_take  = out_valid_r && !noc_out_busy;
    wire        load      = (load_left != 16'd0) && (!out_valid_r || out_take) &&
                            (!nxt_inst || credit != 16'd0);
    wire        inst_push = load && nxt_inst;
    wire        running   = (left != 16'd0);
    wire [16:0] kick_end  = {1'b0, prog_base} + {1'b0, prog_len};
    // dst {x,y} from PROG_DST {y,x}; src = own coordinate; the rest as staged
    wire [31:0] new_hdr   = {prog_dst[3:0], prog_dst[7:4], X4, Y4, nxt_hdr[15:0]};

    assign noc_out_valid = out_valid_r;
    assign noc_out_data  = out_data_r;

    always @(posedge clk) begin
        if (!resetn) begin
            left        <= 16'd0;
            load_left   <= 16'd0;
            ptr         <= {SW{1'b0}};
            credit      <= 16'd0;
            out_valid_r <= 1'b0;
            disp_err    <= 1'b0;
        end else if (kick || load || out_take || refill || cred_wr) begin
            if (kick) begin
                if (running) begin
                    $display("ERROR %m t=%0t: the host kicked a dispatch while one is running (%0d flits left); kick ignored",
                             $time, left);
                    disp_err <= 1'b1;
                end else if (kick_end > {1'b0, SLOTS16}) begin
                    $display("ERROR %m t=%0t: the host kicked a dispatch past the staging RAM: PROG_BASE=%0d + PROG_LEN=%0d > %0d slots; not started",
                             $time, prog_base, prog_len, STAGE_SLOTS);
                    disp_err <= 1'b1;
                end else begin
                    ptr       <= prog_base[SW-1:0];
                    load_left <= prog_len;
                    left      <= prog_len;
                end
            end
            if (load) begin
                out_data_r  <= {new_hdr, st_w3[ptr], st_w2[ptr], st_w1[ptr], st_w0[ptr]};
                out_valid_r <= 1'b1;
                ptr         <= ptr + {{(SW-1){1'b0}}, 1'b1};
                load_left   <= load_left - 16'd1;
            end else if (out_take) begin
                out_valid_r <= 1'b0;
            end
            if (out_take) left <= left - 16'd1;
            if (cred_wr) begin
                credit <= m_cred[15:0];
            end else if (refill && !inst_push) begin
                if (credit == 16'hffff) begin
                    $display("ERROR %m t=%0t: credit overflow: an INST_COMPLETE from (%0d,%0d) arrived at credit 0xffff (more completions than credits given)",
                             $time, in_sx, in_sy);
                    disp_err <= 1'b1;
                end else begin
                    credit <= credit + 16'd1;
                end
            end else if (inst_push && !refill) begin
                credit <= credit - 16'd1;
            end
            if (inst_push && credit == 16'd0) begin
                $display("ERROR %m t=%0t: design assertion: a CU_INST was pushed at credit 0 (credit would go negative)", $time);
                disp_err <= 1'b1;
            end
        end
    end

    // The NoC must not hold the outbound link busy forever.
    reg [31:0] busy_run;
    reg        busy_err;
    always @(posedge clk) begin
        if (!resetn) begin
            busy_run <= 32'd0;
            busy_err <= 1'b0;
        end else if (out_valid_r && noc_out_busy) begin
            busy_run <= busy_run + 32'd1;
            if (BUSY_LIM != 32'd0 && busy_run == BUSY_LIM) begin
                $display("ERROR %m t=%0t: the NoC has held the orchestrator's output busy for %0d cycles against a waiting flit: %h",
                         $time, BUSY_LIM, out_data_r);
                busy_err <= 1'b1;
            end
        end else if (busy_run != 32'd0) begin
            busy_run <= 32'd0;
        end
    end

    // ================================================================ AXI read side
    reg        rvalid_r = 1'b0;
    reg [63:0] rdata_r;
    wire ar_hs   = s_axil_arvalid && !rvalid_r;
    wire r_done  = rvalid_r && s_axil_rready;
    assign s_axil_arready = !rvalid_r;
    assign s_axil_rvalid  = rvalid_r;
    assign s_axil_rdata   = rdata_r;
    assign s_axil_rresp   = 2'b00;

    wire [1:0]    rd_sel;
    wire [8:0]    rd_reg;
    wire [7:0]    rd_node;
    wire [SW-1:0] rd_slot;
    wire [2:0]    rd_word;
    orch_addr_dec #(.ADDR_W(ADDR_W), .SLOTS(STAGE_SLOTS), .SW(SW)) u_rdec (
        .addr(s_axil_araddr), .sel(rd_sel), .reg_idx(rd_reg), .node(rd_node), .slot(rd_slot), .word(rd_word));

    always @(posedge clk) begin
        if (!resetn) begin
            rvalid_r <= 1'b0;
        end else if (ar_hs) begin
            rvalid_r <= 1'b1;
            rdata_r  <= 64'd0;
            case (rd_sel)
                SEL_REG: case (rd_reg)
                    R_CAPS:     rdata_r <= {Y4, X4, 8'd0, SLOTS16, 8'd0, 8'd`NOC_POS_W, 16'd`NOC_FLIT_W};
                    R_DST:      rdata_r <= {56'd0, prog_dst};
                    R_LEN:      rdata_r <= {48'd0, prog_len};
                    R_STAT:     rdata_r <= {31'd0, credit, left, running};
                    R_CRED:     rdata_r <= {48'd0, credit};
                    R_BASE:     rdata_r <= {48'd0, prog_base};
                    R_SIG_DONE: rdata_r <= {32'd0, sig_done};
                    default: ;
                endcase
                SEL_NODE: if (ns_valid[rd_node]) rdata_r <= {ns_mem[rd_node], 7'd0, 1'b1};
                SEL_STAGE: case (rd_word)
                    3'd0: rdata_r <= st_w0[rd_slot];
                    3'd1: rdata_r <= st_w1[rd_slot];
                    3'd2: rdata_r <= st_w2[rd_slot];
                    3'd3: rdata_r <= st_w3[rd_slot];
                    default: rdata_r <= {32'd0, st_hdr[rd_slot]};
                endcase
                default: ;
            endcase
        end else if (r_done) begin
            rvalid_r <= 1'b0;
        end
    end

    // ================================================================ monitors
    wire [8:0] m_err;
    noc_link_mon #(.WIDTH(288)) u_mon_noc_to_orch (
        .clk(clk), .resetn(resetn), .valid(noc_in_valid), .busy(noc_in_busy), .data(noc_in_data),
        .mon_err(m_err[0]));
    noc_link_mon #(.WIDTH(288)) u_mon_orch_to_noc (
        .clk(clk), .resetn(resetn), .valid(noc_out_valid), .busy(noc_out_busy), .data(noc_out_data),
        .mon_err(m_err[1]));
    orch_axil_mon #(.W(ADDR_W), .CHAN("AW"), .SIDE("host")) u_mon_aw (
        .clk(clk), .resetn(resetn), .valid(s_axil_awvalid), .ready(s_axil_awready), .payload(s_axil_awaddr),
        .mon_err(m_err[2]));
    orch_axil_mon #(.W(72), .CHAN("W"), .SIDE("host")) u_mon_w (
        .clk(clk), .resetn(resetn), .valid(s_axil_wvalid), .ready(s_axil_wready),
        .payload({s_axil_wdata, s_axil_wstrb}), .mon_err(m_err[3]));
    orch_axil_mon #(.W(2), .CHAN("B"), .SIDE("orchestrator")) u_mon_b (
        .clk(clk), .resetn(resetn), .valid(s_axil_bvalid), .ready(s_axil_bready), .payload(s_axil_bresp),
        .mon_err(m_err[4]));
    orch_axil_mon #(.W(ADDR_W), .CHAN("AR"), .SIDE("host")) u_mon_ar (
        .clk(clk), .resetn(resetn), .valid(s_axil_arvalid), .ready(s_axil_arready), .payload(s_axil_araddr),
        .mon_err(m_err[5]));
    orch_axil_mon #(.W(66), .CHAN("R"), .SIDE("orchestrator")) u_mon_r (
        .clk(clk), .resetn(resetn), .valid(s_axil_rvalid), .ready(s_axil_rready),
        .payload({s_axil_rdata, s_axil_rresp}), .mon_err(m_err[6]));
    assign m_err[7] = in_err | busy_err;
    assign m_err[8] = disp_err;
    assign mon_err = |m_err;
endmodule
`default_nettype wire
