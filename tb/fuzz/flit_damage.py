"""Flip bits of a bundle's staged flits, run each damaged bundle on the golden models, and say what caught it.

``python -m tb.fuzz.flit_damage DIR [--all | --sample N] [--seed S]`` prints,
per flit kind, how many bits are read / ignored / overridden / echoed / unused
/ credit (models/bundle/flit_bits.py, models/bundle/flit_usage.py,
docs/flit_bits.md) and what each flip did:

* FAILED: the verdict (models/bundle/judge.py) fails;
* FAULT: a unit retired an instruction as a named fault;
* STOPPED: the run could not finish (an await never met, a refusal, a
  runaway program stopped by the watchdog below);
* MASKED: the verdict passes, but the machine did something else than the
  undamaged run (other DRAM writes, later overwritten; another end state of a
  unit's registers or L1, which the FP16 outputs absorb): the flip is read,
  and only this bench, not the bundle's verdict, can see it;
* PASSED: nothing the verdict or the machine's behaviour shows differs.

A READ bit whose flip PASSED is a **silent pass**, a defect of the models or
of the map; a bit the map calls harmless whose flip did anything but pass
**contradicts** the map. Both are listed, MASKED flips too, and the command
exits 1 on a silent pass or a contradiction (0 otherwise, 2 on bad input).

Why in-process and on the models: a flip runs in tens of milliseconds, so a
sample of a thousand flips (or every bit of a small bundle) runs in seconds
to minutes, and the same classifier could judge an RTL run.

The watchdog is deterministic, never wall time: a damaged program may never
reach its VHALT (the pc wraps modulo 512) or loop far longer than compiled;
each run may execute at most ``RUNAWAY_FACTOR`` times the words, and deliver
that many times the flits, of the undamaged run (plus a margin). On the RTL
the bench's cycle limit stops such a run (tb/bundle/cycle_limits.py).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from models.bundle.executor import execute, run_sync
from models.bundle.flit_bits import Use, fields_of, flit_kind
from models.bundle.flit_usage import StagedFlit, immediates, plan_trace, staged_flits, unused_flip
from models.bundle.judge import judge
from models.bundle.reader import Bundle
from models.bundle.round_budget import DeliveryBudget
from models.machine.event_model import MAX_STEPS, UNIT_MODELS, Factory, MachineModel, ModelHost, model_run
from models.machine.layouts import Machine, UnitKind, get_machine
from models.cluster import ClusterCore
from models.vector.core import VectorCore
from models.vector.isa import Word
from models.vector.link import Event

Coord = tuple[int, int]

RUNAWAY_FACTOR = 8
RUNAWAY_MARGIN = 20_000
OUTCOMES = ("FAILED", "FAULT", "STOPPED", "MASKED", "PASSED")
UNUSED = "unused"  # a READ bit the program provably never reads back (models/bundle/flit_usage.py)
CREDIT = "credit"  # `last` on a non-final flit, in a round whose seed covers all its flits
CLASSES = (Use.READ.value, Use.IGNORED.value, Use.OVERRIDDEN.value, Use.ECHOED.value, UNUSED, CREDIT)


class Runaway(Exception):
    """The damaged run went past the watchdog's budget of words or deliveries."""


@dataclass(frozen=True)
class Flip:
    """One bit of one staged flit: where, its field and its class."""

    pos: int  # index into staged_flits(meta)
    bit: int
    kind: str
    field: str
    cls: str


@dataclass
class Result:
    """One flip's outcome and the first reason."""

    flip: Flip
    outcome: str
    why: str
    differs: str = ""  # MASKED: "writes" (the DRAM writes differ) or "state" (only a unit's end state)

    @property
    def silent(self) -> bool:
        """A read bit whose flip changed nothing the verdict or the machine's behaviour shows."""
        return self.flip.cls == Use.READ.value and self.outcome == "PASSED"

    @property
    def masked(self) -> bool:
        """A read bit whose flip the verdict passed although the machine did something else (named in `why`)."""
        return self.flip.cls == Use.READ.value and self.outcome == "MASKED"

    @property
    def contradicts(self) -> bool:
        """A harmless bit whose flip did more than nothing; an `unused` flip may leave state no one reads
        (an L1 entry, a descriptor) different, never a DRAM write."""
        if self.flip.cls == Use.READ.value or self.outcome == "PASSED":
            return False
        return not (self.flip.cls == UNUSED and self.outcome == "MASKED" and self.differs == "state")


