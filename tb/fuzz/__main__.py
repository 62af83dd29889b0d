"""``python -m tb.fuzz``: the damage families over bundles, a table per family, every defect by name (make fuzz).

Each bundle folder (default: every bundle of clients/) is copied and broken
one way per case (tb/fuzz/damage.py, the seed picks each family's random
choices), run through ``tb.client run --models`` and classified
(tb/fuzz/outcome.py). Printed: per family, the cases, how many were refused,
failed by the run's verdict (FAIL or NOT JUDGED), passed on a change
documented harmless, and the defects (a traceback, a hang, a silent pass on
changed meaning, a refusal not on one line or naming no file); then each
defect on a line. Exit status 1 when any defect was found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from models.bundle.reader import client_bundle_dirs
from tb.fuzz.damage import FAMILIES, damages
from tb.fuzz.outcome import HANG_S, Outcome, run_case


def fuzz(bundles: list[Path], seed: int, families: tuple[str, ...], hang_s: float = HANG_S,
         limit: int | None = None) -> list[Outcome]:
    """Every damage of `families` over `bundles` (at most `limit` per bundle), run and classified."""
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="agsim-fuzz-") as tmp:
        for src in bundles:
            for i, damage in enumerate(damages(src, seed, families)[:limit]):
                outcomes.append(run_case(src, damage, Path(tmp) / f"{src.name}-{i}", hang_s))
    return outcomes


def table(outcomes: list[Outcome]) -> str:
    """Per family: cases, refused, failed by verdict, harmless passes, defects."""
    rows = [f"{'family':12s} {'cases':>6s} {'refused':>8s} {'failed':>7s} {'harmless':>9s} {'defects':>8s}"]
    fams = sorted({o.damage.family for o in outcomes})
    for fam in fams + ["all"]:
        mine = [o for o in outcomes if fam in ("all", o.damage.family)]
        c = Counter(o.kind for o in mine if not o.defect)
        row = (len(mine), c["refused"], c["failed"] + c["not judged"], c["passed"], sum(1 for o in mine if o.defect))
        rows.append(f"{fam:12s} {row[0]:6d} {row[1]:8d} {row[2]:7d} {row[3]:9d} {row[4]:8d}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", type=Path, help="bundle folders (default: every bundle of clients/)")
    ap.add_argument("--seed", type=int, default=1, help="the families' random choices (default 1)")
    ap.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated of {', '.join(FAMILIES)}")
    ap.add_argument("--hang-s", type=float, default=HANG_S, help=f"a case's backstop in seconds (default {HANG_S:g})")
    args = ap.parse_args(argv)
    fams = tuple(f for f in args.families.split(",") if f)
    unknown = [f for f in fams if f not in FAMILIES]
    if unknown:
        print(f"refused: --families {','.join(unknown)}: unknown; known: {', '.join(FAMILIES)}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    outcomes = fuzz(args.dirs or client_bundle_dirs(), args.seed, fams, args.hang_s)
    print(f"damage fuzz, seed {args.seed}: {len(outcomes)} case(s) over {len({o.bundle for o in outcomes})} "
          f"bundle(s) in {time.monotonic() - t0:.0f} s")
    print(table(outcomes))
    bad = [o for o in outcomes if o.defect]
    for o in bad:
        print(f"DEFECT: {o.to_row()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
