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
// type, txn, last, the reserved bits and the payload go out untouched. The
// dispatcher reads the staging RAM one 64-bit word per cycle, pushes each
// complete flit into a TX FIFO (TX_DEPTH) and an output register drives the
// link from it. Each CU_INST costs one credit, taken as it is pushed; a word
// of a CU_INST is read only while the credit is not 0, so at credit 0 the next
// CU_INST waits here (other types need none). Only a CU_SIGNAL INST_COMPLETE
// (code 0x00) addressed here refills one credit; a push and a refill in the
// same cycle cancel; a host write of PROG_CRED wins over both. "Flits left"
// counts flits not yet read out of the staging RAM; run = flits left != 0, so
// run falls at the edge the last word is read, before that flit has left.
//
// Inbound: a CU_SIGNAL addressed here updates NODE_STATUS[{src_y,src_x}]
// (code, arg, count+1 mod 2^16, valid=1; cumulative, cleared only by reset)
// and counts in SIG_DONE, at the edge it arrives. Any other type is accepted
// and dropped with a NOTE line. The input is never busy.
//
// Timing, as upstream KohakuTPU's orchestrator
// (src/kohakuaccel/noc/ctrl/noc_orchestrator.v at 7703ee8; edge 0 = the edge
// the KICK's W beat is taken):
//   * AXI write: AWREADY while idle; W is taken at the earliest the cycle after
//     AW, and the write acts at the W edge; BVALID the cycle after; idle again
//     after B: 3 cycles per write at the least (write FSM 353-456);
//   * AXI read: ARREADY while idle; the data is loaded one edge after AR and
//     RVALID is high the cycle after; idle after R: 3 cycles per read at the
//     least (read FSM 458-548);
//   * KICK: a one-cycle request at edge 0, the dispatcher starts at edge 1,
//     reads word k of flit i at edge 2 + 5i + k, pushes flit i into the TX
//     FIFO at edge 7 + 5i (readable the cycle after: noc_fifo), the output
//     register takes it at edge 8 + 5i: flit i is on the link in cycle 9 + 5i
//     (FLIT_WORDS = 5 cycles a flit); run reads 0 from cycle 2 + 5*PROG_LEN
//     (dispatcher 264-351);
//   * TX_DEPTH = 16 (parameter TX_DEPTH); the word reads pause while the TX
//     FIFO is full;
//   * credit as above (dispatcher 307-314);
//   * CU_SIGNAL is never queued nor back-pressured; NODE_STATUS is written at
//     the edge the flit arrives (status mirror 203-262).
//
// Assertion monitors (each prints a line containing ERROR naming the side at
// fault, and raises mon_err until reset):
//   * the outbound link (this orchestrator is the sender): a held flit
//     withdrawn or changed (the inbound link is never held: never busy);
//   * the outbound link held busy for more than BUSY_LIMIT cycles (the NoC);
//   * each AXI channel: VALID dropped before READY or payload changed while
//     waiting (the host on AW/W/AR, this orchestrator on B/R);
//   * a dispatch kicked with PROG_BASE+PROG_LEN past the staging RAM, or
//     kicked while one is running (the host; the kick is ignored: upstream
//     drops it silently, here it is a reported hazard);
//   * a flit delivered here whose dst is not this orchestrator (the NoC);
//   * credit overflowing 0xFFFF (more INST_COMPLETE than credits);
//   * the TX FIFO written while full or read while empty (noc_fifo; a design
//     assertion).
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module orchestrator #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer STAGE_SLOTS = 256,
    parameter integer ADDR_W = 16,
    parameter integer TX_DEPTH = 16,         // upstream noc_orchestrator.v TX_DEPTH
    parameter integer BUSY_LIMIT = 100000,   // 0: no bound checked
    parameter integer SW = (STAGE_SLOTS > 1) ? $clog2(STAGE_SLOTS) : 1   // do not override
) (
    input  wire              clk,
    input  wire              resetn,
`include "noc_ep_ports.vh"
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
    localparam [31:0] BUSY_LIM = BUSY_LIMIT;
    localparam [1:0]  SEL_REG = 2'd0, SEL_NODE = 2'd1, SEL_STAGE = 2'd2;
    localparam [8:0]  R_CAPS = 9'd2, R_DST = 9'd8, R_LEN = 9'd9, R_KICK = 9'd10, R_STAT = 9'd11,
                      R_CRED = 9'd12, R_BASE = 9'd13, R_SIG_DONE = 9'd14;
    localparam [3:0]  T_CU_INST = 4'd5, T_CU_SIGNAL = 4'd6;
    localparam [7:0]  C_INST_COMPLETE = 8'h00;
    localparam [15:0] SLOTS16 = STAGE_SLOTS[15:0];
    localparam [2:0]  LAST_WORD = 3'd4;      // FLIT_WORDS = 5 words a flit, one read a cycle

    initial begin
        if (STAGE_SLOTS < 1 || STAGE_SLOTS > 65535 || 64'h2000 + 64'd40 * STAGE_SLOTS > (64'd1 << ADDR_W)) begin
            $fatal(1, "orchestrator %m: STAGE_SLOTS=%0d does not fit: 1..65535 slots, and 0x2000 + 40*slots must fit the %0d-bit host address",
                   STAGE_SLOTS, ADDR_W);
        end
        if (TX_DEPTH < 1 || TX_DEPTH > 65536) begin
            $fatal(1, "orchestrator %m: TX_DEPTH=%0d is outside 1..65536 (the TX FIFO holds at least one flit)", TX_DEPTH);
        end
    end

    // ================================================================ storage
    // Staging RAM, one array per 64-bit word of a flit (the dispatcher reads one word a cycle).
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
    reg [15:0] left;         // flits not yet read out of the staging RAM
    reg        running;      // PROG_STAT run
    reg [SW-1:0] ptr;        // slot being read
    reg [2:0]  word;         // word of that slot read next
    reg [31:0] sig_done;
    // One-cycle requests from the write FSM, acted on the next edge.
    reg        kick_req = 1'b0;
    reg        cred_wr  = 1'b0;
    reg [15:0] cred_val;
    reg        sd_clear = 1'b0;

    // ================================================================ AXI write side
    // Handshake state starts defined (not X) so a host sampling READY/VALID
    // before the first reset edge sees a clean idle slave.
    localparam [1:0] W_IDLE = 2'd0, W_DATA = 2'd1, W_RESP = 2'd2;
    reg [1:0]        wstate = W_IDLE;
    reg [ADDR_W-1:0] aw_addr_q;

    wire aw_hs  = s_axil_awvalid && wstate == W_IDLE;
    wire w_hs   = s_axil_wvalid && wstate == W_DATA;
    wire b_done = s_axil_bready && wstate == W_RESP;

    assign s_axil_awready = wstate == W_IDLE;
    assign s_axil_wready  = wstate == W_DATA;
    assign s_axil_bvalid  = wstate == W_RESP;
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

    wire [7:0]  w_strb = s_axil_wstrb;
    wire [63:0] wmask = {{8{w_strb[7]}}, {8{w_strb[6]}}, {8{w_strb[5]}}, {8{w_strb[4]}},
                         {8{w_strb[3]}}, {8{w_strb[2]}}, {8{w_strb[1]}}, {8{w_strb[0]}}};
    wire [63:0] wbits = s_axil_wdata & wmask;
    wire        wr_reg_hit = w_hs && wr_sel == SEL_REG;

    // Byte-merged new values of the narrow registers (only their low bytes exist).
    /* verilator lint_off UNUSEDSIGNAL */  // the upper bytes of a merge have no register behind them
    wire [63:0] m_dst  = wbits | ({56'd0, prog_dst}  & ~wmask);
    wire [63:0] m_len  = wbits | ({48'd0, prog_len}  & ~wmask);
    wire [63:0] m_base = wbits | ({48'd0, prog_base} & ~wmask);
    wire [63:0] m_cred = wbits | ({48'd0, credit}    & ~wmask);
    /* verilator lint_on UNUSEDSIGNAL */

    always @(posedge clk) begin
        if (!resetn) begin
            wstate    <= W_IDLE;
            prog_dst  <= 8'd0;
            prog_len  <= 16'd0;
            prog_base <= 16'd0;
            kick_req  <= 1'b0;
            cred_wr   <= 1'b0;
            sd_clear  <= 1'b0;
        end else if (aw_hs || w_hs || b_done || kick_req || cred_wr || sd_clear) begin
            kick_req <= wr_reg_hit && wr_reg == R_KICK;
            cred_wr  <= wr_reg_hit && wr_reg == R_CRED;
            sd_clear <= wr_reg_hit && wr_reg == R_SIG_DONE;
            if (aw_hs) begin
                aw_addr_q <= s_axil_awaddr;
                wstate    <= W_DATA;
            end
            if (w_hs) begin
                wstate <= W_RESP;
                if (wr_sel == SEL_REG) begin
                    case (wr_reg)
                        R_DST:  prog_dst  <= m_dst[7:0];
                        R_LEN:  prog_len  <= m_len[15:0];
                        R_BASE: prog_base <= m_base[15:0];
                        R_CRED: cred_val  <= m_cred[15:0];
                        default: ;   // KICK and SIG_DONE act through their requests; the rest is read only
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
            end
            if (b_done) wstate <= W_IDLE;
        end
    end

    // ================================================================ inbound: summarise CU_SIGNALs
    reg        in_err;

    assign noc_in_busy = 1'b0;   // a signal is summarised the edge it arrives; anything else is dropped
    wire       in_acc    = noc_in_valid;
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
            ns_valid <= 256'd0;
            sig_done <= 32'd0;
            in_err   <= 1'b0;
        end else if (in_acc || sd_clear) begin
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
    // The flit being assembled, word by word, and the push of a complete one into the TX FIFO.
    reg [63:0]  asm_w0, asm_w1, asm_w2, asm_w3;
    reg [15:0]  asm_hdr;         // type, txn, last, rsvd of the staged header (dst/src are rewritten)
    reg         push = 1'b0;
    reg         disp_err;

    wire        tx_full, tx_empty;
    wire [287:0] tx_head;
    wire        tx_err;
    reg         out_valid_r = 1'b0;
    reg [287:0] out_data_r;
    wire        tx_pop    = !tx_empty && (!out_valid_r || !noc_out_busy);
    wire        cur_inst  = st_hdr[ptr][15:12] == T_CU_INST;     // the slot's type, header [15:12]
    wire        rd_word   = running && !tx_full && (!cur_inst || credit != 16'd0);
    wire        push_inst = push && asm_hdr[15:12] == T_CU_INST;
    wire [16:0] kick_end  = {1'b0, prog_base} + {1'b0, prog_len};
    // dst {x,y} from PROG_DST {y,x}; src = own coordinate; the rest as staged
    wire [287:0] push_flit = {prog_dst[3:0], prog_dst[7:4], X4, Y4, asm_hdr, asm_w3, asm_w2, asm_w1, asm_w0};

    // (a TX_DEPTH below 1 is refused above by name; the FIFO is kept legal so only that line appears)
    noc_fifo #(.WIDTH(288), .DEPTH(TX_DEPTH < 1 ? 1 : TX_DEPTH)) u_tx (
        .clk(clk), .resetn(resetn), .push(push), .din(push_flit), .pop(tx_pop), .dout(tx_head),
        .empty(tx_empty), .full(tx_full), .mon_err(tx_err));

    assign noc_out_valid = out_valid_r;
    assign noc_out_data  = out_data_r;

    always @(posedge clk) begin
        if (!resetn) begin
            out_valid_r <= 1'b0;
        end else if (tx_pop) begin
            out_valid_r <= 1'b1;
            out_data_r  <= tx_head;
        end else if (out_valid_r && !noc_out_busy) begin
            out_valid_r <= 1'b0;
        end
    end

    always @(posedge clk) begin
        if (!resetn) begin
            left     <= 16'd0;
            running  <= 1'b0;
            word     <= 3'd0;
            ptr      <= {SW{1'b0}};
            credit   <= 16'd0;
            push     <= 1'b0;
            disp_err <= 1'b0;
        end else if (kick_req || rd_word || push || refill || cred_wr) begin
            push <= rd_word && word == LAST_WORD;
            if (kick_req && running) begin
                // the running dispatch goes on (its word read below is not delayed)
                $display("ERROR %m t=%0t: the host kicked a dispatch while one is running (%0d flits left); kick ignored",
                         $time, left);
                disp_err <= 1'b1;
            end
            if (kick_req && !running) begin
                if (kick_end > {1'b0, SLOTS16}) begin
                    $display("ERROR %m t=%0t: the host kicked a dispatch past the staging RAM: PROG_BASE=%0d + PROG_LEN=%0d > %0d slots; not started",
                             $time, prog_base, prog_len, STAGE_SLOTS);
                    disp_err <= 1'b1;
                end else begin
                    ptr     <= prog_base[SW-1:0];
                    word    <= 3'd0;
                    left    <= prog_len;
                    running <= prog_len != 16'd0;
                end
            end else if (rd_word) begin
                case (word)
                    3'd0: asm_w0 <= st_w0[ptr];
                    3'd1: asm_w1 <= st_w1[ptr];
                    3'd2: asm_w2 <= st_w2[ptr];
                    3'd3: asm_w3 <= st_w3[ptr];
                    default: asm_hdr <= st_hdr[ptr][15:0];
                endcase
                if (word == LAST_WORD) begin
                    word    <= 3'd0;
                    ptr     <= ptr + {{(SW-1){1'b0}}, 1'b1};
                    left    <= left - 16'd1;
                    running <= left != 16'd1;
                end else begin
                    word <= word + 3'd1;
                end
            end
            // A CU_INST pushed when the host has just written PROG_CRED = 0 costs nothing: the count
            // never goes below 0 (upstream's rule).
            if (cred_wr) begin
                credit <= cred_val;
            end else if (refill && !push_inst) begin
                if (credit == 16'hffff) begin
                    $display("ERROR %m t=%0t: credit overflow: an INST_COMPLETE from (%0d,%0d) arrived at credit 0xffff (more completions than credits given)",
                             $time, in_sx, in_sy);
                    disp_err <= 1'b1;
                end else begin
                    credit <= credit + 16'd1;
                end
            end else if (push_inst && !refill && credit != 16'd0) begin
                credit <= credit - 16'd1;
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
    // AR taken while idle; the data is loaded at the next edge and offered until R is taken.
    reg              r_busy = 1'b0;   // an address taken, its data not yet taken
    reg              rvalid_r = 1'b0;
    reg [63:0]       rdata_r;
    reg [ADDR_W-1:0] ar_addr_q;
    wire ar_hs  = s_axil_arvalid && !r_busy;
    wire r_done = rvalid_r && s_axil_rready;
    assign s_axil_arready = !r_busy;
    assign s_axil_rvalid  = rvalid_r;
    assign s_axil_rdata   = rdata_r;
    assign s_axil_rresp   = 2'b00;

    wire [1:0]    rd_sel;
    wire [8:0]    rd_reg;
    wire [7:0]    rd_node;
    wire [SW-1:0] rd_slot;
    wire [2:0]    rd_word_idx;
    orch_addr_dec #(.ADDR_W(ADDR_W), .SLOTS(STAGE_SLOTS), .SW(SW)) u_rdec (
        .addr(ar_addr_q), .sel(rd_sel), .reg_idx(rd_reg), .node(rd_node), .slot(rd_slot), .word(rd_word_idx));

    always @(posedge clk) begin
        if (!resetn) begin
            r_busy   <= 1'b0;
            rvalid_r <= 1'b0;
        end else if (ar_hs) begin
            r_busy    <= 1'b1;
            ar_addr_q <= s_axil_araddr;
        end else if (r_busy && !rvalid_r) begin
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
                SEL_STAGE: case (rd_word_idx)
                    3'd0: rdata_r <= st_w0[rd_slot];
                    3'd1: rdata_r <= st_w1[rd_slot];
                    3'd2: rdata_r <= st_w2[rd_slot];
                    3'd3: rdata_r <= st_w3[rd_slot];
                    default: rdata_r <= {32'd0, st_hdr[rd_slot]};
                endcase
                default: ;
            endcase
        end else if (r_done) begin
            r_busy   <= 1'b0;
            rvalid_r <= 1'b0;
        end
    end

    // ================================================================ monitors
    // The inbound link has no monitor: the input is never busy, so no flit is ever held there.
    wire [8:0] m_err;
    assign m_err[0] = tx_err;
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
