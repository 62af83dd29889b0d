"""AHBM_EDGE (rtl/ahbm/ahbm_edge.vh): on Icarus the AHBM processes sleep on their condition instead of
waking at every edge; rtl/bench/ahbm_edge_tb.v holds the gated form to the plain clocked process edge for
edge (a condition made by registers, by a bench's write between edges, by a glitch, through reset), and
the naive form that does not test the condition again at the edge must be caught by the same bench."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run_bench(tmp_path: Path, *defines: str) -> str:
    out = tmp_path / "edge.vvp"
    build = subprocess.run(["iverilog", "-g2012", *defines, f"-I{ROOT / 'rtl' / 'ahbm'}", "-o", str(out), "-s",
                            "ahbm_edge_tb", str(ROOT / "rtl" / "bench" / "ahbm_edge_tb.v")],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["vvp", "-n", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_gated_process_acts_at_the_edges_the_plain_one_does(tmp_path: Path) -> None:
    out = run_bench(tmp_path)
    line = next(ln for ln in out.splitlines() if ln.startswith("AHBM_EDGE"))
    word, acted, cycles = line.split()[1:]
    assert word == "OK" and int(cycles) == 20_000
    assert 2_000 < int(acted) < 18_000, "the condition must be both true and false at many edges"


def test_the_bench_catches_a_process_that_does_not_test_again_at_the_edge(tmp_path: Path) -> None:
    assert "AHBM_EDGE MISMATCH" in run_bench(tmp_path, "-DAHBM_EDGE_TB_NAIVE")
