"""Every bench of tb/benches.py, run through cocotb_tools.runner under pytest.

One pytest item per bench, each in its own build folder (sim_build/pytest/<bench>),
so pytest-xdist can run them side by side. A bench passes only if every one of
its tests passed with a verdict and at least one test ran.
"""

from __future__ import annotations

import os

import pytest

from tb.benches import BENCHES, Bench
from tb.regress import describe_failures, seed_from_env
from tb.runner import BUILD_ROOT, run_bench


@pytest.mark.parametrize("bench", BENCHES, ids=[b.name for b in BENCHES])
def test_bench(bench: Bench) -> None:
    seed = seed_from_env() if os.environ.get("COCOTB_RANDOM_SEED", "").strip() else None  # refused by name
    result = run_bench(bench, seed=seed, build_root=BUILD_ROOT / "pytest", log_to_file=True)
    log = BUILD_ROOT / "pytest" / bench.name / "sim.log"
    assert not result.error, "\n".join(describe_failures(result))
    assert result.tests, f"{bench.name}: no test ran (log: {log})"
    assert result.failed == 0, f"{bench.name}: {result.failed} failed:\n" + "\n".join(describe_failures(result))
    assert result.checks > 0, f"{bench.name}: tests passed without making a single check"
