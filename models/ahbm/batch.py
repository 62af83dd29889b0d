"""Launches of several requests at once, and launches that append to a cache (ADR §2, §5.3, P3).

Batched decode: B requests in one launch, each with its own cache, valid lengths, start_pe =
request_id mod N, Q and O_base. Every PE's slice holds one region per request (the same offset on
every PE), laid out as a single request's slice map (launch.py); a request's LaunchArgs are that
map's bases moved by its region's offset, so the kernel derives each request's walk from its own
arguments as before. All requests of a batch share N, the reduction tree and the mesh.

Across launches: a cache planned with `max_context` keeps its bases, so the driver only appends. For
decode step t (P3: the new token's post-RoPE K and its V are written before the launch, outside the
kernel) it writes that token's K and V row into the owning PE's next slot, writes the step's Q (and any
mask tiles), and launches with the counter advanced. `append_writes` and `launch.query_writes` are
those writes; the reference for every step is models.ahbm.kernel on the cache as it then stands.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from . import launch
from .placement import global_to_pe_slot, start_pe


@dataclass(frozen=True)
class Request:
    """One request of a launch: its cache length, query positions and id (start_pe = id mod N)."""

    counter: int
    q_start: int
    tq: int
    request_id: int
    q_block: int | None = None


@dataclass(frozen=True)
class Batch:
    """B requests in one launch; request r's bases lie in [offsets[r], offsets[r] + sizes[r]) of every
    PE's slice."""

    requests: tuple[Request, ...]
    launches: tuple[launch.Launch, ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def first(self) -> launch.Launch:
        return self.launches[0]

    @property
    def slice_bytes(self) -> int:
        return self.offsets[-1] + self.sizes[-1]


def shift(args: launch.LaunchArgs, off: int) -> launch.LaunchArgs:
    """The same slice map `off` bytes further into the slice."""
    return replace(args, q_base=args.q_base + off, k_base=args.k_base + off, v_base=args.v_base + off,
                   mask_base=args.mask_base + off, o_base=args.o_base + off)


def plan_batch(requests: Sequence[Request], n: int, groups: int, d: int, tile: int,
               mesh: tuple[int, int] = (2, 4), max_context: int | None = None,
               max_tq: int | None = None) -> Batch:
    """Every request planned as its own launch, then placed in its own region of the slices."""
    if not requests:
        raise ValueError("a batch needs at least one request")
    ids = [r.request_id for r in requests]
    if len(set(ids)) != len(ids):
        raise ValueError(f"request ids {ids} repeat: each request of a batch has its own id (and cache)")
    launches, offsets, sizes = [], [], []
    off = 0
    for r in requests:
        lp = launch.plan(r.counter, r.q_start, r.tq, n, r.request_id, groups, d, tile, r.q_block, mesh,
                     max_context, max_tq)
        size = launch.align(max(launch.slice_bytes(a) for a in lp.args))
        launches.append(launch.Launch(tuple(shift(a, off) for a in lp.args), lp.tree, lp.mesh))
        offsets.append(off)
        sizes.append(size)
        off += size
    return Batch(tuple(requests), tuple(launches), tuple(offsets), tuple(sizes))


def batch_image(batch: Batch, rank: int, data: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
    """Rank's whole slice for the batch (uint8): every request's map in its region; data[r] = (q, k, v)."""
    img = np.zeros(batch.slice_bytes, dtype=np.uint8)
    for lp, off, (q, k, v) in zip(batch.launches, batch.offsets, data):
        part = launch.slice_image(lp.args[rank], q, k, v)       # bases already moved: bytes below off are 0
        img[off:part.size] = part[off:]
    return img


# ---------------------------------------------------------------- launches that append (P3)


def append_writes(lp: launch.Launch, request_id: int, first: int, last: int, k: np.ndarray,
                  v: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """(rank, byte address, bf16 rows) the driver writes to append tokens [first, last) of the cache
    (k, v in global order) to their owners' slots: one K and one V write per rank holding any."""
    n = len(lp.args)
    start = start_pe(request_id, n)
    out = []
    for rank in range(n):
        toks = [i for i in range(first, last) if global_to_pe_slot(i, start, n)[0] == rank]
        if not toks:
            continue
        a = lp.args[rank]
        slot0 = global_to_pe_slot(toks[0], start, n)[1]
        row = a.d * 2
        if a.k_base + (slot0 + len(toks)) * row > a.v_base:
            raise ValueError(f"rank {rank}: slot {slot0 + len(toks) - 1} is past its K region "
                             f"({(a.v_base - a.k_base) // row} slots): plan with a larger max_context")
        out.append((rank, a.k_base + slot0 * row, k[toks]))
        out.append((rank, a.v_base + slot0 * row, v[toks]))
    return out
