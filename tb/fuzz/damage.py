"""The damage families: every way a bundle's copy is broken, and what the command must then do.

Why: a bundle is a user's export, and a user's files lie in many ways: JSON
that is not the format, archives that are not plain arrays, files that are
not files, and changes of meaning that keep the format (an input that no
longer matches the image, outputs nothing judges). For each damage this
table states the one acceptable outcome class:

* ``refuse``: exit 2, one line naming the file (and field), before anything
  runs;
* ``not pass``: refused, or failed by the run's own verdict (FAIL, NOT
  JUDGED), but never a pass;
* ``harmless``: a change the format says changes nothing (documented with its
  reason in ``why``): the run passes.

Cases are drawn from a seeded generator, so a run is replayed by its seed;
a case's random choice (which field, which offset) is in its name.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import struct
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from models.bundle.hazard_reference import meets_h1
from models.bundle.reader import Bundle
from tb.fuzz.edits import (Edit, chain, drop_field, flip_byte, json_edit, map_field, mkfifo, npz_edit, npz_map,
                           raw_field, remove, replace_with, set_field, truncate)

REFUSE, NOT_PASS, HARMLESS = "refuse", "not pass", "harmless"
H1_REFERENCE = ("the program meets hazard H1, so upstream's models (expected.npz) are its normative reference, judged "
                "region by region; expected_rtl.npz is reported, not judged (models/bundle/hazard_reference.py)")
FILES = ("bundle.json", "dram_in.npz", "expected.npz", "expected_rtl.npz", "timing_rtl.json")
JSON_FILES = ("bundle.json", "timing_rtl.json")
NPZ_FILES = ("dram_in.npz", "expected.npz", "expected_rtl.npz")


@dataclass(frozen=True)
class Damage:
    """One way to break a copy of a bundle: `edit` applied to the copy's folder."""

    family: str  # json, npz, filesystem, meaning
    name: str
    edit: Edit
    expect: str  # REFUSE, NOT_PASS or HARMLESS
    why: str = ""  # HARMLESS: the documented reason the change changes nothing
    folder_name: str = ""  # a name of the copy's folder other than the bundle's own (names with odd characters)
    needs_user: bool = False  # a permission case: meaningful only when the run is not root


def present_files(src: Path) -> list[str]:
    return [f for f in FILES if (src / f).exists()]


def _read_int_fields(meta: dict) -> list[str]:
    """Paths of integer fields the project reads (models/bundle/schema.py), for the long-number and type cases."""
    paths = ["dram.nbytes", "machine.stage_flits", "machine.inst_depth", "machine.routers.0"]
    for i, p in enumerate(meta["plan"]):
        if p["kind"] != "round":
            paths.append(f"plan.{i}.read_nbytes")
            continue
        paths += [f"plan.{i}.round", f"plan.{i}.nflits"]
        for j, s in enumerate(p["steps"]):
            key = {"seed": "credits", "kick": "base", "await": "count"}.get(s["op"])
            if key:
                paths.append(f"plan.{i}.steps.{j}.{key}")
    return paths


