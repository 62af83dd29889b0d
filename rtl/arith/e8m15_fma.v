`default_nettype none
// e8m15_fma: y = (+-a*b) + (+-c) with ONE rounding (nearest even), the
// datapath of VFMA (a*b+c), VFNMA (c-a*b, neg_prod=1), VADD/VSUB (b = 1.0)
// and VMUL (c = -0).  Exact 32-bit product, aligned with the addend by
// fp_align_add (4 guard bits, jammed sticky), rounded by e8m15_round_pack
// (flush under 2^-126, Inf from 2^128).  Zero sign: (-0)+(-0) = -0, any other
// exact zero is +0.  IEEE special cases: NaN in -> NaN, Inf*0 and
// Inf-Inf -> NaN (0x7FC000), otherwise an Inf operand decides.
module e8m15_fma (
    input  wire [23:0] a,
    input  wire [23:0] b,
    input  wire [23:0] c,
    input  wire        neg_prod,
    input  wire        neg_add,
    output wire [23:0] y
);
    wire               sa, sb, sc0;
    wire [15:0]        ma, mb, mc;
    wire signed [11:0] la, lb, lc;
    wire               za, zb, zc, ia, ib, ic, na, nb, nc;

    e8m15_unpack u_a (.x(a), .sign(sa),  .sig(ma), .lsb_exp(la), .is_zero(za), .is_inf(ia), .is_nan(na));
    e8m15_unpack u_b (.x(b), .sign(sb),  .sig(mb), .lsb_exp(lb), .is_zero(zb), .is_inf(ib), .is_nan(nb));
    e8m15_unpack u_c (.x(c), .sign(sc0), .sig(mc), .lsb_exp(lc), .is_zero(zc), .is_inf(ic), .is_nan(nc));

    wire               sp = sa ^ sb ^ neg_prod;
    wire               sc = sc0 ^ neg_add;
    wire [31:0]        mp = ma * mb;
    wire signed [11:0] lp = la + lb;

    wire               s_sum;
    wire [36:0]        mag;
    wire signed [11:0] lsb;

    fp_align_add #(.W(32), .G(4), .EW(12)) u_add (
        .sx(sp), .mx(mp), .ex(lp),
        .sy(sc), .my({mc, 16'd0}), .ey(lc - 12'sd16),
        .s(s_sum), .mag(mag), .lsb_exp(lsb)
    );

    wire p_zero = za | zb;
    wire zsign  = (p_zero & zc) ? (sp & sc) : 1'b0;
    wire sign   = (mag == 37'd0) ? zsign : s_sum;
    wire [23:0] r;

    e8m15_round_pack #(.W(37)) u_pack (
        .sign(sign), .mag(mag), .lsb_exp(lsb), .sticky(1'b0), .y(r)
    );

    wire p_inf = ia | ib;
    wire nan   = na | nb | nc | (p_inf & p_zero) | (p_inf & ic & (sp != sc));

    assign y = nan   ? 24'h7FC000
             : p_inf ? {sp, 8'hFF, 15'd0}
             : ic    ? {sc, 8'hFF, 15'd0}
             :         r;
endmodule
`default_nettype wire
