"""Compare one seed's run on Icarus with the same run on Verilator, test by test.

`python -m tb.run.simdiff [BUILD_ROOT]` reads the verdict lines (stats.jsonl) each bench
left in BUILD_ROOT/<bench>/ (Icarus) and BUILD_ROOT/verilator/<bench>/ after
`make SIM=icarus COCOTB_RANDOM_SEED=n` and `make SIM=verilator COCOTB_RANDOM_SEED=n`,
and prints, per bench, how many tests agree on (verdict, checks, simulated cycles)
and every test that does not. Both runs must have used the same run seed (the
verdict lines carry it); a bench run with another seed, or on one simulator only,
is named, not compared. Exit status 0 when every compared test agrees, 1 otherwise,
2 when nothing could be compared.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tb.run.benches import BENCHES
from tb.run.runner import BUILD_ROOT, STATS_FILE, bench_build_dir

Key = tuple[str, int, int]  # verdict, checks, cycles


@dataclass
class BenchDiff:
    bench: str
    compared: int = 0
    differ: dict[str, tuple[Key, Key]] = field(default_factory=dict)
    missing: str = ""  # why the bench was not compared


def read_stats(folder: Path) -> tuple[dict[str, Key], set[int]]:
    """{test: (verdict, checks, cycles)} and the run seeds of a bench's stats.jsonl (empty if none)."""
    path = folder / STATS_FILE
    if not path.exists():
        return {}, set()
    out: dict[str, Key] = {}
    seeds: set[int] = set()
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["test"]] = (rec["verdict"], int(rec["checks"]), int(rec["cycles"]))
            seeds.add(int(rec["run_seed"]))
    return out, seeds


def diff_bench(name: str, root: Path) -> BenchDiff:
    d = BenchDiff(name)
    ic, ic_seeds = read_stats(bench_build_dir(root, "icarus", name))
    vl, vl_seeds = read_stats(bench_build_dir(root, "verilator", name))
    if not ic or not vl:
        d.missing = f"no verdict lines on {'Icarus' if not ic else 'Verilator'}"
    elif ic_seeds != vl_seeds or len(ic_seeds) != 1:
        d.missing = f"run seeds differ (Icarus {sorted(ic_seeds)}, Verilator {sorted(vl_seeds)})"
    elif ic.keys() != vl.keys():
        d.missing = f"different tests ran ({len(ic)} on Icarus, {len(vl)} on Verilator)"
    else:
        d.compared = len(ic)
        d.differ = {t: (ic[t], vl[t]) for t in ic if ic[t] != vl[t]}
    return d


def format_diffs(diffs: list[BenchDiff]) -> str:
    lines = [f"{'bench':18s} {'tests':>5s} {'same':>5s}  differing (verdict, checks, cycles: Icarus -> Verilator)"]
    for d in diffs:
        if d.missing:
            lines.append(f"{d.bench:18s} {'-':>5s} {'-':>5s}  not compared: {d.missing}")
            continue
        shown = "; ".join(f"{t}: {a} -> {b}" for t, (a, b) in list(d.differ.items())[:4])
        more = f" (+{len(d.differ) - 4} more)" if len(d.differ) > 4 else ""
        lines.append(f"{d.bench:18s} {d.compared:5d} {d.compared - len(d.differ):5d}  {shown}{more}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else BUILD_ROOT
    diffs = [diff_bench(b.name, root) for b in BENCHES]
    print(format_diffs(diffs))
    compared = [d for d in diffs if not d.missing]
    if not compared:
        return 2
    return 0 if all(not d.differ for d in compared) else 1


if __name__ == "__main__":
    sys.exit(main())
