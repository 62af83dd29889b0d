// vc_agu: the vector core's descriptor walk (units.md V.3).
//
// `start` latches one descriptor (base, four {stride, bound}) and the signed
// offset; from the next cycle `addr` is walk element 0 and each `step` moves to
// the next element, dimension 0 fastest:
//     addr_n = (base + off + i0*st0 + i1*st1 + i2*st2 + i3*st3) mod 2^40
// After the last element the walk does not wrap: further steps repeat the last
// address. `total` = b0*b1*b2*b3 with a bound of 0 read as 1 and every partial
// product capped at 65535, so an oversized walk still exceeds F_LEN's 256.
// Strides are 18-bit two's complement, bounds 16 bits (DESC packing, V.2).
`default_nettype none
`timescale 1ns/1ps
module vc_agu (
    input  wire         clk,
    input  wire         resetn,
    input  wire         start,
    input  wire [39:0]  base,
    input  wire [39:0]  off,         // sign-extended VLD/VST offset, 0 for VFILL/VDRAIN
    input  wire [71:0]  strides,     // {st3, st2, st1, st0}, 18 bits each
    input  wire [63:0]  bounds,      // {b3, b2, b1, b0}, 16 bits each
    input  wire         step,
    output wire [39:0]  addr,
    output wire [15:0]  total
);
    reg [39:0] w_base;
    reg signed [17:0] st0, st1, st2, st3;
    reg [15:0] b0, b1, b2, b3;
    reg [15:0] i0, i1, i2, i3;
    reg [15:0] cnt;

    function automatic [15:0] one_if_zero(input [15:0] b);
        one_if_zero = (b == 16'd0) ? 16'd1 : b;
    endfunction
    function automatic [15:0] capmul(input [15:0] x, input [15:0] y);
        reg [31:0] p;
        begin
            p = {16'd0, x} * {16'd0, y};
            capmul = (p > 32'd65535) ? 16'hFFFF : p[15:0];
        end
    endfunction

    assign total = capmul(capmul(capmul(b0, b1), b2), b3);

    // i_k * st_k: 16-bit unsigned index times 18-bit signed stride, all summed mod 2^40
    wire signed [39:0] p0 = $signed({24'd0, i0}) * $signed({{22{st0[17]}}, st0});
    wire signed [39:0] p1 = $signed({24'd0, i1}) * $signed({{22{st1[17]}}, st1});
    wire signed [39:0] p2 = $signed({24'd0, i2}) * $signed({{22{st2[17]}}, st2});
    wire signed [39:0] p3 = $signed({24'd0, i3}) * $signed({{22{st3[17]}}, st3});
    assign addr = w_base + p0 + p1 + p2 + p3;

    wire more = ({16'd0, cnt} + 32'd1) < {16'd0, total};
    always @(posedge clk) begin
        if (!resetn) begin
            w_base <= 40'd0;
            st0 <= 18'sd0; st1 <= 18'sd0; st2 <= 18'sd0; st3 <= 18'sd0;
            b0 <= 16'd1; b1 <= 16'd1; b2 <= 16'd1; b3 <= 16'd1;
            i0 <= 16'd0; i1 <= 16'd0; i2 <= 16'd0; i3 <= 16'd0;
            cnt <= 16'd0;
        end else if (start) begin
            w_base <= base + off;
            st0 <= strides[17:0];  st1 <= strides[35:18];  st2 <= strides[53:36];  st3 <= strides[71:54];
            b0 <= one_if_zero(bounds[15:0]);   b1 <= one_if_zero(bounds[31:16]);
            b2 <= one_if_zero(bounds[47:32]);  b3 <= one_if_zero(bounds[63:48]);
            i0 <= 16'd0; i1 <= 16'd0; i2 <= 16'd0; i3 <= 16'd0;
            cnt <= 16'd0;
        end else if (step && more) begin
            cnt <= cnt + 16'd1;
            if (i0 + 16'd1 != b0) i0 <= i0 + 16'd1;
            else begin
                i0 <= 16'd0;
                if (i1 + 16'd1 != b1) i1 <= i1 + 16'd1;
                else begin
                    i1 <= 16'd0;
                    if (i2 + 16'd1 != b2) i2 <= i2 + 16'd1;
                    else begin
                        i2 <= 16'd0;
                        i3 <= i3 + 16'd1;
                    end
                end
            end
        end
    end
endmodule
`default_nettype wire
