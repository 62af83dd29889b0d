"""The NoC sweep's reading of the load bench (tb/noc/sweep.py) and one real run on Icarus."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tb.noc import sweep

GOOD = """LOAD RESULT pattern=0 load=3277 created=800 refused=0 delivered=790 lat_n=780 lat_sum=7020 lat_max=19 in_flight=0 errors=0 cycles=5020
""" + "".join(f"LOAD SRC {s} sent=50 delivered={40 + s}\n" for s in range(16)) + """LOAD HOP 0 n=0 sum=0
LOAD HOP 1 n=100 sum=500
LOAD HOP 2 n=200 sum=1400
LOAD HOP 3 n=100 sum=900
LOAD PASS
"""


def test_a_passing_point_is_read_with_its_books() -> None:
    p = sweep.parse_point(GOOD, "uniform", 0.05, 32)
    assert (p.created, p.delivered, p.lat_max) == (800, 790, 19)
    assert p.mean_latency == pytest.approx(7020 / 780)
    assert p.accepted == pytest.approx(790 / (16 * sweep.MEASURE))
    assert p.source_rates()[0] == pytest.approx(40 / sweep.MEASURE)
    slope, icpt = sweep.per_hop_fit(p)  # 5, 7, 9 cycles at 1, 2, 3 hops
    assert slope == pytest.approx(2.0) and icpt == pytest.approx(3.0)


@pytest.mark.parametrize(("text", "why"), [
    (GOOD.replace("LOAD PASS", "LOAD FAIL 1 errors, the first: a flit's payload changed on the way"),
     "LOAD FAIL 1 errors, the first: a flit's payload changed"),
    (GOOD.replace("in_flight=0", "in_flight=3"), "3 flits never arrived"),
    (GOOD.replace("errors=0", "errors=2"), "2 errors"),
    ("", "printed no result"),
])
def test_a_failed_or_silent_point_fails_the_sweep_by_name(text: str, why: str) -> None:
    with pytest.raises(sweep.SweepError, match=why):
        sweep.parse_point(text, "hotspot", 0.5, 4)


def test_transpose_counts_only_the_nodes_that_send() -> None:
    p = sweep.parse_point(GOOD, "transpose", 0.05, 32)
    assert len(p.senders) == 12 and 0 not in p.senders and 5 not in p.senders


def test_the_load_bench_passes_and_measures_three_cycles_per_hop_on_icarus(tmp_path: Path) -> None:
    """One low-load uniform point in the real bench (Icarus, a short window)."""
    run = sweep.build(sweep.REFERENCE_DEPTH, "icarus", tmp_path)
    proc = subprocess.run(run + ["+load=3277", "+warmup=100", "+measure=600"],
                          capture_output=True, text=True, timeout=300)
    p = sweep.parse_point(proc.stdout, "uniform", 0.05, sweep.REFERENCE_DEPTH)
    assert p.lat_n > 300 and p.refused == 0
    slope, _ = sweep.per_hop_fit(p)
    assert 2.9 < slope < 3.3  # a router hop is 3 cycles at zero load (upstream's; the scoreboard's floor)


def test_a_bad_plusarg_is_refused_by_the_bench(tmp_path: Path) -> None:
    run = sweep.build(sweep.OLD_DEPTH, "icarus", tmp_path)
    proc = subprocess.run(run + ["+load=70000"], capture_output=True, text=True, timeout=60)
    with pytest.raises(sweep.SweepError, match=r"printed no result \(LOAD FAIL bad plusargs: load=70000 \(0..65536\)"):
        sweep.parse_point(proc.stdout, "uniform", 1.07, sweep.OLD_DEPTH)


def test_the_bench_checker_fails_on_a_corrupted_arrival(tmp_path: Path) -> None:
    run = sweep.build(sweep.OLD_DEPTH, "icarus", tmp_path)
    proc = subprocess.run(run + ["+load=6554", "+warmup=50", "+measure=200", "+corrupt_at=20"],
                          capture_output=True, text=True, timeout=120)
    with pytest.raises(sweep.SweepError, match="LOAD FAIL 1 errors, the first: a flit's payload changed on the way"):
        sweep.parse_point(proc.stdout, "uniform", 0.1, sweep.OLD_DEPTH)
