"""Geometry and routing reference model of an NX x NY router mesh.

This module is the executable statement of the mesh protocol rules that the
Verilog implements: where endpoints sit, how endpoint coordinates map to the
flat port index space used by the RTL's port arrays, and the dimension-order
(X first) routing decision.  Testbenches use it to predict hop counts and to
translate between port numbers and coordinates; it must therefore agree with
the RTL bit for bit, which is why the index formulas are spelled out here.

Coordinate system: routers occupy x in 1..NX, y in 1..NY.  Endpoints sit on a
router's Local port (same coordinate) or on the edge ring just outside the
grid: (x, 0) north, (x, NY+1) south, (0, y) west, (NX+1, y) east.  Corners
(0,0), (0,NY+1), (NX+1,0), (NX+1,NY+1) are never endpoints.  North means
smaller y, west means smaller x.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from typing import Union

from models.noc.flit import POS_MAX

__all__ = [
    "Coord",
    "Endpoint",
    "Port",
    "MAX_DIM",
    "MeshGeometry",
]

Coord = tuple[int, int]
"""An ``(x, y)`` coordinate."""
Endpoint = Union[int, Coord]
"""An endpoint given either as a flat port index or as its coordinate."""

MAX_DIM = POS_MAX - 1
"""Largest NX/NY: the far edge ring sits at NX+1 / NY+1, which must fit 4 bits."""


class Port(IntEnum):
    """Router port numbering (matches the RTL's port array order)."""

    N = 0
    E = 1
    S = 2
    W = 3
    L = 4


_STEP: dict[Port, Coord] = {
    Port.N: (0, -1),
    Port.E: (1, 0),
    Port.S: (0, 1),
    Port.W: (-1, 0),
    Port.L: (0, 0),
}


def _check_dim(name: str, value: object) -> int:
    """Validate one mesh dimension, explaining the limit and how to fix it."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1 or value > MAX_DIM:
        raise ValueError(
            f"{name}={value} is out of range: {name} must be 1..{MAX_DIM} because "
            f"coordinates are 4-bit (0..{POS_MAX}) and the far edge ring sits at "
            f"{name}+1; choose {name} between 1 and {MAX_DIM}"
        )
    return value


@dataclass(frozen=True)
class MeshGeometry:
    """Endpoint placement, port indexing and X-first routing of one mesh.

    ``edge_mask`` bit ``i`` marks ring position ``i`` (port index
    ``num_routers + i``) as populated; Local endpoints always exist.
    """

    nx: int
    ny: int
    edge_mask: int = 0

    def __post_init__(self) -> None:
        """Refuse meshes the 4-bit coordinate fields cannot address."""
        _check_dim("nx", self.nx)
        _check_dim("ny", self.ny)
        full = self.all_edges(self.nx, self.ny)
        if not isinstance(self.edge_mask, int) or self.edge_mask < 0 or self.edge_mask > full:
            raise ValueError(
                f"edge_mask={self.edge_mask!r} has bits outside the {self.ring_size}-position "
                f"edge ring of a {self.nx}x{self.ny} mesh; use 0..{full:#x}"
            )

    # ------------------------------------------------------------------ sizes
    @classmethod
    def all_edges(cls, nx: int, ny: int) -> int:
        """Edge mask with every ring position populated."""
        return (1 << (2 * nx + 2 * ny)) - 1

    @classmethod
    def with_all_edges(cls, nx: int, ny: int) -> "MeshGeometry":
        """Convenience constructor: every edge-ring position has an endpoint."""
        return cls(nx, ny, cls.all_edges(nx, ny))

    @property
    def num_routers(self) -> int:
        """Routers (and Local endpoints) in the grid; also the ring index base."""
        return self.nx * self.ny

    @property
    def ring_size(self) -> int:
        """Number of edge-ring positions (2*NX + 2*NY)."""
        return 2 * self.nx + 2 * self.ny

    @property
    def num_ports(self) -> int:
        """Size of the flat port index space, P = NX*NY + 2*NX + 2*NY."""
        return self.num_routers + self.ring_size

    # ------------------------------------------------------------ port index
    def port_coord(self, index: int) -> Coord:
        """Coordinate of port ``index`` (present or not)."""
        if not isinstance(index, int) or index < 0 or index >= self.num_ports:
            raise ValueError(f"port index {index!r} is outside 0..{self.num_ports - 1}")
        nx, ny = self.nx, self.ny
        if index < self.num_routers:
            return (index % nx + 1, index // nx + 1)
        i = index - self.num_routers
        if i < nx:
            return (i + 1, 0)
        i -= nx
        if i < nx:
            return (i + 1, ny + 1)
        i -= nx
        if i < ny:
            return (0, i + 1)
        return (nx + 1, i - ny + 1)

    def port_index(self, coord: Coord) -> int:
        """Flat port index of an endpoint position (present or not).

        Raises ValueError for coordinates that can never hold an endpoint:
        corners and anything outside the ring.
        """
        x, y = coord
        nx, ny, base = self.nx, self.ny, self.num_routers
        if 1 <= x <= nx and 1 <= y <= ny:
            return (y - 1) * nx + (x - 1)
        if 1 <= x <= nx:
            if y == 0:
                return base + (x - 1)
            if y == ny + 1:
                return base + nx + (x - 1)
        if 1 <= y <= ny:
            if x == 0:
                return base + 2 * nx + (y - 1)
            if x == nx + 1:
                return base + 2 * nx + ny + (y - 1)
        raise ValueError(
            f"({x},{y}) is not an endpoint position of a {nx}x{ny} mesh "
            f"(routers x=1..{nx}, y=1..{ny}; edge ring at x=0/{nx + 1} or y=0/{ny + 1}; "
            "corners are empty)"
        )

    def _index(self, endpoint: Endpoint) -> int:
        """Accept either a port index or a coordinate and return the index."""
        if isinstance(endpoint, tuple):
            return self.port_index(endpoint)
        self.port_coord(endpoint)  # range check
        return endpoint

    def _coord(self, endpoint: Endpoint) -> Coord:
        """Accept either a port index or a coordinate and return the coordinate."""
        if isinstance(endpoint, tuple):
            self.port_index(endpoint)  # validity check
            return (endpoint[0], endpoint[1])
        return self.port_coord(endpoint)

    def present(self, index: int) -> bool:
        """True when port ``index`` has an endpoint attached."""
        if index < 0 or index >= self.num_ports:
            return False
        if index < self.num_routers:
            return True
        return bool((self.edge_mask >> (index - self.num_routers)) & 1)

    @cached_property
    def _endpoints(self) -> tuple[int, ...]:
        """Cached present port indices (geometry is immutable)."""
        return tuple(i for i in range(self.num_ports) if self.present(i))

    def endpoints(self) -> list[int]:
        """Present port indices in ascending index order."""
        return list(self._endpoints)

    def endpoint_coords(self) -> list[Coord]:
        """Coordinates of present endpoints, in the same order as endpoints()."""
        return [self.port_coord(i) for i in self._endpoints]

    def is_valid_destination(self, dst: Endpoint) -> bool:
        """True when ``dst`` names a present endpoint (a flit may be sent there)."""
        try:
            return self.present(self._index(dst))
        except ValueError:
            return False

    # --------------------------------------------------------------- routers
    def is_router(self, coord: Coord) -> bool:
        """True when ``coord`` is a router position inside the grid."""
        x, y = coord
        return 1 <= x <= self.nx and 1 <= y <= self.ny

    def routers(self) -> list[Coord]:
        """All router coordinates, row-major (same order as Local indices)."""
        return [(x, y) for y in range(1, self.ny + 1) for x in range(1, self.nx + 1)]

    def clamp(self, coord: Coord) -> Coord:
        """Clamp a coordinate into the router grid (routing's target router)."""
        x, y = coord
        return (min(max(x, 1), self.nx), min(max(y, 1), self.ny))

    def neighbour(self, coord: Coord, port: Port) -> Coord:
        """Coordinate one step from ``coord`` through ``port`` (L returns coord)."""
        dx, dy = _STEP[Port(port)]
        return (coord[0] + dx, coord[1] + dy)

    def router_distance(self, a: Coord, b: Coord) -> int:
        """Manhattan distance between two router coordinates."""
        return abs(a[0] - b[0]) + abs(a[1] - b[1])

    def entry_port(self, endpoint: Endpoint) -> tuple[Coord, Port]:
        """Router an endpoint attaches to, and which of that router's ports.

        The same (router, port) is where flits for this endpoint leave the mesh.
        """
        x, y = self._coord(endpoint)
        if self.is_router((x, y)):
            return ((x, y), Port.L)
        if y == 0:
            return ((x, 1), Port.N)
        if y == self.ny + 1:
            return ((x, self.ny), Port.S)
        if x == 0:
            return ((1, y), Port.W)
        return ((self.nx, y), Port.E)

    def output_port(self, router: Coord, dst: Coord) -> Port:
        """Routing decision at ``router`` for a flit whose header says ``dst``.

        Dimension order on the clamped destination, X first; at the target
        router the raw destination decides between an outward edge hop and
        Local.  Works for any 4-bit header value, like the RTL does.
        """
        x, y = router
        if not self.is_router(router):
            raise ValueError(f"{router} is not a router of a {self.nx}x{self.ny} mesh")
        dx, dy = dst
        cx, cy = self.clamp(dst)
        if cx > x:
            return Port.E
        if cx < x:
            return Port.W
        if cy > y:
            return Port.S
        if cy < y:
            return Port.N
        if dx < 1:
            return Port.W
        if dx > self.nx:
            return Port.E
        if dy < 1:
            return Port.N
        if dy > self.ny:
            return Port.S
        return Port.L

    def route(self, src: Endpoint, dst: Endpoint) -> list[Coord]:
        """Routers traversed from endpoint ``src`` to endpoint ``dst``, in order.

        Starts at the source's entry router (its own coordinate clamped into
        the grid) and ends at the router whose output port reaches ``dst``.
        """
        router = self.clamp(self._coord(src))
        target = self._coord(dst)
        path = [router]
        for _ in range(self.nx + self.ny + 1):
            port = self.output_port(router, target)
            nxt = self.neighbour(router, port)
            if port is Port.L or not self.is_router(nxt):
                return path
            router = nxt
            path.append(router)
        raise RuntimeError(f"route {src}->{dst} did not terminate")  # pragma: no cover

    def hops(self, src: Endpoint, dst: Endpoint) -> int:
        """Number of routers a flit traverses from ``src`` to ``dst`` (>= 1).

        Equal to ``len(route(src, dst))`` because X-first routing is minimal:
        Manhattan distance between entry and exit routers, plus one.  Computed
        in closed form since scoreboards call it for every flit.
        """
        (ax, ay), _ = self.entry_port(src)
        (bx, by), _ = self.entry_port(dst)
        return abs(ax - bx) + abs(ay - by) + 1
