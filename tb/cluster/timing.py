"""The cluster CU takes the upstream cluster's cycles (KohakuTPU 7703ee8; docs/cluster.md "Timing"): the
bodies of the cluster bench's timing tests (tb/cluster/test_cluster.py test_timing_*).

Each test queues instructions back to back from the agent port and measures, from the cycles the completion
flits reach the agent, the interval between consecutive retirements (every completion travels the same
path, so arrival intervals are exec_done intervals); the flits themselves are still held to the event model
bit for bit. The expected intervals come from upstream's timing facts (tb/cluster/bench.py
UpstreamTiming): the two upstream measured on the matmul_m32k64n32 round (a GEMM retires 6 cycles after the
FILL before it; its DRAIN of 32 sub-tiles 156 cycles after the GEMM), and the mechanisms behind them (DRAIN
of n sub-tiles 22 + 10 n/8 cycles from its start, a GEMM waiting for the sweep or the array before it).
Runs without idle or back-pressure patterns: the intervals are deterministic.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from models.cluster import Buf, a_entries, b_entries, drain, fill, gemm, granules_of
from tb.cluster.bench import (
    P_AGENT, P_MAG, P_SINK, Scenario, UpstreamTiming, arrivals, interval_errors, operands, random_scales,
)
from tb.noc.bench import NocTB

UPSTREAM = UpstreamTiming()
GM, GN, NK = 4, 8, 2  # the matmul_m32k64n32 round's GEMM: 64 commands


def check_intervals(tb: NocTB, cycles: Sequence[int], want: Sequence[int], names: Sequence[str]) -> None:
    """The measured intervals equal `want`; the checker itself refuses a wrong expectation (a check that
    cannot fail is no check)."""
    v = tb.verdict
    got = [b - a for a, b in zip(cycles, cycles[1:])]
    tb.log.info("measured intervals %s, upstream's %s", dict(zip(names, got)), dict(zip(names, want)))
    errors = interval_errors(cycles, want, names)
    v.check(not errors, "; ".join(errors))
    v.check(bool(interval_errors(cycles, [w + 1 for w in want], names)), "the interval check accepts wrong values")


def _matmul_operands(tb: NocTB) -> tuple[list[int], list[int]]:
    """L1 entries of a GM x NK by NK x GN block pair: full-range int7, random scales."""
    a, sa, b, sb = operands(np.random.default_rng(tb.seed), GM, GN, NK, lo=-64, hi=63, scale=random_scales)
    return granules_of(a_entries(a, sa)), granules_of(b_entries(b, sb))


async def matmul_round(dut) -> None:
    """The cluster's part of matmul_m32k64n32: FILL A (8 entries), FILL B (16), GEMM 4x8x2, DRAIN 32 to
    memory. Upstream measured: GEMM exec_done 6 cycles after the FILL's, DRAIN's 156 after the GEMM's; the
    second FILL's request leaves 2 cycles after the first FILL's completion (accepted 2 edges after
    exec_done, request registered the edge after the accept)."""
    tb = NocTB(dut, "test_timing_matmul_round")
    sc = Scenario(tb)
    ga, gb = _matmul_operands(tb)
    fa, fb = fill(0x8000_1000, GM * NK, 0), fill(0x8000_2000, GN * NK, 1)
    for payload in (fa, fb, gemm(GM, GN, NK), drain(GM * GN, addr=0x8000_3000)):
        sc.inst(P_AGENT, payload)
    sc.responses(P_MAG, ga, fa)
    sc.responses(P_MAG, gb, fb)
    run = await sc.run()
    done = arrivals(run, P_AGENT, "done")
    reqs = arrivals(run, P_MAG, "fill")
    gemm_to_drain = UPSTREAM.retire_edges([("gemm", GM, GN, NK), ("drain", GM * GN)])
    check_intervals(tb, done[1:], [UPSTREAM.done_to_accept + UPSTREAM.accept_to_start + UPSTREAM.start_to_done,
                                   gemm_to_drain[1] - gemm_to_drain[0]], ["FILL B -> GEMM", "GEMM -> DRAIN"])
    tb.verdict.check(len(reqs) == 2 and len(done) == 4 and reqs[1] - done[0] == 2,
                     f"FILL B's request at {reqs[1:]} and FILL A's completion at {done[:1]}: 2 cycles apart expected")
    sc.finish(run)


async def drains(dut) -> None:
    """DRAINs of 32, 8, 16 and 32 sub-tiles after a GEMM (memory, memory, memory, a node): each 22 + 10 n/8
    cycles from its start, one bank collected while the other is sent; the first waits for the array."""
    tb = NocTB(dut, "test_timing_drains")
    sc = Scenario(tb)
    ga, gb = _matmul_operands(tb)
    sc.burst(P_AGENT, Buf.L1A, 0, ga)
    sc.burst(P_AGENT, Buf.L1B, 0, gb)
    ops = [("gemm", GM, GN, NK), ("drain", 32), ("drain", 8), ("drain", 16), ("drain", 32)]
    sc.inst(P_AGENT, gemm(GM, GN, NK))
    for k, (_, n) in enumerate(ops[1:]):
        node = dict(dnode=1, dst=sc.coord(P_SINK)) if k == 3 else dict(addr=0x1000 * (k + 1))
        sc.inst(P_AGENT, drain(n, **node))
    run = await sc.run()
    edges = UPSTREAM.retire_edges(ops)
    check_intervals(tb, arrivals(run, P_AGENT, "done"), [b - a for a, b in zip(edges, edges[1:])],
                    ["GEMM -> DRAIN 32", "DRAIN 32 -> DRAIN 8", "DRAIN 8 -> DRAIN 16", "DRAIN 16 -> DRAIN 32 (node)"])
    sc.finish(run)


async def sweep_waits(dut) -> None:
    """Back-to-back GEMMs: a wide one (gm*gn >= 5) starts when the sweep before it stops issuing, a small one
    when the whole array is idle; a 1x1 sweep over 3 K blocks issues one command per 5 cycles, a 2x2 over
    one K block one a cycle; the DRAIN waits for the array."""
    tb = NocTB(dut, "test_timing_sweep_waits")
    sc = Scenario(tb)
    ga, gb = _matmul_operands(tb)
    sc.burst(P_AGENT, Buf.L1A, 0, ga)
    sc.burst(P_AGENT, Buf.L1B, 0, gb)
    ops = [("gemm", GM, GN, NK), ("gemm", GM, GN, NK), ("gemm", 1, 1, 3), ("gemm", 1, 1, 3), ("gemm", 2, 2, 1),
           ("gemm", 2, 2, 1), ("drain", 32)]
    for k, op in enumerate(ops[:-1]):
        sc.inst(P_AGENT, gemm(*op[1:], acc=int(k in (1, 3, 5))))
    sc.inst(P_AGENT, drain(32, dnode=1, dst=sc.coord(P_SINK)))
    run = await sc.run()
    edges = UPSTREAM.retire_edges(ops)
    names = [f"{a[0]} {a[1:]} -> {b[0]} {b[1:]}" for a, b in zip(ops, ops[1:])]
    check_intervals(tb, arrivals(run, P_AGENT, "done"), [b - a for a, b in zip(edges, edges[1:])], names)
    sc.finish(run)