def json_family(src: Path, rng: random.Random) -> Iterator[Damage]:
    meta = json.loads((src / "bundle.json").read_text())
    ints = _read_int_fields(meta)
    for file in [f for f in JSON_FILES if (src / f).exists()]:
        size = (src / file).stat().st_size
        cut = rng.randrange(1, size)
        yield Damage("json", f"{file}: truncated at byte {cut}", truncate(file, cut), REFUSE)
        at = rng.randrange(1, size)
        yield Damage("json", f"{file}: byte {at} made 0xff", flip_byte(file, at), REFUSE)
        yield Damage("json", f"{file}: a UTF-8 byte-order mark first", _prefix(file, b"\xef\xbb\xbf"), REFUSE)
        yield Damage("json", f"{file}: nested 5000 levels in an extra field", _deep(file, 5000), REFUSE)
        yield Damage("json", f"{file}: reindented", json_edit(lambda d: None, file), HARMLESS,
                     "the same JSON value: layout is not meaning")
    path = rng.choice(ints)
    yield Damage("json", f"bundle.json {path}: an integer of 5001 digits", _long_number(path), REFUSE)
    path = rng.choice(ints)
    yield Damage("json", f"bundle.json {path}: a string", map_field(path, str), REFUSE)
    path = rng.choice(ints)
    yield Damage("json", f"bundle.json {path}: true", set_field(path, True), REFUSE)
    path = rng.choice(ints)
    yield Damage("json", f"bundle.json {path}: NaN", set_field(path, float("nan")), REFUSE)
    yield Damage("json", "bundle.json machine.routers given twice, the second reversed",
                 _duplicate("machine", "routers"), REFUSE)
    yield Damage("json", "bundle.json machine.name 'fused9'", set_field("machine.name", "fused9"), REFUSE)
    seed = next((f"plan.{i}.steps.{j}.credits" for i, p in enumerate(meta["plan"]) if p["kind"] == "round"
                 for j, s in enumerate(p["steps"]) if s["op"] == "seed"), None)
    if seed:
        yield Damage("json", f"bundle.json {seed}: 513 (past the FIFO)", set_field(seed, 513), REFUSE)
    kick = next(f"plan.{i}.steps.{j}.base" for i, p in enumerate(meta["plan"]) if p["kind"] == "round"
                for j, s in enumerate(p["steps"]) if s["op"] == "kick")
    yield Damage("json", f"bundle.json {kick}: 128 (past the staging RAM)", set_field(kick, 128), REFUSE)
    yield Damage("json", "bundle.json keys in reverse order", json_edit(_reverse_keys), HARMLESS,
                 "JSON objects are unordered: the reader looks fields up by name")
    yield Damage("json", "bundle.json features dropped", drop_field("features"), HARMLESS,
                 "features is a histogram for readers; the project reads no field of it (clients/README.md)")
    if (src / "timing_rtl.json").exists():
        yield Damage("json", "timing_rtl.json rounds[0].round given twice", _duplicate("rounds.0", "round",
                                                                                        "timing_rtl.json"), REFUSE)


def _prefix(file: str, head: bytes) -> Edit:
    def edit(folder: Path) -> None:
        (folder / file).write_bytes(head + (folder / file).read_bytes())
    return edit


def _deep(file: str, levels: int) -> Edit:
    """An extra field (one no reader uses) holding `levels` nested lists."""
    return raw_field("deep", lambda _: "[" * levels + "]" * levels, file)


def _long_number(path: str) -> Edit:
    return raw_field(path, lambda _: "1" * 5001)


def _duplicate(container: str, key: str, file: str = "bundle.json") -> Edit:
    """`container`.`key` written twice in its object: first as it was, then its list reversed (or 0)."""
    def twice(value: object) -> str:
        second = list(reversed(value)) if isinstance(value, list) else 0
        return f"{json.dumps(value)}, {json.dumps(key)}: {json.dumps(second)}"
    return raw_field(f"{container}.{key}", twice, file)


def _reverse_keys(doc: dict) -> None:
    items = list(doc.items())
    doc.clear()
    doc.update(reversed(items))


def npz_family(src: Path, rng: random.Random) -> Iterator[Damage]:
    for file in [f for f in NPZ_FILES if (src / f).exists()]:
        size = (src / file).stat().st_size
        with np.load(src / file) as z:
            keys = list(z.files)
        key = rng.choice(keys)
        cut = rng.randrange(4, size)
        yield Damage("npz", f"{file}: truncated at byte {cut}", truncate(file, cut), REFUSE)
        member, at = _data_byte(src / file, rng)
        yield Damage("npz", f"{file}: byte {at} (in {member}'s data) flipped", flip_byte(file, at), REFUSE)
        yield Damage("npz", f"{file}: a member notes.txt that is not an .npy",
                     _zip_add(file, "notes.txt", b"hello"), REFUSE)
        yield Damage("npz", f"{file}: member {key}.npy raw bytes", _zip_replace(file, key, b"\x00" * 64), REFUSE)
        yield Damage("npz", f"{file}: an object array member", npz_edit(file, extra=np.array([{}], dtype=object)),
                     REFUSE)
        yield Damage("npz", f"{file}: member {key}.npy marked encrypted", _zip_flag(file, key, 0x1), REFUSE)
        yield Damage("npz", f"{file}: member {key}.npy compression method 99", _zip_method(file, key, 99), REFUSE)
        yield Damage("npz", f"{file}: every member compressed with bzip2",
                     _zip_rewrite(file, zipfile.ZIP_BZIP2), REFUSE)
        yield Damage("npz", f"{file}: member {key}.npy declares 2^40 elements", _zip_replace(file, key, _huge()),
                     REFUSE)
        yield Damage("npz", f"{file}: member {key}.npy given twice", _zip_add(file, f"{key}.npy", None), REFUSE)
        needed = rng.choice(_required(src, file))
        yield Damage("npz", f"{file}: member {needed}.npy removed", npz_edit(file, **{needed: None}), REFUSE)
        unread = [k for k in keys if k not in _required(src, file)]
        if unread:
            spare = rng.choice(unread)
            yield Damage("npz", f"{file}: member {spare}.npy (not read) removed", npz_edit(file, **{spare: None}),
                         HARMLESS, "the format lists it, the project reads nothing of it (clients/README.md)")
        yield Damage("npz", f"{file}: compressed (savez_compressed)", _zip_rewrite(file, zipfile.ZIP_DEFLATED),
                     HARMLESS, "numpy.savez_compressed writes the same arrays deflated")
        yield Damage("npz", f"{file}: an extra plain array notes", npz_edit(file, notes=np.arange(3)), HARMLESS,
                     "arrays the format does not list are not read")


