"""TimedCluster (models/timed/cluster.py): the cluster's golden flits with the RTL's edges.

The interval tests replay the cluster bench's timing scenarios (tb/cluster/timing.py, test_timing_*) on the
model: CU_INSTs back to back from the agent, L1 operands by CU_DATA (or a FILL's responses one an edge), and
assert the intervals between consecutive completion stamps that docs/cluster.md "Timing" lists as measured on
the RTL module bench. The numbers are literals here (not computed from the model's own rules), so a wrong
rule fails them. The override tests use values derived by hand from the rules the docstring names.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.cluster import (
    Buf, ClusterCore, a_entries, b_entries, drain, fill, fill_responses_for, gemm, granules_of,
)
from models.cu.base import cu_data_bursts, cu_inst
from models.noc.flit import FlitType, flit_type
from models.machine.unit_timing import CLUSTER_FACTS
from models.timed.cluster import TimedCluster, cluster_facts

UNIT, AGENT, MAG, SINK = (1, 1), (1, 0), (0, 1), (2, 1)


def _operands():
    rng = np.random.default_rng(5)
    a = rng.integers(-64, 64, size=(16, 64))
    b = rng.integers(-64, 64, size=(64, 32))
    sa = rng.integers(0x80, 0xC0, size=(16, 2))
    sb = rng.integers(0x80, 0xC0, size=(2, 32))
    return granules_of(a_entries(a, sa)), granules_of(b_entries(b, sb))


GA, GB = _operands()  # a 4x8x2 GEMM's L1A (8 entries) and L1B (16 entries)


class Run:
    """Feeds a TimedCluster (and the golden ClusterCore beside it) one flit per call at given edges."""

    def __init__(self, facts=None) -> None:
        self.unit = TimedCluster(UNIT, MAG, facts)
        self.gold = ClusterCore(UNIT, MAG)
        self.out: list[tuple[int, object]] = []
        self.t = 0
        self.txn = 0

    def feed(self, flits, t=None, step=1) -> None:
        if t is not None:
            self.t = t
        for f in flits:
            got = self.unit.take_at(f, self.t)
            want = self.gold.take(f)
            assert sorted(e.flit for _, e in got) == sorted(e.flit for e in want), "bits differ from the golden"
            stamps = [s for s, _ in got]
            assert stamps == sorted(stamps), "stamps of one call decrease"
            self.out.extend(got)
            self.t += step

    def inst(self, payload, t=None) -> None:
        self.feed([cu_inst(UNIT, AGENT, self.txn, 0, payload)], t)
        self.txn += 1

    def operands(self) -> None:
        self.feed(cu_data_bursts(UNIT, AGENT, Buf.L1A, 0, GA) + cu_data_bursts(UNIT, AGENT, Buf.L1B, 0, GB))

    def of_type(self, ftype, dst=None) -> list[int]:
        return sorted(s for s, e in self.out if flit_type(e.flit) == ftype and (dst is None or e.dst == dst))

    def done(self) -> list[int]:
        return self.of_type(FlitType.CU_SIGNAL, AGENT)

    def intervals(self) -> list[int]:
        d = self.done()
        return [b - a for a, b in zip(d, d[1:])]


def _sweep_waits(facts=None) -> Run:
    r = Run(facts)
    r.operands()
    for op, acc in (((4, 8, 2), 0), ((4, 8, 2), 1), ((1, 1, 3), 0), ((1, 1, 3), 1), ((2, 2, 1), 0), ((2, 2, 1), 1)):
        r.inst(gemm(*op, acc=acc))
    r.inst(drain(32, dnode=1, dst=SINK))
    return r


def _drains(facts=None) -> Run:
    r = Run(facts)
    r.operands()
    r.inst(gemm(4, 8, 2))
    for k, n in enumerate((32, 8, 16)):
        r.inst(drain(n, addr=0x1000 * (k + 1)))
    r.inst(drain(32, dnode=1, dst=SINK))
    return r


# ---------------------------------------------------------------- the RTL's measured intervals
def test_matmul_round_fill_gemm_drain():
    """FILL A (8) -> FILL B (16) -> GEMM 4x8x2 -> DRAIN 32: FILL B -> GEMM 6, GEMM -> DRAIN 156; FILL B's
    request 2 cycles after FILL A's completion; a FILL retires 6 edges after its last response is taken."""
    r = Run()
    fa, fb = fill(0x8000_1000, 8, 0), fill(0x8000_2000, 16, 1)
    for p in (fa, fb, gemm(4, 8, 2), drain(32, addr=0x8000_3000)):
        r.inst(p)
    resp = fill_responses_for(GA, fa, UNIT, MAG) + fill_responses_for(GB, fb, UNIT, MAG)
    r.feed(resp, t=40)
    done = r.done()
    assert len(done) == 4
    assert r.intervals()[1:] == [6, 156]
    reqs = r.of_type(FlitType.MEM_RD_REQ)
    assert reqs[0] == 0 + 1 + 3  # accepted the edge after it was taken, on the router 3 edges later
    assert reqs[1] - done[0] == 2
    # FILL A: its last response taken at 71, popped 72, exec_done 74, on the link 77. FILL B is accepted at
    # 74 + 2 = 76: its responses that arrived from 72 on were held and are popped one an edge from 77, the
    # 64th at 140, so it retires at 142 and its completion is on the link at 145.
    assert done[0] == 40 + len(GA) - 1 + 6
    assert done[1] == done[0] + len(GB) - 1 + 2 + 3


