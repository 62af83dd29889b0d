"""The AHBM launches' coverage model (cocotb-coverage), sampled by tb/ahbm/case.py after every launch.

One model for every CUBE bench (`ahbm.*`), so a regression's union shows
which launches ran at which link width, whatever bench ran them:

* `kind` x `n`: the launch's kind (decode: every request one query row; prefill: a request with more;
  ring: Ring Attention) by its PEs per request, N;
* `decode_b`: a decode launch's requests, B (1, 2-4, 5-8);
* `width` x `poll`: the child polls of the log-sum-exp tree (tb.ahbm.kernel, §5.6) by the IPCQ link width and
  how they went: a hit (the child's partial was there), or a miss covered by a new tile, by tiles already
  in flight, or waited out with no tile left (idle). A launch on one PE polls no child and samples none.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Sequence

from cocotb_coverage.coverage import CoverCross, CoverPoint

from tb.cover import db

MODEL = "ahbm"
KINDS = ("decode", "prefill", "ring")
NS = ("1", "2", "4", "8")
BS = ("1", "2-4", "5-8")
WIDTHS = ("64", "256", "512")
POLLS = ("hit", "miss-covered", "miss-in-flight", "miss-idle")


@dataclass(frozen=True, slots=True)
class Launch:
    kind: str
    n: str


@dataclass(frozen=True, slots=True)
class Poll:
    width: str
    outcome: str


@dataclass(frozen=True)
class Samplers:
    launch: Callable[[Launch], None]
    decode_b: Callable[[str], None]
    poll: Callable[[Poll], None]


@functools.cache
def samplers() -> Samplers:
    """The model, built once per process: a bench's tests add up."""
    db.reset(MODEL)

    @CoverPoint(f"{MODEL}.kind", xf=lambda s: s.kind, bins=list(KINDS))
    @CoverPoint(f"{MODEL}.n", xf=lambda s: s.n, bins=list(NS))
    @CoverCross(f"{MODEL}.kind_x_n", items=[f"{MODEL}.kind", f"{MODEL}.n"])
    def launch(s: Launch) -> None:
        """A launch."""

    @CoverPoint(f"{MODEL}.decode_b", xf=lambda b: b, bins=list(BS))
    def decode_b(b: str) -> None:
        """A decode launch's B."""

    @CoverPoint(f"{MODEL}.width", xf=lambda s: s.width, bins=list(WIDTHS))
    @CoverPoint(f"{MODEL}.poll", xf=lambda s: s.outcome, bins=list(POLLS))
    @CoverCross(f"{MODEL}.width_x_poll", items=[f"{MODEL}.width", f"{MODEL}.poll"])
    def poll(s: Poll) -> None:
        """Child polls of one outcome in a launch."""

    return Samplers(launch, decode_b, poll)


def b_class(b: int) -> str:
    return "1" if b == 1 else "2-4" if b <= 4 else "5-8"


def sample_launch(kind: str, n: int, b: int, width: int, polls: Sequence[tuple[str, int]] = ()) -> None:
    """One launch: its kind, N, B, link width and its polls' outcomes with their counts (each outcome that
    happened is sampled once per launch)."""
    s = samplers()
    s.launch(Launch(kind, str(n)))
    if kind == "decode":
        s.decode_b(b_class(b))
    for outcome, count in polls:
        if count > 0:
            s.poll(Poll(str(width), outcome))


__all__ = ["MODEL", "b_class", "sample_launch", "samplers"]
