"""Run compiled bundles from the command line: ``python -m tb.client run DIR [DIR ...]``.

Why: a compiler engineer exports a program in the bundle format
(clients/README.md) and wants one answer: does it run on the machine as the
hardware would, round by round, and if not, where not. Each DIR is a bundle
folder (the ones of clients/bundles, or a user's own export).

* default: the RTL machine (the ``clients`` bench's top, built in
  ``sim_build/client/clients/``); every check of tb/bundle/test_clients.py,
  the golden models' run of the same plan judging the RTL bit for bit;
* ``--models``: the golden models alone (models/machine/event_model.py), in
  milliseconds; the machine model's clock is its network deliveries.
* ``--timing FACT=VALUE`` (repeatable; RTL only): a what-if, the machine
  built with timing facts of models/machine/unit_timing.py overridden, in a
  build folder of its own (``<build>/timing-<facts>/``, kept); the timing is
  compared with upstream's (speed-up = upstream's machine cycles / ours), not
  judged (docs/bundle.md, "Timing what-ifs").

Printed per bundle: the per-round table (round, unit, slots staged, flits
kicked, cycles, awaits met of awaits made; on the RTL the round's host cycles
and machine cycles, ours / upstream's from the bundle's ``timing_rtl.json``,
and the machine ratio ours / upstream; name), the first failures, the float64
bound line (worst ``|y - ref|`` / bound over the output lanes, the largest
bound, and its source: "derived", models/bundle/bound), the timing line (machine
cycles ours and upstream's, their ratio, the round farthest from 1; "no
timing" on the models, "no reference" without ``timing_rtl.json``) and a
verdict line (checks, lanes differing from ``expected_rtl.npz`` and from
``expected.npz``, cycles, wall seconds). Then, for several bundles, a table of
them (verdict, rounds, cycles, machine cycles ours and upstream's, ratio,
worst round), the timing judge's verdict (models/bundle/timing.py: a missed
target fails the command; with no ``timing_rtl.json`` in any bundle it is not
judged, which does not) and one closing line. The run's
``artifacts.npz`` (outputs observed and expected, signal counts, the report)
is written into the build folder and its path printed. Exit status: 0 only
when every bundle passed, 1 when one failed or was NOT JUDGED (no lane of an
output judged, or no output stated), 2 when the input was refused before
anything ran (one line naming the file, the field, the value and the fix;
docs/bundle.md, "Inputs that lie").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import numpy as np

from models.bundle import timing as bundle_timing
from models.bundle.files import folder_problem, present, shown_name
from models.bundle.hazard_reference import note_hazards
from models.bundle.reader import Bundle, BundleError
from models.bundle.judge import check_count, judge, reference
from models.bundle.report import (BundleReport, format_bound, format_kernels, format_program, format_rounds,
                                  format_summary, format_table, format_timing, format_verdict)
from models.bundle.executor import ExecResult, check_machine
from models.bundle.round_timing import RoundTiming
from models.bundle.golden import judged_run
from models.machine.layouts import MACHINES, get_machine
from models.machine.unit_timing import canonical, parse_overrides
from tb.bundle.cycle_limits import DEFAULT_MARGIN, MARGIN_ENV, MAX_CYCLES_ENV, override_env, wall_backstop_s
from tb.lib.artifacts import FILE_NAME, Artifacts, load
from tb.run.options import WALL_ENV, BadInput, wall_override
from tb.vector.hazard_counts import model_counts
from tb.run.runner import CaseResult, bench_build_dir
from tb.run.simulators import FLIT_TRACE_ENV, SIMULATORS, SimulatorMissing

CLIENT_BUILD = Path(__file__).resolve().parent.parent / "sim_build" / "client"
RTL_MACHINE = "fused4"  # the machine of the `clients` bench


class Refused(ValueError):
    """Input refused before anything ran."""


def resolve(dirs: list[str], rtl: bool) -> list[Bundle]:
    """Each DIR as a bundle, or Refused naming what is wrong with it and how to fix it."""
    out: list[Bundle] = []
    seen: dict[str, str] = {}
    for d in dirs:
        shown = shown_name(d)
        path = Path(os.path.realpath(Path(d).expanduser()))  # never raises on a symlink loop (Path.resolve does)
        why = folder_problem(path)
        if why is not None:
            raise Refused(f"{shown}: {why}")
        try:
            has_json = present(path / "bundle.json")
        except BundleError as exc:
            raise Refused(f"{shown}: {exc}") from None
        if not has_json:
            raise Refused(f"{shown}: no bundle.json in it; a bundle folder holds bundle.json, dram_in.npz and "
                          f"expected.npz (clients/README.md)")
        if path.name in seen:
            raise Refused(f"{shown}: a second bundle named {shown_name(path.name)} (the first is "
                          f"{shown_name(seen[path.name])}); the runs are named after their folders, rename one")
        seen[path.name] = str(path)
        b = Bundle(path)
        try:
            b.check()  # every file read and checked against the format (models/bundle/schema.py, arrays.py)
            name = b.meta["machine"]["name"]
            if name not in MACHINES:
                raise Refused(f"{shown}: bundle.json machine.name: unknown machine {shown_name(name)!r}; known "
                              f"machines: {', '.join(MACHINES)} (models/machine/layouts.py)")
            machine = get_machine(name)
            if rtl and machine.name != RTL_MACHINE:
                raise Refused(f"{shown}: compiled for machine {machine.name}; the RTL client bench is {RTL_MACHINE} "
                              f"(run it with --models, or compile for {RTL_MACHINE})")
            check_machine(b, machine)
        except Refused:
            raise
        except ValueError as exc:  # BundleError, MachineMismatch: each one line
            raise Refused(f"{shown}: {exc}") from None
        out.append(b)
    return out


def _timed_rounds(path: str, timing: dict[str, int]) -> tuple[list[dict], list[int], list[str]]:
    """A bundle on the timed golden models (models/timed), in a worker: each round's timing (RoundTiming as
    JSON), its cycles, and what the units' monitors recorded."""
    from models.timed.run import run_timed

    run = run_timed(Bundle(Path(path)), timing=timing)
    return ([r.timing.to_json() for r in run.result.rounds if r.timing is not None],
            [r.cycles for r in run.result.rounds], run.errors)


