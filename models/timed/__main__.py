"""``python -m models.timed DIR... [--timing FACT=VALUE ...]``: bundles on the timed models, each round's machine
cycles beside upstream's RTL (models/timed/run.py). Each run's bits are judged as ``tb.client run --models``
judges them (the bundle judge, the units' monitors): a run that fails is named and the exit status is 1, so no
figure of a wrong run passes unnoticed."""

from __future__ import annotations

import argparse
import sys

from pathlib import Path

from models.bundle.judge import judge
from models.bundle.reader import Bundle
from models.machine.unit_timing import parse_overrides

from .run import check_timing, run_timed, table, trace_lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.timed", description=__doc__)
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="bundle folders (clients/README.md format)")
    ap.add_argument("--timing", action="append", default=[], metavar="FACT=VALUE",
                    help="a timing fact of models/machine/unit_timing.py overridden (repeat for more)")
    ap.add_argument("--rtl-trace", type=Path, metavar="FILE",
                    help="one bundle: the RTL's flit_trace.txt (a run built with AGSIM_FLIT_TRACE=1), compared "
                         "flit by flit with the models' (models/timed/trace.py)")
    args = ap.parse_args(argv)
    try:
        timing = parse_overrides(args.timing)
        check_timing(timing)
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    if args.rtl_trace is not None and len(args.dirs) != 1:
        print(f"refused: --rtl-trace compares one bundle's flits; {len(args.dirs)} bundles given", file=sys.stderr)
        return 2
    if args.rtl_trace is not None and not args.rtl_trace.is_file():
        print(f"refused: --rtl-trace {args.rtl_trace}: no such file (run the bundle on the RTL with "
              f"AGSIM_FLIT_TRACE=1: the build folder's clients/flit_trace.txt)", file=sys.stderr)
        return 2
    runs = [run_timed(Bundle(d), timing=timing, trace=args.rtl_trace is not None) for d in args.dirs]
    print("\n".join(table(runs)))
    failed = 0
    for run in runs:
        failures = judge(run.bundle, run.result) + run.errors
        if failures:
            failed += 1
            print(f"FAILED {run.bundle.name}: {len(failures)} failure(s), the first: {failures[0]}")
    if args.rtl_trace is not None:
        print("\n".join(trace_lines(runs[0], args.rtl_trace)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
