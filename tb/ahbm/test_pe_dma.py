"""Module bench of pe_dma + pe_slice (rtl/bench/pe_dma_harness.v).

The slice is loaded in bulk through its backdoor, a request list is loaded in
bulk into the harness player, the run is awaited in coarse steps, and the logs
(taken cycle of each request, every delivered word with its cycle) are dumped
in bulk and checked against models/ahbm/dma.py bit for bit and cycle for cycle.
Monitor self-tests drive single requests from Python (a few cycles each).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import cocotb
from cocotb.triggers import FallingEdge, First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from models.ahbm.dma import (WORD_BYTES, DmaRequest, achieved_bw, request_data, request_error, schedule,
                             slice_words)
from tb.lib.harness import HarnessClock
from tb.lib.verdict import Verdict, begin_test

PERIOD_NS = 10  # harness_clock's default period


def _tb(dut, name: str) -> tuple[HarnessClock, Verdict, random.Random]:
    verdict = begin_test(os.environ.get("AGSIM_BENCH", "pe_dma"), name, dut._log)
    return HarnessClock(dut.u_clk), verdict, random.Random(verdict.seed)


def _params(dut) -> dict[str, int]:
    return {k: int(getattr(dut, k).value) for k in ("WORDS", "BW", "LAT", "QDEPTH", "NREQ", "NLOG", "NBUF", "BUF_WORDS")}


async def _handshake(clk, req, ack) -> None:
    await RisingEdge(clk)
    req.value = 1
    await RisingEdge(ack)
    req.value = 0
    await RisingEdge(clk)


def _hex_lines(path: Path) -> list[str]:
    return [ln for ln in (r.strip() for r in path.read_text().splitlines()) if ln and not ln.startswith(("//", "@"))]


async def _load_slice(dut, data: bytes) -> None:
    words = slice_words(data)
    (Path(os.getcwd()) / "pe_slice_load.hex").write_text("".join(f"{w:0128x}\n" for w in words))
    dut.u_slice.bd_lo.value = 0
    dut.u_slice.bd_hi.value = len(words) - 1
    await _handshake(dut.u_clk.clk, dut.u_slice.load_req, dut.u_slice.load_ack)


async def _dump_slice(dut, n: int) -> list[int]:
    dut.u_slice.bd_lo.value = 0
    dut.u_slice.bd_hi.value = n - 1
    await _handshake(dut.u_clk.clk, dut.u_slice.dump_req, dut.u_slice.dump_ack)
    return [int(ln, 16) for ln in _hex_lines(Path(os.getcwd()) / "pe_slice_dump.hex")]


async def _play(dut, reqs: list[DmaRequest], dues: list[int], timeout: int) -> int:
    """Load the request list, run the player until everything completed; cycles taken."""
    p = _params(dut)
    lines = [f"{due:08x}{r.addr:06x}{r.length:06x}{r.buf:02x}{r.tag:02x}\n" for r, due in zip(reqs, dues)]
    lines += ["0" * 24 + "\n"] * (p["NREQ"] - len(lines))
    (Path(os.getcwd()) / "pe_dma_plist.hex").write_text("".join(lines))
    await _handshake(dut.u_clk.clk, dut.plist_load_req, dut.plist_load_ack)
    dut.play_n.value = len(reqs)
    await FallingEdge(dut.u_clk.clk)
    dut.run.value = 1
    # One event for the whole run (Python never counts clock edges): done, or the bound.
    t0 = get_sim_time("ns")
    if not int(dut.play_done.value):
        await First(RisingEdge(dut.play_done), Timer(timeout * PERIOD_NS, "ns"))
    waited = int(get_sim_time("ns") - t0) // PERIOD_NS
    await FallingEdge(dut.u_clk.clk)
    dut.run.value = 0
    return waited


async def _dump_logs(dut, n_req: int) -> tuple[list[int], list[tuple[int, int, int, int, int, int]], list[str]]:
    await _handshake(dut.u_clk.clk, dut.log_dump_req, dut.log_dump_ack)
    wd = Path(os.getcwd())
    acc = [int(x, 16) for x in _hex_lines(wd / "pe_dma_acc.hex")[:n_req]]
    n_words = int(dut.n_words.value)
    words = []
    for ln in _hex_lines(wd / "pe_dma_wlog.hex")[:n_words]:
        v = int(ln, 16)
        data = v & ((1 << 512) - 1)
        meta = v >> 512
        idx, tag, buf, last, cyc = meta & 0xFFFFFF, (meta >> 24) & 0xFF, (meta >> 32) & 0xFF, (meta >> 40) & 1, meta >> 48
        words.append((cyc, buf, tag, idx, last, data))
    return acc, words, _hex_lines(wd / "pe_dma_tbuf.hex")


@cocotb.test()
async def test_stream_against_model(dut) -> None:
    """K/V tiles, a queue of short and long requests and gaps: data, order, cycles, counters, bandwidth."""
    clock, v, rng = _tb(dut, "test_stream_against_model")
    p = _params(dut)
    bw, lat, words_n = p["BW"], p["LAT"], p["WORDS"]
    await clock.reset()
    data = bytes(rng.getrandbits(8) for _ in range(words_n * WORD_BYTES))
    await _load_slice(dut, data)
    v.check(await _dump_slice(dut, words_n) == slice_words(data), "slice backdoor dump differs from the load")

    # A K tile then its V tile issued at once (two outstanding), then a K/V
    # prefetch of the next tile, then random short/long requests with gaps.
    tile = min(p["BUF_WORDS"], words_n // 4) * WORD_BYTES
    reqs = [DmaRequest(0, tile, 0, 1), DmaRequest(tile, tile, 1, 2),
            DmaRequest(2 * tile, tile, 2, 3), DmaRequest(3 * tile, tile, 3, 4)]
    dues = [0, 0, 1, 1]
    budget = p["NLOG"] - 4 * (tile // WORD_BYTES)
    t = 10
    while len(reqs) < p["NREQ"] - 1:
        n = rng.choice([1, 1, 2, 3, 8, 17, 64])
        if n > budget:
            break
        addr = rng.randrange(0, words_n - n + 1) * WORD_BYTES
        reqs.append(DmaRequest(addr, n * WORD_BYTES, rng.randrange(p["NBUF"]), len(reqs) + 1))
        t += rng.choice([0, 0, 0, 1, 5, lat // 2, lat + 20])
        dues.append(t)
        budget -= n
    total_words = sum(r.words for r in reqs)
    await _play(dut, reqs, dues, timeout=200_000)
    v.check(int(dut.play_done.value) == 1, "the run did not finish")
    acc, log, tbuf = await _dump_logs(dut, len(reqs))

    v.check(all(a >= d for a, d in zip(acc, dues)), "a request was taken before its due cycle")
    timing = schedule(reqs, acc, bw, lat)
    exp = [(tm.word_cycles[k], r.buf, r.tag, k, int(k == r.words - 1), w)
           for r, tm in zip(reqs, timing) for k, w in enumerate(request_data(data, r))]
    v.check(len(log) == total_words, f"{len(log)} words delivered, expected {total_words}")
    bad = [i for i, (a, b) in enumerate(zip(log, exp)) if a != b]
    for i in bad[:5]:
        dut._log.error("word %d: got cyc=%d buf=%d tag=%d idx=%d last=%d, expected cyc=%d buf=%d tag=%d idx=%d last=%d%s",
                       i, *log[i][:5], *exp[i][:5], "" if log[i][5] == exp[i][5] else " (data differs)")
    v.check(not bad, f"{len(bad)} delivered words differ from the model (data, order, cycle or last)")
    done_tags = [w[2] for w in log if w[4]]
    v.check(done_tags == [r.tag for r in reqs], "completions are not in request order")

    # counters
    v.check(int(dut.cnt_reqs.value) == len(reqs), "cnt_reqs")
    v.check(int(dut.cnt_done.value) == len(reqs), "cnt_done")
    v.check(int(dut.cnt_bytes.value) == total_words * WORD_BYTES, "cnt_bytes")
    busy = sum(tm.end - tm.start for tm in timing)
    v.check(int(dut.cnt_busy.value) == busy, f"cnt_busy {int(dut.cnt_busy.value)} != model {busy}")
    # bandwidth: a long tile moves at ~BW; the first four tiles stream back to back
    tile_bw = tile / (timing[0].end - timing[0].start)
    v.check(tile_bw >= 0.95 * bw, f"one tile achieved {tile_bw:.2f} B/cycle, BW {bw}")
    stream_bw = 4 * tile / (timing[3].done - timing[0].word_cycles[0] + 1)
    v.check(stream_bw >= 0.9 * bw, f"4 back-to-back tiles achieved {stream_bw:.2f} B/cycle end to end, BW {bw}")
    v.check(achieved_bw(reqs, timing) <= bw, "model exceeds BW")
    dut._log.info("BW=%d LAT=%d: tile %.2f B/cycle, stream %.2f B/cycle, overall %.2f B/busy cycle",
                  bw, lat, tile_bw, stream_bw, int(dut.cnt_bytes.value) / int(dut.cnt_busy.value))
    # overlap, measured on the delivered words: V (request 1) was taken while K
    # (request 0) was outstanding and its words follow K's with no bubble (its
    # latency was hidden behind K); the same for the next tile's K after V.
    first = {w[2]: w[0] for w in reversed(log)}
    done = {w[2]: w[0] for w in log if w[4]}
    gap = -(-WORD_BYTES // bw)
    v.check(acc[1] < done[1] and acc[2] < done[2], "fewer than two requests were outstanding")
    v.check(first[2] - done[1] == gap, f"V's first word came {first[2] - done[1]} cycles after K's last, not {gap}")
    v.check(first[3] - done[2] <= gap, "the next tile's prefetch did not stream right after V")
    if lat > gap:
        v.check(timing[1].start < timing[0].done, "V's transfer did not start before K completed")
    # the tile buffers hold the last word written to each slot
    last: dict[int, int] = {}
    for _, buf, _, idx, _, w in exp:
        if idx < p["BUF_WORDS"]:
            last[buf * p["BUF_WORDS"] + idx] = w
    v.check(all(int(tbuf[a], 16) == w for a, w in last.items()), "tile buffer contents differ")
    v.check(int(dut.mon_err.value) == 0, "a monitor fired on legal traffic")
    v.cycles = max(w[0] for w in log) + 1
    v.finish()


async def _direct(dut, req: DmaRequest | None) -> None:
    await FallingEdge(dut.u_clk.clk)
    if req is None:
        dut.py_valid.value = 0
        return
    dut.py_valid.value = 1
    dut.py_addr.value = req.addr
    dut.py_len.value = req.length
    dut.py_buf.value = req.buf
    dut.py_tag.value = req.tag


async def _monitor_case(dut, v: Verdict, clock: HarnessClock, bad: DmaRequest, fill: int, what: str) -> None:
    await clock.reset()
    long = DmaRequest(0, 64 * WORD_BYTES)
    for _ in range(fill):  # careful requests: only while ready
        await _direct(dut, long)
        v.check(int(dut.req_ready.value) == 1, f"{what}: queue full too early")
        await RisingEdge(dut.u_clk.clk)
    await _direct(dut, None)
    v.check(int(dut.mon_err.value) == 0, f"{what}: monitor fired before the fault")
    if fill:
        v.check(int(dut.req_ready.value) == 0, f"{what}: queue not full after {fill} requests")
    before = int(dut.cnt_reqs.value)
    await _direct(dut, bad)
    await RisingEdge(dut.u_clk.clk)
    await _direct(dut, None)
    await RisingEdge(dut.u_clk.clk)
    v.check(int(dut.mon_err.value) == 1, f"{what}: mon_err did not rise")
    v.check(int(dut.cnt_reqs.value) == before, f"{what}: the bad request was taken")
    await clock.reset()
    v.check(int(dut.mon_err.value) == 0, f"{what}: reset did not clear mon_err")


@cocotb.test()
async def test_monitors(dut) -> None:
    """Misaligned, out-of-range and queue-full requests each raise mon_err; reset clears it."""
    clock, v, _ = _tb(dut, "test_monitors")
    p = _params(dut)
    size = p["WORDS"] * WORD_BYTES
    cases = [(DmaRequest(32, 64), 0, "misaligned address"), (DmaRequest(0, 100), 0, "misaligned length"),
             (DmaRequest(0, 0), 0, "zero length"), (DmaRequest(size - 64, 128), 0, "past the slice"),
             (DmaRequest(size, 64), 0, "address past the slice")]
    for req, _, what in cases:
        v.check(request_error(req, size) is not None, f"model accepts {what}")
    # queue full: one request enters the engine, QDEPTH wait in the queue
    cases.append((DmaRequest(0, 64), p["QDEPTH"] + 1, "request while the queue is full"))
    for req, fill, what in cases:
        await _monitor_case(dut, v, clock, req, fill, what)
    v.cycles = 40 * len(cases)
    v.finish()
