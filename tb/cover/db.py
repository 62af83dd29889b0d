"""The coverage database of one process, its XML file, and the merged database of a regression.

cocotb-coverage keeps one database per process (coverage_db, a trie of cover
items named `model.item`); a simulator process is one task of a regression,
so each task writes its database as XML (`save_requested`) and the farm adds
them up with cocotb-coverage's `merge_coverage`. Bins are strings (a cross's
bin is the tuple of its points' bins), so a database reads back the same in
every process and merges bin by bin.
"""

from __future__ import annotations

import ast
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from cocotb_coverage.coverage import CoverCross, CoverPoint, coverage_db, merge_coverage

OUT_ENV = "AGSIM_COVER_OUT"  # where a task's simulator writes its database (set by tb.farm.tasks.run_task;
# tb.lib.verdict names it too, to import this module only when asked)


def reset(model: str) -> None:
    """Forget every cover item of `model` (and the model's node), so a fresh model can be built in this
    process: a unit test builds several, a simulator process one."""
    for name in [n for n in coverage_db if n == model or n.startswith(model + ".")]:
        del coverage_db[name]


def save(path: Path) -> None:
    """Write this process's whole database to `path` (cocotb-coverage XML)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    coverage_db.export_to_xml(str(path))


def save_requested() -> Path | None:
    """Write the database where the regression asked (OUT_ENV), if it asked and anything was sampled.

    Called at the end of every test (tb.lib.verdict), so the file always holds the whole process's
    coverage up to the last finished test."""
    out = os.environ.get(OUT_ENV, "")
    if not out or not any(isinstance(coverage_db[n], (CoverPoint, CoverCross)) for n in coverage_db):
        return None
    save(Path(out))
    return Path(out)


def merge(files: Sequence[Path], out: Path) -> Path:
    """The union of several tasks' databases (hits added bin by bin), written to `out`.

    The files are merged in the order given: a caller passes them in the tasks' order, so the merged
    file is the same whichever workers ran them."""
    if not files:
        raise ValueError("no coverage database to merge: no task wrote one")
    out.parent.mkdir(parents=True, exist_ok=True)
    merge_coverage(lambda _msg: None, str(out), *map(str, files))
    return out


@dataclass(frozen=True)
class Item:
    """One cover point or cross of a database: its bins (label -> hits) and the hits a bin needs."""

    name: str
    bins: tuple[tuple[str, int], ...]
    at_least: int = 1

    @property
    def model(self) -> str:
        return self.name.split(".")[0]

    @property
    def total(self) -> int:
        return len(self.bins)

    @property
    def hit(self) -> int:
        return sum(1 for _, n in self.bins if n >= self.at_least)

    @property
    def holes(self) -> list[str]:
        return [b for b, n in self.bins if n < self.at_least]

    def axes(self) -> list[tuple[str, ...]]:
        """Each bin as a tuple of its parts (a cross's bin is a tuple of its points' bins; a point's, one)."""
        return [label_parts(b) for b, _ in self.bins]


def label_parts(label: str) -> tuple[str, ...]:
    """'("VADD", "head")' -> ('VADD', 'head'); 'FLAT' -> ('FLAT',)."""
    if label.startswith("("):
        try:
            parts = ast.literal_eval(label)
        except (ValueError, SyntaxError):
            return (label,)
        return tuple(str(p) for p in parts)
    return (label,)


@dataclass(frozen=True)
class Database:
    """Every cover item of a database, in the order of their names."""

    items: tuple[Item, ...]

    def models(self) -> list[str]:
        return sorted({i.model for i in self.items})

    def of(self, model: str) -> list[Item]:
        return [i for i in self.items if i.model == model]

    def hit_total(self, model: str | None = None) -> tuple[int, int]:
        items = self.items if model is None else self.of(model)
        return sum(i.hit for i in items), sum(i.total for i in items)

    def holes(self) -> list[tuple[str, str]]:
        """(item, bin) for every bin below its at_least."""
        return [(i.name, b) for i in self.items for b in i.holes]

    @property
    def closed(self) -> bool:
        return bool(self.items) and not self.holes()


def read(path: Path) -> Database:
    """A database written by `save` or `merge`."""
    root = ET.parse(path).getroot()
    return Database(tuple(sorted(_items(root), key=lambda i: i.name)))


def current(models: Iterable[str] = ()) -> Database:
    """This process's database (the items of `models`, or all), without a file."""
    wanted = tuple(models)
    items = []
    for name in sorted(coverage_db):
        obj = coverage_db[name]
        if not isinstance(obj, (CoverPoint, CoverCross)):
            continue
        if wanted and name.split(".")[0] not in wanted:
            continue
        items.append(Item(name, tuple((str(k), int(v)) for k, v in obj.detailed_coverage.items()), obj.at_least))
    return Database(tuple(items))


def _items(root: ET.Element) -> Iterable[Item]:
    for el in root.iter():
        bins = [c for c in el if c.tag.startswith("bin") and "hits" in c.attrib]
        if not bins:
            continue
        name = el.attrib["abs_name"].removeprefix("top.")
        yield Item(name, tuple((b.attrib["bin"], int(b.attrib["hits"])) for b in bins),
                   int(el.attrib.get("at_least", "1")))


__all__ = ["Database", "Item", "OUT_ENV", "current", "label_parts", "merge", "read", "reset", "save",
           "save_requested"]