def _apply_timing(res: ExecResult, timed: tuple[list[dict], list[int], list[str]]) -> list[str]:
    """The timed models' round timing and cycles in place of the golden run's delivery counts; failures."""
    rounds, cycles, errors = timed
    if len(rounds) != len(res.rounds):
        return [f"timed models: {len(rounds)} round(s) timed of {len(res.rounds)}"]
    for r, t, c in zip(res.rounds, rounds, cycles):
        r.timing, r.cycles = RoundTiming.from_json(t), c
    res.cycles = sum(cycles)
    return [f"timed models: {e}" for e in errors]


def run_models(bundles: list[Bundle], build: Path, timing: dict[str, int] | None = None,
               timed: bool = True) -> list[BundleReport]:
    """Every bundle on the golden models; artifacts into `build`. `timed`: each round's host and machine
    cycles from the timed golden models (models/timed, with `timing`'s overrides), run in a worker process
    beside the judged run (the same plan, the same bits: a second clock, not a second judge)."""
    build.mkdir(parents=True, exist_ok=True)
    reports = []
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) if timed else None
    futures = {b.name: pool.submit(_timed_rounds, str(b.path), dict(timing or {})) for b in bundles} if pool else {}
    try:
        for b in bundles:
            reports.append(_run_model(b, build, futures.get(b.name), canonical(timing or {})))
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return reports


