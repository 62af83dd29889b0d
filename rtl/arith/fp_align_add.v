`default_nettype none
// fp_align_add: signed sum of two W-bit magnitudes with lsb exponents, ready
// for fp_round.  The operand with the larger lsb exponent (a non-zero one if
// any) is kept exactly, shifted left by G guard bits; the other is shifted
// right to align and every bit shifted out is ORed into its lsb (jamming).
// Inputs must have their top set bit at W-1 or W-2 (or be zero); then G >= 4
// makes the jammed sum round exactly like the true sum to up to W bits (see
// docs/numerics.md).  mag == 0 only for an exact zero sum; the caller decides
// the sign of zero.  Same definition as models/numerics/rounding.py align_add().
module fp_align_add #(
    parameter integer W  = 16,
    parameter integer G  = 4,
    parameter integer EW = 12
) (
    input  wire                 sx,
    input  wire [W-1:0]         mx,
    input  wire signed [EW-1:0] ex,
    input  wire                 sy,
    input  wire [W-1:0]         my,
    input  wire signed [EW-1:0] ey,
    output wire                 s,
    output wire [W+G:0]         mag,
    output wire signed [EW-1:0] lsb_exp
);
    localparam integer  I_DMAX = W + G + 1;         // shifting further leaves only the sticky bit
    localparam [EW:0]   C_DMAX = I_DMAX[EW:0];
    localparam [EW-1:0] C_G    = G[EW-1:0];

    wire swap = (mx == {W{1'b0}}) | ((my != {W{1'b0}}) & (ey > ex));
    wire                 s_b = swap ? sy : sx;
    wire [W-1:0]         m_b = swap ? my : mx;
    wire signed [EW-1:0] e_b = swap ? ey : ex;
    wire                 s_s = swap ? sx : sy;
    wire [W-1:0]         m_s = swap ? mx : my;
    wire signed [EW-1:0] e_s = swap ? ex : ey;

    wire signed [EW:0] dd = {e_b[EW-1], e_b} - {e_s[EW-1], e_s};
    wire [EW:0]        d  = dd[EW] ? {(EW + 1){1'b0}} : (($unsigned(dd) > C_DMAX) ? C_DMAX : $unsigned(dd));

    wire [W+G-1:0] yg   = {m_s, {G{1'b0}}};
    wire [W+G-1:0] ya0  = yg >> d;
    wire           lost = (ya0 << d) != yg;
    wire [W+G:0]   ya   = {1'b0, ya0[W+G-1:1], ya0[0] | lost};
    wire [W+G:0]   xg   = {1'b0, m_b, {G{1'b0}}};
    wire           same = (s_b == s_s);
    wire           neg  = !same && (ya > xg);

    assign mag     = same ? (xg + ya) : (neg ? (ya - xg) : (xg - ya));
    assign s       = neg ? s_s : s_b;
    assign lsb_exp = e_b - C_G;
endmodule
`default_nettype wire
