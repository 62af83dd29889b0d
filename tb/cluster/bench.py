"""The cluster's module bench: streams per bench port, and every flit the unit sends predicted by its model.

The bench (tb/cluster/test_cluster.py, top rtl/bench/cl_harness.v) puts the
cluster on the Local port of a 1x1 mesh at (1,1) and bench endpoints on the
four edges: the agent (1,0), a peer (1,2), the memory agent's coordinate
(0,1) and a drain destination (2,1). A :class:`Scenario` builds what each port
injects and feeds the same flits, in the order the unit will take them, to
the event model (models.cluster.ClusterCore.take); every Event it returns is
expected at its destination's port, bit for bit and in order (per port and
per kind: completions, acks, CU_CTRL replies and data are separate queues,
whose relative order the bench cannot fix). A flit the unit sends itself
comes back through the mesh: the model takes it right after the flits that
caused it (a test that depends on when it lands sequences it with padding).

The order across ports is the test's to make irrelevant: flits whose order
matters come from one port.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from models.cluster import Buf, ClusterModel, a_entries, b_entries, fill_responses_for, granules_of
from models.cu.base import SigCode, cu_data_bursts, cu_inst
from models.noc.flit import FlitType, flit_field, pack_fields
from models.vector.link import Event
from tb.lib.expect import compare_per_port
from tb.lib.harness import StallMode, StallPattern
from tb.noc.bench import NocTB, StreamRun

UNIT = (1, 1)
P_AGENT, P_PEER, P_MAG, P_SINK = 1, 2, 3, 4  # (1,0), (1,2), (0,1), (2,1)
HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 80), backpressure=StallPattern(StallMode.BURST, 40))
PAYLOAD = (1 << 256) - 1
WBURST = 8  # granules per write burst (protocol.md §6)


def kind(flit: int) -> str:
    """The per-port queue a flit belongs to: completions, acks, CU_CTRL replies, FILL requests and data arrive
    unordered between queues (a FILL's request overtakes the write port, and an emitting GEMM's sub-tiles
    still leave after it has retired)."""
    if flit_field(flit, "type") == FlitType.CU_SIGNAL:
        return "ack" if (flit >> 248) & 0xFF == SigCode.DATA_RECEIVED else "done"
    if flit_field(flit, "type") == FlitType.CU_CTRL:
        return "ctrl"
    if flit_field(flit, "type") == FlitType.MEM_RD_REQ:
        return "fill"
    return "data"


class Scenario:
    """Streams to inject per port and the flits the model predicts per port."""

    def __init__(self, tb: NocTB) -> None:
        self.tb = tb
        self.geo = tb.geometry
        self.mag = self.geo.port_coord(P_MAG)
        self.model = ClusterModel(UNIT, self.mag)
        self.streams: dict[int, list[int]] = defaultdict(list)
        self.expected: dict[int, list[int]] = defaultdict(list)
        self.txn = 0x40

    def coord(self, port: int) -> tuple[int, int]:
        return self.geo.port_coord(port)

    def _next_txn(self) -> int:
        t = self.txn
        self.txn = (self.txn + 1) & 0xFF
        return t

    def _route(self, events: Iterable[Event]) -> list[Event]:
        """Expect each event at its port; one the unit sends itself is taken by the model next."""
        out: list[Event] = []
        for e in events:
            out.append(e)
            if e.dst == UNIT:
                out.extend(self._route(self.model.take(e.flit)))
            else:
                self.expected[self.geo.port_index(e.dst)].append(e.flit)
        return out

    def send(self, port: int, flits: Sequence[int]) -> list[Event]:
        """Inject `flits` from `port`; the model takes them; returns what the unit sends because of them."""
        self.streams[port].extend(flits)
        return self._route(self.model.take_all(flits))

    def inst(self, port: int, payload: int, last: int = 0) -> list[Event]:
        return self.send(port, [cu_inst(UNIT, self.coord(port), self._next_txn(), last, payload)])

    def burst(self, port: int, buf: int, off: int, granules, *, flags: int = 0, ack=(0, 0)) -> list[Event]:
        """CU_DATA burst(s) from `port` into the cluster."""
        return self.send(port, cu_data_bursts(UNIT, self.coord(port), buf, off, granules, flags=flags, ack=ack,
                                              txn=self._next_txn()))

    def operands(self, port: int, a, sa, b, sb, *, a_off: int = 0, b_off: int = 0) -> None:
        self.burst(port, Buf.L1A, a_off, granules_of(a_entries(a, sa)))
        self.burst(port, Buf.L1B, b_off, granules_of(b_entries(b, sb)))

    def responses(self, port: int, words: Sequence[int], inst_payload: int, order=None,
                  src: tuple[int, int] | None = None) -> list[Event]:
        """The memory agent's MEM_RD_RESP for a FILL, injected from `port` with src = `src` (default the
        port's coordinate: a follower takes responses of any origin), entry by entry in `order` (default
        ascending); each entry's words consecutive, word 0 first (units.md C.4)."""
        flits = fill_responses_for(words, inst_payload, UNIT, self.coord(port) if src is None else src)
        entries = [flits[4 * i:4 * i + 4] for i in range(len(flits) // 4)]
        order = range(len(entries)) if order is None else order
        return self.send(port, [f for i in order for f in entries[i]])

    def pad(self, port: int, n: int) -> None:
        """Flits the endpoint base drops on arrival (MEM_WR_ACK): time passing on one link."""
        src = self.coord(port)
        self.streams[port].extend(
            pack_fields({"dst_x": UNIT[0], "dst_y": UNIT[1], "src_x": src[0], "src_y": src[1],
                         "type": FlitType.MEM_WR_ACK, "txn": i & 0xFF, "last": 1}) for i in range(n))

    def captured(self, run: StreamRun, port: int, ftype: int | None = None) -> list[int]:
        return [r.flit for r in run.records if r.port == port and (ftype is None or flit_field(r.flit, "type") == ftype)]

    async def run(self, hostile: bool = False, **kw) -> StreamRun:
        total = sum(len(v) for v in self.expected.values())
        return await self.tb.run_streams(dict(self.streams), expect_total=total, **(HOSTILE if hostile else {}), **kw)

    def finish(self, run: StreamRun) -> None:
        v = self.tb.verdict
        v.check(run.outcome.ended == "done", f"run ended by {run.outcome.ended}: "
                f"{run.outcome.captured}/{run.expected_captures} predicted flits captured")
        checks, errors = compare_per_port(self.expected, run.records, kind)
        v.add_checks(checks, errors)
        v.check(run.mon_err == 0, "an RTL monitor raised mon_err (see ERROR lines)")
        v.check(not self.model.busy, "the model still has a FILL in flight or flits waiting at the end")
        v.finish()


def operands(rng: np.random.Generator, gm: int, gn: int, nk: int, *, lo: int = -4, hi: int = 3,
             scale=lambda rng, shape: np.full(shape, 0xA0)):
    a = rng.integers(lo, hi + 1, size=(4 * gm, 32 * nk))
    b = rng.integers(lo, hi + 1, size=(32 * nk, 4 * gn))
    return a, scale(rng, (4 * gm, nk)), b, scale(rng, (nk, 4 * gn))


def random_scales(rng, shape):
    return rng.integers(0x80, 0xC0, size=shape)


def data_payloads(flits: list[int]) -> tuple[list[int], int]:
    """(data payloads, descriptor count) of a node drain as captured, framing by count."""
    data, descs, i = [], 0, 0
    while i < len(flits):
        n = ((flits[i] >> 224) & 0xFF) + 1
        descs += 1
        data.extend(f & PAYLOAD for f in flits[i + 1:i + 1 + n])
        i += n + 1
    return data, descs


def signals(events: Iterable[Event]) -> list[tuple[int, int]]:
    """(code, arg) of every CU_SIGNAL among `events`."""
    return [((e.flit >> 248) & 0xFF, (e.flit >> 216) & 0xFFFF_FFFF) for e in events
            if flit_field(e.flit, "type") == FlitType.CU_SIGNAL]


def arrivals(run: StreamRun, port: int, what: str) -> list[int]:
    """Cycles at which the flits of queue `what` (see :func:`kind`) reached bench port `port`, in order."""
    return [r.cycle for r in run.records if r.port == port and kind(r.flit) == what]


def interval_errors(cycles: Sequence[int], want: Sequence[int], names: Sequence[str]) -> list[str]:
    """One line per interval between consecutive `cycles` that is not `want` (named by `names`), or a count
    mismatch; empty when all match."""
    got = [b - a for a, b in zip(cycles, cycles[1:])]
    if len(got) != len(want):
        return [f"{len(cycles)} arrivals give {len(got)} intervals, {len(want)} expected"]
    return [f"{n}: {g} cycles, upstream's timing gives {w}" for n, g, w in zip(names, got, want) if g != w]



@dataclass(frozen=True)
class UpstreamTiming:
    """When the upstream cluster (KohakuTPU 7703ee8) retires each of a run of GEMMs and DRAINs queued back to
    back: its facts as docs/cluster.md "Timing" states them (defaults = cluster_cu's parameters).

    Edges are counted so that edge e ends cycle e. An instruction accepted at edge A starts (gemm_start /
    drain_start) at the first edge >= A + 1 whose cycle finds the array free; a GEMM retires (exec_done) 3
    edges after its start, a DRAIN of n sub-tiles (n a multiple of WBURST) 22 + 10 n/8 edges after its start;
    the next instruction is accepted 2 edges after exec_done (cu_base, as upstream's noc_cu_base).
    A sweep of G commands issues from start + 2, one command every `pace + 1` cycles; it stops issuing
    (sweep_busy low) SW_LEN + 1 cycles after its last issue, the array is idle (gemm_busy low) ACU_STAGES +
    REUSE_MIN more cycles later. The next GEMM waits for sweep_busy when gm*gn >= REUSE_MIN, else for
    gemm_busy; a DRAIN waits for gemm_busy."""

    issue_lat: int = 2
    cascade_lat: int = 17
    acu_stages: int = 6
    reuse_min: int = 5
    accept_to_start: int = 1
    start_to_done: int = 3
    done_to_accept: int = 2
    start_to_issue: int = 2

    def pace(self, gm: int, gn: int, nk: int) -> int:
        """Idle cycles after each issue (the manager's pacing)."""
        t = gm * gn
        return 0 if nk <= 1 or t >= self.reuse_min else -(-self.reuse_min // t) - 1

    def drain_time(self, n: int) -> int:
        """drain_start to exec_done of an explicit DRAIN of n sub-tiles: 2 edges to the first EMIT,
        ACU_STAGES + 4 to its granule at the queue's head, 8 collected, then per burst a hand-over, a
        descriptor and 8 data flits (10 edges), the last flit leaving, S_DONE, exec_done."""
        if n % WBURST:
            raise ValueError(f"drain_time: n={n} is not a multiple of {WBURST} (the rule covers full bursts only)")
        return self.acu_stages + 16 + 10 * (n // WBURST)

    def retire_edges(self, ops: Sequence[tuple], first_accept: int = 0) -> list[int]:
        """exec_done edge of each op: ("gemm", gm, gn, nk) or ("drain", n), queued back to back."""
        sw_len = self.issue_lat + self.cascade_lat + 1
        accept, sweep_free, array_free, done = first_accept, 0, 0, []
        for op in ops:
            if op[0] == "gemm":
                _, gm, gn, nk = op
                wide = gm * gn >= self.reuse_min
                start = max(accept + self.accept_to_start, sweep_free if wide else array_free)
                last = start + self.start_to_issue + (gm * gn * nk - 1) * (self.pace(gm, gn, nk) + 1)
                sweep_free = last + sw_len + 1
                array_free = sweep_free + self.acu_stages + self.reuse_min
                done.append(start + self.start_to_done)
            else:
                start = max(accept + self.accept_to_start, array_free)
                done.append(start + self.drain_time(op[1]))
            accept = done[-1] + self.done_to_accept
        return done
