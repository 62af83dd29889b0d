"""One round's execution time, in the terms upstream's timing_rtl.json uses: host cycles, kicks, awaits met.

Why a module of its own: the same figures come from two places and must mean
the same thing. A bundle's ``timing_rtl.json`` holds upstream's (its RTL,
replayed by a plain host); our round loop (models/bundle/executor.py) stamps the
host's clock at the same moments on our machine. Both become a
:class:`RoundTiming`, so models/bundle/timing.py compares like with like.

The definitions (clients/README.md, ``timing_rtl.json``):

* ``host_cycles``: the round's start, before its baseline reads, to the
  host's first KICK write (the cycle that write is issued);
* ``kicks``: the cycle of each KICK write, relative to the first;
* ``awaits``: ``(x, y, cycle)``, the cycle the host saw each await met (the
  poll read that returned the target), relative to the first KICK;
* ``machine_cycles``: the first KICK to the last await met (0 for a round
  that awaits nothing);
* ``total`` = host + machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

Coord = tuple[int, int]


@dataclass(frozen=True)
class RoundTiming:
    """One round's figures, every cycle relative as the module doc defines."""

    round: int
    host_cycles: int
    kicks: tuple[int, ...]
    awaits: tuple[tuple[int, int, int], ...]  # (x, y, cycle met)
    machine_cycles: int

    @property
    def total(self) -> int:
        return self.host_cycles + self.machine_cycles

    @classmethod
    def of_stamps(cls, round_index: int, start: int, kicks: Sequence[int],
                  awaits: Sequence[tuple[Coord, int]]) -> "RoundTiming":
        """The figures from absolute clock stamps: the round's start, each KICK write issued, each await met."""
        if not kicks:
            raise ValueError(f"round {round_index}: no KICK write was stamped; a round's timing runs from its "
                             f"first KICK")
        first = kicks[0]
        met = tuple((node[0], node[1], cycle - first) for node, cycle in awaits)
        return cls(round_index, first - start, tuple(k - first for k in kicks), met,
                   max((m[2] for m in met), default=0))

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> "RoundTiming":
        """One entry of timing_rtl.json's ``rounds`` (checked first: models/bundle/timing_schema.py)."""
        return cls(int(entry["round"]), int(entry["host_cycles"]), tuple(int(k) for k in entry["kicks"]),
                   tuple((int(x), int(y), int(c)) for x, y, c in entry["awaits"]), int(entry["machine_cycles"]))

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "host_cycles": self.host_cycles, "kicks": list(self.kicks),
                "awaits": [list(a) for a in self.awaits], "machine_cycles": self.machine_cycles,
                "total": self.total}


__all__ = ["RoundTiming"]
