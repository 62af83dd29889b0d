// The host's AXI4-Lite master of a generated machine harness: a command queue
// Python fills in bulk, then starts; a done flag Python awaits once per batch.
//
// Why: a host made of cocotb coroutines (cocotbext-axi's AxiLiteMaster) wakes
// Python several times per bus beat; a round that stages 128 flits is 640
// writes. Here Python writes the batch as one file, raises `go`, and wakes
// again when `done` rises; the bus beats are made in Verilog on exactly the
// cycles the coroutine host made them (measured on the host pins with
// rtl/bench/axil_trace.v, docs/orch.md "Host timing"):
//   * a WRITE offers AW and W together from the launch edge L: AW is taken at
//     L+1, W at L+2, B at L+3 (the orchestrator's AW, W, B slave); the write
//     completes at the B edge, the next command launches the edge after:
//     4 cycles a write;
//   * a READ offers AR from L: taken at L+1, R at L+3, complete at R: 4 cycles;
//     a READ flagged `pipe` is offered right at the previous READ's AR
//     handshake (as the coroutine host queues the five words of one staging
//     slot): R to the next AR in 1 cycle, 3 cycles a read;
//   * the first command launches at the edge Python raised `go` after (it
//     awaits a rising edge first, as the coroutine host's channel did);
//   * a POLL reads, and stops when (value & mask) == want (status MET), on an
//     overshoot (ovs: NODE_STATUS count [23:8], 0 when valid [0] is clear,
//     minus baseline mod 2^16 above expected; status OVERSHOOT), or when the
//     cycles elapsed since it started reach `bound` (status TIMEOUT; with
//     `final`, after one more read launched the edge after, as tb/bundle/rtl_run.py
//     reads the value it names). Otherwise it waits
//     gap = max(interval, resolution ? elapsed / resolution : 0) cycles: the
//     next read launches at the completion edge + max(1, gap) (a simulated-time
//     wait of gap cycles from the completion edge, then the next rising edge,
//     which on both simulators is the edge at the end of the wait). `pre`
//     waits `interval` before the first read. A poll's start is the
//     completion edge of the command before, for the first command of a
//     batch `lead` cycles before the edge Python raised `go` after
//     (Python's clock when it was asked, tb/system/host_engine.py).
//
// Command word (one 64-digit hex line per command in QUEUE_FILE, read at go):
//   [255:252] op: 1 WRITE, 2 READ, 3 POLL (anything else: error UNKNOWN_OP)
//   [251] pipe   [250] ovs   [249] final   [248] pre
//   [247:232] addr   [231:168] data (WRITE, all 8 strobes) or mask (POLL)
//   [167:104] want   [103:72] bound   [71:56] interval   [55:40] resolution
//   [39:24] baseline   [23:8] expected   [7:0] zero
// Result word per command (RESULT_FILE, written on dump_req; also the last
// command's in last_*): [127:96] reads of a POLL (the final read not
// counted), [95:88] status (1 DONE, 2 MET, 3 TIMEOUT, 4 OVERSHOOT),
// [63:0] the last value read.
//
// Python's registers: count (commands in the batch), lead, go (raise to start,
// drop after done to rearm), dump_req (raise, await dump_ack, drop). Errors end
// the batch at once with done and err set (err_idx names the command):
// 1 OVERFLOW (count above DEPTH: nothing loaded, nothing sent),
// 2 UNKNOWN_OP, 3 LATE (a `pre` wait shorter than the lead).
// BREADY and RREADY are always high, as the coroutine host's were.
`default_nettype none
`timescale 1ns/1ps
module host_engine #(
    parameter integer DEPTH = 4096,
    parameter integer ADDR_W = 16,
    parameter         QUEUE_FILE = "host_engine_cmds.hex",
    parameter         RESULT_FILE = "host_engine_results.hex"
) (
    input  wire              clk,
    input  wire              resetn,
    output wire [ADDR_W-1:0] awaddr,
    output wire              awvalid,
    input  wire              awready,
    output wire [63:0]       wdata,
    output wire [7:0]        wstrb,
    output wire              wvalid,
    input  wire              wready,
    /* verilator lint_off UNUSEDSIGNAL */  // every response of the orchestrator is OKAY
    input  wire [1:0]        bresp,
    input  wire [1:0]        rresp,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire              bvalid,
    output wire              bready,
    output wire [ADDR_W-1:0] araddr,
    output wire              arvalid,
    input  wire              arready,
    input  wire [63:0]       rdata,
    input  wire              rvalid,
    output wire              rready
);
    initial begin
        if (DEPTH < 2 || DEPTH > 65535)
            $fatal(1, "host_engine %m: DEPTH=%0d must be 2..65535 (count is 16 bits)", DEPTH);
        if (ADDR_W < 1 || ADDR_W > 16)
            $fatal(1, "host_engine %m: ADDR_W=%0d must be 1..16 (the command's address field)", ADDR_W);
    end

    localparam [3:0] OP_WRITE = 4'd1, OP_READ = 4'd2, OP_POLL = 4'd3;
    localparam [7:0] ST_DONE = 8'd1, ST_MET = 8'd2, ST_TIMEOUT = 8'd3, ST_OVERSHOOT = 8'd4;
    localparam [2:0] E_OVERFLOW = 3'd1, E_OP = 3'd2, E_LATE = 3'd3;
    localparam [31:0] DEPTH32 = DEPTH;
    localparam integer QW = (DEPTH < 2) ? 1 : $clog2(DEPTH);   // queue index bits

    // ---------------- Python's side ----------------
    /* verilator lint_off UNUSEDSIGNAL */  // results are read by Python only
    reg         go = 1'b0;
    reg  [15:0] count = 16'd0;
    reg  [31:0] lead = 32'd0;
    reg         dump_req = 1'b0;
    reg         dump_ack = 1'b0;
    reg         done = 1'b0;
    reg  [2:0]  err = 3'd0;
    reg  [15:0] err_idx = 16'd0;
    reg  [63:0] last_value = 64'd0;
    reg  [31:0] last_reads = 32'd0;
    reg  [7:0]  last_status = 8'd0;
    reg  [255:0] q   [0:DEPTH-1];
    reg  [127:0] res [0:DEPTH-1];
    reg  [255:0] hd = 256'd0;   // command 0, read when go rises
    /* verilator lint_on UNUSEDSIGNAL */

    wire fits = count != 16'd0 && {16'd0, count} <= DEPTH32;
    /* verilator lint_off BLKSEQ */  // bench file exchange, not logic: acts at once on a request edge
    always @(posedge go) begin
        if (fits) begin
            $readmemh(QUEUE_FILE, q, 0, {16'd0, count} - 1);
            hd = q[0];
        end
    end
    always @(posedge dump_req) begin
        if (fits) $writememh(RESULT_FILE, res, 0, {16'd0, count} - 1);
        dump_ack = 1'b1;
    end
    always @(negedge dump_req) dump_ack = 1'b0;
    /* verilator lint_on BLKSEQ */

    // ---------------- state ----------------
    reg         run = 1'b0;
    reg  [31:0] cyc = 32'd0;        // free-running edge count (only differences matter)
    reg  [15:0] cp = 16'd0;         // the command being completed
    reg  [15:0] ai = 16'd0;         // the highest command whose AR (or AW/W) has been offered
    /* verilator lint_off UNUSEDSIGNAL */  // flags of the first command only, the zero byte
    reg  [255:0] cur = 256'd0;      // q[cp]
    /* verilator lint_on UNUSEDSIGNAL */
    reg  [31:0] pstart = 32'd0;     // the current poll's start
    reg  [31:0] reads = 32'd0;      // reads of the current poll
    reg         fin = 1'b0;         // the current poll's final read is out
    reg         lpend = 1'b0;       // a launch of command cp is due at cyc == lat
    reg  [31:0] lat = 32'd0;
    reg         aw_q = 1'b0, w_q = 1'b0, ar_q = 1'b0;
    reg  [ADDR_W-1:0] awaddr_q = {ADDR_W{1'b0}}, araddr_q = {ADDR_W{1'b0}};
    reg  [63:0] wdata_q = 64'd0;

    // ---------------- the first command, offered the cycle go is raised ----------------
    wire       first = go && !run && !done;
    wire [3:0] hd_op = hd[255:252];
    wire       f_ok = fits && (hd_op == OP_WRITE || hd_op == OP_READ || hd_op == OP_POLL);
    wire       f_w = first && f_ok && hd_op == OP_WRITE;
    wire       f_r = first && f_ok && (hd_op == OP_READ || (hd_op == OP_POLL && !hd[248]));

    assign awvalid = aw_q | f_w;
    assign awaddr  = f_w ? hd[232 +: ADDR_W] : awaddr_q;
    assign wvalid  = w_q | f_w;
    assign wdata   = f_w ? hd[231:168] : wdata_q;
    assign wstrb   = 8'hFF;
    assign bready  = 1'b1;
    assign arvalid = ar_q | f_r;
    assign araddr  = f_r ? hd[232 +: ADDR_W] : araddr_q;
    assign rready  = 1'b1;

    wire aw_hs = awvalid && awready;
    wire w_hs  = wvalid && wready;
    wire ar_hs = arvalid && arready;

    // ---------------- the command under completion ----------------
    wire [3:0]  c_op    = cur[255:252];
    wire [63:0] c_mask  = cur[231:168];
    wire [63:0] c_want  = cur[167:104];
    wire [31:0] c_bound = cur[103:72];
    wire [31:0] c_intv  = {16'd0, cur[71:56]};
    wire [31:0] c_res   = {16'd0, cur[55:40]};
    wire [15:0] c_base  = cur[39:24];
    wire [15:0] c_exp   = cur[23:8];
    wire [31:0] el      = cyc - pstart;                   // cycles since the poll started
    wire [31:0] grow    = (c_res == 32'd0) ? 32'd0 : el / c_res;
    wire [31:0] gap     = (grow > c_intv) ? grow : c_intv;
    wire [31:0] step    = (gap == 32'd0) ? 32'd1 : gap;
    wire [15:0] seen    = rdata[0] ? rdata[23:8] : 16'd0;
    wire [15:0] arrived = seen - c_base;
    wire        met     = (rdata & c_mask) == c_want;
    wire        ovs_hit = cur[250] && arrived > c_exp;
    wire        out_of  = el >= c_bound;
    wire        r_now   = run && rvalid;
    wire        poll_end = c_op == OP_POLL && r_now && (fin || met || ovs_hit || (out_of && !cur[249]));
    wire        c_end   = (c_op == OP_WRITE && run && bvalid) || (c_op == OP_READ && r_now) || poll_end;
    wire [7:0]  c_status = c_op != OP_POLL ? ST_DONE : fin ? ST_TIMEOUT : met ? ST_MET
                         : ovs_hit ? ST_OVERSHOOT : ST_TIMEOUT;
    wire [31:0] c_reads = (c_op == OP_POLL && !fin) ? reads + 32'd1 : reads;
    wire [63:0] c_value = c_op == OP_WRITE ? 64'd0 : rdata;
    wire        last    = cp + 16'd1 == count;
    wire [QW-1:0] cp_i  = cp[QW-1:0];   // cp < count <= DEPTH
    wire [QW-1:0] nx_i  = cp_i + 1'b1;  // used only when cp + 1 < count
    wire [QW-1:0] pa_i  = ai[QW-1:0] + 1'b1;
    wire [255:0] nx     = q[nx_i];
    wire [3:0]  nx_op   = nx[255:252];
    wire        nx_ok   = nx_op == OP_WRITE || nx_op == OP_READ || nx_op == OP_POLL;
    // the next READ rides behind this one's AR (pipe), if the one offered now is a READ
    /* verilator lint_off UNUSEDSIGNAL */  // only its op, pipe flag and address matter
    wire [255:0] pa     = q[pa_i];
    /* verilator lint_on UNUSEDSIGNAL */
    wire        pipe_on = ar_hs && ai + 16'd1 < count && pa[255:252] == OP_READ && pa[251];
    wire        launch  = run && lpend && cyc == lat;   // never at a completion edge: it is scheduled after one
    // the first command's `pre` wait ends at pre_at (cyc's value at that edge): due now, later, or already past
    wire [31:0] pre_at  = cyc - lead - 32'd1 + {16'd0, hd[71:56]};
    wire        pre     = hd_op == OP_POLL && hd[248];
    wire        late    = pre && $signed(pre_at - cyc) < 0;

    always @(posedge clk) begin
        cyc <= cyc + 32'd1;
        if (!resetn) begin
            run <= 1'b0; done <= 1'b0; err <= 3'd0; lpend <= 1'b0;
            aw_q <= 1'b0; w_q <= 1'b0; ar_q <= 1'b0;
        end else if (done) begin
            if (!go) begin     // rearmed once Python dropped go
                done <= 1'b0;
                ai <= 16'd0;
            end
        end else if (first) begin
            err_idx <= 16'd0;
            last_status <= 8'd0;
            if (!fits) begin
                err <= count == 16'd0 ? 3'd0 : E_OVERFLOW;
            end else if (!f_ok) begin
                err <= E_OP;
            end else if (late) begin
                err <= E_LATE;
            end else begin
                err <= 3'd0;
                run <= 1'b1;
                cp <= 16'd0; ai <= 16'd0; cur <= hd;
                pstart <= cyc - lead - 32'd1;  // Python's clock when it was asked
                reads <= 32'd0; fin <= 1'b0;
                aw_q <= f_w && !aw_hs; w_q <= f_w && !w_hs;
                awaddr_q <= awaddr; wdata_q <= wdata; araddr_q <= araddr;
                ar_q <= (f_r && !ar_hs) || (pre && pre_at == cyc);
                lpend <= pre && pre_at != cyc;
                lat <= pre_at;
                if (pipe_on) begin   // the next READ rides behind this AR
                    ar_q <= 1'b1; araddr_q <= pa[232 +: ADDR_W]; ai <= 16'd1;
                end
            end
        end else if (run) begin
            if (aw_hs) aw_q <= 1'b0;
            if (w_hs) w_q <= 1'b0;
            if (ar_hs) ar_q <= 1'b0;
            if (pipe_on) begin
                ar_q <= 1'b1; araddr_q <= pa[232 +: ADDR_W]; ai <= ai + 16'd1;
            end
            if (c_op == OP_POLL && r_now && !c_end) begin   // read again (or the final read)
                reads <= reads + 32'd1;
                lpend <= 1'b1;
                if (out_of) begin
                    fin <= 1'b1;
                    lat <= cyc + 32'd1;
                end else begin
                    lat <= cyc + step;
                end
            end
            if (c_end) begin
                res[cp_i] <= {c_reads, c_status, 24'd0, c_value};
                last_value <= c_value; last_reads <= c_reads; last_status <= c_status;
                if (last) begin
                    run <= 1'b0; lpend <= 1'b0;
                end else if (!nx_ok) begin
                    run <= 1'b0; lpend <= 1'b0; err <= E_OP; err_idx <= cp + 16'd1;
                end else begin
                    cp <= cp + 16'd1; cur <= nx;
                    pstart <= cyc; reads <= 32'd0; fin <= 1'b0;
                    if (ai == cp) begin   // not already offered behind this one
                        lpend <= 1'b1;
                        lat <= (nx_op == OP_POLL && nx[248]) ? cyc + {16'd0, nx[71:56]} : cyc + 32'd1;
                    end
                end
            end
            if (launch) begin   // offer command cp (a poll's next read) from this edge
                lpend <= 1'b0;
                ai <= cp;
                if (c_op == OP_WRITE) begin
                    aw_q <= 1'b1; w_q <= 1'b1; awaddr_q <= cur[232 +: ADDR_W]; wdata_q <= cur[231:168];
                end else begin
                    ar_q <= 1'b1; araddr_q <= cur[232 +: ADDR_W];
                end
            end
        end
        // done last of all: Python, woken by its rising edge, reads the results and err updated at this edge
        // (nonblocking assignments take effect in the order they were made)
        if (resetn && !done && ((first && (!fits || !f_ok || late)) || (run && c_end && (last || !nx_ok))))
            done <= 1'b1;
    end
endmodule
`default_nettype wire
