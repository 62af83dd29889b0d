"""Simulation speed on both simulators, beside the project's speed targets (make bench).

Measured on Icarus and on Verilator, builds warm (a build is timed apart and
left out of every rate; the simulator's and Python's start-up are in):

* the bundle corpus: every bundle of clients/bundles through the `clients`
  bench in one run (tb.client's run_rtl), its simulated cycles over the run's
  wall, and each bundle's cycles over its own test's wall;
* the fused4 machine idle (tb/perf/test_idle.py: no traffic, one Timer) and
  busy (flash_attention_l64d64, the corpus' longest bundle);
* the AHBM benches `ahbm` and `ahbm_llama` on Icarus (every test, run through
  the runner as the main job runs them), against 10x the cycles per second of
  the tree issue 34 set that target against (docs/ahbm.md, "Speed on Icarus");
* the saturated 4x4 mesh at 200,000 flits comes from the first stage of
  make bench (tb/perf/compare.py) and is printed here beside its target;
* the Python share of one flash_attention_l64d64 run on Verilator, from
  cocotb's own profiler (COCOTB_ENABLE_PROFILING: cProfile over everything
  Python does inside the simulator), by package, so the next bottleneck is
  visible. cProfile slows the Python it measures, so the share is an upper
  bound; the run's own rate is not used for any figure.

A run that fails its checks fails the stage; a missed target is reported.
"""

from __future__ import annotations

import json
import os
import pstats
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from models.bundle.reader import Bundle
from tb.run.benches import ROOT, get_bench
from tb.perf.compare import PERF_ROOT, Comparison, timed_runner_calls
from tb.run.runner import bench_build_dir, run_bench
from tb.run.simulators import SIMULATORS

SPEED_ROOT = PERF_ROOT / "speed"
BUNDLES = ROOT / "clients" / "bundles"
FLASH = "flash_attention_l64d64"
CORPUS = "bundle corpus"
IDLE = "fused4 idle"
BUSY = f"fused4 busy ({FLASH})"
MESH = "mesh_4x4 200,000 flits"
AHBM_ICARUS = ("ahbm", "ahbm_llama")
IDLE_CYCLES = 100_000
IDLE_MODULE = "tb.perf.test_idle"
# the test waiting for its golden child (tb/bundle/golden_ahead.py): time the RTL run finished before the models did
GOLDEN_WAIT = "waiting for the golden run's process"
# simulated cycles per wall second the benchmarks aim at (None: measured, no target on that simulator)
TARGETS: dict[str, dict[str, float | None]] = {
    CORPUS: {"icarus": 3_000, "verilator": 25_000},
    BUSY: {"icarus": 1_500, "verilator": 40_000},
    IDLE: {"icarus": None, "verilator": 40_000},
    MESH: {"icarus": 1_500, "verilator": 30_000},
    # 10x 7efff94's cycles/s (1,097 and 599), run alone on the reference machine in the same minutes as the tree
    # of 2026-12-07 (docs/ahbm.md, "Where the rest went"): the machine's speed drifts by a fifth from hour to hour
    "ahbm": {"icarus": 10_970},
    "ahbm_llama": {"icarus": 5_990},
}


@dataclass
class Rate:
    """One measured speed: simulated cycles over wall seconds, on one simulator."""

    figure: str
    sim: str
    passed: bool
    cycles: int
    wall_s: float
    message: str = ""

    @property
    def cycles_per_s(self) -> float:
        return self.cycles / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def target(self) -> float | None:
        return TARGETS.get(self.figure, {}).get(self.sim)


def corpus_rates(sim: str, seed: int) -> tuple[Rate, list[Rate], float]:
    """The corpus run on `sim`: its rate, each bundle's, and the build seconds left out."""
    from tb.client import resolve, run_rtl

    bundles = resolve(sorted(str(p) for p in BUNDLES.iterdir() if (p / "bundle.json").exists()), rtl=True)
    times: dict[str, float] = {}
    t0 = time.monotonic()
    with timed_runner_calls(times):
        reports = run_rtl(bundles, SPEED_ROOT, seed, False, sim)
    wall = time.monotonic() - t0 - times.get("build", 0.0)
    failed = [r.bundle for r in reports if not r.passed]
    corpus = Rate(f"{CORPUS}", sim, not failed, sum(r.cycles for r in reports), wall,
                  f"failed: {', '.join(failed)}" if failed else "")
    per = [Rate(r.bundle, sim, r.passed, r.cycles, r.wall_s) for r in reports]
    return corpus, per, times.get("build", 0.0)


def idle_rate(sim: str, seed: int) -> Rate:
    """fused4 with nothing to do for IDLE_CYCLES cycles (the idle stretch's own wall)."""
    bench = get_bench("clients")
    out = bench_build_dir(SPEED_ROOT, sim, bench.name) / "idle_speed.json"
    out.unlink(missing_ok=True)
    result = run_bench(bench, sim=sim, seed=seed, build_root=SPEED_ROOT, log_to_file=True, test_module=IDLE_MODULE,
                       extra_env={"AGSIM_IDLE_CYCLES": str(IDLE_CYCLES)})
    ok = not result.error and len(result.tests) == 1 and result.tests[0].passed and out.exists()
    if not ok:
        why = result.error or (result.tests[0].message if result.tests else "no test ran") or "no idle_speed.json"
        return Rate(IDLE, sim, False, 0, 0.0, why.splitlines()[0])
    got = json.loads(out.read_text())
    return Rate(IDLE, sim, True, int(got["cycles"]), float(got["wall_s"]))


