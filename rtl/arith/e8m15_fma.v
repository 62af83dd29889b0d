`default_nettype none
`timescale 1ns/1ps
// e8m15_fma: r = x*y + z, the FMA datapath of units.md V.6.3, through which
// every op of the V.6.2 operand-selection table is evaluated (vc_alu picks
// x, y, z). Not correctly rounded: it reproduces the departures listed in
// V.6.3 (a zero addend sets the sticky, so ties round away from zero (D2);
// the plain sticky of a partly shifted-out addend; the bypass returns Z; the
// signed-zero rules of `sign`/`cancel`; every NaN is 0x7FC000).
//
//   zX = (eX == 0), zY = (eY == 0)   exponent 0 is zero whatever m holds
//   pz = zX or zY ; ex = pz ? 1 : eX ; ey = pz ? 1 : eY
//   sXY = sX ^ sY ; neg = sXY ^ sZ ; cz = (eZ == 0)
//   d = ex + ey - eZ - 110 ; byp = (d < 0) and not cz
//   s = cz ? 48 : (byp ? 0 : min(d, 48))
//   ebase = byp ? eZ - 47 : ex + ey - 157
//   add = floor(gZ * 2^32 / 2^s) ; stk = (s >= 33) and (gZ mod 2^min(s-32,16) != 0)
//   prod = (byp or pz) ? 0 : gX * gY
//   P = neg ? add - prod : add + prod        (mod 2^48)
//   rneg = neg and s != 0 and P >= 2^47 ; mag = rneg ? (-P) mod 2^33 : P
//   sign = neg ? (rneg ? sXY : sZ) : sXY ; cancel = neg and not pz and not cz
// Special values override, in this order: NaN (pNaN, Z NaN, Inf - Inf) ->
// 0x7FC000; Inf -> {pInf ? sXY : sZ, 0xFF, 0}; else PACK (e8m15_pack).
module e8m15_fma (
    input  wire [23:0] x,
    input  wire [23:0] y,
    input  wire [23:0] z,
    output wire [23:0] r
);
    wire        sx = x[23], sy = y[23], sz = z[23];
    wire [7:0]  ex_in = x[22:15], ey_in = y[22:15], ez = z[22:15];
    wire [15:0] gx = {1'b1, x[14:0]};
    wire [15:0] gy = {1'b1, y[14:0]};
    wire [15:0] gz = {1'b1, z[14:0]};

    wire zx = (ex_in == 8'd0);
    wire zy = (ey_in == 8'd0);
    wire cz = (ez == 8'd0);
    wire x_inf = (ex_in == 8'hFF) && (x[14:0] == 15'd0);
    wire y_inf = (ey_in == 8'hFF) && (y[14:0] == 15'd0);
    wire z_inf = (ez == 8'hFF) && (z[14:0] == 15'd0);
    wire x_nan = (ex_in == 8'hFF) && (x[14:0] != 15'd0);
    wire y_nan = (ey_in == 8'hFF) && (y[14:0] != 15'd0);
    wire z_nan = (ez == 8'hFF) && (z[14:0] != 15'd0);

    // --- datapath ---------------------------------------------------------
    wire       pz  = zx | zy;
    wire [7:0] ex  = pz ? 8'd1 : ex_in;
    wire [7:0] ey  = pz ? 8'd1 : ey_in;
    wire       sxy = sx ^ sy;
    wire       neg = sxy ^ sz;

    wire [9:0]         exy = {2'd0, ex} + {2'd0, ey};                  // 2..510
    wire signed [10:0] d   = {1'b0, exy} - {3'd0, ez} - 11'sd110;      // -363..400
    wire               byp = d[10] & ~cz;
    wire [5:0]         s   = cz ? 6'd48 : byp ? 6'd0 : (d > 11'sd48) ? 6'd48 : d[5:0];
    wire signed [9:0]  ebase = byp ? ({2'd0, ez} - 10'sd47) : (exy - 10'sd157);

    // gZ * 2^48 / 2^s: bits [63:16] are add, bits [15:0] hold every bit of gZ
    // shifted out (s <= 48, and gZ * 2^32 has zeros below bit 32).
    wire [63:0] zsh  = {gz, 48'd0} >> s;
    wire [47:0] add  = zsh[63:16];
    wire        stk  = (s >= 6'd33) && (zsh[15:0] != 16'd0);
    wire [31:0] prod = (byp | pz) ? 32'd0 : gx * gy;
    wire [47:0] sum  = neg ? (add - {16'd0, prod}) : (add + {16'd0, prod});
    wire        rneg = neg && (s != 6'd0) && sum[47];
    wire [47:0] nsum = 48'd0 - sum;
    wire [47:0] mag  = rneg ? {15'd0, nsum[32:0]} : sum;
    wire        sign = neg ? (rneg ? sxy : sz) : sxy;
    wire        cancel = neg & ~pz & ~cz;

    wire [23:0] pk;
    e8m15_pack u_pack (.mag(mag), .ebase(ebase), .sign(sign), .stk(stk), .cancel(cancel), .r(pk));

    // --- special values -----------------------------------------------------
    wire p_nan  = x_nan | y_nan | (x_inf & zy) | (zx & y_inf);
    wire p_inf  = (x_inf | y_inf) & ~p_nan;
    wire is_nan = p_nan | z_nan | (p_inf & z_inf & (sxy != sz));
    wire is_inf = (p_inf | z_inf) & ~is_nan;

    assign r = is_nan ? 24'h7FC000
             : is_inf ? {p_inf ? sxy : sz, 8'hFF, 15'd0}
             :          pk;

    wire unused = &{1'b0, nsum[47:33]};
endmodule
`default_nettype wire
