// One PE link engine (docs/ahbm.md §4, KV_SEND / KV_RECV): it runs the commands of its queue (pe_cmdq)
// in order, concurrently with the main queue, each moving one KV block packet between a slice range and
// an IPCQ port. RECV = 0 is the TX engine (KV_SEND: the slice's second read port -> the push port, one
// IPCQ word a cycle, SPW words a slice word), RECV = 1 the RX engine (KV_RECV: the pop port -> the
// slice's second write port, one slice word written per SPW words received). Both run the same
// sequence: the head starts when no FAULT is pending and the engine does not hold the port (`yield`); a
// head with a static fault (pe_cmdq) is dropped there and raises it; the port is held to the packet's
// end (a header word, then LEN = bytes / (IPCQ_W / 8) body words), when the head is retired. RX checks
// the header (KIND 0x02, LEN) and the length, and a packet that does not frame raises F_FRAME (it is
// consumed all the same). Separate from the engine so the two directions are one piece of logic, and so
// the engine's own push / pop streams only borrow the port: while this engine holds no packet, the
// engine's use (eng_*) passes through.
//
// Port signals by direction: sel is push_valid (TX) or pop_ready (RX); hs the far side's half of the
// handshake, push_ready (TX) or pop_valid (RX); data / last out are TX's, data / last in are RX's.
//
// Monitor (reset-guarded, sticky mon_err, an ERROR line): the engine used the port while this engine held
// a packet on it (one packet at a time per port). The IPCQ's own rules on the port (a pushed word held
// until taken, pop_ready only with a word) are checked where the queue is, by ipcq.v's monitors.
`default_nettype none
`timescale 1ns/1ps
`include "ahbm_edge.vh"
module pe_link #(
    parameter integer RECV   = 0,       // 0: TX (KV_SEND), 1: RX (KV_RECV)
    parameter integer PE_ID  = 0,
    parameter integer IPCQ_W = 64,      // IPCQ word width: 64, 128, 256 or 512
    parameter integer ADDR_SHIFT = 0    // address fields in bytes (0) or 64-byte words (6): pe_addr.vh
) (
    input  wire                  clk,
    input  wire                  resetn,
    input  wire                  head_valid,   // this engine's queue (pe_cmdq) holds a command
    input  wire [127:0]          head_cmd,
    input  wire [7:0]            head_fault,   // its static fault code
    output wire                  deq,          // the head is retired (dropped, or its packet ended)
    output reg                   act,          // a packet is on the port
    input  wire                  halt,         // a FAULT is pending: start nothing
    input  wire                  yield,        // the engine holds the port: start nothing
    // the IPCQ port (see the header for the direction of each)
    input  wire [3:0]            hs,
    /* verilator lint_off UNUSEDSIGNAL */  // RX's inputs (TX ties them off)
    input  wire [3:0]            last_in,
    input  wire [4*IPCQ_W-1:0]   data_in,      // the four directions' words, N (0) lowest
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [3:0]            eng_sel,      // the engine's use of the port when this engine holds none
    input  wire [IPCQ_W-1:0]     eng_data,
    input  wire [3:0]            eng_last,
    output wire [3:0]            port_sel,
    output wire [IPCQ_W-1:0]     port_data,
    output wire [3:0]            port_last,
    // the slice's second ports: TX reads, RX writes
    output wire [23:0]           sl_rd_addr,
    /* verilator lint_off UNUSEDSIGNAL */  // TX's input (RX ties it off)
    input  wire [511:0]          sl_rd_data,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg                   sl_wr_en,
    output reg  [23:0]           sl_wr_addr,
    output reg  [511:0]          sl_wr_data,
    // report
    output wire                  fin,          // the packet's last word moved (evt)
    output wire                  ok,           // ... and it framed: one more packet sent / received
    output wire                  fault_req,
    output wire [7:0]            fault_code,
    output wire [7:0]            fault_tag,
    output reg                   mon_err
);
    initial begin
        if ((RECV != 0 && RECV != 1) || (IPCQ_W != 64 && IPCQ_W != 128 && IPCQ_W != 256 && IPCQ_W != 512))
            $fatal(1, "pe_link %m: RECV=%0d IPCQ_W=%0d: need RECV 0 or 1, IPCQ_W 64, 128, 256 or 512", RECV, IPCQ_W);
    end
`include "pe_cmd.vh"
`include "pe_addr.vh"
    localparam integer SPW  = 512 / IPCQ_W;          // IPCQ words per 64-byte slice word
    localparam integer KVSH = $clog2(IPCQ_W / 8);   // LEN = bytes >> KVSH
    localparam [7:0]   KIND_KV = 8'h02;

    reg  [127:0] cmd;                        // the running command
    reg  [31:0]  word;                       // word index on the port, 0 = header
    reg          ferr;                       // RX: the packet does not frame
    reg  [511:0] line;                       // RX: the lanes received of the slice word being assembled

    wire [1:0]  dir = f_dir(cmd);
    wire [31:0] len = 32'(cmd[95:72]) >> KVSH;          // body words
    wire [31:0] body = word - 32'd1;
    wire [31:0] lane = body % 32'(SPW);                 // of body word `word` in its slice word,
    wire [23:0] sl_word = 24'(32'(slice_word(cmd[71:48])) + body / 32'(SPW));   // ... and that slice word
    /* verilator lint_off UNUSEDSIGNAL */  // TX receives no word (its hdr_bad is never read)
    wire [IPCQ_W-1:0] rx_word = data_in[IPCQ_W * dir +: IPCQ_W];
    /* verilator lint_on UNUSEDSIGNAL */
    wire        hdr_bad = rx_word[23:16] != KIND_KV || 32'(rx_word[15:0]) != len;

    wire   start = !act && head_valid && !halt && !yield;
    wire   drop = start && head_fault != F_NONE;
    wire   xfer = act && hs[dir];
    assign fin = xfer && (RECV != 0 ? last_in[dir] : word == len);
    wire   frame_bad = RECV != 0 && (ferr || word != len || (word == 32'd0 && hdr_bad));
    assign ok = fin && !frame_bad;
    assign fault_req = drop || (fin && frame_bad);
    assign deq = drop || fin;
    assign fault_code = drop ? head_fault : F_FRAME;
    assign fault_tag = drop ? f_tag(head_cmd) : f_tag(cmd);

    // the port: this engine's packet, else the engine's use
    function [IPCQ_W-1:0] kv_header(input [127:0] c);   // the fields in [63:0], the rest zero
        begin
            kv_header = {IPCQ_W{1'b0}};
            kv_header[63:0] = {24'd0, f_tag(c), 8'(PE_ID), KIND_KV, 16'(c[95:72] >> KVSH)};
        end
    endfunction
    wire [3:0] own_sel = (4'd1 << dir) & (RECV != 0 ? hs : 4'hF);
    assign port_sel  = act ? own_sel : eng_sel;
    assign port_data = act ? ((word == 32'd0) ? kv_header(cmd) : sl_rd_data[IPCQ_W * lane +: IPCQ_W]) : eng_data;
    assign port_last = act ? ((word == len) ? (4'd1 << dir) : 4'd0) : eng_last;
    assign sl_rd_addr = sl_word;

    wire [511:0] line_n;                      // RX: `line` with this word in its lane
    generate
        if (RECV != 0) begin : g_lane
            reg [511:0] l;
            always @* begin
                l = line;
                l[IPCQ_W * lane +: IPCQ_W] = rx_word;
            end
            assign line_n = l;
        end else begin : g_no_lane
            assign line_n = line;
        end
    endgenerate

    wire go = !resetn || sl_wr_en || start || xfer;     // the process's condition: one load per test
    `AHBM_EDGE(clk, go) begin
        if (!resetn) begin
            act <= 1'b0; cmd <= 128'd0; word <= 32'd0; ferr <= 1'b0;
            line <= 512'd0; sl_wr_en <= 1'b0; sl_wr_addr <= 24'd0; sl_wr_data <= 512'd0;
        end else begin
            sl_wr_en <= 1'b0;
            if (start && !drop) begin
                cmd <= head_cmd;
                word <= 32'd0;
                ferr <= 1'b0;
                act <= 1'b1;
            end
            if (xfer) begin
                if (RECV != 0) begin
                    if (word == 32'd0) begin
                        if (hdr_bad) ferr <= 1'b1;
                    end else if (!ferr) begin
                        line <= line_n;
                        if (lane == 32'(SPW - 1)) begin
                            sl_wr_en <= 1'b1;
                            sl_wr_addr <= sl_word;
                            sl_wr_data <= line_n;
                        end
                    end
                end
                if (!fin || RECV != 0) word <= word + 32'd1;
                if (fin) act <= 1'b0;
            end
        end
    end `AHBM_EDGE_END

    // ---------------------------------------------------------------- monitor
    initial mon_err = 1'b0;
    `AHBM_EDGE(clk, !resetn || (act && eng_sel != 4'd0)) begin
        if (!resetn) begin
            mon_err <= 1'b0;
        end else begin
            $display("ERROR %m t=%0t: the engine used the port (%b) while the link engine held a packet on it", $time, eng_sel);
            mon_err <= 1'b1;
        end
    end `AHBM_EDGE_END
endmodule
`default_nettype wire