def ahbm_icarus_rate(name: str, seed: int) -> Rate:
    """An AHBM bench's every test on Icarus: its cycles over the run's wall, the build left out."""
    times: dict[str, float] = {}
    t0 = time.monotonic()
    with timed_runner_calls(times):
        result = run_bench(get_bench(name), sim="icarus", seed=seed, build_root=SPEED_ROOT, log_to_file=True)
    wall = time.monotonic() - t0 - times.get("build", 0.0)
    ok = not result.error and bool(result.tests) and result.failed == 0
    why = "" if ok else (result.error or f"{result.failed} test(s) failed").splitlines()[0]
    return Rate(name, "icarus", ok, sum(t.cycles for t in result.tests), wall, why)


def mesh_rate(cmp: Comparison) -> Rate:
    """The saturated 4x4 mesh's cocotb run from make bench's first stage."""
    c = cmp.cocotb
    return Rate(MESH, cmp.sim, c.passed, c.cycles, c.wall_s, c.message)


def python_share(seed: int) -> list[str]:
    """Lines: the Python share of one flash_attention_l64d64 run on Verilator, by package (cProfile)."""
    from tb.client import run_rtl

    os.environ["COCOTB_ENABLE_PROFILING"] = "1"
    try:
        t0 = time.monotonic()
        times: dict[str, float] = {}
        with timed_runner_calls(times):
            reports = run_rtl([Bundle(FLASH)], SPEED_ROOT, seed, False, "verilator")
        wall = times.get("test", time.monotonic() - t0)
    finally:
        del os.environ["COCOTB_ENABLE_PROFILING"]
    pstat = bench_build_dir(SPEED_ROOT, "verilator", "clients") / "cocotb.pstat"
    if not reports or not reports[0].passed or not pstat.exists():
        return [f"Python share: not measured ({'run failed' if reports and not reports[0].passed else 'no profile'})"]
    return format_share(pstats.Stats(str(pstat)), wall)


def _package(filename: str) -> str:
    """The package a profiled function belongs to, for the share table: the project's models/ or tb/, a
    site package by its top name, else the standard library and builtins."""
    path = Path(filename)
    if "site-packages" in path.parts:
        return path.parts[path.parts.index("site-packages") + 1].split(".")[0]
    if path.is_relative_to(ROOT) and len(path.relative_to(ROOT).parts) > 1:
        return path.relative_to(ROOT).parts[0] + "/ (this project)"
    return "Python's standard library and builtins"


def format_share(stats: pstats.Stats, wall_s: float) -> list[str]:
    """Python's own time by package, against the simulator run's wall."""
    by: dict[str, float] = defaultdict(float)
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        by[GOLDEN_WAIT if "waitpid" in func else _package(filename)] += tottime
    total = sum(by.values())
    lines = [f"Python share of {FLASH} on Verilator (cProfile, an upper bound): {total:.1f} s of the simulator "
             f"run's {wall_s:.1f} s wall ({100 * total / wall_s:.0f} %); by package:"]
    lines += [f"  {name:40s} {secs:7.2f} s  {100 * secs / wall_s:5.1f} %" for name, secs in
              sorted(by.items(), key=lambda kv: -kv[1]) if secs >= 0.005 * wall_s]
    return lines


def format_rates(rates: list[Rate]) -> str:
    lines = [f"{'figure':40s} {'sim':10s} {'result':6s} {'sim cycles':>10s} {'wall s':>7s} {'cycles/s':>9s} "
             f"{'target':>8s}  met"]
    for r in rates:
        target = r.target
        if not r.passed:
            met = f"- ({r.message})"
        elif target is None:
            met = "(no target)"
        else:
            met = "yes" if r.cycles_per_s >= target else f"NO (x{r.cycles_per_s / target:.2f} of it)"
        lines.append(f"{r.figure:40s} {r.sim:10s} {'PASS' if r.passed else 'FAIL':6s} {r.cycles:10d} "
                     f"{r.wall_s:7.2f} {r.cycles_per_s:9.0f} {'-' if target is None else f'{target:8.0f}':>8s}  {met}")
    return "\n".join(lines)


def targets_main(seed: int = 1, verbose: bool = False, mesh: list[Comparison] | None = None) -> int:
    """Every figure of the module doc on both simulators, printed beside its target."""
    rates: list[Rate] = []
    per_bundle: list[Rate] = []
    builds: dict[str, float] = {}
    for sim in SIMULATORS:
        corpus, per, builds[sim] = corpus_rates(sim, seed)
        rates.append(corpus)
        busy = next((r for r in per if r.figure == FLASH), None)
        if busy is not None:
            rates.append(Rate(BUSY, sim, busy.passed, busy.cycles, busy.wall_s, busy.message))
        rates.append(idle_rate(sim, seed))
        per_bundle += per
        if sim == "icarus":
            rates += [ahbm_icarus_rate(name, seed) for name in AHBM_ICARUS]
    rates += [mesh_rate(c) for c in mesh or []]
    print("Simulation speed (builds warm: build seconds left out, "
          + ", ".join(f"{s} {b:.1f} s" for s, b in builds.items()) + "; start-up in)")
    print(format_rates(rates))
    print("\nper bundle (each test's own wall)")
    print(format_rates(per_bundle))
    print("")
    for line in python_share(seed):
        print(line)
    return 0 if all(r.passed for r in rates + per_bundle) else 1


__all__ = ["AHBM_ICARUS", "BUSY", "CORPUS", "FLASH", "IDLE", "MESH", "TARGETS", "Rate", "ahbm_icarus_rate", "corpus_rates", "format_rates",
           "format_share", "idle_rate", "mesh_rate", "python_share", "targets_main"]
