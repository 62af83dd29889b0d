// past_end(first, n): whether the n DRAM words from word `first` reach past the DRAM behind the
// memory agent (first + n > DRAM_WORDS, in 36-bit arithmetic so no sum wraps). Included inside
// mag.v (read requests) and mag_write.v (write requests), each of which declares
// `localparam [30:0] WORDS31 = DRAM_WORDS[30:0];` (DRAM_WORDS < 2**31 is checked by mag.v).
function automatic past_end(input [34:0] first, input [10:0] n);
    reg [35:0] end_word;
    begin
        end_word = {1'b0, first} + {25'd0, n};
        past_end = (end_word[35:31] != 5'd0) || (end_word[30:0] > WORDS31);
    end
endfunction
