"""ADR §10 cases on the AHBM CUBE (rtl/ahbm/ahbm_cube.v, 2x4 PEs).

Each test: random bf16 Q/K/V, the driver lays each PE's slice out from the
launch arguments (models.ahbm.launch), one kernel coroutine per PE
(tb.lib.ahbm_kernel), then the scoreboard (tb.lib.ahbm_score): O bit exact
against the reference kernel and within tolerance of float64, counts from the
PEs' counters against the predicted ones, artifacts.npz.

Cases: decode without SP (N=1), decode with SP (N=8, depth-3 tree), the
KV-parallel decode and prefill across N in {1,2,4,8} with request_id / start_pe
rotations and ragged lengths, prefill without SP (causal skip + boundary masks).
"""

from __future__ import annotations

import os

import cocotb
import numpy as np

from models.ahbm import launch as la
from tb.lib.ahbm_case import GROUPS, Case, bf16_rand, launch_case, run_case, run_ring, score
from tb.lib.ahbm_cube import Cube, CubeTimeout
from tb.lib.ahbm_kernel import pe_kernel
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
    bit of O and on a wrong prediction (another request_id rotates the placement, so counts differ)."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), "scoreboard_fails_on_wrong_value", dut._log)
    c = await launch_case(dut, v, counter=41, q_start=40, tq=1, n=4, request_id=1, tile=5)
    scratch = Artifacts(v.test + ".probe")
    probe = Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log)
    score(probe, c, scratch, "faithful")
    v.check(not probe.failures, f"the faithful run fails the scoreboard: {probe.failures[:3]}")
    bad_o = c.o.copy()
    bad_o.flat[int(np.random.default_rng(v.seed).integers(bad_o.size))] ^= 0x0001
    probe = Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log)
    score(probe, c, scratch, "flipped", o=bad_o)
    v.check(any("differ from the reference kernel" in f for f in probe.failures),
            f"a flipped O bit was not reported: {probe.failures[:3]}")
    probe = Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log)
    wrong = Case(**{**c.__dict__, "request_id": 2})
    score(probe, wrong, scratch, "wrong prediction")
    v.check(any("predicted" in f for f in probe.failures),
            f"counts checked against a wrong placement were not reported: {probe.failures[:3]}")
    v.finish()


@cocotb.test()
async def hang_ends_as_named_failure(dut) -> None:
    """A leaf whose kernel never runs: its parent's wait for that child's partial must end within
    its cycle bound as a CubeTimeout naming the rank, the PE and the direction (never a silent hang)."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), "hang_ends_as_named_failure", dut._log)
    cube = Cube(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    q, k, vv = bf16_rand(rng, GROUPS, 1, d), bf16_rand(rng, 40, d), bf16_rand(rng, 40, d)
    lp = la.plan(40, 39, 1, 2, 0, GROUPS, d, 8, None, (cube.p["R"], cube.p["C"]))
    root = lp.tree.root
    leaf = next(r for r in range(2) if r != root)
    for r, a in enumerate(lp.args):
        await cube.load(lp.pe_of(r), 0, la.slice_image(a, q, k, vv))
    bound = 20_000
    t0 = cube.now()
    try:
        await pe_kernel(cube, lp, root, bound)
        v.check(False, "the root finished although its child never pushed")
    except CubeTimeout as exc:
        msg = str(exc)
        waited = cube.now() - t0
        dut._log.info("REPORT hang: named failure after %d cycles: %s", waited, msg)
        want = f"rank {root} (PE {lp.pe_of(root)}) waiting for the partial of its child 0 (direction " \
               f"{'NESW'[lp.child_dirs(root)[0]]})"
        v.check(want in msg, f"the timeout does not name the wait: {msg!r} (expected {want!r})")
        v.check(waited <= bound + 1000, f"the wait ended after {waited} cycles, bound {bound}")
    v.check(cube.counters(lp.pe_of(leaf))["cmd_done"] == 0, "the idle leaf ran commands")
    v.cycles = cube.now() - t0
    v.finish()