# ---------------------------------------------------------------- the map of a bundle's bits
def credit_covered(meta: Mapping) -> set[int]:
    """Plan indices of the rounds where every seed covers the flits kicked until the next seed: a completion
    that returns no credit (BATCH_COMPLETE for INST_COMPLETE) cannot stall such a round (units.md §H.3)."""
    out = set()
    for pi, entry in enumerate(meta["plan"]):
        if entry.get("kind") != "round":
            continue
        ok, credit = True, 0
        for step in entry["steps"]:
            if step["op"] == "seed":
                credit = int(step["credits"])
            elif step["op"] == "kick":
                credit -= int(step["nflits"])
                ok &= credit >= 0
        if ok:
            out.add(pi)
    return out


def flip_map(meta: Mapping) -> list[Flip]:
    """Every bit of every staged flit of a bundle.json plan with its field and its class by the flit alone
    (a READ bit may still be `unused` or `credit` by the plan: :func:`refine`)."""
    flits = staged_flits(dict(meta))
    imms = immediates(flits)
    out = []
    for pos, f in enumerate(flits):
        kind = flit_kind(f.unit, f.value, pos in imms)
        for fld in fields_of(f.unit, f.value, f.final, pos in imms):
            cls = Use.OVERRIDDEN.value if f.restaged else fld.use.value  # a slot is staged once a round (§H.2)
            out.extend(Flip(pos, bit, kind, fld.name, cls) for bit in fld.bits())
    return out


def refine(meta: Mapping, flips: Sequence[Flip]) -> list[Flip]:
    """`flips` with each READ bit the plan makes harmless reclassed: `credit` (hdr.last in a round whose seed
    covers its flits), `unused` (models/bundle/flit_usage.py's rule)."""
    flits = staged_flits(dict(meta))
    clean = plan_trace(flits)
    covered = credit_covered(meta)
    out = []
    for f in flips:
        cls = f.cls
        if cls == Use.READ.value:
            if f.field == "hdr.last" and flits[f.pos].plan in covered:
                cls = CREDIT
            elif f.bit < 256 and unused_flip(flits, f.pos, f.bit, clean):
                cls = UNUSED
        out.append(Flip(f.pos, f.bit, f.kind, f.field, cls))
    return out


# ---------------------------------------------------------------- running a damaged bundle
class _Budget:
    def __init__(self, words: int, deliveries: int) -> None:
        self.words, self.deliveries = words, deliveries


def _watched_machine(machine: Machine, budget: _Budget | None,
                     units: Mapping[UnitKind, Factory]) -> tuple[MachineModel, list[VectorCore]]:
    cores: list[VectorCore] = []

    class WatchedCore(VectorCore):
        executed = 0

        def _step(self, w: Word, r: Any, out: list[Event]) -> bool:
            WatchedCore.executed += 1
            if budget is not None and WatchedCore.executed > budget.words:
                raise Runaway(f"watchdog: more than {budget.words} program words executed (the undamaged run "
                              f"executes {budget.words // RUNAWAY_FACTOR - RUNAWAY_MARGIN // RUNAWAY_FACTOR} or so)")
            return super()._step(w, r, out)

    def make(c: Coord, mm: MachineModel) -> VectorCore:
        core = WatchedCore(c, mm.machine.mag)
        cores.append(core)
        return core

    class WatchedMachine(MachineModel):
        def run(self, until: Callable[[], bool] | None = None, max_steps: int = MAX_STEPS) -> bool:
            limit = budget.deliveries if budget is not None else max_steps  # else ModelHost's, from the program
            for _ in range(limit):
                if until is not None and until():
                    return True
                if not self.step():
                    return until() if until is not None else True
            raise Runaway(f"watchdog: more than {limit} flit deliveries in one wait")

    return WatchedMachine(machine, {**units, UnitKind.VECTOR: make}), cores


@dataclass(frozen=True)
class Run:
    """One run's outcome, its first reason, the watchdog's figures and what the machine did (fingerprint)."""

    outcome: str
    why: str
    differs: str = ""
    words: int = 0
    deliveries: int = 0
    fingerprint: tuple = ()


def fingerprint(mm: MachineModel, writes: list) -> tuple:
    """What the machine did beyond the image the verdict reads: every DRAM write (source, word), and every
    unit's end state (a vector core's registers, L1, VL and mode; a cluster's L1 and accumulator)."""
    state = []
    for coord in sorted(mm.units):
        u = mm.units[coord]
        if isinstance(u, VectorCore):
            snap = u.snapshot()
            state.append((coord, *(np.asarray(snap[k]).tobytes() for k in ("l1", "v", "p")), tuple(snap["s"]),
                          snap["k3"], snap["vl"], snap["mode"]))
        elif isinstance(u, ClusterCore):
            state.append((coord, tuple(u.l1[0]), tuple(u.l1[1]), u.acc.tobytes()))
    return (tuple(sorted(Counter((src, word) for op, src, word in writes if op == "wr").items())), tuple(state))


