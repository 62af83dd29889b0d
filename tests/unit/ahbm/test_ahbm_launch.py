"""models/ahbm/launch.py: the kernel's tile walk from the driver arguments
agrees with the reference kernel's counts, and the slice image holds what the
walk's addresses point at."""

from __future__ import annotations

import numpy as np
import pytest

from models.ahbm import attention
from models.ahbm import kernel
from models.ahbm import launch
from models.ahbm import placement


def _data(seed, g, tq, s, d):
    rng = np.random.default_rng(seed)
    f = lambda *shape: (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return f(g, tq, d), f(s, d), f(s, d)


@pytest.mark.parametrize("counter,q_start,tq,n,rid,tile,qb", [
    (203, 202, 1, 8, 5, 8, None), (77, 76, 1, 1, 0, 16, None), (40, 0, 40, 1, 0, 8, 4),
    (37, 0, 37, 4, 3, 4, 8), (9, 8, 1, 8, 1, 4, None), (130, 0, 130, 2, 1, 32, 8)])
def test_walk_counts_match_reference(counter, q_start, tq, n, rid, tile, qb):
    groups = 8 if qb is None or qb <= 8 else 4
    lp = launch.plan(counter, q_start, tq, n, rid, groups=groups, d=32, tile=tile, q_block=qb)
    pred = kernel.predict_counts(counter, q_start, tq, n, rid, tile, qb, groups=groups)
    for r, args in enumerate(lp.args):
        for bi, bw in enumerate(launch.walk(args)):
            c = pred[bi][r]
            assert len(bw.tiles) == c["composites"] == c["k_loads"]
            assert bw.skipped == c["tiles_skipped"]
            assert sum(t.mask_addr is not None for t in bw.tiles) == c["masked"]


def test_refusals_name_the_limit():
    with pytest.raises(ValueError, match="power of two"):
        launch.plan(10, 9, 1, 3, 0, 8, 32, 8)
    with pytest.raises(ValueError, match="multiple of 32"):
        launch.plan(10, 9, 1, 1, 0, 8, 48, 8)
    with pytest.raises(ValueError, match="rows > 64"):
        launch.plan(40, 0, 40, 1, 0, 8, 32, 8, q_block=16)
    with pytest.raises(ValueError, match="1..128 keys"):
        launch.plan(40, 39, 1, 1, 0, 8, 32, 256)


def test_slice_image_holds_the_walk_operands():
    counter, tq, n, rid, tile, g, d = 45, 45, 2, 1, 8, 2, 32
    q, k, v = _data(3, g, tq, counter, d)
    lp = launch.plan(counter, 0, tq, n, rid, g, d, tile, q_block=8)
    for args in lp.args:
        img = launch.slice_image(args, q, k, v)
        mine = placement.place(counter, rid, n)[args.pe_id]
        u16 = lambda a, cnt: img[a:a + 2 * cnt].view(np.uint16)
        for bw in launch.walk(args):
            b = bw.block
            assert np.array_equal(u16(bw.q_addr, bw.rows * d).reshape(bw.rows, d),
                                  q[:, b.qs:b.qe].reshape(bw.rows, d))
            for t in bw.tiles:
                kk = u16(t.k_addr, t.keys * d).reshape(t.keys, d)
                assert np.array_equal(kk, k[mine[t.j * tile:t.j * tile + t.keys]])
                if t.mask_addr is not None:
                    st = launch.mask_stride(t.keys)
                    m = u16(t.mask_addr, bw.rows * st).reshape(bw.rows, st)
                    pos = mine[t.j * tile:t.j * tile + t.keys]
                    ref = placement.make_mask_tile(pos, b.qs, b.qe, g)
                    assert np.array_equal(m[:, :t.keys] == launch.BF16_NEG_INF, ref == -np.inf)
                    assert not m[:, t.keys:].any()
        assert img.size == launch.slice_bytes(args) and args.o_base % 64 == 0


def test_padded_masked_tile_equals_short_tile():
    """Why the kernel may issue a ragged last tile short and unmasked."""
    q, k, v = _data(4, 8, 1, 13, 32)
    rows = q[:, 0]
    st = attention.empty_state(8, 32)
    kp = np.zeros((16, 32), np.uint16); kp[:13] = k
    vp = np.zeros((16, 32), np.uint16); vp[:13] = v
    mask = np.zeros((8, 16), np.float32); mask[:, 13:] = -np.inf
    a = attention.attn_tile(rows, kp, vp, mask, st)
    b = attention.attn_tile(rows, k, v, None, st)
    for x, y in ((a.m, b.m), (a.l, b.l), (a.O, b.O)):
        assert np.array_equal(x.view(np.uint32), y.view(np.uint32))


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_ring_plan(n):
    seq, g, d = 7 * n - 3 if n > 1 else 7, 8, 32
    rl = launch.plan_ring(seq, n, g, d)
    for r, pe in enumerate(rl.pes):                 # consecutive ranks are 4-neighbours
        nxt = rl.pes[(r + 1) % n]
        if n > 1:
            assert abs(pe // 4 - nxt // 4) + abs(pe % 4 - nxt % 4) == 1
    q, k, v = _data(5, g, seq, seq, d)
    ref = kernel.ring_prefill(q, k, v, n)
    for a in rl.args:
        steps = launch.ring_walk(a)
        skipped = sum(st.kind == "future" for st in steps)
        assert skipped == ref.per_block[0]["pe"][a.rank]["ring_steps_skipped"] == n - 1 - a.rank
        assert [st.kind for st in steps].count("partial") == 1 and steps[0].kind == "partial"
        img = launch.ring_image(a, q, k, v)
        qs, qe = a.block(a.rank)
        kk = img[a.kv_own:a.kv_own + (qe - qs) * d * 2].view(np.uint16).reshape(qe - qs, d)
        assert np.array_equal(kk, k[qs:qe])
        vo = a.kv_own + a.v_offset(qe - qs)
        assert np.array_equal(img[vo:vo + (qe - qs) * d * 2].view(np.uint16).reshape(qe - qs, d), v[qs:qe])
        assert a.kv_bytes(qe - qs) % 64 == 0 and a.o_base + a.rows() * d * 2 <= launch.ring_slice_bytes(a)


def test_ring_refusals():
    with pytest.raises(ValueError, match="even N"):
        launch.ring_order(3, 2, 4)
    with pytest.raises(ValueError, match="rows > 64"):
        launch.plan_ring(200, 8, 8, 32, q_block=16)
    with pytest.raises(ValueError, match="one state set each"):
        launch.plan_ring(600, 8, 8, 32)
    with pytest.raises(ValueError, match="1..128 keys"):
        launch.plan_ring(64, 2, 8, 32, tile=129)
    with pytest.raises(ValueError, match="at least one token"):
        launch.plan_ring(3, 4, 8, 32)


@pytest.mark.parametrize("seq,n,qb,tile", [(50, 4, 4, 5), (200, 8, 8, 7), (60, 2, 8, 128)])
def test_ring_walk_matches_reference_counts(seq, n, qb, tile):
    """Sub-blocks x tiles: the walk's composites, masks and skips are the reference ring's."""
    g, d = 8, 32
    q, k, v = _data(6, g, seq, seq, d)
    ref = kernel.ring_prefill(q, k, v, n, q_block=qb, tile=tile)
    rl = launch.plan_ring(seq, n, g, d, q_block=qb, tile=tile)
    for a in rl.args:
        c = ref.per_block[0]["pe"][a.rank]
        steps = launch.ring_walk(a)
        assert sum(len(st.tiles) for st in steps) == c["composites"]
        assert sum(t.mask_addr is not None for st in steps for t in st.tiles) == c["masked"]
        assert sum(st.tiles_skipped for st in steps) == c["tiles_skipped"]
        assert sum(st.kind == "future" for st in steps) == c["ring_steps_skipped"]
        img = launch.ring_image(a, q, k, v)
        assert img.size == launch.ring_slice_bytes(a) <= a.o_base + a.rows() * d * 2 + 64 * len(a.subs())


def test_the_runtime_prefetch_latency_and_queue_depth_stay_within_the_build() -> None:
    from tb.ahbm.cube import DMA_LAT_ENV, IPCQ_DEPTH_ENV, PREFETCH_ENV, CubeConfigError, runtime_config

    built = {"PREFETCH": 4, "DMA_LAT": 400}
    assert runtime_config(built, {}) == built
    assert runtime_config(built, {PREFETCH_ENV: "1", DMA_LAT_ENV: "100"}) == {"PREFETCH": 1, "DMA_LAT": 100}
    with pytest.raises(CubeConfigError, match=r"AGSIM_CUBE_PREFETCH=5 is outside 1..4 \(the build's PREFETCH\); "
                                              r"build the CUBE with PREFETCH=5 or more"):
        runtime_config(built, {PREFETCH_ENV: "5"})
    with pytest.raises(CubeConfigError, match="AGSIM_CUBE_DMA_LAT=0 is outside 1..400"):
        runtime_config(built, {DMA_LAT_ENV: "0"})
    with pytest.raises(CubeConfigError, match="is not an integer"):
        runtime_config(built, {DMA_LAT_ENV: "fast"})
    from tb.ahbm.cube import check_bench_run_env

    check_bench_run_env({"AGSIM_BENCH": "ahbm_tightq", IPCQ_DEPTH_ENV: "8"})
    check_bench_run_env({"AGSIM_BENCH": "ahbm"})
    with pytest.raises(CubeConfigError, match=r"bench ahbm_tightq runs at AGSIM_CUBE_IPCQ_DEPTH=8 \(tb/run/benches.py\) "
                                              r"but its simulator process has AGSIM_CUBE_IPCQ_DEPTH=None"):
        check_bench_run_env({"AGSIM_BENCH": "ahbm_tightq"})
    deep = {"IPCQ_DEPTH": 1024}
    assert runtime_config(deep, {IPCQ_DEPTH_ENV: "8"}) == {"IPCQ_DEPTH": 8}
    with pytest.raises(CubeConfigError, match=r"AGSIM_CUBE_IPCQ_DEPTH=2048 is outside 1..1024 \(the build's IPCQ_DEPTH\)"):
        runtime_config(deep, {IPCQ_DEPTH_ENV: "2048"})
