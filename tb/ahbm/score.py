"""Scoreboard of an AHBM attention launch on the CUBE (ADR §10 cases).

O is checked bit for bit against the reference kernel (models.ahbm.kernel, the
same composites and merge order in numpy) and against a float64
softmax(Q K^T / sqrt(d)) V within the FlashAttention bound derived from the
kernel's operations (models.ahbm.tolerance: per element, for the launch's tile
and PE count): on the stored bf16 O (the bound plus the bf16 store) and on the
root's final fp32 state. The counts come from the
PEs' own counters and are compared with models.ahbm.kernel.predict_counts and
the reduction tree. Everything checked is also written to artifacts.npz
(schema in docs/ahbm.md §11).
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np

from models.ahbm.attention import State, finalize_f32
from models.ahbm.batch import Batch, Request
from models.ahbm import expect
from models.ahbm.kernel import kv_parallel, ring_prefill
from models.ahbm.launch import Launch, RingLaunch, walk
from models.ahbm.placement import predicted_ring_skips
from models.ahbm.archive import recheck_launch, request_suffix
from models.ahbm.numerics import bf16_to_f32
from models.ahbm.tolerance import check_attention
from tb.ahbm.cube import CubeTB
from tb.ahbm.kernel import KernelPolicy, PeRun, read_state
from tb.lib.artifacts import Artifacts
from tb.lib.verdict import Verdict


class PeCounts:
    """The PEs' counters of a launch, predicted and seen, a row a rank, for artifacts.npz: one
    `exp_pe_counters` / `obs_pe_counters` pair (int64 [rank, key], the keys in `pe_counter_keys`), which the
    archive's re-check compares as any exp_/obs_ pair, and the tiles each rank must leave out
    (`tiles_skipped`). One pair, not a pair of scalars per rank and counter: a launch of 8 PEs would write
    some 190 arrays, and the archive re-reads its whole directory at every test's save."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.exp: list[list[int]] = []
        self.seen: list[list[int]] = []
        self.skipped: list[int] = []

    def add(self, expected: dict[str, int], seen: dict[str, int], tiles_skipped: int) -> None:
        if not self.keys:
            self.keys = list(expected)
        if list(expected) != self.keys:
            raise ValueError(f"rank {len(self.exp)} predicts counters {list(expected)}, rank 0 {self.keys}")
        self.exp.append([int(expected[k]) for k in self.keys])
        self.seen.append([int(seen[k]) for k in self.keys])
        self.skipped.append(int(tiles_skipped))

    def save(self, art: Artifacts) -> None:
        art.add("pe_counter_keys", np.array(self.keys, dtype=str))
        art.add("exp_pe_counters", self.exp, np.int64)
        art.add("obs_pe_counters", self.seen, np.int64)
        art.add("tiles_skipped", self.skipped, np.int64)


def causal_mask(q_pos: np.ndarray, seq: int, groups: int) -> np.ndarray:
    """Additive fp32 mask [groups * len(q_pos), seq]: key k visible to query position q iff k <= q."""
    m = np.where(np.arange(seq)[None, :] <= q_pos[:, None], np.float32(0), np.float32(-np.inf))
    return np.tile(m, (groups, 1)).astype(np.float32)


def _rows(x: np.ndarray) -> np.ndarray:
    """[G, T, d] -> rows g*T + i."""
    g, t, d = x.shape
    return x.reshape(g * t, d)


def check_request_o(v: Verdict, lp: Launch, req: Request, o_rtl: np.ndarray, q: np.ndarray,
                    k: np.ndarray, vv: np.ndarray, case: str) -> np.ndarray:
    """One request's O: bit exact against the reference kernel, within the FlashAttention bound of
    float64. Returns the reference O."""
    a0 = lp.args[0]
    ref = kv_parallel(q, k, vv, req.q_start, a0.n, req.request_id, a0.tile, req.q_block, lp.mesh)
    bad = int(np.count_nonzero(o_rtl != ref.O))
    v.check(bad == 0, f"{case}: {bad} of {ref.O.size} bf16 outputs differ from the reference kernel")
    q_pos = np.arange(req.q_start, req.q_start + q.shape[1])
    mask = causal_mask(q_pos, k.shape[0], a0.groups)
    v.add_checks(1, check_attention(bf16_to_f32(_rows(o_rtl)), _rows(q), k, vv, mask, tile=a0.tile, pes=a0.n,
                                    stored_bf16=True, d=a0.d, name=f"{case} bf16 O"))
    return ref.O


