"""The timed golden models against the RTL, over the corpus and under one override of each fact family
(make bench).

Why: the timed models (models/timed) are a second clock only where they keep the RTL's: every round of every
bundle of clients/ within 1 % of the RTL's machine cycles, at upstream's timing and with a timing fact of each
family overridden (the vector core, the cluster, the memory agent, the DRAM, the orchestrator). For each set
this runs the corpus on the RTL on Verilator built with it (tb.client's what-if builds, kept) and on the timed
models, and prints per set the rounds within 1 % and the ratio's range, per bundle the summed cycles. A miss
is reported, not failed; a run that fails its checks fails the stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.bundle.models_beside import CLOSE
from models.bundle.reader import Bundle, client_bundle_dirs
from models.bundle.timing import within
from models.machine.unit_timing import parse_overrides
from tb.perf.compare import PERF_ROOT

MATRIX_ROOT = PERF_ROOT / "timed_matrix"
SETS: tuple[tuple[str, ...], ...] = ((), ("vector.FETCH=2",), ("cluster.CASCADE_LAT=27",), ("mag.QUANT_LAT=12",),
                                     ("dram.RD_LATENCY=8",), ("orch.TX_DEPTH=2",))


@dataclass
class SetResult:
    """One override set: (bundle, round, RTL cycles, models cycles) of every round, and whether all passed."""

    label: str
    rounds: list[tuple[str, int, int, int]]
    passed: bool

    @property
    def ratios(self) -> list[float]:
        return [m / r for _, _, r, m in self.rounds if r]

    def line(self) -> str:
        rs = self.ratios
        close = sum(1 for _, _, r, m in self.rounds if within(m, r, 100 * CLOSE))
        rtl, mod = sum(r for _, _, r, _ in self.rounds), sum(m for *_, m in self.rounds)
        return (f"{self.label:28s} {len(rs):4d} rounds, {close:4d} within {100 * CLOSE:g} % of the RTL; models / RTL "
                f"per round {min(rs):.3f}-{max(rs):.3f}, summed {mod:,} / {rtl:,} = {mod / rtl:.3f}"
                + ("" if self.passed else " (a run FAILED its checks)"))


def run_set(items: tuple[str, ...], bundles: list[Bundle], seed: int) -> SetResult:
    """The corpus on the RTL built with `items` (Verilator) and on the timed models with them."""
    from models.bundle.round_timing import RoundTiming
    from models.timed.run import run_timed
    from tb.client import run_rtl, what_if_build

    timing = parse_overrides(items)
    reports = run_rtl(bundles, what_if_build(MATRIX_ROOT, timing), seed, False, "verilator", None, timing)
    rows, passed = [], all(r.passed for r in reports)
    for b, rep in zip(bundles, reports):
        rtl = [RoundTiming.from_json(row.timing).machine_cycles for row in rep.rows if row.timing]
        models = [t.machine_cycles for t in run_timed(b, timing=timing).rounds]
        rows += [(b.name, i, r, m) for i, (r, m) in enumerate(zip(rtl, models))]
        passed &= len(rtl) == len(models)
    return SetResult(",".join(items) or "upstream's timing", rows, passed)


def timed_matrix_main(seed: int = 1) -> int:
    bundles = [Bundle(p) for p in client_bundle_dirs()]
    print("The timed golden models against the RTL on Verilator, per override set (machine cycles per round)")
    results = [run_set(items, bundles, seed) for items in SETS]
    for res in results:
        print(res.line(), flush=True)
    return 0 if all(r.passed for r in results) else 1


__all__ = ["SETS", "SetResult", "run_set", "timed_matrix_main"]
