`default_nettype none
`timescale 1ns/1ps
// e8m15_cmp: the compare of units.md V.6.1, on raw bits (a non-canonical zero,
// e = 0 with m != 0, compares greater than +0). A = a[22:0], B = b[22:0]:
//
//   nan = a or b is a NaN (e = 255, m != 0)
//   eq  = (A == 0 and B == 0) or (A == B and sa == sb)
//   lt  = false when nan or eq; else sa when sa != sb;
//         else (A > B when sa = 1, A < B when sa = 0)
//   gt  = not nan and not eq and not lt
//
// Outputs lt (VCMPLT), gt (VCMPGT) and eq_nonan = eq and not nan (VCMPEQ);
// vc_alu also uses lt for VMAX and gt for VMIN (V.6.2).
module e8m15_cmp (
    input  wire [23:0] a,
    input  wire [23:0] b,
    output wire        lt,
    output wire        gt,
    output wire        eq_nonan
);
    wire        sa = a[23], sb = b[23];
    wire [22:0] ma = a[22:0], mb = b[22:0];
    wire nan_a = (a[22:15] == 8'hFF) && (a[14:0] != 15'd0);
    wire nan_b = (b[22:15] == 8'hFF) && (b[14:0] != 15'd0);
    wire nan   = nan_a | nan_b;
    wire eq    = ((ma == 23'd0) && (mb == 23'd0)) || ((ma == mb) && (sa == sb));
    wire ord   = (sa != sb) ? sa : (sa ? (ma > mb) : (ma < mb));

    assign lt       = ~nan & ~eq & ord;
    assign gt       = ~nan & ~eq & ~ord;
    assign eq_nonan = eq & ~nan;
endmodule
`default_nettype wire
