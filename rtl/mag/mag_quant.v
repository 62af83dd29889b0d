// QUANT: one memory-agent entry, FP16 -> MXFP7 (units.md M.3), packed as C.4 words. Combinational;
// in mag.v both inputs are registers on q_clk, clk gated to the edges that load them
// (rtl/arith/clock_gate.v), so on Verilator the conversion is evaluated only on those edges.
//
// In:  raw, the entry's 8 DRAM words as read (word j at [256j +: 256], so entry
//      byte b is raw[8b +: 8]); FP16 element (lane L, k) is bytes 64L+2k,
//      64L+2k+1 little-endian, i.e. raw[512L + 16k +: 16], L = 0..3, k = 0..31.
//      blayout: 0 = A packing, 1 = B packing.
// Out: words, the four response words (word w at [256w +: 256]). Word w holds
//      K = 8w..8w+7 of all four lanes: field j at [255-7j : 249-7j] is
//      (lane j/8, K = 8w + j%8) in A packing, (K = 8w + j/4, lane j%4) in B;
//      every word carries the four scale bytes, lane L at [31-8L : 24-8L].
//
// Per lane (lane_scale): peak = max of h[14:0] (unsigned), dec(), the
// normalisation loop, sexp/sm from the thresholds, the clamp of sexp into
// [-20, 11], scale byte {(sexp+20)[4:0], (sm-8)[2:0]} (an all-zero lane gets
// 0xA0). Per element (elem_code): t = (sexp+21) - e; 0 if sig == 0 or t >= 8;
// 63 if t < 0; else x = (sig*rec >> 15) mod 256, x >>= t, mag = min(63,
// x/2 + x%2); the sign applied in 7-bit two's complement (-0 -> 0). The
// element rule reads sexp and sm back from the scale byte, so it takes any
// byte (tests/unit/mag/test_mag_quant_rtl.py drives it alone with every byte).
// models/numerics/mxfp7.py is the same transform in Python, bit for bit.
//
// Exponents are kept offset (e + 16, sexp + 21) so every quantity is unsigned.
`default_nettype none
`timescale 1ns/1ps
module mag_quant (
    input  wire [2047:0] raw,
    input  wire          blayout,
    output wire [1023:0] words
);
    // Scale byte of one lane of 32 FP16 patterns (lane[16k +: 16] = element k).
    function [7:0] lane_scale(input [511:0] lane);
        reg [14:0] peak;
        reg [10:0] sig;
        reg [5:0]  eb;      // e + 16 (7..47)
        reg [5:0]  s16;     // sexp + 20 + 16 before the clamp
        reg [4:0]  se20;    // sexp + 20 after the clamp (0..31)
        reg [2:0]  smo;     // sm - 8
        integer    k;
        begin
            peak = 15'd0;
            for (k = 0; k < 32; k = k + 1)
                if (lane[16*k +: 15] > peak) peak = lane[16*k +: 15];
            if (peak[14:10] == 5'd0) begin
                eb  = 6'd17;
                sig = {1'b0, peak[9:0]};
            end else begin
                eb  = {1'b0, peak[14:10]} + 6'd16;
                sig = {1'b1, peak[9:0]};
            end
            for (k = 0; k < 10; k = k + 1)
                if (sig != 11'd0 && !sig[10]) begin
                    sig = sig << 1;
                    eb  = eb - 6'd1;
                end
            if (sig == 11'd0) begin
                s16 = 6'd36;                       // sexp = 0, sm = 8
                smo = 3'd0;
            end else if (sig > 11'd1890) begin
                s16 = eb;                          // sexp = e - 20
                smo = (sig > 11'd2016) ? 3'd1 : 3'd0;
            end else begin
                s16 = eb - 6'd1;                   // sexp = e - 21; sm = ceil(sig/126) in [9, 15]
                smo = 3'd1 + {2'd0, sig > 11'd1134} + {2'd0, sig > 11'd1260} + {2'd0, sig > 11'd1386}
                           + {2'd0, sig > 11'd1512} + {2'd0, sig > 11'd1638} + {2'd0, sig > 11'd1764};
            end
            if (s16 < 6'd16)       se20 = 5'd0;    // sexp below -20
            else if (s16 > 6'd47)  se20 = 5'd31;   // sexp above 11 (unreachable: e <= 31)
            else                   se20 = s16[4:0] - 5'd16;
            lane_scale = {se20, smo};
        end
    endfunction

    // 7-bit code of one FP16 pattern under its lane's scale byte.
    function [6:0] elem_code(input [15:0] h, input [7:0] scale);
        reg [5:0]  sp21;    // sexp + 21 (1..32)
        reg [5:0]  ee;      // dec(h).e (1..31)
        reg [10:0] sig;
        reg [12:0] rec;
        /* verilator lint_off UNUSEDSIGNAL */  // [14:0]: the fraction floor() drops; [23]: gone by mod 256
        reg [23:0] prod;
        /* verilator lint_on UNUSEDSIGNAL */
        reg [7:0]  x;
        reg [2:0]  t;
        reg [7:0]  r;
        reg [6:0]  qmag;
        begin
            sp21 = {1'b0, scale[7:3]} + 6'd1;
            ee   = (h[14:10] == 5'd0) ? 6'd1 : {1'b0, h[14:10]};
            sig  = {h[14:10] != 5'd0, h[9:0]};
            case (scale[2:0])
                3'd0: rec = 13'd4096;
                3'd1: rec = 13'd3641;
                3'd2: rec = 13'd3277;
                3'd3: rec = 13'd2979;
                3'd4: rec = 13'd2731;
                3'd5: rec = 13'd2520;            // sm 13: 2520, not round(32768/13) = 2521
                3'd6: rec = 13'd2341;
                default: rec = 13'd2185;
            endcase
            prod = {13'd0, sig} * {11'd0, rec};
            x    = prod[22:15];                   // floor(sig*rec / 2^15) mod 256
            t    = sp21[2:0] - ee[2:0];           // t mod 8; used only when 0 <= t < 8
            r    = 8'd0;
            if (sig == 11'd0 || sp21 >= ee + 6'd8) begin
                qmag = 7'd0;
            end else if (ee > sp21) begin
                qmag = 7'd63;
            end else begin
                x   = x >> t;
                r   = {1'b0, x[7:1]} + {7'd0, x[0]};       // round half up
                qmag = (r > 8'd63) ? 7'd63 : r[6:0];
            end
            elem_code = h[15] ? (7'd0 - qmag) : qmag;
        end
    endfunction

    // One process for the whole entry: Icarus runs it once per change of raw or blayout
    // (a continuous assignment per element cost twice as much). Field j of word w is
    // element (lane, K) = (j%4, 8w + j/4) in B packing, (j/8, 8w + j%8) in A packing.
    reg [31:0]   scales;              // lane L at [8L +: 8]
    reg [1023:0] w_r;
    integer      L, w, j, lane, kk;
    always @* begin
        for (L = 0; L < 4; L = L + 1)
            scales[8*L +: 8] = lane_scale(raw[512*L +: 512]);
        for (w = 0; w < 4; w = w + 1) begin
            for (j = 0; j < 32; j = j + 1) begin
                lane = blayout ? j % 4 : j / 8;
                kk   = blayout ? 8*w + j / 4 : 8*w + j % 8;
                w_r[256*w + 249 - 7*j +: 7] = elem_code(raw[512*lane + 16*kk +: 16], scales[8*lane +: 8]);
            end
            for (L = 0; L < 4; L = L + 1)
                w_r[256*w + 24 - 8*L +: 8] = scales[8*L +: 8];
        end
    end
    assign words = w_r;
endmodule
`default_nettype wire
