`default_nettype none
// cu_gemm_subtile: one GEMM step of the cluster unit on a 4x4 sub-tile,
// combinational (models/numerics/cluster.py gemm_step, bit for bit).
//
// a_entry / b_entry: an L1 entry, granule w at [256w +: 256];
//   A[i][8w+k] at granule w [255-(8i+k)*7 -: 7]   (int7, lane i = row)
//   B[8w+k][j] at granule w [255-(4k+j)*7 -: 7]   (int7, column j)
//   E5M3 scales {E,M} in granule 0: A lane i at [31-8i -: 8], B column j at
//   [31-8j -: 8]; bits [31:0] of granules 1..3 are ignored.
// For each (i, j):
//   dot   = sum over 32 k of A[i][k]*B[k][j]                    exact
//   P     = dot * (8+MA[i]) * (8+MB[j])                         exact, < 2^25
//   value = P * 2^(EA[i] + EB[j] - anchor - 6)
//         = dot * scaleA[i] * scaleB[j] * 2^(40 - anchor)
//   prod  = value rounded into S1E7M14 (acc_round_pack)
//   acc_out[(4i+j)*22 +: 22] = accumulate ? acc_add(acc_in, prod) : prod
// accumulate = 0 is LOAD (first k-block), 1 is ADD.  Scales 0xA0 (1.0) with
// anchor 40 give the integer dot product (exact up to 15 significant bits).
module cu_gemm_subtile (
    input  wire [1023:0] a_entry,
    input  wire [1023:0] b_entry,
    input  wire [7:0]    anchor,
    input  wire          accumulate,
    input  wire [351:0]  acc_in,
    output wire [351:0]  acc_out
);
    // Signed dot product of A row i and B column j over the 32 K of the entry.
    function automatic signed [18:0] dot32(input [1023:0] ae, input [1023:0] be,
                                           input [1:0] i, input [1:0] j);
        integer kk;
        reg signed [18:0] sum;
        reg signed [6:0]  av, bv;
        reg [9:0]         abase, bbase;
        begin
            sum = 19'sd0;
            for (kk = 0; kk < 32; kk = kk + 1) begin
                // granule kk/8, k = kk%8: field 8i+k of A, 4k+j of B
                abase = {kk[4:3], 8'd255} - 10'd7 * {3'd0, i, 3'd0} - 10'd7 * {7'd0, kk[2:0]};
                bbase = {kk[4:3], 8'd255} - 10'd7 * {3'd0, kk[2:0], 2'd0} - 10'd7 * {8'd0, j};
                av = ae[abase -: 7];
                bv = be[bbase -: 7];
                sum = sum + av * bv;
            end
            dot32 = sum;
        end
    endfunction

    genvar gi, gj;
    generate
        for (gi = 0; gi < 4; gi = gi + 1) begin : g_row
            for (gj = 0; gj < 4; gj = gj + 1) begin : g_col
                localparam [1:0] I = gi;
                localparam [1:0] J = gj;
                wire signed [18:0] dot = dot32(a_entry, b_entry, I, J);
                wire [7:0]  sa  = a_entry[31 - 8*gi -: 8];
                wire [7:0]  sb  = b_entry[31 - 8*gj -: 8];
                wire [18:0] ndot = -dot;
                wire [17:0] dmag = dot[18] ? ndot[17:0] : dot[17:0];
                wire [25:0] pmag = {8'd0, dmag} * {22'd0, 1'b1, sa[2:0]} * {22'd0, 1'b1, sb[2:0]};
                wire signed [11:0] lsb = $signed({7'd0, sa[7:3]}) + $signed({7'd0, sb[7:3]})
                                       - $signed({4'd0, anchor}) - 12'sd6;
                wire [21:0] prod, sum;

                acc_round_pack #(.W(26)) u_pack (.sign(dot[18]), .mag(pmag), .lsb_exp(lsb), .y(prod));
                acc_add u_add (.x(acc_in[(4*gi+gj)*22 +: 22]), .y(prod), .z(sum));

                assign acc_out[(4*gi+gj)*22 +: 22] = accumulate ? sum : prod;
                wire unused = &{1'b0, ndot[18]};
            end
        end
    endgenerate
endmodule
`default_nettype wire
