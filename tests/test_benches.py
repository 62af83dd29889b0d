"""Every bench of tb/run/benches.py, run through cocotb_tools.runner under pytest.

One pytest item per bench, each in its own build folder (sim_build/pytest/<bench>,
sim_build/pytest/verilator/<bench> on Verilator), so pytest-xdist can run them side
by side. A bench passes only if every one of its tests passed with a verdict and at
least one test ran.

Which simulator runs a bench (tb/run/simulators.py `bench_legs`): with SIM=icarus (make's default) every
bench runs on Icarus except the ones in VERILATOR_LEG (composite fp32
arithmetic, or a long machine run, that Icarus interprets slowly); they run on
Verilator (the same tests and checks, 3-4x faster with the build). `make SIM=icarus` still runs them on Icarus.
With SIM=verilator every bench runs on Verilator.

The simulator is bounded by the bench's wall-clock backstop (max_wall_s, or
AGSIM_WALL_S), which names itself in every test it stops; pytest-timeout's
suite-wide bound (pyproject.toml) is for the unit tests, so a bench's own is
the backstop plus BUILD_ALLOWANCE_S for its build: the backstop always fires
first.
"""

from __future__ import annotations

import os

import pytest

from tb.run.benches import BENCHES, Bench
from tb.run.options import bench_wall_s, seed_from_env
from tb.run.summary import describe_failures
from tb.run.runner import BUILD_ROOT, bench_build_dir, run_bench
from tb.run.progress import longest_first, previous_durations
from tb.run.simulators import bench_legs

# The longest legs first (tests/conftest.py then deals them to the heads of the parts pytest-xdist's worksteal
# hands the workers, so each starts on long legs and the short tests are what gets stolen). The order is the
# previous suite's durations (sim_build/durations.json); in a new folder, with none, the legs on Verilator lead
# (their builds are the longest work of a fresh clone), `clients` (the 18 compiled bundles) first among them.
_SIM = os.environ.get("SIM", "icarus") or "icarus"
_ALL_LEGS = {f"{b.name}-{s}": (b, s) for b, s in bench_legs(_SIM)}
_FIRST = sorted((k for k, (_, s) in _ALL_LEGS.items() if s == "verilator" and _SIM != "verilator"),
                key=lambda k: not k.startswith("clients-"))
LEGS = [_ALL_LEGS[k] for k in longest_first(list(_ALL_LEGS), previous_durations(f"pytest/{_SIM}/"), _FIRST)]
# a bench's build before its simulator starts: the longest measured, a Verilator build of an AHBM bench on a
# loaded 2-core machine, took 4 min 23 s
BUILD_ALLOWANCE_S = 1800


def _leg(bench: Bench, sim: str) -> object:
    bound = BUILD_ALLOWANCE_S + bench_wall_s(bench.max_wall_s)
    return pytest.param(bench, sim, id=f"{bench.name}-{sim}", marks=pytest.mark.timeout(bound))


@pytest.mark.parametrize(("bench", "sim"), [_leg(b, s) for b, s in LEGS])
def test_bench(bench: Bench, sim: str) -> None:
    seed = seed_from_env() if os.environ.get("COCOTB_RANDOM_SEED", "").strip() else None  # refused by name
    result = run_bench(bench, sim=sim, seed=seed, build_root=BUILD_ROOT / "pytest", log_to_file=True)
    log = bench_build_dir(BUILD_ROOT / "pytest", sim, bench.name) / "sim.log"
    assert not result.error, "\n".join(describe_failures(result))
    assert result.tests, f"{bench.name}: no test ran (log: {log})"
    assert result.failed == 0, f"{bench.name}: {result.failed} failed:\n" + "\n".join(describe_failures(result))
    assert result.checks > 0, f"{bench.name}: tests passed without making a single check"
