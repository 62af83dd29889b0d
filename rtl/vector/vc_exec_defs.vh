// vc_exec_defs.vh: the encodings the vector core's kernel (vc_exec.v) and its decoder (vc_decode.v) share:
// fault codes (units.md V.10), the opcodes with a rule of their own (V.5), operand sources, the tree mode,
// the lanes' operand sources, the VRED kinds, the hazard classes and the sequencer's states. Included
// inside each module body; a module reads only some of them, hence the lint waiver.
/* verilator lint_off UNUSEDPARAM */
    localparam [31:0] F_DTYPE = 32'd1, F_VSRC = 32'd2, F_CHAIN = 32'd3, F_OPCODE = 32'd4, F_LEN = 32'd5,
                      F_LOOP = 32'd6, F_VL = 32'd7, F_REDVL = 32'd8, F_CUDATA = 32'd9;
    localparam [4:0] OP_ALU_LAST = 5'h11, OP_VCVT = 5'h12, OP_VRED = 5'h13, OP_VLD = 5'h14, OP_VST = 5'h15,
                     OP_VBCAST = 5'h16, OP_VSHUF = 5'h17, OP_VSETVL = 5'h18, OP_VSETMODE = 5'h19,
                     OP_VSETI = 5'h1A, OP_VLOOP = 5'h1B, OP_VBAR = 5'h1C, OP_VFILL = 5'h1D, OP_VDRAIN = 5'h1E;
                     // 5'h1F VHALT is the decoder's default
    localparam [1:0] SRC_V = 2'd0, SRC_S = 2'd1, SRC_C = 2'd2, SRC_K = 2'd3;
    localparam [1:0] M_TREE = 2'd3;
    localparam [2:0] L_ROW = 3'd0, L_CONST = 3'd1, L_CREG = 3'd2;   // vc_lanes operand sources
    localparam [2:0] K_EXPSUM = 3'd5;   // VRED kinds (0 SUM .. 5 EXPSUM in vc_red, 6 ANY, 7 ALL here)
    localparam [1:0] HZ_DRAINS = 2'd0, HZ_FLAT = 2'd1, HZ_OTHER = 2'd2;
    localparam [23:0] E8_ONE = 24'h3F8000;

    localparam [4:0] S_IDLE = 5'd0, S_BOUND = 5'd1, S_DEC = 5'd2, S_GATHER = 5'd3, S_ISSUE = 5'd4,
                     S_ALU = 5'd5, S_CVT = 5'd6, S_SHUF = 5'd7, S_BC = 5'd8, S_LD = 5'd9, S_ST = 5'd10,
                     S_RED = 5'd11, S_XFER = 5'd12;
/* verilator lint_on UNUSEDPARAM */
