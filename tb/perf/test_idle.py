"""The idle half of the fused4 speed figure (run by tb/perf/targets.py, not by regress).

Resets the machine and lets it run AGSIM_IDLE_CYCLES cycles with no traffic
(one Timer, no Python in between), so the figure is what an idle machine costs
the simulator per cycle. Writes idle_speed.json (cycles, wall seconds of the
idle stretch alone) into its working folder, and checks that nothing moved:
no FAULT crossed the mesh and no monitor fired (the guard's check).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import cocotb

from tb.system.bench import SystemTB

IDLE_CYCLES = int(os.environ.get("AGSIM_IDLE_CYCLES", "100000"))
RESULT_FILE = "idle_speed.json"


@cocotb.test()
async def test_idle(dut) -> None:
    """IDLE_CYCLES cycles of a reset fused4 machine with nothing to do."""
    tb = SystemTB(dut, "test_idle")

    async def body() -> None:
        await tb.start()
        t0 = time.perf_counter()
        await tb.idle(IDLE_CYCLES)
        wall = time.perf_counter() - t0
        tb.verdict.check(tb.landing.faults_sent() == 0, "a FAULT signal crossed the idle mesh")
        Path(RESULT_FILE).write_text(json.dumps({"cycles": IDLE_CYCLES, "wall_s": wall}))

    await tb.guard(body, max_cycles=IDLE_CYCLES + 10_000)
