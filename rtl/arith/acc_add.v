`default_nettype none
// acc_add: S1E7M14 z = x + y (the GEMM ADD step), one rounding, nearest even;
// saturates at the largest magnitude; under 2^-62 and exact zero give +0.
// An exponent-0 operand is zero whatever its other bits.
module acc_add (
    input  wire [21:0] x,
    input  wire [21:0] y,
    output wire [21:0] z
);
    wire xz = (x[20:14] == 7'd0);
    wire yz = (y[20:14] == 7'd0);
    wire [14:0] mx = xz ? 15'd0 : {1'b1, x[13:0]};
    wire [14:0] my = yz ? 15'd0 : {1'b1, y[13:0]};
    wire signed [11:0] ex = $signed({5'd0, x[20:14]}) - 12'sd77;  // E - 63 - 14
    wire signed [11:0] ey = $signed({5'd0, y[20:14]}) - 12'sd77;

    wire               s;
    wire [19:0]        mag;
    wire signed [11:0] lsb;

    fp_align_add #(.W(15), .G(4), .EW(12)) u_add (
        .sx(x[21] & !xz), .mx(mx), .ex(ex),
        .sy(y[21] & !yz), .my(my), .ey(ey),
        .s(s), .mag(mag), .lsb_exp(lsb)
    );
    acc_round_pack #(.W(20)) u_pack (.sign(s), .mag(mag), .lsb_exp(lsb), .y(z));
endmodule
`default_nettype wire
