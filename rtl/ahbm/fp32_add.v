`default_nettype none
// fp32_add: IEEE-754 binary32 y = a + b (sub = 0) or y = a - b (sub = 1),
// round to nearest even, subnormal inputs and outputs kept (no flush), as
// numpy float32 + and - in models/ahbm/numerics.py.  Combinational.
// NaN results (a NaN input, or inf - inf) are the canonical quiet NaN
// 32'h7FC00000: numpy's NaN payload/sign is platform defined, the AHBM model
// never relies on it (exp_f32 screens NaN before any arithmetic).
// Exact zero results: x + (-x) is +0; (-0) + (-0) is -0.
// Written as one always block so a simulator updates y once per input change
// (deep chains such as fp32_exp then simulate without glitch cascades).
module fp32_add (
    input  wire [31:0] a,
    input  wire [31:0] b,
    input  wire        sub,
    output reg  [31:0] y
);
    function automatic [4:0] lzc27(input [26:0] v);
        integer k;
        reg found;
        begin
            lzc27 = 5'd27;
            found = 1'b0;
            for (k = 26; k >= 0; k = k - 1) begin
                if (!found && v[k]) begin
                    lzc27 = 5'(26 - k);
                    found = 1'b1;
                end
            end
        end
    endfunction

    reg         sa, sb, a_nan, b_nan, a_inf, b_inf, swap, s_big, eff_sub;
    reg  [30:0] mag_big, mag_sml;
    reg  [7:0]  e_big, e_sml, d, lim;
    reg  [23:0] m_big, m_sml;
    reg  [26:0] al, lost_mask, norm;
    reg  [27:0] big28, sum;
    reg  [4:0]  lz, lsh;
    reg  [8:0]  e_norm;
    reg         rnd_up;
    reg  [30:0] rounded;

    always @* begin
        sa    = a[31];
        sb    = b[31] ^ sub;
        a_nan = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
        b_nan = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
        a_inf = (a[30:23] == 8'hFF) && (a[22:0] == 23'd0);
        b_inf = (b[30:23] == 8'hFF) && (b[22:0] == 23'd0);

        // magnitude order: big >= small
        swap    = b[30:0] > a[30:0];
        mag_big = swap ? b[30:0] : a[30:0];
        mag_sml = swap ? a[30:0] : b[30:0];
        s_big   = swap ? sb : sa;
        eff_sub = sa ^ sb;
        e_big   = (mag_big[30:23] == 8'd0) ? 8'd1 : mag_big[30:23];
        e_sml   = (mag_sml[30:23] == 8'd0) ? 8'd1 : mag_sml[30:23];
        m_big   = {mag_big[30:23] != 8'd0, mag_big[22:0]};
        m_sml   = {mag_sml[30:23] != 8'd0, mag_sml[22:0]};
        d       = e_big - e_sml;

        // align: 24-bit significand + guard, round, sticky
        if (d >= 8'd27) begin
            al = {26'd0, m_sml != 24'd0};
            lost_mask = 27'd0;
        end else begin
            lost_mask = ~(27'h7FFFFFF << d[4:0]);
            al = ({m_sml, 3'b000} >> d[4:0]);
            al[0] = al[0] | (({m_sml, 3'b000} & lost_mask) != 27'd0);
        end

        big28 = {1'b0, m_big, 3'b000};
        sum   = eff_sub ? (big28 - {1'b0, al}) : (big28 + {1'b0, al});

        // normalise; the left shift stops at exponent 1 (subnormal result)
        lz  = lzc27(sum[26:0]);
        lim = e_big - 8'd1;
        lsh = ({3'd0, lz} > lim) ? lim[4:0] : lz;
        if (sum[27]) begin
            norm   = {sum[27:2], sum[1] | sum[0]};
            e_norm = {1'b0, e_big} + 9'd1;
        end else begin
            norm   = sum[26:0] << lsh;
            e_norm = norm[26] ? ({1'b0, e_big} - {4'd0, lsh}) : 9'd0;
        end

        // round to nearest even; a carry walks into the exponent field
        rnd_up  = norm[2] & (norm[1] | norm[0] | norm[3]);
        rounded = {e_norm[7:0], norm[25:3]} + {30'd0, rnd_up};

        if (a_nan || b_nan || (a_inf && b_inf && eff_sub))
            y = 32'h7FC00000;
        else if (a_inf)
            y = {sa, 31'h7F800000};
        else if (b_inf)
            y = {sb, 31'h7F800000};
        else if (sum == 28'd0)
            y = {eff_sub ? 1'b0 : sa, 31'd0};
        else if (e_norm >= 9'd255)
            y = {s_big, 31'h7F800000};
        else
            y = {s_big, rounded};
    end
endmodule
`default_nettype wire
