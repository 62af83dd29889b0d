// fp32_lib.vh: the AHBM PE fp32 / bf16 numerics as Verilog functions, bit for
// bit as models/ahbm/numerics.py (numpy float32 + - * / with round to nearest
// even, subnormals kept in and out, numpy.maximum, exp_f32, f32_to_bf16).
//
// Include it INSIDE a module body, then call the functions from any always
// block, loop or continuous assignment of that module:
//
//     module pe_engine (...);
//     `include "fp32_lib.vh"
//         ...  acc = f32_add(acc, f32_mul(q, k));  ...
//     endmodule
//     `undef AHBM_FP32_LIB_VH
//
// * Include path: rtl/ahbm (iverilog -I rtl/ahbm, verilator -Irtl/ahbm).
// * The guard AHBM_FP32_LIB_VH makes a second include in the SAME module body
//   empty.  Macros outlive the module (Icarus and Verilator keep them for the
//   rest of the compilation), so every module that includes this file must
//   `undef AHBM_FP32_LIB_VH after its endmodule, or a later module in the same
//   compilation (a later file, a -y library module) would get no functions.
//   rtl/ahbm/fp32_*.v do so.
// * Names: the functions below (f32_*, bf16_to_f32) live in the including
//   module's scope; every argument and local is named fl_*, so the includer
//   should declare no fl_* names of its own (Verilator VARHIDDEN).
//
// Functions (bit patterns in and out; no side effects; all static):
//   function [31:0] f32_add(input [31:0] fl_a, input [31:0] fl_b);   a + b
//   function [31:0] f32_sub(input [31:0] fl_a, input [31:0] fl_b);   a - b
//   function [31:0] f32_mul(input [31:0] fl_a, input [31:0] fl_b);   a * b
//   function [31:0] f32_div(input [31:0] fl_a, input [31:0] fl_b);   a / b
//   function [31:0] f32_max(input [31:0] fl_a, input [31:0] fl_b);   numpy.maximum(a, b)
//   function [31:0] f32_exp(input [31:0] fl_x);                      numerics.exp_f32(x)
//   function [15:0] f32_to_bf16(input [31:0] fl_x);                  numerics.f32_to_bf16(x)
//   function [31:0] bf16_to_f32(input [15:0] fl_h);                  numerics.bf16_to_f32(h)
//   (f32_norm24 and f32_exp_nf are internal helpers.)
//
// NaN: every fp32 result that is a NaN is the canonical quiet NaN
// 32'h7FC00000 (a NaN operand, inf - inf, inf * 0, 0 / 0, inf / inf).  numpy's
// NaN payload and sign are platform defined; the model never relies on them
// (the tests canonicalise numpy's NaN).  f32_to_bf16 keeps the sign of a NaN
// (sign | 15'h7FC0) and bf16_to_f32 is exact on every pattern, as the model.
// Signed zeros: x + (-x) = +0, (-0) + (-0) = -0; a * b and a / b carry the
// XOR sign (zero and inf results too); max(+0, -0) = -0 and max(-0, +0) = +0
// (equal values return b, as numpy.maximum on x86-64).  x / 0 = +-inf for
// x != 0, x / inf = +-0.
//
// Simulation speed, Icarus 11 (10^6 calls in one initial-block loop over
// random normal operands, loop overhead subtracted; one machine, so relative):
//   f32_add 1.5 us/call, f32_sub 2.0, f32_mul 1.3, f32_div 2.2, f32_max 0.8,
//   f32_to_bf16 0.6, f32_exp 37 (19 add/mul calls; the old chain of module
//   instances took ~1 ms per input change).
// * Static, not automatic: no recursion and no delays, so one shared frame
//   per function is safe (Icarus 11 evaluates every argument before it
//   stores any, so nested calls such as f32_add(f32_mul(a, b), f32_mul(c, d))
//   are fine); automatic functions measured ~10% slower.
// * Under Verilator each function is automatic and not inlined
//   (`/* verilator no_inline_task */`): inlined into every call site of every
//   PE, the lint of the 2x4 CUBE took 40.5 s; not inlined, 3.2 s (one PE 7.1 s
//   -> 0.8 s), with the same (clean) result. Icarus keeps the static form.
// * Icarus pays a dynamic_cast on every read of a plain variable but not on a
//   read of an array word, so the locals the common paths read most often are
//   one- or two-word arrays (fl_x[0], fl_hl[1]): add and mul ~1.3x faster.
// * Straight-line code: leading-zero counts are 4- to 6-step binary searches,
//   not bit loops; special operands (inf, NaN, zero, subnormal) and rare
//   results (deep cancellation, subnormal) leave the common path early.
`ifndef AHBM_FP32_LIB_VH
`define AHBM_FP32_LIB_VH

    // Normalise a 24-bit significand (v != 0) so its leading one is at bit 23.
    // Returns {shift[4:0], normalised[23:0]}; shift is the left shift applied.
