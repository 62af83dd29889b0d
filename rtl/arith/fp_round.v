`default_nettype none
// fp_round: round an exact magnitude to P significant bits, nearest even.
//
// In : value = mag * 2^lsb_exp, plus (sticky=1) a fraction of one lsb.
// Out: value = sig * 2^(msb_exp - P + 1), sig < 2^P.  sig[P-1] is set unless
//      the result is zero or lies under the gradual-underflow floor: the lsb
//      of the result never goes below EMIN (pass a very negative EMIN for a
//      format that flushes instead).  A carry out of the top bit is
//      renormalised.  Same definition as models/numerics/rounding.py
//      round_nearest_even(); sticky is only meaningful when mag has more than
//      P bits.  Needs W < 64.  Combinational; word-level shifts only.
module fp_round #(
    parameter integer W    = 32,    // magnitude width
    parameter integer P    = 16,    // precision, leading one included
    parameter integer EW   = 12,    // exponent width (two's complement)
    parameter integer EMIN = -2000  // smallest lsb exponent of the result
) (
    input  wire [W-1:0]         mag,
    input  wire signed [EW-1:0] lsb_exp,
    input  wire                 sticky,
    output wire [P-1:0]         sig,
    output wire signed [EW-1:0] msb_exp,
    output wire                 zero
);
    localparam integer KW = (W > P ? W : P) + 1;  // kept bits and the carry
    localparam integer XW = EW + 3;                // exponent arithmetic
    localparam integer I_WM1  = W - 1;
    localparam integer I_PM1  = P - 1;
    localparam integer I_SMAX = W + 1;             // larger right shifts round to zero
    localparam [XW-1:0] C_WM1  = I_WM1[XW-1:0];
    localparam [XW-1:0] C_PM1  = I_PM1[XW-1:0];
    localparam [XW-1:0] C_EMIN = EMIN[XW-1:0];
    localparam [XW-1:0] C_SMAX = I_SMAX[XW-1:0];
    localparam [XW-1:0] C_LMAX = KW[XW-1:0];

    // Leading zeros of a 64-bit word in six halving steps (63 for zero).
    function automatic [6:0] clz64(input [63:0] v);
        reg [63:0] t;
        reg [6:0]  n;
        begin
            t = v;
            n = 7'd0;
            if (t[63:32] == 32'd0) begin n = n + 7'd32; t = t << 32; end
            if (t[63:48] == 16'd0) begin n = n + 7'd16; t = t << 16; end
            if (t[63:56] == 8'd0)  begin n = n + 7'd8;  t = t << 8;  end
            if (t[63:60] == 4'd0)  begin n = n + 7'd4;  t = t << 4;  end
            if (t[63:62] == 2'd0)  begin n = n + 7'd2;  t = t << 2;  end
            if (t[63] == 1'b0)     n = n + 7'd1;
            clz64 = n;
        end
    endfunction

    wire [63:0]          padded = {mag, {(64 - W){1'b0}}};
    wire [6:0]           lz     = clz64(padded);
    wire signed [XW-1:0] lsb_x  = {{(XW - EW){lsb_exp[EW-1]}}, lsb_exp};
    wire signed [XW-1:0] lz_x   = $signed({{(XW - 7){1'b0}}, lz});
    wire signed [XW-1:0] e_top  = lsb_x + $signed(C_WM1) - lz_x;      // exponent of the top set bit
    wire signed [XW-1:0] out_n  = e_top - $signed(C_PM1);             // lsb exponent for P bits
    wire signed [XW-1:0] out_l  = (out_n < $signed(C_EMIN)) ? $signed(C_EMIN) : out_n;
    wire signed [XW-1:0] sh     = out_l - lsb_x;                      // > 0: bits dropped

    // right shift with guard (first dropped bit) and sticky (the rest)
    wire [XW-1:0]  shr  = (sh < 0) ? {XW{1'b0}} : ((sh > $signed(C_SMAX)) ? C_SMAX : sh);
    wire [2*W-1:0] wide = {mag, {W{1'b0}}} >> shr;
    wire [W-1:0]   kr   = wide[2*W-1:W];
    wire           g    = wide[W-1];
    wire           st   = (|wide[W-2:0]) | sticky;
    wire           up   = g & (st | kr[0]);
    // left shift (the value has fewer than P bits): exact
    wire [XW-1:0]  negsh = -sh;
    wire [XW-1:0]  shl   = (sh >= 0) ? {XW{1'b0}} : ((negsh > C_LMAX) ? C_LMAX : negsh);
    wire [KW-1:0]  kl    = {{(KW - W){1'b0}}, mag} << shl;

    wire [KW-1:0]  kept  = (sh < 0) ? kl : ({{(KW - W){1'b0}}, kr} + {{(KW - 1){1'b0}}, up});
    wire           carry = kept[P];
    wire signed [XW-1:0] msb_x = out_l + $signed(C_PM1) + $signed({{(XW - 1){1'b0}}, carry});

    assign sig     = carry ? kept[P:1] : kept[P-1:0];
    assign msb_exp = msb_x[EW-1:0];
    assign zero    = (kept == {KW{1'b0}});

    wire unused = &{1'b0, msb_x[XW-1:EW], kept[KW-1:P], kl[KW-1:P]};
endmodule
`default_nettype wire
