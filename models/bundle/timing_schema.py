"""What a bundle's optional timing_rtl.json must hold, and the reader that refuses anything else.

Why: the file is upstream's execution time of the bundle, round by round
(clients/README.md, ``timing_rtl.json``), and our run is judged against it
(models/bundle/timing.py). A figure that is not a number, a round the plan
does not have, or a total that is not the sum of its parts would make every
ratio printed beside it wrong, so it ends in one line naming the file, the
field (with its round), what was expected and the fix, before anything runs,
in the style of models/bundle/schema.py (whose validators it uses). A bundle
without the file is valid: its run is reported with no reference timing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.bundle.schema import At, Int, ListOf, Obj, Spec, round_label

TIMING_FILE = "timing_rtl.json"
TIMING_FIX = ("correct it, export the bundle again (the format: clients/README.md), or remove timing_rtl.json "
              "(the run is then reported with no reference timing)")


@dataclass(frozen=True)
class Fixed(Spec):
    """A list of exactly these items, in order (an await's [x, y, cycle])."""

    items: tuple[Spec, ...]
    described: str = ""

    @property
    def what(self) -> str:
        return self.described or f"a list of {len(self.items)}"

    def check(self, value: Any, at: At) -> None:
        if not isinstance(value, list) or len(value) != len(self.items):
            raise self.wrong(value, at)
        for i, (item, spec) in enumerate(zip(value, self.items)):
            spec.check(item, at.child(i))


CYCLES = Int(0, unit="cycles")
AWAIT = Fixed((Int(0, 15), Int(0, 15), CYCLES), "[node x, node y, cycle met] (x, y 0..15, cycle >= 0)")
ROUND = Obj({"round": Int(0), "staged": Int(1, unit="slots"), "host_cycles": CYCLES,
             "kicks": ListOf(CYCLES, described="a list of KICK cycles"),
             "awaits": ListOf(AWAIT, described="a list of [x, y, cycle]"),
             "machine_cycles": CYCLES, "total": CYCLES}, label=round_label)
TIMING_JSON = Obj({"rounds": ListOf(ROUND, described="a list of rounds"), "machine_cycles": CYCLES,
                   "total": CYCLES}, described="a JSON object {rounds, machine_cycles, total}")


def _check_round(entry: dict[str, Any], plan_round: dict[str, Any], at: At) -> None:
    """One entry against its plan round and against its own definitions (clients/README.md)."""
    steps = plan_round["steps"]
    kicks = sum(1 for s in steps if s["op"] == "kick")
    nodes = [list(s["node"]) for s in steps if s["op"] == "await"]
    if entry["round"] != plan_round["round"]:
        raise at.child("round").refuse(f"{entry['round']}, the plan's round at this place is "
                                       f"{plan_round['round']}; expected the rounds in plan order")
    if entry["staged"] != plan_round["nflits"]:
        raise at.child("staged").refuse(f"{entry['staged']}, the round stages {plan_round['nflits']} slot(s) "
                                        f"(bundle.json nflits); expected the same")
    if len(entry["kicks"]) != kicks:
        raise at.child("kicks").refuse(f"{len(entry['kicks'])} KICK cycle(s), the round has {kicks} kick(s); "
                                       f"expected one cycle per kick")
    if entry["kicks"][0] != 0 or entry["kicks"] != sorted(entry["kicks"]):
        raise at.child("kicks").refuse(f"{entry['kicks']}: expected cycles relative to the first KICK, so 0 "
                                       f"first, never decreasing")
    if [a[:2] for a in entry["awaits"]] != nodes:
        raise at.child("awaits").refuse(f"nodes {[a[:2] for a in entry['awaits']]}, the round awaits {nodes}; "
                                        f"expected one [x, y, cycle] per await, in plan order")
    last = max((a[2] for a in entry["awaits"]), default=0)
    if entry["machine_cycles"] != last:
        raise at.child("machine_cycles").refuse(f"{entry['machine_cycles']}, the last await was met at {last}; "
                                                f"expected the first KICK to the last await met")
    if entry["total"] != entry["host_cycles"] + entry["machine_cycles"]:
        raise at.child("total").refuse(f"{entry['total']}, host_cycles + machine_cycles = "
                                       f"{entry['host_cycles'] + entry['machine_cycles']}; expected their sum")


def check_timing_json(timing: Any, meta: dict[str, Any], file: str = TIMING_FILE) -> None:
    """Every expectation on timing_rtl.json, given the bundle's checked bundle.json `meta`, or BundleError
    naming the first one it breaks."""
    at = At(file, fix=TIMING_FIX)
    TIMING_JSON.check(timing, at)
    plan = [p for p in meta["plan"] if p["kind"] == "round"]
    rounds = timing["rounds"]
    if len(rounds) != len(plan):
        raise at.child("rounds").refuse(f"{len(rounds)} round(s), the plan (bundle.json) has {len(plan)}; "
                                        f"expected one entry per round, in plan order")
    for i, (entry, plan_round) in enumerate(zip(rounds, plan)):
        _check_round(entry, plan_round, at.child("rounds").child(i, round_label(entry)))
    for name in ("machine_cycles", "total"):
        summed = sum(r[name] for r in rounds)
        if timing[name] != summed:
            raise at.child(name).refuse(f"{timing[name]}, the rounds' {name} sum to {summed}; expected their sum")


__all__ = ["TIMING_FILE", "TIMING_FIX", "TIMING_JSON", "check_timing_json"]