`ifdef VERILATOR
    function automatic [28:0] f32_norm24(input [23:0] fl_v);
        /* verilator no_inline_task */
`else
    function [28:0] f32_norm24(input [23:0] fl_v);
`endif
        reg [23:0] fl_m;
        reg [4:0]  fl_s;
        begin
            fl_m = fl_v;
            fl_s = 5'd0;
            if (fl_m[23:8]  == 16'd0) begin fl_m = fl_m << 16; fl_s = 5'd16; end
            if (fl_m[23:16] == 8'd0)  begin fl_m = fl_m << 8;  fl_s = fl_s + 5'd8; end
            if (fl_m[23:20] == 4'd0)  begin fl_m = fl_m << 4;  fl_s = fl_s + 5'd4; end
            if (fl_m[23:22] == 2'd0)  begin fl_m = fl_m << 2;  fl_s = fl_s + 5'd2; end
            if (!fl_m[23])            begin fl_m = fl_m << 1;  fl_s = fl_s + 5'd1; end
            f32_norm24 = {fl_s, fl_m};
        end
    endfunction

    // ------------------------------------------------------------------ add
    // fl_hl[0] (hi) is the operand of larger magnitude (a on a tie), fl_hl[1]
    // (lo) the other.  Rounding: for a field whose lsb is bit k of u,
    // (u + 2^(k-1) - 1 + u[k]) >> k is u >> k rounded to nearest even, and a
    // carry walks into the exponent field (the largest normal rounds to inf).
    // * Both normal (short path): lo's significand shifted right by the
    //   exponent difference d <= 25 is exact in 54 bits, so the sum fl_x is
    //   exact (d >= 26: lo lies wholly below the guard bit of any result and
    //   stands in as 1, which rounds the same).  A carry out, no shift or a
    //   one-bit left shift is rounded from all bits; a deeper cancellation
    //   happens only for d <= 1, where fl_x has at most 24 significant bits,
    //   so the result is exact: normalise, the shift capped at exponent 1.
    // * A zero or subnormal operand (general path): 27-bit significands with
    //   guard, round and sticky bits, a leading-zero count, the left shift
    //   capped at exponent 1.
`ifdef VERILATOR
    function automatic [31:0] f32_add(input [31:0] fl_a, input [31:0] fl_b);
        /* verilator no_inline_task */
