"""tb/ahbm/decode_sweep.py, the pure-Python parts: the roofline, the metric arithmetic on
synthetic counters, the point read back from the test's JSON line, the table, the summary
line and the derived benches (no simulator)."""

from __future__ import annotations

import json

import pytest

from tb.ahbm import decode_sweep


def counters(**kw: int) -> dict[str, int]:
    base = {"cnt_comp": 8, "cyc_first": 400, "cyc_last": 4496, "cyc_mm": 2048, "cyc_vec": 1280,
            "cyc_wait": 300, "cyc_hidden": 3000, "dma_bytes": 264192, "dma_busy": 4128,
            "cyc_dma_first": 8, "cyc_dma_last": 4240}
    base.update(kw)
    return base


def test_roofline() -> None:
    assert decode_sweep.roofline_cycles(64, 128, 64) == 512  # K + V of 64 keys x 128 bf16 at 64 B/cycle
    assert decode_sweep.roofline_cycles(32, 128, 64) == 256
    assert decode_sweep.roofline_cycles(128, 128, 64) == 1024
    assert decode_sweep.roofline_cycles(64, 128, 32) == 1024


def test_pe_metrics_arithmetic() -> None:
    m = decode_sweep.pe_metrics(counters(), 64)
    assert m["span"] == 4096
    assert m["composites"] == 8
    assert m["cyc_per_tile"] == 512.0
    assert m["dma_frac"] == pytest.approx(264192 / (4232 * 64))
    assert m["dma_rate"] == 64.0
    assert m["hidden_frac"] == pytest.approx(3000 / 3328)
    assert m["wait"] == 300


def test_pe_metrics_refuses_no_span() -> None:
    with pytest.raises(ValueError):
        decode_sweep.pe_metrics(counters(cnt_comp=0), 64)
    with pytest.raises(ValueError):
        decode_sweep.pe_metrics(counters(cyc_last=400), 64)


def test_point_metrics_means_and_ratio() -> None:
    a = counters()                                          # 512 cycles/tile
    b = counters(cyc_last=400 + 8 * 640, cyc_hidden=1664)   # 640 cycles/tile, half hidden
    m = decode_sweep.point_metrics([a, b], 64, 128, 64)
    assert m["cyc_per_tile"] == 576.0
    assert m["cyc_per_tile_max"] == 640.0
    assert m["roofline"] == 512
    assert m["ratio"] == pytest.approx(576 / 512)
    assert m["hidden_frac"] == pytest.approx((3000 / 3328 + 0.5) / 2)
    assert m["span"] == (4096 + 5120) / 2
    assert len(m["per_pe"]) == 2
    with pytest.raises(ValueError):
        decode_sweep.point_metrics([], 64, 128, 64)


def _rec(prefetch: int, tile: int, verdict: str = "PASS", **prm: int) -> dict:
    params = {"PREFETCH": prefetch, "DMA_BW": decode_sweep.DMA_BW, "DMA_LAT": decode_sweep.DMA_LAT, "D": 128, **prm}
    return json.loads(json.dumps({"seed": 7, "tile": tile, "launch_cycles": 9000, "params": params,
                                  "verdict": verdict, "failures": ["O differs"] if verdict != "PASS" else [],
                                  "counters": [counters(), counters()]}))


def test_read_point() -> None:
    p = decode_sweep.read_point(2, 64, _rec(2, 64))
    assert p.passed and p.launch_cycles == 9000 and p.seed == 7
    assert p.metrics["ratio"] == pytest.approx(1.0)
    bad = decode_sweep.read_point(2, 64, _rec(2, 64, verdict="FAIL"))
    assert not bad.passed and "O differs" in bad.message
    stale = decode_sweep.read_point(3, 64, _rec(2, 64))      # a build of another PREFETCH
    assert not stale.passed and "PREFETCH=2" in stale.message
    assert not decode_sweep.read_point(2, 64, _rec(2, 64), dma_lat=400).passed  # the build had DMA_LAT 100
    assert decode_sweep.read_point(2, 64, _rec(2, 64, DMA_LAT=400), dma_lat=400).passed


def _pt(prefetch: int, tile: int, cyc_per_tile: float, hidden: float = 0.9) -> decode_sweep.Point:
    n = 512 // tile
    last = 400 + round(cyc_per_tile * n)
    c = counters(cnt_comp=n, cyc_last=last, cyc_hidden=round(hidden * 3328))
    return decode_sweep.Point(prefetch, tile, passed=True, launch_cycles=8000 + prefetch, wall_s=55.0,
                              metrics=decode_sweep.point_metrics([c], 64, 128, tile))


