"""What a compiled bundle's bundle.json must hold, written once, and the reader that refuses anything else.

Why: a bundle is data a user exports (clients/README.md). A missing field, a
string where a number belongs or a flit that is not hex must end in one line
naming the file, the field (with its round and step), what was expected and
the fix, before anything runs: never a bare KeyError, a traceback from
``int(..., 16)``, or a run that silently does something else. No schema
library is in the project's lock, so the expectations are a small table of
validators (:data:`BUNDLE_JSON`, the fields the project reads, each with its
type and range) plus the rules that tie fields together (:func:`check_plan`,
:func:`check_regions`). models/bundle/arrays.py does the same for the .npz
files; models/bundle/reader.py runs both when it reads a bundle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

FIX = "correct it or export the bundle again (the format: clients/README.md)"
FLIT_HEX = re.compile(r"[0-9a-fA-F]{72}")
ADDR_HEX = re.compile(r"0x[0-9a-fA-F]{1,10}")  # a 40-bit byte address, as upstream writes it
NODE_KEY = re.compile(r"(\d{1,2}),(\d{1,2})")
COUNT_MAX = 0xFFFF  # NODE_STATUS counts are 16 bits (units.md §H.3)


class BundleError(ValueError):
    """A bundle that does not hold what its format says: one line, naming the file, the field, what was
    expected and the fix."""


@dataclass(frozen=True)
class At:
    """Where a value sits: the file, its path inside it, context for a reader (round, step), and the fix a
    refusal there names (each file of a bundle has its own)."""

    file: str
    path: str = ""
    context: tuple[str, ...] = ()
    fix: str = FIX

    def child(self, key: str | int, label: str = "") -> "At":
        step = f"[{key}]" if isinstance(key, int) else (f".{key}" if self.path else key)
        return At(self.file, self.path + step, self.context + ((label,) if label else ()), self.fix)

    def where(self) -> str:
        ctx = f" ({', '.join(self.context)})" if self.context else ""
        return f"{self.file} {self.path}{ctx}" if self.path else f"{self.file}{ctx}"

    def refuse(self, problem: str, fix: str | None = None) -> BundleError:
        return BundleError(f"{self.where()}: {problem}; {self.fix if fix is None else fix}")


class LongNumber(str):
    """An integer literal of more digits than any field holds, kept as its text (models/bundle/reader.py):
    a field that reads it is refused by its own check, naming the field, instead of Python's int() limit
    refusing the whole file unnamed."""

    def __repr__(self) -> str:
        return f"<an integer of {len(self.lstrip('-'))} digits>"


def shown(value: Any) -> str:
    """A value as a message shows it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Spec:
    """One expectation of a value; `what` says it in words for the refusal."""

    described = "a value"

    @property
    def what(self) -> str:
        return self.described

    def check(self, value: Any, at: At) -> None:
        raise NotImplementedError

    def wrong(self, value: Any, at: At) -> BundleError:
        return at.refuse(f"{shown(value)} is not {self.what}")


@dataclass(frozen=True)
class Int(Spec):
    lo: int = 0
    hi: int | None = None
    unit: str = ""

    @property
    def what(self) -> str:
        limit = f"{self.lo}..{self.hi}" if self.hi is not None else f">= {self.lo}"
        return f"an integer {limit}" + (f" ({self.unit})" if self.unit else "")

    def check(self, value: Any, at: At) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong(value, at)
        if value < self.lo or (self.hi is not None and value > self.hi):
            raise self.wrong(value, at)


@dataclass(frozen=True)
class Text(Spec):
    """A string, matching `pattern` or one of `choices` when given."""

    choices: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    described: str = ""

    @property
    def what(self) -> str:
        if self.described:
            return self.described
        return f"one of {', '.join(map(repr, self.choices))}" if self.choices else "a non-empty string"

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, str) or not value:
            raise self.wrong(value, at)
        if self.choices and value not in self.choices:
            raise self.wrong(value, at)
        if self.pattern is not None and not self.pattern.fullmatch(value):
            raise self.wrong(value, at)


@dataclass(frozen=True)
class ListOf(Spec):
    item: Spec
    length: int | None = None
    described: str = ""

    @property
    def what(self) -> str:
        return self.described or (f"a list of {self.length}" if self.length is not None else "a list")

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, list) or (self.length is not None and len(value) != self.length):
            raise self.wrong(value, at)
        for i, item in enumerate(value):
            self.item.check(item, at.child(i))


@dataclass(frozen=True)
class MapOf(Spec):
    """An object whose keys are free (port names, nodes) and whose values all follow `value`."""

    value: Spec
    key: re.Pattern[str] | None = None
    described: str = "an object"
    key_described: str = ""

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, dict):
            raise self.wrong(value, at)
        for k, v in value.items():
            if self.key is not None and not self.key.fullmatch(k):
                raise at.refuse(f"key {shown(k)} is not {self.key_described or self.key.pattern}")
            self.value.check(v, at.child(k))


