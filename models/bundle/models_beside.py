"""The RTL's rounds beside the timed golden models' (models/timed): a second clock for any bundle.

Why: timing_rtl.json judges our RTL's cycles only where upstream measured the bundle; a user's own export has
none. The timed golden models keep the RTL's clock (every round of the 24 bundles of clients/ within 1 %), so
each RTL run is also held to them, round by round, with the targets upstream's figures are held to
(models/bundle/timing.py: a round's machine cycles within ±10 %, the sum within ±3 %), and the figures say
where the two part (the worst round, and how many rounds are within 1 %).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from models.bundle.round_timing import RoundTiming
from models.bundle.timing import TARGETS, Targets, ratio, within

CLOSE = 0.01  # the timed models' own target against the RTL, reported per round


@dataclass(frozen=True)
class ModelsBeside:
    """One bundle's RTL rounds (machine cycles) beside the timed models' (plan order), with the units."""

    bundle: str
    units: tuple[str, ...]
    rtl: tuple[int, ...]
    models: tuple[int, ...]

    @classmethod
    def of(cls, bundle: str, units: Sequence[str], rtl: Sequence[RoundTiming | None],
           models: Sequence[RoundTiming]) -> "ModelsBeside":
        return cls(bundle, tuple(units), tuple(t.machine_cycles if t else 0 for t in rtl),
                   tuple(t.machine_cycles for t in models))

    @property
    def comparable(self) -> bool:
        return len(self.rtl) == len(self.models) and len(self.rtl) > 0

    def worst(self) -> int:
        """The round whose RTL / models ratio is farthest from 1."""
        return max(range(len(self.rtl)), key=lambda i: abs(ratio(self.rtl[i], self.models[i]) - 1.0))

    def close(self) -> int:
        return sum(1 for a, b in zip(self.rtl, self.models) if within(a, b, 100 * CLOSE))

    def failures(self, targets: Targets = TARGETS) -> list[str]:
        """One reason per figure outside its target (the RTL held to the models)."""
        if not self.comparable:
            return [f"bundle {self.bundle}: {len(self.rtl)} RTL round(s) beside {len(self.models)} of the timed "
                    f"models: not comparable"]
        out = []
        for i, (a, b) in enumerate(zip(self.rtl, self.models)):
            if not within(a, b, targets.round_machine_pct):
                out.append(f"bundle {self.bundle} round {i} ({self.units[i]}): machine cycles {a} on the RTL, {b} "
                           f"on the timed models (ratio {ratio(a, b):.3f}, target ±{targets.round_machine_pct:g} %)")
        if not within(sum(self.rtl), sum(self.models), targets.total_machine_pct):
            out.append(f"bundle {self.bundle}: machine cycles {sum(self.rtl)} on the RTL, {sum(self.models)} on the "
                       f"timed models (ratio {ratio(sum(self.rtl), sum(self.models)):.3f}, target "
                       f"±{targets.total_machine_pct:g} %)")
        return out

    def line(self) -> str:
        if not self.comparable:
            return f"  models: {self.failures()[0]}"
        w = self.worst()
        return (f"  models: machine cycles {sum(self.rtl)} RTL / {sum(self.models)} the timed golden models, ratio "
                f"{ratio(sum(self.rtl), sum(self.models)):.3f}; {self.close()} of {len(self.rtl)} round(s) within "
                f"{100 * CLOSE:g} %; worst round {w} ({self.units[w]}): {self.rtl[w]} / {self.models[w]}, ratio "
                f"{ratio(self.rtl[w], self.models[w]):.3f}")

    def to_json(self) -> dict:
        return {"bundle": self.bundle, "units": list(self.units), "rtl": list(self.rtl), "models": list(self.models)}

    @classmethod
    def from_json(cls, d: dict) -> "ModelsBeside":
        return cls(d["bundle"], tuple(d["units"]), tuple(d["rtl"]), tuple(d["models"]))


__all__ = ["CLOSE", "ModelsBeside"]
