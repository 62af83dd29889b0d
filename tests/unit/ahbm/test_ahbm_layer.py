"""The layer run's mapping, refusals and report (models/ahbm/layer.py, tb/ahbm/layer.py), without a simulator:
every query head on the CUBE of its KV head exactly once; a context that does not fit refused in one line
before any build; the merged report's figures from the CUBEs' own counters, and a failed or missing CUBE
never reported as a layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.ahbm.layer import GQA, H_KV, H_Q, CubeAssignment, kv_bytes, layer_mapping, whole_layer
from tb.ahbm import layer


def test_the_mapping_puts_every_query_head_on_its_kv_heads_cube_once() -> None:
    cubes = layer_mapping()
    assert len(cubes) == H_KV == 8 and GQA == 8
    assert cubes[3] == CubeAssignment(3, 3, tuple(range(24, 32)))
    assert whole_layer(cubes)
    assert not whole_layer(cubes[:-1]), "a missing CUBE: heads 56-63 unanswered"
    swapped = [CubeAssignment(0, 0, cubes[1].query_heads), CubeAssignment(1, 1, cubes[0].query_heads)] + cubes[2:]
    assert not whole_layer(swapped), "heads answered by another KV head's CUBE"
    assert not whole_layer(cubes + [cubes[0]]), "a head answered twice"
    with pytest.raises(ValueError, match=r"cubes=9: a layer has 8 KV heads"):
        layer_mapping(9)


def test_kv_bytes_of_the_two_mappings() -> None:
    """K and V, bf16, of 8 KV heads x B requests x S tokens x d = 128; the one-query-head-per-CUBE mapping 8x."""
    got = kv_bytes(32_768, 2)
    assert got["batched"] == 8 * 2 * 2 * 32_768 * 128 * 2
    assert got["one_query_head_per_cube"] == 8 * got["batched"]


def words_by_layout(context: int, b: int) -> int:
    """A PE's slice words for b decode requests, from the layout (models/ahbm/launch.py), not from the planner:
    per request K and V of context / 8 keys x d = 128 bf16 (context words of 64 bytes), its Q block and its O
    block of G x d bf16 (32 words each) and the mask area's one word (a launch's masks take at least one)."""
    return b * (2 * (context // 8) * 128 * 2 // 64 + 32 + 32 + 1)


GIB_WORDS = (1 << 30) // 64


@pytest.mark.parametrize("context, b, tile, width, cubes, message", [
    (1 << 20, 16, 64, 256, 8, rf"^B=16 x 1,048,576 tokens needs {words_by_layout(1 << 20, 16):,} slice words a PE, "
                              rf"above the {GIB_WORDS:,} \(1 GiB\) the commands' 24-bit address fields reach in "
                              rf"64-byte words \(docs/ahbm.md §4\); run B <= {GIB_WORDS // words_by_layout(1 << 20, 1)} "
                              r"at this context$"),
    (1 << 24, 1, 64, 256, 8, rf"needs {words_by_layout(1 << 24, 1):,} slice words .* run a shorter context$"),
    (4, 1, 64, 256, 8, r"^context 4: at least 8 tokens"),
    (64, 0, 64, 256, 8, r"^B=0: at least one request"),
    (64, 1, 129, 256, 8, r"^tile 129: keys a tile are 1..128"),
    (64, 1, 64, 96, 8, r"^width 96: the IPCQ link is 64, 128, 256 or 512 bits"),
    (64, 1, 64, 256, 0, r"^cubes=0: a layer has 8 KV heads"),
])
def test_what_cannot_run_is_refused_in_one_line(context: int, b: int, tile: int, width: int, cubes: int,
                                                message: str) -> None:
    with pytest.raises(ValueError, match=message):
        layer.check_layer(context, b, tile, width, cubes)


def test_what_fits_gives_its_slice_words() -> None:
    for context, b in ((131_072, 1), (4_096, 8), (131_072, 8)):  # the last: 64 MiB a PE, word addresses
        assert layer.check_layer(context, b, 64, 256, 8) == words_by_layout(context, b), (context, b)


def test_the_build_is_shared_by_a_size_class_of_contexts() -> None:
    small, mid, big = (layer.layer_bench(256, w) for w in (33, 32_833, 131_137))
    assert small.parameters["WORDS"] == 8_192 and mid.parameters["WORDS"] == 65_536
    assert big.parameters["WORDS"] == 262_144 and big.name == "ahbm_layer_w256_k256"
    assert layer.layer_bench(256, 40_000).name == mid.name
    assert {b.parameters["ADDR_SHIFT"] for b in (small, mid, big)} == {0}, "16 MiB or less: byte addresses"


def test_a_slice_past_16_mib_is_addressed_in_words() -> None:
    b8 = layer.layer_bench(256, 262_664)
    assert b8.parameters["WORDS"] == 524_288 and b8.parameters["ADDR_SHIFT"] == 6


def rec(launch: int, dma: int, pushes: int) -> dict:
    """A CUBE's JSON line (tb/ahbm/test_sweep.py): 8 PEs, PE 7 the root whose last merge ends 50 cycles
    before the launch's end."""
    last = launch - 100
    counters = [{"cyc_last": last, "cnt_store": int(p == 7), "cnt_push": pushes if p < 7 else 0, "dma_bytes": dma,
                 "cnt_comp": 4, "cnt_score": 4 * 8 * 64, "cnt_merge": int(p % 2 == 1) + int(p % 4 == 3) + int(p == 7)}
                for p in range(8)]
    return {"start": 0, "end": launch, "counter": 4_096, "pes": list(range(8)), "counters": counters,
            "params": {"D": 128}, "activity": {"7": [[0, 2], [last, 6], [launch - 50, 7], [launch, 0]]}}


