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
from dataclasses import dataclass

import cocotb
import numpy as np

from models.ahbm import launch as la
from tb.lib.ahbm_cube import Cube
from tb.lib.ahbm_kernel import launch_kv_parallel, launch_ring, read_output, read_ring_output
from tb.lib.ahbm_score import score_kv_parallel, score_ring
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import Verdict, begin_test

MAX_CYCLES = 2_000_000
GROUPS = 8


def bf16_rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16)


@dataclass
class Case:
    """One launched KV-parallel case: the CUBE after the run and everything the scoreboard needs."""

    cube: Cube
    lp: la.Launch
    runs: list
    o: np.ndarray
    q: np.ndarray
    k: np.ndarray
    vv: np.ndarray
    q_start: int
    request_id: int
    q_block: int | None


async def launch_case(dut, v, *, counter: int, q_start: int, tq: int, n: int, request_id: int, tile: int,
                      q_block: int | None = None) -> Case:
    cube = Cube(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    q = bf16_rand(rng, GROUPS, tq, d)
    k = bf16_rand(rng, counter, d)
    vv = bf16_rand(rng, counter, d)
    lp = la.plan(counter, q_start, tq, n, request_id, GROUPS, d, tile, q_block, (cube.p["R"], cube.p["C"]))
    t0 = cube.now()
    runs = await launch_kv_parallel(cube, lp, q, k, vv, MAX_CYCLES)
    v.cycles = cube.now() - t0
    return Case(cube, lp, runs, await read_output(cube, lp), q, k, vv, q_start, request_id, q_block)


def score(v, c: Case, art: Artifacts, name: str, o: np.ndarray | None = None) -> None:
    score_kv_parallel(v, c.cube, c.lp, c.runs, c.o if o is None else o, c.q, c.k, c.vv, c.q_start,
                      c.request_id, c.q_block, art, name)


async def run_case(dut, name: str, *, counter: int, q_start: int, tq: int, n: int, request_id: int,
                   tile: int, q_block: int | None = None) -> None:
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    c = await launch_case(dut, v, counter=counter, q_start=q_start, tq=tq, n=n, request_id=request_id,
                          tile=tile, q_block=q_block)
    art = Artifacts(v.test)
    score(v, c, art, name)
    polls = sum(r.pop_polls for r in c.runs)
    misses = sum(r.pop_misses for r in c.runs)
    comp = sum(c.cube.counters(c.lp.pe_of(r))["cnt_comp"] for r in range(n))
    dut._log.info("REPORT %s: N=%d counter=%d tq=%d tile=%d start_pe=%d: %d composites, %d cycles, "
                  "child polls %d (misses %d)", name, n, counter, tq, tile, request_id % n, comp, v.cycles,
                  polls, misses)
    save_and_finish(v, art)


def save_and_finish(v, art: Artifacts) -> None:
    art.save({"bench": v.bench, "test": v.test, "seed": v.seed, "run_seed": v.run_seed,
              "verdict": "PASS" if not v.failures else "FAIL", "checks": v.checks, "cycles": v.cycles,
              "failures": v.failures[:20]})
    v.finish()


async def run_ring(dut, name: str, *, seq: int, n: int) -> None:
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    cube = Cube(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    q = bf16_rand(rng, GROUPS, seq, d)
    k = bf16_rand(rng, seq, d)
    vv = bf16_rand(rng, seq, d)
    rl = la.plan_ring(seq, n, GROUPS, d, (cube.p["R"], cube.p["C"]))
    t0 = cube.now()
    runs = await launch_ring(cube, rl, q, k, vv, MAX_CYCLES)
    v.cycles = cube.now() - t0
    o = await read_ring_output(cube, rl)
    art = Artifacts(v.test)
    score_ring(v, cube, rl, runs, o, q, k, vv, art, name)
    cnt = [cube.counters(p) for p in rl.pes]
    link = sum(c["cyc_link"] for c in cnt)
    comp = sum(c["cyc_mm"] + c["cyc_vec"] for c in cnt)
    if n >= 4:   # N=2: a single 1-block transfer ends before the first composite's K lands (measured)
        v.check(link > 0, f"{name}: no compute cycle overlapped a KV receive or send (cyc_link = 0)")
    dut._log.info("REPORT %s: ring N=%d seq=%d: %d composites, %d steps skipped, %d cycles, compute cycles "
                  "overlapping KV transfer %d of %d", name, n, seq, sum(c["cnt_comp"] for c in cnt),
                  n * n - sum(c["cnt_comp"] for c in cnt), v.cycles, link, comp)
    save_and_finish(v, art)


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
@cocotb.parametrize(n=[2, 4, 8])
async def prefill_kv_parallel(dut, n: int) -> None:
    """Prefill with the KV spread over N PEs and reduced per query block (rotated start_pe)."""
    await run_case(dut, f"prefill_kv_parallel.n{n}", counter=29, q_start=0, tq=29, n=n, request_id=n + 1,
                   tile=4, q_block=8 if GROUPS * 8 <= 64 else 4)



@cocotb.test()
@cocotb.parametrize(n=[1, 2, 4, 8])
async def prefill_ring(dut, n: int) -> None:
    """ADR §10 case 4: ring prefill over N PEs (neighbour links), ping-pong KV buffers, receive of
    step s+1 overlapped with compute of step s, causal step skip; ragged blocks (seq not a multiple of N)."""
    await run_ring(dut, f"prefill_ring.n{n}", seq=max(3, 7 * n - 3) if n > 1 else 7, n=n)


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
