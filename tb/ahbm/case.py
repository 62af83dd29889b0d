"""Running one AHBM attention case on the CUBE: random bf16 operands from the
test's seed, the launch (driver + one kernel coroutine per PE), the
scoreboard, the REPORT line and the artifacts. Shared by the ADR §10 benches
(tb/system/test_ahbm*.py) and the decode sweep (tb/ahbm/test_sweep.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from models.ahbm.batch import Batch, Request, plan_batch
from models.ahbm.launch import plan_ring
from tb.cover import ahbm as ahbm_cover
from tb.ahbm.cube import CubeTB
from tb.ahbm.kernel import (KernelPolicy, PeRun, launch_ring, load_batch, read_output, read_ring_output, run_kernels,
                               write_step)
from tb.ahbm.score import score_batch, score_ring
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
    """One launched KV-parallel batch (B >= 1 requests): the CUBE after the run and what the
    scoreboard needs."""

    cube: CubeTB
    batch: Batch
    runs: list[PeRun]
    outs: list[np.ndarray]
    data: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    policy: KernelPolicy
    start: int                                   # the PE clock (cyc_now) when the kernels started
    end: int                                     # ... and when the last PE was idle
    before: dict[int, dict[str, int]] | None = None   # every PE's counters before the launch (one of a session)

    @property
    def cycles(self) -> int:
        return self.end - self.start


async def run_launch(cube: CubeTB, batch: Batch, data: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                     policy: KernelPolicy = KernelPolicy(), before: dict[int, dict[str, int]] | None = None) -> Case:
    """The kernels of a launch whose slices the driver has written, timed on the PE clock, and every
    request's O read back: what the benches, the sessions and the sweeps all run."""
    clock = cube.core(batch.first.pe_of(0))
    start = int(clock.cyc_now.value)
    runs = await run_kernels(cube, batch, MAX_CYCLES, policy)
    end = int(clock.cyc_now.value)
    outs = [await read_output(cube, lp) for lp in batch.launches]
    return Case(cube, batch, runs, outs, data, policy, start, end, before)


