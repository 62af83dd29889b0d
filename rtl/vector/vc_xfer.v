// vc_xfer: the flits of VFILL and VDRAIN (units.md V.11), one a cycle into the link's queue.
//
// `go` (the cycle after the sequencer started the walk of A[ad]) takes the
// word `ir`; if the walk total is above 256 it answers `len_fault` at once and
// sends nothing (F_LEN, before any flit). Otherwise, element n of the walk at
// address `addr` and L1 word start + n (mod 512, `l1_addr` / `l1_data`):
//   VFILL                MEM_RD_REQ to the memory agent, txn = (start+n)[7:0],
//                        last 1, addr[255:216], all else 0 (`fill_issue` tells
//                        the link which L1 word the response lands in);
//                        `done` with the last request
//   VDRAIN to memory     MEM_WR_REQ (txn 0x01, last 0, len 0) then MEM_WR_DATA
//                        (txn 0x01, last 1, the L1 word)
//   VDRAIN to a node     (ir[24]) one CU_DATA descriptor to (ir[20:17],
//                        ir[16:13]): buf {0000, ir[12:9]}, off = base[15:0],
//                        len = total - 1, flags {0..0, ir[25]}, [215:208] =
//                        base[23:16]; txn = fin = base[33:26] and rsvd
//                        {1, mesh = base[25:24]} when fin != 0 (remote); then
//                        `total` raw L1 words, last on the final one
// A VDRAIN's `done` comes once its last flit has left the core (`x_sent`).
// `step` advances the walk.
// Pacing (upstream's rate, clients/vec_timing/latency.md rules 9 and 10): the first element's flits
// start XFER_LEAD cycles after `go`, the next element's XFER_GAP cycles after the previous one's (a
// memory drain's WR_DATA follows its WR_REQ in the next cycle; a node drain's descriptor leads its
// first word by one cycle).
`default_nettype none
`timescale 1ns/1ps
module vc_xfer #(
    parameter integer X = 1,
    parameter integer Y = 1,
    parameter integer MAG_X = 0,
    parameter integer MAG_Y = 1,
    parameter integer XFER_LEAD = 0,   // cycles from `go` to the first element (calibrated)
    parameter integer XFER_GAP  = 3    // cycles from one element's first flit to the next one's
) (
    input  wire         clk,
    input  wire         resetn,
    input  wire         go,
    /* verilator lint_off UNUSEDSIGNAL */  // ir[26], ir[23:21] (dt, ad) and record bits [39:34] are not read here
    input  wire [31:0]  ir,
    input  wire [39:0]  rec,             // the descriptor's base: the node drain's record
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [39:0]  addr,            // the walk's current element
    input  wire [15:0]  total,
    output wire         step,
    output wire [8:0]   l1_addr,
    input  wire [255:0] l1_data,
    output wire         x_push,
    output reg  [287:0] x_flit,
    input  wire         xq_full,
    input  wire [15:0]  x_sent,
    output wire         fill_issue,
    output wire [8:0]   fill_l1,
    output wire         len_fault,
    output wire         done
);
    localparam [3:0] X4 = X[3:0], Y4 = Y[3:0], MX4 = MAG_X[3:0], MY4 = MAG_Y[3:0];
    localparam [3:0] T_MEM_RD_REQ = 4'h0, T_MEM_WR_REQ = 4'h1, T_MEM_WR_DATA = 4'h4, T_CU_DATA = 4'h8;
    localparam [4:0] OP_VFILL = 5'h1D;
    localparam [2:0] X_IDLE = 3'd0, X_FILL = 3'd1, X_NDESC = 3'd2, X_NDATA = 3'd3, X_MDRAIN = 3'd4, X_WAIT = 3'd5;

    reg [2:0]  xs;
    reg [15:0] n;            // elements done
    reg        ph;           // memory drain: 0 WR_REQ, 1 WR_DATA
    reg [15:0] pushed;
    reg [7:0]  pace;         // cycles until the next element may start
    initial begin
        if (XFER_GAP < 2 || XFER_GAP > 255 || XFER_LEAD < 0 || XFER_LEAD > 255)
            $fatal(1, "vc_xfer %m: XFER_GAP=%0d XFER_LEAD=%0d: need GAP 2..255 (a drained word is two flits), LEAD 0..255",
                   XFER_GAP, XFER_LEAD);
    end
    localparam [7:0] GAP8 = XFER_GAP[7:0], LEAD8 = XFER_LEAD[7:0];

    function automatic [287:0] mkflit(input [3:0] dx, input [3:0] dy, input [3:0] typ, input [7:0] txn,
                                      input last, input [2:0] rsvd, input [255:0] payload);
        mkflit = {dx, dy, X4, Y4, typ, txn, last, rsvd, payload};
    endfunction

    wire         last    = (n + 16'd1 == total);
    wire         remote  = (rec[33:26] != 8'd0);
    wire [7:0]   nd_txn  = remote ? rec[33:26] : 8'd0;
    wire [2:0]   nd_rsvd = remote ? {1'b1, rec[25:24]} : 3'd0;
    wire [7:0]   tot_m1  = total[7:0] - 8'd1;
    wire [255:0] nd_desc = {4'd0, ir[12:9], rec[15:0], tot_m1, 7'd0, ir[25], rec[23:16], 208'd0};

    assign l1_addr    = ir[8:0] + n[8:0];
    wire   elem_start = (xs == X_FILL) || (xs == X_NDATA) || (xs == X_MDRAIN && !ph);
    assign x_push     = !xq_full && (xs == X_FILL || xs == X_NDESC || xs == X_NDATA || xs == X_MDRAIN) &&
                        !(elem_start && pace != 8'd0);
    assign step       = x_push && (xs == X_FILL || (xs == X_MDRAIN && ph));
    assign fill_issue = x_push && (xs == X_FILL);
    assign fill_l1    = l1_addr;
    assign len_fault  = go && (total > 16'd256);
    assign done       = (xs == X_FILL && x_push && last) || (xs == X_WAIT && x_sent == pushed);

    always @* begin
        case (xs)
            X_FILL:  x_flit = mkflit(MX4, MY4, T_MEM_RD_REQ, l1_addr[7:0], 1'b1, 3'd0, {addr, 216'd0});
            X_NDESC: x_flit = mkflit(ir[20:17], ir[16:13], T_CU_DATA, nd_txn, 1'b0, nd_rsvd, nd_desc);
            X_NDATA: x_flit = mkflit(ir[20:17], ir[16:13], T_CU_DATA, nd_txn, last, nd_rsvd, l1_data);
            default: x_flit = ph ? mkflit(MX4, MY4, T_MEM_WR_DATA, 8'h01, 1'b1, 3'd0, l1_data)
                                 : mkflit(MX4, MY4, T_MEM_WR_REQ, 8'h01, 1'b0, 3'd0, {addr, 216'd0});
        endcase
    end

    always @(posedge clk) begin
        if (!resetn) begin
            xs <= X_IDLE; n <= 16'd0; ph <= 1'b0; pushed <= 16'd0; pace <= 8'd0;
        end else if (xs != X_IDLE || go || x_push || pace != 8'd0) begin   // an idle engine: one test a cycle
            if (x_push) pushed <= pushed + 16'd1;
            if (go) pace <= LEAD8;
            else if (x_push && elem_start) pace <= GAP8 - 8'd1;
            else if (pace != 8'd0) pace <= pace - 8'd1;
            case (xs)
                X_IDLE: if (go && !len_fault) begin
                    n  <= 16'd0;
                    ph <= 1'b0;
                    xs <= (ir[31:27] == OP_VFILL) ? X_FILL : ir[24] ? X_NDESC : X_MDRAIN;
                end
                X_FILL: if (x_push) begin
                    n <= n + 16'd1;
                    if (last) xs <= X_IDLE;
                end
                X_NDESC: if (x_push) xs <= X_NDATA;
                X_NDATA: if (x_push) begin
                    n <= n + 16'd1;
                    if (last) xs <= X_WAIT;
                end
                X_MDRAIN: if (x_push) begin
                    ph <= !ph;
                    if (ph) begin
                        n <= n + 16'd1;
                        if (last) xs <= X_WAIT;
                    end
                end
                X_WAIT: if (x_sent == pushed) xs <= X_IDLE;
                default: xs <= X_IDLE;
            endcase
        end
    end
endmodule
`default_nettype wire
