"""Synthetic traffic patterns for a :class:`~models.noc.mesh.MeshGeometry`.

Each generator returns a list of ``(src_port, dst_port)`` pairs of present
endpoint indices.  Randomness comes only from the generator object passed in
(``random.Random`` or ``numpy.random.Generator``) so a test is reproducible
from its seed alone; generators that need no randomness still accept ``rng``
so every pattern can be called the same way by a test runner.

Ordering: per-source patterns return pairs round-major - round 0 has one pair
for every source in ascending port order, then round 1, and so on - which is
the natural order to inject them in without starving any source.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Optional, Sequence, Union

from models.noc.mesh import Coord, Endpoint, MeshGeometry

if TYPE_CHECKING:  # numpy is optional for this module
    import numpy as np

    Rng = Union[random.Random, np.random.Generator]
else:
    Rng = object

__all__ = [
    "Pair",
    "uniform_random",
    "transpose",
    "transpose_target",
    "hotspot",
    "nearest_neighbour",
    "self_addressed",
]

Pair = tuple[int, int]
"""``(src_port_index, dst_port_index)``."""


def _below(rng: "Rng", n: int) -> int:
    """Uniform int in ``0..n-1`` from either supported RNG type."""
    if isinstance(rng, random.Random):
        return rng.randrange(n)
    integers = getattr(rng, "integers", None)
    if integers is None:
        raise TypeError(
            f"rng must be random.Random or numpy.random.Generator, got {type(rng).__name__}"
        )
    return int(integers(n))


def _pick(rng: "Rng", items: Sequence[int]) -> int:
    """Uniform choice from a non-empty sequence."""
    return items[_below(rng, len(items))]


def _check_count(name: str, count: int) -> None:
    """Reject negative counts early rather than returning a silent empty list."""
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {count}")


def _others(endpoints: Sequence[int], src: int) -> list[int]:
    """Endpoints other than ``src``; just ``[src]`` if it is the only one."""
    rest = [e for e in endpoints if e != src]
    return rest or [src]


def uniform_random(
    geometry: MeshGeometry, rng: "Rng", count: int, *, allow_self: bool = False
) -> list[Pair]:
    """``count`` pairs in total, source and destination uniform over endpoints.

    Self-addressed pairs are excluded unless ``allow_self`` (or the mesh has a
    single endpoint, where self is the only possible destination).
    """
    _check_count("count", count)
    eps = geometry.endpoints()
    pairs: list[Pair] = []
    for _ in range(count):
        src = _pick(rng, eps)
        dst = _pick(rng, eps if allow_self else _others(eps, src))
        pairs.append((src, dst))
    return pairs


def _scale(v: int, n_from: int, n_to: int) -> int:
    """Map 1..n_from onto 1..n_to proportionally (rounded half up)."""
    if n_from == 1:
        return 1
    num = (v - 1) * (n_to - 1)
    return 1 + (2 * num + (n_from - 1)) // (2 * (n_from - 1))


def _fit(v: int, n_from: int, n_to: int) -> int:
    """Keep ``v`` when it exists on the target axis, otherwise scale it."""
    return v if v <= n_to else _scale(v, n_from, n_to)


def transpose_target(geometry: MeshGeometry, src: Endpoint) -> Coord:
    """Deterministic transpose partner coordinate of endpoint ``src``.

    Local (x, y) -> local (y, x).  On a non-square mesh a transposed
    coordinate that falls outside the grid is scaled proportionally onto the
    other axis instead (so every local maps to some local).  Edge endpoints
    mirror across the diagonal: north (x,0) <-> west (0,x) and south
    (x,NY+1) <-> east (NX+1,x), with the same keep-or-scale rule along the
    edge.  The result may be an absent edge position; :func:`transpose`
    handles that case.
    """
    g = geometry
    x, y = src if isinstance(src, tuple) else g.port_coord(src)
    if g.is_router((x, y)):
        return (_fit(y, g.ny, g.nx), _fit(x, g.nx, g.ny))
    if y == 0:
        return (0, _fit(x, g.nx, g.ny))
    if x == 0:
        return (_fit(y, g.ny, g.nx), 0)
    if y == g.ny + 1:
        return (g.nx + 1, _fit(x, g.nx, g.ny))
    return (_fit(y, g.ny, g.nx), g.ny + 1)


def transpose(geometry: MeshGeometry, rng: "Rng", count_per_source: int = 1) -> list[Pair]:
    """Every endpoint sends ``count_per_source`` flits to its transpose partner.

    See :func:`transpose_target` for the mapping.  When the partner is an
    absent edge position, each of that source's flits instead goes to a
    uniformly random other endpoint (drawn from ``rng``), so the pattern
    still loads the mesh rather than silently skipping the source.  Diagonal
    locals (x == y) are their own partner and send to themselves.
    """
    _check_count("count_per_source", count_per_source)
    g = geometry
    eps = g.endpoints()
    targets: dict[int, Optional[int]] = {}
    for src in eps:
        t = g.port_index(transpose_target(g, src))
        targets[src] = t if g.present(t) else None
    pairs: list[Pair] = []
    for _ in range(count_per_source):
        for src in eps:
            t = targets[src]
            pairs.append((src, t if t is not None else _pick(rng, _others(eps, src))))
    return pairs


def hotspot(
    geometry: MeshGeometry,
    rng: "Rng",
    count_per_source: int = 1,
    target: Optional[Endpoint] = None,
) -> list[Pair]:
    """Every present endpoint (the target included) sends to one endpoint.

    ``target`` may be a port index or coordinate of a present endpoint; when
    None it is drawn from ``rng``.  The target sends to itself as well so
    that its own ejection port sees contention from its Local/edge input.
    """
    _check_count("count_per_source", count_per_source)
    eps = geometry.endpoints()
    if target is None:
        dst = _pick(rng, eps)
    else:
        dst = geometry.port_index(target) if isinstance(target, tuple) else target
        if not geometry.present(dst):
            raise ValueError(f"hotspot target {target!r} is not a present endpoint")
    return [(src, dst) for _ in range(count_per_source) for src in eps]


def nearest_neighbour(
    geometry: MeshGeometry, rng: "Rng", count_per_source: int = 1
) -> list[Pair]:
    """Each endpoint sends to random endpoints at most one router away.

    "One router away" compares entry routers (Manhattan distance <= 1), so an
    endpoint's candidates include other endpoints on its own router.  The
    source itself is excluded unless it has no candidate at all (a 1x1 mesh
    without edge endpoints), in which case it sends to itself.
    """
    _check_count("count_per_source", count_per_source)
    g = geometry
    eps = g.endpoints()
    entry = {e: g.entry_port(e)[0] for e in eps}
    near: dict[int, list[int]] = {}
    for src in eps:
        cands = [
            e for e in eps if e != src and g.router_distance(entry[src], entry[e]) <= 1
        ]
        near[src] = cands or [src]
    return [
        (src, _pick(rng, near[src])) for _ in range(count_per_source) for src in eps
    ]


def self_addressed(
    geometry: MeshGeometry, rng: Optional["Rng"] = None, count_per_source: int = 1
) -> list[Pair]:
    """Every endpoint sends to itself (one router traversal, in and back out).

    ``rng`` is unused; it is accepted so all patterns share one call shape.
    """
    _check_count("count_per_source", count_per_source)
    eps = geometry.endpoints()
    return [(src, src) for _ in range(count_per_source) for src in eps]
