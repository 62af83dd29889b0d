"""tb/perf/targets.py: a speed is judged against its simulator's target, a failed run is never 'met'."""

from __future__ import annotations

from tb.perf.compare import RunTiming
from tb.perf.targets import FLASH, Rate, format_rates


def test_a_speed_is_judged_against_its_own_simulators_target() -> None:
    fig = f"fused4 {FLASH}"
    fast = Rate(fig, "icarus", RunTiming(run=fig, passed=True, cycles=20_000, wall_s=10.0))  # 2,000 >= 1,500
    slow = Rate(fig, "verilator", RunTiming(run=fig, passed=True, cycles=20_000, wall_s=10.0))  # 2,000 < 100,000
    broken = Rate(fig, "icarus", RunTiming(run=fig, passed=False, cycles=90_000, wall_s=1.0, message="1 failed"))
    lines = format_rates([fast, slow, broken]).splitlines()
    assert lines[1].endswith("yes")
    assert lines[2].endswith("NO (x0.02 of it)")
    assert lines[3].endswith("- (1 failed)") and "FAIL" in lines[3]
