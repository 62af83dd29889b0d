"""Plan errors planted into a compiled bundle (in memory), for the self-tests that show a failure is named.

Why: "nothing silent" is only shown by a run that goes wrong on purpose and
ends with the right words. Each function edits the bundle's parsed plan
(``Bundle.meta``; the files are never touched), so the RTL bench and the
machine model's tests plant exactly the same fault.
"""

from __future__ import annotations

from models.bundle.reader import Bundle
from models.cluster.isa import Op, decode_inst, encode_inst, peer_field

PAYLOAD = (1 << 256) - 1


def await_one_more(b: Bundle) -> None:
    """The first await of `b` asks for one signal more than its kick makes."""
    step = next(s for p in b.meta["plan"] if p["kind"] == "round" for s in p["steps"] if s["op"] == "await")
    step["count"] += 1


def orphan_follower(b: Bundle, node: tuple[int, int], leader: tuple[int, int]) -> int:
    """The first FILL kicked to cluster `node` lists `leader` (a lower {y,x}) as its multicast group, so it
    follows; the leader's own FILL lists no group, so no response ever comes. Returns the FILL's n."""
    for p in b.meta["plan"]:
        for s in p.get("steps", []):
            if s["op"] != "kick" or tuple(s["node"]) != node:
                continue
            for i, hexflit in enumerate(s["flits"]):
                flit = int(hexflit, 16)
                f = decode_inst(flit & PAYLOAD)
                if f["op"] != Op.FILL:
                    continue
                f["peers"], f["npeer"] = peer_field([leader])
                op, addr = f.pop("op"), f.pop("addr")
                s["flits"][i] = f"{(flit & ~PAYLOAD) | encode_inst(op, addr=addr, **f):x}"
                return f["n"] or 1
    raise ValueError(f"bundle {b.name} kicks no FILL to {node}")


__all__ = ["await_one_more", "orphan_follower"]
