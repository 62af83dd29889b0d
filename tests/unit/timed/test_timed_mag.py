"""models/timed/mag.py: the memory agent's stamps are the RTL's (rtl/mag/mag.v with mag_dram.v), edge for edge.

The RTL figures below were measured with rtl/bench/mag_timed_tb.v (tb/mag/alone.py: the agent and its DRAM alone
under Icarus, every flit offered from edge 0 in order, the output never busy; ``IN <edge>`` is the edge the agent
takes a flit, ``OUT <edge>`` the edge a flit it sends is taken, i.e. the router's Local input FIFO takes it),
run as ``_rtl(tmp, flits, at, params)`` on the sequences here (e.g. ``PYTHONPATH=. .venv/bin/python -c`` calling
it, or test_model_matches_the_rtl_live below, which re-measures them). They agree with the service times of
tb/mag/timing.py and docs/mag.md: a single-beat plain read every 12 cycles, 20 a QUANT entry, 8 + 6 + 20n
from the take of an n-entry run to the next take, 14 cycles a single-beat write and 21 an 8-beat one.
"""

from __future__ import annotations

import heapq
import random
from pathlib import Path

import pytest

from models.mag.model import DramImage, MagUnit
from models.mag.proto import rd_req, wr_data, wr_req
from models.noc.flit import FlitType, flit_type
from models.timed.mag import TimedMag
from tb.mag.alone import run_alone

MAG = (0, 1)
SRC = (1, 0)
PEERS = [(2, 0), (1, 2), (2, 2)]


def _write(txn: int, word: int, beats: int, src=SRC) -> list[int]:
    return [wr_req(MAG, src, txn, 32 * word, beats - 1)] + [wr_data(MAG, src, k, k == beats - 1)
                                                            for k in range(beats)]


# ---------------------------------------------------------------- sequences and the RTL's stamps
SEQ = {
    "plain1": [rd_req(MAG, SRC, i, 32 * i, 0) for i in range(8)],
    "plain8": [rd_req(MAG, SRC, i, 32 * i, 7) for i in range(4)],
    "quant1": [rd_req(MAG, SRC, i, 256 * i, stream=True, quant=True, count=1) for i in range(3)],
    "quant3": [rd_req(MAG, SRC, 0x10, 0, stream=True, quant=True, count=3),
               rd_req(MAG, SRC, 0x40, 2048, stream=True, quant=True, blayout=True, count=2, peers=PEERS)],
    "writes": sum([_write(i, 1024 + 8 * i, 1) for i in range(6)] + [_write(6 + i, 1088 + 8 * i, 8) for i in range(4)],
                  []),
    "read_behind_write": _write(1, 1024, 1) + [rd_req(MAG, SRC, 2, 0, 0)] + _write(3, 1040, 8)
    + [rd_req(MAG, SRC, 4, 0, 3)],
}
# the edge each flit is taken (measured IN: no back-pressure in these, so the offer edges)
AT = {name: list(range(len(f))) for name, f in SEQ.items()}
AT["read_behind_write"] = [0, 1, 5, 40, 41, 42, 43, 44, 45, 46, 47, 48, 50]

# measured OUT edges, upstream's timing (every fact at its default)
RTL = {
    "plain1": [13, 25, 37, 49, 61, 73, 85, 97],
    "plain8": [13, 14, 15, 16, 17, 18, 19, 20, 32, 33, 34, 35, 36, 37, 38, 39, 51, 52, 53, 54, 55, 56, 57, 58,
               70, 71, 72, 73, 74, 75, 76, 77],
    "quant1": [32, 33, 34, 35, 66, 67, 68, 69, 100, 101, 102, 103],
    "quant3": [32, 33, 34, 35, 52, 53, 54, 55, 72, 73, 74, 75, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116,
               117, 118, 119, 120, 121, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140,
               141],
    "writes": [17, 31, 45, 59, 73, 87, 108, 129, 150, 171],
    "read_behind_write": [17, 29, 71, 83, 84, 85, 86],
}
# measured with an override (the bench's parameter of the same name)
RTL_QUANT_LAT12 = [36, 37, 38, 39, 60, 61, 62, 63, 84, 85, 86, 87, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131,
                   132, 133, 134, 135, 136, 137, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158,
                   159, 160, 161]
