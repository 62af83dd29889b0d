"""The run options make passes through the environment, read and refused in one place.

`make SIM=icarus` (tb.run.regress) and `make test` (the check before pytest:
`python -m tb.run.options`) read JOBS, WAVES, VERBOSE, the seed, the test filter,
the bench list and MODULE here, so a bad value is refused the same way by both:
before anything is built, in one line naming the value, what is accepted and
the fix (exit status 2), never with a traceback or silently replaced.
"""

from __future__ import annotations

import os
import random
import re
import sys

from tb.run.benches import BY_NAME, Bench

SEED_LIMIT = 2**32  # the per-test seeds are 32-bit (tb.lib.verdict.derive_seed)
YES = ("1", "yes", "true", "on")
NO = ("", "0", "no", "false", "off")
AUTO_JOBS = "auto"  # the Makefile's default: the machine's cores (pytest-xdist reads the same word)
WALL_ENV = "AGSIM_WALL_S"  # overrides every bench's wall-clock backstop (tb/run/benches.py max_wall_s)


class BadInput(ValueError):
    """An option refused before anything is built or simulated (one line: the value, the limit, the fix)."""


def env_flag(name: str) -> bool:
    """A yes/no environment variable: 1, yes, true, on mean yes; empty, 0, no, false, off mean no (any case);
    anything else is refused (WAVES=2 must not silently mean no)."""
    raw = os.environ.get(name, "").strip()
    if raw.lower() in YES:
        return True
    if raw.lower() in NO:
        return False
    raise BadInput(f"{name}={raw!r} is not a yes/no value; write {name}=1 (or yes/true/on) or {name}=0 "
                   f"(or no/false/off), or leave it out")


def parse_jobs(raw: str, cores: int | None = None) -> int:
    """A JOBS value (make's, or a command's --jobs): `auto` or empty mean the machine's cores, else a whole number
    from 1 up; BadInput in one line otherwise."""
    raw = raw.strip()
    cores = cores or os.cpu_count() or 1
    if raw in ("", AUTO_JOBS):
        return cores
    if not raw.isdigit() or int(raw) < 1:
        raise BadInput(f"JOBS={raw!r} is not a number of jobs; write JOBS=1, JOBS=2, ... (side by side, at least 1) "
                       f"or JOBS={AUTO_JOBS} for the machine's {cores} cores")
    return int(raw)


def jobs_from_env(cores: int | None = None) -> int:
    """JOBS as make passes it (:func:`parse_jobs`)."""
    return parse_jobs(os.environ.get("JOBS", ""), cores)


def wall_override() -> float | None:
    """AGSIM_WALL_S, the wall-clock backstop in seconds for every bench of this run (None: the table's)."""
    raw = os.environ.get(WALL_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value != value or value == float("inf"):
        raise BadInput(f"{WALL_ENV}={raw!r} is not a positive number of seconds; write e.g. {WALL_ENV}=7200, or "
                       f"leave it out for each bench's max_wall_s (tb/run/benches.py)")
    return value


def bench_wall_s(table_s: float) -> float:
    """The wall-clock budget of a bench in this run: AGSIM_WALL_S when given, else the table's max_wall_s.
    The runner's process backstop and the in-test wall watchdogs (tb.system.bench.guard, tb.noc.bench, tb.mag.bench)
    all use it, so one figure, generous on any healthy machine, bounds a bench's wall time."""
    return wall_override() or float(table_s)


def wall_budget(bench_name: str) -> float:
    """The wall budget inside a test of the bench called `bench_name` (a name outside the table, e.g. a
    machine bench run under another name, gets the table's default)."""
    bench = BY_NAME.get(bench_name)
    return bench_wall_s(bench.max_wall_s if bench else Bench.max_wall_s)


def seed_from_env() -> int:
    """COCOTB_RANDOM_SEED as a 32-bit seed, or a fresh random one when it is not given."""
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


MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def check_module(name: str) -> None:
    """MODULE, a cocotb test module of one's own run on a bench of the table (its top, sources and parameters):
    a dotted Python name that can be imported from the project folder or PYTHONPATH (cocotb imports it there)."""
    import importlib.util

    if not MODULE_NAME.match(name):
        raise BadInput(f"MODULE={name!r} is not a dotted Python module name; write the test file's module as "
                       f"Python imports it, e.g. MODULE=my_tb.test_reverse for my_tb/test_reverse.py")
    try:
        found = importlib.util.find_spec(name) is not None
    except ImportError:  # a parent package that is not there
        found = False
    if not found:
        raise BadInput(f"MODULE={name}: no such module in the project folder or on PYTHONPATH; save the test file "
                       f"there (e.g. my_tb/test_reverse.py for MODULE=my_tb.test_reverse) or add its folder to "
                       f"PYTHONPATH")


def check_make_test() -> None:
    """What `make test` passes on: SIM, JOBS (to pytest -n), WAVES, VERBOSE, the seed, the filter, the wall
    bound (raises BadInput, or ValueError for SIM)."""
    from tb.run.simulators import check_simulator

    check_simulator(os.environ.get("SIM", "").strip() or "icarus")
    jobs_from_env()
    env_flag("WAVES")
    env_flag("VERBOSE")
    if os.environ.get("COCOTB_RANDOM_SEED", "").strip():
        seed_from_env()
    check_filter(os.environ.get("COCOTB_TEST_FILTER", ""))
    wall_override()


def main() -> int:
    """`python -m tb.run.options`: 0 when make's variables are acceptable, else their one-line refusal and 2."""
    try:
        check_make_test()
    except ValueError as exc:  # BadInput, and check_simulator's refusal
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
