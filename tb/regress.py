"""The main job: build and run every bench of the table, print one summary.

`make SIM=icarus` calls this. Options narrow it to one bench (BENCH=) or one
test (COCOTB_TEST_FILTER=); WAVES=1 gives each test its own FST and GTKWave
save file. Writes a merged results.xml at the repository root and exits
non-zero if any test failed, any bench failed to build or run, or no test ran.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import functools
import os
import random
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tb.benches import BENCHES, ROOT, get_bench
from tb.progress import Progress
from tb.runner import BenchResult, list_tests, run_bench
from tb.simulators import SimulatorMissing, check_simulator, compiler_version, verilator_root


def default_jobs() -> int:
    """JOBS (make's variable) when it is a number, else the machine's cores."""
    raw = os.environ.get("JOBS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else (os.cpu_count() or 1)


def env_flag(name: str) -> bool:
    """A yes/no environment variable: 1, yes, true, on (any case) mean yes."""
    return os.environ.get(name, "").strip().lower() in ("1", "yes", "true", "on")


SEED_LIMIT = 2**32  # the per-test seeds are 32-bit (tb.lib.verdict.derive_seed)


class BadInput(ValueError):
    """An option refused before anything is built or simulated (one line: the value, the limit, the fix)."""


def seed_from_env() -> int:
    raw = os.environ.get("COCOTB_RANDOM_SEED", "").strip()
    if not raw:
        return random.SystemRandom().randrange(1, 2**31)
    try:
        seed = int(raw, 10)
    except ValueError:
        raise BadInput(f"COCOTB_RANDOM_SEED={raw!r} is not a decimal integer; give the seed a run printed "
                       f"(e.g. COCOTB_RANDOM_SEED=1234), or leave it out for a random one") from None
    if not 0 <= seed < SEED_LIMIT:
        raise BadInput(f"COCOTB_RANDOM_SEED={seed} is outside 0..{SEED_LIMIT - 1}; give a 32-bit seed")
    return seed


def check_filter(pattern: str) -> None:
    """COCOTB_TEST_FILTER must compile as a Python regular expression (cocotb matches test names with it)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise BadInput(f"COCOTB_TEST_FILTER={pattern!r} is not a regular expression ({exc}); escape it (e.g. "
                       f"\\[ for a bracket) or list the names with `make tests BENCH=<bench>`") from None


def select_benches(spec: str, given: bool) -> list:
    """The benches BENCH names (comma-separated); all when BENCH is not given; an empty BENCH= is refused."""
    names = [n.strip() for n in spec.split(",")]
    if given and not any(names):
        raise BadInput("BENCH is set but empty; name one or more benches (`make list` shows them), or leave "
                       "BENCH out to run them all")
    if given and not all(names):
        raise BadInput(f"BENCH={spec!r} has an empty name between its commas; write BENCH=a,b")
    return [get_bench(n) for n in names if n] or list(BENCHES)


def replay_command(seed: int, benches: str = "", test_filter: str = "", sim: str = "icarus") -> str:
    """The make command that reruns exactly this selection with this seed on this simulator."""
    parts = [f"make SIM={sim}"]
    if benches:
        parts.append(f"BENCH={benches}")
    if test_filter:
        parts.append(f"COCOTB_TEST_FILTER='{test_filter}'")
    parts.append(f"COCOTB_RANDOM_SEED={seed}")
    return " ".join(parts)


def format_summary(results: list[BenchResult], seed: int, error_lines: dict[str, int] | None = None,
                   benches: str = "", test_filter: str = "", sim: str = "icarus") -> str:
    """The one-screen table: bench, passed/failed, checks, cycles, wall, cycles/s.

    `ERROR lines` counts lines containing ERROR in each bench's simulator logs:
    monitor self-tests produce some on purpose (their tests pass only if the
    monitor fired); elsewhere a non-zero count comes with a failed test.
    """
    error_lines = error_lines or {}
    head = (f"{'bench':18s} {'pass':>5s} {'fail':>5s} {'checks':>9s} {'sim cycles':>11s} {'wall s':>8s} "
            f"{'cycles/s':>10s} {'ERROR lines':>11s}")
    lines = ["", "=" * len(head), head, "-" * len(head)]
    for r in results:
        rate = f"{r.cycles / r.wall_s:10.0f}" if r.wall_s > 0 else f"{'-':>10s}"
        lines.append(f"{r.bench:18s} {r.passed:5d} {r.failed:5d} {r.checks:9d} {r.cycles:11d} {r.wall_s:8.1f} "
                     f"{rate} {error_lines.get(r.bench, 0):11d}")
    tot_p = sum(r.passed for r in results)
    tot_f = sum(r.failed for r in results)
    tot_c = sum(r.checks for r in results)
    tot_y = sum(r.cycles for r in results)
    tot_w = sum(r.wall_s for r in results)
    lines.append("-" * len(head))
    rate = f"{tot_y / tot_w:10.0f}" if tot_w > 0 else f"{'-':>10s}"
    lines.append(f"{'total':18s} {tot_p:5d} {tot_f:5d} {tot_c:9d} {tot_y:11d} {tot_w:8.1f} {rate}")
    lines.append("=" * len(head))
    for r in results:
        lines.extend(describe_failures(r))
    lines.append(f"seed {seed} (replay: {replay_command(seed, benches, test_filter, sim)})")
    lines.append(f"{tot_p} passed, {tot_f} failed")
    return "\n".join(lines)


SHOWN_CHECKS = 3  # failing checks shown per failed test (all of them are in its sim.log)


def describe_failures(r: BenchResult) -> list[str]:
    """Per failed test of `r`: its name, its first failing checks, where its logs are; for a bench that
    did not build or run, the error, the compiler's first error lines and the build log."""
    lines: list[str] = []
    if r.error:
        lines.append(f"FAILED {r.bench}: {r.error}")
        lines.extend(f"    | {e}" for e in r.build_errors)
    for t in r.tests:
        if t.passed:
            continue
        head = t.message.splitlines()[0] if t.message else "failed"
        lines.append(f"FAILED {r.bench}::{t.name}: {head}")
        checks = t.failures or [m.strip() for m in t.message.splitlines()[1:] if m.strip()]
        lines.extend(f"    - {c}" for c in checks[:SHOWN_CHECKS])
        if len(checks) > SHOWN_CHECKS:
            lines.append(f"    ... {len(checks) - SHOWN_CHECKS} more")
        logs = [f"sim.log {t.log}" if t.log else "", f"build.log {r.build_log}" if r.build_log else ""]
        if any(logs):
            lines.append("    logs: " + ", ".join(x for x in logs if x))
    return lines


def scan_error_lines(logs: list[Path]) -> list[str]:
    """Every line containing ERROR in the given simulator logs (this run's: BenchResult.sim_logs)."""
    found: list[str] = []
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            if "ERROR" in line:
                found.append(line.strip())
    return found


REPORT_TAG = "REPORT "


def scan_report_lines(logs: list[Path]) -> list[str]:
    """Lines a bench logged for the console with `REPORT ` (a table, a reference check count)."""
    found: list[str] = []
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            at = line.find(REPORT_TAG)
            if at >= 0:
                found.append(line[at + len(REPORT_TAG):].rstrip())
    return found


def print_tests(benches: list) -> None:
    """Each bench's test names as COCOTB_TEST_FILTER matches them (the module prefix left out)."""
    for bench in benches:
        names = [n.removeprefix(bench.test_module + ".") for n in list_tests(bench)]
        print(f"{bench.name}: {len(names)} test(s)")
        for n in names:
            print(f"  {n}")
    if benches and list_tests(benches[-1]):
        last = benches[-1]
        one = list_tests(last)[0].removeprefix(last.test_module + ".")
        print(f"run one: make SIM=icarus BENCH={last.name} COCOTB_TEST_FILTER='{re.escape(one)}$'")


def merge_results(results: list[BenchResult], out: Path) -> None:
    """One results.xml with a testsuite per bench, for CI viewers."""
    root = ET.Element("testsuites", name="agsim")
    for r in results:
        suite = ET.SubElement(root, "testsuite", name=r.bench, tests=str(len(r.tests) + bool(r.error)),
                              failures=str(r.failed))
        for t in r.tests:
            case = ET.SubElement(suite, "testcase", classname=r.bench, name=t.name,
                                 time=f"{r.wall_s / max(1, len(r.tests)):.3f}")
            if not t.passed:
                ET.SubElement(case, "failure", message=t.message[:2000] or "failed")
        if r.error:
            case = ET.SubElement(suite, "testcase", classname=r.bench, name="bench")
            ET.SubElement(case, "failure", message=r.error)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)


