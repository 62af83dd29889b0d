"""Module bench of the memory agent (rtl/mag/mag.v, its quantiser rtl/mag/mag_quant.v) and its DRAM model.

The agent sits on the west edge (0,1) of a 2x1 mesh (rtl/bench/mag_harness.v);
every other endpoint is a bench port, so up to seven sources talk to it at once
and their flits interleave in the mesh. Each test predicts every response with
models/mag/model.py and judges the captures per destination: the exact set, bit for
bit (QUANT words through models/numerics/mxfp7.py), and the order the protocol
guarantees (per requester, per writer); the DRAM's own counters must show each
entry read once however many peers it goes to. "hostile" runs add random idle
cycles at the sources and bursts of busy at the sinks. The test_timing_* tests
measure the agent's service times on its own output link against those its
parameters imply (tb/mag/timing.py: upstream's figures at the defaults).
"""

from __future__ import annotations

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from models.noc.flit import FIELDS, FlitType, pack_fields
from models.mag.model import decode_descriptor, rd_req, wr_data, wr_req
from tb.lib.harness import StallMode, StallPattern
from tb.mag.bench import MagTB
from tb.mag.timing import MagTiming, entry_first_flits, interval_errors

HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 96), backpressure=StallPattern(StallMode.BURST, 48))
CALM: dict = {}
STALLS = {"none": CALM, "hostile": HOSTILE}

READ_REGION = 1024      # words 0..1023 hold random data for the read tests
WRITE_BASE = 1024       # source k writes into words WRITE_BASE + 256k ..


