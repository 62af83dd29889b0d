"""The vector core's random differential (test_random_programs) split into shards: `VC_PROGRAMS=100000`.

Each shard is a (seed, first index, count) range of the constrained-random
generator's cases, run on a freshly reset core and model (tb/module/
test_vector_core.py, AGSIM_VC_FIRST), so a shard runs and replays alone. Its
test checks RTL = model after every RUN; the coverage goals, which no short
shard can reach alone, are judged here on the union of the shards' coverage.
"""

from __future__ import annotations

from typing import Sequence

from tb.farm.tasks import BenchTask, TaskOutcome
from tb.lib.vc_rand.cover import Coverage, missing
from tb.module.test_vector_core import RANDOM_FIRST_ENV as FIRST_ENV
from tb.module.test_vector_core import RANDOM_PROGRAMS_ENV as PROGRAMS_ENV
from tb.module.test_vector_core import RANDOM_STATS_ENV as STATS_ENV
from tb.options import BadInput

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
            count = min(per_shard, programs - first)
            tasks.append(BenchTask(BENCH, sim, seed, TEST, env=((FIRST_ENV, str(first)), (PROGRAMS_ENV, str(count))),
                                   tag=f"{first}+{count}", order=first, measure_env=STATS_ENV))
    return tasks


def _shards(outcomes: Sequence[TaskOutcome]) -> list[TaskOutcome]:
    return [o for o in outcomes if o.task.measure_env == STATS_ENV]


def merged_coverage(outcomes: Sequence[TaskOutcome]) -> tuple[Coverage, list[str], list[str]]:
    """(the union of the shards' coverage, the goals it misses, the shards that reported none)."""
    shards = _shards(outcomes)
    silent = [o.task.key for o in shards if "coverage" not in o.measured]
    cov = Coverage.merged([o.measured["coverage"] for o in shards if "coverage" in o.measured])
    return cov, missing(cov), silent


def coverage_lines(outcomes: Sequence[TaskOutcome]) -> tuple[list[str], bool]:
    """The differential's closing lines and whether its coverage closed (every goal hit, every shard heard)."""
    cov, gaps, silent = merged_coverage(outcomes)
    lines = [f"vector differential: {cov.programs} programs, {cov.instructions} instructions in "
             f"{len(_shards(outcomes))} shard(s); coverage goals missed on their union: {', '.join(gaps) or 'none'}"]
    if silent:
        lines.append(f"  shards that reported no coverage (failed before measuring): {', '.join(silent)}")
    return lines, not gaps and not silent
