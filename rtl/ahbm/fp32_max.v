`default_nettype none
// fp32_max: y = numpy.maximum(a, b) on binary32 values, exact (no rounding).
// * either input NaN -> NaN.  numpy propagates one of the NaN operands (which
//   one, and its payload, is platform defined); this block returns the
//   canonical quiet NaN 32'h7FC00000 and the test canonicalises numpy's NaN.
//   (In the kernel max sees finite scores and -inf, never NaN.)
// * otherwise a > b ? a : b in value order, so equal values return b.  The only
//   equal values with different bits are +0 and -0: max(+0, -0) = -0 and
//   max(-0, +0) = +0, as numpy.maximum gives on x86-64 (SSE maxps semantics).
module fp32_max (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output wire [31:0] y
);
    wire a_nan = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
    wire b_nan = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
    wire a_zero = (a[30:0] == 31'd0);
    wire b_zero = (b[30:0] == 31'd0);
    // a > b for non-NaN values (sign-magnitude compare; +0 == -0)
    reg a_gt;
    always @* begin
        if (a_zero && b_zero)
            a_gt = 1'b0;
        else if (a[31] != b[31])
            a_gt = !a[31];
        else if (!a[31])
            a_gt = a[30:0] > b[30:0];
        else
            a_gt = a[30:0] < b[30:0];
    end
    assign y = (a_nan || b_nan) ? 32'h7FC00000 : (a_gt ? a : b);
endmodule
`default_nettype wire