def _difference(clean: tuple, got: tuple) -> str:
    if clean[0] != got[0]:
        a, b = dict(clean[0]), dict(got[0])
        extra = sum(max(0, n - a.get(k, 0)) for k, n in b.items())
        missing = sum(max(0, n - b.get(k, 0)) for k, n in a.items())
        return (f"the verdict passed, but the machine wrote {extra} DRAM word(s) the undamaged run does not and "
                f"left out {missing} (each overwritten or rewritten before the end)")
    units = [c[0] for c, d in zip(clean[1], got[1]) if c != d]
    return (f"the verdict passed, but the end state of unit(s) {units} differs from the undamaged run's (a value "
            f"the outputs' FP16 rounding absorbs, or state no output reads)")


def run_once(b: Bundle, machine: Machine, budget: _Budget | None = None,
             units: Mapping[UnitKind, Factory] = UNIT_MODELS, clean: tuple | None = None) -> Run:
    """`b` on the models (`units`: the unit models but the vector core's, which is always the golden one under
    the watchdog; a test plants a broken one); with `clean` (the undamaged run's fingerprint) a run the
    verdict passes but whose machine did something else is MASKED."""
    mm, cores = _watched_machine(machine, budget, units)
    writes: list = []
    if mm.mag is not None:
        mm.mag.trace = writes
    try:
        res = run_sync(execute(b, ModelHost(mm, DeliveryBudget.of(b, machine)), machine))
    except (Runaway, AssertionError, ValueError) as exc:  # a poll never met, a refusal, a livelock, the watchdog
        return Run("STOPPED", f"{type(exc).__name__}: {str(exc)[:200]}", "", 0, mm.steps)
    run = model_run(mm, res)
    words = type(cores[0]).executed if cores else 0
    if run.faults:
        node, code = run.faults[0]
        return Run("FAULT", f"FAULT signal from {node}: code {code}", "", words, mm.steps)
    failures = judge(b, res) + [f"model error: {e}" for e in run.errors]
    if failures:
        return Run("FAILED", failures[0][:200], "", words, mm.steps)
    fp = fingerprint(mm, writes)
    if clean is not None and fp != clean:
        return Run("MASKED", _difference(clean, fp), "writes" if fp[0] != clean[0] else "state", words, mm.steps, fp)
    return Run("PASSED", "", "", words, mm.steps, fp)


def damaged(b0: Bundle, flits: Sequence[StagedFlit], flip: Flip) -> Bundle:
    """A copy of `b0` (same folder, arrays shared) whose bundle.json plan has `flip` applied, in memory."""
    f = flits[flip.pos]
    meta = dict(b0.meta)
    meta["plan"] = list(meta["plan"])
    entry = dict(meta["plan"][f.plan])
    entry["steps"] = list(entry["steps"])
    step = dict(entry["steps"][f.step])
    step["flits"] = list(step["flits"])
    step["flits"][f.index] = f"{f.value ^ (1 << flip.bit):072x}"
    entry["steps"][f.step] = step
    meta["plan"][f.plan] = entry
    b = Bundle(b0.path)
    b.__dict__.update({k: v for k, v in b0.__dict__.items() if k != "meta"})
    b.__dict__["meta"] = meta
    return b


@dataclass
class Report:
    """Every flip's result, and the per-kind counts."""

    bundle: str
    results: list[Result] = field(default_factory=list)
    clean: tuple[str, str] = ("", "")

    def counts(self) -> dict[str, Counter]:
        """kind -> Counter of class names, outcome names and 'class/outcome' pairs, 'silent', 'contradicts'."""
        out: dict[str, Counter] = {}
        for r in self.results:
            c = out.setdefault(r.flip.kind, Counter())
            c["flips"] += 1
            c[r.flip.cls] += 1
            c[r.outcome] += 1
            c[f"{r.flip.cls}/{r.outcome}"] += 1
            c["silent"] += r.silent
            c["masked"] += r.masked
            c["contradicts"] += r.contradicts
        return out

    @property
    def silent(self) -> list[Result]:
        return [r for r in self.results if r.silent]

    @property
    def masked(self) -> list[Result]:
        return [r for r in self.results if r.masked]

    @property
    def contradictions(self) -> list[Result]:
        return [r for r in self.results if r.contradicts]


