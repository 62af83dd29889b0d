"""Edits of a bundle folder's copy, one way each: the vocabulary of the damage families and the refusal tests.

Why: the damage fuzz (tb/fuzz/damage.py) and the one-line refusal tests
(tests/unit/bundle/test_bundle_input.py) break copies of real bundles the
same ways: a field set or dropped, an archive rewritten with one array
replaced, a file truncated, a byte flipped. Each edit is a function of the
copy's folder, written once here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

Edit = Callable[[Path], None]


def _walk(doc: Any, path: str) -> tuple[Any, str | int]:
    """The container holding the field at `path` ("plan.0.steps.1.nflits") and the field's key."""
    *parents, last = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
    for key in parents:
        doc = doc[key]
    return doc, last


def json_edit(change: Callable[[Any], Any], file: str = "bundle.json") -> Edit:
    """`file` read as JSON, changed in place by `change`, written back."""
    def edit(folder: Path) -> None:
        doc = json.loads((folder / file).read_text())
        change(doc)
        (folder / file).write_text(json.dumps(doc))
    return edit


def map_field(path: str, change: Callable[[Any], Any], file: str = "bundle.json") -> Edit:
    """`file` with the field at `path` ("plan.0.steps.1.nflits", a new key allowed) replaced by `change` of it
    (of None for a new key)."""
    def edit(doc: Any) -> None:
        parent, key = _walk(doc, path)
        parent[key] = change(parent.get(key) if isinstance(parent, dict) else parent[key])
    return json_edit(edit, file)


def set_field(path: str, value: Any, file: str = "bundle.json") -> Edit:
    """`file` with the field at `path` set to `value`."""
    return map_field(path, lambda _: value, file)


def raw_field(path: str, text: Callable[[Any], str], file: str = "bundle.json") -> Edit:
    """`file` with the field at `path` written as the raw JSON text `text` makes of its value: what no JSON
    writer would produce (5,001 digits, nesting thousands deep, a key given twice)."""
    marker = '"__AGSIM_RAW__"'

    def edit(folder: Path) -> None:
        doc = json.loads((folder / file).read_text())
        parent, key = _walk(doc, path)
        raw = text(parent.get(key) if isinstance(parent, dict) else parent[key])
        parent[key] = marker[1:-1]
        (folder / file).write_text(json.dumps(doc).replace(marker, raw))
    return edit


def drop_field(path: str, file: str = "bundle.json") -> Edit:
    def change(doc: Any) -> None:
        parent, key = _walk(doc, path)
        del parent[key]
    return json_edit(change, file)


def replace_text(file: str, old: str, new: str, count: int = 1) -> Edit:
    """`file`'s text with the first `count` occurrences of `old` replaced (JSON no parser would write)."""
    def edit(folder: Path) -> None:
        text = (folder / file).read_text()
        if old not in text:
            raise ValueError(f"{file}: {old!r} not found")
        (folder / file).write_text(text.replace(old, new, count))
    return edit


def npz_edit(file: str, **arrays: Any) -> Edit:
    """`file` rewritten with `arrays` replacing (None: removing) the named ones."""
    def edit(folder: Path) -> None:
        with np.load(folder / file) as z:
            kept = {k: z[k] for k in z.files}
        for key, value in arrays.items():
            if value is None:
                kept.pop(key)
            else:
                kept[key] = value
        np.savez(folder / file, **kept)
    return edit


def npz_map(file: str, key: str, change: Callable[[np.ndarray], np.ndarray]) -> Edit:
    """`file` rewritten with the array `key` replaced by `change` of it."""
    def edit(folder: Path) -> None:
        with np.load(folder / file) as z:
            kept = {k: z[k] for k in z.files}
        kept[key] = change(kept[key])
        np.savez(folder / file, **kept)
    return edit


def truncate(file: str, nbytes: int = 5000) -> Edit:
    def edit(folder: Path) -> None:
        (folder / file).write_bytes((folder / file).read_bytes()[:nbytes])
    return edit


def flip_byte(file: str, offset: int) -> Edit:
    def edit(folder: Path) -> None:
        data = bytearray((folder / file).read_bytes())
        data[offset % len(data)] ^= 0xFF
        (folder / file).write_bytes(bytes(data))
    return edit


def write_bytes(file: str, data: bytes) -> Edit:
    def edit(folder: Path) -> None:
        (folder / file).write_bytes(data)
    return edit


def write_text(file: str, text: str) -> Edit:
    def edit(folder: Path) -> None:
        (folder / file).write_text(text)
    return edit


def remove(file: str) -> Edit:
    def edit(folder: Path) -> None:
        (folder / file).unlink()
    return edit


def replace_with(file: str, make: Callable[[Path], None]) -> Edit:
    """`file` removed and something else made at its path (a pipe, a link, a folder) by `make`."""
    def edit(folder: Path) -> None:
        (folder / file).unlink()
        make(folder / file)
    return edit


def chain(*edits: Edit) -> Edit:
    def edit(folder: Path) -> None:
        for e in edits:
            e(folder)
    return edit


def mkfifo(path: Path) -> None:
    os.mkfifo(path)


__all__ = ["Edit", "chain", "drop_field", "flip_byte", "json_edit", "map_field", "mkfifo", "npz_edit", "npz_map",
           "raw_field", "remove", "replace_text", "replace_with", "set_field", "truncate", "write_bytes", "write_text"]
