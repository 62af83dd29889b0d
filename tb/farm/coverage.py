"""The coverage of a run: each task's database (tb.cover.db) merged into one, its closure report and heat map.

Each task's database arrives inside its outcome (a worker without a shared
folder loses nothing); they are written under <root>/coverage/tasks/ and
merged with cocotb-coverage's merge in the bench table's order, so the merged
database is the same whether the tasks ran on one worker or many.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tb.cover.db import Database, merge, read
from tb.cover.report import closure_text, heat_map
from tb.farm.merge import in_table_order
from tb.farm.tasks import TaskOutcome


def merged_database(outcomes: Sequence[TaskOutcome], root: Path,
                    onto: Path | None = None) -> tuple[Database | None, Path | None]:
    """(the union of the tasks' coverage, the merged file), or (None, None) when no task sampled any.

    With `onto` (an earlier call's merged file) only these outcomes' databases are added to it, so a run of
    many batches merges each task's database once instead of every batch merging them all again."""
    folder = root / "coverage" / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    if onto is None:
        for old in folder.glob("*.xml"):
            old.unlink()
    files = [onto] if onto is not None else []
    for o in in_table_order(outcomes):
        if o.coverage_xml:
            f = folder / f"{o.task.key}.xml"
            f.write_text(o.coverage_xml)
            files.append(f)
    if not files:
        return None, None
    out = root / "coverage.xml"
    merging = out.with_suffix(".merging.xml")  # `onto` may be `out` itself: written whole, then renamed
    merge(files, merging).replace(out)
    return read(out), out


def coverage_report(outcomes: Sequence[TaskOutcome], root: Path) -> tuple[list[str], Database | None]:
    """The closure report's lines (with where the database and the heat map went) and the database."""
    database, path = merged_database(outcomes, root)
    if database is None or path is None:
        return ["coverage: no task sampled a coverage model"], None
    png = heat_map(database, root / "coverage.png")
    return [closure_text(database, f"coverage of {sum(1 for o in outcomes if o.coverage_xml)} task(s)"),
            f"coverage database: {path}; heat map: {png}"], database


__all__ = ["coverage_report", "merged_database"]
