// pe_core's command decoding (docs/ahbm.md §4): field extractors, operand sizes, the IPCQ packet
// headers and bodies at IPCQ_W bits, the static fault checks and the timing helpers of the engine.
// Included inside pe_core, after its parameters, localparams and state arrays (mlo_elem and mlo_body
// read the state sets); not a module of its own.
    // ---------------------------------------------------------------- command fields
    /* verilator lint_off UNUSEDSIGNAL */  // each extractor reads one field of the command
    function automatic [3:0]  f_opc(input [127:0] c);  f_opc  = c[3:0];   endfunction
    function automatic [7:0]  f_tag(input [127:0] c);  f_tag  = c[11:4];  endfunction
    function automatic [2:0]  f_sreg(input [127:0] c); f_sreg = c[14:12]; endfunction
    function automatic [2:0]  f_sreg2(input [127:0] c); f_sreg2 = c[17:15]; endfunction
    function automatic [1:0]  f_dir(input [127:0] c);  f_dir  = c[19:18]; endfunction
    function automatic [7:0]  f_rows(input [127:0] c); f_rows = {1'b0, c[30:24]} + 8'd1; endfunction
    function automatic [8:0]  f_keys(input [127:0] c); f_keys = {1'b0, c[39:32]} + 9'd1; endfunction
    function automatic [1:0]  f_qreg(input [127:0] c); f_qreg = c[41:40]; endfunction
    /* verilator lint_on UNUSEDSIGNAL */

    // bytes of the operands, all multiples of 64 (D is a multiple of 32)
    function automatic [23:0] kv_bytes(input [8:0] keys);
        kv_bytes = 24'(keys) * 24'(D) * 24'd2;
    endfunction
    function automatic [7:0] mask_stride(input [8:0] keys);   // row stride of a mask tile, elements
        mask_stride = 8'(((keys + 9'd31) >> 5) << 5);
    endfunction
    function automatic [23:0] mask_bytes(input [7:0] rows, input [8:0] keys);
        mask_bytes = 24'(rows) * 24'(mask_stride(keys)) * 24'd2;
    endfunction
    function automatic [23:0] rows_bytes(input [7:0] rows);    // Q or O block
        rows_bytes = 24'(rows) * 24'(D) * 24'd2;
    endfunction
    function automatic [15:0] mlo_len(input [7:0] rows);      // body words of an (m,l,O) packet
        mlo_len = 16'((32'(rows) * 32'(2 + D) + 32'(EPW - 1)) / 32'(EPW));
    endfunction

    // header word of an (m,l,O) packet (docs/ahbm.md §6): the fields in [63:0], the rest zero
    function automatic [IPCQ_W-1:0] mlo_header(input [6:0] rows_m1, input [7:0] push_tag);
        begin
            mlo_header = {IPCQ_W{1'b0}};
            mlo_header[63:0] = {16'd0, push_tag, 1'b0, rows_m1, 8'(PE_ID), KIND_MLO, mlo_len({1'b0, rows_m1} + 8'd1)};
        end
    endfunction

    // an (m,l,O) header that does not frame `rows` rows: KIND not 0x01 or LEN not mlo_len(rows)
    function automatic bad_mlo_header(input [23:0] h, input [7:0] rows);   // {KIND, LEN} of the header
        bad_mlo_header = (h[23:16] != KIND_MLO) || (h[15:0] != mlo_len(rows));
    endfunction

    // header word of a KV block packet: LEN = bytes / (IPCQ_W / 8), tag = the command's TAG
    function automatic [IPCQ_W-1:0] kv_header(input [127:0] c);
        begin
            kv_header = {IPCQ_W{1'b0}};
            kv_header[63:0] = {24'd0, f_tag(c), 8'(PE_ID), KIND_KV, 16'(c[95:72] >> KVSH)};
        end
    endfunction

    function automatic [7:0] range_fault(input [23:0] addr, input [23:0] len);
        if (addr[5:0] != 6'd0)
            range_fault = F_ALIGN;
        else if ({1'b0, addr} + {1'b0, len} > 25'(SLICE_BYTES))
            range_fault = F_RANGE;
        else
            range_fault = F_NONE;
    endfunction

    // static checks of a command (F_EMPTY / F_FRAME are found while executing)
    function automatic [7:0] cmd_fault(input [127:0] c);
        reg [7:0] rows;
        reg [8:0] keys;
        begin
            rows = f_rows(c);
            keys = f_keys(c);
            cmd_fault = F_NONE;
            if (f_opc(c) > OP_KVRECV)
                cmd_fault = F_OPCODE;
            else if (c[31] || 32'(rows) > 32'(MAXROWS) || (f_opc(c) == OP_ATTN && 32'(keys) > 32'(MAXKEYS)))
                cmd_fault = F_ROWS;
            else begin
                case (f_opc(c))
                    OP_ATTN: begin
                        if (c[47:42] != 6'd0) cmd_fault = F_RSVD;
                        else if (c[21] && EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                        else if (range_fault(c[71:48], kv_bytes(keys)) != F_NONE)
                            cmd_fault = range_fault(c[71:48], kv_bytes(keys));
                        else if (range_fault(c[95:72], kv_bytes(keys)) != F_NONE)
                            cmd_fault = range_fault(c[95:72], kv_bytes(keys));
                        else if (c[20] && range_fault(c[119:96], mask_bytes(rows, keys)) != F_NONE)
                            cmd_fault = range_fault(c[119:96], mask_bytes(rows, keys));
                    end
                    OP_POP:   if (c[127:32] != 96'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                    OP_MERGE: if (c[127:48] != 80'd0 || c[39:35] != 5'd0 || (c[34] && c[17:15] != 3'd0)
                                  || (c[21] && !c[34]) || (!c[34] && c[33:32] != 2'd0)) cmd_fault = F_RSVD;
                              else if (c[34] && EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                              else if (c[21] && EDGE[c[33:32]]) cmd_fault = F_EDGE;
                    OP_STORE: if (c[127:56] != 72'd0) cmd_fault = F_RSVD;
                              else cmd_fault = range_fault(c[55:32], rows_bytes(rows));
                    OP_PUSH:  if (c[127:40] != 88'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                    OP_LOADQ: if (c[39:32] != 8'd0 || c[47:42] != 6'd0 || c[127:72] != 56'd0) cmd_fault = F_RSVD;
                              else cmd_fault = range_fault(c[71:48], rows_bytes(rows));
                    OP_KVSEND, OP_KVRECV:
                              if (c[47:32] != 16'd0 || c[127:96] != 32'd0) cmd_fault = F_RSVD;
                              else if (EDGE[f_dir(c)]) cmd_fault = F_EDGE;
                              else if (c[77:72] != 6'd0 || c[95:72] == 24'd0) cmd_fault = F_ALIGN;
                              else if (c[95:91] != 5'd0) cmd_fault = F_RANGE;     // > 65535 IPCQ words
                              else cmd_fault = range_fault(c[71:48], c[95:72]);
                    default:  if (c[127:32] != 96'd0) cmd_fault = F_RSVD;     // NOP
                endcase
            end
        end
    endfunction

    function automatic [31:0] kv_lane(input [31:0] w);   // lane of KV body word w (1-based) in its slice word
        kv_lane = (w - 32'd1) % 32'(SPW);
    endfunction

    function automatic [31:0] ceil_div(input [31:0] n, input [31:0] k);
        ceil_div = (n + k - 32'd1) / k;
    endfunction
    function automatic [31:0] vcyc(input [31:0] n);
        vcyc = ceil_div(n, VEC_LANES);
    endfunction
    function automatic [31:0] mm_cycles(input [7:0] rows, input [8:0] keys);
        mm_cycles = ceil_div(32'(rows) * 32'(keys) * 32'(D), MM_MACS);
    endfunction

    // element e of the (m, l, O) packet body of state set s with `rows` rows
    function automatic [31:0] mlo_elem(input [2:0] s, input [7:0] rows, input [31:0] e);
        reg [31:0] r32;
        begin
            r32 = 32'(rows);
            if (e < r32) mlo_elem = st_m[32'(s) * MAXROWS + e];
            else if (e < 2 * r32) mlo_elem = st_l[32'(s) * MAXROWS + e - r32];
            else if (e < 2 * r32 + r32 * D) mlo_elem = st_o[32'(s) * MAXROWS * D + e - 2 * r32];
            else mlo_elem = 32'd0;
        end
    endfunction

    // body word j (1-based) of the (m, l, O) packet of state set s: EPW elements, element 2i+.. low first
    function automatic [IPCQ_W-1:0] mlo_body(input [2:0] s, input [7:0] rows, input [31:0] j);
        integer u;
        begin
            mlo_body = {IPCQ_W{1'b0}};
            for (u = 0; u < EPW; u = u + 1)
                mlo_body[32*u +: 32] = mlo_elem(s, rows, 32'(EPW) * (j - 32'd1) + 32'(u));
        end
    endfunction