def test_format_table_rows() -> None:
    pts = [_pt(2, 64, 512.0), _pt(1, 64, 768.0), decode_sweep.Point(1, 32, message="build failed: boom")]
    lines = decode_sweep.format_table(pts).splitlines()
    assert lines[0].split()[:6] == ["P", "tile", "tiles/PE", "cyc/tile", "roofline", "meas/roof"]
    rows = lines[2:]
    assert rows[0].split()[:3] == ["1", "32", "FAILED:"] and "boom" in rows[0]      # sorted P, then tile
    r1 = rows[1].split()
    assert r1[:7] == ["1", "64", "8.00", "768.0", "512", "1.500", "97.5%"]   # 264192 B over 4232 DMA cycles
    assert r1[10] == "8001"
    r2 = rows[2].split()
    assert r2[:6] == ["2", "64", "8.00", "512.0", "512", "1.000"]
    assert r2[8] == "90.0%"


def test_summary_line_states_the_measurement() -> None:
    pts = [_pt(1, 32, 384.0), _pt(1, 64, 768.0), _pt(2, 64, 520.0), _pt(3, 64, 512.0)]
    s = decode_sweep.summary_line(pts)
    assert "prefetch 1: cycles/tile 1.50/1.50x the DMA roofline (tile 32/64), not within 10%" in s
    assert "prefetch >= 2 approaches the DMA roofline: cycles/tile 1.00-1.02x" in s
    assert "prefetch 1 -> 2 changes cycles/tile by -32.3% (tile 64)" in s       # 520 / 768 - 1
    assert "compute hidden under DMA 90% of MM+VEC cycles" in s
    far = decode_sweep.summary_line([_pt(2, 64, 700.0)])
    assert "does not come within 10% of the DMA roofline everywhere" in far and "1.37x" in far
    low = decode_sweep.summary_line([_pt(2, 64, 256.0)])      # 0.5x: "within 10%" holds on both sides
    assert "does not come within 10%" in low and "0.50x" in low
    same = decode_sweep.summary_line([_pt(1, 64, 500.0), _pt(2, 64, 500.0)])
    assert "already within 10%" in same and "by +0.0% (tile 64)" in same
    assert decode_sweep.summary_line([decode_sweep.Point(1, 64)]).startswith("measured: nothing")


def test_history_record() -> None:
    rec = decode_sweep.history_record(_pt(2, 64, 512.0), "abc123", when="2024-01-01T00:00:00+00:00")
    assert rec["bench"] == "ahbm_sweep" and rec["prefetch"] == 2 and rec["tile"] == 64 and rec["git"] == "abc123"
    assert rec["metrics"]["ratio"] == 1.0 and "per_pe" not in rec["metrics"]
    json.dumps(rec)


def test_sweep_bench_derivation() -> None:
    b = decode_sweep.sweep_bench()
    base = decode_sweep.get_bench(decode_sweep.BASE_BENCH)
    assert b.name == "ahbm_sweep" and b.test_module == decode_sweep.TEST_MODULE
    # one build for the sweep: the largest PREFETCH and DMA latency, each run picks its own at run time
    assert b.parameters["PREFETCH"] == max(decode_sweep.PREFETCHES) == 4 and b.parameters["DMA_BW"] == 64
    assert b.parameters["DMA_LAT"] == decode_sweep.LONG_DMA_LAT == 400
    assert b.parameters["D"] == 128 and b.toplevel == base.toplevel and b.sources == base.sources
    assert base.parameters["PREFETCH"] == 2                 # the table's bench is untouched


def test_a_point_the_build_cannot_run_is_refused() -> None:
    decode_sweep.check_point_config(4, 400)
    with pytest.raises(ValueError, match=r"AGSIM_CUBE_PREFETCH=5 is outside 1..4 \(the build's PREFETCH\)"):
        decode_sweep.check_point_config(5, 100)
    with pytest.raises(ValueError, match=r"AGSIM_CUBE_DMA_LAT=800 is outside 1..400"):
        decode_sweep.check_point_config(2, 800)
    assert decode_sweep.COUNTER >= 4096 and decode_sweep.COUNTER % (decode_sweep.N_PES * max(decode_sweep.TILES)) == 0


def test_the_whole_launch_roofline_is_the_kv_stream_plus_the_tree_levels() -> None:
    # 512 keys per PE: K and V of 512 x 128 bf16 at 64 B/cycle = 4096 cycles; 3 levels of a 521-word packet
    launch_roofline = decode_sweep.launch_roofline
    assert launch_roofline() == 4096 + 3 * 522 == 5662        # 521 words; the merge holds one more
    assert launch_roofline(n=1) == 2 * 4096 * 128 * 2 // 64  # one PE: no reduction
    assert launch_roofline(link_bits=256) == 4096 + 3 * 132  # a wider link moves the packet faster
    assert launch_roofline(link_bits=512) == 4096 + 3 * 131  # ... until the merge's 8 fp32 a cycle bound it
    assert launch_roofline(b=8) == 8 * 4096 + 3 * 522         # B requests: B K/V streams, one last reduction
    p = decode_sweep.Point(2, 64, passed=True, launch_cycles=8427, metrics={
        "composites": 8.0, "cyc_per_tile": 500.4, "roofline": 512, "ratio": 0.977, "dma_frac": 0.976,
        "dma_rate": 64.0, "hidden_frac": 0.891, "wait": 1033})
    assert f"{8427 / 5662:11.2f}" in decode_sweep.format_table([p])
