"""Seeds, verdict lines and per-test statistics shared by every bench.

Every test ends with exactly one line `VERDICT PASS|FAIL bench=... test=...`
and one JSON record in stats.jsonl (read by tb.run.runner), so a test that dies
without a verdict is visible as such. Seeds are derived from the run seed
(COCOTB_RANDOM_SEED) and the test's name, so one test replays alone with
COCOTB_TEST_FILTER and the same seed.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

STATS_FILE = "stats.jsonl"


def run_seed() -> int:
    """The seed of the whole run (set by tb.run.runner), else cocotb's seed for this test.

    cocotb 2.1 gives each test RANDOM_SEED = run seed + a hash of the test's
    name, so only the run seed is worth printing as the replay value.
    """
    raw = os.environ.get("AGSIM_RUN_SEED", "")
    if raw.strip():
        return int(raw)
    import cocotb

    return int(cocotb.RANDOM_SEED)


def running_test_name(fallback: str) -> str:
    """The name cocotb gives the running test (the one results.xml will carry).

    A hand-written name can disagree with cocotb's (it names a parametrised test
    by index when a value is not a short identifier), and the runner matches
    verdicts to results by name, so the verdict takes cocotb's own, through
    public API only: ``cocotb.task.current_task()`` is the test's main task,
    which cocotb 2.1 names ``"Test <name>"``. Called outside a test, or if the
    name has another form, the caller's name is used.
    """
    try:
        from cocotb.task import current_task

        name = current_task().get_name()
    except (ImportError, RuntimeError):
        return fallback
    return name[len(TASK_PREFIX):] if name.startswith(TASK_PREFIX) else fallback


TASK_PREFIX = "Test "  # cocotb 2.1 names a test's main task "Test <test name>"


def derive_seed(run_seed: int, test_name: str) -> int:
    """A 32-bit seed for one test: depends on the run seed and the name only."""
    return (run_seed ^ zlib.crc32(test_name.encode())) & 0xFFFF_FFFF


@dataclass
class Verdict:
    """Collects checks for one test and writes its verdict exactly once."""

    bench: str
    test: str
    seed: int
    run_seed: int
    log: object
    checks: int = 0
    cycles: int = 0
    failures: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    # named reports that are not failures but must not pass unseen, e.g. "HAZARD H1": a place where the
    # upstream hardware would compute something else than the normative result we compute
    reports: dict[str, int] = field(default_factory=dict)

    def check(self, ok: bool, what: str) -> bool:
        """Count one check; a false one is recorded as a failure."""
        self.checks += 1
        if not ok:
            self.failures.append(what)
        return ok

    def setup(self, ok: bool, what: str) -> None:
        """A fact about the bench's own stimulus or model (not the device): counted as no check, but a
        false one fails the test at once as a set-up error, so a bench never runs on thin stimulus."""
        if not ok:
            raise AssertionError(f"set-up: {what}")

    def add_checks(self, n: int, errors: list[str]) -> None:
        """Fold in a block of checks made elsewhere (e.g. a scoreboard)."""
        self.checks += n
        self.failures.extend(errors)

    def report(self, name: str, line: str) -> None:
        """Log one named report line (e.g. ``HAZARD H1 pc=...``) and count it in the verdict."""
        self.reports[name] = self.reports.get(name, 0) + 1
        self.log.warning("%s", line)

    def _reports_text(self) -> str:
        return "".join(f" {k.replace(' ', '_')}={v}" for k, v in sorted(self.reports.items()))

    def meta(self, **extra: object) -> dict[str, object]:
        """The record an artifacts file keeps of this verdict (bench, test, seeds, verdict, checks,
        cycles, first failures), plus `extra` keys such as the machine."""
        return {"bench": self.bench, "test": self.test, **extra, "seed": self.seed, "run_seed": self.run_seed,
                "verdict": "FAIL" if self.failures else "PASS", "checks": self.checks, "cycles": self.cycles,
                "failures": self.failures[:20], "reports": dict(self.reports)}

    def finish(self) -> None:
        """Print the verdict, write the stats record, raise if anything failed."""
        status = "PASS" if not self.failures else "FAIL"
        wall = time.monotonic() - self.started
        self.log.info(
            "VERDICT %s bench=%s test=%s checks=%d cycles=%d wall=%.2fs seed=%d%s "
            "(replay: COCOTB_RANDOM_SEED=%d)",
            status, self.bench, self.test, self.checks, self.cycles, wall, self.seed, self._reports_text(),
            self.run_seed,
        )
        record = {
            "test": self.test, "bench": self.bench, "verdict": status, "checks": self.checks,
            "cycles": self.cycles, "wall_s": round(wall, 3), "seed": self.seed, "run_seed": self.run_seed,
            "failures": self.failures[:20], "reports": dict(self.reports),
        }
        with Path(os.getcwd(), STATS_FILE).open("a") as f:
            f.write(json.dumps(record) + "\n")
        if os.environ.get("AGSIM_COVER_OUT"):  # a regression's task: the process's coverage so far (tb.cover.db)
            from tb.cover.db import save_requested

            save_requested()
        if self.failures:
            shown = "\n  ".join(self.failures[:10])
            more = f"\n  ... and {len(self.failures) - 10} more" if len(self.failures) > 10 else ""
            raise AssertionError(f"{len(self.failures)} check(s) failed:\n  {shown}{more}")


def begin_test(bench: str, test_name: str, log: object) -> Verdict:
    """The verdict of the running test, its name taken from cocotb and its seed derived.

    Every bench class starts a test through this, so the name in stats.jsonl,
    the seed and the replay hint are made one way everywhere.
    """
    name = running_test_name(test_name)
    run = run_seed()
    seed = derive_seed(run, name)
    log.info("bench %s test %s seed %d (run seed %d)", bench, name, seed, run)
    return Verdict(bench, name, seed, run, log)
