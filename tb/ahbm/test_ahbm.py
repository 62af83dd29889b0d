"""ADR §10 cases on the AHBM CUBE (rtl/ahbm/ahbm_cube.v, 2x4 PEs).

Each test: random bf16 Q/K/V, the driver lays each PE's slice out from the
launch arguments (models.ahbm.launch), one kernel coroutine per PE
(tb.ahbm.kernel), then the scoreboard (tb.ahbm.score): O bit exact
against the reference kernel and within tolerance of float64, counts from the
PEs' counters against the predicted ones, artifacts.npz.

Cases: decode without SP (N=1), decode with SP (N=8, depth-3 tree), the
KV-parallel decode and prefill across N in {1,2,4,8} with request_id / start_pe
rotations and ragged lengths, prefill without SP (causal skip + boundary masks).
"""

from __future__ import annotations

import os
from dataclasses import replace

import cocotb
import numpy as np

from models.ahbm.batch import Batch, Request, plan_batch
from tb.ahbm.case import (GROUPS, Case, launch_case, request_data, run_batch, run_case, run_ring, run_session,
                              score)
from models.ahbm.ipcq import encode_cmd
from tb.ahbm.cube import CubeFaulted, CubeTB, CubeTimeout
from tb.ahbm.kernel import KernelPolicy, load_batch, pe_kernel
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import Verdict, begin_test

@cocotb.test()
async def decode_no_sp(dut) -> None:
    """ADR §10 case 1: decode, one PE holds the whole cache (ragged last tile)."""
    await run_case(dut, "decode_no_sp", counter=203, q_start=202, tq=1, n=1, request_id=0, tile=32)


@cocotb.test()
@cocotb.parametrize(request_id=[0, 3, 6])
async def decode_sp(dut, request_id: int) -> None:
    """ADR §10 case 2: decode with SP, N=8, depth-3 tree, start_pe rotated, ragged per PE."""
    await run_case(dut, f"decode_sp.rid{request_id}", counter=301, q_start=300, tq=1, n=8,
                   request_id=request_id, tile=16)


@cocotb.test()
@cocotb.parametrize(n=[1, 2, 4, 8])
async def decode_n(dut, n: int) -> None:
    """Decode over N in {1,2,4,8}; context not a multiple of the tile nor of N (and N=8 with
    fewer tokens on some PEs than a tile)."""
    await run_case(dut, f"decode_n.n{n}", counter=77, q_start=76, tq=1, n=n, request_id=5, tile=8)


@cocotb.test()
async def prefill_no_sp(dut) -> None:
    """ADR §10 case 3: prefill on one PE, query blocks of 4 positions: all-future tiles never
    enqueued, triangular masks on boundary tiles only."""
    await run_case(dut, "prefill_no_sp", counter=38, q_start=0, tq=38, n=1, request_id=0, tile=8, q_block=4)


@cocotb.test()
@cocotb.parametrize(n=[2, 4, 8], start=[0, -1])
async def prefill_kv_parallel(dut, n: int, start: int) -> None:
    """Prefill with the KV spread over N PEs and reduced per query block, start_pe = 0 and N-1
    (request_id = 3N + start: the rotation wraps)."""
    await run_case(dut, f"prefill_kv_parallel.n{n}.s{start % n}", counter=29, q_start=0, tq=29, n=n,
                   request_id=3 * n + start, tile=4, q_block=8)



@cocotb.test()
@cocotb.parametrize(n=[1, 2, 4, 8])
async def prefill_ring(dut, n: int) -> None:
    """ADR §10 case 4: ring prefill over N PEs (neighbour links), ping-pong KV buffers, receive of
    step s+1 overlapped with compute of step s, causal step skip; ragged blocks (seq not a multiple of N)."""
    await run_ring(dut, f"prefill_ring.n{n}", seq=max(3, 7 * n - 3) if n > 1 else 7, n=n)


@cocotb.test()
@cocotb.parametrize(n=[2, 8])
async def prefill_ring_long(dut, n: int) -> None:
    """Ring prefill with several query sub-blocks per PE (one state set each, Q reloaded when there
    are more than the 4 Q slots) and several tiles per KV block: causal tile skip and boundary
    masks inside the diagonal block; 36 tokens a PE at N=2 (5 sub-blocks), 17-18 at N=8 (140 tokens)."""
    await run_ring(dut, f"prefill_ring_long.n{n}", seq=72 if n == 2 else 140, n=n, q_block=8,
                   tile=16 if n == 2 else 8)