def _run_model(b: Bundle, build: Path, timed: Future | None, what_if: str = "") -> BundleReport:
    """One bundle's --models run (module doc of run_models)."""
    t0 = time.monotonic()
    machine = get_machine(b.meta["machine"]["name"])
    art = Artifacts(f"models/{b.name}", build)
    golden = judged_run(b, machine)  # the machine model and the derived bound from one run of the plan
    run = golden.model
    if run is None:
        rep = BundleReport(b.name, "models", False, [golden.model_error], [], 0, time.monotonic() - t0)
        art.add("report_json", json.dumps(rep.to_json()))
        art.save({"bundle": b.name, "verdict": "FAIL"})
        return rep
    res = run.result
    note_hazards(b, run.hazards)  # which expected set is normative follows from this run (H1)
    failures = judge(b, res)
    failures += [f"FAULT signal from {node}: code {code}" for node, code in run.faults]
    failures += [f"model error: {e}" for e in run.errors]
    checks = check_count(b, res) + 2  # judge()'s, then no FAULT signal and no model error
    if timed is not None:
        try:
            failures += _apply_timing(res, timed.result())
        except Exception as exc:  # the timed run's own failure, named
            failures.append(f"timed models: {type(exc).__name__}: {exc}")
        checks += 1
    rep = BundleReport.of_run(b, res, "models", failures, time.monotonic() - t0, checks,
                              {**{f"hazards_{hid.lower()}": n for hid, n in model_counts(run.hazards).items()},
                               "reference": reference(b), **({"timing_overrides": what_if} if what_if else {})},
                              timed=timed is not None)
    for name, reg in b.outputs.items():
        lo = reg.addr - b.image_base
        art.add(f"obs_{name}", run.image[lo:lo + reg.nbytes].view(np.uint16))
    art.add("report_json", json.dumps(rep.to_json()))
    art.save({"bundle": b.name, "verdict": "PASS" if rep.passed else "FAIL"})
    return rep


def timing_overrides(items: list[str], models: bool = False) -> dict[str, int]:
    """The --timing items as overrides (Refused in one line naming the fact, its limits and what it counts);
    on the RTL a machine built with them, on --models the timed models' facts (a combination their units
    refuse, as the RTL's do at elaboration, refused here too)."""
    try:
        timing = parse_overrides(items)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    if models and timing:
        from models.timed.run import check_timing

        try:
            check_timing(timing)
        except ValueError as exc:
            raise Refused(f"--timing {canonical(timing)}: {exc}") from None
    return timing


def what_if_build(build: Path, timing: dict[str, int]) -> Path:
    """The build folder of a run: `build` itself at upstream's timing, else a folder of its own keyed by the
    override set (`build`/timing-<facts in name order>), kept, so a second run of the same set builds nothing."""
    return build / f"timing-{canonical(timing)}" if timing else build


def run_rtl(bundles: list[Bundle], build: Path, seed: int | None, waves: bool,
            sim: str = "icarus", limit_env: dict[str, str] | None = None,
            timing: dict[str, int] | None = None) -> list[BundleReport]:
    """Every bundle on the RTL machine through the `clients` bench; reports read from its artifacts.
    `limit_env`: the cycle limits' overrides for the bench (tb/bundle/cycle_limits.py override_env);
    `timing`: the machine's timing overrides (a what-if; models/machine/unit_timing.py)."""
    from tb.run.benches import get_bench
    from tb.run.runner import run_bench
    from tb.bundle.test_clients import CLIENT_BUNDLES_ENV

    env = {CLIENT_BUNDLES_ENV: os.pathsep.join(str(b.path) for b in bundles), **(limit_env or {})}
    bench = get_bench("clients")
    grown = None
    if wall_override() is None:  # long programs: the backstop grows with them (a hung simulator, not a slow one)
        wall = wall_backstop_s(bundles, sim, bench.max_wall_s, {**os.environ, **env})
        if wall > bench.max_wall_s:
            grown = env[WALL_ENV] = f"{wall:.0f}"
    try:
        if grown is not None:  # the runner reads its process backstop here, the bench from `env`
            os.environ[WALL_ENV] = grown
        result = run_bench(bench, sim=sim, test_filter=r"test_bundle", seed=seed, waves=waves,
                           build_root=build, extra_env=env, log_to_file=True, timing=timing)
    finally:
        if grown is not None:
            os.environ.pop(WALL_ENV, None)
    found: dict[str, BundleReport] = {}
    for xml in result.results_files:
        path = xml.parent / FILE_NAME
        if not path.exists():
            continue
        for test, arrays in load(path).items():
            if "report_json" in arrays:
                rep = BundleReport.from_json(json.loads(str(arrays["report_json"])))
                meta = json.loads(str(arrays["meta"])) if "meta" in arrays else {}
                rep.passed = meta.get("verdict") == "PASS"  # the verdict after the monitors, as the bench's
                rep.failures = list(meta.get("failures", rep.failures))
                rep.checks = int(meta.get("checks", rep.checks))
                found[rep.bundle] = rep
    log = bench_build_dir(build, sim, "clients") / "sim.log"
    reports = []
    for b in bundles:
        if b.name in found:
            reports.append(found[b.name])
            continue
        case = next((t for t in result.tests if t.name.endswith(f"bundle={b.name}")), None)
        reports.append(BundleReport(b.name, "rtl", False, unreported_failures(case, result.error, log), [], 0, 0.0))
    if result.error:
        print(f"bench error: {result.error}", file=sys.stderr)
    return reports


