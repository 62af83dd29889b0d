"""The timed models on whole bundles against upstream's RTL (each bundle's timing_rtl.json): every round of
every bundle of clients/ within 1 %, an override moving a cluster round by what its rule says, the bits still
the golden models' (the bundle judge passes), and the table's lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.bundle.judge import judge
from models.bundle.reader import Bundle, client_bundle_dirs
from models.timed.machine import AXI_CYCLES
from models.timed.run import run_timed, table

WITHIN = 0.01  # a round's machine cycles against upstream's


@pytest.mark.parametrize("path", client_bundle_dirs(), ids=lambda p: p.name)
def test_rounds_keep_upstreams_clock(path: Path) -> None:
    """Every round of every bundle of clients/ (single kernels, scale/, model/) within 1 % of upstream's
    RTL (timing_rtl.json), its host cycles equal."""
    b = Bundle(path)
    name = b.name
    run = run_timed(b)
    ups = b.timing_rtl
    assert ups is not None and len(run.rounds) == len(ups)
    for ours, theirs in zip(run.rounds, ups):
        assert ours.host_cycles == theirs.host_cycles, (name, ours.round)
        assert abs(ours.machine_cycles / theirs.machine_cycles - 1) <= WITHIN, (name, ours.round, ours.machine_cycles,
                                                                                 theirs.machine_cycles)


def test_the_bits_are_the_golden_models() -> None:
    """The timed run passes the bundle judge the golden models pass (outputs bit for bit against
    expected_rtl.npz, counts and signals per round, the image outside the outputs)."""
    b = Bundle("linear_bias_m32k64n32")
    assert judge(b, run_timed(b).result) == []


def test_a_longer_cascade_lengthens_the_cluster_round() -> None:
    """CASCADE_LAT + 10: the matmul round's GEMM -> DRAIN wait (the sweep's tail) grows by 10 cycles."""
    b = Bundle("matmul_m32k64n32")
    base = run_timed(b).rounds[0].machine_cycles
    slow = run_timed(b, timing={"cluster.CASCADE_LAT": 27}).rounds[0].machine_cycles
    # the DRAIN's completion 10 edges later; the host sees it at its next poll read (one every AXI_CYCLES)
    assert 10 <= slow - base < 10 + AXI_CYCLES


def test_the_table_names_each_round_and_the_total() -> None:
    runs = [run_timed(Bundle("matmul_m32k64n32"))]
    lines = table(runs)
    assert any(line.startswith("matmul_m32k64n32") and " MG " in line for line in lines)
    assert lines[-1].startswith("all: machine cycles") and "1 of 1 rounds within 1 %" in lines[-1]
