"""Simulation speed on both simulators, beside the project's speed targets (make bench).

Measured on Icarus and on Verilator, with the time inside cocotb's
Runner.test() only (the build is timed apart): the fused4 machine running the
compiled flash_attention_l64d64 bundle (the `clients` bench, that one test).
The saturated 4x4 mesh's figures are tb/perf/compare.py's.
Each figure is printed with its target and whether it is met; a run that fails
its checks fails the stage (a missed target is reported, not failed).
"""

from __future__ import annotations

from dataclasses import dataclass

from tb.benches import get_bench
from tb.perf.compare import PERF_ROOT, RunTiming, timed_runner_calls
from tb.runner import run_bench
from tb.simulators import SIMULATORS

# cycles per second the benchmarks aim at (per simulator)
TARGETS: dict[str, dict[str, float]] = {
    "fused4 flash_attention_l64d64": {"icarus": 1_500, "verilator": 100_000},
}
FLASH = "flash_attention_l64d64"


@dataclass
class Rate:
    """One measured speed: the figure, the simulator, and the run's timing (tb/perf/compare.py's RunTiming)."""

    figure: str
    sim: str
    run: RunTiming

    @property
    def target(self) -> float:
        return TARGETS[self.figure][self.sim]


def measure(figure: str, sim: str, seed: int, verbose: bool = False) -> Rate:
    """Run the figure's bench on `sim` and time its simulator."""
    bench, kwargs = get_bench("clients"), {"test_filter": rf"test_bundle.*{FLASH}"}
    times: dict[str, float] = {}
    with timed_runner_calls(times):
        result = run_bench(bench, sim=sim, seed=seed, build_root=PERF_ROOT / "speed", log_to_file=not verbose,
                           **kwargs)
    run = RunTiming(run=figure, passed=not result.error and len(result.tests) == 1 and result.failed == 0,
                    cycles=result.cycles, wall_s=times.get("test", 0.0), build_s=times.get("build", 0.0))
    if not run.passed:
        run.message = result.error or f"{len(result.tests)} tests ran, {result.failed} failed"
    return Rate(figure, sim, run)


def format_rates(rates: list[Rate]) -> str:
    lines = [f"{'figure':32s} {'sim':10s} {'result':6s} {'sim cycles':>10s} {'wall s':>7s} {'build s':>7s} "
             f"{'cycles/s':>9s} {'target':>8s}  met"]
    for r in rates:
        t = r.run
        met = "yes" if t.cycles_per_s >= r.target else f"NO (x{t.cycles_per_s / r.target:.2f} of it)"
        lines.append(f"{r.figure:32s} {r.sim:10s} {'PASS' if t.passed else 'FAIL':6s} {t.cycles:10d} "
                     f"{t.wall_s:7.2f} {t.build_s:7.1f} {t.cycles_per_s:9.0f} {r.target:8.0f}  "
                     + (met if t.passed else f"- ({t.message})"))
    return "\n".join(lines)


def targets_main(seed: int = 1, verbose: bool = False) -> int:
    rates = [measure(f, sim, seed, verbose) for f in TARGETS for sim in SIMULATORS]
    print("Simulation speed (wall = the simulator run; build apart)")
    print(format_rates(rates), flush=True)
    return 0 if all(r.run.passed for r in rates) else 1


__all__ = ["TARGETS", "Rate", "format_rates", "measure", "targets_main"]