def _addr(tb: MagTB, word: int) -> int:
    """A byte address of DRAM word `word` (in the agent's window), with random low bits the agent must ignore."""
    return tb.byte(word) | tb.rng.randrange(32)


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
    tb.verdict.setup(min(per_dst.values()) >= 2 and len(per_dst) == len(tb.ports),
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
    tb.verdict.setup(len(run.prediction.dropped) == len(others) * len(tb.ports),
                     "the model did not drop every non-request flit (tests/unit/mag/test_mag_model.py)")
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
    run = await tb.run({tb.ports[0]: [rd_req(tb.mag, src, 1, tb.byte(0), 31)]})
    await _finish(tb, run)


# len_gt_7: a write descriptor with len 9; no_open: MEM_WR_DATA with no open write;
# second_wr: a second MEM_WR_REQ while the first is open; last_bad: `last` on the
# wrong beat; rd_past / wr_past: a read / write reaching past the end of the DRAM;
# rd_below: a read below the window (BASE - 32, modulo 2^40);
# quant_past: a QUANT entry read whose second entry reaches past the end; flag7: a
# read with flags bit 7 set (undefined, served as if clear); staging_rd / staging_wr:
# a read / write to the staging aperture, which this agent does not have (dropped).
MONITOR_CASES = ["len_gt_7", "no_open", "second_wr", "last_bad", "rd_past", "wr_past", "rd_below", "quant_past",
                 "flag7", "staging_rd", "staging_wr"]


@cocotb.test()
@cocotb.parametrize(case=MONITOR_CASES)
async def test_monitor_fires(dut, case: str) -> None:
    """Each protocol violation must raise mon_err; the agent tolerates it as models/mag/model.py says."""
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
    elif case == "rd_below":
        bad = [rd_req(m, src, 5, (tb.base - 32) % (1 << 40), 1)]
    elif case == "quant_past":
        bad = [rd_req(m, src, 4, _addr(tb, words - 12), stream=True, quant=True, count=2, peers=[tb.coords[port]])]
    elif case == "flag7":
        bad = [rd_req(m, src, 6, _addr(tb, 40), flags=0xD0, count=2)]
    elif case == "staging_rd":
        bad = [rd_req(m, src, 8, (1 << 39) | 0x40, stream=True, quant=True, count=3)]
    elif case == "staging_wr":
        bad = [wr_req(m, src, 9, (1 << 39) | (600 << 5), 1), wr_data(m, src, 7, False), wr_data(m, src, 8, True)]
    else:
        bad = [wr_req(m, src, 5, _addr(tb, words - 1), 1), wr_data(m, src, 1, False), wr_data(m, src, 2, True)]
    # Good traffic before and after, from this and another source: the agent must go on serving.
    sent = {
        port: [rd_req(m, src, 0x10, tb.byte(0), 3)] + bad + _write_burst(tb, src, 0x11, 600, 2)
        + [rd_req(m, src, 0x12, tb.byte(1), 1)],
        tb.ports[0]: [rd_req(m, tb.coords[tb.ports[0]], 0x20, tb.byte(2), 7, stream=True, count=2, entry_words=2)],
    }
    run = await tb.run(sent, **HOSTILE)
    tb.verdict.setup(bool(run.prediction.violations), f"{case}: the model predicts no violation")
    await _finish(tb, run, expect_monitor=True)


# ---------------------------------------------------------------- entry reads with QUANT (units.md M.2, M.3)
QUANT_COUNTS = [0, 1, 2, 3, 4, 7]


def _quant_request(tb: MagTB, src, others, k: int, i: int) -> int:
    """A QUANT read of the FP16 region: A or B packing, count 0..7 (or no STREAM: one entry), 0..3 peers."""
    stream = (k + i) % 5 != 0
    count = QUANT_COUNTS[(k + 2 * i) % len(QUANT_COUNTS)]
    n = (count or 1) if stream else 1
    word = tb.rng.randrange(READ_REGION // 8 - n) * 8 if i % 2 else tb.rng.randrange(READ_REGION - 8 * n)
    txn = tb.rng.choice([tb.rng.getrandbits(8), 0xFD, 0xFF])
    return rd_req(tb.mag, src, txn, _addr(tb, word), tb.rng.getrandbits(8), stream=stream, quant=True,
                  blayout=bool((k + i) % 2), count=count, entry_words=tb.rng.choice([0, 1, 3, 4, 9, 255]),
                  peers=tb.rng.sample(others, (k + i) % 4))


def _quant_coverage(sent: dict[int, list[int]]) -> dict[str, set]:
    """What the QUANT requests of a run cover: packing, entries, peers, STREAM."""
    cov: dict[str, set] = {"blayout": set(), "entries": set(), "peers": set(), "stream": set()}
    for flits in sent.values():
        for f in flits:
            d = decode_descriptor(f & ((1 << 256) - 1))
            if (f >> 268) & 0xF == FlitType.MEM_RD_REQ and d.quant:
                cov["blayout"].add(d.blayout)
                cov["entries"].add(d.entries)
                cov["peers"].add(d.n_peer)
                cov["stream"].add(d.stream)
    return cov


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_quant_reads(dut, stalls: str) -> None:
    """QUANT entry reads in A and B packing, count 1..7 with 0..3 peers, txn wrap, every flit bit for bit."""
    tb = await MagTB.create(dut, f"test_quant_reads/stalls={stalls}")
    await tb.load_fp16_entries(0, READ_REGION // 8)
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        others = [tb.coords[p] for p in tb.ports if p != port]
        flits = [_quant_request(tb, src, others, k, i) for i in range(6)]
        # a plain read and a non-QUANT entry read between them: the engine switches chunk kinds
        flits.insert(2, rd_req(tb.mag, src, 0x44, _addr(tb, tb.rng.randrange(READ_REGION - 2)), 1))
        flits.insert(4, rd_req(tb.mag, src, 0xFF, _addr(tb, tb.rng.randrange(READ_REGION - 4)), stream=True,
                               count=2, entry_words=2, peers=others[:1]))
        sent[port] = flits
    cov = _quant_coverage(sent)
    tb.verdict.check(cov["blayout"] == {False, True} and cov["peers"] == {0, 1, 2, 3} and cov["stream"] == {False, True}
                     and {1, 2, 3, 4, 7} <= cov["entries"], f"QUANT requests cover too little: {cov}")
    run = await tb.run(sent, **STALLS[stalls])
    reqs = [decode_descriptor(f & ((1 << 256) - 1)) for fl in sent.values() for f in fl]
    q_entries = sum(d.entries for d in reqs if d.quant)
    q_flits = sum(4 * d.entries * (1 + d.n_peer) for d in reqs if d.quant)
    tb.log.info("QUANT: %d entries converted, %d of the %d response flits are QUANT words; all compared bit for "
                "bit; %d DRAM words read", q_entries, q_flits, run.prediction.total, run.prediction.words_read)
    await _finish(tb, run)


@cocotb.test()
async def test_chunk_kinds_back_to_back(dut) -> None:
    """One requester alternates QUANT entries with one-word entries and plain beats: conversions complete in order."""
    tb = await MagTB.create(dut, "test_chunk_kinds_back_to_back")
    await tb.load_fp16_entries(0, READ_REGION // 8)
    port, src = tb.ports[0], tb.coords[tb.ports[0]]
    peer = tb.coords[tb.ports[1]]
    flits: list[int] = []
    for i in range(24):
        word = 8 * tb.rng.randrange(READ_REGION // 8 - 3)
        kind = i % 3
        if kind == 0:
            flits.append(rd_req(tb.mag, src, i, _addr(tb, word), stream=True, quant=True, blayout=bool(i & 4),
                                count=1 + i % 3, peers=[peer] if i % 2 else []))
        elif kind == 1:
            flits.append(rd_req(tb.mag, src, i, _addr(tb, word), stream=True, count=1 + i % 2, entry_words=1))
        else:
            flits.append(rd_req(tb.mag, src, i, _addr(tb, word), 0))
    run = await tb.run({port: flits})
    await _finish(tb, run)


@cocotb.test()
@cocotb.parametrize(stalls=["none", "hostile"])
async def test_entry_reads_without_quant(dut, stalls: str) -> None:
    """entry_words 1..4, 0 and > 4 without QUANT; BLAYOUT and flag bits 0..3 change nothing; peers; txn wrap."""
    tb = await MagTB.create(dut, f"test_entry_reads_without_quant/stalls={stalls}")
    await tb.load_random(0, READ_REGION)
    ews = [0, 1, 2, 3, 4, 5, 7, 8, 255]
    flag_sets = [0x40, 0x60, 0x4F, 0x6A]
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        others = [tb.coords[p] for p in tb.ports if p != port]
        flits = []
        for i in range(len(ews)):
            ew_field = ews[(k + i) % len(ews)]
            ew = 4 if ew_field == 0 or ew_field > 4 else ew_field
            count = tb.rng.choice([0, 1, 2, 5])
            word = tb.rng.randrange(READ_REGION - (count or 1) * ew)
            flits.append(rd_req(tb.mag, src, tb.rng.choice([0xFE, 0xFF, tb.rng.getrandbits(8)]), _addr(tb, word),
                                tb.rng.getrandbits(8), flags=flag_sets[(k + 2 * i) % len(flag_sets)], count=count,
                                entry_words=ew_field, peers=tb.rng.sample(others, i % 4)))
        # a plain read with BLAYOUT and low bits set, and with peers: still len+1 beats to the requester alone
        flits.append(rd_req(tb.mag, src, 0x31, _addr(tb, tb.rng.randrange(READ_REGION - 6)), 5, flags=0x2F,
                            count=3, entry_words=2, peers=others[:2]))
        sent[port] = flits
    run = await tb.run(sent, **STALLS[stalls])
    await _finish(tb, run)


@cocotb.test()
async def test_writes_idle(dut) -> None:
    """u_mag.writes_idle, sampled every cycle, is 1 exactly when every MEM_WR_REQ taken has had its ack leave."""
    tb = await MagTB.create(dut, "test_writes_idle")
    await tb.load_random(0, 64)
    sent: dict[int, list[int]] = {}
    for k, port in enumerate(tb.ports):
        src = tb.coords[port]
        sent[port] = [rd_req(tb.mag, src, 1, _addr(tb, tb.rng.randrange(60)), 3)]
        for i in range(4):
            sent[port] += _write_burst(tb, src, 16 * k + i, WRITE_BASE + 256 * k + 8 * i, 1 + (k + i) % 8)
    mag = dut.u_mag
    ftype = FIELDS["type"]
    samples: list[tuple[int, bool]] = []
    state = {"stop": False}

    async def watch() -> None:
        reqs = acks = 0
        while not state["stop"]:
            await FallingEdge(tb.clock.clk)
            if str(tb.clock.resetn.value) != "1":
                reqs = acks = 0
                continue
            samples.append((int(mag.writes_idle.value), reqs == acks))
            if int(mag.noc_in_valid.value) and not int(mag.noc_in_busy.value) \
                    and ftype.extract(int(mag.noc_in_data.value)) == FlitType.MEM_WR_REQ:
                reqs += 1
            if int(mag.noc_out_valid.value) and not int(mag.noc_out_busy.value) \
                    and ftype.extract(int(mag.noc_out_data.value)) == FlitType.MEM_WR_ACK:
                acks += 1

    watcher = cocotb.start_soon(watch())
    run = await tb.run(sent, idle=StallPattern(StallMode.RANDOM, 64), backpressure=StallPattern(StallMode.BURST, 160))
    state["stop"] = True
    await watcher
    tb.check(run)
    bad = [i for i, (idle, settled) in enumerate(samples) if idle != settled]
    busy = sum(1 for idle, _ in samples if not idle)
    tb.verdict.check(not bad, f"writes_idle disagrees with taken requests vs acks sent in {len(bad)} of "
                              f"{len(samples)} cycles, first at sample {bad[0] if bad else -1}")
    tb.verdict.check(busy > 50 and samples and samples[-1][0] == 1,
                     f"writes_idle was 0 in only {busy} cycles, or not 1 at the end")
    tb.verdict.add_checks(len(samples), [])
    tb.log.info("writes_idle sampled in %d cycles, 0 in %d of them", len(samples), busy)
    tb.verdict.finish()


# ---------------------------------------------------------------- service times (tb/mag/timing.py)
@cocotb.test()
async def test_timing_plain_reads(dut) -> None:
    """Single-beat plain reads from every source at once: answered strictly one at a time, one every
    plain_period cycles (12 at upstream's timing), while the read queue fills to its busy mark."""
    tb = await MagTB.create(dut, "test_timing_plain_reads")
    timing = MagTiming.of_harness(dut)
    await tb.load_random(0, 256)
    sent = {p: [rd_req(tb.mag, tb.coords[p], i, _addr(tb, tb.rng.randrange(256)), 0) for i in range(10)]
            for p in tb.ports}
    watch = tb.watch_agent()
    run = await tb.run(sent)
    await watch.stop()
    tb.check(run)
    cycles = [c for c, _ in watch.out]
    tb.verdict.add_checks(len(cycles), interval_errors("plain reads answered", cycles,
                                                       [timing.plain_period] * (len(cycles) - 1)))
    mark = int(dut.RDQ_DEPTH.value) - int(dut.Q_MARGIN.value)
    tb.verdict.check(watch.max_rq == mark, f"the read queue held at most {watch.max_rq} requests; with "
                     f"{len(cycles)} waiting it must fill to its busy mark RDQ_DEPTH - Q_MARGIN = {mark}")
    tb.log.info("plain reads: %d answered %s cycles apart (expected %d); read queue peaked at %d (mark %d)",
                len(cycles), sorted({b - a for a, b in zip(cycles, cycles[1:])}), timing.plain_period,
                watch.max_rq, mark)
    tb.verdict.finish()


@cocotb.test()
async def test_timing_quant_run(dut) -> None:
    """Two QUANT runs from one source back to back (3 entries, then 2 to the requester and 3 peers):
    entries quant_entry_period apart (20), the second run quant_run(3) after the first (8 + 6 + 60)."""
    tb = await MagTB.create(dut, "test_timing_quant_run")
    timing = MagTiming.of_harness(dut)
    await tb.load_fp16_entries(0, 16)
    port, src = tb.ports[0], tb.coords[tb.ports[0]]
    peers = [tb.coords[p] for p in tb.ports[1:4]]
    flits = [rd_req(tb.mag, src, 0x10, tb.byte(0), stream=True, quant=True, count=3),
             rd_req(tb.mag, src, 0x40, tb.byte(64), stream=True, quant=True, blayout=True, count=2, peers=peers)]
    watch = tb.watch_agent()
    run = await tb.run({port: flits})
    await watch.stop()
    tb.check(run)
    firsts = entry_first_flits(watch.out, src)
    period = timing.quant_entry_period
    want = [period, period, timing.quant_run(3) - 2 * period, period]
    tb.verdict.add_checks(len(want), interval_errors("QUANT entries to the requester", firsts, want))
    tb.log.info("QUANT: entries' first flits at %s: intervals %s (expected %s: %d a entry, take to take %d for "
                "3 entries)", firsts, [b - a for a, b in zip(firsts, firsts[1:])], want, period, timing.quant_run(3))
    tb.verdict.finish()


@cocotb.test()
async def test_timing_writes(dut) -> None:
    """Six single-beat then four 8-beat writes from one source: one write transaction at a time, each
    acknowledged write_period(beats) after the previous (14 and 21 at upstream's timing)."""
    tb = await MagTB.create(dut, "test_timing_writes")
    timing = MagTiming.of_harness(dut)
    port, src = tb.ports[0], tb.coords[tb.ports[0]]
    beats = [1] * 6 + [8] * 4
    flits: list[int] = []
    for i, n in enumerate(beats):
        flits += _write_burst(tb, src, i, WRITE_BASE + 8 * i, n)
    watch = tb.watch_agent()
    run = await tb.run({port: flits})
    await watch.stop()
    tb.check(run)
    await tb.check_dram(WRITE_BASE, 8 * len(beats), "after the timed writes")
    acks = [c for c, f in watch.out if FIELDS["type"].extract(f) == FlitType.MEM_WR_ACK]
    want = [timing.write_period(n) for n in beats[1:]]
    tb.verdict.add_checks(len(want), interval_errors("write acks", acks, want))
    tb.log.info("writes: acks %s cycles apart (expected %s)", [b - a for a, b in zip(acks, acks[1:])], want)
    tb.verdict.finish()
