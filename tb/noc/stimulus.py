"""Turn (source, destination) pairs into flits for bench endpoints.

Header fields come from the geometry (src is always the sender's own
coordinate, as the protocol requires); type, txn and last are random, because
a router must not care; the payload is random with a 32-bit slot tag in its top
bits so a human reading a failure can find the flit in inj.hex.
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

from models.noc.flit import FIELDS, pack_fields
from models.noc.mesh import MeshGeometry

# Types a bench may put on the NoC at random (reserved 9..E and ERROR are not sent).
TRAFFIC_TYPES: tuple[int, ...] = tuple(range(9))
_TYPE, _TXN, _LAST = FIELDS["type"].lsb, FIELDS["txn"].lsb, FIELDS["last"].lsb
_SLOT_MASK = (1 << 32) - 1  # the slot tag: the payload's top 32 bits


def build_streams(
    geometry: MeshGeometry, pairs: Iterable[tuple[int, int]], rng: random.Random
) -> dict[int, list[int]]:
    """Per source port, the flits to inject in order.

    Each pair's header is packed (and range-checked) once and the random fields are shifted into place; the
    random draws are the same, in the same order, as packing every flit whole, so a seed gives the same flits.
    """
    streams: dict[int, list[int]] = {}
    headers: dict[tuple[int, int], int] = {}
    for slot, (src, dst) in enumerate(pairs):
        header = headers.get((src, dst))
        if header is None:
            sx, sy = geometry.port_coord(src)
            dx, dy = geometry.port_coord(dst)
            header = headers[(src, dst)] = pack_fields({"dst_x": dx, "dst_y": dy, "src_x": sx, "src_y": sy})
        if slot > _SLOT_MASK:
            raise ValueError(f"slot {slot} does not fit the payload's 32-bit slot tag: send at most "
                             f"{_SLOT_MASK + 1} flits in one run")
        payload = (slot << 224) | rng.getrandbits(224)
        ftype = rng.choice(TRAFFIC_TYPES)
        txn = rng.getrandbits(8)
        last = rng.getrandbits(1)
        streams.setdefault(src, []).append(header | (ftype << _TYPE) | (txn << _TXN) | (last << _LAST) | payload)
    return streams


def count_flits(streams: dict[int, Sequence[int]]) -> int:
    return sum(len(s) for s in streams.values())
