`default_nettype none
// acc_add: units.md C.7.4, the accumulator add z = ADD(T = x, X = y) on
// S1E7M14 {s, e[6:0], m[13:0]} (combinational; models/numerics/cluster.py
// acc_add, bit for bit). LOAD is ADD(0, X), ADD / ADD_EMIT ADD(T, X),
// ADD_PEER ADD(T, peer lane).
//
//   eT = eX = 0 -> 0; eT = 0 -> X unchanged; eX = 0 -> T unchanged
//   big = the operand with the larger (e, m) (T on a tie), small the other
//   BG = {1, m_big, 8'b0}, SM = {1, m_small, 8'b0}, d = min(e_big - e_small, 23)
//   sum = BG -/+ (SM >> d) (effective subtraction / addition), lost = SM's
//   shifted-out bits != 0; sum = 0 -> 0
//   normalise to the top bit t; E = e_big + t - 22; q = n[23:9], G = n[8],
//   S = lost | n[7:0] != 0 (quirk A2: the plain sticky); round half even
//   E <= 0 -> +0; E >= 127 -> {s_big, 127, 0x3FFF} (quirk A3); the sign is
//   the larger magnitude's.
module acc_add (
    input  wire [21:0] x,
    input  wire [21:0] y,
    output wire [21:0] z
);
    function automatic [4:0] top24(input [23:0] v);
        integer i;
        begin
            top24 = 5'd0;
            for (i = 0; i < 24; i = i + 1)
                if (v[i]) top24 = i[4:0];
        end
    endfunction

    wire        xz = (x[20:14] == 7'd0);
    wire        yz = (y[20:14] == 7'd0);
    wire        x_big = (x[20:0] >= y[20:0]);      // (e, m) lexicographic = the unsigned 21 bits
    wire        s_b = x_big ? x[21] : y[21];
    wire [6:0]  e_b = x_big ? x[20:14] : y[20:14];
    wire [13:0] m_b = x_big ? x[13:0] : y[13:0];
    wire        s_s = x_big ? y[21] : x[21];
    wire [6:0]  e_s = x_big ? y[20:14] : x[20:14];
    wire [13:0] m_s = x_big ? y[13:0] : x[13:0];

    wire        sub  = s_b ^ s_s;
    wire [6:0]  dd   = e_b - e_s;
    wire [4:0]  d    = (dd > 7'd23) ? 5'd23 : dd[4:0];
    wire [22:0] bg   = {1'b1, m_b, 8'd0};
    wire [22:0] sm   = {1'b1, m_s, 8'd0};
    wire [22:0] sh   = sm >> d;
    wire        lost = (sh << d) != sm;
    wire [23:0] sum  = sub ? ({1'b0, bg} - {1'b0, sh}) : ({1'b0, bg} + {1'b0, sh});
    wire [4:0]  t    = top24(sum);
    wire [23:0] n    = sum << (5'd23 - t);
    wire [14:0] q    = n[23:9];
    wire        up   = n[8] & (lost | (|n[7:0]) | q[0]);
    wire [8:0]  e0   = {2'd0, e_b} + {4'd0, t} - 9'd22;        // two's complement, -21..128
    wire [8:0]  e1   = e0 + {8'd0, up & (q == 15'h7FFF)};
    wire [14:0] q1   = q + {14'd0, up};
    wire        flush = e1[8] || (e1 == 9'd0);                  // E <= 0
    wire        top   = !e1[8] && (e1 >= 9'd127);               // E >= 127

    assign z = (xz && yz)      ? 22'd0 :
               xz              ? y :
               yz              ? x :
               (sum == 24'd0)  ? 22'd0 :
               flush           ? 22'd0 :
               top             ? {s_b, 7'h7F, 14'h3FFF} :
                                 {s_b, e1[6:0], q1[13:0]};

    wire unused = &{1'b0, q1[14]};
endmodule
`default_nettype wire
