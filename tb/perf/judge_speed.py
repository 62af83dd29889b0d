"""The judge against the machine it judges: the golden models' seconds beside the RTL's, per bundle (make bench).

Why: the golden models judge every RTL run of a compiled program (bit for bit,
and the float64 bound derived from the program's own run, kernel by kernel) and
run alone with ``python -m tb.client run --models``; at model scale the check,
not the simulator, must not set the pace. So for every bundle of clients/
(clients/bundles, scale/, model/):

* **models seconds**: ``tb.client``'s ``--models`` run of the bundle in this
  process (the machine model's run, the derived bound, the judgement and its
  report; the per-process bound cache cleared first, so nothing is reused);
  beside it, **golden seconds**: the golden machine model's run alone
  (models.machine.event_model.run_bundle, the bit-exact judge without the
  bound's shadow), to show which part sets the pace;
* **RTL seconds**: the bundle's own test on the RTL machine on Verilator (build
  warm), in a second run of the corpus, when the golden results the test waits
  for are already cached beside it (tb/bundle/golden_ahead.py): the
  simulator's time, the host's Python and the judging;
* their ratio RTL / models, beside the target (at least 10: the judge ten times
  faster than the machine). A missed target is reported, not failed; a run that
  fails its checks fails the stage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from models.bundle import lane_bound
from models.bundle.reader import Bundle, client_bundle_dirs
from models.machine.event_model import run_bundle
from models.machine.layouts import get_machine
from tb.perf.compare import PERF_ROOT

JUDGE_ROOT = PERF_ROOT / "judge"
TARGET_RATIO = 10.0  # RTL seconds over models seconds, at least
TIMED_TARGET = 30.0  # RTL seconds over the timed models' seconds on the median bundle, at least


@dataclass
class JudgeSpeed:
    """One bundle: the golden models' seconds and the RTL's, and whether both passed."""

    bundle: str
    models_s: float
    rtl_s: float | None
    passed: bool
    golden_s: float | None = None
    timed_s: float | None = None  # the timed golden models alone (models/timed: the RTL's clock at model speed)

    @property
    def ratio(self) -> float | None:
        return None if self.rtl_s is None or self.models_s <= 0 else self.rtl_s / self.models_s


def models_seconds(bundles: list[Bundle]) -> dict[str, tuple[float, bool]]:
    """Each bundle's --models run in this process, nothing cached: (seconds, passed)."""
    from tb.client import run_models

    out = {}
    for b in bundles:
        lane_bound.forget(b)
        rep = run_models([b], JUDGE_ROOT / "models")[0]
        out[b.name] = (rep.wall_s, rep.passed)
    return out


def golden_seconds(bundles: list[Bundle]) -> dict[str, float]:
    """Each bundle's golden machine model run alone (no bound), in this process."""
    out = {}
    for b in bundles:
        t0 = time.monotonic()
        run_bundle(b, get_machine(b.meta["machine"]["name"]))
        out[b.name] = time.monotonic() - t0
    return out


def timed_seconds(bundles: list[Bundle]) -> dict[str, float]:
    """Each bundle on the timed golden models alone (models.timed.run.run_timed), CPU seconds, in this process."""
    from models.timed.run import run_timed

    return {b.name: run_timed(b).cpu_s for b in bundles}


def rtl_seconds(bundles: list[Bundle], seed: int) -> dict[str, tuple[float, bool]]:
    """Each bundle's own test on Verilator, the second of two runs (builds and golden results warm)."""
    from tb.client import run_rtl

    run_rtl(bundles, JUDGE_ROOT, seed, False, "verilator")  # warms the build and the golden results' cache
    return {r.bundle: (r.wall_s, r.passed) for r in run_rtl(bundles, JUDGE_ROOT, seed, False, "verilator")}


def format_speeds(rows: list[JudgeSpeed]) -> str:
    lines = [f"{'bundle':36s} {'models s':>9s} {'RTL s':>8s} {'RTL/models':>10s}  target >= {TARGET_RATIO:g}"
             f"   {'golden s':>8s} {'RTL/golden':>10s}   {'timed s':>8s} {'RTL/timed':>9s} (target >= {TIMED_TARGET:g})"]
    for r in rows:
        ratio = r.ratio
        met = "-" if ratio is None else ("yes" if ratio >= TARGET_RATIO else "NO ")
        g = "-" if r.golden_s is None else f"{r.golden_s:8.3f}"
        g_ratio = "-" if r.golden_s is None or r.rtl_s is None or r.golden_s <= 0 else f"{r.rtl_s / r.golden_s:10.1f}"
        t = "-" if r.timed_s is None else f"{r.timed_s:8.3f}"
        t_ratio = "-" if r.timed_s is None or r.rtl_s is None or r.timed_s <= 0 else f"{r.rtl_s / r.timed_s:9.1f}"
        lines.append(f"{r.bundle:36s} {r.models_s:9.2f} {'-' if r.rtl_s is None else f'{r.rtl_s:8.2f}':>8s} "
                     f"{'-' if ratio is None else f'{ratio:10.2f}':>10s}  {met}{'' if r.passed else ' (FAILED)':9s}"
                     f"   {g:>8s} {g_ratio:>10s}   {t:>8s} {t_ratio:>9s}")
    met = sum(1 for r in rows if r.ratio is not None and r.ratio >= TARGET_RATIO)
    total_m, total_r = sum(r.models_s for r in rows), sum(r.rtl_s or 0.0 for r in rows)
    lines.append(f"{'all':36s} {total_m:9.2f} {total_r:8.2f} {total_r / total_m if total_m else 0:10.2f}  "
                 f"{met} of {len(rows)} bundle(s) meet the target")
    timed = sorted(r.rtl_s / r.timed_s for r in rows if r.timed_s and r.rtl_s)
    if timed:
        median = timed[len(timed) // 2] if len(timed) % 2 else (timed[len(timed) // 2 - 1] + timed[len(timed) // 2]) / 2
        lines.append(f"the timed models: the RTL's cycles at {median:.1f}x its speed on the median bundle "
                     f"(target {TIMED_TARGET:g}x; {timed[0]:.1f}-{timed[-1]:.1f}x over {len(timed)} bundles)")
    return "\n".join(lines)


def judge_speed_main(seed: int = 1) -> int:
    """The table of the module doc; non-zero only if a run failed its checks."""
    bundles = [Bundle(p) for p in client_bundle_dirs()]
    rtl = rtl_seconds(bundles, seed)
    models = models_seconds(bundles)
    golden = golden_seconds(bundles)
    timed = timed_seconds(bundles)
    rows = [JudgeSpeed(b.name, models[b.name][0], rtl.get(b.name, (None, False))[0],
                       models[b.name][1] and rtl.get(b.name, (0.0, False))[1], golden[b.name], timed[b.name])
            for b in bundles]
    print("The judge against the machine: golden models (tb.client --models) beside the RTL on Verilator "
          "(builds and golden results warm), seconds per bundle")
    print(format_speeds(rows))
    return 0 if all(r.passed for r in rows) else 1


__all__ = ["JUDGE_ROOT", "JudgeSpeed", "TARGET_RATIO", "TIMED_TARGET", "format_speeds", "golden_seconds",
           "judge_speed_main", "models_seconds", "rtl_seconds", "timed_seconds"]
