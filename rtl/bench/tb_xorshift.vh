// xorshift32 (Marsaglia's 13/17/5), the bench generators' random source: included inside a module.
// The state must never be 0 (0 maps to 0).
    function automatic [31:0] xorshift(input [31:0] v);
        reg [31:0] a;
        reg [31:0] b;
        begin
            a = v ^ (v << 13);
            b = a ^ (a >> 17);
            xorshift = b ^ (b << 5);
        end
    endfunction