RTL_RD_LATENCY6 = [18, 35, 52, 69, 86, 103, 120, 137]


def _feed(m: TimedMag, flits, at) -> list[tuple[int, int]]:
    """(stamp, flit) of every answer, in stamp order; checks the contract's per-call order on the way."""
    out = []
    for f, t in zip(flits, at):
        got = m.take_at(f, t)
        stamps = [e for e, _ in got]
        assert stamps == sorted(stamps), f"stamps of one call decrease: {stamps}"
        assert all(e > t for e in stamps)
        out += [(e, ev.flit) for e, ev in got]
    out.sort(key=lambda x: x[0])
    edges = [e for e, _ in out]
    assert len(set(edges)) == len(edges), "two flits on one edge of the agent's link"
    return out


def _stamps(flits, at, facts=None) -> list[int]:
    return [e for e, _ in _feed(TimedMag(MAG, DramImage(4096), facts=facts), flits, at)]


def _gaps(xs: list[int]) -> list[int]:
    return [b - a for a, b in zip(xs, xs[1:])]


@pytest.mark.parametrize("name", sorted(SEQ))
def test_stamps_are_the_rtls(name: str) -> None:
    assert _stamps(SEQ[name], AT[name]) == RTL[name]


def test_the_service_intervals() -> None:
    assert _gaps(_stamps(SEQ["plain1"], AT["plain1"])) == [12] * 7
    p8 = _stamps(SEQ["plain8"], AT["plain8"])
    assert _gaps(p8[::8]) == [19] * 3 and _gaps(p8[:8]) == [1] * 7        # 8 beats, then 11 to the next beat
    assert _gaps(_stamps(SEQ["quant1"], AT["quant1"])[::4]) == [34, 34]   # 8 + 6 + 20 take to take
    q3 = _stamps(SEQ["quant3"], AT["quant3"])
    firsts = [q3[0], q3[4], q3[8], q3[12], q3[28]]                          # each entry's first flit to the requester
    assert _gaps(firsts) == [20, 20, 74 - 40, 20]
    assert _gaps(_stamps(SEQ["writes"], AT["writes"])) == [14] * 5 + [21] * 4


def test_a_read_waits_for_the_write_in_flight() -> None:
    s = _stamps(SEQ["read_behind_write"], AT["read_behind_write"])
    # the write's last beat taken at 1: issued at 3, ack loaded at 16; the read taken at 5 leaves the queue at 17
    assert s[0] == 17 and s[1] == 17 + 12
    # the 8-beat write (last beat at 48) issued at 50: ack 71; the read taken at 50 leaves the queue at 71
    assert s[2] == 71 and s[3:] == [71 + 12, 71 + 13, 71 + 14, 71 + 15]


# ---------------------------------------------------------------- overrides
def test_quant_lat_override_moves_each_entry_by_the_difference() -> None:
    base = _stamps(SEQ["quant3"], AT["quant3"])
    slow = _stamps(SEQ["quant3"], AT["quant3"], {"mag.QUANT_LAT": 12})
    assert slow == RTL_QUANT_LAT12
    # 4 more edges an entry: the k-th entry of the first run 4(k+1) later, the run's take-to-take 12 longer,
    # so the second run's entries 16 and 20 later
    shift = [b - a for a, b in zip(base, slow)]
    assert shift == [4] * 4 + [8] * 4 + [12] * 4 + [16] * 16 + [20] * 16


def test_rd_latency_override() -> None:
    s = _stamps(SEQ["plain1"], AT["plain1"], {"dram.RD_LATENCY": 6})
    assert s == RTL_RD_LATENCY6 and _gaps(s) == [17] * 7


