"""The clock gate (rtl/arith/clock_gate.v) through Icarus, no cocotb: edges only with clk's, none from glitches.

The cluster's accumulator engine, the vector lanes and the memory agent's quantiser take their operands on
a gated clock so that Verilator evaluates them only when they work; that is safe only if the gated clock
has an edge exactly on the edges of clk whose enable is set, at the same time, sampling the same pre-edge
values as a register on clk would. The bench drives the enable as its owners do (from a register on
clk's rising edge) plus a glitch in the phase where the enable is latched, then checks each gated edge
against clk's. A gate without the latch (`CG_NAIVE`) passes the glitch through, and the bench says so.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CYCLES = 400

BENCH = r"""
`timescale 1ns/1ps
module cg_tb;
    parameter integer FALL_EDGE = 0;
    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg  [15:0] lfsr = 16'hACE1;
    reg  [15:0] cnt = 16'd0;          // a register on clk's rising edge, as the gated registers' sources
    reg         en_r = 1'b0;          // the enable as its owners make it: a register on clk's rising edge
    reg         glitch = 1'b0;        // a pulse while the latch is closed
    wire        en = en_r ^ glitch;
    wire        gclk;
`ifdef CG_NAIVE
    assign gclk = (FALL_EDGE != 0) ? (clk | ~en) : (clk & en);
`else
    clock_gate #(.FALL_EDGE(FALL_EDGE)) dut (.clk(clk), .en(en), .gclk(gclk));
`endif
    always @(posedge clk) begin
        lfsr <= {lfsr[14:0], lfsr[15] ^ lfsr[13] ^ lfsr[12] ^ lfsr[10]};
        en_r <= lfsr[0];
        cnt  <= cnt + 16'd1;
    end
    // the glitch: 1 ns, in the half period the latch holds (clk high for the rising gate, low for the falling)
    always @(posedge clk) if (FALL_EDGE == 0 && lfsr[3]) begin #2 glitch = 1'b1; #1 glitch = 1'b0; end
    always @(negedge clk) if (FALL_EDGE != 0 && lfsr[3]) begin #2 glitch = 1'b1; #1 glitch = 1'b0; end

    integer edges = 0, enabled = 0, gated = 0, errors = 0;
    realtime t_edge = -1.0;
    reg [15:0] want = 16'd0, got = 16'd0;
    wire clk_act  = (FALL_EDGE != 0) ? ~clk : clk;     // the gated edge is a rising edge of these
    wire gclk_act = (FALL_EDGE != 0) ? ~gclk : gclk;
    always @(posedge clk_act) begin
        edges = edges + 1;
        t_edge = $realtime;
        if (en) begin
            enabled = enabled + 1;
            want <= cnt;                  // what a register on clk with this enable takes
        end
    end
    always @(posedge gclk_act) begin
        gated = gated + 1;
        got <= cnt;                       // what the gated register takes
        if ($realtime != t_edge) begin
            errors = errors + 1;
            if (errors <= 3) $display("ERROR t=%0t: a gated edge without an edge of clk", $realtime);
        end
    end
    always @(negedge clk_act) if (got !== want) begin
        errors = errors + 1;
        if (errors <= 3) $display("ERROR t=%0t: the gated register took %0d, clk's %0d", $realtime, got, want);
    end
    initial begin
        #(10 * CYCLES);
        $display("RESULT edges=%0d enabled=%0d gated=%0d errors=%0d", edges, enabled, gated, errors);
        $finish;
    end
endmodule
""".replace("CYCLES", str(CYCLES))


def _run(tmp: Path, fall_edge: int, naive: bool) -> dict[str, int]:
    (tmp / "cg_tb.v").write_text(BENCH)
    build = ["iverilog", "-g2012", "-o", str(tmp / "t.vvp"), "-s", "cg_tb", f"-Pcg_tb.FALL_EDGE={fall_edge}",
             *(["-DCG_NAIVE"] if naive else []), str(tmp / "cg_tb.v"), str(ROOT / "rtl/arith/clock_gate.v")]
    subprocess.run(build, check=True, capture_output=True, text=True, cwd=tmp)
    run = subprocess.run(["vvp", "-n", str(tmp / "t.vvp")], capture_output=True, text=True, timeout=60, cwd=tmp)
    m = re.search(r"RESULT edges=(\d+) enabled=(\d+) gated=(\d+) errors=(\d+)", run.stdout)
    assert m, run.stdout + run.stderr
    return dict(zip(("edges", "enabled", "gated", "errors"), map(int, m.groups())))


@pytest.mark.parametrize("fall_edge", [0, 1], ids=["rising", "falling"])
def test_the_gate_has_an_edge_exactly_on_the_enabled_edges_of_clk(tmp_path: Path, fall_edge: int) -> None:
    r = _run(tmp_path, fall_edge, naive=False)
    assert r["errors"] == 0, r
    assert r["gated"] == r["enabled"], r
    assert CYCLES // 4 < r["enabled"] < r["edges"] - CYCLES // 4, r  # the enable really toggles


@pytest.mark.parametrize("fall_edge", [0, 1], ids=["rising", "falling"])
def test_a_gate_without_the_latch_fails_the_bench(tmp_path: Path, fall_edge: int) -> None:
    r = _run(tmp_path, fall_edge, naive=True)
    assert r["errors"] > 0 and r["gated"] != r["enabled"], r
