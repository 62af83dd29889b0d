"""The NoC benches' coverage model: what their traffic runs exercised (cocotb-coverage).

One set of items per bench (`noc.<bench>.*`; a router and a 4x4 mesh have
other endpoints), sampled by tb.noc.bench.NocTB.run_traffic after every run
from what the bench recorded (never from the design's hierarchy):

* `src` x `dst`: every delivered flit by the endpoint that sent it (the flit's source field) and the one
  that captured it;
* `idle` x `backpressure`: every run by its sources' idle pattern and its sinks' busy pattern (tb_pattern
  modes NONE, RANDOM, BURST; ALWAYS is left out: an always-idle source sends nothing and an always-busy
  sink never lets a run end);
* `idle` x `backpressure` x `fifo_full`: the runs of each stall pair in which the back-pressure reached a
  source: it offered a flit while the DUT's input was busy, its FIFO full (tb_ep_bank's busy.hex). A run
  in which no FIFO filled hits no bin here: under heavy busy that may be impossible, so "no" is no bin;
* `filled`: per endpoint, runs in which its own input FIFO was full while it offered a flit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from cocotb_coverage.coverage import CoverCross, CoverPoint

from models.noc.flit import FIELDS
from tb.cover import db

MODEL = "noc"
STALL_MODES = ("NONE", "RANDOM", "BURST")
FULL = ("yes",)


@dataclass(frozen=True, slots=True)
class Delivered:
    src: str
    dst: str


@dataclass(frozen=True, slots=True)
class Run:
    idle: str
    backpressure: str
    fifo_full: str
    filled: frozenset[str]


def _in(sample, b) -> bool:
    return b in sample


@dataclass(frozen=True)
class Samplers:
    delivered: Callable[[Delivered], None]
    run: Callable[[Run], None]


def coord_label(xy: tuple[int, int]) -> str:
    return f"{xy[0]},{xy[1]}"


@functools.cache
def samplers(bench: str, endpoints: tuple[str, ...]) -> Samplers:
    """The model of `bench` (endpoints labelled 'x,y'), built once per process: its tests add up."""
    base = f"{MODEL}.{bench}"
    db.reset(base)
    ep = list(endpoints)

    @CoverPoint(f"{base}.src", xf=lambda s: s.src, bins=ep)
    @CoverPoint(f"{base}.dst", xf=lambda s: s.dst, bins=ep)
    @CoverCross(f"{base}.src_x_dst", items=[f"{base}.src", f"{base}.dst"])
    def delivered(s: Delivered) -> None:
        """A flit captured at `dst` that `src` sent."""

    @CoverPoint(f"{base}.idle", xf=lambda s: s.idle, bins=list(STALL_MODES))
    @CoverPoint(f"{base}.backpressure", xf=lambda s: s.backpressure, bins=list(STALL_MODES))
    @CoverPoint(f"{base}.fifo_full", xf=lambda s: s.fifo_full, bins=list(FULL))
    @CoverCross(f"{base}.idle_x_backpressure", items=[f"{base}.idle", f"{base}.backpressure"])
    @CoverCross(f"{base}.idle_x_backpressure_x_fifo_full",
                items=[f"{base}.idle", f"{base}.backpressure", f"{base}.fifo_full"])
    @CoverPoint(f"{base}.filled", xf=lambda s: s.filled, bins=ep, rel=_in, inj=False)
    def run(s: Run) -> None:
        """A traffic run."""

    return Samplers(delivered, run)


def sample_run(bench: str, endpoints: Sequence[tuple[int, int]], delivered: Iterable[tuple[int, tuple[int, int]]],
               idle: str, backpressure: str, busy: Sequence[tuple[tuple[int, int], int]]) -> None:
    """One run: `delivered` (captured flit, capturing endpoint's coordinate), the stall modes, and each
    endpoint's busy-while-offering cycles."""
    s = samplers(bench, tuple(coord_label(e) for e in endpoints))
    src_x, src_y = FIELDS["src_x"], FIELDS["src_y"]
    for flit, dst in delivered:
        s.delivered(Delivered(f"{src_x.extract(flit)},{src_y.extract(flit)}", coord_label(dst)))
    filled = frozenset(coord_label(e) for e, n in busy if n > 0)
    if idle in STALL_MODES and backpressure in STALL_MODES:
        s.run(Run(idle, backpressure, "yes" if filled else "no", filled))


__all__ = ["MODEL", "STALL_MODES", "coord_label", "sample_run", "samplers"]
