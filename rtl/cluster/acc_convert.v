`default_nettype none
// acc_convert: units.md C.7.3, the conversion of one exact K-block dot product
// D into S1E7M14 (combinational; models/numerics/cluster.py acc_convert, bit
// for bit).
//
//   mag  = |D| * (8+Ma) * (8+Mb)                     exact, < 2^25
//   p    = index of mag's top set bit; n = mag << (29-p)
//   q    = n[29:15] rounded to nearest even on G = n[14], S = |n[13:0]
//   e    = (p + Ea + Eb - anchor - 6 + 63) mod 128   quirk A1: no clamp
//   a carry out of q adds one to e (mod 128) and leaves the fraction 0
//   x    = {D < 0, e, frac}; mag == 0 gives 0
// {Ea, Ma} is the scale byte of A lane i, {Eb, Mb} that of B lane j. A wrap
// to e = 0 makes the lane read as zero in the add that follows.
module acc_convert (
    input  wire [18:0] dot,      // two's complement, |D| <= 2^17
    input  wire [7:0]  sa,
    input  wire [7:0]  sb,
    input  wire [7:0]  anchor,
    output wire [21:0] x
);
    // index of the top set bit of a 25-bit magnitude (0 for zero; zero is handled apart)
    function automatic [4:0] top25(input [24:0] v);
        integer i;
        begin
            top25 = 5'd0;
            for (i = 0; i < 25; i = i + 1)
                if (v[i]) top25 = i[4:0];
        end
    endfunction

    wire [18:0] ndot = -dot;
    wire [17:0] dmag = dot[18] ? ndot[17:0] : dot[17:0];
    wire [24:0] mag  = {7'd0, dmag} * {21'd0, 1'b1, sa[2:0]} * {21'd0, 1'b1, sb[2:0]};
    wire [4:0]  p    = top25(mag);
    wire [29:0] n    = {5'd0, mag} << (5'd29 - p);
    wire [14:0] q    = n[29:15];
    wire        up   = n[14] & ((|n[13:0]) | q[0]);
    wire [15:0] qr   = {1'b0, q} + {15'd0, up};
    wire        cy   = qr[15];
    // mod-128 arithmetic: anchor[7] adds 128, which vanishes
    wire [6:0]  e0   = {2'd0, p} + {2'd0, sa[7:3]} + {2'd0, sb[7:3]} + 7'd57 - anchor[6:0];
    wire [6:0]  e    = e0 + {6'd0, cy};
    wire [13:0] frac = cy ? 14'd0 : qr[13:0];

    assign x = (mag == 25'd0) ? 22'd0 : {dot[18], e, frac};

    wire unused = &{1'b0, ndot[18], anchor[7], qr[14]};
endmodule
`default_nettype wire
