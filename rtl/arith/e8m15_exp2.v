`default_nettype none
// e8m15_exp2: VEXP2, y = 2^x (models/numerics/e8m15.py vexp2, bit for bit).
//
//   X = floor(x * 2^28)                 two's complement, |x| < 256
//   n = X >>> 28,  f = X mod 2^28       x = n + f/2^28, 0 <= f < 2^28
//   t = TABLE[f >> 22]                  round(2^(i/64) * 2^30)
//   y' = f mod 2^22                     z = y'/2^28 < 2^-6
//   h = (C3*y') >> 28; h = ((h+C2)*y') >> 28; h = ((h+C1)*y') >> 28
//   p = 2^30 + h                        2^z in Q.30 (cubic Taylor)
//   r = (t * p) >> 30                   2^(f/2^28) in Q.30
//   y = r * 2^(n-30)                    rounded once, nearest even; Inf from
//                                       2^128, flushed to +0 under 2^-126
// Special cases: |x| >= 256 gives +Inf (x > 0) or +0; +-0 -> 1.0 (by the
// datapath); +Inf -> +Inf; -Inf -> +0; NaN -> 0x7FC000.
module e8m15_exp2 (
    input  wire [23:0] x,
    output wire [23:0] y
);
    localparam [25:0] C3 = 26'd59597083;   // ln2^3/6 * 2^30
    localparam [27:0] C2 = 28'd257941248;  // ln2^2/2 * 2^30
    localparam [29:0] C1 = 30'd744261118;  // ln2     * 2^30

    function automatic [30:0] table64(input [5:0] i);
        reg [30:0] t;
        begin
            case (i)
                6'd0 : t = 31'd1073741824;
                6'd1 : t = 31'd1085434106;
                6'd2 : t = 31'd1097253708;
                6'd3 : t = 31'd1109202018;
                6'd4 : t = 31'd1121280436;
                6'd5 : t = 31'd1133490379;
                6'd6 : t = 31'd1145833280;
                6'd7 : t = 31'd1158310587;
                6'd8 : t = 31'd1170923762;
                6'd9 : t = 31'd1183674286;
                6'd10: t = 31'd1196563654;
                6'd11: t = 31'd1209593378;
                6'd12: t = 31'd1222764986;
                6'd13: t = 31'd1236080024;
                6'd14: t = 31'd1249540052;
                6'd15: t = 31'd1263146652;
                6'd16: t = 31'd1276901417;
                6'd17: t = 31'd1290805962;
                6'd18: t = 31'd1304861917;
                6'd19: t = 31'd1319070932;
                6'd20: t = 31'd1333434672;
                6'd21: t = 31'd1347954824;
                6'd22: t = 31'd1362633090;
                6'd23: t = 31'd1377471191;
                6'd24: t = 31'd1392470869;
                6'd25: t = 31'd1407633882;
                6'd26: t = 31'd1422962010;
                6'd27: t = 31'd1438457051;
                6'd28: t = 31'd1454120821;
                6'd29: t = 31'd1469955159;
                6'd30: t = 31'd1485961921;
                6'd31: t = 31'd1502142985;
                6'd32: t = 31'd1518500250;
                6'd33: t = 31'd1535035634;
                6'd34: t = 31'd1551751076;
                6'd35: t = 31'd1568648537;
                6'd36: t = 31'd1585730000;
                6'd37: t = 31'd1602997467;
                6'd38: t = 31'd1620452965;
                6'd39: t = 31'd1638098541;
                6'd40: t = 31'd1655936265;
                6'd41: t = 31'd1673968228;
                6'd42: t = 31'd1692196547;
                6'd43: t = 31'd1710623359;
                6'd44: t = 31'd1729250827;
                6'd45: t = 31'd1748081133;
                6'd46: t = 31'd1767116489;
                6'd47: t = 31'd1786359126;
                6'd48: t = 31'd1805811301;
                6'd49: t = 31'd1825475297;
                6'd50: t = 31'd1845353420;
                6'd51: t = 31'd1865448001;
                6'd52: t = 31'd1885761398;
                6'd53: t = 31'd1906295993;
                6'd54: t = 31'd1927054196;
                6'd55: t = 31'd1948038440;
                6'd56: t = 31'd1969251188;
                6'd57: t = 31'd1990694927;
                6'd58: t = 31'd2012372174;
                6'd59: t = 31'd2034285470;
                6'd60: t = 31'd2056437387;
                6'd61: t = 31'd2078830522;
                6'd62: t = 31'd2101467502;
                6'd63: t = 31'd2124350982;
                default: t = 31'd0;
            endcase
            table64 = t;
        end
    endfunction

    wire               s;
    wire [15:0]        sig;
    wire signed [11:0] lsb;
    wire               is_zero, is_inf, is_nan;

    e8m15_unpack u_unpack (
        .x(x), .sign(s), .sig(sig), .lsb_exp(lsb),
        .is_zero(is_zero), .is_inf(is_inf), .is_nan(is_nan)
    );

    // |X| = sig * 2^sh with sh = e + 13 (e = lsb + 15 the unbiased exponent)
    wire signed [11:0] e   = lsb + 12'sd15;
    wire signed [11:0] sh  = e + 12'sd13;
    wire               big = !is_zero && !is_inf && !is_nan && (e >= 12'sd8);
    wire [4:0]  shl  = (sh < 12'sd0) ? 5'd0 : (sh > 12'sd20) ? 5'd20 : sh[4:0];
    wire [11:0] nsh  = -sh;
    wire [4:0]  shr  = (sh >= 12'sd0) ? 5'd0 : (nsh > 12'd31) ? 5'd31 : nsh[4:0];
    wire [35:0] xa_l = {20'd0, sig} << shl;
    wire [15:0] xa_r = sig >> shr;
    wire        lost = (sh < 12'sd0) && ((xa_r << shr) != sig);
    wire [35:0] xa   = (sh >= 12'sd0) ? xa_l : {20'd0, xa_r};
    wire [36:0] xpos = {1'b0, xa} + {36'd0, lost};
    wire [36:0] xfix = s ? -xpos : xpos;               // floor(x * 2^28)

    wire signed [11:0] n = {{3{xfix[36]}}, xfix[36:28]};
    wire [27:0] f  = xfix[27:0];
    wire [21:0] yy = f[21:0];
    wire [30:0] t  = table64(f[27:22]);

    wire [47:0] h3 = C3 * yy;
    wire [27:0] s2 = {8'd0, h3[47:28]} + C2;
    wire [49:0] h2 = s2 * yy;
    wire [29:0] s1 = {8'd0, h2[49:28]} + C1;
    wire [51:0] h1 = s1 * yy;
    wire [30:0] p  = 31'h4000_0000 + {7'd0, h1[51:28]};
    wire [61:0] tp = t * p;
    wire [31:0] r  = tp[61:30];

    wire [23:0] packed_y;
    e8m15_round_pack #(.W(32)) u_pack (
        .sign(1'b0), .mag(r), .lsb_exp(n - 12'sd30), .sticky(1'b0), .y(packed_y)
    );

    assign y = is_nan           ? 24'h7FC000
             : (big | is_inf)   ? (s ? 24'h000000 : 24'h7F8000)
             :                    packed_y;

    wire unused = &{1'b0, h3[27:0], h2[27:0], h1[27:0], tp[29:0], nsh[11:5]};
endmodule
`default_nettype wire