def unreported_failures(case: CaseResult | None, error: str | None, log: Path) -> list[str]:
    """What a bundle test that wrote no report failed with: its verdict's failing checks (the lines under
    "N check(s) failed:", or the decoded ones the runner kept), else its message's first line, else the
    bench's error; the log's path on the first."""
    if case is None or not case.message:
        return [f"{error or 'no result'} (log: {log})"]
    lines = [ln.strip() for ln in case.message.splitlines() if ln.strip()]
    listed = case.failures or (lines[1:] if re.fullmatch(r"\d+ check\(s\) failed:", lines[0]) else [])
    if not listed:
        return [f"{lines[0]} (log: {log})"]
    return [f"{listed[0]} (log: {log})", *listed[1:]]


def print_report(rep: BundleReport, artifacts: Path) -> None:
    print(f"=== {rep.bundle} ({rep.machine})")
    if rep.rows:
        print(format_rounds(rep))
    for f in rep.failures[:10]:
        print(f"  FAILED: {f}")
    if len(rep.failures) > 10:
        print(f"  ... and {len(rep.failures) - 10} more (all in {artifacts})")
    if rep.lanes_vs_rtl is None and rep.rows and rep.extra.get("finished", True):  # a stopped run read no output
        print("  NOTE: no expected_rtl.npz in this bundle: its outputs are judged against the golden models' run "
              "only (RTL), or not bit for bit at all (--models)")
    if rep.rows:
        print(format_bound(rep))
        for line in format_program(rep):
            print(line)
        print(format_timing(rep))
        if len(rep.calls) > 1:
            print(format_kernels(rep))
    print(format_verdict(rep))


def print_timing(reports: list[BundleReport], what_if: str = "") -> bool:
    """The table over the bundles (when more than one ran) and the timing judge's verdict on an RTL run;
    whether the timing lets the command pass: met, or not judged (one's own export without timing_rtl.json,
    whose exit status is its bundles' verdicts; models/bundle/timing.py decides which)."""
    if len(reports) > 1:
        print(format_table(reports))
    if not any(rep.timed for rep in reports):
        print(f"timing: {bundle_timing.NO_TIMING} (the golden models have no clock of cycles)")
        return True
    verdict = bundle_timing.judge((rep.timing() for rep in reports), what_if=what_if)
    print("\n".join(verdict.lines()))
    return verdict.state is not bundle_timing.TimingState.NOT_MET