def request_data(rng: np.random.Generator, req: Request, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random bf16 Q [G, T_q, d] and the request's own K, V caches [counter, d]."""
    return bf16_rand(rng, GROUPS, req.tq, d), bf16_rand(rng, req.counter, d), bf16_rand(rng, req.counter, d)


async def launch_case(dut, v, requests: list[Request], tile: int, n: int,
                      policy: KernelPolicy = KernelPolicy()) -> Case:
    """A fresh CUBE, random operands from the test's seed, the driver's slices, the launch; v.cycles
    = the kernels' cycles."""
    cube = CubeTB(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    data = [request_data(rng, req, d) for req in requests]
    batch = plan_batch(requests, n, GROUPS, d, tile, (cube.p["R"], cube.p["C"]))
    await load_batch(cube, batch, data)
    c = await run_launch(cube, batch, data, policy)
    v.cycles = c.cycles
    return c


def score(v, c: Case, art: Artifacts, name: str, outs: list[np.ndarray] | None = None) -> None:
    score_batch(v, c.cube, c.batch, c.runs, c.outs if outs is None else outs, c.data, art, name, c.policy,
                c.before)


def report_polls(dut, name: str, c: Case) -> None:
    """The REPORT line of a launch: composites, cycles, and how the §5.6 polls went (counters relative
    to the launch's start); the launch into the coverage model (tb/cover/ahbm.py)."""
    runs, lp, before = c.runs, c.batch.first, c.before or {}
    n = len(lp.args)
    misses = sum(r.pop_misses for r in runs)
    ahbm_cover.sample_launch(
        "decode" if all(r.tq == 1 for r in c.batch.requests) else "prefill", n, len(c.batch.requests),
        c.cube.p["IPCQ_W"], [("hit", sum(r.pop_polls for r in runs) - misses),
                             ("miss-covered", sum(r.misses_covered for r in runs)),
                             ("miss-in-flight", sum(r.misses_in_flight for r in runs)),
                             ("miss-idle", sum(r.misses_idle for r in runs))])
    cycles = c.cycles
    comp = sum(c.cube.counters(lp.pe_of(r))["cnt_comp"] - before.get(lp.pe_of(r), {}).get("cnt_comp", 0)
               for r in range(n))
    dut._log.info("REPORT %s: B=%d N=%d tile=%d: %d composites, %d cycles, child polls %d: misses %d (covered "
                  "by a new tile %d, by tiles in flight %d, idle %d)", name, len(c.batch.requests), n,
                  lp.args[0].tile, comp, cycles, sum(r.pop_polls for r in runs), sum(r.pop_misses for r in runs),
                  sum(r.misses_covered for r in runs), sum(r.misses_in_flight for r in runs),
                  sum(r.misses_idle for r in runs))


async def run_case(dut, name: str, *, counter: int, q_start: int, tq: int, n: int, request_id: int,
                   tile: int, q_block: int | None = None) -> None:
    """One request (batch of one)."""
    await run_batch(dut, name, [Request(counter, q_start, tq, request_id, q_block)], n=n, tile=tile)


async def run_batch(dut, name: str, requests: list[Request], *, n: int, tile: int,
                    policy: KernelPolicy = KernelPolicy()) -> None:
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    c = await launch_case(dut, v, requests, tile, n, policy)
    art = Artifacts(v.test)
    score(v, c, art, name)
    report_polls(dut, name, c)
    save_and_finish(v, art)


def save_and_finish(v: Verdict, art: Artifacts) -> None:
    art.save(v.meta())
    v.finish()


async def run_ring(dut, name: str, *, seq: int, n: int, q_block: int | None = None,
                   tile: int | None = None) -> None:
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    cube = CubeTB(dut)
    await cube.reset()
    d = cube.p["D"]
    rng = np.random.default_rng(v.seed)
    q = bf16_rand(rng, GROUPS, seq, d)
    k = bf16_rand(rng, seq, d)
    vv = bf16_rand(rng, seq, d)
    rl = plan_ring(seq, n, GROUPS, d, (cube.p["R"], cube.p["C"]), q_block, tile)
    t0 = cube.now()
    runs = await launch_ring(cube, rl, q, k, vv, MAX_CYCLES)
    v.cycles = cube.now() - t0
    o = await read_ring_output(cube, rl)
    art = Artifacts(v.test)
    score_ring(v, cube, rl, runs, o, q, k, vv, art, name)
    ahbm_cover.sample_launch("ring", n, 1, cube.p["IPCQ_W"])
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


async def run_session(dut, name: str, launches: list[Request], *, n: int, tile: int) -> None:
    """Launches one after the other on one cache, no reset between them (ADR P3): the driver writes the
    cache as the first launch finds it, then before each later launch appends the tokens that launch's
    counter adds (post-RoPE K and V rows, into their owners' next slots) and writes its Q and masks.
    Every launch is scored on its own (O against the reference on the cache as it then stands; counts
    from the counters' change over that launch)."""
    v = begin_test(os.environ.get("AGSIM_BENCH", "ahbm"), name, dut._log)
    cube = CubeTB(dut)
    await cube.reset()
    d = cube.p["D"]
    rid = launches[0].request_id
    if any(x.request_id != rid for x in launches) or any(b.counter < a.counter for a, b in zip(launches, launches[1:])):
        raise ValueError(f"{name}: a session is one request whose counter never shrinks")
    rng = np.random.default_rng(v.seed)
    final = launches[-1].counter
    k, vv = bf16_rand(rng, final, d), bf16_rand(rng, final, d)
    max_tq = max(x.tq for x in launches)
    mesh = (cube.p["R"], cube.p["C"])
    t0 = cube.now()
    for t, req in enumerate(launches):
        q = bf16_rand(rng, GROUPS, req.tq, d)
        batch = plan_batch([req], n, GROUPS, d, tile, mesh, max_context=final, max_tq=max_tq)
        data = [(q, k[:req.counter], vv[:req.counter])]
        if t == 0:
            await load_batch(cube, batch, data)
        else:
            await write_step(cube, batch, rid, launches[t - 1].counter, q, k, vv)
        c = await run_launch(cube, batch, data, before={p: cube.counters(p) for p in range(cube.n_pe)})
        art = Artifacts(f"{v.test}.launch{t}")
        step = f"{name} launch {t} (counter {req.counter}, q_start {req.q_start})"
        score(v, c, art, step)
        report_polls(dut, step, c)
        art.save(v.meta())
    v.cycles = cube.now() - t0
    v.finish()