@pytest.mark.parametrize("facts, why", [
    ({"mag.QUANT_LAT": 0}, "outside"),
    ({"mag.QUANT_LAT": 65}, "outside"),
    ({"mag.QUANT_LAT": True}, "whole number"),
    ({"mag.QUANT_LATENCY": 8}, "names no timing fact"),
    ({"vector.FETCH": 2}, "no timing fact of the memory agent"),
    ({"mag.RDQ_DEPTH": 4, "mag.Q_MARGIN": 4}, "Q_MARGIN below"),
])
def test_a_bad_override_is_refused(facts, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        TimedMag(MAG, DramImage(64), facts=facts)


# ---------------------------------------------------------------- the rest of the contract
def test_the_bits_are_the_golden_models() -> None:
    flits = [f for name in sorted(SEQ) for f in SEQ[name]]
    dram = DramImage(4096)
    dram.load_words(0, [random.Random(3).getrandbits(256) for _ in range(4096)])
    golden = MagUnit(MAG, dram.copy())
    timed = TimedMag(MAG, dram.copy())
    for t, f in enumerate(flits):
        assert [ev for _, ev in timed.take_at(f, 2 * t)] == golden.take(f)
    assert timed.dram.words(1024, 128) == golden.dram.words(1024, 128)


def test_a_flit_taken_out_of_order_is_refused() -> None:
    m = TimedMag(MAG, DramImage(64))
    m.take_at(SEQ["plain1"][0], 10)
    with pytest.raises(ValueError, match="one flit an edge"):
        m.take_at(SEQ["plain1"][1], 10)


def test_intake_edge_is_the_rtls_back_pressure() -> None:
    # 80 single-beat reads offered from edge 0: the RTL took flits 0..65 at edges 0..65 (the read queue busy at
    # 60 queued, 6 popped meanwhile), then one each time a read leaves the queue (measured IN edges)
    flits = [rd_req(MAG, SRC, i, 32 * i, 0) for i in range(80)]
    m = TimedMag(MAG, DramImage(4096))
    e, taken = 0, []
    for f in flits:
        e = m.intake_edge(e)
        taken.append(e)
        m.take_at(f, e)
        e += 1
    assert taken[:66] == list(range(66))
    assert taken[66:70] == [74, 86, 98, 110]


def test_one_write_slot_and_two_writers_wedge() -> None:
    m = TimedMag(MAG, DramImage(4096), facts={"mag.WR_SLOTS": 1})
    m.take_at(wr_req(MAG, (1, 0), 1, 0, 1), 0)
    with pytest.raises(RuntimeError, match="WR_SLOTS=1"):
        m.take_at(wr_req(MAG, (2, 0), 2, 256, 1), 1)


# ---------------------------------------------------------------- against the RTL, live
PARAM = {"mag.QUANT_LAT": "QUANT_LAT", "dram.RD_LATENCY": "RD_LATENCY", "dram.RD_INTERVAL": "RD_INTERVAL",
         "mag.AR_FIFO_LAT": "AR_FIFO_LAT", "mag.R_FIFO_LAT": "R_FIFO_LAT", "mag.W_FIFO_LAT": "W_FIFO_LAT",
         "mag.B_FIFO_LAT": "B_FIFO_LAT", "mag.R_FIFO_DEPTH": "R_FIFO_DEPTH", "mag.WR_SLOTS": "WR_SLOTS"}


def _rtl(tmp: Path, flits, at, facts=None, drain: int = 2000) -> tuple[list[int], list[tuple[int, int]]]:
    """Run the agent on `flits` offered from edges `at` (tb/mag/alone.py): (edges taken, [(edge, flit) sent])."""
    run = run_alone(tmp, flits, at, {PARAM[k]: v for k, v in (facts or {}).items()}, drain)
    assert not run.mon_err, run.log[-2000:]
    return run.taken, run.sent


def _reads_only(seed: int, n: int) -> tuple[list[int], list[int]]:
    """Plain, stream and QUANT reads (with peers) from four sources, at random gaps."""
    rng = random.Random(seed)
    srcs = [SRC, *PEERS]
    flits, at, t = [], [], 0
    for i in range(n):
        s = rng.choice(srcs)
        kind = rng.randrange(3)
        if kind == 0:
            flits.append(rd_req(MAG, s, i, 32 * rng.randrange(512), rng.choice([0, 0, 3, 7])))
        elif kind == 1:
            flits.append(rd_req(MAG, s, i, 32 * rng.randrange(512), stream=True, count=rng.randrange(1, 4),
                                entry_words=rng.randrange(1, 5), peers=rng.sample(srcs, rng.randrange(3))))
        else:
            flits.append(rd_req(MAG, s, i, 256 * rng.randrange(60), stream=True, quant=True, count=rng.randrange(1, 4),
                                peers=rng.sample(srcs, rng.randrange(3))))
        at.append(t)
        t += rng.choice([1, 2, 5, 20, 60])
    return flits, at


LIVE = [(name, None) for name in sorted(SEQ)] + [
    ("quant3", {"mag.QUANT_LAT": 12}), ("plain1", {"dram.RD_LATENCY": 6}),
    ("quant3", {"mag.QUANT_LAT": 1, "dram.RD_LATENCY": 6}),
    ("plain8", {"dram.RD_INTERVAL": 3, "mag.R_FIFO_DEPTH": 2}),
    ("writes", {"mag.AR_FIFO_LAT": 1, "mag.R_FIFO_LAT": 5, "mag.W_FIFO_LAT": 2, "mag.B_FIFO_LAT": 4}),
    ("reads_only", None), ("reads_only", {"mag.QUANT_LAT": 3, "dram.RD_INTERVAL": 2}),
]


@pytest.mark.parametrize("name, facts", LIVE)
def test_model_matches_the_rtl_live(tmp_path: Path, name: str, facts) -> None:
    """Every flit the RTL sends, the same flit at the same edge from the model fed the RTL's take edges."""
    flits, at = _reads_only(7, 60) if name == "reads_only" else (SEQ[name], AT[name])
    taken, sent = _rtl(tmp_path, flits, at, facts)
    assert len(taken) == len(flits)
    model = _feed(TimedMag(MAG, DramImage(4096), facts=facts), flits, taken)
    assert len(model) == len(sent)
    bad = [(i, m, r) for i, (m, r) in enumerate(zip(model, sent)) if m != r]
    assert not bad, f"{len(bad)} of {len(sent)} flits differ, first: model edge {bad[0][1][0]}, RTL edge {bad[0][2][0]}"
    if facts is None and name in RTL:
        assert [e for e, _ in sent] == RTL[name] and taken == AT[name]   # the figures written above


def _feed_scheduled(m: TimedMag, flits, at) -> list[tuple[int, int]]:
    """As a timed machine drives the agent: its wake-ups (a waiting write's issue edge) run before the flits of
    their edge; (stamp, flit) of every answer in stamp order."""
    wakes: list[int] = []
    m.schedule = lambda e: heapq.heappush(wakes, e)
    out: list[tuple[int, int]] = []
    for f, t in zip(flits, at):
        while wakes and wakes[0] <= t:
            out += [(e, ev.flit) for e, ev in m.wake(heapq.heappop(wakes))]
        out += [(e, ev.flit) for e, ev in m.take_at(f, t)]
    while wakes:
        out += [(e, ev.flit) for e, ev in m.wake(heapq.heappop(wakes))]
    out.sort(key=lambda x: x[0])
    return out


def _drain_then_fill(n_writes: int, n_reads: int) -> tuple[list[int], list[int]]:
    """A vector core's VDRAIN (single-beat writes, a pair every 3 edges) and, while its writes still wait, the
    next RUN's VFILL (single-beat plain reads every 3 edges): the RTL serves the reads before the writes left."""
    flits, at = [], []
    for i in range(n_writes):
        flits += _write(1, 1024 + 8 * i, 1)
        at += [3 * i, 3 * i + 1]
    t0 = 3 * n_writes + 40
    for j in range(n_reads):
        flits.append(rd_req(MAG, SRC, j, 32 * j, 0))
        at.append(t0 + 3 * j)
    return flits, at


def test_reads_go_before_waiting_writes_as_on_the_rtl(tmp_path: Path) -> None:
    """With a machine's wake-ups, a read at the head when a ready write would issue goes first, and the write
    intake's slots and busy back-pressure follow: every flit at the RTL's edge (the RTL's own take edges fed)."""
    flits, at = _drain_then_fill(40, 12)
    taken, sent = _rtl(tmp_path, flits, at)
    model = _feed_scheduled(TimedMag(MAG, DramImage(4096)), flits, taken)
    assert len(model) == len(sent)
    bad = [(i, m, r) for i, (m, r) in enumerate(zip(model, sent)) if m != r]
    assert not bad, f"{len(bad)} of {len(sent)} flits differ, first: model {bad[0][1]}, RTL {bad[0][2]}"
    # and the order is the RTL's reason for it: some read is answered before the last write's ack
    kinds = [flit_type(f) for _, f in sent]
    assert kinds.index(FlitType.MEM_RD_RESP) < len(kinds) - 1 - kinds[::-1].index(FlitType.MEM_WR_ACK)
