"""``python -m models.timed DIR... [--timing FACT=VALUE ...]``: bundles on the timed models, each round's machine
cycles beside upstream's RTL (models/timed/run.py)."""

from __future__ import annotations

import argparse
import sys

from models.bundle.reader import Bundle
from models.machine.unit_timing import parse_overrides

from .run import run_timed, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.timed", description=__doc__)
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="bundle folders (clients/README.md format)")
    ap.add_argument("--timing", action="append", default=[], metavar="FACT=VALUE",
                    help="a timing fact of models/machine/unit_timing.py overridden (repeat for more)")
    args = ap.parse_args(argv)
    try:
        timing = parse_overrides(args.timing)
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    runs = [run_timed(Bundle(d), timing=timing) for d in args.dirs]
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
