"""Batched launches and appends to a cache (models/ahbm/batch.py): regions that do not overlap and hold
each request's own slice map; an appended cache equal to the cache a later launch would lay out."""

from __future__ import annotations

import numpy as np
import pytest

from models.ahbm import batch
from models.ahbm import launch

G, D, TILE = 8, 32, 16


def rand_bf16(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)


def test_regions_hold_each_request_alone() -> None:
    rng = np.random.default_rng(1)
    reqs = [batch.Request(100 + 7 * r, 99 + 7 * r, 1, r) for r in range(4)]
    b = batch.plan_batch(reqs, 4, G, D, TILE)
    for r in range(1, 4):
        assert b.offsets[r] == b.offsets[r - 1] + b.sizes[r - 1] and b.offsets[r] % 64 == 0
    data = [(rand_bf16(rng, G, 1, D), rand_bf16(rng, q.counter, D), rand_bf16(rng, q.counter, D)) for q in reqs]
    for rank in range(4):
        img = batch.batch_image(b, rank, data)
        for r, q in enumerate(reqs):
            alone = launch.plan(q.counter, q.q_start, q.tq, 4, q.request_id, G, D, TILE)
            want = launch.slice_image(alone.args[rank], *data[r])
            assert np.array_equal(img[b.offsets[r]:b.offsets[r] + want.size], want)
            a = b.launches[r].args[rank]
            for bw in launch.walk(a):
                for t in bw.tiles:
                    assert b.offsets[r] <= t.k_addr < b.offsets[r] + b.sizes[r]
            assert a.start_pe == q.request_id % 4


def test_batch_refusals() -> None:
    with pytest.raises(ValueError, match="at least one"):
        batch.plan_batch([], 2, G, D, TILE)
    with pytest.raises(ValueError, match="repeat"):
        batch.plan_batch([batch.Request(10, 9, 1, 3), batch.Request(12, 11, 1, 3)], 2, G, D, TILE)


@pytest.mark.parametrize("n,request_id", [(1, 0), (4, 1), (8, 5)])
def test_append_reaches_the_later_layout(n: int, request_id: int) -> None:
    """Cache laid out at counter c0, then tokens c0..c1 appended by the driver's writes: every rank's K
    and V regions equal those of the launch planned at c1 (same bases: the cache was sized once)."""
    rng = np.random.default_rng(n)
    c0, c1, cap = 37, 45, 64
    k, v = rand_bf16(rng, c1, D), rand_bf16(rng, c1, D)
    q = rand_bf16(rng, G, 1, D)
    early = launch.plan(c0, c0 - 1, 1, n, request_id, G, D, TILE, max_context=cap, max_tq=1)
    late = launch.plan(c1, c1 - 1, 1, n, request_id, G, D, TILE, max_context=cap, max_tq=1)
    for rank in range(n):
        a0, a1 = early.args[rank], late.args[rank]
        assert (a0.k_base, a0.v_base) == (a1.k_base, a1.v_base)
        img = launch.slice_image(a0, q, k[:c0], v[:c0])
        img = np.concatenate([img, np.zeros(max(0, launch.slice_bytes(a1) - img.size), np.uint8)])
        for r, addr, rows in batch.append_writes(late, request_id, c0, c1, k, v):
            if r == rank:
                launch.put_bf16(img, addr, rows)
        want = launch.slice_image(a1, q, k, v)
        assert np.array_equal(img[a1.k_base:a1.mask_base], want[a1.k_base:a1.mask_base])


def test_append_and_plan_refuse_past_capacity() -> None:
    lp = launch.plan(8, 7, 1, 2, 0, G, D, TILE, max_context=8, max_tq=1)
    k = np.zeros((12, D), np.uint16)
    with pytest.raises(ValueError, match="past its K region"):
        batch.append_writes(lp, 0, 8, 12, k, k)
    with pytest.raises(ValueError, match="max_context"):
        launch.plan(9, 8, 1, 2, 0, G, D, TILE, max_context=8, max_tq=1)
    with pytest.raises(ValueError, match="max_tq"):
        launch.plan(9, 7, 2, 2, 0, G, D, TILE, max_context=16, max_tq=1)
