"""The one table of benches: top module, sources, parameters, test module.

The Makefile (through tb.regress), the pytest wrappers (tests/test_benches.py)
and the benchmark (tb.perf) all read this table and nothing else, so a bench
cannot be built one way by one runner and another way by the next.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent
RTL = ROOT / "rtl"

NOC_RTL: tuple[str, ...] = (
    "rtl/noc/noc_fifo.v",
    "rtl/noc/noc_link_mon.v",
    "rtl/noc/noc_router.v",
    "rtl/noc/noc_mesh.v",
)
HARNESS_RTL: tuple[str, ...] = (
    "rtl/harness/harness_clock.v",
    "rtl/harness/tb_pattern.v",
    "rtl/harness/tb_ep_bank.v",
)
INCLUDE_DIRS: tuple[str, ...] = ("rtl/noc",)


@dataclass(frozen=True)
class MeshShape:
    """Router grid and edge endpoints of a mesh bench (models.mesh.MeshGeometry args)."""

    nx: int
    ny: int
    edge_mask: int = 0


@dataclass(frozen=True)
class Bench:
    """One bench: a harness top, its sources and parameters, and its cocotb tests."""

    name: str
    level: str  # "module", "mesh" (later "system")
    toplevel: str
    sources: tuple[str, ...]
    test_module: str
    parameters: Mapping[str, int] = field(default_factory=dict)
    shape: MeshShape | None = None  # endpoint geometry seen by the bench
    description: str = ""
    # Simulated-time bound of the whole bench, in clock cycles (a per-test
    # bound also applies inside each test).
    max_cycles: int = 5_000_000
    # Wall-clock bound of the whole bench run, in seconds.
    max_wall_s: int = 600

    @property
    def source_paths(self) -> list[Path]:
        return [ROOT / s for s in self.sources]

    @property
    def include_paths(self) -> list[Path]:
        return [ROOT / d for d in INCLUDE_DIRS]


def _full_ring(nx: int, ny: int) -> int:
    return (1 << (2 * nx + 2 * ny)) - 1


BENCHES: tuple[Bench, ...] = (
    Bench(
        name="fifo",
        level="module",
        toplevel="fifo_harness",
        sources=("rtl/noc/noc_fifo.v", "rtl/harness/harness_clock.v", "rtl/harness/fifo_harness.v"),
        test_module="tb.module.test_fifo",
        parameters={"DEPTH": 4},
        description="input FIFO alone: ordering, full/empty, and its write-while-full monitor",
    ),
    Bench(
        name="router",
        level="module",
        toplevel="router_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/router_harness.v",),
        test_module="tb.module.test_router",
        parameters={"FIFO_DEPTH": 4},
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="one router, random traffic into all five inputs, random busy on all five outputs",
    ),
    Bench(
        name="router_turn",
        level="module",
        toplevel="router_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/router_harness.v",),
        test_module="tb.module.test_router_turn",
        # North and East declared to face neighbouring routers: a flit from North
        # that turns East is an impossible Y-to-X turn the monitor must report.
        parameters={"FIFO_DEPTH": 4, "PORT_EDGE": 0b11100},
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="router impossible-turn monitor self-test",
    ),
    Bench(
        name="mesh_2x2",
        level="mesh",
        toplevel="mesh_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/mesh_harness.v",),
        test_module="tb.mesh.test_mesh",
        parameters={"NX": 2, "NY": 2, "FIFO_DEPTH": 4, "EDGE_MASK": 0},
        shape=MeshShape(2, 2, 0),
        description="2x2 mesh, Local endpoints only",
    ),
    Bench(
        name="mesh_4x4",
        level="mesh",
        toplevel="mesh_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/mesh_harness.v",),
        test_module="tb.mesh.test_mesh",
        parameters={"NX": 4, "NY": 4, "FIFO_DEPTH": 4, "EDGE_MASK": 0},
        shape=MeshShape(4, 4, 0),
        description="4x4 mesh, Local endpoints only",
    ),
    Bench(
        name="mesh_3x2_edge",
        level="mesh",
        toplevel="mesh_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/mesh_harness.v",),
        test_module="tb.mesh.test_mesh",
        parameters={"NX": 3, "NY": 2, "FIFO_DEPTH": 4, "EDGE_MASK": _full_ring(3, 2)},
        shape=MeshShape(3, 2, _full_ring(3, 2)),
        description="3x2 mesh (non-square) with all ten edge-ring endpoints",
    ),
    Bench(
        name="mesh_3x2_sparse",
        level="mesh",
        toplevel="mesh_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/mesh_harness.v",),
        test_module="tb.mesh.test_mesh",
        # north (1,0), (3,0); south (2,3); west (0,1); east (4,2): other ring ports tied off
        parameters={"NX": 3, "NY": 2, "FIFO_DEPTH": 2, "EDGE_MASK": 0b10_01_010_101},
        shape=MeshShape(3, 2, 0b10_01_010_101),
        description="3x2 mesh, some edge endpoints, 2-deep FIFOs",
    ),
    Bench(
        name="checker",
        level="mesh",
        toplevel="mesh_harness",
        sources=NOC_RTL + HARNESS_RTL + ("rtl/harness/mesh_harness.v",),
        test_module="tb.mesh.test_checker",
        parameters={"NX": 2, "NY": 2, "FIFO_DEPTH": 4, "EDGE_MASK": 0},
        shape=MeshShape(2, 2, 0),
        description="scoreboard and link-monitor self-tests: injected faults must fail",
    ),
)

BY_NAME: dict[str, Bench] = {b.name: b for b in BENCHES}


def get_bench(name: str) -> Bench:
    """The bench called `name`, or a ValueError listing the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        known = ", ".join(BY_NAME)
        raise ValueError(f"unknown bench '{name}'; known benches: {known}") from None


def main(argv: list[str]) -> int:
    """`python -m tb.benches` lists the table (names only with --names)."""
    if "--names" in argv:
        print(" ".join(BY_NAME))
        return 0
    for b in BENCHES:
        params = " ".join(f"{k}={v}" for k, v in b.parameters.items())
        print(f"{b.name:16s} {b.level:7s} {b.toplevel:16s} {params:40s} {b.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