def test_cube_metrics_come_from_the_counters() -> None:
    m = layer.cube_metrics(rec(5_000, 65_536, 1), 256, 1)
    assert m["launch"] == 5_000 and m["reduction"] == 50 and m["red_share"] == pytest.approx(0.01)
    assert m["dma_roof"] == 4_096 / 8 * 128 * 2 * 2 // 64 and m["vs_dma"] == pytest.approx(5_000 / m["dma_roof"])
    assert m["dma_bytes"] == [65_536] * 8 and m["pushes"] == 7
    assert m["ipcq_bytes"] == 7 * (1 + 130) * 32, "a packet: header + 130 words of 256 bits at G=8, d=128"
    assert (m["composites"], m["scores"], m["merges"], m["stores"]) == (32, 8 * 4 * 8 * 64, 7, 1)


def result(a: CubeAssignment, launch: int, passed: bool = True) -> layer.CubeResult:
    if not passed:
        return layer.CubeResult(a, False, "scoreboard: O differs", 7, 1.0, log="sim.log")
    return layer.CubeResult(a, True, seed=1 + a.kv_head, wall_s=2.0, checks=127,
                            metrics=layer.cube_metrics(rec(launch, 65_536, 1), 256, 1))


def test_the_layer_is_its_slowest_cube_and_every_head() -> None:
    cubes = layer_mapping()
    results = [result(a, 5_000 + 10 * a.cube) for a in cubes]
    text = layer.format_layer(results, 4_096, 1, 256, 64)
    assert f"O checked: {H_Q} of {H_Q} query heads x 1 request(s)" in text and "NOT the whole layer" not in text
    assert "layer attention latency: 5,070 cycles (the slowest CUBE, 7; CUBEs 5,000-5,070)" in text
    assert "IPCQ 229.2 KiB in 56 (m,l,O) packet(s)" in text
    assert "bank bytes read: 4.00 MiB (0.06-0.06 MiB a PE over 64 PEs)" in text
    assert layer.layer_record(results, 4_096, 1, 256, 64, "icarus", 1.0, "here")["whole_layer"]


def test_a_failed_cube_is_reported_and_the_layer_is_not_whole() -> None:
    cubes = layer_mapping()
    results = [result(a, 5_000, passed=a.cube != 5) for a in cubes]
    text = layer.format_layer(results, 4_096, 1, 256, 64)
    assert "   5  5   40-47  FAILED: scoreboard: O differs (seed 7; log sim.log)" in text
    assert "O checked: 56 of 64 query heads" in text and "NOT the whole layer (1 CUBE(s) failed or were not run)" in text
    assert not layer.layer_record(results, 4_096, 1, 256, 64, "icarus", 1.0, "here")["whole_layer"]


def test_the_activity_log_is_sized_for_the_whole_launch() -> None:
    """The root's last merge is read from its activity log, so a long launch's log must not wrap: 8 entries a
    composite (6.1-6.2 measured) and 256 more, a power of two, never below the benches' 4,096."""
    assert layer.alog_depth(32_768, 1, 64) == 4_096  # 64 composites a PE
    assert layer.alog_depth(65_536, 8, 64) == 16_384  # 1,024 composites a PE: 8,448 entries
    assert layer.alog_depth(131_072, 8, 64) == 32_768
    b = layer.layer_bench(256, 524_808, layer.alog_depth(65_536, 8, 64))
    assert b.parameters["ALOG"] == 16_384 and b.name == "ahbm_layer_w256_k1024_a16"
    assert "_a" not in layer.layer_bench(256, 32_833).name, "the benches' log: the build name as before"


def test_a_bad_jobs_value_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JOBS read as `make` reads it (tb/run/options.parse_jobs), before any cluster or build."""
    assert layer.main(["--context", "64", "--jobs", "0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("refused: JOBS='0' is not a number of jobs")
    assert not list(tmp_path.iterdir())
