"""`UNTIL=coverage BUDGET=...`: run batches of new seeds (or new shards) until the merged coverage closes.

A batch is the planner's next tasks, each on a seed (or, for the vector
differential, a range of programs) no earlier batch ran: as many seeds as
the cluster has workers, or the differential's next VC_PROGRAMS programs. After each batch the tasks' databases are
merged and the closure judged; the run stops when every bin is hit, when the
budget is spent (BUDGET=200: tasks; BUDGET=30m / 2h / 90s: wall time), when a
task fails (its replay line is the news, not the coverage), or on Ctrl-C.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tb.cover.db import Database
from tb.farm.coverage import merged_database
from tb.farm.engine import FarmRun, run_tasks
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.run.options import BadInput

_UNITS = {"s": 1, "m": 60, "h": 3600}


@dataclass(frozen=True)
class Budget:
    """At most `tasks` tasks, or at most `wall_s` seconds of wall time (batches already started finish)."""

    tasks: int | None = None
    wall_s: float | None = None

    def spent(self, tasks: int, wall_s: float) -> bool:
        return (self.tasks is not None and tasks >= self.tasks) or (self.wall_s is not None and wall_s >= self.wall_s)

    def __str__(self) -> str:
        return f"{self.tasks} task(s)" if self.tasks is not None else f"{self.wall_s:.0f} s of wall time"


def parse_budget(text: str) -> Budget:
    """'200' (tasks) or '30m' / '2h' / '90s' (wall time)."""
    m = re.fullmatch(r"\s*(\d+)\s*([smh]?)\s*", text or "")
    if not m or int(m.group(1)) < 1:
        raise BadInput(f"BUDGET={text!r}: give a number of tasks (BUDGET=200) or a wall time (BUDGET=30m, 2h, "
                       f"90s), at least 1")
    n, unit = int(m.group(1)), m.group(2)
    return Budget(wall_s=float(n * _UNITS[unit])) if unit else Budget(tasks=n)


@dataclass
class UntilRun:
    """The whole run (every batch's outcomes), the last merged database, and how it ended."""

    run: FarmRun
    database: Database | None
    batches: int
    ended: str  # "closed", "budget spent", "a task failed", "interrupted", "no coverage sampled"


class SeedBatches:
    """Every bench of a selection on new seeds, `per_batch` seeds a batch: seeds first, first + 1, ..."""

    def __init__(self, benches: list, first: int, sim: str, test_filter: str, per_batch: int = 1) -> None:
        self.benches, self.next, self.sim, self.test_filter = benches, first, sim, test_filter
        self.per_batch = max(1, per_batch)

    def __call__(self, k: int, limit: int | None) -> list[BenchTask]:
        """The next batch (at most `limit` tasks, a task budget's remainder; at least one seed)."""
        n = self.per_batch if limit is None else max(1, min(self.per_batch, limit // len(self.benches)))
        seeds = range(self.next, self.next + n)
        self.next += n
        return [BenchTask(b.name, self.sim, s, self.test_filter) for b in self.benches for s in seeds]

    def for_workers(self, workers: int) -> None:
        """A seed per worker a batch: every worker busy, and no batch longer than its slowest bench."""
        self.per_batch = max(1, workers)

    def needed(self, first: int) -> str:
        return f"seeds {first}..{self.next - 1}"


def run_until_closed(client, batch: Callable[[int, int | None], list[BenchTask]], budget: Budget, root: Path,
                     on_done: Callable[[TaskOutcome], None],
                     on_batch: Callable[[int, Database | None], None]) -> UntilRun:
    """Run `batch(k, limit)` (at most `limit` tasks: what a task budget leaves, None without one) for k = 0,
    1, ... until the merged coverage closes or `budget` is spent; `on_batch` sees each merged database."""
    t0 = time.monotonic()
    total = FarmRun()
    database: Database | None = None
    merged: Path | None = None
    k = 0
    while True:
        left = None if budget.tasks is None else budget.tasks - len(total.outcomes)
        part = run_tasks(client, batch(k, left), root, on_done)
        total.outcomes += part.outcomes
        total.not_run += part.not_run
        total.workers = part.workers
        k += 1
        database, merged = merged_database(part.outcomes, root, onto=merged)
        on_batch(k, database)
        ended = ("interrupted" if part.not_run else
                 "a task failed" if any(o.result.failed or o.result.error for o in part.outcomes) else
                 "no coverage sampled" if database is None else
                 "closed" if database.closed else
                 "budget spent" if budget.spent(len(total.outcomes), time.monotonic() - t0) else "")
        if ended:
            total.wall_s = time.monotonic() - t0
            return UntilRun(total, database, k, ended)


__all__ = ["Budget", "SeedBatches", "UntilRun", "parse_budget", "run_until_closed"]
