"""Real-client bundles: programs compiled by the public KohakuTPU compiler, as data (clients/README.md).

A bundle holds the staged instruction flits of every round, the ordered
dispatch plan, the initial DRAM image and the expected outputs (upstream RTL's
bit-exact ones in ``expected_rtl.npz``, upstream's Python models' in
``expected.npz``) and, optionally, upstream RTL's execution time per round
(``timing_rtl.json``). This module reads one and answers what a replay needs:
the rounds with their kicks as the dispatcher sends them (dst = the kicked
node, src = the agent), the DRAM image by byte address, and the output
regions. It runs nothing; models.vector.replay runs the vector-core rounds on the
golden model.

Every file is checked as it is read (models/bundle/schema.py for bundle.json,
models/bundle/timing_schema.py for timing_rtl.json, models/bundle/arrays.py for the
.npz files): anything the format does not allow is a :class:`BundleError`, one
line naming the file, the field and what was expected. :meth:`Bundle.check` reads every file, so a caller refuses a
bad bundle before anything runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from models.bundle.arrays import EXPORT_AGAIN, check_dram_in, check_expected
from models.bundle.consistency import check_consistency
from models.bundle.files import JSON_MAX_BYTES, present, read_bytes, shown_name
from models.bundle.npz import read_npz
from models.bundle.schema import BundleError, LongNumber, check_bundle_json
from models.bundle.round_timing import RoundTiming
from models.bundle.timing_schema import TIMING_FILE, TIMING_FIX, check_timing_json

BUNDLES = Path(__file__).resolve().parents[2] / "clients" / "bundles"
Coord = tuple[int, int]
HEADER_ROUTE = (0xFFFF << 272)  # dst_x, dst_y, src_x, src_y: what the dispatcher rewrites (units.md H.4)
INT_DIGITS = 20  # the most digits of an integer any field holds (a 64-bit count); longer ones stay text


class DuplicateKey(ValueError):
    """A key given twice in one JSON object: readers disagree on which value wins, so the file is refused."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"key {shown_name(key)!r} given twice in one object (first {_brief(out[key])}, "
                               f"then {_brief(value)})")
        out[key] = value
    return out


