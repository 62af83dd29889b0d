"""tb/perf/targets.py: a speed is judged against its simulator's target, a failed run is never 'met', and the
Python share is summed by package."""

from __future__ import annotations

import cProfile
import pstats

from tb.perf.targets import BUSY, CORPUS, IDLE, Rate, format_rates, format_share


def test_a_speed_is_judged_against_its_own_simulators_target() -> None:
    fast = Rate(CORPUS, "icarus", True, cycles=40_000, wall_s=10.0)  # 4,000 >= 3,000
    slow = Rate(CORPUS, "verilator", True, cycles=40_000, wall_s=10.0)  # 4,000 < 25,000
    broken = Rate(BUSY, "icarus", False, cycles=90_000, wall_s=1.0, message="1 failed")
    untargeted = Rate(IDLE, "icarus", True, cycles=10_000, wall_s=1.0)
    lines = format_rates([fast, slow, broken, untargeted]).splitlines()
    assert lines[1].endswith("yes")
    assert lines[2].endswith("NO (x0.16 of it)")
    assert lines[3].endswith("- (1 failed)") and "FAIL" in lines[3]
    assert lines[4].endswith("(no target)")


def test_python_share_by_package() -> None:
    prof = cProfile.Profile()
    prof.enable()
    sum(i * i for i in range(200_000))
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    lines = format_share(stats, wall_s=2 * total)
    assert lines[0].endswith("(50 %); by package:")
    assert any("tests/ (this project)" in line for line in lines[1:])


def test_waiting_for_the_golden_child_is_named() -> None:
    """Time a test spends in waitpid is the golden models outlasting the RTL run, not Python's own work."""
    import subprocess
    import sys

    prof = cProfile.Profile()
    prof.enable()
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"]).wait()
    prof.disable()
    lines = format_share(pstats.Stats(prof), wall_s=1.0)
    assert any(line.strip().startswith("waiting for the golden run's process") for line in lines[1:])