@dataclass(frozen=True)
class Obj(Spec):
    """An object with these fields (others may be present: the project does not read them)."""

    fields: Mapping[str, Spec]
    optional: Mapping[str, Spec] | None = None
    described: str = "an object"
    label: Callable[[dict[str, Any]], str] | None = None  # context for a reader: "round 3", "kick to [1, 1]"

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, dict):
            raise self.wrong(value, at)
        if self.label is not None:
            at = At(at.file, at.path, at.context + (self.label(value),), at.fix)
        for name, spec in self.fields.items():
            if name not in value:
                raise at.refuse(f"no field {name!r} (expected {spec.what})")
            spec.check(value[name], at.child(name))
        for name, spec in (self.optional or {}).items():
            if name in value:
                spec.check(value[name], at.child(name))


@dataclass(frozen=True)
class Tagged(Spec):
    """An object whose `tag` field picks its shape (a plan entry's kind, a step's op)."""

    tag: str
    noun: str  # what the tag names, for "unknown step 'jump'"
    variants: Mapping[str, Obj]
    described: str = "an object"

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, dict):
            raise self.wrong(value, at)
        kind = value.get(self.tag)
        if kind not in self.variants:
            known = ", ".join(self.variants)
            raise at.refuse(f"unknown {self.noun} {shown(kind)} (field {self.tag!r}; known: {known})")
        self.variants[kind].check(value, at)


def round_label(entry: dict[str, Any]) -> str:
    r = entry.get("round")
    return f"round {r}" if isinstance(r, int) and not isinstance(r, bool) else "round ?"


def _step_label(step: dict[str, Any]) -> str:
    op, node = step.get("op"), step.get("node")
    return {"kick": f"kick to {node}", "await": f"await on {node}"}.get(str(op), str(op))


COORD = ListOf(Int(0, 15), 2, "an [x, y] coordinate of 4-bit fields")
ADDR = Text(pattern=ADDR_HEX, described="a byte address as a '0x...' hex string of up to 40 bits")
FLIT = Text(pattern=FLIT_HEX, described="a staged 288-bit flit: 72 hex digits, MSB first")
GATHER = Text(pattern=re.compile(r"dram_in\.npz:\w+"), described="'dram_in.npz:<key>', naming the gather map")
PORT = Obj({"shape": ListOf(Int(1), described="a list of dimensions"), "dtype": Text(("float16",))},
           described="a port {shape, dtype}")

STEP = Tagged("op", "step", {
    "seed": Obj({"credits": Int(0, COUNT_MAX, "instruction credits")}, label=_step_label),
    "kick": Obj({"node": COORD, "base": Int(0, unit="staging slot"), "nflits": Int(1),
                 "flits": ListOf(FLIT, described="a list of staged flits")}, label=_step_label),
    "await": Obj({"node": COORD, "count": Int(1, COUNT_MAX, "signals")}, label=_step_label),
    "barrier": Obj({}, label=_step_label),
}, "a step {op: seed | kick | await | barrier, ...}")

ROUND = Obj(
    {"round": Int(0), "unit": Text(("MG", "VC")), "name": Text(), "nflits": Int(1, unit="slots staged"),
     "steps": ListOf(STEP, described="a list of steps")},
    {"observed": MapOf(Obj({"baseline": Int(0, COUNT_MAX), "after": Int(0, COUNT_MAX)}), NODE_KEY,
                       "an object {'x,y': {baseline, after}}", "a node 'x,y'")}, label=round_label)

HOST_CONVERT = Obj({"after_round": Int(0), "addr": ADDR, "read_nbytes": Int(2), "write_nbytes": Int(2),
                    "gather": GATHER})

BUNDLE_JSON = Obj({
    "kernel": Obj({"reference": Text()}, described="an object {reference, ...}"),
    "machine": Obj({
        "name": Text(),
        "units": Obj({"MG": ListOf(COORD, described="a list of [x, y]"),
                      "VC": ListOf(COORD, described="a list of [x, y]")}, described="an object {MG, VC}"),
        "agent": COORD, "mag": COORD,
        "routers": ListOf(Int(1, 14), 2, "[nx, ny] routers, each 1..14"),
        "stage_flits": Int(1, unit="staging slots"), "inst_depth": Int(1, unit="instruction FIFO depth"),
        "mem_window_base": ADDR,
    }, described="the machine description {name, units, agent, mag, routers, stage_flits, inst_depth, "
                 "mem_window_base}"),
    "dram": Obj({"base": ADDR, "nbytes": Int(1),
                 "regions": ListOf(Obj({"name": Text(), "kind": Text(("input", "constant", "output", "temp")),
                                        "addr": ADDR, "nbytes": Int(1)}), described="a list of regions")}),
    "inputs": MapOf(PORT, described="an object {port: {shape, dtype}}"),
    "expected": MapOf(PORT, described="an object {port: {shape, dtype}}"),
    "plan": ListOf(Tagged("kind", "plan entry", {"round": ROUND, "host_convert": HOST_CONVERT},
                          "a plan entry {kind: round | host_convert, ...}"), described="a list of plan entries"),
}, {"upstream_model": Obj({}, {"busy_cycles": MapOf(Int(0), described="an object {unit: cycles}")})},
    described="a JSON object")