def test_fill_follows_its_responses():
    """A FILL's completion moves with its responses' arrival; responses that arrive before it are held and
    taken one an edge from the edge after its accept."""
    late = Run()
    fa = fill(0x1000, 8, 0)
    late.inst(fa, t=0)
    late.feed(fill_responses_for(GA, fa, UNIT, MAG), t=100, step=2)
    assert late.done() == [100 + 2 * 31 + 6]
    early = Run()
    early.feed(fill_responses_for(GA, fa, UNIT, MAG), t=0)
    early.inst(fa, t=40)  # accepted at 41, the 32 held responses popped at 42..73
    assert early.done() == [73 + 2 + 3]


def test_drains():
    """GEMM 4x8x2 -> DRAIN 32 -> DRAIN 8 -> DRAIN 16 -> DRAIN 32 (node): 156, 35, 45, 65."""
    r = _drains()
    assert r.intervals() == [156, 35, 45, 65]


def test_sweep_waits():
    """GEMM 4x8x2 -> 4x8x2 -> 1x1x3 -> 1x1x3 -> 2x2x1 -> 2x2x1 -> DRAIN 32: 86, 97, 44, 44, 37, 96."""
    assert _sweep_waits().intervals() == [86, 97, 44, 44, 37, 96]


def test_drain_flits_and_retirement():
    """A DRAIN's flits: bursts of 9 consecutive edges, 10 edges apart; its completion 4 edges after its last
    flit (the flit leaves, S_DONE, exec_done, the base's 3); no two flits of the unit share an edge."""
    r = _drains()
    wr = r.of_type(FlitType.MEM_WR_REQ)
    data = r.of_type(FlitType.MEM_WR_DATA)
    first = [s for s in wr if s < wr[0] + 40]
    assert [b - a for a, b in zip(first, first[1:])] == [10, 10, 10]
    assert [s for s in data if wr[0] < s < wr[1]] == list(range(wr[0] + 1, wr[0] + 9))
    done = r.done()
    assert done[1] == data[31] + 4
    stamps = [s for s, _ in r.out]
    assert len(stamps) == len(set(stamps))


def test_ack_and_emitting_gemm():
    """An acknowledged CU_DATA burst: DATA_RECEIVED 4 edges after its last flit is taken. An emitting GEMM
    2x4x2 accepted at A: gemm_start A+1, its last block's ADD_EMITs at A+3+8.., granules readable 29 edges
    later, the first burst handed over after 8, its descriptor on the router at A+51, data A+52..A+59."""
    r = Run()
    r.feed(cu_data_bursts(UNIT, AGENT, Buf.L1A, 0, GA[:4], flags=1), t=0)
    acks = r.of_type(FlitType.CU_SIGNAL, AGENT)
    assert acks == [4 + 4]
    r.operands()
    a = r.t + 20
    r.inst(gemm(2, 4, 2, emit=1, dnode=1, dst=SINK), t=a)
    a += 1  # accepted the edge after it was taken
    sent = r.of_type(FlitType.CU_DATA, SINK)
    assert sent == list(range(a + 51, a + 60))
    assert r.done()[-1] == a + 1 + 3 + 3


# ---------------------------------------------------------------- overrides
def test_defaults_are_upstreams():
    assert TimedCluster(UNIT, MAG).facts == {f.name: f.value for f in CLUSTER_FACTS}


def test_cascade_override_moves_the_stamps():
    """CASCADE_LAT 17 -> 27: every wait on the sweep or the array 10 edges longer; a DRAIN after a DRAIN not."""
    assert _drains({"cluster.CASCADE_LAT": 27}).intervals() == [166, 35, 45, 65]
    assert _sweep_waits({"cluster.CASCADE_LAT": 27}).intervals() == [96, 107, 54, 54, 47, 106]


def test_reuse_override_moves_the_stamps():
    """REUSE_MIN 5 -> 3: a 1x1x3 sweep issues every 3 cycles (last at G+8, array idle G+38); 2x2 is now wide
    (waits only for the sweep: G+2+3+21), the tails 2 shorter."""
    assert _sweep_waits({"cluster.REUSE_MIN": 3}).intervals() == [86, 95, 38, 29, 26, 94]


def test_dq_limit_override_holds_the_drain():
    """DQ_LIMIT 2: a DRAIN of 8 issues two EMITs, then each pair waits for the first of the two before it to
    be collected (10 edges after its issue): EMITs at S+2, 3, 13, 14, 24, 25, 35, 36, the last granule at
    S+46, its burst handed at S+47, exec_done S+59: a DRAIN after a DRAIN 3 + 59 = 62 (35 upstream)."""
    r = Run({"cluster.DQ_LIMIT": 2})
    r.operands()
    for k in range(3):
        r.inst(drain(8, addr=0x100 * k))
    assert r.intervals() == [62, 62]
    assert Run().unit.facts["DQ_LIMIT"] == 112


@pytest.mark.parametrize("facts, words", [
    ({"cluster.NOPE": 3}, "names no timing fact"),
    ({"cluster.CASCADE_LAT": 0}, "outside"),
    ({"cluster.CASCADE_LAT": 2.5}, "not a whole number"),
    ({"vector.FETCH": 2}, "not of the cluster"),
    ({"cluster.REUSE_MIN": 16}, "4 bits"),
    ({"cluster.DQ_LIMIT": 126}, "DQ_DEPTH - 4"),
])
def test_bad_override_is_refused(facts, words):
    with pytest.raises(ValueError, match=words):
        TimedCluster(UNIT, MAG, facts)
    with pytest.raises(ValueError):
        cluster_facts(facts)
