`default_nettype none
`timescale 1ns/1ps
// e8m15_tcu: the transcendentals of units.md V.6.4 on a = (s, e, m), a
// quadratic lookup in the coefficient table (vc_coeff_rom, generated from
// vec_tables.csv) evaluated in integers and rounded by PACK (e8m15_pack).
//
//   fsel  0 VEXP2, 1 VLOG2, 2 VINV, 3 VRSQRT
//
// Specials, checked first (z: e = 0, i: Inf, n: NaN):
//   EXP2   n -> NaN; (i or e > 134): s = 0 -> +Inf, s = 1 -> +0
//   LOG2   n, or s = 1 and not z -> NaN; i -> +Inf; z -> -Inf
//   INV    n -> NaN; z -> Inf of sign s; i -> 0 of sign s
//   RSQRT  n, or s = 1 and not z -> NaN; z -> +Inf; +i -> +0
// Lookup (idx, u), ext, ebase, sign:
//   EXP2   sh = min(134 - e, 26); r = floor((2^25 + m*2^10) / 2^sh);
//          R = floor(r/2) + (r mod 2); v = wrap25(s ? -R : R)  (the 25-bit wrap
//          is upstream defect D1: 128 <= |x| < 256 is taken modulo 256);
//          k = floor(v / 2^17); f = v mod 2^17; idx = f >> 12; u = f mod 2^12;
//          ext = 2^20; ebase = k + 107; sign 0
//   LOG2   idx = m >> 10; u = 4*(m mod 1024); ext = (e-127)*2^20; ebase 107; sign of F
//   INV    idx, u as LOG2; ext 0; ebase = 234 - e; sign s
//   RSQRT  par = (e even); idx = 32*par + (m >> 10); u as LOG2; ext 0;
//          ebase = 107 - floor((e-127)/2); sign 0
// Polynomial (key = fsel*64 + idx -> c0, c1, c2):
//   ident = (idx mod 32 == 0) and (u == 0) and not (RSQRT and par)
//   C0 = wrap30((ident ? (fsel >= 2 ? 2^20 : 0) : c0) + ext)
//   h  = wrap22(floor((c2*u + c1*2^16 + 2^15) / 2^16))
//   F  = wrap30(floor((h*u + C0*2^16 + 2^15) / 2^16))
//   r  = PACK(|F|, ebase, sign, stk = 0, cancel = 0)
module e8m15_tcu (
    input  wire [1:0]  fsel,
    input  wire [23:0] a,
    output wire [23:0] r
);
    localparam [1:0] F_EXP2 = 2'd0, F_LOG2 = 2'd1, F_INV = 2'd2, F_RSQRT = 2'd3;

    wire        s = a[23];
    wire [7:0]  e = a[22:15];
    wire [14:0] m = a[14:0];
    wire        is_z = (e == 8'd0);
    wire        is_i = (e == 8'hFF) && (m == 15'd0);
    wire        is_n = (e == 8'hFF) && (m != 15'd0);

    // --- EXP2 argument reduction ------------------------------------------------
    wire [7:0]  sh8  = 8'd134 - e;                              // 0..25 when 108 < e <= 134
    wire [4:0]  sh   = (e <= 8'd108) ? 5'd26 : (e <= 8'd134) ? sh8[4:0] : 5'd0;
    wire [25:0] rr   = {1'b1, m, 10'd0} >> sh;                 // |x| * 2^18, truncated
    wire [24:0] rh   = rr[25:1] + {24'd0, rr[0]};             // |x| * 2^17, half away from 0
    wire [24:0] v    = s ? (25'd0 - rh) : rh;                   // wrap25 (D1)
    wire [7:0]  k    = v[24:17];                                // floor(v / 2^17), signed
    wire [4:0]  x_idx = v[16:12];
    wire [11:0] x_u   = v[11:0];

    // --- table lookup -------------------------------------------------------------
    wire        par  = ~e[0];
    wire [5:0]  idx  = (fsel == F_EXP2)  ? {1'b0, x_idx}
                     : (fsel == F_RSQRT) ? {par, m[14:10]}
                     :                     {1'b0, m[14:10]};
    wire [11:0] u    = (fsel == F_EXP2) ? x_u : {m[9:0], 2'b00};
    wire signed [21:0] c0, c1, c2;
    vc_coeff_rom u_rom (.key({fsel, idx}), .c0(c0), .c1(c1), .c2(c2));

    wire ident = (idx[4:0] == 5'd0) && (u == 12'd0) && !((fsel == F_RSQRT) && par);

    // ext and the ident constant, 30-bit two's complement
    wire signed [8:0]  e_unb = $signed({1'b0, e}) - 9'sd127;   // e - 127
    wire signed [29:0] ext   = (fsel == F_EXP2) ? 30'sd1048576
                             : (fsel == F_LOG2) ? {{1{e_unb[8]}}, e_unb, 20'd0}
                             :                    30'sd0;
    wire signed [29:0] c0_id = ident ? ((fsel[1]) ? 30'sd1048576 : 30'sd0) : {{8{c0[21]}}, c0};
    wire signed [29:0] cc0   = c0_id + ext;                     // wrap30

    // --- polynomial -----------------------------------------------------------------
    wire signed [39:0] c2w = {{18{c2[21]}}, c2};
    wire signed [39:0] uw  = {28'd0, u};
    wire signed [39:0] t1  = c2w * uw + {{2{c1[21]}}, c1, 16'd0} + 40'sd32768;
    wire signed [21:0] h   = t1[37:16];                         // wrap22(floor(t1 / 2^16))
    wire signed [47:0] hw  = {{26{h[21]}}, h};
    wire signed [47:0] uw2 = {36'd0, u};
    wire signed [47:0] t2  = hw * uw2 + {{2{cc0[29]}}, cc0, 16'd0} + 48'sd32768;
    wire signed [29:0] f   = t2[45:16];                         // wrap30(floor(t2 / 2^16))
    wire [29:0]        f_abs = f[29] ? (30'd0 - f) : f;

    // --- exponent base and sign ------------------------------------------------------
    wire signed [9:0] e_half = {{2{e_unb[8]}}, e_unb[8:1]};     // floor((e - 127) / 2)
    wire signed [9:0] ebase  = (fsel == F_EXP2)  ? ({{2{k[7]}}, k} + 10'sd107)
                             : (fsel == F_LOG2)  ? 10'sd107
                             : (fsel == F_INV)   ? (10'sd234 - {2'd0, e})
                             :                     (10'sd107 - e_half);
    wire sign = (fsel == F_LOG2) ? f[29] : (fsel == F_INV) ? s : 1'b0;

    wire [23:0] pk;
    e8m15_pack u_pack (.mag({18'd0, f_abs}), .ebase(ebase), .sign(sign), .stk(1'b0), .cancel(1'b0),
                       .r(pk));

    // --- specials ---------------------------------------------------------------------
    // {hit, value}: a function, so r changes once per input change.
    localparam [23:0] QNAN = 24'h7FC000, PINF = 24'h7F8000, NINF = 24'hFF8000, PZERO = 24'h000000;
    function [24:0] special(input [1:0] fs, input sa, input [7:0] ea, input z, input i, input n);
        begin
            special = {1'b0, PZERO};
            case (fs)
                F_EXP2:
                    if (n)                       special = {1'b1, QNAN};
                    else if (i || ea > 8'd134)   special = {1'b1, sa ? PZERO : PINF};
                F_LOG2:
                    if (n || (sa && !z))         special = {1'b1, QNAN};
                    else if (i)                  special = {1'b1, PINF};
                    else if (z)                  special = {1'b1, NINF};
                F_INV:
                    if (n)                       special = {1'b1, QNAN};
                    else if (z)                  special = {1'b1, sa, 8'hFF, 15'd0};
                    else if (i)                  special = {1'b1, sa, 23'd0};
                default:  // F_RSQRT
                    if (n || (sa && !z))         special = {1'b1, QNAN};
                    else if (z)                  special = {1'b1, PINF};
                    else if (i)                  special = {1'b1, PZERO};
            endcase
        end
    endfunction

    wire [24:0] spc = special(fsel, s, e, is_z, is_i, is_n);
    assign r = spc[24] ? spc[23:0] : pk;

    wire unused = &{1'b0, sh8[7:5], t1[39:38], t1[15:0], t2[47:46], t2[15:0]};
endmodule
`default_nettype wire
