"""The counters a launch must leave (models.ahbm.expect), held against what other parts of the model say.

A batch's pushes come from the placement formulas (kernel.predict_counts: every
rank but the root pushes once per unit) and its pops from the reduction tree
(a rank pops once per child per unit): two derivations that must agree, rank
by rank summed, with each other and with N - 1 per reduction. A ring's come
from the reference ring kernel's own run.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.ahbm import batch as bt
from models.ahbm import expect
from models.ahbm import kernel as kn
from models.ahbm import launch as la

G, D, TILE = 8, 32, 8


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_a_batch_pops_what_it_pushes_and_its_root_stores_every_unit(n: int) -> None:
    reqs = [bt.Request(40 + 9 * r, 39 + 9 * r, 1, r) for r in range(3)] + [bt.Request(64, 48, 16, 5, q_block=8)]
    batch = bt.plan_batch(reqs, n, G, D, TILE)
    ranks = expect.batch_counters(batch)
    units = expect.batch_units(batch)
    assert units == 3 + 2  # three decodes and a prefill of two query blocks
    pushes = sum(r.counters["cnt_push"] for r in ranks)
    assert pushes == expect.batch_pushes(batch) == (n - 1) * units
    assert sum(r.counters["cnt_pop"] for r in ranks) == pushes
    assert sorted(r.counters["cnt_store"] for r in ranks) == [0] * (n - 1) + [units]
    assert all(r.counters["cnt_q"] == units and r.counters["cnt_fault"] == 0 for r in ranks)
    assert all(r.counters["cnt_comp"] == r.composites == r.counters["cnt_k"] == r.counters["cnt_v"] for r in ranks)


def test_a_ring_sends_and_receives_n_minus_one_blocks_and_pushes_nothing() -> None:
    rng = np.random.default_rng(3)
    seq, n = 24, 4
    q = (rng.standard_normal((G, seq, D)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    k = (rng.standard_normal((seq, D)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    rl = la.plan_ring(seq, n, G, D, tile=TILE)
    ref = kn.ring_prefill(q, k, k, n, rl.args[0].q_block, rl.args[0].tile)
    ranks = expect.ring_counters(rl, ref)
    assert [(r.counters["cnt_tx"], r.counters["cnt_rx"], r.counters["cnt_push"]) for r in ranks] == [(n - 1, n - 1, 0)] * n
    assert sum(r.ring_steps_skipped for r in ranks) == n * (n - 1) // 2  # the causal ring skips half its steps
    assert "cnt_q" not in ranks[0].counters  # the scorer takes it from the program the run issued
