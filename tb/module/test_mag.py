"""Module bench of the memory agent (rtl/mag/mag.v) and its DRAM model.

The agent sits on the west edge (0,1) of a 2x1 mesh (rtl/harness/mag_harness.v);
every other endpoint is a bench port, so up to seven sources talk to it at once
and their flits interleave in the mesh. Each test predicts every response with
models/mag.py and judges the captures per destination: the exact set, and the
order the protocol guarantees (per requester, per writer). "hostile" runs add
random idle cycles at the sources and bursts of busy at the sinks.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models.flit import FlitType, pack_fields
from models.mag import rd_req, wr_data, wr_req
from tb.lib.harness import StallMode, StallPattern
from tb.lib.mag_tb import MagTB

HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 96), backpressure=StallPattern(StallMode.BURST, 48))
CALM: dict = {}
STALLS = {"none": CALM, "hostile": HOSTILE}

READ_REGION = 1024      # words 0..1023 hold random data for the read tests
WRITE_BASE = 1024       # source k writes into words WRITE_BASE + 256k ..


def _addr(tb: MagTB, word: int) -> int:
    """A byte address of `word`, with random low bits the agent must ignore."""
    return (word << 5) | tb.rng.randrange(32)


def _write_burst(tb: MagTB, src, txn: int, word: int, beats: int) -> list[int]:
    flits = [wr_req(tb.mag, src, txn, _addr(tb, word), beats - 1)]
    for b in range(beats):
        flits.append(wr_data(tb.mag, src, tb.rng.getrandbits(256), b == beats - 1, txn=tb.rng.getrandbits(8)))
    return flits


async def _finish(tb: MagTB, run, **kw) -> None:
    tb.check(run, **kw)
    tb.verdict.finish()


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_plain_reads(dut, stalls: str) -> None:
    """Plain reads of 1..256 beats of known DRAM content from every source at once."""
    tb = await MagTB.create(dut, f"test_plain_reads/stalls={stalls}")
    await tb.load_random(0, READ_REGION)
    sent: dict[int, list[int]] = {}
    for port in tb.ports:
        src = tb.coords[port]
        flits = []
        for _ in range(10):
            n = tb.rng.choice([1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 33])
            word = tb.rng.randrange(READ_REGION - n)
            flits.append(rd_req(tb.mag, src, tb.rng.getrandbits(8), _addr(tb, word), n - 1))
        sent[port] = flits
    sent[tb.ports[0]].append(rd_req(tb.mag, tb.coords[tb.ports[0]], 0x5A, _addr(tb, 100), 255))
    run = await tb.run(sent, **STALLS[stalls])
    await _finish(tb, run)


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_write_then_read(dut, stalls: str) -> None:
    """Run 1: writes of 1..8 beats from every source; run 2: read them back (also across sources)."""
    tb = await MagTB.create(dut, f"test_write_then_read/stalls={stalls}")
    regions: dict[int, list[tuple[int, int]]] = {}
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        word = WRITE_BASE + 256 * k
        flits: list[int] = []
        for beats in tb.rng.sample(range(1, 9), 8):
            flits += _write_burst(tb, src, tb.rng.getrandbits(8), word, beats)
            regions.setdefault(port, []).append((word, beats))
            word += beats + tb.rng.randrange(3)
        sent[port] = flits
    run1 = await tb.run(sent, **STALLS[stalls])
    tb.check(run1)
    await tb.check_dram(WRITE_BASE, 256 * len(tb.ports), "after the writes")

    reads: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        other = tb.ports[(k + 1) % len(tb.ports)]
        for word, beats in regions[port] + regions[other][:3]:
            reads.setdefault(port, []).append(rd_req(tb.mag, src, tb.rng.getrandbits(8), _addr(tb, word), beats - 1))
    run2 = await tb.run(reads, **STALLS[stalls])
    await _finish(tb, run2)


@cocotb.test()
async def test_interleaved_writes_bind_by_source(dut) -> None:
    """Every source writes 8-beat bursts at once; data binds to its descriptor by source only."""
    tb = await MagTB.create(dut, "test_interleaved_writes_bind_by_source")
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        sent[port] = []
        for i in range(6):
            sent[port] += _write_burst(tb, src, (16 * k + i) & 0xFF, WRITE_BASE + 256 * k + 8 * i, 8)
    run = await tb.run(sent, idle=StallPattern(StallMode.RANDOM, 128),
                       backpressure=StallPattern(StallMode.RANDOM, 64))
    tb.check(run)
    await tb.check_dram(WRITE_BASE, 256 * len(tb.ports), "after interleaved writes")
    # The test is only as strong as its interleaving: data flits of different
    # sources must have entered the mesh in the same stretch of cycles.
    spans = {}
    for port, flit, cycle in run.inject_times:
        if (flit >> 268) & 0xF == FlitType.MEM_WR_DATA:
            lo, hi = spans.get(port, (cycle, cycle))
            spans[port] = (min(lo, cycle), max(hi, cycle))
    overlapping = sum(1 for a in spans for b in spans if a < b and spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1])
    tb.verdict.check(overlapping >= len(spans) - 1,
                     f"only {overlapping} pairs of sources sent write data in overlapping cycles")
    tb.verdict.finish()


def _stream_request(tb: MagTB, src, txn: int, count: int, ew_field: int, peers=()) -> tuple[int, int]:
    """A stream read at a random place in the read region; returns (flit, words)."""
    ew = 4 if ew_field == 0 or ew_field > 4 else ew_field
    words = (count or 1) * ew
    word = tb.rng.randrange(READ_REGION - words)
    return rd_req(tb.mag, src, txn, _addr(tb, word), tb.rng.getrandbits(8), stream=True, count=count,
                  entry_words=ew_field, peers=peers), words


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_stream_reads(dut, stalls: str) -> None:
    """Stream reads: count 0..255, entry_words 0..255 (0 and >4 mean 4), txn+index, rsvd, last per entry."""
    tb = await MagTB.create(dut, f"test_stream_reads/stalls={stalls}")
    await tb.load_random(0, READ_REGION)
    sent: dict[int, list[int]] = {}
    counts = [0, 1, 2, 3, 5, 8, 13]
    ews = [0, 1, 2, 3, 4, 5, 7, 255]
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        flits = []
        for i in range(8):
            # txn near 255 so that txn + entry index wraps
            txn = tb.rng.choice([tb.rng.getrandbits(8), 0xFE, 0xFF])
            flits.append(_stream_request(tb, src, txn, counts[(k + i) % len(counts)], ews[(k * 3 + i) % len(ews)])[0])
        # a plain read mixed in: its beats are not entries
        flits.append(rd_req(tb.mag, src, 0x33, _addr(tb, tb.rng.randrange(READ_REGION - 8)), 6))
        sent[port] = flits
    # the largest stream: 255 entries of 4 words, txn wrapping
    sent[tb.ports[-1]].append(_stream_request(tb, tb.coords[tb.ports[-1]], 0xF0, 255, 4)[0])
    run = await tb.run(sent, **STALLS[stalls])
    await _finish(tb, run)


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_multicast(dut, stalls: str) -> None:
    """Stream reads with 1..3 peers (other bank ports): every entry to every destination in turn."""
    tb = await MagTB.create(dut, f"test_multicast/stalls={stalls}")
    await tb.load_random(0, READ_REGION)
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        others = [tb.coords[p] for p in tb.ports if p != port]
        flits = []
        for i in range(5):
            n_peer = 1 + (k + i) % 3
            peers = tb.rng.sample(others, n_peer)
            if i == 4:
                peers[-1] = src  # the requester named again as a peer gets everything twice
            flits.append(_stream_request(tb, src, tb.rng.getrandbits(8), tb.rng.choice([0, 1, 3, 6]),
                                         tb.rng.choice([1, 2, 3, 4]), peers)[0])
        sent[port] = flits
    run = await tb.run(sent, **STALLS[stalls])
    # Every destination must have heard from several requesters: the order check means something.
    per_dst = {dst: len(s) for dst, s in run.prediction.streams.items()}
    tb.verdict.check(min(per_dst.values()) >= 2 and len(per_dst) == len(tb.ports),
                     f"multicast traffic too thin to test interleaving: {per_dst}")
    await _finish(tb, run)


@cocotb.test()
async def test_unknown_types_dropped(dut) -> None:
    """Flits of every non-request type are taken and dropped (no response, no monitor); reads go on."""
    tb = await MagTB.create(dut, "test_unknown_types_dropped")
    await tb.load_random(0, 64)
    sent: dict[int, list[int]] = {}
    others = [FlitType.MEM_RD_RESP, FlitType.MEM_WR_ACK, FlitType.CU_INST, FlitType.CU_SIGNAL,
              FlitType.CU_CTRL, FlitType.CU_DATA, 0x9, 0xE, FlitType.ERROR]
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        flits = []
        for i, t in enumerate(others):
            flits.append(pack_fields({"dst_x": tb.mag[0], "dst_y": tb.mag[1], "src_x": src[0], "src_y": src[1],
                                      "type": int(t), "txn": i, "last": 1, "payload": tb.rng.getrandbits(256)}))
            if i % 3 == 0:
                flits.append(rd_req(tb.mag, src, i, _addr(tb, tb.rng.randrange(60)), 2))
        sent[port] = flits
    run = await tb.run(sent, **HOSTILE)
    tb.verdict.check(len(run.prediction.dropped) == len(others) * len(tb.ports),
                     "the model did not drop every non-request flit")
    await _finish(tb, run)


@cocotb.test()
async def test_backdoor_bytes(dut) -> None:
    """Bulk byte loads at unaligned addresses through the backdoor, read back in bulk and over the NoC."""
    tb = await MagTB.create(dut, "test_backdoor_bytes")
    await tb.load_random(0, 64)
    data = np.frombuffer(tb.rng.randbytes(700), dtype=np.uint8)
    await tb.dram.load_bytes(37, data)            # starts and ends inside words
    tb.model.dram.load_bytes(37, data.tobytes())
    back = await tb.dram.read_bytes(30, 720)
    want = np.frombuffer(tb.model.dram.read_bytes(30, 720), dtype=np.uint8)
    tb.verdict.check(np.array_equal(back, want), "bytes read back through the backdoor differ from the model")
    await tb.check_dram(0, 64, "after an unaligned byte load")
    src = tb.coords[tb.ports[0]]
    run = await tb.run({tb.ports[0]: [rd_req(tb.mag, src, 1, 0, 31)]})
    await _finish(tb, run)


# len_gt_7: a write descriptor with len 9; no_open: MEM_WR_DATA with no open write;
# second_wr: a second MEM_WR_REQ while the first is open; last_bad: `last` on the
# wrong beat; rd_past / wr_past: a read / write reaching past the end of the DRAM.
MONITOR_CASES = ["len_gt_7", "no_open", "second_wr", "last_bad", "rd_past", "wr_past"]


@cocotb.test()
@cocotb.parametrize(case=MONITOR_CASES)
async def test_monitor_fires(dut, case: str) -> None:
    """Each protocol violation must raise mon_err; the agent tolerates it as models/mag.py says."""
    tb = await MagTB.create(dut, f"test_monitor_fires/case={case}")
    await tb.load_random(0, 64)
    words = tb.dram.words
    port = tb.ports[1]
    src = tb.coords[port]
    m = tb.mag
    if case == "len_gt_7":
        bad = [wr_req(m, src, 7, _addr(tb, 200), 9)] + [wr_data(m, src, i, i == 9) for i in range(10)]
    elif case == "no_open":
        bad = [wr_data(m, src, 0xAB, True)]
    elif case == "second_wr":
        bad = [wr_req(m, src, 1, _addr(tb, 200), 3), wr_req(m, src, 2, _addr(tb, 300), 1)] + \
              [wr_data(m, src, i, i == 3) for i in range(4)]
    elif case == "last_bad":
        bad = [wr_req(m, src, 3, _addr(tb, 200), 3)] + [wr_data(m, src, i, i == 1) for i in range(4)]
    elif case == "rd_past":
        bad = [rd_req(m, src, 4, _addr(tb, words - 2), 3)]
    else:
        bad = [wr_req(m, src, 5, _addr(tb, words - 1), 1), wr_data(m, src, 1, False), wr_data(m, src, 2, True)]
    # Good traffic before and after, from this and another source: the agent must go on serving.
    sent = {
        port: [rd_req(m, src, 0x10, 0, 3)] + bad + _write_burst(tb, src, 0x11, 600, 2) + [rd_req(m, src, 0x12, 32, 1)],
        tb.ports[0]: [rd_req(m, tb.coords[tb.ports[0]], 0x20, 64, 7, stream=True, count=2, entry_words=2)],
    }
    run = await tb.run(sent, **HOSTILE)
    tb.verdict.check(bool(run.prediction.violations), f"{case}: the model predicts no violation")
    await _finish(tb, run, expect_monitor=True)
