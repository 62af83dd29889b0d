"""The timed models' flits beside the RTL's, flit by flit: where the two clocks part.

Why: a round's cycles say that the models and the RTL differ, not where. The RTL machine top logs every flit
at its endpoints when built with AGSIM_FLIT_TRACE set (tb/system/machine_top.py: "cycle IN|OUT port header"
lines in flit_trace.txt, IN an endpoint taking a flit, OUT the mesh taking one from it); a TimedMachine
records the same (``trace``). Per endpoint and direction the two lists hold the same flits in the same order
when both machines do the same work, so each flit's cycle can be compared. Both are measured from the
orchestrator's dispatched flits (the k-th flit the orchestrator sends is the same flit in both), so the hosts'
own pace between rounds does not count: a flit's offset is its cycle minus that of the last flit the
orchestrator sent before it (in the models' run), in each run.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from models.machine.layouts import Machine

from .unit import FlitRecord

Key = tuple[str, int]  # ("IN" | "OUT", endpoint port index)
Line = tuple[int, str, int, int]  # a trace line: (cycle, "IN" | "OUT", port index, 32-bit header)


def round_limits(run_rounds: list[tuple[int, int]], share: float = 0.01) -> list[float]:
    """Per dispatched flit, `share` of its round's machine cycles, from (flits kicked, machine cycles) per
    round in plan order: a flit farther off than that would move its round by as much."""
    return [share * cycles for kicked, cycles in run_rounds for _ in range(kicked)]


def read_rtl_trace(path: Path) -> list[Line]:
    """The RTL's flit trace: (cycle, "IN" | "OUT", port, 32-bit header) per line."""
    out = []
    for line in path.read_text().splitlines():
        cyc, way, port, hdr = line.split()
        out.append((int(cyc), way, int(port), int(hdr, 16)))
    return out


def model_trace(trace: list[FlitRecord], machine: Machine) -> list[Line]:
    """A TimedMachine's ``trace`` in the RTL's form (port index, header)."""
    g = machine.geometry
    return [(e, way, g.port_index(c), flit >> 256) for e, way, c, flit in trace]


def _by_port(trace: list[Line]) -> dict[Key, list[tuple[int, int]]]:
    out: dict[Key, list[tuple[int, int]]] = defaultdict(list)
    for cyc, way, port, hdr in sorted(trace, key=lambda r: r[0]):
        out[(way, port)].append((cyc, hdr))
    return out


@dataclass
class PortDiff:
    """One endpoint and direction: how many flits each side has, how many headers sit elsewhere in the
    order, the largest offset difference (models - RTL, cycles) and the first flit where it passes `limit`."""

    key: Key
    models: int
    rtl: int
    reordered: int = 0
    worst: int = 0
    worst_at: int = -1
    first_past: tuple[int, int, int] | None = None  # (flit index, models offset, RTL offset)
    past: int = 0  # flits past the limit


@dataclass
class TraceComparison:
    ports: list[PortDiff] = field(default_factory=list)
    flits: int = 0

    @property
    def past(self) -> int:
        return sum(p.past for p in self.ports)

    @property
    def worst(self) -> int:
        return max((abs(p.worst) for p in self.ports), default=0)

    def lines(self, names: dict[int, str]) -> list[str]:
        out = [f"flit trace: {self.flits} flits compared; largest difference {self.worst} cycles"]
        for p in self.ports:
            where = f"{p.key[0]} {names.get(p.key[1], p.key[1])}"
            note = f", {p.reordered} in another order" if p.reordered else ""
            count = "" if p.models == p.rtl else f" (models {p.models}, RTL {p.rtl} flits)"
            past = ""
            if p.first_past is not None:
                i, m, r = p.first_past
                past = f"; {p.past} past the limit, the first: flit {i}, models +{m}, RTL +{r}"
            out.append(f"  {where}: worst {p.worst:+d} at flit {p.worst_at}{note}{count}{past}")
        return out


def compare(models: list[Line], rtl: list[Line], orch_port: int,
            limits: list[float] | None = None, limit: float = 50) -> TraceComparison:
    """Every endpoint's flits, models beside RTL (module doc). The offset difference worth naming: after the
    orchestrator's j-th flit ``limits[j]`` (e.g. 1 % of that flit's round), else `limit` cycles."""
    mp, rp = _by_port(models), _by_port(rtl)
    mo = [c for c, _ in mp.get(("OUT", orch_port), [])]
    ro = [c for c, _ in rp.get(("OUT", orch_port), [])]
    res = TraceComparison()
    for key in sorted(set(mp) | set(rp)):
        ms, rs = mp.get(key, []), rp.get(key, [])
        d = PortDiff(key, len(ms), len(rs))
        for i, ((mc, mh), (rc, rh)) in enumerate(zip(ms, rs)):
            j = bisect.bisect_right(mo, mc) - 1
            if j < 0 or j >= len(ro):
                continue
            m_off, r_off = mc - mo[j], rc - ro[j]
            delta = m_off - r_off
            res.flits += 1
            d.reordered += mh != rh
            if abs(delta) > abs(d.worst):
                d.worst, d.worst_at = delta, i
            bound = limits[j] if limits is not None and j < len(limits) else limit
            if abs(delta) > bound:
                d.past += 1
                if d.first_past is None:
                    d.first_past = (i, m_off, r_off)
        res.ports.append(d)
    return res


__all__ = ["PortDiff", "TraceComparison", "compare", "model_trace", "read_rtl_trace", "round_limits"]
