"""The host's loader for a compiled plan (units.md §H): what to stage, write and poll, round by round.

One role: turn a bundle's plan (models.bundle.reader) into host operations, with the
loader's rules, so the RTL machine and the unit models execute exactly the
same steps (tb/bundle/rtl_run.py and models/machine/event_model.py run them):

* **per round (one upstream artifact)**: the nodes it awaits get their
  NODE_STATUS baseline read first, at load time, before anything of the round
  is staged or run (the first await of a node in the round takes it); every
  kicked slot is staged once, as ``payload | header(type 5, txn 0, last on
  the kick's final flit, dst 0, src 0)`` (an OR: payload bits above 255
  survive, so the vector payloads' TXN 0x40 stays); a kick may not run past
  the round's payload list or the 128-slot staging RAM; ALL staging precedes
  the first command;
* **commands**: ``seed n`` writes PROG_CRED = n; ``kick`` polls PROG_STAT[0]
  == 0, writes PROG_DST / PROG_BASE / PROG_LEN each only if this round has
  not already written that value, then PROG_KICK = 1; ``await`` adds its
  count to the node's expected total and polls NODE_STATUS & 0x00FFFF01 ==
  ((baseline + expected) mod 2^16) << 8 | 1, exact equality;
* **between rounds**: a round's posted DRAM writes must have landed before a
  host relayout, a readback or the next round's baselines (completion is not
  landing, units.md §H.5): ``WaitLanded``; then the plan's ``host_convert``
  relayouts after that round, ``new[j] = old[gather[j]]`` (0 where -1).

Register addresses are offsets in the orchestrator's host window (models.orch.host_port.Reg,
NODE_STATUS_BASE, STAGE_BASE); the bundles' own ``loader_commands`` hold the same
operations at upstream's window 0x1000_0000 (tests/unit/bundle/test_loader.py compares).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence, Union

import numpy as np

from models.bundle.reader import Bundle, Kick, Round
from models.noc.flit import FIELDS, make_flit
from models.orch.host_port import NODE_STATUS_BASE, Reg, node_status_addr, pack_coord

Coord = tuple[int, int]
STAGE_SLOTS = 128  # the staging RAM a compiled plan assumes (units.md §H.2)
COUNT_MOD = 1 << 16
STATUS_MASK = 0x00FF_FF01
CU_INST = 5


class LoaderRefused(ValueError):
    """A plan the loader cannot run: names the round, the kick, the limit and the fix."""


@dataclass(frozen=True)
class Write:
    """Write a host register."""

    addr: int
    value: int
    name: str


@dataclass(frozen=True)
class Poll:
    """Poll a host register until ``value & mask == want``."""

    addr: int
    want: int
    mask: int
    name: str
    node: Coord | None = None  # an await: the node, its baseline and the signals expected since it
    baseline: int = 0
    expected: int = 0


Command = Union[Write, Poll]


@dataclass(frozen=True)
class Relayout:
    """A host relayout between rounds: read `read_nbytes` at `addr` as uint16, write new[j] = old[gather[j]]."""

    addr: int
    read_nbytes: int
    write_nbytes: int
    gather: np.ndarray

    def apply(self, old: np.ndarray) -> np.ndarray:
        """The bytes to write back, from the bytes read."""
        src = np.frombuffer(np.ascontiguousarray(old, dtype=np.uint8).tobytes(), dtype="<u2")
        g = self.gather.reshape(-1)
        new = np.where(g >= 0, src[np.clip(g, 0, None)], 0).astype("<u2")
        out = new.view(np.uint8)
        if out.size != self.write_nbytes:
            raise LoaderRefused(f"host relayout at {self.addr:#x}: the gather map makes {out.size} bytes, the plan "
                                f"says write {self.write_nbytes}; fix the bundle's gather map")
        return out


@dataclass
class RoundProgram:
    """What the loader does for one round: baselines, staging, then the commands (baselines filled in)."""

    round: Round
    await_nodes: tuple[Coord, ...]
    stage: dict[int, int]  # slot -> staged 288-bit flit
    relayouts: list[Relayout] = field(default_factory=list)

    def commands(self, baselines: Mapping[Coord, int]) -> list[Command]:
        """The round's command list, given the baselines read at load time."""
        out: list[Command] = []
        shadow: dict[int, int] = {}
        expected: dict[Coord, int] = {}
        for step in self.round.steps:
            if step[0] == "seed":
                out.append(Write(Reg.PROG_CRED, step[1], "PROG_CRED"))
            elif step[0] == "kick":
                kick: Kick = step[1]
                out.append(Poll(Reg.PROG_STAT, 0, 1, "PROG_STAT"))
                for reg, value, name in ((Reg.PROG_DST, pack_coord(kick.node), "PROG_DST"),
                                         (Reg.PROG_BASE, kick.base, "PROG_BASE"),
                                         (Reg.PROG_LEN, len(kick.flits), "PROG_LEN")):
                    if shadow.get(reg) != value:
                        out.append(Write(reg, value, name))
                        shadow[reg] = value
                out.append(Write(Reg.PROG_KICK, 1, "PROG_KICK"))
            else:
                node, count = step[1], step[2]
                expected[node] = expected.get(node, 0) + count
                base = baselines[node]
                target = (base + expected[node]) % COUNT_MOD
                out.append(Poll(node_status_addr(node), target << 8 | 1, STATUS_MASK,
                                f"NODE_STATUS[{node[0]},{node[1]}]", node, base, expected[node]))
        return out


