"""The judge of a memory-agent bench run: predicted response streams against what was captured.

Moved out of models/mag/model.py so the agent model stays small; models.mag.model
re-exports both names. A Prediction holds, per destination, the ordered
streams the protocol guarantees (the read responses one requester caused, in
its request order; the acks of one writer); nothing orders two streams at one
destination, so :meth:`Prediction.check` accepts any interleaving of them and
nothing else.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from models.noc.flit import FIELDS, describe_flit
from models.mag.proto import WORD_MASK, Coord

__all__ = ["RdKey", "Prediction", "CheckReport"]

RdKey = tuple[str, Coord]  # ("rd", requester) or ("ack", writer)


@dataclass
class Prediction:
    """Every response flit of one run, per destination and per ordered stream.

    ``streams[dst][key]`` is the ordered list of flits destination ``dst`` must
    receive from stream ``key`` (``("rd", requester)`` or ``("ack", writer)``);
    different keys at one destination have no order between them.
    """

    mag: Coord
    streams: dict[Coord, dict[RdKey, list[int]]] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    open_writes: dict[Coord, tuple[int, int, int]] = field(default_factory=dict)  # src -> (txn, beats done, beats)
    words_read: int = 0      # DRAM words the run reads (each entry once, whatever its peers)
    words_written: int = 0   # DRAM words the run writes

    @property
    def total(self) -> int:
        """Response flits in all (what the bench waits for)."""
        return sum(len(s) for per in self.streams.values() for s in per.values())

    def flits_for(self, dst: Coord) -> list[int]:
        return [f for s in self.streams.get(dst, {}).values() for f in s]

    def _add(self, dst: Coord, key: RdKey, flit: int) -> None:
        self.streams.setdefault(dst, {}).setdefault(key, []).append(flit)

    def check(self, captures: Iterable[tuple[Coord, int, int]], *, limit: int = 20,
              frontier_cap: int = 50_000) -> "CheckReport":
        """Judge captured flits: ``captures`` is (capturing coordinate, cycle, flit).

        Per destination: the captured multiset must equal the predicted one
        (a wrong flit is reported against the predicted flit it is closest
        to), then the capture order must be an interleaving of the predicted
        ordered streams.
        """
        got: dict[Coord, list[tuple[int, int, int]]] = {}
        for seq, (coord, cycle, flit) in enumerate(captures):
            got.setdefault(tuple(coord), []).append((cycle, seq, flit))
        report = CheckReport()
        for dst in sorted(set(self.streams) | set(got)):
            caps = [f for _, _, f in sorted(got.get(dst, []))]
            cycles = [c for c, _, _ in sorted(got.get(dst, []))]
            self._check_dst(dst, caps, cycles, report, frontier_cap)
        if len(report.errors) > limit:
            more = len(report.errors) - limit
            report.errors = report.errors[:limit] + [f"... and {more} more"]
        return report

    def _check_dst(self, dst: Coord, caps: list[int], cycles: list[int], report: "CheckReport",
                   frontier_cap: int) -> None:
        want = Counter(self.flits_for(dst))
        have = Counter(caps)
        report.checks += sum(want.values()) + sum(have.values())
        missing = list((want - have).elements())
        surplus = list((have - want).elements())
        differs = bool(missing or surplus)
        at = f"at ({dst[0]},{dst[1]})"
        # A surplus flit that shares its header with a missing one is a wrong value.
        for s in list(surplus):
            twin = next((m for m in missing if (m >> 256) == (s >> 256)), None)
            if twin is None:
                twin = next((m for m in missing if (m & WORD_MASK) == (s & WORD_MASK)), None)
            if twin is not None:
                changed = [n for n, spec in FIELDS.items() if spec.extract(s) != spec.extract(twin)]
                report.errors.append(
                    f"WRONG {at}: {'/'.join(changed)} differ\n    expected {describe_flit(twin)}"
                    f"\n    captured {describe_flit(s)}")
                missing.remove(twin)
                surplus.remove(s)
        for m in missing:
            report.errors.append(f"MISSING {at}: never captured: {describe_flit(m)}")
        for s in surplus:
            report.errors.append(f"UNEXPECTED {at}: captured, not predicted: {describe_flit(s)}")
        if differs or not caps:
            return
        # Order: the captures must interleave the predicted streams, each kept in order.
        seqs = list(self.streams.get(dst, {}).items())
        frontier: set[tuple[int, ...]] = {tuple(0 for _ in seqs)}
        for i, flit in enumerate(caps):
            nxt: set[tuple[int, ...]] = set()
            for state in frontier:
                for j, (_, s) in enumerate(seqs):
                    if state[j] < len(s) and s[state[j]] == flit:
                        nxt.add(state[:j] + (state[j] + 1,) + state[j + 1:])
            report.checks += 1
            if not nxt:
                heads = [f"{k[0]} from ({k[1][0]},{k[1][1]}): {describe_flit(s[st])}"
                         for st0 in list(frontier)[:1] for (k, s), st in zip(seqs, st0) if st < len(s)]
                report.errors.append(
                    f"ORDER {at}: capture #{i} at cycle {cycles[i]} is out of its stream's order: "
                    f"{describe_flit(flit)}\n    next expected per stream: " + "; ".join(heads))
                return
            if len(nxt) > frontier_cap:
                raise RuntimeError(f"order check at {dst}: more than {frontier_cap} ambiguous states")
            frontier = nxt


@dataclass
class CheckReport:
    """Outcome of :meth:`Prediction.check`."""

    checks: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.errors

