"""Turn (source, destination) pairs into flits for bench endpoints.

Header fields come from the geometry (src is always the sender's own
coordinate, as the protocol requires); type, txn and last are random, because
a router must not care; the payload is random with a 32-bit slot tag in its top
bits so a human reading a failure can find the flit in inj.hex.
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

from models.flit import pack_fields
from models.mesh import MeshGeometry

# Types a bench may put on the NoC at random (reserved 9..E and ERROR are not sent).
TRAFFIC_TYPES: tuple[int, ...] = tuple(range(9))


def build_streams(
    geometry: MeshGeometry, pairs: Iterable[tuple[int, int]], rng: random.Random
) -> dict[int, list[int]]:
    """Per source port, the flits to inject in order."""
    streams: dict[int, list[int]] = {}
    for slot, (src, dst) in enumerate(pairs):
        sx, sy = geometry.port_coord(src)
        dx, dy = geometry.port_coord(dst)
        payload = (slot << 224) | rng.getrandbits(224)
        flit = pack_fields({
            "dst_x": dx, "dst_y": dy, "src_x": sx, "src_y": sy,
            "type": rng.choice(TRAFFIC_TYPES), "txn": rng.getrandbits(8), "last": rng.getrandbits(1),
            "payload": payload,
        })
        streams.setdefault(src, []).append(flit)
    return streams


def count_flits(streams: dict[int, Sequence[int]]) -> int:
    return sum(len(s) for s in streams.values())