`else
    function [31:0] f32_add(input [31:0] fl_a, input [31:0] fl_b);
`endif
        reg [31:0] fl_hl [0:1];
        reg [7:0]  fl_d [0:0];
        reg [54:0] fl_x [0:0];
        reg [53:0] fl_c [0:0];
        reg [5:0]  fl_lz;
        reg [7:0]  fl_e, fl_dg;
        reg [4:0]  fl_lzg, fl_lsh;
        reg [53:0] fl_w;
        reg [26:0] fl_al, fl_v;
        reg [27:0] fl_s;
        reg        fl_done;
        begin
            if (fl_b[30:0] > fl_a[30:0]) begin
                fl_hl[0] = fl_b;
                fl_hl[1] = fl_a;
            end else begin
                fl_hl[0] = fl_a;
                fl_hl[1] = fl_b;
            end
            fl_done = 1'b0;
            if (fl_hl[0][30:23] == 8'hFF) begin                // lo <= hi: a NaN is hi
                fl_done = 1'b1;
                if (fl_hl[0][30:0] != 31'h7F800000
                    || (fl_hl[1][30:0] == 31'h7F800000 && fl_hl[0][31] != fl_hl[1][31]))
                    f32_add = 32'h7FC00000;                     // NaN in, inf - inf
                else
                    f32_add = fl_hl[0];
            end else if (fl_hl[1][30:23] != 8'd0) begin        // both normal
                fl_d[0] = fl_hl[0][30:23] - fl_hl[1][30:23];
                fl_w    = (fl_d[0] > 8'd25) ? 54'd1 : ({1'b1, fl_hl[1][22:0], 30'd0} >> fl_d[0]);
                if (fl_hl[0][31] == fl_hl[1][31])
                    fl_x[0] = {2'b01, fl_hl[0][22:0], 30'd0} + {1'b0, fl_w};
                else
                    fl_x[0] = {2'b01, fl_hl[0][22:0], 30'd0} - {1'b0, fl_w};
                fl_done = 1'b1;
                if (fl_x[0][54]) begin                         // carry out
                    if (fl_hl[0][30:23] == 8'd254)
                        f32_add = {fl_hl[0][31], 31'h7F800000};
                    else
                        f32_add = {fl_hl[0][31], 31'(({fl_hl[0][30:23] + 8'd1, fl_x[0][53:0]}
                                                      + 62'h3FFFFFFF + {61'd0, fl_x[0][31]}) >> 31)};
                end else if (fl_x[0][53]) begin
                    f32_add = {fl_hl[0][31], 31'(({fl_hl[0][30:23], fl_x[0][52:0]}
                                                  + 61'h1FFFFFFF + {60'd0, fl_x[0][30]}) >> 30)};
                end else if (fl_x[0][52] && fl_hl[0][30:23] != 8'd1) begin   // one-bit left shift
                    f32_add = {fl_hl[0][31], 31'(({fl_hl[0][30:23] - 8'd1, fl_x[0][51:0]}
                                                  + 60'hFFFFFFF + {59'd0, fl_x[0][29]}) >> 29)};
                end else if (fl_x[0] == 55'd0) begin
                    f32_add = 32'd0;                           // x + (-x) = +0
                end else begin
                    // cancellation (d <= 1): exact; leading zeros by binary search
                    fl_c[0] = fl_x[0][53:0];
                    fl_lz   = 6'd0;
                    if (fl_c[0][53:22] == 32'd0) begin fl_c[0] = fl_c[0] << 32; fl_lz = 6'd32; end
                    if (fl_c[0][53:38] == 16'd0) begin fl_c[0] = fl_c[0] << 16; fl_lz = fl_lz + 6'd16; end
                    if (fl_c[0][53:46] == 8'd0)  begin fl_c[0] = fl_c[0] << 8;  fl_lz = fl_lz + 6'd8; end
                    if (fl_c[0][53:50] == 4'd0)  begin fl_c[0] = fl_c[0] << 4;  fl_lz = fl_lz + 6'd4; end
                    if (fl_c[0][53:52] == 2'd0)  begin fl_c[0] = fl_c[0] << 2;  fl_lz = fl_lz + 6'd2; end
                    if (!fl_c[0][53])            fl_lz = fl_lz + 6'd1;
                    if ({2'd0, fl_lz} < fl_hl[0][30:23]) begin // normal result
                        fl_c[0] = fl_x[0][53:0] << fl_lz;
                        f32_add = {fl_hl[0][31], fl_hl[0][30:23] - {2'd0, fl_lz}, fl_c[0][52:30]};
                    end else begin                             // subnormal: shift by e - 1
                        fl_c[0] = fl_x[0][53:0] << (fl_hl[0][30:23] - 8'd1);
                        f32_add = {fl_hl[0][31], 8'd0, fl_c[0][52:30]};
                    end
                end
            end
            if (!fl_done) begin
                // general path: lo is zero or subnormal (hi may be too)
                fl_e  = (fl_hl[0][30:23] == 8'd0) ? 8'd1 : fl_hl[0][30:23];
                fl_dg = fl_e - 8'd1;                           // lo's exponent counts as 1
                fl_w  = {1'b0, fl_hl[1][22:0], 30'd0} >> ((fl_dg > 8'd27) ? 5'd27 : fl_dg[4:0]);
                fl_al = {fl_w[53:28], fl_w[27:0] != 28'd0};    // fl_w[26:0] is shifted out
                if (fl_hl[0][31] == fl_hl[1][31])
                    fl_s = {1'b0, fl_hl[0][30:23] != 8'd0, fl_hl[0][22:0], 3'b000} + {1'b0, fl_al};
                else
                    fl_s = {1'b0, fl_hl[0][30:23] != 8'd0, fl_hl[0][22:0], 3'b000} - {1'b0, fl_al};
                if (fl_s == 28'd0) begin
                    f32_add = {fl_a[31] & fl_b[31], 31'd0};    // x + (-x) = +0, (-0) + (-0) = -0
                end else if (fl_s[27]) begin                   // carry: one right shift
                    if (fl_e == 8'd254)
                        f32_add = {fl_hl[0][31], 31'h7F800000};
                    else
                        f32_add = {fl_hl[0][31], 31'(({fl_e + 8'd1, fl_s[26:2], fl_s[1] | fl_s[0]}
                                                      + 34'd3 + {33'd0, fl_s[4]}) >> 3)};
                end else begin
                    // leading zeros of fl_s[26:0] (binary search); shift capped at e - 1
                    fl_v   = fl_s[26:0];
                    fl_lzg = 5'd0;
                    if (fl_v[26:11] == 16'd0) begin fl_v = fl_v << 16; fl_lzg = 5'd16; end
                    if (fl_v[26:19] == 8'd0)  begin fl_v = fl_v << 8;  fl_lzg = fl_lzg + 5'd8; end
                    if (fl_v[26:23] == 4'd0)  begin fl_v = fl_v << 4;  fl_lzg = fl_lzg + 5'd4; end
                    if (fl_v[26:25] == 2'd0)  begin fl_v = fl_v << 2;  fl_lzg = fl_lzg + 5'd2; end
                    if (!fl_v[26])            fl_lzg = fl_lzg + 5'd1;
                    fl_lsh = ({3'd0, fl_lzg} > fl_e - 8'd1) ? 5'(fl_e - 8'd1) : fl_lzg;
                    fl_v   = fl_s[26:0] << fl_lsh;
                    f32_add = {fl_hl[0][31], 31'(({fl_v[26] ? fl_e - {3'd0, fl_lsh} : 8'd0, fl_v[25:0]}
                                                  + 34'd3 + {33'd0, fl_v[3]}) >> 3)};
                end
            end
        end
    endfunction

    // a - b is a + b with b's sign flipped (NaN stays NaN: canonical anyway).
`ifdef VERILATOR
    function automatic [31:0] f32_sub(input [31:0] fl_a, input [31:0] fl_b);
        /* verilator no_inline_task */
`else
    function [31:0] f32_sub(input [31:0] fl_a, input [31:0] fl_b);
`endif
        f32_sub = f32_add(fl_a, {~fl_b[31], fl_b[30:0]});
    endfunction

    // ------------------------------------------------------------------ mul
    // 24 x 24 -> 48-bit product.  Short path, two normal operands and a normal
    // result: the leading one is at bit 47 or 46; u = {exponent, fraction,
    // guard, 23 sticky bits} and (u + 2^23 - 1 + lsb) >> 24 rounds to nearest
    // even (a carry walks into the exponent field).  General path (a zero or
    // subnormal operand, a subnormal result): a leading-zero count of the
    // product, a right shift by 1 - e below exponent 1, every shifted-out bit
    // kept in the sticky bit.
`ifdef VERILATOR
    function automatic [31:0] f32_mul(input [31:0] fl_a, input [31:0] fl_b);
        /* verilator no_inline_task */
`else
    function [31:0] f32_mul(input [31:0] fl_a, input [31:0] fl_b);
`endif
        reg [47:0]        fl_p [0:0];
        reg signed [10:0] fl_e [0:0];
        reg [47:0]        fl_pg;
        reg signed [10:0] fl_eg;
        reg [5:0]         fl_lz, fl_rs;
        reg [94:0]        fl_w;
        begin
            if ((fl_a[30:23] - 8'd1) < 8'd254 && (fl_b[30:23] - 8'd1) < 8'd254) begin
                fl_p[0] = {1'b1, fl_a[22:0]} * {1'b1, fl_b[22:0]};
                fl_e[0] = $signed({3'd0, fl_a[30:23]}) + $signed({3'd0, fl_b[30:23]}) - 11'sd127;
                if (fl_p[0][47])
                    fl_e[0] = fl_e[0] + 11'sd1;
                else
                    fl_p[0] = fl_p[0] << 1;
            end else begin
                fl_e[0] = 11'sd0;                              // not the short path
                fl_p[0] = 48'd0;
            end
            if (fl_e[0] >= 11'sd1 && fl_e[0] <= 11'sd254) begin
                f32_mul = {fl_a[31] != fl_b[31], 31'(({fl_e[0][7:0], fl_p[0][46:0]}
                                                     + 55'h7FFFFF + {54'd0, fl_p[0][24]}) >> 24)};
            end else if (fl_e[0] >= 11'sd255) begin
                f32_mul = {fl_a[31] != fl_b[31], 31'h7F800000};
            end else if (fl_a[30:23] == 8'hFF || fl_b[30:23] == 8'hFF
                         || fl_a[30:0] == 31'd0 || fl_b[30:0] == 31'd0) begin
                if (fl_a[30:0] > 31'h7F800000 || fl_b[30:0] > 31'h7F800000
                    || (fl_a[30:23] == 8'hFF && fl_b[30:0] == 31'd0)
                    || (fl_b[30:23] == 8'hFF && fl_a[30:0] == 31'd0))   // NaN in, inf * 0
                    f32_mul = 32'h7FC00000;
                else if (fl_a[30:23] == 8'hFF || fl_b[30:23] == 8'hFF)
                    f32_mul = {fl_a[31] != fl_b[31], 31'h7F800000};
                else
                    f32_mul = {fl_a[31] != fl_b[31], 31'd0};
            end else begin
                // general: a subnormal operand, or a subnormal (or zero) result
                fl_pg = {fl_a[30:23] != 8'd0, fl_a[22:0]} * {fl_b[30:23] != 8'd0, fl_b[22:0]};
                fl_lz = 6'd0;
                if (fl_pg[47:16] == 32'd0) begin fl_pg = fl_pg << 32; fl_lz = 6'd32; end
                if (fl_pg[47:32] == 16'd0) begin fl_pg = fl_pg << 16; fl_lz = fl_lz + 6'd16; end
                if (fl_pg[47:40] == 8'd0)  begin fl_pg = fl_pg << 8;  fl_lz = fl_lz + 6'd8; end
                if (fl_pg[47:44] == 4'd0)  begin fl_pg = fl_pg << 4;  fl_lz = fl_lz + 6'd4; end
                if (fl_pg[47:46] == 2'd0)  begin fl_pg = fl_pg << 2;  fl_lz = fl_lz + 6'd2; end
                if (!fl_pg[47])            begin fl_pg = fl_pg << 1;  fl_lz = fl_lz + 6'd1; end
                // biased exponent of 1.f with the leading one at bit 47
                fl_eg = $signed({3'd0, (fl_a[30:23] == 8'd0) ? 8'd1 : fl_a[30:23]})
                      + $signed({3'd0, (fl_b[30:23] == 8'd0) ? 8'd1 : fl_b[30:23]})
                      - 11'sd126 - $signed({5'd0, fl_lz});
                if (fl_eg >= 11'sd255) begin
                    f32_mul = {fl_a[31] != fl_b[31], 31'h7F800000};
                end else if (fl_eg >= 11'sd1) begin
                    f32_mul = {fl_a[31] != fl_b[31], 31'(({fl_eg[7:0], fl_pg[46:0]}
                                                         + 55'h7FFFFF + {54'd0, fl_pg[24]}) >> 24)};
                end else begin
                    // subnormal: shift right by 1 - e (49 or more: every bit is sticky);
                    // the hidden one leaves bit 47, so bit 95 of the shift is always 0
                    fl_rs = (fl_eg < -11'sd47) ? 6'd49 : 6'(11'sd1 - fl_eg);
                    fl_w  = 95'({fl_pg, 48'd0} >> fl_rs);      // fl_w[47:0] is shifted out
                    f32_mul = {fl_a[31] != fl_b[31], 31'(({8'd0, fl_w[94:48], fl_w[47:0] != 48'd0}
                                                         + 56'hFFFFFF + {55'd0, fl_w[72]}) >> 25)};
                end
            end
        end
    endfunction

    // ------------------------------------------------------------------ div
    // Subnormal operands are normalised first, so both significands ma, mb
    // are in [2^23, 2^24): q = floor(ma * 2^26 / mb) in [2^25, 2^27) holds the
    // 24 result bits, a guard bit and one or two more, and a non-zero
    // remainder sets the sticky bit.  u = {exponent, fraction, g, r, s} is
    // then rounded as in f32_add; below exponent 1, {1, fraction, g, r, s} is
    // shifted right by 1 - e first, every shifted-out bit kept in the sticky.
`ifdef VERILATOR
    function automatic [31:0] f32_div(input [31:0] fl_a, input [31:0] fl_b);
        /* verilator no_inline_task */
`else
    function [31:0] f32_div(input [31:0] fl_a, input [31:0] fl_b);
`endif
        reg signed [10:0] fl_e [0:0];
        reg [26:0]        fl_q [0:0];
        reg [33:0]        fl_u [0:0];
        reg               fl_st;
        reg [28:0]        fl_na, fl_nb;
        reg [23:0]        fl_ma, fl_mb;
        reg [4:0]         fl_rs;
        reg [60:0]        fl_w;
        begin
            if (fl_a[30:23] == 8'hFF || fl_b[30:23] == 8'hFF || fl_a[30:0] == 31'd0 || fl_b[30:0] == 31'd0) begin
                if (fl_a[30:0] > 31'h7F800000 || fl_b[30:0] > 31'h7F800000
                    || (fl_a[30:23] == 8'hFF && fl_b[30:23] == 8'hFF)
                    || (fl_a[30:0] == 31'd0 && fl_b[30:0] == 31'd0))   // NaN in, inf/inf, 0/0
                    f32_div = 32'h7FC00000;
                else if (fl_a[30:23] == 8'hFF || fl_b[30:0] == 31'd0) // inf / y, x / 0
                    f32_div = {fl_a[31] != fl_b[31], 31'h7F800000};
                else                                                   // 0 / y, x / inf
                    f32_div = {fl_a[31] != fl_b[31], 31'd0};
            end else begin
                if (fl_a[30:23] != 8'd0 && fl_b[30:23] != 8'd0) begin
                    fl_ma   = {1'b1, fl_a[22:0]};
                    fl_mb   = {1'b1, fl_b[22:0]};
                    fl_e[0] = $signed({3'd0, fl_a[30:23]}) - $signed({3'd0, fl_b[30:23]}) + 11'sd126;
                end else begin
                    // exponent of a normalised subnormal: 1 - shift
                    if (fl_a[30:23] == 8'd0) begin
                        fl_na   = f32_norm24({1'b0, fl_a[22:0]});
                        fl_ma   = fl_na[23:0];
                        fl_e[0] = 11'sd1 - $signed({6'd0, fl_na[28:24]});
                    end else begin
                        fl_ma   = {1'b1, fl_a[22:0]};
                        fl_e[0] = $signed({3'd0, fl_a[30:23]});
                    end
                    if (fl_b[30:23] == 8'd0) begin
                        fl_nb   = f32_norm24({1'b0, fl_b[22:0]});
                        fl_mb   = fl_nb[23:0];
                        fl_e[0] = fl_e[0] + $signed({6'd0, fl_nb[28:24]}) + 11'sd125;
                    end else begin
                        fl_mb   = {1'b1, fl_b[22:0]};
                        fl_e[0] = fl_e[0] - $signed({3'd0, fl_b[30:23]}) + 11'sd126;
                    end
                end
                fl_q[0] = 27'({fl_ma, 26'd0} / {26'd0, fl_mb});
                fl_st   = ({fl_ma, 26'd0} % {26'd0, fl_mb}) != 50'd0;       // inexact: sticky
                if (fl_q[0][26]) begin                                     // ma >= mb
                    fl_e[0] = fl_e[0] + 11'sd1;
                    fl_u[0] = {fl_e[0][7:0], fl_q[0][25:1], fl_q[0][0] | fl_st};
                end else begin
                    fl_u[0] = {fl_e[0][7:0], fl_q[0][24:0], fl_st};
                end
                if (fl_e[0] >= 11'sd255) begin
                    f32_div = {fl_a[31] != fl_b[31], 31'h7F800000};
                end else if (fl_e[0] >= 11'sd1) begin
                    f32_div = {fl_a[31] != fl_b[31], 31'((fl_u[0] + 34'd3 + {33'd0, fl_u[0][3]}) >> 3)};
                end else begin
                    // subnormal: shift right by 1 - e (27 or more: every bit is sticky)
                    fl_rs = (fl_e[0] < -11'sd25) ? 5'd27 : 5'(11'sd1 - fl_e[0]);
                    fl_w  = {1'b1, fl_u[0][25:0], 34'd0} >> fl_rs;          // fl_w[33:0] is shifted out
                    f32_div = {fl_a[31] != fl_b[31], 31'(({8'd0, fl_w[60:35], fl_w[34:0] != 35'd0}
                                                         + 35'd3 + {34'd0, fl_w[37]}) >> 3)};
                end
            end
        end
    endfunction

    // ------------------------------------------------------------------ max
    // numpy.maximum: a NaN operand -> canonical NaN; else a > b ? a : b by
    // value (sign-magnitude compare, +0 == -0), so equal values return b.
`ifdef VERILATOR
    function automatic [31:0] f32_max(input [31:0] fl_a, input [31:0] fl_b);
        /* verilator no_inline_task */
`else
    function [31:0] f32_max(input [31:0] fl_a, input [31:0] fl_b);
`endif
        reg fl_gt;
        begin
            if (fl_a[30:0] > 31'h7F800000 || fl_b[30:0] > 31'h7F800000) begin
                f32_max = 32'h7FC00000;
            end else begin
                if (fl_a[31] != fl_b[31])
                    fl_gt = !fl_a[31] && (fl_a[30:0] != 31'd0 || fl_b[30:0] != 31'd0);
                else if (!fl_a[31])
                    fl_gt = fl_a[30:0] > fl_b[30:0];
                else
                    fl_gt = fl_a[30:0] < fl_b[30:0];
                f32_max = fl_gt ? fl_a : fl_b;
            end
        end
    endfunction

    // ------------------------------------------------------------------ exp
    // fp32 value of the integer m (sgn = 0) or -m (sgn = 1), m <= 256; exact,
    // m = 0 gives +0.
`ifdef VERILATOR
    function automatic [31:0] f32_exp_nf(input [8:0] fl_m, input fl_sgn);
        /* verilator no_inline_task */
`else
    function [31:0] f32_exp_nf(input [8:0] fl_m, input fl_sgn);
`endif
        reg [15:0] fl_v;
        reg [3:0]  fl_lz;
        begin
            if (fl_m == 9'd0) begin
                f32_exp_nf = 32'd0;
            end else begin
                fl_v  = {fl_m, 7'd0};
                fl_lz = 4'd0;
                if (fl_v[15:8]  == 8'd0) begin fl_v = fl_v << 8; fl_lz = 4'd8; end
                if (fl_v[15:12] == 4'd0) begin fl_v = fl_v << 4; fl_lz = fl_lz + 4'd4; end
                if (fl_v[15:14] == 2'd0) begin fl_v = fl_v << 2; fl_lz = fl_lz + 4'd2; end
                if (!fl_v[15])           begin fl_v = fl_v << 1; fl_lz = fl_lz + 4'd1; end
                f32_exp_nf = {fl_sgn, 8'd135 - {4'd0, fl_lz}, fl_v[14:0], 8'd0};   // 2^(8 - lz) <= m
            end
        end
    endfunction

    // numerics.exp_f32, every fp32 step one f32_mul / f32_add call in the
    // model's order (no fusing):
    //   E0  NaN -> 32'h7FC00000; x > 88.7 (32'h42B16666, incl. +inf) -> +inf;
    //       x < -88.0 (32'hC2B00000, incl. -inf) -> +0  (this priority).
    //   E1  t  = x * LOG2E                       (32'h3FB8AA3B)
    //   E2  n  = rint(t), half to even, integer (|t| < 128: n fits 9 bits)
    //   E3  nf = float(n) (exact; n = 0 gives +0)
    //   E4  r1 = x - nf * LN2_HI                 (32'h3F317200)
    //   E5  r  = r1 - nf * LN2_LO                (32'h35BFBE8E)
    //   E6  p = C7; p = p * r + C_k, k = 6..0    (C_k = fp32(1/k!))
    //   E7  E = p[30:23] + n; E <= 0 -> +0; E >= 255 -> +inf;
    //       else bits(p) + (n << 23) (32-bit two's-complement add, as the
    //       model's int64 sum cast to uint32).
    // x - q is computed as x + (-q) and -(nf * c) as (-nf) * c: the same bits
    // (the sign of a product is the XOR of the operand signs, also for 0).
`ifdef VERILATOR
    function automatic [31:0] f32_exp(input [31:0] fl_x);
        /* verilator no_inline_task */
`else
    function [31:0] f32_exp(input [31:0] fl_x);
`endif
        reg [31:0]        fl_t, fl_nf;
        reg [31:0]        fl_r [0:0];
        reg [31:0]        fl_p;
        reg [4:0]         fl_sh;
        reg [23:0]        fl_mt, fl_rem, fl_half;
        reg [8:0]         fl_ip, fl_nmag;
        reg signed [9:0]  fl_n;
        reg signed [10:0] fl_esum;
        begin
            if (fl_x[30:0] > 31'h7F800000)                                     // E0
                f32_exp = 32'h7FC00000;
            else if (!fl_x[31] && fl_x[30:0] > 31'h42B16666)
                f32_exp = 32'h7F800000;
            else if (fl_x[31] && fl_x[30:0] > 31'h42B00000)
                f32_exp = 32'd0;
            else begin
                fl_t = f32_mul(fl_x, 32'h3FB8AA3B);                            // E1
                if (fl_t[30:23] < 8'd126) begin                                // E2: |t| < 0.5
                    fl_nmag = 9'd0;
                end else begin
                    fl_mt   = {1'b1, fl_t[22:0]};
                    fl_sh   = 5'd22 - fl_t[27:23];     // = 150 - exponent: 17..24 here
                    fl_ip   = 9'(fl_mt >> fl_sh);
                    fl_rem  = fl_mt & ~(24'hFFFFFF << fl_sh);
                    fl_half = 24'd1 << (fl_sh - 5'd1);
                    fl_nmag = fl_ip + {8'd0, (fl_rem > fl_half) || ((fl_rem == fl_half) && fl_ip[0])};
                end
                fl_n  = fl_t[31] ? -$signed({1'b0, fl_nmag}) : $signed({1'b0, fl_nmag});
                fl_nf = f32_exp_nf(fl_nmag, fl_t[31]);                         // E3
                fl_nf = {~fl_nf[31], fl_nf[30:0]};                             // -nf (n = 0: -0)
                fl_r[0] = f32_add(fl_x, f32_mul(fl_nf, 32'h3F317200));         // E4
                fl_r[0] = f32_add(fl_r[0], f32_mul(fl_nf, 32'h35BFBE8E));      // E5
                fl_p = f32_add(f32_mul(32'h39500D01, fl_r[0]), 32'h3AB60B61);  // E6
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3C088889);
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3D2AAAAB);
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3E2AAAAB);
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3F000000);
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3F800000);
                fl_p = f32_add(f32_mul(fl_p, fl_r[0]), 32'h3F800000);
                fl_esum = $signed({3'd0, fl_p[30:23]}) + 11'(fl_n);            // E7
                if (fl_esum <= 11'sd0)
                    f32_exp = 32'd0;
                else if (fl_esum >= 11'sd255)
                    f32_exp = 32'h7F800000;
                else
                    f32_exp = fl_p + {fl_n[8:0], 23'd0};
            end
        end
    endfunction

    // ------------------------------------------------------------------ bf16
    // Store rounding: h = (x + 0x7FFF + x[16]) >> 16 on the bit pattern
    // (round to nearest even, subnormals kept, overflow to +-inf, +-inf and
    // +-0 kept); a NaN becomes {sign, 15'h7FC0} (quiet, payload dropped).
`ifdef VERILATOR
    function automatic [15:0] f32_to_bf16(input [31:0] fl_x);
        /* verilator no_inline_task */
`else
    function [15:0] f32_to_bf16(input [31:0] fl_x);
`endif
        if (fl_x[30:0] > 31'h7F800000)
            f32_to_bf16 = {fl_x[31], 15'h7FC0};
        else    // the carry of x[15:0] + 0x7FFF + x[16] into bit 16; no wrap for non-NaN x
            f32_to_bf16 = fl_x[31:16] + {15'd0, (fl_x[15:0] > 16'h8000)
                                                || ((fl_x[15:0] == 16'h8000) && fl_x[16])};
    endfunction

    // Exact widening, every pattern (NaN payloads included): bits << 16.
`ifdef VERILATOR
    function automatic [31:0] bf16_to_f32(input [15:0] fl_h);
        /* verilator no_inline_task */
`else
    function [31:0] bf16_to_f32(input [15:0] fl_h);
`endif
        bf16_to_f32 = {fl_h, 16'd0};
    endfunction

`endif
