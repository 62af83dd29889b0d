"""Typical durations of the benches, recorded in tb/run/typical_durations.json, for a first run's estimate.

Why: a long run's progress line estimates what is left from the previous
comparable run's durations (sim_build/durations.json). A first run has none,
and this run's mean step so far misleads, since the short benches finish
first: a first `make SIM=icarus` with twelve minutes to go once said "about
36 s left". The table records, per simulator, what each bench of the bench
table took on the project's reference machine (2 cores; where and how each
figure was measured is written in the file); a bench it lacks counts at the
median of the table's figures for the run's simulators, and the progress line
names it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

TABLE = Path(__file__).with_name("typical_durations.json")


def load_table(path: Path = TABLE) -> dict[str, dict[str, float]]:
    """{simulator: {bench: seconds}} of the table's "seconds" entry ({} when the file is missing or unreadable,
    as in a checkout that lost it: the estimate then falls back to this run's mean step)."""
    try:
        data = json.loads(path.read_text())
        return {sim: {bench: float(s) for bench, s in figures.items()} for sim, figures in data["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


@dataclass(frozen=True)
class Typical:
    """The typical duration of each step of a run: the table's figure where it has one (`known`), else
    `fallback_s`, the median of the table's figures for the run's simulators."""

    known: dict[str, float]
    fallback_s: float
    source: str = f"tb/run/{TABLE.name}"

    def of(self, step: str) -> float:
        return self.known.get(step, self.fallback_s)

    def assumed(self, steps: Sequence[str]) -> list[str]:
        """The steps among `steps` that the table lacks (counted at the fallback)."""
        return [s for s in steps if s not in self.known]


def typical_for(legs: Sequence[tuple[str, str, str]], table: dict[str, dict[str, float]] | None = None
                ) -> Typical | None:
    """The Typical of a run whose steps are `legs`, (step name, bench, simulator) each; None when the table
    has no figure for any of the run's simulators (nothing typical to go by)."""
    table = load_table() if table is None else table
    sims = {sim for _, _, sim in legs}
    pool = [s for sim in sorted(sims) for s in table.get(sim, {}).values()]
    if not pool:
        return None
    known = {step: table[sim][bench] for step, bench, sim in legs if bench in table.get(sim, {})}
    return Typical(known, statistics.median(pool))


def typical_for_benches(benches: Sequence[str], sim: str) -> Typical | None:
    """The Typical of a run of `benches` on `sim`, its steps named after the benches (the main job)."""
    return typical_for([(b, b, sim) for b in benches])


__all__ = ["TABLE", "Typical", "load_table", "typical_for", "typical_for_benches"]
