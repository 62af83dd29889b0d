"""Plan errors planted into a compiled bundle (in memory), for the self-tests that show a failure is named.

Why: "nothing silent" is only shown by a run that goes wrong on purpose and
ends with the right words. Each function edits the bundle's parsed plan
(``Bundle.meta``; the files are never touched), so the RTL bench and the
machine model's tests plant exactly the same fault. :func:`damaged_copy`
writes such an edit into a bundle folder of its own, for a run through
``python -m tb.client run`` as a user's damaged export would go.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable, Iterator

from models.bundle.reader import Bundle
from models.vector.isa import INST_IMEM, INST_RUN, OPCODES
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


def _vc_flits(meta: dict[str, Any]) -> Iterator[tuple[dict[str, Any], int, int]]:
    """(step, index, flit) of every flit kicked, in plan order."""
    for p in meta["plan"]:
        for s in p.get("steps", []):
            if s["op"] == "kick":
                for i, hexflit in enumerate(s["flits"]):
                    yield s, i, int(hexflit, 16)


def _envelope(flit: int) -> int:
    return (flit & PAYLOAD) >> 252


def vhalt_replaced(meta: dict[str, Any], word: int = 0) -> int:
    """The first VHALT the plan writes into a vector core's IMEM becomes `word` (default 0, a VMOV v0 <- v0):
    the program runs on past where it ended. Returns the IMEM address."""
    for s, i, flit in _vc_flits(meta):
        if _envelope(flit) == INST_IMEM and (flit & 0xFFFF_FFFF) >> 27 == OPCODES["VHALT"]:
            s["flits"][i] = f"{(flit & ~0xFFFF_FFFF) | word:072x}"
            return (flit >> 243) & 0x1FF
    raise ValueError("the plan writes no VHALT into a vector core's IMEM")


def imem_turned_run(meta: dict[str, Any]) -> int:
    """The first IMEM flit's envelope opcode gets bit 1 flipped (IMEM, 1, becomes RUN, 3): the core runs its
    IMEM from that flit's address before the program is loaded. Returns the address."""
    for s, i, flit in _vc_flits(meta):
        if _envelope(flit) == INST_IMEM:
            s["flits"][i] = f"{flit ^ ((INST_IMEM ^ INST_RUN) << 252):072x}"
            return (flit >> 243) & 0x1FF
    raise ValueError("the plan kicks no IMEM flit")


def rounds_swapped(meta: dict[str, Any], first: int = 0) -> None:
    """The plan's round entries `first` and `first + 1` trade places (each keeps its round number's slot)."""
    idx = [k for k, p in enumerate(meta["plan"]) if p["kind"] == "round"][first:first + 2]
    a, b = (meta["plan"][k] for k in idx)
    a["round"], b["round"] = b["round"], a["round"]
    meta["plan"][idx[0]], meta["plan"][idx[1]] = b, a


def last_await_dropped(meta: dict[str, Any]) -> None:
    """The plan's last round loses its awaits: the host reads back without waiting for its kick."""
    last = [p for p in meta["plan"] if p["kind"] == "round"][-1]
    last["steps"] = [s for s in last["steps"] if s["op"] != "await"]


def outputs_removed(meta: dict[str, Any]) -> None:
    """No region is an output (and ``expected`` names none): a run that reads nothing back to judge."""
    meta["dram"]["regions"] = [r for r in meta["dram"]["regions"] if r["kind"] != "output"]
    meta["expected"] = {}


def damaged_copy(name: str, dst: Path, edit: Callable[[dict[str, Any]], Any], *, timing: bool = True) -> Path:
    """A copy of bundle `name` (clients/) in folder `dst` whose bundle.json is edited by `edit`;
    `timing=False` leaves timing_rtl.json out (an edit that changes the awaits no longer matches it)."""
    src = Path(Bundle(name).path)
    shutil.copytree(src, dst)
    meta = json.loads((dst / "bundle.json").read_text())
    edit(meta)
    (dst / "bundle.json").write_text(json.dumps(meta))
    if not timing:
        (dst / "timing_rtl.json").unlink(missing_ok=True)
    return dst


__all__ = ["await_one_more", "damaged_copy", "imem_turned_run", "last_await_dropped", "orphan_follower",
           "outputs_removed", "rounds_swapped", "vhalt_replaced"]
