// The bytes of a command's operands (docs/ahbm.md §4, operand layouts), all multiples of 64 since D is a
// multiple of 32: what pe_cmdq range-checks, what pe_front asks the DMA for and what pe_engine's
// NORM_STORE writes. Included inside a module body that declares D, after pe_cmd.vh.
    function [23:0] kv_bytes(input [8:0] keys);      // K or V tile
        kv_bytes = 24'(keys) * 24'(D) * 24'd2;
    endfunction
    function [23:0] mask_bytes(input [7:0] rows, input [8:0] keys);
        mask_bytes = 24'(rows) * 24'(mask_stride(keys)) * 24'd2;
    endfunction
    function [23:0] rows_bytes(input [7:0] rows);    // Q or O block
        rows_bytes = 24'(rows) * 24'(D) * 24'd2;
    endfunction