def check_in_image(meta: dict[str, Any], addr: str, nbytes: int, here: At) -> None:
    """Bytes addr..addr+nbytes-1 lie in the image (dram.base, dram.nbytes), or BundleError at `here`."""
    base, span = int(meta["dram"]["base"], 16), meta["dram"]["nbytes"]
    lo = int(addr, 16)
    if lo < base or lo + nbytes > base + span:
        raise here.refuse(f"bytes {lo:#x}..{lo + nbytes - 1:#x} lie outside the image {base:#x}..{base + span - 1:#x} "
                          f"(dram.base, dram.nbytes)")


def check_regions(meta: dict[str, Any], at: At) -> None:
    """Regions inside the image span, names unique, every output described in `expected` and vice versa."""
    names: set[str] = set()
    for i, r in enumerate(meta["dram"]["regions"]):
        here = at.child("dram").child("regions").child(i, f"region {r['name']}")
        check_in_image(meta, r["addr"], r["nbytes"], here)
        if r["name"] in names:
            raise here.refuse(f"a second region named {r['name']!r}")
        names.add(r["name"])
        if r["kind"] == "output" and r["nbytes"] % 2:
            raise here.refuse(f"an output of {r['nbytes']} bytes: expected whole FP16 slots (an even count)")
    outputs = sorted(r["name"] for r in meta["dram"]["regions"] if r["kind"] == "output")
    if outputs != sorted(meta["expected"]):
        raise at.child("expected").refuse(f"ports {sorted(meta['expected'])}, the output regions of dram.regions "
                                          f"are {outputs}; expected the same names")


def check_plan(meta: dict[str, Any], at: At) -> None:
    """The rules that tie a plan's fields together: kicks list `nflits` flits to a unit of the round's kind,
    awaits wait on a unit of the machine, a round's `nflits` counts the slots it stages, round numbers are
    unique and a relayout follows the round it names, inside the image."""
    units = meta["machine"]["units"]
    kind_nodes = {kind: {tuple(c) for c in units[kind]} for kind in ("MG", "VC")}
    all_nodes = kind_nodes["MG"] | kind_nodes["VC"]
    rounds_seen: set[int] = set()
    for i, entry in enumerate(meta["plan"]):
        here = at.child("plan").child(i, round_label(entry) if entry["kind"] == "round" else "host_convert")
        if entry["kind"] == "host_convert":
            if entry["after_round"] not in rounds_seen:
                raise here.child("after_round").refuse(
                    f"{entry['after_round']} names no round before this entry (rounds so far: "
                    f"{sorted(rounds_seen)})")
            check_in_image(meta, entry["addr"], max(entry["read_nbytes"], entry["write_nbytes"]), here)
            if entry["write_nbytes"] % 2 or entry["read_nbytes"] % 2:
                raise here.refuse(f"read_nbytes {entry['read_nbytes']}, write_nbytes {entry['write_nbytes']}: "
                                  f"expected whole FP16 slots (even counts)")
            continue
        if entry["round"] in rounds_seen:
            raise here.child("round").refuse(f"round {entry['round']} appears twice in the plan")
        rounds_seen.add(entry["round"])
        slots: set[int] = set()
        for j, step in enumerate(entry["steps"]):
            where = here.child("steps").child(j, _step_label(step))
            node = tuple(step.get("node", ()))
            if step["op"] == "kick":
                if len(step["flits"]) != step["nflits"]:
                    raise where.refuse(f"{len(step['flits'])} flits listed, nflits says {step['nflits']}")
                if node not in kind_nodes[entry["unit"]]:
                    raise where.child("node").refuse(
                        f"{list(node)} is not a {entry['unit']} unit of machine.units (expected one of "
                        f"{sorted(map(list, kind_nodes[entry['unit']]))})")
                slots.update(range(step["base"], step["base"] + step["nflits"]))
            elif step["op"] == "await" and node not in all_nodes:
                raise where.child("node").refuse(f"{list(node)} is no unit of machine.units (expected one of "
                                                 f"{sorted(map(list, all_nodes))})")
        if len(slots) != entry["nflits"]:
            raise here.child("nflits").refuse(f"{entry['nflits']}, but its kicks stage {len(slots)} slot(s); "
                                              f"expected the count of slots staged")
    if not rounds_seen:
        raise at.child("plan").refuse("no round in the plan: expected at least one entry of kind 'round'")


def check_bundle_json(meta: Any, file: str = "bundle.json") -> None:
    """Every expectation on bundle.json, or BundleError naming the first one it breaks."""
    at = At(file)
    BUNDLE_JSON.check(meta, at)
    check_regions(meta, at)
    check_plan(meta, at)


__all__ = ["BUNDLE_JSON", "At", "BundleError", "LongNumber", "check_bundle_json", "check_in_image", "check_plan",
           "check_regions", "round_label", "shown"]
