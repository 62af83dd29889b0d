"""Open a bench's waveform in GTKWave: `python -m tb.run.waves <bench> [test-regex]`.

`make waves BENCH=name` calls this after a run with WAVES=1, which leaves one
sim_build/<bench>/<test>/waves.fst per test with a waves.gtkw save file beside
it (tb.run.runner, tb.run.gtkw). Without a test regex the newest FST of the bench is
opened; with one (or COCOTB_TEST_FILTER, as the Makefile passes it), the newest
FST of a test whose name matches. When there is nothing to open, no gtkwave,
or no display, it says so and prints the files and the command to use.

Exit status: 0 opened (or, with no display or --print, paths printed);
1 gtkwave missing; 2 usage error, unknown bench or no FST.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tb.run.benches import BENCHES, ROOT, get_bench

BUILD_ROOT = ROOT / "sim_build"
SAVE_NAME = "waves.gtkw"


@dataclass(frozen=True)
class Dump:
    """One FST of a bench run, the test it belongs to, and its save file."""

    fst: Path
    test: str  # cocotb test name (from results.xml), or the folder name

    @property
    def gtkw(self) -> Path:
        return self.fst.with_name(SAVE_NAME) if self.fst.name == "waves.fst" else self.fst.with_suffix(".gtkw")

    @property
    def mtime(self) -> float:
        return self.fst.stat().st_mtime


def _test_names(folder: Path) -> list[str]:
    """Test names a folder's results.xml reports (empty if it has none)."""
    xml = folder / "results.xml"
    if not xml.exists():
        return []
    try:
        return [c.get("name", "") for c in ET.parse(xml).getroot().iter("testcase")]
    except ET.ParseError:
        return []


def find_dumps(bench: str, build_root: Path = BUILD_ROOT) -> list[Dump]:
    """Every FST of `bench` under build_root/<bench>/ (Icarus) and build_root/verilator/<bench>/, newest first."""
    dumps = []
    for base in (build_root / bench, build_root / "verilator" / bench):
        if not base.is_dir():
            continue
        for fst in list(base.glob("*.fst")) + list(base.glob("*/*.fst")):
            names = _test_names(fst.parent) if fst.parent != base else []
            dumps.append(Dump(fst=fst, test=names[0] if len(names) == 1 else fst.parent.name))
    return sorted(dumps, key=lambda d: d.mtime, reverse=True)


def select_dump(dumps: list[Dump], test_regex: str | None) -> Dump | None:
    """The newest dump whose test name (or folder name) matches, or the newest one."""
    if not test_regex:
        return dumps[0] if dumps else None
    pattern = re.compile(test_regex)
    for d in dumps:
        if pattern.search(d.test) or pattern.search(d.fst.parent.name):
            return d
    return None


def has_display() -> bool:
    """True when a GUI program can open a window here."""
    if sys.platform == "darwin" or os.name == "nt":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _command(d: Dump) -> list[str]:
    return ["gtkwave", str(d.fst), str(d.gtkw)]


def _show_files(d: Dump, out=sys.stdout) -> None:
    print(f"  test:      {d.test}", file=out)
    print(f"  waveform:  {d.fst}", file=out)
    print(f"  save file: {d.gtkw}", file=out)
    print(f"  command:   {' '.join(_shell_quote(a) for a in _command(d))}", file=out)


def _shell_quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_./=,:+-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.run.waves", description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="?", default=os.environ.get("BENCH", ""), help="bench name (tb/run/benches.py)")
    ap.add_argument("test", nargs="?", default=os.environ.get("COCOTB_TEST_FILTER", ""),
                    help="regex on the test name (default: the newest FST of the bench)")
    ap.add_argument("--print", dest="print_only", action="store_true",
                    help="print the files and the gtkwave command, do not open it")
    ap.add_argument("--build-root", type=Path, default=BUILD_ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    names = ", ".join(b.name for b in BENCHES)
    if not args.bench or "," in args.bench:
        with_waves = [b.name for b in BENCHES if find_dumps(b.name, args.build_root)]
        print("error: name one bench: make waves BENCH=<name>  (python -m tb.run.waves <bench> [test-regex])",
              file=sys.stderr)
        print(f"  benches with waveforms: {', '.join(with_waves) or 'none yet'}", file=sys.stderr)
        print(f"  all benches: {names}", file=sys.stderr)
        return 2
    try:
        bench = get_bench(args.bench)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    dumps = find_dumps(bench.name, args.build_root)
    run_hint = f"make SIM={os.environ.get('SIM') or 'icarus'} BENCH={bench.name} WAVES=1"
    if args.test:
        run_hint += f" COCOTB_TEST_FILTER='{args.test}'"
    if not dumps:
        print(f"error: no waveform for bench '{bench.name}' under {args.build_root / bench.name}/", file=sys.stderr)
        print(f"  run it with waves first: {run_hint}", file=sys.stderr)
        return 2
    dump = select_dump(dumps, args.test)
    if dump is None:
        print(f"error: no waveform of bench '{bench.name}' matches test regex '{args.test}'", file=sys.stderr)
        print("  waveforms there (newest first):", file=sys.stderr)
        for d in dumps:
            print(f"    {d.test}", file=sys.stderr)
        print(f"  or run that test with waves: {run_hint}", file=sys.stderr)
        return 2

    if not dump.gtkw.exists():  # a dump from an older run: make its save file now
        from tb.run.gtkw import write_save_file

        write_save_file(bench, dump.fst, dump.gtkw)
        print(f"wrote {dump.gtkw}")

    others = [d for d in dumps if d is not dump]
    if args.print_only:
        _show_files(dump)
        return 0
    gtkwave = shutil.which("gtkwave")
    if gtkwave is None:
        print("error: gtkwave is not installed (tools/bootstrap.sh --with-gtkwave, or: apt-get install gtkwave)",
              file=sys.stderr)
        _show_files(dump, sys.stderr)
        return 1
    if not has_display():
        print("no display (DISPLAY is not set), so GTKWave cannot open a window here.")
        print("Copy these files to a machine with a display, or log in with X forwarding (ssh -X), and run:")
        _show_files(dump)
        return 0
    print(f"opening {dump.test}: {dump.fst}")
    if others:
        print(f"  ({len(others)} other waveform(s) of {bench.name}; pick one with: "
              f"make waves BENCH={bench.name} COCOTB_TEST_FILTER=<regex>)")
    return subprocess.call([gtkwave, str(dump.fst), str(dump.gtkw)])


if __name__ == "__main__":
    sys.exit(main())
