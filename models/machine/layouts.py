"""Machine descriptions: which unit sits at which coordinate of which mesh.

Each machine is described once, here. The description drives the generated
Verilog top (tb/system/machine_top.py), the planner (which coordinates are clusters,
vector cores, the memory agent and the agent that collects acknowledgements),
the machine model (models/machine/event_model.py) and the benches. Refusals happen
here, before any simulation: an unknown machine, a unit off every port, two
units on one coordinate, a corner, a limit out of range.

The limits a compiled plan assumes are part of the description, so the
generated top, the host and the models read one number each (units.md §H.5,
protocol §4): ``inst_depth`` (every compute unit's instruction FIFO: it must
hold a whole kick, up to 128 flits, and the host never seeds more credit than
it), ``stage_slots`` (the orchestrator's staging RAM), ``mem_base`` (the byte
address of DRAM word 0: the memory window the compiled addresses live in) and
``dram_words`` (the DRAM's size in 32-byte words). Every unit's timing is part of it too:
``timing`` overrides, by name, any fact of models/machine/unit_timing.py (upstream's by default), e.g.
{"mag.AR_FIFO_LAT": 1, "mag.R_FIFO_LAT": 1} for a memory that answers plain reads every 8 cycles
instead of 12.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Mapping

from models.noc.mesh import MeshGeometry
from models.machine.unit_timing import check_overrides

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
    inst_depth: int = 32  # cu_base INST_DEPTH of every cluster and vector core
    stage_slots: int = 256  # orchestrator STAGE_SLOTS
    mem_base: int = 0  # byte address of DRAM word 0 (the memory agent's BASE)
    dram_words: int = 65536  # 32-byte words of the DRAM behind the memory agent
    fifo_depth: int = 32  # every router's input FIFO depth (noc_router FIFO_DEPTH; 32 is the reference's)
    # Timing facts overridden by name ("vector.FETCH": 2); every other fact is upstream's (models/machine/unit_timing.py)
    timing: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        geometry = self.geometry  # validates nx, ny and every coordinate
        for name, value, lo, hi, fix in (
                ("inst_depth", self.inst_depth, 2, 65535, "the base's 16-bit inst_space"),
                ("stage_slots", self.stage_slots, 1, 1433, "0x2000 + 40*slots must fit the 16-bit host address"),
                ("dram_words", self.dram_words, 1, (1 << 31) - 1, "the DRAM's 31-bit word index"),
                ("fifo_depth", self.fifo_depth, 1, 1 << 16, "a router input FIFO of at least one flit"),
):
            if not lo <= value <= hi:
                raise ValueError(f"machine {self.name}: {name}={value} is outside {lo}..{hi} ({fix})")
        if self.mem_base % 32 or not 0 <= self.mem_base < (1 << 40) - 32 * self.dram_words:
            raise ValueError(f"machine {self.name}: mem_base={self.mem_base:#x} must be 32-byte aligned and leave "
                             f"the {self.dram_words}-word DRAM below 2^40 (a 40-bit byte address)")
        check_overrides(self.name, self.timing)
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

    def dram_offset(self, byte_addr: int, nbytes: int = 1) -> int:
        """The DRAM byte offset of machine byte address `byte_addr`; all `nbytes` must lie in the DRAM's window."""
        off = byte_addr - self.mem_base
        if off < 0 or off + max(1, nbytes) > 32 * self.dram_words:
            end = self.mem_base + 32 * self.dram_words - 1
            raise ValueError(f"machine {self.name}: bytes {byte_addr:#x}..{byte_addr + max(1, nbytes) - 1:#x} are "
                             f"outside its DRAM window {self.mem_base:#x}..{end:#x}; place the data inside it (or "
                             f"raise dram_words in models/machine/layouts.py)")
        return off

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
    # What the public compiler's plans assume of this machine (clients/README.md): instruction FIFOs of 512
    # (the compiler seeds 512 credits), 128 staging slots, the memory window at 0x8000_0000; router input
    # FIFOs of 512 as the measured upstream machine (upstream's generated tops, e.g. ktpu_ship_2x2.v).
    inst_depth=512,
    stage_slots=128,
    fifo_depth=512,
    mem_base=0x8000_0000,
    dram_words=65536,
)

MACHINES: Mapping[str, Machine] = MappingProxyType({m.name: m for m in (MM_MESH, MM_MESH_SYS, FUSED4)})


def get_machine(name: str) -> Machine:
    """The machine called `name`, or a ValueError listing the known ones."""
    try:
        return MACHINES[name]
    except KeyError:
        raise ValueError(f"unknown machine '{name}'; known machines: {', '.join(MACHINES)}") from None