def staged_flit(payload: int, last: bool) -> int:
    """The loader's staged value: the payload OR header(type 5, txn 0, last, dst 0, src 0)."""
    return payload | make_flit((0, 0), (0, 0), CU_INST, 0, int(last), 0)


def plan_rounds(b: Bundle) -> list[RoundProgram]:
    """Every round of the bundle's plan as the loader runs it, with the relayouts that follow each."""
    out: list[RoundProgram] = []
    relayouts: dict[int, list[Relayout]] = {}
    for entry in b.meta["plan"]:
        if entry["kind"] == "host_convert":
            ref = entry["gather"]  # "dram_in.npz:<key>" names the map, else the map itself
            gather = b.dram_in[ref.split(":", 1)[-1]] if isinstance(ref, str) else np.asarray(ref)
            relayouts.setdefault(int(entry["after_round"]), []).append(
                Relayout(int(entry["addr"], 16), int(entry["read_nbytes"]), int(entry["write_nbytes"]),
                         np.asarray(gather, dtype=np.int64)))
    for rnd in b.rounds:
        stage: dict[int, int] = {}
        for k, kick in enumerate(rnd.kicks):
            n = len(kick.flits)
            if kick.base + n > STAGE_SLOTS:
                raise LoaderRefused(f"bundle {b.name} round {rnd.index} kick {k} to {kick.node}: slots "
                                    f"{kick.base}..{kick.base + n - 1} run past the {STAGE_SLOTS}-slot staging RAM; "
                                    f"recompile with shorter windows")
            for i, payload in enumerate(kick.flits):
                stage.setdefault(kick.base + i, staged_flit(payload, i == n - 1))
        nodes = tuple(dict.fromkeys(s[1] for s in rnd.steps if s[0] == "await"))
        out.append(RoundProgram(rnd, nodes, stage, relayouts.get(rnd.index, [])))
    return out


def status_addr_to_node(addr: int) -> Coord:
    """The node a NODE_STATUS address belongs to."""
    packed = (addr - NODE_STATUS_BASE) // 8
    return (packed & 0xF, packed >> 4)


__all__ = ["Command", "LoaderRefused", "Poll", "Relayout", "RoundProgram", "STAGE_SLOTS", "Write", "plan_rounds",
           "staged_flit", "status_addr_to_node"]