def _brief(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 30 else text[:27] + "..."


def _parse_int(text: str) -> int | LongNumber:
    return int(text) if len(text.lstrip("-")) <= INT_DIGITS else LongNumber(text)


def parse_json(data: bytes) -> Any:
    """JSON as a bundle's files hold it: UTF-8, no key twice in an object, integers longer than INT_DIGITS
    kept as text (the field that reads one refuses it by name). Raises ValueError subclasses, RecursionError
    and UnicodeDecodeError; :meth:`Bundle._read_json` words them."""
    return json.loads(data.decode("utf-8"), object_pairs_hook=_unique_keys, parse_int=_parse_int)


@dataclass(frozen=True)
class Kick:
    """One kick of a round: `flits` staged values (header OR already applied by the loader)."""

    node: Coord
    base: int
    flits: tuple[int, ...]

    def dispatched(self, agent: Coord) -> list[int]:
        """The flits as the dispatcher sends them: dst = the node, src = the agent, every other bit kept."""
        route = self.node[0] << 284 | self.node[1] << 280 | agent[0] << 276 | agent[1] << 272
        return [(f & ~HEADER_ROUTE) | route for f in self.flits]


Step = tuple  # ("seed", credits) | ("kick", Kick) | ("await", node, count), in plan order


@dataclass(frozen=True)
class Round:
    """One round (one upstream artifact) of the plan: its steps in order."""

    index: int
    unit: str  # "VC" or "MG"
    name: str
    steps: tuple[Step, ...]

    @property
    def kicks(self) -> tuple[Kick, ...]:
        return tuple(s[1] for s in self.steps if s[0] == "kick")

    @property
    def awaits(self) -> tuple[tuple[Coord, int], ...]:
        return tuple((s[1], s[2]) for s in self.steps if s[0] == "await")


@dataclass(frozen=True)
class Region:
    name: str
    kind: str  # input, output, constant, temp
    addr: int
    nbytes: int


class Bundle:
    """One bundle folder, read lazily."""

    def __init__(self, name_or_path: str | Path) -> None:
        path = Path(name_or_path)
        if not path.is_absolute() and not path.exists():
            path = BUNDLES / str(name_or_path)
        if not present(path / "bundle.json"):
            known = ", ".join(sorted(p.name for p in BUNDLES.iterdir() if (p / "bundle.json").exists()))
            raise ValueError(f"no bundle at {shown_name(path)} (bundle.json missing); known bundles: {known}")
        self.path = path
        self.name = shown_name(path.name)  # printed and used as a key: one printable line whatever the folder

    def _read_json(self, file: str, fix: str = EXPORT_AGAIN) -> Any:
        """A JSON file of the folder, or BundleError in one line (not a readable regular file, not UTF-8, not
        JSON, nested too deep, a key given twice)."""
        data = read_bytes(self.path / file, fix, JSON_MAX_BYTES)
        try:
            return parse_json(data)
        except UnicodeDecodeError as exc:
            raise BundleError(f"{file}: byte {exc.start} is not UTF-8; {fix}") from None
        except json.JSONDecodeError as exc:
            raise BundleError(f"{file}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                              f"{fix}") from None
        except DuplicateKey as exc:
            raise BundleError(f"{file}: {exc}; {fix}") from None
        except RecursionError:
            raise BundleError(f"{file}: nested deeper than the JSON reader follows (a bundle's files nest a few "
                              f"levels); {fix}") from None

    @cached_property
    def meta(self) -> dict[str, Any]:
        """bundle.json, checked against the format (BundleError names the first field that breaks it)."""
        meta = self._read_json("bundle.json")
        check_bundle_json(meta)
        return meta

    @property
    def has_timing_rtl(self) -> bool:
        """Whether upstream's RTL execution time came with the bundle (a user's own export may lack it)."""
        return present(self.path / TIMING_FILE)

    @cached_property
    def timing_rtl(self) -> list[RoundTiming] | None:
        """Upstream's per-round timing (timing_rtl.json, checked against the plan), None without the file."""
        if not self.has_timing_rtl:
            return None
        timing = self._read_json(TIMING_FILE, TIMING_FIX)
        check_timing_json(timing, self.meta)
        return [RoundTiming.from_json(r) for r in timing["rounds"]]

    def check(self) -> None:
        """Read and check every file of the bundle (BundleError on the first problem); cached afterwards."""
        self.dram_in
        self.expected_models
        if self.has_expected_rtl:
            self.expected_rtl
        self.timing_rtl
        check_consistency(self)

    @cached_property
    def dram_in(self) -> dict[str, np.ndarray]:
        arrays = read_npz(self.path / "dram_in.npz")
        check_dram_in(self.meta, arrays)
        return arrays

    @property
    def has_expected_rtl(self) -> bool:
        """Whether upstream's RTL run came with the bundle (a user's own export may lack it)."""
        return present(self.path / "expected_rtl.npz")

    @cached_property
    def expected_rtl(self) -> dict[str, np.ndarray]:
        arrays = read_npz(self.path / "expected_rtl.npz")
        check_expected(self.meta, arrays, "expected_rtl.npz", per_port=False)
        return arrays

    @cached_property
    def expected_models(self) -> dict[str, np.ndarray]:
        arrays = read_npz(self.path / "expected.npz")
        check_expected(self.meta, arrays, "expected.npz", per_port=True)
        return arrays

    @property
    def agent(self) -> Coord:
        x, y = self.meta["machine"]["agent"]
        return (x, y)

    @property
    def mag(self) -> Coord:
        x, y = self.meta["machine"]["mag"]
        return (x, y)

    @property
    def image_base(self) -> int:
        """Machine byte address of image[0]."""
        return int(self.dram_in["base"])

    @property
    def image(self) -> np.ndarray:
        return self.dram_in["image"]

    @property
    def regions(self) -> list[Region]:
        return [Region(r["name"], r["kind"], int(r["addr"], 16), int(r["nbytes"]))
                for r in self.meta["dram"]["regions"]]

    @property
    def outputs(self) -> dict[str, Region]:
        return {r.name: r for r in self.regions if r.kind == "output"}

    @property
    def plan_kinds(self) -> list[str]:
        """'round:VC', 'round:MG' or 'host_convert' per plan entry, in order."""
        return [f"round:{p['unit']}" if p["kind"] == "round" else p["kind"] for p in self.meta["plan"]]

    @property
    def rounds(self) -> list[Round]:
        """The plan's rounds, parsed from `meta` (checked when read; a test may edit it in memory since)."""
        out = []
        for p in self.meta["plan"]:
            if p["kind"] != "round":
                continue
            steps: list[Step] = []
            for s in p["steps"]:
                if s["op"] == "seed":
                    steps.append(("seed", int(s["credits"])))
                elif s["op"] == "kick":
                    steps.append(("kick", Kick((s["node"][0], s["node"][1]), int(s["base"]),
                                               tuple(int(f, 16) for f in s["flits"]))))
                elif s["op"] == "await":
                    steps.append(("await", (s["node"][0], s["node"][1]), int(s["count"])))
                # a barrier does nothing: the awaits before it order the work
            out.append(Round(int(p["round"]), p["unit"], p["name"], tuple(steps)))
        return out

    def words(self, image: np.ndarray | None = None) -> dict[int, int]:
        """The image as 32-byte words: machine byte address -> 256-bit little-endian word (zero words left out)."""
        img = self.image if image is None else image
        out = {}
        for i in range(0, len(img), 32):
            w = int.from_bytes(img[i:i + 32].tobytes(), "little")
            if w:
                out[self.image_base + i] = w
        return out


def bundle_names() -> list[str]:
    return sorted(p.name for p in BUNDLES.iterdir() if (p / "bundle.json").exists())


# every set of compiled programs in clients/: the single kernels, the larger programs, the whole passes
CLIENT_SETS = (BUNDLES, BUNDLES.parent / "scale", BUNDLES.parent / "model")


def client_bundle_dirs() -> list[Path]:
    """Every bundle folder of clients/ (CLIENT_SETS), set by set, by name within a set."""
    return [p for d in CLIENT_SETS if d.is_dir() for p in sorted(d.iterdir()) if (p / "bundle.json").exists()]


__all__ = ["BUNDLES", "CLIENT_SETS", "Bundle", "BundleError", "Kick", "Region", "Round", "Step", "bundle_names",
           "client_bundle_dirs"]
