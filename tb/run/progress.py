"""Progress of a long run, one line per finished step: done/total, elapsed, an estimate of what is left.

Why: `make SIM=icarus` and `make bench` take minutes; a user wants to know
how far they are and roughly how long the rest takes. The estimate comes from
the previous run's duration of each remaining step when every one is known
(kept in sim_build/durations.json, per job); otherwise, for the benches, from
the typical durations the project recorded (tb/run/typical.py; the previous
run's figure where there is one), since on a first run the short benches
finish first and their mean once made twelve minutes "about 36 s left"; and
only without either from this run's mean step so far. The line says which.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Sequence, TypeVar

from tb.run.typical import Typical

T = TypeVar("T")

DURATIONS = Path(__file__).resolve().parents[2] / "sim_build" / "durations.json"


def fmt_s(seconds: float) -> str:
    """12 s, 3m05s, 1h02m."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def previous_durations(job_prefix: str, history: Path = DURATIONS) -> dict[str, float]:
    """Each step's last recorded duration over the jobs whose name starts with `job_prefix` (e.g.
    "pytest/icarus/": the suite with any number of workers); empty when nothing was recorded."""
    try:
        data = json.loads(history.read_text())
    except (OSError, ValueError):
        return {}
    merged: dict[str, float] = {}
    for job, steps in sorted(data.items()):
        if job.startswith(job_prefix) and isinstance(steps, dict):
            merged.update({k: float(v) for k, v in steps.items() if isinstance(v, (int, float))})
    return merged


def longest_first(steps: Sequence[str], previous: dict[str, float], first: Sequence[str] = ()) -> list[str]:
    """`steps` in the order that ends a run on several workers soonest: by the previous run's durations,
    longest first, a step never timed (new, or a new folder) before all of them in `first`'s order and then
    in its own; with no durations at all, `first` leads and the rest keep their order."""
    rank = {s: i for i, s in enumerate(first)}

    def key(step: str) -> tuple[int, float, int]:
        if step in previous:
            return (1, -previous[step], 0)
        return (0, 0.0, rank.get(step, len(rank)))

    return sorted(steps, key=key)


def deal_to_slices(heads: Sequence[T], rest: Sequence[T], slices: int) -> list[T]:
    """One list that, cut into `slices` consecutive parts the way pytest-xdist's worksteal cuts its collection
    (part k takes len(left) // (slices - k) of what is left), starts every part with its share of `heads`
    dealt in turn (heads[k], heads[k + slices], ...), the rest filling the parts in order.

    Why: worksteal hands each worker one such part and an idle worker steals from the tail of another's, so
    long steps that all sit at the head of one part run one after another on one worker."""
    if slices < 2:
        return [*heads, *rest]
    total = len(heads) + len(rest)
    sizes, left = [], total
    for k in range(slices):
        sizes.append(left // (slices - k))
        left -= sizes[-1]
    out: list[T] = []
    filler = iter(rest)
    for k, size in enumerate(sizes):
        part = list(heads[k::slices])
        part += [x for _, x in zip(range(size - len(part)), filler)]
        out += part
    out += list(filler)  # parts too small for their heads: what is left goes last, nothing is lost
    return out


def _assumed_note(typical: Typical, steps: list[str]) -> str:
    """Which of `steps` the typical durations lack, and the figure they are counted at ("" when none)."""
    missing = typical.assumed(steps)
    if not missing:
        return ""
    names = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    return f"; {names} not in it, counted at its median {fmt_s(typical.fallback_s)}"


class Progress:
    """The steps of one job (e.g. the benches of the main job) in order; `done()` returns the line."""

    def __init__(self, job: str, steps: Sequence[str], history: Path = DURATIONS, record: bool = True,
                 workers: int = 1, typical: Typical | None = None) -> None:
        self.job, self.steps, self.history, self.record = job, list(steps), history, record
        self.workers = max(1, workers)  # steps run this many at a time: the work left is shared
        self.typical = typical  # the steps' recorded typical durations, when they are benches
        self.t0 = time.monotonic()
        self.finished: dict[str, float] = {}
        try:
            self.previous: dict[str, float] = json.loads(history.read_text()).get(job, {})
        except (OSError, ValueError):
            self.previous = {}

    def expected(self) -> dict[str, float]:
        """Each step's expected duration where one is known: the previous run's, else the typical one."""
        typical = {s: self.typical.of(s) for s in self.steps} if self.typical is not None else {}
        return {**typical, **{s: v for s, v in self.previous.items() if s in self.steps}}

    def estimate(self) -> tuple[float, str] | None:
        """(seconds left, where the figure comes from), or None before anything can be said."""
        left = [s for s in self.steps if s not in self.finished]
        if not left:
            return 0.0, ""
        if all(s in self.previous for s in left):
            return self._share([self.previous[s] for s in left]), "from the previous run"
        if self.typical is not None:
            figures = [self.previous.get(s, self.typical.of(s)) for s in left]
            both = "the previous run and " if any(s in self.previous for s in left) else ""
            return self._share(figures), f"from {both}the typical durations, {self.typical.source}" + \
                _assumed_note(self.typical, [s for s in left if s not in self.previous])
        if self.finished:
            mean = sum(self.finished.values()) / len(self.finished)
            return mean * len(left) / self.workers, "from this run's mean step"
        return None

    def _share(self, figures: list[float]) -> float:
        """The time `figures` (the steps left) take on the workers: their sum shared out among as many workers
        as there are steps, but never less than what is left of the longest, which one worker runs alone
        (started at the run's start at the earliest, as the main job starts its longest bench)."""
        shared = sum(figures) / min(self.workers, len(figures))
        return max(shared, max(figures) - (time.monotonic() - self.t0))

    def done(self, step: str, seconds: float, outcome: str = "") -> str:
        """Record `step` as finished after `seconds`; the progress line (`outcome`, e.g. "passed", before the
        time when given)."""
        self.finished[step] = seconds
        k, n = len(self.finished), len(self.steps)
        took = f"{outcome} in {fmt_s(seconds)}" if outcome else fmt_s(seconds)
        line = f"[{k}/{n}] {step} {took}, elapsed {fmt_s(time.monotonic() - self.t0)}"
        est = self.estimate()
        if est is not None and k < n:
            line += f", about {fmt_s(est[0])} left ({est[1]})"
        return line

    def save(self) -> None:
        """Keep this run's durations for the next run's estimate (only a complete, unfiltered run records)."""
        if not self.record:
            return
        try:
            data = json.loads(self.history.read_text()) if self.history.exists() else {}
        except ValueError:
            data = {}
        data[self.job] = {**data.get(self.job, {}), **self.finished}
        self.history.parent.mkdir(parents=True, exist_ok=True)
        self.history.write_text(json.dumps(data, indent=1, sort_keys=True))


__all__ = ["DURATIONS", "Progress", "deal_to_slices", "fmt_s", "longest_first", "previous_durations"]
