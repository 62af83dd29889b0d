// The cluster's FILL (units.md C.2-C.4): the leader rule, the one request, the
// collecting register and the entry commits. Instantiated by cluster_cu.v,
// which owns L1 and writes the committed entry; models/cluster (core.py,
// flits.py) predicts the same flits and placements.
//
// start (the FILL's first cycle, combinational: upstream's S_FILL builds the
// request in the cycle after the accept) opens the FILL with the instruction
// payload ip (held stable by the sequencer until done):
//   * leads when {Y,X} is below every one of the first npeer peer bytes
//     (npeer = 0 always leads; a cluster listing itself never does); a leader
//     raises req_pend, from the start cycle on, until the sequencer's send
//     register takes req_flit:
//       MEM_RD_REQ to (MAG_X, MAG_Y), txn = eoff, last 1, rsvd 0;
//       addr [255:216], len 3, flags {0, STREAM, BLAYOUT = sel, QUANT = !preq,
//       0000}, count n[7:0], peer [191:168] = peers, n_peer [167:166] = npeer,
//       entry_words [165:158] = 0 (four words), the rest 0;
//   * accepting (from the start cycle on): MEM_RD_RESP of any origin are
//     taken while fewer than n entries are committed; word w = rsvd[1:0] goes to word w of the
//     collecting register (words 0..2 registered), word 3 commits the four
//     words to L1 entry {fbank, txn} of side sel (commit, one cycle);
//   * done (one cycle) once n entries are committed and the request (if any)
//     has left; the FILL closes at that edge and the sequencer retires it.
// n = 0 reads as 1; n > 255 never starts (the sequencer faults F_FILL_RANGE).
// The collecting register is cleared by reset only.
`default_nettype none
`timescale 1ns/1ps
`include "noc_pkg.vh"
module cl_fill #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1
) (
    input  wire          clk,
    input  wire          resetn,
    input  wire          start,
    input  wire [255:0]  ip,
    input  wire          resp,          // a MEM_RD_RESP taken this cycle (only while accepting)
    input  wire [287:0]  resp_flit,
    input  wire          req_taken,     // the send register took req_flit this cycle
    output reg           active,
    output wire          accepting,
    output wire          req_pend,
    output wire [287:0]  req_flit,
    output wire          commit,
    output wire          commit_sel,
    output wire [8:0]    commit_entry,
    output wire [1023:0] commit_data,   // granule w at [256w +: 256]
    output wire          done
);
    localparam [3:0] X4 = X[3:0];
    localparam [3:0] Y4 = Y[3:0];
    localparam [3:0] MX4 = MAG_X[3:0];
    localparam [3:0] MY4 = MAG_Y[3:0];
    localparam [7:0] OWN = {Y4, X4};
    localparam [3:0] T_RD_REQ = 4'h0;

    wire [39:0] addr   = {ip[68:63], ip[251:218]};
    wire [7:0]  n8     = (ip[217:202] == 16'd0) ? 8'd1 : ip[209:202];   // n <= 255 here
    wire        sel    = ip[201];
    wire [23:0] peers  = ip[167:144];
    wire [1:0]  npeer  = ip[143:142];
    wire        preq   = ip[141];
    wire [7:0]  eoff   = ip[140:133];
    wire        fbank  = ip[112];
    wire        leads  = (npeer < 2'd1 || OWN < peers[7:0]) && (npeer < 2'd2 || OWN < peers[15:8]) &&
                         (npeer < 2'd3 || OWN < peers[23:16]);
    wire [7:0]  flags  = {1'b0, 1'b1, sel, !preq, 4'b0000};

    assign req_flit = {MX4, MY4, X4, Y4, T_RD_REQ, eoff, 1'b1, 3'b000,
                       addr, 8'd3, flags, n8, peers, npeer, 8'd0, 158'd0};

    reg [7:0]   committed;               // 0 between FILLs
    reg         req_r;
    reg [255:0] w0, w1, w2;              // the collecting register, words 0..2
    wire [1:0]  rw = resp_flit[257:256];
    assign req_pend     = req_r || (start && leads);
    assign accepting    = (active || start) && committed != n8;
    assign commit       = resp && rw == 2'd3;
    assign commit_sel   = sel;
    assign commit_entry = {fbank, resp_flit[`NOC_TXN]};
    assign commit_data  = {resp_flit[255:0], w2, w1, w0};
    assign done         = active && !req_pend && committed == n8;

    always @(posedge clk) begin
        if (!resetn) begin
            active    <= 1'b0;
            req_r     <= 1'b0;
            committed <= 8'd0;
            w0 <= 256'd0;
            w1 <= 256'd0;
            w2 <= 256'd0;
        end else begin
            if (start) active <= 1'b1;
            else if (done) active <= 1'b0;
            req_r <= req_pend && !req_taken;
            if (resp) begin
                case (rw)
                    2'd0: w0 <= resp_flit[255:0];
                    2'd1: w1 <= resp_flit[255:0];
                    2'd2: w2 <= resp_flit[255:0];
                    default: ;
                endcase
            end
            if (done) committed <= 8'd0;
            else if (commit) committed <= committed + 8'd1;
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_ok = &{1'b0, ip[255:252], ip[217:210], ip[200:168], ip[132:113], ip[111:69], ip[62:0],
                       resp_flit[287:268], resp_flit[259:258]};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