def check_root_state(v: Verdict, cube: CubeTB, lp: Launch, req: Request, sreg: int, q: np.ndarray,
                     k: np.ndarray, vv: np.ndarray, case: str) -> None:
    """The root's final fp32 state of the request's last query block, against the FlashAttention bound."""
    root = lp.tree.root if lp.tree else 0
    last = walk(lp.args[root])[-1]
    b = last.block
    m, l, o = read_state(cube, lp.pe_of(root), sreg, last.rows)
    tiled = finalize_f32(State(m, l, o))
    qb = q[:, b.qs - req.q_start:b.qe - req.q_start, :]
    mb = causal_mask(np.arange(b.qs, b.qe), k.shape[0], lp.args[0].groups)
    a0 = lp.args[0]
    v.add_checks(1, check_attention(tiled, _rows(qb), k, vv, mb, tile=a0.tile, pes=a0.n, d=a0.d,
                                    name=f"{case} fp32 O"))


def score_batch(v: Verdict, cube: CubeTB, batch: Batch, runs: list[PeRun], outs: list[np.ndarray],
                data: list[tuple[np.ndarray, np.ndarray, np.ndarray]], art: Artifacts, case: str,
                policy: KernelPolicy = KernelPolicy(), before: dict[int, dict[str, int]] | None = None) -> None:
    """A launch of B >= 1 requests: every request's O (bit exact, tolerance), the root's fp32 state
    where its state set still holds it, the counts of every PE (summed over the requests; counters
    taken relative to `before`, for a launch that follows others on the same CUBE), the reduction's
    pushes and pops, the §5.6 rule (no wait on a poll miss while a tile could be enqueued)."""
    lp = batch.first
    a0 = lp.args[0]
    n, tile = a0.n, a0.tile
    tag = (lambda r: case) if len(batch.requests) == 1 else (lambda r: f"{case} request {r}")
    total_units = expect.batch_units(batch)
    units = 0
    for r, (req, lr, o, (q, k, vv)) in enumerate(zip(batch.requests, batch.launches, outs, data)):
        ref_o = check_request_o(v, lr, req, o, q, k, vv, tag(r))
        units += len(walk(lr.args[0]))
        if units - 1 + policy.state_sets >= total_units:   # no later unit reused its state set
            check_root_state(v, cube, lr, req, policy.state_set(units - 1), q, k, vv, tag(r))
        art.add(f"q{request_suffix(r)}", q, np.uint16)
        art.add(f"k{request_suffix(r)}", k, np.uint16)
        art.add(f"v{request_suffix(r)}", vv, np.uint16)
        art.add(f"exp_o{request_suffix(r)}", ref_o, np.uint16)
        art.add(f"obs_o{request_suffix(r)}", o, np.uint16)

    # ---- counts per PE, from the PEs' counters (summed over the requests), against models.ahbm.expect
    totals = {"pushes": 0, "pops": 0}
    counts = PeCounts()
    for rank, (run, exp) in enumerate(zip(runs, expect.batch_counters(batch))):
        p = lp.pe_of(rank)
        c = cube.counters(p)
        if before is not None:
            c = {key: c[key] - before[p].get(key, 0) for key in c}
        for key, e in exp.counters.items():
            v.check(c[key] == e, f"{case}: rank {rank} (PE {p}) {key} = {c[key]}, predicted {e}")
        counts.add(exp.counters, c, exp.tiles_skipped)
        v.check(run.enqueued.get("ATTN_TILE", 0) == exp.counters["cnt_comp"],
                f"{case}: rank {rank} enqueued {run.enqueued.get('ATTN_TILE', 0)} composites, "
                f"{exp.counters['cnt_comp']} tiles are not all-future ({exp.tiles_skipped} skipped)")
        v.check(run.waits_with_work == 0, f"{case}: rank {rank} (PE {p}) waited {run.waits_with_work} time(s) "
                "on a poll miss while it could have enqueued a tile (ADR §5.6: a miss is covered by work)")
        totals["pushes"] += c["cnt_push"]
        totals["pops"] += c["cnt_pop"]
        v.check(cube.fault(p).code == 0, f"{case}: rank {rank} (PE {p}) fault {cube.fault(p).name}")
    counts.save(art)
    pushes = expect.batch_pushes(batch)
    v.check(totals["pushes"] == pushes, f"{case}: {totals['pushes']} partial pushes, "
            f"expected N-1 = {n - 1} per reduction x {units} units (request, query block): {pushes}")
    v.check(totals["pops"] == totals["pushes"], f"{case}: {totals['pops']} pops for {totals['pushes']} pushes "
            "(a partial lost or duplicated in IPCQ)")
    report_blocking(cube, [lp.pe_of(r) for r in range(n)], case, before)
    # The tree's depth and its one-hop mapping are properties of the model's tree, not of the device:
    # tests/unit/ahbm/test_ahbm_tree.py checks them; here only what the PEs did counts.
    left = cube.ipcq_undelivered()
    v.check(left == 0, f"{case}: IPCQ words left undelivered (pop_valid {left:#x})")
    v.check(not cube.mon_err(), f"{case}: a PE, DMA or IPCQ monitor fired (see ERROR lines)")
    stores = sum(cube.counters(lp.pe_of(r))["cnt_store"] - (before or {}).get(lp.pe_of(r), {}).get("cnt_store", 0)
                 for r in range(n))
    art.count("o_writes", units, stores)
    art.recheck_with(recheck_launch)
    art.add("launch", json.dumps({"case": case, "n": n, "tile": tile, "mesh": list(lp.mesh),
                                  "requests": [asdict(x) for x in batch.requests],
                                  "args": [[asdict(x) for x in lr.args] for lr in batch.launches]}, default=list))