@cocotb.test()
async def scoreboard_fails_on_wrong_value(dut) -> None:
    """The launch scoreboard is not blind: on a real N=4 decode it passes, then fails on one flipped
    bit of O, on an O element off by a factor of two (the float64 bound) and on a wrong prediction (another request_id rotates the placement, so counts differ)."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), "scoreboard_fails_on_wrong_value", dut._log)
    c = await launch_case(dut, v, [Request(41, 40, 1, 1)], tile=5, n=4)
    scratch = Artifacts(v.test + ".probe")

    def probe_of(case: Case, what: str, outs=None) -> list[str]:
        probe = Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log)
        score(probe, case, scratch, what, outs)
        return probe.failures

    fails = probe_of(c, "faithful")
    v.check(not fails, f"the faithful run fails the scoreboard: {fails[:3]}")
    bad_o = c.outs[0].copy()
    bad_o.flat[int(np.random.default_rng(v.seed).integers(bad_o.size))] ^= 0x0001
    fails = probe_of(c, "flipped", [bad_o])
    v.check(any("differ from the reference kernel" in f for f in fails), f"a flipped O bit was not reported: {fails[:3]}")
    far_o = c.outs[0].copy()
    far_o.flat[int(np.random.default_rng(v.seed + 1).integers(far_o.size))] ^= 0x0080  # the exponent's low bit
    fails = probe_of(c, "off by a factor of two", [far_o])
    v.check(any("beyond the derived bound" in f for f in fails),
            f"an O element off by a factor of two passed the float64 bound: {fails[:3]}")
    wrong = replace(c, batch=replace(c.batch, requests=(replace(c.batch.requests[0], request_id=2),)))
    fails = probe_of(wrong, "wrong prediction")
    v.check(any("predicted" in f for f in fails),
            f"counts checked against a wrong placement were not reported: {fails[:3]}")
    v.finish()


async def _parent_and_leaf(dut, name: str) -> tuple[Verdict, CubeTB, Batch, int, int]:
    """A decode of 40 tokens on 2 PEs, loaded, no kernel started: (verdict, cube, batch, the root's rank, the
    leaf's rank), for the tests of a parent whose child never delivers."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    cube = CubeTB(dut)
    await cube.reset()
    d = cube.p["D"]
    req = Request(40, 39, 1, 0)
    batch = plan_batch([req], 2, GROUPS, d, 8, (cube.p["R"], cube.p["C"]))
    root = batch.first.tree.root
    await load_batch(cube, batch, [request_data(np.random.default_rng(v.seed), req, d)])
    return v, cube, batch, root, next(r for r in range(2) if r != root)


async def _root_fails(dut, v: Verdict, cube: CubeTB, batch: Batch, root: int, bound: int,
                      failure: type[Exception], what: str) -> tuple[str, int] | None:
    """The root's kernel, which must end in `failure`: (its message, cycles waited), or None (and a failed
    check) when it finished."""
    t0 = cube.now()
    try:
        await pe_kernel(cube, batch, root, bound)
    except failure as exc:
        waited = cube.now() - t0
        dut._log.info("REPORT %s: named failure after %d cycles: %s", what, waited, exc)
        return str(exc), waited
    v.check(False, f"the root finished although its child never delivered ({what})")
    return None


@cocotb.test()
async def hang_ends_as_named_failure(dut) -> None:
    """A leaf whose kernel never runs: its parent's wait for that child's partial must end within
    its cycle bound as a CubeTimeout naming the rank, the PE and the direction (never a silent hang)."""
    v, cube, batch, root, leaf = await _parent_and_leaf(dut, "hang_ends_as_named_failure")
    lp = batch.first
    bound = 20_000
    t0 = cube.now()
    ended = await _root_fails(dut, v, cube, batch, root, bound, CubeTimeout, "hang")
    if ended is not None:
        msg, waited = ended
        want = f"rank {root} (PE {lp.pe_of(root)}) waiting for the partial of its child 0 (direction " \
               f"{'NESW'[lp.child_dirs(root)[0]]}) of unit 0"
        v.check(want in msg, f"the timeout does not name the wait: {msg!r} (expected {want!r})")
        v.check(waited <= bound + 1000, f"the wait ended after {waited} cycles, bound {bound}")
    v.check(cube.counters(lp.pe_of(leaf))["cmd_done"] == 0, "the idle leaf ran commands")
    v.cycles = cube.now() - t0
    v.finish()


@cocotb.test()
async def fault_ends_a_waiting_kernel(dut) -> None:
    """A leaf that raises FAULT (a command with a reserved bit set) stops every queue of its own until
    fault_clr, so its partial never comes: its parent's wait must end at once, as a CubeFaulted naming the
    leaf's PE and code, not at the cycle bound (found when a word-addressed CUBE got byte addresses: the
    kernels waited 2,000,000 cycles, 176 s, before naming F_RANGE)."""
    v, cube, batch, root, leaf = await _parent_and_leaf(dut, "fault_ends_a_waiting_kernel")
    lp = batch.first
    bound = 200_000
    t0 = cube.now()
    await cube.send(lp.pe_of(leaf), encode_cmd("MERGE", tag=0x5A) | 1 << 48)  # F_RSVD (units: docs/ahbm.md §4)
    ended = await _root_fails(dut, v, cube, batch, root, bound, CubeFaulted, "fault")
    if ended is not None:
        msg, waited = ended
        want = f"PE {lp.pe_of(leaf)} raised F_RSVD (tag 0x5a)"
        v.check(want in msg, f"the failure does not name the fault: {msg!r} (expected {want!r})")
        v.check(f"rank {root} (PE {lp.pe_of(root)}) waiting for the partial of its child 0" in msg,
                f"the failure does not name the wait: {msg!r}")
        v.check(waited < 10_000, f"the wait ended after {waited} cycles: not at once (bound {bound})")
    v.cycles = cube.now() - t0
    v.finish()


# ---------------------------------------------------------------- batched decode and the §5.6 loop


def batch_requests(b: int, base: int = 61) -> list[Request]:
    """B decode requests with their own, ragged, cache lengths and ids (start_pe = id mod N)."""
    return [Request(base + 13 * r, base + 13 * r - 1, 1, 3 * r + 1) for r in range(b)]


@cocotb.test()
@cocotb.parametrize(b=[1, 2, 4, 8])
async def decode_batch(dut, b: int) -> None:
    """Batched decode, N=8: B requests in one launch, each with its own cache, valid lengths, start_pe
    and O_base; every request's O bit exact and within tolerance; one request's reduction runs while
    the next request's tiles stream (the REPORT line counts the polls those tiles covered)."""
    await run_batch(dut, f"decode_batch.b{b}", batch_requests(b), n=8, tile=8)


@cocotb.test()
async def decode_batch_unstreamed(dut) -> None:
    """The same batch (B=4) with the unstreamed reduction (IPCQ_POP, MERGE, IPCQ_PUSH): same bits."""
    await run_batch(dut, "decode_batch_unstreamed", batch_requests(4), n=8, tile=8,
                    policy=KernelPolicy(stream=False))


@cocotb.test()
async def miss_rule_fails_a_waiting_kernel(dut) -> None:
    """ADR §5.6: a kernel that waits on a poll miss while it still has tiles to issue must fail the
    scoreboard (the same batch passes with the default kernel, decode_batch.b4)."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), "miss_rule_fails_a_waiting_kernel", dut._log)
    c = await launch_case(dut, v, batch_requests(4), tile=8, n=8, policy=KernelPolicy(on_miss="wait"))
    probe = Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log)
    score(probe, c, Artifacts(v.test + ".probe"), "waiting kernel")
    waits = sum(r.waits_with_work for r in c.runs)
    v.check(waits > 0, "the waiting kernel never waited on a miss with work left: the case does not test the rule")
    v.check(any("waited" in f and "§5.6" in f for f in probe.failures),
            f"a kernel that waited {waits} times on a miss with tiles left passed the scoreboard")
    v.check(all("§5.6" in f for f in probe.failures), f"other checks failed too: {probe.failures[:3]}")
    v.finish()


# ---------------------------------------------------------------- launches that append to one cache (ADR P3)


@cocotb.test()
@cocotb.parametrize(n=[1, 8])
async def decode_steps(dut, n: int) -> None:
    """Decode across launches: T = 8 consecutive steps on one cache; before each step the driver appends
    the new token's K and V row to its owner's next slot and advances the counter (nothing else of the
    cache is written); O checked at every step."""
    c0 = 53
    await run_session(dut, f"decode_steps.n{n}", [Request(c0 + t, c0 + t - 1, 1, 5) for t in range(8)],
                      n=n, tile=8)


@cocotb.test()
@cocotb.parametrize(n=[1, 4])
async def prefill_chunks(dut, n: int) -> None:
    """Chunked prefill across launches: query chunks of 6 positions (the last one 3), q_start 0, 6, 12,
    18, 24, each launch over a cache already holding the earlier chunks plus its own (appended before
    it); causal skip and boundary masks from absolute positions; O checked per chunk."""
    seq, w = 27, 6
    chunks = [Request(min(seq, s + w), s, min(seq, s + w) - s, 2, q_block=3) for s in range(0, seq, w)]
    await run_session(dut, f"prefill_chunks.n{n}", chunks, n=n, tile=4)
