"""Timing sweeps (tb/timing_sweep.py, make sweep): the grid and its refusals, the table's figures, and one
sweep end to end on a local Dask cluster (two points, one bundle, Icarus)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from models.bundle.reader import BUNDLES
from tb.farm.calls import CallFailure
from tb.timing_sweep import BASE, Cell, Point, bundle_dirs, parse_grid, table

ROOT = Path(__file__).resolve().parents[3]
MATMUL = BUNDLES / "matmul_m32k64n32"


def test_the_grid_is_upstreams_timing_then_the_values_crossed() -> None:
    assert parse_grid("dram.RD_LATENCY", "2, 8") == [{}, {"dram.RD_LATENCY": 2}, {"dram.RD_LATENCY": 8}]
    two = parse_grid("dram.RD_LATENCY,vector.FETCH", "2,8;1,3")
    assert two[0] == {} and len(two) == 5
    assert two[1:] == [{"dram.RD_LATENCY": a, "vector.FETCH": b} for a in (2, 8) for b in (1, 3)]


@pytest.mark.parametrize("facts, values, message", [
    ("", "1", "FACT is empty"),
    ("dram.RD_LATENCY,vector.FETCH", "1,2", "give one non-empty comma-separated list per fact"),
    ("dram.RD_LATENCY", "0", "VALUES: dram.RD_LATENCY=0 is outside 1..64 cycles"),
    ("dram.NOPE", "1", "VALUES: 'dram.NOPE' names no timing fact"),
])
def test_a_bad_grid_is_refused_in_one_line(facts: str, values: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_grid(facts, values)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_bundles_are_folders_or_patterns_each_once(tmp_path: Path) -> None:
    assert bundle_dirs([str(MATMUL), str(BUNDLES / "matmul_m32k6*")]) == [MATMUL.resolve()]
    with pytest.raises(ValueError, match="holds no bundle.json"):
        bundle_dirs([str(tmp_path)])


def test_the_table_gives_cycles_and_the_speed_up_against_upstreams_timing() -> None:
    bundles = ("a/x", "b/y")
    points = [Point(t, bundles, "icarus", "build", 1) for t in ((), (("dram.RD_LATENCY", 8),), (("dram.RD_LATENCY", 2),))]
    results: list = [[Cell("x", True, 1000), Cell("y", True, 400)],
                     [Cell("x", True, 1250), Cell("y", False, 0, "output c: 3 lanes differ")],
                     CallFailure("dram.RD_LATENCY=2", "KilledWorker: worker died")]
    lines = table(points, results).splitlines()
    assert lines[0] == f"| bundle | {BASE} | dram.RD_LATENCY=8 | dram.RD_LATENCY=2 |"
    assert lines[2] == "| x | 1,000 (1.000x) | 1,250 (0.800x) | FAILED [1] |"
    assert lines[3] == "| y | 400 (1.000x) | FAILED [2] | FAILED (the point) |"
    assert lines[4] == "| **all** | 1,400 (1.000x) | - | FAILED (the point) |"
    assert lines[5:] == ["", "[1] point dram.RD_LATENCY=2: KilledWorker: worker died",
                         "[2] y at dram.RD_LATENCY=8: output c: 3 lanes differ"]


def test_a_sweep_runs_each_point_as_a_task_and_tables_it(tmp_path: Path) -> None:
    """OUT given relative to where the command runs (the simulators run in other folders)."""
    out = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "tb.timing_sweep", "--fact", "dram.RD_LATENCY", "--values", "8",
                           "--bundles", str(MATMUL), "--rtl", "--sim", "icarus", "--jobs", "1", "--out", "sweep"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "2 point(s) x 1 bundle(s) on the RTL (icarus), each point a task on a local Dask cluster of 1" in done.stdout
    rows = [ln for ln in (out / "sweep.md").read_text().splitlines() if ln.startswith("| matmul_m32k64n32 |")]
    assert len(rows) == 1
    base, slow = [c.strip() for c in rows[0].strip("|").split("|")[1:]]
    assert base.endswith("(1.000x)")
    base_cycles, slow_cycles = (int(c.split()[0].replace(",", "")) for c in (base, slow))
    assert slow_cycles > base_cycles and slow.endswith(f"({base_cycles / slow_cycles:.3f}x)")
    assert (out / "sweep.png").stat().st_size > 10_000
    assert (out / "build" / "timing-dram.RD_LATENCY=8").is_dir() and (out / "build" / "clients").is_dir()


def test_without_rtl_the_points_run_on_the_timed_models(tmp_path: Path) -> None:
    """The default engine: the timed golden models; a longer cascade slows the matmul (its sweep's tail), a
    faster one speeds it up, each cell judged (the bundle's bits) and the table and plot written."""
    out = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "tb.timing_sweep", "--fact", "cluster.CASCADE_LAT", "--values",
                           "7,27", "--bundles", str(MATMUL), "--jobs", "1", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "3 point(s) x 1 bundle(s) on the timed golden models" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("| matmul_m32k64n32 |"))
    base, fast, slow = (int(c.split()[0].replace(",", "")) for c in row.strip("| ").split(" | ")[1:])
    assert fast < base < slow  # 10 cycles of cascade fewer, 10 more: the GEMM -> DRAIN wait moves with them
    assert (out / "sweep.md").is_file() and (out / "sweep.png").stat().st_size > 10_000


def test_a_bundle_that_does_not_read_or_two_of_one_name_are_refused(tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "a" / MATMUL.name
    shutil.copytree(MATMUL, broken)
    (broken / "dram_in.npz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match=r"^BUNDLES: .*dram_in\.npz"):
        bundle_dirs([str(broken)])
    twin = tmp_path / "b" / MATMUL.name
    shutil.copytree(MATMUL, twin)
    with pytest.raises(ValueError, match="a second bundle named matmul_m32k64n32"):
        bundle_dirs([str(MATMUL), str(twin)])


def test_a_bad_cycle_margin_is_refused_before_any_point_runs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tb.timing_sweep", "--fact", "dram.RD_LATENCY", "--values", "8",
                           "--bundles", str(MATMUL), "--rtl", "--cycle-margin", "0.5", "--out", str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refused: AGSIM_CYCLE_MARGIN='0.5' is not a factor of at least 1")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("jobs", ["0", "two", "1.5"])
def test_a_bad_jobs_value_is_refused_before_any_point_runs(jobs: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The sweep reads JOBS as `make` does (tb/run/options.parse_jobs): one refusal line, no cluster started."""
    from tb.timing_sweep import main

    status = main(["--fact", "dram.RD_LATENCY", "--values", "8", "--bundles", str(MATMUL), "--rtl", "--jobs", jobs,
                   "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith(f"refused: JOBS={jobs!r} is not a number of jobs")
    assert not (tmp_path / "o").exists()
