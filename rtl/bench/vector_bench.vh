// The body every pure-Verilog vector bench shares (included inside the bench
// module, before the generate that elaborates the block under test on vin/vout).
//
// Reads N input vectors from vin.hex, applies each to the block, and writes the
// N outputs to vout.hex, both in the current directory. tb/lib/verilog_vectors.py
// builds the vectors, sets OP/IN_W/OUT_W/N, runs the bench and reads the result.
    parameter integer OP    = 0;
    parameter integer IN_W  = 16;
    parameter integer OUT_W = 24;
    parameter integer N     = 1;

    reg  [IN_W-1:0]  vin_mem  [0:N-1];
    reg  [OUT_W-1:0] vout_mem [0:N-1];
    reg  [IN_W-1:0]  vin;
    wire [OUT_W-1:0] vout;

    integer i;
    initial begin
        $readmemh("vin.hex", vin_mem);
        for (i = 0; i < N; i = i + 1) begin
            vin = vin_mem[i];
            #1;
            vout_mem[i] = vout;
        end
        $writememh("vout.hex", vout_mem);
        $finish;
    end
