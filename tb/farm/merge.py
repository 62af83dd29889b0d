"""The outcomes of a run as one report: the summary table, results.xml and the durations file.

Outcomes arrive in whatever order the workers finish; the report is in the
bench table's order, then by seed, so the same tasks give the same report
(the same rows, verdicts, checks and cycles; only times differ) whether they
ran on one worker or on many.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Sequence

from tb.run.benches import BY_NAME
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.run.runner import BenchResult
from tb.run.summary import format_summary, merge_results

_ORDER = {name: i for i, name in enumerate(BY_NAME)}


def in_table_order(outcomes: Sequence[TaskOutcome]) -> list[TaskOutcome]:
    """`outcomes` sorted by the bench table, then simulator, then seed."""
    return sorted(outcomes, key=lambda o: (_ORDER.get(o.task.bench, len(_ORDER)), o.task.sim, o.task.seed,
                                           o.task.order, o.task.tag))


def row(o: TaskOutcome) -> BenchResult:
    """The task's result under a row name that says which seed (and part) it ran: BenchTask.label."""
    return dataclasses.replace(o.result, bench=o.task.label)


def verdicts(outcomes: Sequence[TaskOutcome]) -> list[tuple]:
    """What must not depend on where the tasks ran: per task and test, the verdict, checks and cycles."""
    return [(o.task.key, t.name, t.passed, t.checks, t.cycles)
            for o in in_table_order(outcomes) for t in sorted(o.result.tests, key=lambda t: t.name)] + \
           [(o.task.key, "<error>", o.result.error) for o in in_table_order(outcomes) if o.result.error]


def write_report(outcomes: Sequence[TaskOutcome], results_xml: Path, durations: Path) -> None:
    """results.xml (a testsuite per task) and the durations file ({task key: wall seconds})."""
    ordered = in_table_order(outcomes)
    merge_results([row(o) for o in ordered], results_xml)
    durations.parent.mkdir(parents=True, exist_ok=True)
    durations.write_text(json.dumps({o.task.key: round(o.result.wall_s, 3) for o in ordered}, indent=1) + "\n")


def summary(outcomes: Sequence[TaskOutcome], not_run: Sequence[BenchTask], seeds_spec: str, sim: str,
            elapsed_s: float, workers: int) -> str:
    """The one-screen table of the run, every failure with its replay command, and what did not run."""
    ordered = in_table_order(outcomes)
    text = format_summary([row(o) for o in ordered], 0, {o.task.label: len(o.error_lines) for o in ordered},
                          sim=sim, elapsed_s=elapsed_s, jobs=workers,
                          not_run=[t.key for t in not_run], seed_line=False)
    lines = text.splitlines()
    failed = [o for o in ordered if o.result.failed]
    if failed:
        lines.append("replay a failed task alone:")
        lines.extend(f"  {o.task.replay()}" for o in failed)
    lines.append(f"seeds {seeds_spec} on {sim}, {len(ordered)} task(s) finished on {workers} worker(s)")
    return "\n".join(lines)


__all__ = ["in_table_order", "row", "summary", "verdicts", "write_report"]