def report_blocking(cube: CubeTB, pes: list[int], case: str, before: dict[int, dict[str, int]] | None = None) -> int:
    """How long pushes waited on full neighbour queues (a REPORT line; since `before`, for a launch
    that follows others): the evidence that a run's no-loss checks were made under backpressure. Not a
    check: a receiver already popping drains a packet longer than its queue without ever filling it
    (measured on the ring at N=2)."""
    stall = sum(cube.counters(p)["cyc_pstall"] - (before or {}).get(p, {}).get("cyc_pstall", 0) for p in pes)
    cube.dut._log.info("REPORT %s: pushes waited %d cycles on full IPCQ queues (IPCQ_DEPTH %d)", case, stall,
                       cube.p["IPCQ_DEPTH"])
    return stall


def score_ring(v: Verdict, cube: CubeTB, rl: RingLaunch, runs: list[PeRun], o_rtl: np.ndarray,
               q: np.ndarray, k: np.ndarray, vv: np.ndarray, art: Artifacts, case: str) -> None:
    """Ring prefill: O bit exact vs kernel.ring_prefill and within tolerance; per rank the
    composites, the causal step skips, the masks, N-1 sends and receives, one O store."""
    a0 = rl.args[0]
    n, groups, d, seq = a0.n, a0.groups, a0.d, a0.seq
    ref = ring_prefill(q, k, vv, n, a0.q_block, a0.tile)
    bad = int(np.count_nonzero(o_rtl != ref.O))
    v.check(bad == 0, f"{case}: {bad} of {ref.O.size} bf16 outputs differ from the reference ring kernel")
    mask = causal_mask(np.arange(seq), seq, groups)
    v.add_checks(1, check_attention(bf16_to_f32(_rows(o_rtl)), _rows(q), k, vv, mask, tile=min(a0.tile, seq),
                                    pes=n, stored_bf16=True, d=d, name=f"{case} bf16 O"))
    skipped = 0
    counts = PeCounts()
    for rank, (run, exp) in enumerate(zip(runs, expect.ring_counters(rl, ref))):
        p = rl.pes[rank]
        c = cube.counters(p)
        want = {**exp.counters, "cnt_q": run.enqueued.get("LOAD_Q", 0)}  # the query loads its program issued
        for key, x in want.items():
            v.check(c[key] == x, f"{case}: rank {rank} (PE {p}) {key} = {c[key]}, expected {x}")
        counts.add(want, c, exp.tiles_skipped)
        v.check(run.enqueued.get("ATTN_TILE", 0) == exp.counters["cnt_comp"],
                f"{case}: rank {rank} enqueued {run.enqueued.get('ATTN_TILE', 0)} composites, the reference "
                f"ring issues {exp.counters['cnt_comp']} ({exp.tiles_skipped} all-future tiles left out)")
        skipped += run.ring_skipped
        v.check(run.ring_skipped == exp.ring_steps_skipped, f"{case}: rank {rank} skipped {run.ring_skipped} "
                f"ring steps, the geometry predicts {exp.ring_steps_skipped}")
    counts.save(art)
    v.check(skipped == predicted_ring_skips(n), f"{case}: {skipped} ring steps skipped in all, "
            f"predicted N(N-1)/2 = {predicted_ring_skips(n)}")
    art.count("ring_skips", predicted_ring_skips(n), skipped)
    report_blocking(cube, list(rl.pes), case)
    left = cube.ipcq_undelivered()
    v.check(left == 0, f"{case}: IPCQ words left undelivered (pop_valid {left:#x})")
    v.check(not cube.mon_err(), f"{case}: a PE, DMA or IPCQ monitor fired (see ERROR lines)")
    art.add("q", q, np.uint16)
    art.add("k", k, np.uint16)
    art.add("v", vv, np.uint16)
    art.add("exp_o", ref.O, np.uint16)
    art.add("obs_o", o_rtl, np.uint16)
    art.recheck_with(recheck_launch)
    art.add("launch", json.dumps({"case": case, "ring": True, "n": n, "pes": list(rl.pes),
                                  "q_block": a0.q_block, "tile": a0.tile,
                                  "args": [asdict(x) for x in rl.args]}, default=list))
