"""Icarus and Verilator simulate the same cycles: a few benches run on both with one seed.

Every test of each bench must report the same verdict, the same number of checks
and the same simulated cycles on both simulators. The benches are chosen for what
differs between the simulators: `orch` drives the AXI4-Lite host through
cocotbext-axi (it samples ready and valid at the clock edge, which on Verilator
needs the clock from cocotb: rtl/bench/harness_clock.v), `mesh_2x2` is the NoC
under seeded stall patterns, `pe` the AHBM composite engine whose fp32 functions
are compiled differently under Verilator (rtl/ahbm/fp32/fp32_lib.vh).
"""

from __future__ import annotations

import pytest

from tb.run.benches import get_bench
from tb.run.runner import BUILD_ROOT, run_bench

SEED = 20261201
PARITY_BENCHES = ("orch", "mesh_2x2", "pe")


@pytest.mark.parametrize("name", PARITY_BENCHES)
def test_both_simulators_count_the_same_cycles_and_checks(name: str) -> None:
    runs = {}
    for sim in ("icarus", "verilator"):
        r = run_bench(get_bench(name), sim=sim, seed=SEED, build_root=BUILD_ROOT / "pytest" / "parity",
                      log_to_file=True)
        assert not r.error and r.tests and r.failed == 0, f"{name} on {sim}: {r.error or r.failed} failed"
        runs[sim] = {t.name: (t.passed, t.checks, t.cycles) for t in r.tests}
    assert runs["icarus"].keys() == runs["verilator"].keys()
    differ = {n: (runs["icarus"][n], runs["verilator"][n]) for n in runs["icarus"]
              if runs["icarus"][n] != runs["verilator"][n]}
    assert not differ, f"{name}: (passed, checks, cycles) on icarus vs verilator differ: {differ}"
