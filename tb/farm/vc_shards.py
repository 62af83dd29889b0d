"""The vector core's random differential (test_random_programs) split into shards: `VC_PROGRAMS=100000`.

Each shard is a (seed, first index, count) range of the constrained-random
generator's cases, run on a freshly reset core and model (tb/vector/
test_vector_core.py, AGSIM_VC_FIRST), so a shard runs and replays alone. Its
test checks RTL = model after every RUN; the coverage model (tb/cover/
vector.py), which no short shard closes alone, is judged here on the union of
the shards' databases (tb.farm.coverage).
"""

from __future__ import annotations

from typing import Sequence

from tb.farm.tasks import BenchTask, TaskOutcome
from tb.cover import vector
from tb.cover.db import Database
from tb.vector.test_vector_core import RANDOM_FIRST_ENV as FIRST_ENV
from tb.vector.test_vector_core import RANDOM_PROGRAMS_ENV as PROGRAMS_ENV
from tb.vector.test_vector_core import RANDOM_STATS_ENV as STATS_ENV
from tb.run.options import BadInput

BENCH = "vector_core"
TEST = "test_random_programs$"
DEFAULT_SHARD = 500  # programs per task: about 4 minutes on Icarus, long enough that a task's start-up is small


def plan_shards(seeds: Sequence[int], programs: int, per_shard: int, sim: str) -> list[BenchTask]:
    """`programs` cases per seed in shards of `per_shard` (the last one shorter), seed by seed."""
    if programs < 1 or per_shard < 1:
        raise BadInput(f"VC_PROGRAMS={programs} VC_SHARD={per_shard}: both must be 1 or more")
    tasks = []
    for seed in seeds:
        for first in range(0, programs, per_shard):
            tasks.append(shard_task(seed, first, min(per_shard, programs - first), sim))
    return tasks


class ShardBatches:
    """The differential of one seed continued batch after batch (UNTIL=coverage, tb.farm.until): each batch
    the next `per_batch` programs in shards of `per_shard`, from index 0 on."""

    def __init__(self, seed: int, per_batch: int, per_shard: int, sim: str) -> None:
        if per_batch < 1 or per_shard < 1:
            raise BadInput(f"VC_PROGRAMS={per_batch} VC_SHARD={per_shard}: both must be 1 or more")
        self.seed, self.per_batch, self.per_shard, self.sim, self.next = seed, per_batch, per_shard, sim, 0

    def __call__(self, k: int, limit: int | None) -> list[BenchTask]:
        """The next batch (at most `limit` shards: a task budget's remainder)."""
        end = self.next + self.per_batch
        firsts = list(range(self.next, end, self.per_shard))[:limit]
        if not firsts:
            return []
        counts = [min(self.per_shard, end - f) for f in firsts]
        self.next = firsts[-1] + counts[-1]
        return [shard_task(self.seed, f, n, self.sim) for f, n in zip(firsts, counts)]

    def for_workers(self, workers: int) -> None:
        """A batch is VC_PROGRAMS programs however many workers share it."""

    def needed(self, first: int) -> str:
        return f"programs 0..{self.next - 1} of seed {self.seed}"


def shard_task(seed: int, first: int, count: int, sim: str) -> BenchTask:
    """Cases first..first+count-1 of generator seed `seed` as one task."""
    return BenchTask(BENCH, sim, seed, TEST, env=((FIRST_ENV, str(first)), (PROGRAMS_ENV, str(count))),
                     tag=f"{first}+{count}", order=first, measure_env=STATS_ENV)


def _shards(outcomes: Sequence[TaskOutcome]) -> list[TaskOutcome]:
    return [o for o in outcomes if o.task.measure_env == STATS_ENV]


def coverage_lines(outcomes: Sequence[TaskOutcome], database: Database | None) -> tuple[list[str], bool]:
    """The differential's closing lines and whether its coverage closed: every bin of the vector model hit
    on the union of the shards (`database`, tb.farm.coverage), every shard heard."""
    shards = _shards(outcomes)
    silent = [o.task.key for o in shards if not o.coverage_xml]
    holes = vector.missing(database) if database is not None else ["(no shard wrote a coverage database)"]
    programs = sum(int(o.measured.get("programs", 0)) for o in shards)
    instructions = sum(int(o.measured.get("instructions", 0)) for o in shards)
    lines = [f"vector differential: {programs} programs, {instructions} instructions in {len(shards)} shard(s); "
             f"vector coverage holes on their union: {', '.join(holes) or 'none'}"]
    if silent:
        lines.append(f"  shards that wrote no coverage (failed before measuring): {', '.join(silent)}")
    return lines, not holes and not silent
