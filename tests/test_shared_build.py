"""A bench that differs from another only in run-time values (Bench.build_of, run_env) runs on that bench's
build: nothing is compiled again, its results stay in its own folder, and two runs of one build folder
side by side build one after the other (tb.run.runner.build_lock). Real iverilog builds of the fifo bench."""

from __future__ import annotations

import dataclasses
import multiprocessing
from pathlib import Path

from tb.run.benches import BY_NAME, get_bench
from tb.run.runner import build_lock, run_bench


def test_the_table_runs_the_tight_queue_cases_on_the_deep_queue_build() -> None:
    tight = BY_NAME["ahbm_tightq"]
    assert tight.build_of == "ahbm" and tight.run_env == {"AGSIM_CUBE_IPCQ_DEPTH": "8"}
    assert tight.parameters == BY_NAME["ahbm"].parameters  # the build's own parameters, unchanged


def test_a_variant_runs_on_its_base_build_and_keeps_its_results_apart(tmp_path: Path) -> None:
    root = tmp_path / "build"
    base = get_bench("fifo")
    first = run_bench(base, build_root=root, seed=5, log_to_file=True)
    assert not first.error and first.failed == 0 and first.tests
    binary = root / "fifo" / "sim.vvp"
    built_at = binary.stat().st_mtime_ns

    variant = dataclasses.replace(base, name="fifo_again", build_of="fifo", run_env={"AGSIM_UNUSED": "1"})
    again = run_bench(variant, build_root=root, seed=5, log_to_file=True)
    assert not again.error and again.failed == 0 and again.tests
    assert binary.stat().st_mtime_ns == built_at, "the variant compiled its base's build again"
    assert not (root / "fifo_again" / "sim.vvp").exists(), "the variant built a copy of its own"
    assert (root / "fifo_again" / "results.xml").exists() and again.results_files == [root / "fifo_again" / "results.xml"]
    assert [(t.name, t.checks, t.cycles) for t in again.tests] == [(t.name, t.checks, t.cycles) for t in first.tests]


def _hold(folder: str, held: multiprocessing.synchronize.Event, go: multiprocessing.synchronize.Event) -> None:
    with build_lock(Path(folder)):
        held.set()
        go.wait(60)


def test_one_build_at_a_time_in_a_folder(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    held, go = ctx.Event(), ctx.Event()
    other = ctx.Process(target=_hold, args=(str(tmp_path), held, go))
    other.start()
    try:
        assert held.wait(60), "the other process never took the lock"
        import fcntl

        with open(tmp_path / "build.flock", "a") as f:  # while it holds the folder, nobody else may
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                taken = True
            except BlockingIOError:
                taken = False
        assert not taken, "the build folder was taken twice at once"
        go.set()
        other.join(60)
        with build_lock(tmp_path):  # released when the holder is done
            pass
    finally:
        go.set()
        other.join(60)
