// pe_engine's arithmetic stages (rtl/ahbm/pe/pe_arith.vh) on arrays loaded from files, for
// tests/unit/ahbm/test_ahbm_arith_vpi.py: built once with AHBM_ARITH_VPI (the stages' compiled twins,
// rtl/ahbm/vpi/ahbm_arith.c) and once without (the Verilog loops), the two runs' outputs must be the same
// file for file. The arrays are pe_engine's, by name and size; in.<array>.hex sets them, a plusarg
// +xk=<i> makes K word i x, +xo=<i> and +xc=<i> O words (a twin that meets one must leave the work to the
// loop or the functions). The stages run as ATTN_TILE, MERGE, a streamed MERGE (set 7's packet, word by
// word, into set 4), IPCQ_POP (set 6's packet into set 1), NORM_STORE and INIT run them; after each one every array it writes goes to out<n>.<array>.hex.
`timescale 1ns/1ps
`default_nettype none
module ahbm_stage_tb;
    parameter integer D = 32;
    parameter integer MAXROWS = 8;
    parameter integer MAXKEYS = 16;
    parameter integer ROWS = 8;               // rows and keys of the stages' commands
    parameter integer KEYS = 16;
    parameter [31:0]  SCALE = 32'h3E3504F3;   // fp32(1/sqrt(32))
    localparam integer NSLOT = 3;
    localparam integer IPCQ_W = 64;
    localparam integer EPW = IPCQ_W / 32;
    localparam integer SLOT_K = MAXKEYS * D;
    localparam integer SLOT_M = MAXROWS * 128;
    localparam [31:0] NEG_INF = 32'hFF800000;
`include "fp32_lib.vh"
`include "pe_cmd.vh"
    reg  [15:0]  qbuf [0:4*MAXROWS*D-1];
    reg  [15:0]  kbuf [0:NSLOT*SLOT_K-1];
    reg  [15:0]  vbuf [0:NSLOT*SLOT_K-1];
    reg  [15:0]  mbuf [0:NSLOT*SLOT_M-1];
    reg  [31:0]  st_m [0:8*MAXROWS-1];
    reg  [31:0]  st_l [0:8*MAXROWS-1];
    reg  [31:0]  st_o [0:8*MAXROWS*D-1];
    reg  [31:0]  sp   [0:MAXROWS*MAXKEYS-1];
    reg  [31:0]  tf   [0:MAXKEYS*D-1];
    reg  [31:0]  qf   [0:D-1];
    reg  [15:0]  obuf [0:MAXROWS*D-1];
    reg  [31:0]  mb   [0:MAXROWS-1];
    reg  [31:0]  lb   [0:MAXROWS-1];
    reg  [31:0]  mea  [0:MAXROWS-1];
    reg  [31:0]  meb  [0:MAXROWS-1];
`include "pe_arith.vh"
    integer n, xk, xo, xc, w;
    task automatic dump(input [8*8-1:0] what);
        begin
            $writememh($sformatf("out%0d.sp.hex", n), sp);
            $writememh($sformatf("out%0d.st_m.hex", n), st_m);
            $writememh($sformatf("out%0d.st_l.hex", n), st_l);
            $writememh($sformatf("out%0d.st_o.hex", n), st_o);
            $writememh($sformatf("out%0d.obuf.hex", n), obuf);
            $writememh($sformatf("out%0d.mea.hex", n), mea);
            $writememh($sformatf("out%0d.meb.hex", n), meb);
            $display("stage %0d %0s", n, what);
            n = n + 1;
        end
    endtask
    initial begin
        n = 0;
        $readmemh("in.qbuf.hex", qbuf);
        $readmemh("in.kbuf.hex", kbuf);
        $readmemh("in.vbuf.hex", vbuf);
        $readmemh("in.mbuf.hex", mbuf);
        $readmemh("in.st_m.hex", st_m);
        $readmemh("in.st_l.hex", st_l);
        $readmemh("in.st_o.hex", st_o);
        if ($value$plusargs("xk=%d", xk)) kbuf[xk] = 16'hxxxx;
        if ($value$plusargs("xo=%d", xo)) st_o[xo] = 32'hxxxxxxxx;
        if ($value$plusargs("xc=%d", xc)) st_o[xc] = 32'hxxxxxxxx;
        for (w = 0; w < MAXROWS; w = w + 1) begin
            mea[w] = 32'd0;
            meb[w] = 32'd0;
        end
        // a tile with its mask into S2, a second without into S3, from other Q and tile slots
        do_s2(2'd1, 3'd1, 8'(ROWS), 9'(KEYS));        dump("s2");
        do_s34(3'd2, 3'd1, 8'(ROWS), 9'(KEYS), 1'b1); dump("s34");
        do_s6(3'd2, 3'd1, 8'(ROWS), 9'(KEYS));        dump("s6");
        do_s2(2'd3, 3'd2, 8'(ROWS), 9'(KEYS));        dump("s2");
        do_s34(3'd3, 3'd2, 8'(ROWS), 9'(KEYS), 1'b0); dump("s34");
        do_s6(3'd3, 3'd2, 8'(ROWS), 9'(KEYS));        dump("s6");
        do_merge(3'd2, 3'd3, 8'(ROWS));               dump("merge");
        do_merge(3'd5, 3'd5, 8'(ROWS));               dump("merge");
        for (w = 1; w <= (ROWS * (2 + D) + EPW - 1) / EPW; w = w + 1)
            take_word(3'd4, 8'(ROWS), 32'(w), mlo_body(3'd7, 8'(ROWS), 32'(w)), 1'b1);
        dump("smerge");
        for (w = 1; w <= (ROWS * (2 + D) + EPW - 1) / EPW; w = w + 1)
            take_word(3'd1, 8'(ROWS), 32'(w), mlo_body(3'd6, 8'(ROWS), 32'(w)), 1'b0);
        dump("pop");
        do_norm(3'd2, 8'(ROWS));                      dump("norm");
        do_norm(3'd6, 8'(ROWS));                      dump("norm");
        do_init(3'd0);                                dump("init");
        $finish;
    end
endmodule
`undef AHBM_FP32_LIB_VH
`default_nettype wire
