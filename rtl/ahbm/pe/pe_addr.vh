// The slice address a command's 24-bit address field names (docs/ahbm.md §4): K_ADDR, V_ADDR, MASK_ADDR,
// Q_ADDR, O_ADDR, KV_ADDR count bytes when the build's ADDR_SHIFT is 0 (every bench's default: a 16 MiB
// slice, a field not 64-byte aligned is F_ALIGN) and 64-byte words when it is 6 (a slice of up to 1 GiB,
// for long contexts; every field is then aligned). Included inside a module body that declares the
// parameter ADDR_SHIFT (0 or 6, guarded by pe_core); shared by pe_cmdq (range checks), pe_front (DMA
// requests), pe_engine (NORM_STORE) and pe_link (KV_SEND / KV_RECV).
    /* verilator lint_off UNUSEDSIGNAL */  // slice_word drops the byte offset, which a caller has checked
    function [29:0] slice_byte(input [23:0] field);   // the byte address
        slice_byte = 30'(field) << ADDR_SHIFT;
    endfunction
    function [23:0] slice_word(input [23:0] field);   // the 64-byte word address
        reg [29:0] b;
        begin
            b = slice_byte(field);
            slice_word = b[29:6];
        end
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
