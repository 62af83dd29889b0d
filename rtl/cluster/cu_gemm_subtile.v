`default_nettype none
// cu_gemm_subtile: one GEMM issue of the cluster on a 4x4 sub-tile,
// combinational (models/numerics/cluster.py gemm_step, bit for bit): units.md
// C.7.2 (the exact K-block dot), C.7.3 (acc_convert) and C.7.4 (acc_add).
//
// a_entry / b_entry: an L1 entry, granule w at [256w +: 256] (units.md C.4):
//   A[i][8w+k] at granule w [255-(8i+k)*7 -: 7]   (int7, lane i = row)
//   B[8w+k][j] at granule w [255-(4k+j)*7 -: 7]   (int7, lane j = column)
//   scale bytes {E,M} in granule 0: A lane i at [31-8i -: 8], B lane j at
//   [31-8j -: 8]; bits [31:0] of granules 1..3 are ignored.
// For each (i, j):
//   D     = sum over 32 k of A[i][k]*B[k][j]                     exact
//   X     = acc_convert(D, scaleA[i], scaleB[j], anchor)          C.7.3
//   acc_out[(4i+j)*22 +: 22] = accumulate ? ADD(acc_in, X)       ADD
//                                         : ADD(0, X)            LOAD
// LOAD = ADD(0, X) is X itself (e = 127 included) unless X's exponent
// wrapped to 0, which reads as zero.
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
                wire [21:0] xv, sum;

                acc_convert u_cvt (.dot(dot), .sa(sa), .sb(sb), .anchor(anchor), .x(xv));
                acc_add u_add (.x(accumulate ? acc_in[(4*gi+gj)*22 +: 22] : 22'd0), .y(xv), .z(sum));

                assign acc_out[(4*gi+gj)*22 +: 22] = sum;
            end
        end
    endgenerate
endmodule
`default_nettype wire
