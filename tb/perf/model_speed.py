"""The Python models' speed beside their targets (make bench): figures, never test verdicts.

Why: the flit scoreboard checks every bench's traffic and the E8M15 lane
functions run thousands of times per vector-core program, so both must stay
cheap; but how long they take depends on the machine and its load, so the
suite asserts only what they compute and this stage reports how fast:

* the flit scoreboard matching 20,000 flits on an 8x8 mesh with every edge
  endpoint (expect, observe, finish), target 1.0 s;
* one E8M15 ALU op (every opcode 0x00..0x11) on 128 lanes, target 2 ms each.

Each figure is the best of a few repeats (the least disturbed by other work on
the machine), printed with its target and whether it is met.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from models.noc.flit import pack_flit
from models.noc.mesh import MeshGeometry
from models.numerics import e8m15_alu
from models.noc.traffic import uniform_random
from tb.noc.scoreboard import FlitScoreboard

SCOREBOARD_FLITS = 20_000
SCOREBOARD_TARGET_S = 1.0
ALU_LANES = 128
ALU_TARGET_S = 2e-3
REPEATS = 3


@dataclass(frozen=True)
class Figure:
    """One measured figure against its target (seconds, lower is better)."""

    name: str
    seconds: float
    target_s: float

    @property
    def met(self) -> bool:
        return self.seconds <= self.target_s

    def line(self) -> str:
        return (f"{self.name}: {self.seconds * 1e3:.2f} ms (target <= {self.target_s * 1e3:g} ms: "
                f"{'met' if self.met else 'NOT met'})")


def best_of(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """The shortest wall time of `repeats` calls of fn."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def scoreboard_traffic(flits: int = SCOREBOARD_FLITS) -> tuple[MeshGeometry, list, list]:
    """Uniform random traffic on the 8x8 mesh with every edge endpoint: (geometry, injections, captures),
    each flit captured 3 cycles a hop after it was injected."""
    g = MeshGeometry.with_all_edges(8, 8)
    injections, captures = [], []
    for k, (s, d) in enumerate(uniform_random(g, random.Random(11), flits)):
        sx, sy = g.port_coord(s)
        dx, dy = g.port_coord(d)
        flit = pack_flit(dst_x=dx, dst_y=dy, src_x=sx, src_y=sy, txn=k & 0xFF, payload=k)
        injections.append((s, flit, k))
        captures.append((k + 3 * g.hops(s, d), d, flit))
    captures.sort()
    return g, injections, captures


def match_all(g: MeshGeometry, injections: list, captures: list) -> int:
    """Run the scoreboard over the traffic; the flits it delivered (it must pass)."""
    board = FlitScoreboard(g)
    for s, flit, k in injections:
        board.expect(s, flit, k)
    for cycle, port, flit in captures:
        board.observe(port, flit, cycle)
    report = board.finish()
    if not report.passed:
        raise RuntimeError(f"the scoreboard failed clean traffic: {report.counts}")
    return report.delivered


def measure() -> list[Figure]:
    g, injections, captures = scoreboard_traffic()
    figures = [Figure(f"flit scoreboard, {SCOREBOARD_FLITS:,} flits", best_of(lambda: match_all(g, injections,
                                                                                                captures)),
                      SCOREBOARD_TARGET_S)]
    rng = np.random.default_rng(5)
    a, b, c = (rng.integers(0, 1 << 24, ALU_LANES, dtype=np.uint32) for _ in range(3))
    worst = max(best_of(lambda op=op: e8m15_alu.alu(op, a, b, c)) for op in range(0x12))
    figures.append(Figure(f"E8M15 ALU op on {ALU_LANES} lanes, slowest opcode", worst, ALU_TARGET_S))
    return figures


def model_speed_main() -> int:
    """Print the figures; 0 always (a missed target is reported, not failed)."""
    print("Python model speed (best of %d):" % REPEATS, flush=True)
    for fig in measure():
        print("  " + fig.line(), flush=True)
    return 0


__all__ = ["Figure", "best_of", "match_all", "measure", "model_speed_main", "scoreboard_traffic"]