def _report(r: BenchResult, bench: Any, progress: Progress, error_lines: dict[str, int], verbose: bool,
            header: bool) -> BenchResult:
    """Print one finished bench: its line, progress, REPORT lines, and its ERROR lines if it failed."""
    if header:
        print(f"--- {bench.name}: {bench.description}", flush=True)
    status = "ok" if r.failed == 0 else "FAILED"
    print(f"    {r.passed} passed, {r.failed} failed, {r.checks} checks, {r.wall_s:.1f}s  {status}", flush=True)
    print(f"    {progress.done(bench.name, r.wall_s)}", flush=True)
    for line in scan_report_lines(r.sim_logs):
        print(f"    {line}", flush=True)
    found = scan_error_lines(r.sim_logs)
    error_lines[bench.name] = len(found)
    if r.failed and not verbose:
        for line in found[:20]:
            print(f"    {line}")
        if len(found) > 20:
            print(f"    ... {len(found) - 20} more ERROR lines in {', '.join(map(str, r.sim_logs))}")
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sim", default=os.environ.get("SIM", "icarus"))
    ap.add_argument("--bench", default=os.environ.get("BENCH", ""), help="comma-separated bench names")
    ap.add_argument("--filter", default=os.environ.get("COCOTB_TEST_FILTER", ""), help="test name regex")
    ap.add_argument("--waves", action="store_true", default=env_flag("WAVES"))
    ap.add_argument("--results", default=str(ROOT / "results.xml"))
    ap.add_argument("--list-tests", action="store_true",
                    help="print the test names of the selected benches (for COCOTB_TEST_FILTER) and exit")
    ap.add_argument("--build-root", type=Path, default=None, help=argparse.SUPPRESS)  # tests: a folder of their own
    ap.add_argument("--jobs", type=int, default=default_jobs(),
                    help="benches run side by side (default: JOBS, else the machine's cores; VERBOSE=1 runs one)")
    ap.add_argument("--verbose", action="store_true", default=env_flag("VERBOSE"),
                    help="stream simulator output to the console (default: each test folder's sim.log)")
    args = ap.parse_args(argv)

    try:
        given = bool(os.environ.get("AGSIM_BENCH_GIVEN")) or args.bench != ""
        benches = select_benches(args.bench, given)
        seed = seed_from_env()
        check_filter(args.filter)
        check_simulator(args.sim)
        if args.sim == "verilator":
            verilator_root()  # installed? (the message says how)
    except (ValueError, SimulatorMissing) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.list_tests:
        print_tests(benches)
        return 0
    jobs = 1 if args.verbose else max(1, min(args.jobs, len(benches)))  # streamed output stays one bench at a time
    print(f"running {len(benches)} bench(es) on {compiler_version(args.sim)}, seed {seed}, {jobs} at a time",
          flush=True)
    error_lines: dict[str, int] = {}
    job = "regress" if args.sim == "icarus" else f"regress-{args.sim}"
    progress = Progress(job, [b.name for b in benches], record=not args.filter, workers=jobs)
    run = functools.partial(run_bench, sim=args.sim, test_filter=args.filter or None, seed=seed, waves=args.waves,
                            log_to_file=not args.verbose,
                            **({"build_root": args.build_root} if args.build_root else {}))
    by_name: dict[str, BenchResult] = {}
    try:
        if jobs == 1:
            for bench in benches:
                print(f"--- {bench.name}: {bench.description}", flush=True)
                by_name[bench.name] = _report(run(bench), bench, progress, error_lines, args.verbose, header=False)
        else:
            # the longest benches first (the previous run's durations), so the last to finish is a short one
            order = sorted(benches, key=lambda b: -progress.previous.get(b.name, 0.0))
            with cf.ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(run, b): b for b in order}
                for fut in cf.as_completed(futures):
                    bench = futures[fut]
                    by_name[bench.name] = _report(fut.result(), bench, progress, error_lines, args.verbose,
                                                  header=True)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = [by_name[b.name] for b in benches]  # the summary keeps the table's order
    progress.save()
    merge_results(results, Path(args.results))
    print(format_summary(results, seed, error_lines, args.bench, args.filter, args.sim))
    ran = sum(len(r.tests) for r in results)
    if ran == 0:
        print("error: no test ran", file=sys.stderr)
        return 1
    return 0 if all(r.failed == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
