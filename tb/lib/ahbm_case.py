"""Running one AHBM attention case on the CUBE: random bf16 operands from the
test's seed, the launch (driver + one kernel coroutine per PE), the
scoreboard, the REPORT line and the artifacts. Shared by the ADR §10 benches
(tb/system/test_ahbm*.py) and the decode sweep (tb/perf/test_ahbm_sweep.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from models.ahbm import launch as la
from tb.lib.ahbm_cube import Cube
from tb.lib.ahbm_kernel import launch_kv_parallel, launch_ring, read_output, read_ring_output
from tb.lib.ahbm_score import score_kv_parallel, score_ring
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import Verdict, begin_test

MAX_CYCLES = 2_000_000
GROUPS = 8


def bf16_rand(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    """Normal(0, scale) values truncated to bf16 bit patterns (uint16)."""
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
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


def save_and_finish(v: Verdict, art: Artifacts) -> None:
    art.save(v.meta())
    v.finish()


async def run_ring(dut, name: str, *, seq: int, n: int, q_block: int | None = None,
                   tile: int | None = None) -> None:
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    cube = Cube(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    q = bf16_rand(rng, GROUPS, seq, d)
    k = bf16_rand(rng, seq, d)
    vv = bf16_rand(rng, seq, d)
    rl = la.plan_ring(seq, n, GROUPS, d, (cube.p["R"], cube.p["C"]), q_block, tile)
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
    dut._log.info("REPORT %s: ring N=%d seq=%d q_block=%d tile=%d: %d composites, %d steps skipped, %d cycles, "
                  "compute cycles overlapping KV transfer %d of %d", name, n, seq, rl.args[0].q_block,
                  rl.args[0].tile, sum(c["cnt_comp"] for c in cnt), sum(r.ring_skipped for r in runs), v.cycles,
                  link, comp)
    save_and_finish(v, art)
