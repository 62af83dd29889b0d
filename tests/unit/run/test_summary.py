"""The main job's summary names its two times apart (elapsed vs bench time summed, which exceeds it when
benches run side by side), names the benches an interrupt left, and a WAVES=1 run says where its files went."""

from __future__ import annotations

from pathlib import Path

from tb.run.regress import waves_line
from tb.run.runner import BenchResult, CaseResult
from tb.run.summary import format_summary


def _bench(name: str, wall_s: float) -> BenchResult:
    return BenchResult(name, [CaseResult("t", True, checks=1, cycles=100)], wall_s=wall_s)


def test_elapsed_and_summed_bench_time_are_two_named_figures() -> None:
    text = format_summary([_bench("a", 700.0), _bench("b", 650.5)], seed=1, elapsed_s=749.0, jobs=2)
    assert "elapsed 12m29s (749.0 s, the whole run); bench time summed 22m30s (1350.5 s over 2 bench(es), " \
           "2 at a time)" in text
    head = next(line for line in text.splitlines() if line.startswith("bench "))
    assert "bench s" in head and "wall s" not in head  # the per-bench column is each bench's own time
    assert text.splitlines()[-1] == "2 passed, 0 failed"


def test_an_interrupted_run_names_the_benches_not_run() -> None:
    text = format_summary([_bench("a", 1.0)], seed=1, elapsed_s=2.0, not_run=["b", "c"])
    assert "NOT RUN (interrupted): b, c" in text
    assert text.splitlines()[-1] == "1 passed, 0 failed, 2 bench(es) not run"


def test_a_waves_run_says_where_its_files_went(tmp_path: Path) -> None:
    result = BenchResult("mesh_2x2")
    for test in ("test_a", "test_b"):
        (tmp_path / test).mkdir()
        (tmp_path / test / "waves.fst").write_bytes(b"")
        result.results_files.append(tmp_path / test / "results.xml")
    line = waves_line(result, "mesh_2x2", tmp_path)
    assert line == (f"waves: 2 test folder(s) {tmp_path}/<test>/ with waves.fst and waves.gtkw (e.g. test_a); "
                    f"open one: make waves BENCH=mesh_2x2 COCOTB_TEST_FILTER=<test>")
    assert waves_line(BenchResult("x"), "x", tmp_path) == f"waves: no FST written under {tmp_path}/"
