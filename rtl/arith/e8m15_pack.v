`default_nettype none
`timescale 1ns/1ps
// e8m15_pack: PACK of units.md V.6.3, the one normaliser and rounder of the
// vector core's lane arithmetic (the FMA datapath of V.6.3 and the
// transcendentals of V.6.4 both end here).
//
//   mag     48-bit unsigned magnitude
//   ebase   signed exponent base: the biased result exponent is E = p + ebase,
//           p the index of the top set bit of mag
//   sign    sign of a non-zero result
//   stk     extra sticky (OR-ed into the bits below the guard bit)
//   cancel  an effective subtraction of two non-zero terms: a zero mag is +0
//   r       the E8M15 result
//
//   mag == 0  -> {sign and not cancel, 0, 0}
//   n = mag * 2^(47-p); q = n[47:32]; G = n[31]; S = (n[30:0] != 0) or stk
//   q += G and (S or q[0])            round to nearest even on the bits seen
//   q == 2^16 -> q = 2^15, p = p + 1
//   E = p + ebase; E >= 255 -> {sign, 0xFF, 0}; E <= 0 -> {sign, 0, 0};
//   else {sign, E, q - 2^15}
module e8m15_pack (
    input  wire [47:0]       mag,
    input  wire signed [9:0] ebase,
    input  wire              sign,
    input  wire              stk,
    input  wire              cancel,
    output wire [23:0]       r
);
    // Normalise with a logarithmic shifter: lz = 47 - p, one bit per stage.
    wire        z32 = (mag[47:16] == 32'd0);
    wire [47:0] n1  = z32 ? {mag[15:0], 32'd0} : mag;
    wire        z16 = (n1[47:32] == 16'd0);
    wire [47:0] n2  = z16 ? {n1[31:0], 16'd0} : n1;
    wire        z8  = (n2[47:40] == 8'd0);
    wire [47:0] n3  = z8 ? {n2[39:0], 8'd0} : n2;
    wire        z4  = (n3[47:44] == 4'd0);
    wire [47:0] n4  = z4 ? {n3[43:0], 4'd0} : n3;
    wire        z2  = (n4[47:46] == 2'd0);
    wire [47:0] n5  = z2 ? {n4[45:0], 2'd0} : n4;
    wire        z1  = ~n5[47];
    wire [47:0] n   = z1 ? {n5[46:0], 1'b0} : n5;
    wire [5:0]  lz  = {z32, z16, z8, z4, z2, z1};   // 0..47 when mag != 0

    wire [15:0] q    = n[47:32];
    wire        g    = n[31];
    wire        s    = (n[30:0] != 31'd0) | stk;
    wire        inc  = g & (s | q[0]);
    wire [16:0] qr   = {1'b0, q} + {16'd0, inc};
    wire        ovf  = qr[16];                      // q == 2^16: the fraction is 0
    wire [5:0]  p    = 6'd47 - lz + {5'd0, ovf};    // 0..48

    wire signed [11:0] e_res = {{2{ebase[9]}}, ebase} + {6'd0, p};

    assign r = (mag == 48'd0)        ? {sign & ~cancel, 23'd0}
             : (e_res >= 12'sd255)   ? {sign, 8'hFF, 15'd0}
             : (e_res <= 12'sd0)     ? {sign, 23'd0}
             :                         {sign, e_res[7:0], qr[14:0]};

    wire unused = &{1'b0, qr[15]};
endmodule
`default_nettype wire
