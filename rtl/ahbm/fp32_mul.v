`default_nettype none
// fp32_mul: IEEE-754 binary32 y = a * b, round to nearest even, subnormal
// inputs and outputs kept (no flush), as numpy float32 * in
// models/ahbm/numerics.py.  Combinational.
// NaN results (a NaN input, or inf * 0) are the canonical quiet NaN
// 32'h7FC00000 (numpy's NaN payload/sign is platform defined; see fp32_add).
// Written as one always block so a simulator updates y once per input change.
module fp32_mul (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output reg  [31:0] y
);
    function automatic [5:0] lzc48(input [47:0] v);
        integer k;
        reg found;
        begin
            lzc48 = 6'd48;
            found = 1'b0;
            for (k = 47; k >= 0; k = k - 1) begin
                if (!found && v[k]) begin
                    lzc48 = 6'(47 - k);
                    found = 1'b1;
                end
            end
        end
    endfunction

    reg         s, a_nan, b_nan, a_inf, b_inf, a_zero, b_zero;
    reg  [23:0] ma, mb;
    reg  [47:0] prod, prod_n, lost;
    reg  [46:0] prod_d;
    reg  [5:0]  lz, rs;
    reg  signed [10:0] e_eff_a, e_eff_b, e_res, rs_s;
    reg  [7:0]  e_fld;
    reg         st, rnd_up;
    reg  [30:0] rounded;

    always @* begin
        s      = a[31] ^ b[31];
        a_nan  = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
        b_nan  = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
        a_inf  = (a[30:23] == 8'hFF) && (a[22:0] == 23'd0);
        b_inf  = (b[30:23] == 8'hFF) && (b[22:0] == 23'd0);
        a_zero = (a[30:0] == 31'd0);
        b_zero = (b[30:0] == 31'd0);

        ma   = {a[30:23] != 8'd0, a[22:0]};
        mb   = {b[30:23] != 8'd0, b[22:0]};
        prod = ma * mb;
        lz     = lzc48(prod);
        prod_n = prod << lz;                      // leading one at bit 47
        // biased exponent of the normalised result (1.f * 2^(E-127))
        e_eff_a = (a[30:23] == 8'd0) ? 11'sd1 : $signed({3'd0, a[30:23]});
        e_eff_b = (b[30:23] == 8'd0) ? 11'sd1 : $signed({3'd0, b[30:23]});
        e_res   = e_eff_a + e_eff_b - 11'sd126 - $signed({5'd0, lz});

        // below the normal range: shift right by 1 - E into the subnormal field
        rs_s   = 11'sd1 - e_res;
        rs     = (e_res >= 11'sd1) ? 6'd0 : ((rs_s > 11'sd50) ? 6'd50 : rs_s[5:0]);
        lost   = ~(48'hFFFFFFFFFFFF << rs);
        prod_d = 47'(prod_n >> rs);               // bit 47 (hidden one) is implied by e_fld
        e_fld  = (e_res >= 11'sd1) ? e_res[7:0] : 8'd0;

        // round to nearest even; a carry walks into the exponent field
        st      = (prod_d[22:0] != 23'd0) | ((prod_n & lost) != 48'd0);
        rnd_up  = prod_d[23] & (st | prod_d[24]);
        rounded = {e_fld, prod_d[46:24]} + {30'd0, rnd_up};

        if (a_nan || b_nan || (a_inf && b_zero) || (b_inf && a_zero))
            y = 32'h7FC00000;
        else if (a_inf || b_inf)
            y = {s, 31'h7F800000};
        else if (a_zero || b_zero)
            y = {s, 31'd0};
        else if (e_res >= 11'sd255)
            y = {s, 31'h7F800000};
        else
            y = {s, rounded};
    end
endmodule
`default_nettype wire