def print_flit_trace(b: Bundle, trace: Path, timing: dict[str, int]) -> None:
    """The RTL run's flit trace beside the timed models' (models/timed/trace.py): where the two clocks part."""
    from models.timed.run import run_timed, trace_lines

    if not trace.is_file():
        print(f"flit trace: {trace} was not written (the run stopped before the machine started)")
        return
    print(f"flit trace ({trace}) beside the timed models', per endpoint (models - RTL, cycles from the last "
          f"dispatched flit; the limit 1 % of the flit's round):")
    print("\n".join(trace_lines(run_timed(b, timing=timing, trace=True), trace)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.client", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run bundle folders on the RTL machine (or --models)")
    run.add_argument("dirs", nargs="+", metavar="DIR", help="bundle folders (clients/README.md format)")
    run.add_argument("--models", action="store_true", help="the golden models alone (no simulator)")
    run.add_argument("--seed", type=int, default=None, help="run seed of the RTL run (replay)")
    run.add_argument("--waves", action="store_true", help="RTL: one FST and GTKWave save file per bundle")
    run.add_argument("--sim", choices=SIMULATORS, default="icarus", help="RTL: the simulator (default icarus)")
    run.add_argument("--build", type=Path, default=CLIENT_BUILD, help=f"build folder (default {CLIENT_BUILD})")
    run.add_argument("--cycle-margin", metavar="X", help=f"RTL: the cycle limits' factor over upstream's cycles "
                     f"(default {DEFAULT_MARGIN:g}; sets {MARGIN_ENV}, tb/bundle/cycle_limits.py)")
    run.add_argument("--max-cycles", metavar="N", help=f"RTL: each bundle's whole limit in cycles (sets "
                     f"{MAX_CYCLES_ENV})")
    run.add_argument("--timing", metavar="FACT=VALUE", action="append", default=[],
                     help="a what-if: a timing fact of models/machine/unit_timing.py overridden (e.g. "
                          "vector.FETCH=2; repeat for more): on the RTL the machine built with it (its build kept in "
                          "a folder of its own), with --models the timed models' fact; the timing is compared with "
                          "upstream's, not judged")
    run.add_argument("--flit-trace", action="store_true",
                     help="RTL, one bundle: build the machine top with its flit trace (a build folder of its own) "
                          "and print where the RTL's flits and the timed models' part, endpoint by endpoint")
    args = ap.parse_args(argv)
    try:
        limit_env = override_env(args.cycle_margin, args.max_cycles)
        timing = timing_overrides(args.timing, args.models)
        bundles = resolve(args.dirs, rtl=not args.models)
        if args.flit_trace and (args.models or len(bundles) != 1):
            raise Refused(f"--flit-trace compares one bundle's RTL flits with the timed models'; "
                          f"{'--models has no RTL' if args.models else f'{len(bundles)} bundles given'}: "
                          f"run one bundle on the RTL")
    except (Refused, BadInput) as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    what_if = canonical(timing)
    if args.models:
        build = args.build / "models"
        if timing:
            print(f"timing what-if: the timed models with {what_if}")
        reports = run_models(bundles, build, timing)
        artifacts = build / FILE_NAME
    else:
        try:
            build = what_if_build(args.build, timing)
            if args.flit_trace:  # a build of its own: the traced top is another machine top
                build = build / "flit-trace"
                os.environ[FLIT_TRACE_ENV] = "1"  # read by the build (tb/run/simulators.py build_defines)
            if timing:
                print(f"timing what-if: the machine built with {what_if} (build folder {build})")
            try:
                reports = run_rtl(bundles, build, args.seed, args.waves, args.sim, limit_env, timing)
            finally:
                if args.flit_trace:
                    os.environ.pop(FLIT_TRACE_ENV, None)
        except SimulatorMissing as exc:
            print(f"refused: {exc}", file=sys.stderr)
            return 2
        artifacts = bench_build_dir(build, args.sim, "clients") / FILE_NAME
    for rep in reports:
        print_report(rep, artifacts)
    timing_ok = print_timing(reports, what_if)
    if args.flit_trace:
        print_flit_trace(bundles[0], artifacts.parent / "flit_trace.txt", timing)
    print(f"artifacts: {artifacts}" + ("" if not args.waves else " (one per bundle folder with --waves)"))
    print(format_summary(reports))
    return 0 if reports and all(r.passed for r in reports) and timing_ok else 1


if __name__ == "__main__":
    sys.exit(main())
