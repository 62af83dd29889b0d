"""The counters a launch must leave (models.ahbm.expect), held against what other parts of the model do.

A batch's loads, composites, masks and pushes are predicted from the placement
formulas (kernel.predict_counts); here they are held against the reference
kernel actually run on random inputs (kernel.kv_parallel counts the tiles it
sweeps and the partials its reduction tree pushes), request by request summed.
Its pops are predicted from the tree (a rank pops once per child per unit):
summed over the ranks they must equal the pushes the kernel made. A ring's
come from the reference ring kernel's own run.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.ahbm import batch as batch_model
from models.ahbm import expect
from models.ahbm import kernel
from models.ahbm import launch

G, D, TILE = 8, 32, 8
KERNEL_COUNTS = {"cnt_k": "k_loads", "cnt_v": "v_loads", "cnt_comp": "composites", "cnt_mask": "masked",
                 "cnt_push": "pushes"}


def _bf16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_a_batch_predicts_what_the_reference_kernel_does(n: int) -> None:
    rng = np.random.default_rng(n)
    reqs = [batch_model.Request(40 + 9 * r, 39 + 9 * r, 1, r) for r in range(3)]
    reqs.append(batch_model.Request(64, 48, 16, 5, q_block=8))
    batch = batch_model.plan_batch(reqs, n, G, D, TILE)
    ranks = expect.batch_counters(batch)
    ran = [kernel.kv_parallel(_bf16(rng, G, req.tq, D), k := _bf16(rng, req.counter, D), k, req.q_start, n,
                              req.request_id, TILE, req.q_block, batch.first.mesh) for req in reqs]
    for rank, exp in enumerate(ranks):
        did = {c: sum(blk["pe"][rank][key] for res in ran for blk in res.per_block) for c, key in KERNEL_COUNTS.items()}
        assert {c: exp.counters[c] for c in KERNEL_COUNTS} == did, f"rank {rank}"
        assert exp.tiles_skipped == sum(blk["pe"][rank]["tiles_skipped"] for res in ran for blk in res.per_block)
    units = expect.batch_units(batch)
    assert units == sum(len(res.per_block) for res in ran) == 3 + 2  # three decodes, a prefill of two blocks
    pushed = sum(res.total("pushes") for res in ran)
    assert expect.batch_pushes(batch) == pushed
    assert sum(r.counters["cnt_pop"] for r in ranks) == pushed  # every partial pushed is popped once
    assert sorted(r.counters["cnt_store"] for r in ranks) == [0] * (n - 1) + [units]  # the root stores
    assert all(r.counters["cnt_q"] == units and r.counters["cnt_fault"] == 0 for r in ranks)


def test_a_ring_sends_and_receives_n_minus_one_blocks_and_pushes_nothing() -> None:
    rng = np.random.default_rng(3)
    seq, n = 24, 4
    q, k = _bf16(rng, G, seq, D), _bf16(rng, seq, D)
    rl = launch.plan_ring(seq, n, G, D, tile=TILE)
    ref = kernel.ring_prefill(q, k, k, n, rl.args[0].q_block, rl.args[0].tile)
    ranks = expect.ring_counters(rl, ref)
    links = [(r.counters["cnt_tx"], r.counters["cnt_rx"], r.counters["cnt_push"]) for r in ranks]
    assert links == [(n - 1, n - 1, 0)] * n
    assert sum(r.ring_steps_skipped for r in ranks) == n * (n - 1) // 2  # the causal ring skips half its steps
    assert "cnt_q" not in ranks[0].counters  # the scorer takes it from the program the run issued
