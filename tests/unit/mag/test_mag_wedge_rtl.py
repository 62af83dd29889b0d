"""The memory agent's write-slot wedge monitor (rtl/mag/mag.v) through Icarus, no cocotb.

Two writers open a write each, the second's MEM_WR_REQ ahead of the first's data in the write queue.
With one write slot the second request waits for a slot the first write holds until its data, which is
behind that request: upstream's port deadlocks the same way, and ours must say so (an ERROR line naming
WR_SLOTS, mon_err) rather than hang silently. With two slots the same flits complete: two acks, no monitor.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tb.run.benches import INCLUDE_DIRS, MAG_AGENT_DEPS

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [*MAG_AGENT_DEPS, "rtl/mag/mag_dram.v"]

# MAG at (0,1); writers (1,0) and (2,0); flit = {dst, src, type, txn, last, rsvd, payload}, payload of a
# MEM_WR_REQ = {addr[39:0], len, ...}. The bench offers the flits in order, honouring busy, then counts acks.
BENCH = r"""
`timescale 1ns/1ps
module wedge_tb;
    parameter integer WR_SLOTS = 1;
    reg clk = 0, resetn = 0;
    always #5 clk = ~clk;
    reg  [287:0] in_data;
    reg          in_valid = 0;
    wire         in_busy;
    wire [287:0] out_data;
    wire         out_valid;
    wire mem_rd_req, mem_rd_ready, mem_rd_valid, mem_wr_req, mag_err, dram_err;
    wire [34:0] mem_rd_addr, mem_wr_addr;
    wire [255:0] mem_rd_data, mem_wr_data;
    mag #(.DRAM_WORDS(64), .RDQ_DEPTH(8), .WRQ_DEPTH(8), .Q_MARGIN(0), .WR_SLOTS(WR_SLOTS)) u_mag (
        .clk(clk), .resetn(resetn), .noc_in_data(in_data), .noc_in_valid(in_valid), .noc_in_busy(in_busy),
        .noc_out_data(out_data), .noc_out_valid(out_valid), .noc_out_busy(1'b0),
        .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),
        .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data),
        .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data), .mon_err(mag_err));
    mag_dram #(.WORDS(64)) dram (
        .clk(clk), .resetn(resetn), .rd_req(mem_rd_req), .rd_addr(mem_rd_addr), .rd_ready(mem_rd_ready),
        .rd_valid(mem_rd_valid), .rd_data(mem_rd_data), .wr_req(mem_wr_req), .wr_addr(mem_wr_addr),
        .wr_data(mem_wr_data), .mon_err(dram_err));
    function [287:0] flit(input [7:0] src, input [3:0] ty, input [7:0] txn, input last, input [255:0] pl);
        flit = {8'h01, src, ty, txn, last, 3'd0, pl};
    endfunction
    task send(input [287:0] f);
        begin
            in_data = f; in_valid = 1;
            @(posedge clk); while (in_busy) @(posedge clk);
            #1 in_valid = 0;
        end
    endtask
    integer acks = 0;
    always @(posedge clk) if (out_valid && out_data[271:268] == 4'h3) acks = acks + 1;
    initial begin
        repeat (4) @(posedge clk); #1 resetn = 1;
        send(flit(8'h10, 4'h1, 8'hA1, 1, {40'd0, 8'd1, 208'd0}));        // A: 2 beats at word 0
        send(flit(8'h20, 4'h1, 8'hB1, 1, {40'd256, 8'd1, 208'd0}));      // B: 2 beats at word 8
        send(flit(8'h10, 4'h4, 8'h00, 0, 256'hA0));
        send(flit(8'h10, 4'h4, 8'h00, 1, 256'hA1));
        send(flit(8'h20, 4'h4, 8'h00, 0, 256'hB0));
        send(flit(8'h20, 4'h4, 8'h00, 1, 256'hB1));
        repeat (200) @(posedge clk);
        $display("RESULT acks=%0d mon_err=%0d", acks, mag_err | dram_err);
        $finish;
    end
endmodule
"""


def _run(tmp: Path, slots: int) -> str:
    (tmp / "wedge_tb.v").write_text(BENCH)
    build = ["iverilog", "-g2012", "-o", str(tmp / "t.vvp"), "-s", "wedge_tb", f"-Pwedge_tb.WR_SLOTS={slots}",
             *[f"-I{ROOT / d}" for d in INCLUDE_DIRS], str(tmp / "wedge_tb.v")] + [str(ROOT / s) for s in SOURCES]
    subprocess.run(build, check=True, capture_output=True, text=True, cwd=tmp)
    run = subprocess.run(["vvp", "-n", str(tmp / "t.vvp")], capture_output=True, text=True, timeout=60, cwd=tmp)
    return run.stdout + run.stderr


def test_one_slot_two_writers_is_reported_wedged(tmp_path: Path) -> None:
    out = _run(tmp_path, 1)
    assert "RESULT acks=0 mon_err=1" in out, out
    wedge = [line for line in out.splitlines() if "write intake wedged" in line]
    assert len(wedge) == 1 and "WR_SLOTS=1" in wedge[0] and "from (2,0)" in wedge[0], out


def test_two_slots_complete_both_writes(tmp_path: Path) -> None:
    out = _run(tmp_path, 2)
    assert "RESULT acks=2 mon_err=0" in out, out
    assert "ERROR" not in out, out
