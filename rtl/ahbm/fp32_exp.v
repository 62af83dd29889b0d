`default_nettype none
// fp32_exp: y = exp_f32(x) of models/ahbm/numerics.py, bit for bit.
// Combinational; every fp32 step is one fp32_mul / fp32_add instance, in the
// model's order (no fusing):
//   E0  NaN -> 32'h7FC00000; x > 88.7 (32'h42B16666, incl. +inf) -> +inf;
//       x < -88.0 (32'hC2B00000, incl. -inf) -> +0  (this priority).
//       Otherwise xs = x (the model computes on xs = 0 for the screened
//       lanes; their result is replaced, so xs is set to +0 there too).
//   E1  t  = xs * LOG2E                      (32'h3FB8AA3B)
//   E2  n  = rint(t), half to even, integer (|t| < 128 so n fits 9 bits)
//   E3  nf = float(n) (exact; n = 0 gives +0)
//   E4  r1 = xs - nf * LN2_HI                (32'h3F317200)
//   E5  r  = r1 - nf * LN2_LO                (32'h35BFBE8E)
//   E6  p = C7; p = p * r + C_k, k = 6..0    (C_k = fp32(1/k!))
//   E7  E = p[30:23] + n; E <= 0 -> +0; E >= 255 -> +inf;
//       else bits(p) + (n << 23) (32-bit two's-complement add, as the model's
//       int64 sum cast to uint32).
module fp32_exp (
    input  wire [31:0] x,
    output reg  [31:0] y
);
    localparam [31:0] LOG2E  = 32'h3FB8AA3B;
    localparam [31:0] LN2_HI = 32'h3F317200;
    localparam [31:0] LN2_LO = 32'h35BFBE8E;
    localparam [31:0] X_MAX  = 32'h42B16666;   // 88.7f
    localparam [31:0] X_MIN  = 32'h42B00000;   // |-88.0f|
    // C_k = fp32(1/k!), k = 0..7, packed C0 in the low word
    localparam [255:0] COEF = {32'h39500D01, 32'h3AB60B61, 32'h3C088889, 32'h3D2AAAAB,
                               32'h3E2AAAAB, 32'h3F000000, 32'h3F800000, 32'h3F800000};

    // E0 screening (one always block per glue stage: one update per input change)
    reg is_nan, too_big, too_small;
    reg [31:0] xs;
    always @* begin
        is_nan    = x[30:0] > 31'h7F800000;
        too_big   = !is_nan && !x[31] && (x[30:0] > X_MAX[30:0]);
        too_small = !is_nan &&  x[31] && (x[30:0] > X_MIN[30:0]);
        xs        = (is_nan || too_big || too_small) ? 32'd0 : x;
    end

    // E1
    wire [31:0] t;
    fp32_mul u_t (.a(xs), .b(LOG2E), .y(t));

    // integer -> fp32, exact
    function automatic [31:0] int_to_f32(input [8:0] m, input sgn);
        integer k;
        reg [3:0] msb;
        reg [22:0] w;
        begin
            msb = 4'd0;
            for (k = 0; k < 9; k = k + 1)
                if (m[k]) msb = 4'(k);
            w = 23'(m) << (5'd23 - {1'b0, msb});   // hidden one drops out
            if (m == 9'd0)
                int_to_f32 = 32'd0;
            else
                int_to_f32 = {sgn, 8'd127 + {4'd0, msb}, w[22:0]};
        end
    endfunction
    // E2: n = rint(t), |t| < 128; E3: nf = float(n)
    reg  [4:0]  sh;
    reg  [23:0] mt, rem, half;
    reg  [8:0]  ip, nmag;
    reg         up;
    reg  signed [9:0] n;
    reg  [31:0] nf;
    always @* begin
        mt   = {1'b1, t[22:0]};
        sh   = 5'd22 - t[27:23];                   // = 150 - et: 1..24 when et in 126..149
        ip   = 9'(mt >> sh);                       // integer part fits 9 bits
        rem  = mt & ~(24'hFFFFFF << sh);
        half = 24'd1 << (sh - 5'd1);
        up   = (rem > half) || ((rem == half) && ip[0]);
        nmag = (t[30:23] < 8'd126) ? 9'd0 : (ip + {8'd0, up});
        n    = t[31] ? -$signed({1'b0, nmag}) : $signed({1'b0, nmag});
        nf   = int_to_f32(nmag, t[31]);
    end

    // E4, E5
    wire [31:0] q_hi, r1, q_lo, r;
    fp32_mul u_qhi (.a(nf), .b(LN2_HI), .y(q_hi));
    fp32_add u_r1  (.a(xs), .b(q_hi), .sub(1'b1), .y(r1));
    fp32_mul u_qlo (.a(nf), .b(LN2_LO), .y(q_lo));
    fp32_add u_r   (.a(r1), .b(q_lo), .sub(1'b1), .y(r));

    // E6: Horner, p[7] = C7, p[k] = p[k+1] * r + C_k
    wire [31:0] p [0:7];
    wire [31:0] pr [0:6];
    assign p[7] = COEF[7*32 +: 32];
    genvar k;
    generate
        for (k = 0; k < 7; k = k + 1) begin : g_horner   // instance k computes p[k]
            fp32_mul u_m (.a(p[k+1]), .b(r), .y(pr[k]));
            fp32_add u_a (.a(pr[k]), .b(COEF[k*32 +: 32]), .sub(1'b0), .y(p[k]));
        end
    endgenerate

    // E7 and the E0 overrides
    reg  signed [10:0] e_sum;
    always @* begin
        e_sum = $signed({3'd0, p[0][30:23]}) + 11'(n);
        if (is_nan)
            y = 32'h7FC00000;
        else if (too_big)
            y = 32'h7F800000;
        else if (too_small || (e_sum <= 11'sd0))
            y = 32'd0;
        else if (e_sum >= 11'sd255)
            y = 32'h7F800000;
        else
            y = p[0] + {n[8:0], 23'd0};              // bits(p) + (n << 23), mod 2^32
    end
endmodule
`default_nettype wire