def select(flips: Sequence[Flip], sample: int | None, seed: int) -> list[Flip]:
    """All flips (sample None), or a seeded sample of `sample`, split evenly over the flit kinds (a kind with
    fewer bits gives all of them and its share goes to the others)."""
    if sample is None or sample >= len(flips):
        return list(flips)
    rng = random.Random(seed)
    by_kind: dict[str, list[Flip]] = {}
    for f in flips:
        by_kind.setdefault(f.kind, []).append(f)
    out: list[Flip] = []
    kinds = sorted(by_kind, key=lambda k: len(by_kind[k]))
    left = sample
    for i, k in enumerate(kinds):
        share = left // (len(kinds) - i)
        pick = by_kind[k] if len(by_kind[k]) <= share else rng.sample(by_kind[k], share)
        out += pick
        left -= len(pick)
    return sorted(out, key=lambda f: (f.pos, f.bit))


def damage(bundle_dir: str | Path, sample: int | None = None, seed: int = 0,
           runner: Callable[..., Run] = run_once,
           keep: Callable[[Flip], bool] | None = None) -> Report:
    """Flip the selected bits of one bundle one at a time and run each damaged copy (see the module doc);
    `keep`: only the flips it accepts (a kind, a field), before the sample is drawn."""
    b0 = Bundle(Path(bundle_dir))
    b0.check()
    machine = get_machine(b0.meta["machine"]["name"])
    ref = runner(b0, machine, None)
    report = Report(b0.name, clean=(ref.outcome, ref.why))
    if ref.outcome != "PASSED":
        raise ValueError(f"{b0.name}: the undamaged bundle does not pass on the models ({ref.outcome}: {ref.why}); "
                         f"damage needs a bundle that runs")
    budget = _Budget(RUNAWAY_FACTOR * ref.words + RUNAWAY_MARGIN, RUNAWAY_FACTOR * ref.deliveries + RUNAWAY_MARGIN)
    flits = staged_flits(b0.meta)
    flips = [f for f in flip_map(b0.meta) if keep is None or keep(f)]
    for flip in refine(b0.meta, select(flips, sample, seed)):
        got = runner(damaged(b0, flits, flip), machine, budget, clean=ref.fingerprint)
        report.results.append(Result(flip, got.outcome, got.why, got.differs))
    return report


def per_kind_counts(bundle_dir: str | Path, sample: int | None = None, seed: int = 0) -> dict[str, dict[str, int]]:
    """kind -> counts (flips, each class, each outcome, silent, contradicts): the figures `make fuzz` needs."""
    return {k: dict(c) for k, c in damage(bundle_dir, sample, seed).counts().items()}


def format_table(report: Report) -> str:
    """The per-kind table: bits by class, then flips by outcome, silent passes and contradictions."""
    counts = report.counts()
    head = ["kind", "flips", *CLASSES, *OUTCOMES, "silent", "masked", "contradicts"]
    rows = [head, ["---"] * len(head)]
    total: Counter = Counter()
    for kind in sorted(counts):
        c = counts[kind]
        total.update(c)
        rows.append([kind] + [str(c[k]) for k in head[1:]])
    rows.append(["all"] + [str(total[k]) for k in head[1:]])
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.fuzz.flit_damage", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", help="a bundle folder (clients/README.md)")
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--all", action="store_true", help="flip every bit of every staged flit")
    how.add_argument("--sample", type=int, default=1000, help="flips, split evenly over the kinds (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    args = ap.parse_args(argv)
    if not args.all and args.sample < 1:
        print(f"refused: --sample {args.sample}: give at least 1 flip (or --all)", file=sys.stderr)
        return 2
    if not (Path(args.bundle) / "bundle.json").is_file():
        print(f"refused: {args.bundle}: no bundle.json there; give a bundle folder (clients/bundles/...)",
              file=sys.stderr)
        return 2
    try:
        report = damage(args.bundle, None if args.all else args.sample, args.seed)
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(f"{report.bundle}: {len(report.results)} flip(s)" + ("" if args.all else f", seed {args.seed}"))
    print(format_table(report))
    for title, bad in (("silent pass", report.silent), ("masked", report.masked),
                       ("contradicts the map", report.contradictions)):
        shown = bad if title != "masked" else bad[:20]  # every defect is listed; MASKED flips by example
        for r in shown:
            print(f"{title}: flit {r.flip.pos} bit {r.flip.bit} ({r.flip.kind}, {r.flip.field}, {r.flip.cls}): "
                  f"{r.outcome} {r.why}")
        if len(bad) > len(shown):
            print(f"... and {len(bad) - len(shown)} more {title} flip(s)")
    return 1 if report.silent or report.contradictions else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Flip", "Report", "Result", "Run", "Runaway", "fingerprint", "credit_covered", "damage", "damaged", "flip_map",
           "refine", "format_table",
           "main", "per_kind_counts", "run_once", "select"]
