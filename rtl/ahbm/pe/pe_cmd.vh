// The PE's command word (docs/ahbm.md §4), shared by every PE module that reads commands (pe_cmdq,
// pe_front, pe_engine, pe_link): the opcodes, the FAULT codes and the field extractors. It needs no
// parameter of the includer; the operand sizes, which depend on D, are pe_sizes.vh. Included inside a
// module body; not a module of its own.
    /* verilator lint_off UNUSEDPARAM */  // the lists are shared: each includer reads some of the codes
    localparam [3:0] OP_NOP = 4'd0, OP_ATTN = 4'd1, OP_POP = 4'd2, OP_MERGE = 4'd3,
                     OP_STORE = 4'd4, OP_PUSH = 4'd5, OP_LOADQ = 4'd6, OP_KVSEND = 4'd7, OP_KVRECV = 4'd8;
    localparam [7:0] F_NONE = 8'd0, F_OPCODE = 8'd1, F_ROWS = 8'd2, F_ALIGN = 8'd3, F_RANGE = 8'd4,
                     F_EMPTY = 8'd5, F_FRAME = 8'd6, F_EDGE = 8'd7, F_RSVD = 8'd8;
    /* verilator lint_on UNUSEDPARAM */

    /* verilator lint_off UNUSEDSIGNAL */  // each extractor reads one field of the command
    function [3:0]  f_opc(input [127:0] c);  f_opc  = c[3:0];    endfunction
    function [7:0]  f_tag(input [127:0] c);  f_tag  = c[11:4];  endfunction
    function [2:0]  f_sreg(input [127:0] c); f_sreg = c[14:12]; endfunction
    function [2:0]  f_sreg2(input [127:0] c); f_sreg2 = c[17:15]; endfunction
    function [1:0]  f_dir(input [127:0] c);  f_dir  = c[19:18]; endfunction
    function [7:0]  f_rows(input [127:0] c); f_rows = {1'b0, c[30:24]} + 8'd1; endfunction
    function [8:0]  f_keys(input [127:0] c); f_keys = {1'b0, c[39:32]} + 9'd1; endfunction
    function [1:0]  f_qreg(input [127:0] c); f_qreg = c[41:40]; endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    function [7:0] mask_stride(input [8:0] keys);   // row stride of a mask tile, elements
        mask_stride = 8'(((keys + 9'd31) >> 5) << 5);
    endfunction