def _data_byte(path: Path, rng: random.Random) -> tuple[str, int]:
    """A member and the offset of one byte of its stored data (its CRC covers it; a byte of the zip's own
    metadata, a timestamp, may change nothing any reader checks)."""
    with zipfile.ZipFile(path) as z:
        info = rng.choice([i for i in z.infolist() if i.compress_size])
    raw = path.read_bytes()
    name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
    start = info.header_offset + 30 + name_len + extra_len
    return info.filename, start + rng.randrange(info.compress_size)


def _required(src: Path, file: str) -> list[str]:
    """The members of `file` the project reads (models/bundle/arrays.py, consistency.py)."""
    meta = json.loads((src / "bundle.json").read_text())
    if file == "dram_in.npz":
        gathers = [p["gather"].split(":", 1)[1] for p in meta["plan"] if p["kind"] == "host_convert"]
        return ["image", "base", *meta["inputs"], *(f"{p}__slots" for p in meta["inputs"]), *gathers]
    if file == "expected.npz":
        return ["dram_final", *(f"{p}__{k}" for p in meta["expected"] for k in ("slots", "ref"))]
    return ["dram_final"]


def _zip_entries(path: Path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(path) as z:
        return [(i, z.read(i)) for i in z.infolist()]


def _zip_write(path: Path, entries: list[tuple[str, bytes]], method: int = zipfile.ZIP_STORED) -> None:
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in entries:
            z.writestr(name, data)


def _zip_add(file: str, name: str, data: bytes | None) -> Edit:
    """A member `name` appended (None: a copy of the existing `name`'s bytes: the name then given twice)."""
    def edit(folder: Path) -> None:
        entries = [(i.filename, d) for i, d in _zip_entries(folder / file)]
        extra = data if data is not None else dict(entries)[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile warns of the duplicate name: the point of the case
            _zip_write(folder / file, entries + [(name, extra)])
    return edit


def _zip_replace(file: str, key: str, data: bytes) -> Edit:
    def edit(folder: Path) -> None:
        entries = [(i.filename, data if i.filename == f"{key}.npy" else d) for i, d in _zip_entries(folder / file)]
        _zip_write(folder / file, entries)
    return edit


def _zip_rewrite(file: str, method: int) -> Edit:
    def edit(folder: Path) -> None:
        _zip_write(folder / file, [(i.filename, d) for i, d in _zip_entries(folder / file)], method)
    return edit


def _patch_headers(path: Path, key: str, patch: Callable[[bytearray, int, bool], None]) -> None:
    """`patch`(data, header offset, central?) applied to the local and central headers of member `key`."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(f"{key}.npy")
    patch(data, info.header_offset, False)
    central = data.find(b"PK\x01\x02")
    name = info.filename.encode()
    while central >= 0:
        if data[central + 46:central + 46 + len(name)] == name:
            patch(data, central, True)
            break
        central = data.find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def _zip_flag(file: str, key: str, bit: int) -> Edit:
    def edit(folder: Path) -> None:
        def patch(data: bytearray, at: int, central: bool) -> None:
            off = at + (8 if central else 6)
            struct.pack_into("<H", data, off, struct.unpack_from("<H", data, off)[0] | bit)
        _patch_headers(folder / file, key, patch)
    return edit


def _zip_method(file: str, key: str, method: int) -> Edit:
    def edit(folder: Path) -> None:
        def patch(data: bytearray, at: int, central: bool) -> None:
            struct.pack_into("<H", data, at + (10 if central else 8), method)
        _patch_headers(folder / file, key, patch)
    return edit


def _huge() -> bytes:
    """An .npy header declaring 2^40 uint8 elements, followed by 16 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|u1", "fortran_order": False, "shape": (1 << 40,)})
    return buf.getvalue() + b"\x00" * 16


def filesystem_family(src: Path, rng: random.Random) -> Iterator[Damage]:
    name = src.name
    for file in present_files(src):
        yield Damage("filesystem", f"{file}: a named pipe nobody writes", replace_with(file, mkfifo), REFUSE)
        yield Damage("filesystem", f"{file}: a symlink loop", replace_with(file, _loop), REFUSE)
        yield Damage("filesystem", f"{file}: a symlink to itself", replace_with(file, _self_link), REFUSE)
        yield Damage("filesystem", f"{file}: a folder", replace_with(file, lambda p: p.mkdir()), REFUSE)
        yield Damage("filesystem", f"{file}: a symlink to nothing",
                     replace_with(file, lambda p: p.symlink_to(p.with_name("gone"))), REFUSE)
        yield Damage("filesystem", f"{file}: a symlink to a copy of itself", _linked_copy(file), HARMLESS,
                     "the link leads to the same bytes")
        yield Damage("filesystem", f"{file}: not readable by its user", _chmod(file, 0o000), REFUSE,
                     needs_user=True)
    yield Damage("filesystem", "the folder not readable by its user", _chmod(".", 0o000), REFUSE, needs_user=True)
    for shown, odd in (("a newline", f"x\nsecond line {name}"), ("bytes UTF-8 cannot encode",
                                                              os.fsdecode(b"x\xff\xfe") + name),
                       ("spaces and an accent", f"my bundle é {name}"), ("an escape sequence", f"\x1b[31m{name}")):
        yield Damage("filesystem", f"the folder's name holds {shown}", lambda folder: None, HARMLESS,
                     "a folder's name is not the program: it is shown escaped, on one line", folder_name=odd)


def _loop(path: Path) -> None:
    other = path.with_name(path.name + ".loop")
    other.symlink_to(path.name)
    path.symlink_to(other.name)


def _self_link(path: Path) -> None:
    path.symlink_to(path.name)


def _linked_copy(file: str) -> Edit:
    def edit(folder: Path) -> None:
        store = folder.parent / f"store-{file}"
        shutil.move(folder / file, store)
        (folder / file).symlink_to(store)
    return edit


def _chmod(file: str, mode: int) -> Edit:
    def edit(folder: Path) -> None:
        os.chmod(folder / file, mode)
    return edit


def meaning_family(src: Path, rng: random.Random) -> Iterator[Damage]:
    meta = json.loads((src / "bundle.json").read_text())
    ports = list(meta["inputs"])
    outs = list(meta["expected"])
    port = rng.choice(ports)
    out = rng.choice(outs)
    yield Damage("meaning", f"input {port} negated in dram_in.npz, the image unchanged",
                 npz_map("dram_in.npz", port, lambda a: -a), REFUSE)
    yield Damage("meaning", f"expected.npz {out}__raw: a byte changed",
                 npz_map("expected.npz", f"{out}__raw", _bump_first), REFUSE)
    if (src / "expected_rtl.npz").exists() and meets_h1(Bundle(src)):
        yield Damage("meaning", f"expected_rtl.npz: output {out}'s first lane changed everywhere it is stated",
                     _rtl_lane_changed(meta, out), HARMLESS, H1_REFERENCE)
    elif (src / "expected_rtl.npz").exists():
        yield Damage("meaning", f"expected_rtl.npz: output {out}'s first lane changed everywhere it is stated",
                     _rtl_lane_changed(meta, out), NOT_PASS)
        yield Damage("meaning", "expected_rtl.npz removed", remove("expected_rtl.npz"), HARMLESS,
                     "a user's export without upstream's RTL run: judged by the float64 bound, and the report says "
                     "so (NOTE line)")
        gone = remove("expected_rtl.npz")
        h1 = meets_h1(Bundle(src))  # then expected.npz judges the outputs bit for bit, slots or not
        yield Damage("meaning", f"expected_rtl.npz removed and {out}__valid all zero",
                     chain(gone, _set_like("expected.npz", f"{out}__valid", f"{out}__slots", 0)),
                     HARMLESS if h1 else NOT_PASS, H1_REFERENCE if h1 else "")
        yield Damage("meaning", f"expected_rtl.npz removed and {out}__slots all -1",
                     chain(gone, npz_map("expected.npz", f"{out}__slots", lambda a: np.full_like(a, -1))),
                     HARMLESS if h1 else NOT_PASS, H1_REFERENCE if h1 else "")
    yield Damage("meaning", "every output region made temp, expected emptied", _no_outputs(), NOT_PASS)
    if (src / "timing_rtl.json").exists():
        yield Damage("meaning", "timing_rtl.json removed", remove("timing_rtl.json"), HARMLESS,
                     "upstream's timing is a reference the golden models do not judge (no clock of cycles)")
    rounds = [i for i, p in enumerate(meta["plan"]) if p["kind"] == "round"]
    yield Damage("meaning", f"plan[{rounds[-1]}] appended again", _append_round(rounds[-1]), REFUSE)
    yield Damage("meaning", f"plan[{rounds[-1]}] appended again, renumbered, without timing_rtl.json",
                 chain(_append_round(rounds[-1], renumber=True), _remove_if("timing_rtl.json")), NOT_PASS)
    yield Damage("meaning", f"plan[{rounds[-1]}]'s last await dropped, without timing_rtl.json",
                 chain(_drop_last_await(rounds[-1]), _remove_if("timing_rtl.json")), NOT_PASS)
    if len(rounds) > 1:
        yield Damage("meaning", f"plan[{rounds[0]}] and plan[{rounds[-1]}] swapped",
                     chain(_swap(rounds[0], rounds[-1]), _remove_if("timing_rtl.json")), NOT_PASS)


def _bump_first(a: np.ndarray) -> np.ndarray:
    b = a.copy()
    b.flat[0] ^= 1
    return b


def _rtl_lane_changed(meta: dict, out: str) -> Edit:
    """The output's first slot changed in expected_rtl.npz's dram_final, __raw and value alike (a consistent lie
    about what upstream's RTL computed): the run must then differ from it."""
    def edit(folder: Path) -> None:
        with np.load(folder / "expected_rtl.npz") as z:
            arrays = {k: z[k] for k in z.files}
        region = next(r for r in meta["dram"]["regions"] if r["name"] == out)
        lo = int(region["addr"], 16) - int(meta["dram"]["base"], 16)
        with np.load(folder / "expected.npz") as z:
            slots = z[f"{out}__slots"]
        i = int(np.flatnonzero(slots.ravel() >= 0)[0])
        slot = int(slots.ravel()[i])
        final = arrays["dram_final"].view(np.uint16)
        final[lo // 2 + slot] ^= 0x0400  # the exponent's lowest bit: a different, finite value
        if f"{out}__raw" in arrays:
            arrays[f"{out}__raw"].view(np.uint16)[slot] ^= 0x0400
        if out in arrays:
            arrays[out].view(np.uint16).ravel()[i] ^= 0x0400
        np.savez(folder / "expected_rtl.npz", **arrays)
    return edit


def _set_like(file: str, key: str, like: str, value: int) -> Edit:
    def edit(folder: Path) -> None:
        with np.load(folder / file) as z:
            shape = z[like].shape
        npz_edit(file, **{key: np.full(shape, value, np.int32)})(folder)
    return edit


def _no_outputs() -> Edit:
    def change(doc: dict) -> None:
        for r in doc["dram"]["regions"]:
            if r["kind"] == "output":
                r["kind"] = "temp"
        doc["expected"] = {}
    return json_edit(change)


def _append_round(i: int, renumber: bool = False) -> Edit:
    def change(doc: dict) -> None:
        entry = json.loads(json.dumps(doc["plan"][i]))
        if renumber:
            entry["round"] = max(p["round"] for p in doc["plan"] if p["kind"] == "round") + 1
        doc["plan"].append(entry)
    return json_edit(change)


def _drop_last_await(i: int) -> Edit:
    def change(doc: dict) -> None:
        steps = doc["plan"][i]["steps"]
        last = max(k for k, s in enumerate(steps) if s["op"] == "await")
        del steps[last]
    return json_edit(change)


def _swap(i: int, j: int) -> Edit:
    def change(doc: dict) -> None:
        doc["plan"][i], doc["plan"][j] = doc["plan"][j], doc["plan"][i]
    return json_edit(change)


def _remove_if(file: str) -> Edit:
    def edit(folder: Path) -> None:
        if (folder / file).exists():
            (folder / file).unlink()
    return edit


FAMILIES: dict[str, Callable[[Path, random.Random], Iterator[Damage]]] = {
    "json": json_family, "npz": npz_family, "filesystem": filesystem_family, "meaning": meaning_family}


def damages(src: Path, seed: int, families: tuple[str, ...] = tuple(FAMILIES)) -> list[Damage]:
    """Every damage of the families for bundle folder `src`, its random choices drawn from `seed`."""
    rng = random.Random(f"{seed}:{src.name}")
    return [d for fam in families for d in FAMILIES[fam](src, rng)]


__all__ = ["Damage", "FAMILIES", "HARMLESS", "NOT_PASS", "REFUSE", "damages"]
