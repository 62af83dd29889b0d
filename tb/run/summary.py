"""The main job's report: the summary table, the failures named with their logs, results.xml.

tb.run.regress prints these after the benches ran; the pytest wrappers reuse
describe_failures so a failed bench reads the same in both.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from tb.run.progress import fmt_s
from tb.run.runner import BenchResult


def replay_command(seed: int, benches: str = "", test_filter: str = "", sim: str = "icarus", module: str = "") -> str:
    """The make command that reruns exactly this selection (and one's own test module) with this seed on this
    simulator."""
    parts = [f"make SIM={sim}"]
    if benches:
        parts.append(f"BENCH={benches}")
    if module:
        parts.append(f"MODULE={module}")
    if test_filter:
        parts.append(f"COCOTB_TEST_FILTER='{test_filter}'")
    parts.append(f"COCOTB_RANDOM_SEED={seed}")
    return " ".join(parts)


def finished_line(r: BenchResult, *details: str) -> str:
    """The line a finished bench (the main job) or task (tb.farm) prints as it comes in: its counts, the
    `details` the run adds (time, cycles, host), its verdict; the two jobs' lines read alike."""
    return ", ".join([f"{r.passed} passed, {r.failed} failed, {r.checks} checks", *details]) + \
        f"  {'ok' if r.failed == 0 else 'FAILED'}"


def format_summary(results: list[BenchResult], seed: int, error_lines: dict[str, int] | None = None,
                   benches: str = "", test_filter: str = "", sim: str = "icarus", elapsed_s: float | None = None,
                   jobs: int = 1, not_run: Sequence[str] = (), seed_line: bool = True,
                   module: str = "") -> str:
    """The one-screen table: bench, passed/failed, checks, cycles, bench seconds, cycles/s; then the run's
    two times, named apart: elapsed (the wall clock of the whole run) and bench time summed (what the
    benches took, each its build and simulator, added up: more than elapsed when they ran side by side).

    `ERROR lines` counts lines containing ERROR in each bench's simulator logs:
    monitor self-tests produce some on purpose (their tests pass only if the
    monitor fired); elsewhere a non-zero count comes with a failed test.
    `not_run` names the benches an interrupt left unfinished or unstarted. `seed_line` False leaves out
    the run seed and its replay command (a farm run has a seed per row and prints a replay per failure).
    """
    error_lines = error_lines or {}
    w = max([18] + [len(r.bench) for r in results])  # the bench column: a farm's rows are longer (bench@seed[part])
    head = (f"{'bench':{w}s} {'pass':>5s} {'fail':>5s} {'checks':>9s} {'sim cycles':>11s} {'bench s':>8s} "
            f"{'cycles/s':>10s} {'ERROR lines':>11s}")
    lines = ["", "=" * len(head), head, "-" * len(head)]
    for r in results:
        rate = f"{r.cycles / r.wall_s:10.0f}" if r.wall_s > 0 else f"{'-':>10s}"
        lines.append(f"{r.bench:{w}s} {r.passed:5d} {r.failed:5d} {r.checks:9d} {r.cycles:11d} {r.wall_s:8.1f} "
                     f"{rate} {error_lines.get(r.bench, 0):11d}")
    tot_p = sum(r.passed for r in results)
    tot_f = sum(r.failed for r in results)
    tot_c = sum(r.checks for r in results)
    tot_y = sum(r.cycles for r in results)
    tot_w = sum(r.wall_s for r in results)
    lines.append("-" * len(head))
    rate = f"{tot_y / tot_w:10.0f}" if tot_w > 0 else f"{'-':>10s}"
    lines.append(f"{'total':{w}s} {tot_p:5d} {tot_f:5d} {tot_c:9d} {tot_y:11d} {tot_w:8.1f} {rate}")
    lines.append("=" * len(head))
    if elapsed_s is not None:
        lines.append(f"elapsed {fmt_s(elapsed_s)} ({elapsed_s:.1f} s, the whole run); bench time summed "
                     f"{fmt_s(tot_w)} ({tot_w:.1f} s over {len(results)} bench(es), {jobs} at a time)")
    for r in results:
        lines.extend(describe_failures(r))
    if not_run:
        lines.append(f"NOT RUN (interrupted): {', '.join(not_run)}")
    if seed_line:
        lines.append(f"seed {seed} (replay: {replay_command(seed, benches, test_filter, sim, module)})")
    lines.append(f"{tot_p} passed, {tot_f} failed" + (f", {len(not_run)} bench(es) not run" if not_run else ""))
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
