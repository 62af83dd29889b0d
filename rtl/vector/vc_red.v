// vc_red: the VRED engine of kinds 0..5 (units.md V.9), in the exact combine order of the spec.
//
// The sixteen lanes of vc_lanes do the arithmetic; this block holds the tree
// register (16 slots) and acc[0..15] and says, each cycle, what the lanes
// compute (`alu_en`, `op`, operand sources and the identity as a constant):
//   kinds 0-2, per chunk c: load the chunk into the tree; four pair levels
//     (8, 4, 2, 1 combines: f(t[2l], t[2l+1]) -> t[l]); acc[c] = f(t[0], identity);
//   kinds 3-5, per chunk c: the 16 leaves (VMUL va*vb; VEXP2 va for EXPSUM),
//     three pair levels (8, 4, 2) that leave T of beat 2c in t[0] and of beat
//     2c+1 in t[1]; acc[2c+l] = f(t[l], identity);
//   then the final tree: t = acc; four pair levels -> `result` = S[vd].
// f is VADD (a = x, c = y) for SUM, SUMSQ, DOT, EXPSUM, VMAX / VMIN (a = x,
// b = y) for MAX / MIN. `start` (with `kind`, `nchunk` = VL/16) begins at
// chunk 0; `chunk` is the chunk the lanes read; `leaf_we` marks the cycle
// whose results are EXPSUM's VEXP2 of that chunk (the sequencer writes them
// to V[vb]); `done` pulses with the result.
`default_nettype none
`timescale 1ns/1ps
module vc_red (
    input  wire         clk,
    input  wire         resetn,
    input  wire         start,
    input  wire         active,          // the sequencer is in its VRED state
    input  wire [2:0]   kind,
    input  wire [3:0]   nchunk,          // VL / 16 (VL is a multiple of 16 here)
    input  wire [383:0] row_a,           // chunk `chunk` of V[va]
    input  wire [383:0] l_res,           // what the lanes computed this cycle
    output wire [2:0]   chunk,
    output wire [383:0] tree_out,
    output reg          alu_en,
    output reg  [4:0]   op,
    output reg  [2:0]   src_a,
    output reg  [2:0]   src_b,
    output reg  [2:0]   src_c,
    output wire [23:0]  ident,
    output wire         leaf_we,
    output wire         done,
    output wire [23:0]  result
);
    localparam [4:0] OP_VADD = 5'h03, OP_VMUL = 5'h05, OP_VMAX = 5'h08, OP_VMIN = 5'h09, OP_VEXP2 = 5'h0E;
    localparam [2:0] K_MAX = 3'd1, K_MIN = 3'd2, K_EXPSUM = 3'd5;
    localparam [2:0] L_ROW = 3'd0, L_CONST = 3'd1, L_TLO = 3'd3, L_THI = 3'd4, L_TSELF = 3'd5;

    reg [383:0] tree, acc;
    reg [2:0]   c;          // chunk
    reg [2:0]   ph;         // phase
    reg         fin;        // the final tree over acc

    wire [4:0]  comb  = (kind == K_MAX) ? OP_VMAX : (kind == K_MIN) ? OP_VMIN : OP_VADD;
    wire        leafk = (kind >= 3'd3);                 // SUMSQ, DOT, EXPSUM: leaves, then half-chunk beats
    wire        ident_ph = !fin && (leafk ? (ph == 3'd4) : (ph == 3'd5));
    wire [7:0]  pair_n = (ph == 3'd1) ? 8'hFF : (ph == 3'd2) ? 8'h0F : (ph == 3'd3) ? 8'h03 : 8'h01;
    assign ident    = (kind == K_MAX) ? 24'hFF8000 : (kind == K_MIN) ? 24'h7F8000 : 24'h000000;
    assign chunk    = c;
    assign tree_out = tree;
    assign leaf_we  = active && !fin && ph == 3'd0 && kind == K_EXPSUM;
    assign done     = active && fin && ph == 3'd4;
    assign result   = l_res[23:0];

    always @* begin
        alu_en = 1'b0; op = 5'd0;
        src_a = L_ROW; src_b = L_ROW; src_c = L_ROW;
        if (active && !(ph == 3'd0 && (fin || !leafk))) begin
            alu_en = 1'b1;
            if (ph == 3'd0) begin                       // the leaves of SUMSQ / DOT / EXPSUM
                op = (kind == K_EXPSUM) ? OP_VEXP2 : OP_VMUL;
            end else if (ident_ph) begin
                op = comb; src_a = L_TSELF; src_b = L_CONST; src_c = L_CONST;
            end else begin
                op = comb; src_a = L_TLO; src_b = L_THI; src_c = L_THI;
            end
        end
    end

    integer l;
    always @(posedge clk) begin
        if (!resetn) begin
            tree <= 384'd0; acc <= 384'd0; c <= 3'd0; ph <= 3'd0; fin <= 1'b0;
        end else if (start) begin
            c <= 3'd0; ph <= 3'd0; fin <= 1'b0;
            acc <= {16{ident}};
        end else if (active) begin
            if (fin) begin
                if (ph == 3'd0) tree <= acc;
                else for (l = 0; l < 8; l = l + 1)
                    if (pair_n[l]) tree[24*l +: 24] <= l_res[24*l +: 24];
                ph <= ph + 3'd1;
            end else if (ph == 3'd0) begin
                tree <= leafk ? l_res : row_a;
                ph   <= 3'd1;
            end else if (ident_ph) begin
                if (leafk) acc[48*c +: 48] <= l_res[47:0];
                else acc[24*c +: 24] <= l_res[23:0];
                ph <= 3'd0;
                if ({1'b0, c} + 4'd1 == nchunk) fin <= 1'b1;
                else c <= c + 3'd1;
            end else begin
                for (l = 0; l < 8; l = l + 1)
                    if (pair_n[l]) tree[24*l +: 24] <= l_res[24*l +: 24];
                ph <= ph + 3'd1;
            end
        end
    end
endmodule
`default_nettype wire
