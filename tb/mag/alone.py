"""The memory agent and its DRAM alone on Icarus, no cocotb (rtl/bench/mag_timed_tb.v): flits offered from
given edges, each held until the agent takes it (its busy honoured); what it took and sent, each with its edge,
and its monitors' verdict.

Why: two tests hold the agent's RTL to something of their own with the same stimulus: the timed model's edges
(tests/unit/timed/test_timed_mag.py) and the write-slot wedge monitor (tests/unit/mag/test_mag_wedge_rtl.py).
One bench and one runner serve both.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from tb.run.benches import INCLUDE_DIRS, MAG_AGENT_DEPS, ROOT

BENCH = "rtl/bench/mag_timed_tb.v"
TOP = "tmag_tb"


@dataclass
class AloneRun:
    """One run: the edge the agent took each flit, (edge, flit) of each it sent, mon_err at the end, the log."""

    taken: list[int]
    sent: list[tuple[int, int]]
    mon_err: bool
    log: str


def run_alone(tmp: Path, flits: Sequence[int], at: Sequence[int], params: Mapping[str, int] | None = None,
              drain: int = 2000) -> AloneRun:
    """The agent offered `flits[i]` from edge `at[i]`, with the bench's Verilog `params` (RDQ_DEPTH, WR_SLOTS,
    QUANT_LAT, RD_LATENCY, ...), then `drain` edges more."""
    (tmp / "flits.hex").write_text("".join(f"{f:072x}\n" for f in flits))
    (tmp / "at.hex").write_text("".join(f"{a:08x}\n" for a in at))
    values = {"N": len(flits), "DRAIN": drain, **(params or {})}
    build = ["iverilog", "-g2012", "-o", str(tmp / "t.vvp"), "-s", TOP,
             *[f"-P{TOP}.{k}={v}" for k, v in values.items()], *[f"-I{ROOT / d}" for d in INCLUDE_DIRS],
             str(ROOT / BENCH), *[str(ROOT / s) for s in (*MAG_AGENT_DEPS, "rtl/mag/mag_dram.v")]]
    subprocess.run(build, check=True, capture_output=True, text=True, cwd=tmp)
    run = subprocess.run(["vvp", "-n", str(tmp / "t.vvp")], capture_output=True, text=True, timeout=300, cwd=tmp)
    log = run.stdout + run.stderr
    if "END mon_err=" not in run.stdout:
        raise RuntimeError(f"the agent's bench did not finish: {log[-2000:]}")
    taken, sent = [], []
    for line in run.stdout.splitlines():
        w = line.split()
        if w and w[0] == "IN":
            taken.append(int(w[1]))
        elif w and w[0] == "OUT":
            sent.append((int(w[1]), int(w[2], 16)))
    return AloneRun(taken, sent, "END mon_err=1" in run.stdout, log)


__all__ = ["AloneRun", "BENCH", "run_alone"]
