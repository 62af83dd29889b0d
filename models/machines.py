"""Machine descriptions: which unit sits at which coordinate of which mesh.

Each machine is described once, here. The description drives the generated
Verilog top (tb/machines), the planner (which coordinates are clusters, vector
cores, the memory agent and the agent that collects acknowledgements) and the
benches. Refusals happen here, before any simulation: an unknown machine, a
unit off every port, two units on one coordinate, a corner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Mapping

from models.mesh import MeshGeometry

Coord = tuple[int, int]


class UnitKind(str, Enum):
    """What can sit on an endpoint of a machine."""

    CLUSTER = "cluster"  # matmul cluster CU, cu_type 'MG'
    VECTOR = "vector"  # vector core, cu_type 'VC'
    MAG = "mag"  # memory agent with its DRAM
    ORCH = "orch"  # the orchestrator (the agent), host port on the top
    EXT = "ext"  # an endpoint port on the top, for a bench to play a unit



@dataclass(frozen=True)
class Machine:
    """A mesh of routers and the unit on each endpoint it uses."""

    name: str
    nx: int
    ny: int
    units: Mapping[Coord, UnitKind]
    description: str = ""
    agent: Coord | None = field(default=None)  # where acknowledgements and completions are counted

    def __post_init__(self) -> None:
        geometry = self.geometry  # validates nx, ny and every coordinate
        seen: set[int] = set()
        for coord in self.units:
            index = geometry.port_index(coord)  # refuses corners and off-ring coordinates
            if index in seen:
                raise ValueError(f"machine {self.name}: two units at {coord}")
            seen.add(index)
        if self.agent is not None and self.units.get(self.agent) not in (UnitKind.ORCH, UnitKind.EXT):
            raise ValueError(f"machine {self.name}: the agent {self.agent} is not an orchestrator or an "
                             f"external port; put the orchestrator (or a bench port) there")

    @property
    def geometry(self) -> MeshGeometry:
        """The mesh with exactly the edge endpoints this machine uses."""
        bare = MeshGeometry(self.nx, self.ny, 0)
        mask = 0
        for coord in self.units:
            index = bare.port_index(coord)
            if index >= bare.num_routers:
                mask |= 1 << (index - bare.num_routers)
        return MeshGeometry(self.nx, self.ny, mask)

    def coords(self, kind: UnitKind) -> list[Coord]:
        """Coordinates holding `kind`, sorted (y first, as packed coordinates are)."""
        return sorted((c for c, k in self.units.items() if k == kind), key=lambda c: (c[1], c[0]))

    @property
    def clusters(self) -> list[Coord]:
        return self.coords(UnitKind.CLUSTER)

    @property
    def vector_cores(self) -> list[Coord]:
        return self.coords(UnitKind.VECTOR)

    @property
    def mag(self) -> Coord:
        (coord,) = self.coords(UnitKind.MAG) or [None]
        if coord is None:
            raise ValueError(f"machine {self.name} has no memory agent")
        return coord


MM_MESH = Machine(
    name="mm_mesh",
    nx=2, ny=1,
    units={(0, 1): UnitKind.MAG, (1, 0): UnitKind.VECTOR, (2, 1): UnitKind.CLUSTER, (1, 1): UnitKind.EXT},
    agent=(1, 1),
    description="the reference peer-drain machine: the bench plays the agent on router (1,1)'s Local port",
)

MM_MESH_SYS = Machine(
    name="mm_mesh_sys",
    nx=2, ny=1,
    units={(0, 1): UnitKind.MAG, (1, 0): UnitKind.VECTOR, (2, 1): UnitKind.CLUSTER, (1, 1): UnitKind.ORCH},
    agent=(1, 1),
    description="mm_mesh with the orchestrator at (1,1) and the host port on the top",
)

FUSED4 = Machine(
    name="fused4",
    nx=3, ny=2,
    units={
        (1, 1): UnitKind.CLUSTER, (2, 1): UnitKind.CLUSTER, (1, 2): UnitKind.CLUSTER, (2, 2): UnitKind.CLUSTER,
        (1, 0): UnitKind.VECTOR, (2, 0): UnitKind.VECTOR, (3, 0): UnitKind.VECTOR, (3, 1): UnitKind.VECTOR,
        (0, 1): UnitKind.MAG, (3, 2): UnitKind.ORCH,
    },
    agent=(3, 2),
    description="four clusters and four vector cores on a 3x2 grid, MAG west, orchestrator at (3,2)",
)

MACHINES: Mapping[str, Machine] = MappingProxyType({m.name: m for m in (MM_MESH, MM_MESH_SYS, FUSED4)})


def get_machine(name: str) -> Machine:
    """The machine called `name`, or a ValueError listing the known ones."""
    try:
        return MACHINES[name]
    except KeyError:
        raise ValueError(f"unknown machine '{name}'; known machines: {', '.join(MACHINES)}") from None
