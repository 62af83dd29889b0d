"""The AHBM attention kernel as cocotb coroutines, one per PE, and its driver.

The driver (:func:`launch_kv_parallel`) does only what ADR §2.2 gives it: it
writes each PE's slice (Q, K/V caches with the round-robin placement, the
boundary mask tiles) and hands each PE its launch arguments (buffer bases,
global_token_counter, start_pe, pe_id, query-block metadata). Each PE's
kernel (:func:`pe_kernel`) then works from those arguments alone
(models.ahbm.launch.walk), with the §5.1 skeleton:

* per query block: LOAD_Q, then one ATTN_TILE per tile that is not all-future
  (all-future tiles are never enqueued), a mask only on boundary tiles, INIT on
  the first; the PE's front-end prefetches K/V PREFETCH tiles ahead;
* the §5.6 reduction loop: after each tile it polls ONLY the direction of the
  next child it expects; on a hit it enqueues IPCQ_POP of that child's partial
  into its own state set, on a miss it goes on with the next tile instead of
  waiting; once its tiles are out it waits for the remaining children;
* it merges its children in the tree's fixed order (bit-exact with
  models.ahbm.tree.reduce), then pushes to its parent (a leaf's push is the
  tail push of its last composite) or, at the root, normalises and stores O.

A PE with no visible tile still takes part: NOP INIT gives it the empty state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cocotb
import numpy as np

from models.ahbm import launch as la
from models.ahbm.numerics import bits_to_f32
from tb.lib.ahbm_cube import Cube

OWN, CHILD0 = 0, 2          # state sets: own sweep in S0, child partials in S2.. (tree order)


@dataclass
class PeRun:
    """What one PE's kernel did (commands it enqueued, by kind)."""

    rank: int
    pe: int
    enqueued: dict[str, int] = field(default_factory=dict)
    pop_polls: int = 0
    pop_misses: int = 0
    ring_skipped: int = 0           # ring steps with nothing enqueued (causal step skip)

    def add(self, op: str) -> None:
        self.enqueued[op] = self.enqueued.get(op, 0) + 1


async def pe_kernel(cube: Cube, lp: la.Launch, rank: int, max_cycles: int) -> PeRun:
    args = lp.args[rank]
    p = lp.pe_of(rank)
    parent = lp.parent_dir(rank)
    children = lp.child_dirs(rank)
    run = PeRun(rank, p)

    async def cmd(op: str, **f: int) -> None:
        run.add(op)
        await cube.cmd(p, op, **f)

    def child_ready(k: int) -> bool:
        return bool((cube.pop_avail(p) >> children[k]) & 1)

    for bw in la.walk(args):
        rows = bw.rows
        await cmd("LOAD_Q", rows=rows, qreg=0, q_addr=bw.q_addr)
        popped = 0
        leaf = parent is not None and not children
        for i, t in enumerate(bw.tiles):
            f = dict(rows=rows, keys=t.keys, sreg=OWN, qreg=0, k_addr=t.k_addr, v_addr=t.v_addr,
                     init=int(i == 0), tag=(t.j & 0xFF))
            if t.mask_addr is not None:
                f.update(mask_en=1, mask_addr=t.mask_addr)
            if leaf and i == len(bw.tiles) - 1:
                f.update(push_en=1, dir=parent, push_tag=rank)       # tail push (ADR §8.4)
            await cmd("ATTN_TILE", **f)
            if popped < len(children):                               # §5.6: poll the next child only
                run.pop_polls += 1
                if child_ready(popped):
                    await cmd("IPCQ_POP", rows=rows, sreg=CHILD0 + popped, dir=children[popped])
                    popped += 1
                else:
                    run.pop_misses += 1                              # miss: issue the next tile
        if not bw.tiles:
            await cmd("NOP", sreg=OWN, init=1)
            if leaf:
                await cmd("IPCQ_PUSH", rows=rows, sreg=OWN, dir=parent, push_tag=rank)
        while popped < len(children):
            k = popped
            await cube.wait_for(p, lambda: child_ready(k),
                                f"rank {rank} (PE {p}) waiting for the partial of its child {k} "
                                f"(direction {'NESW'[children[k]]})", max_cycles, also=cube.core(p).pop_avail)
            await cmd("IPCQ_POP", rows=rows, sreg=CHILD0 + k, dir=children[k])
            popped += 1
        for k in range(len(children)):
            await cmd("MERGE", rows=rows, sreg=OWN, sreg2=CHILD0 + k)
        if parent is not None and children:
            await cmd("IPCQ_PUSH", rows=rows, sreg=OWN, dir=parent, push_tag=rank)
        if parent is None:
            await cmd("NORM_STORE", rows=rows, sreg=OWN, o_addr=bw.o_addr)
        # a block's pops must have run before the next block polls the same queues
        await cube.wait_idle(p, max_cycles)
    return run


async def launch_kv_parallel(cube: Cube, lp: la.Launch, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                             max_cycles: int) -> list[PeRun]:
    """Driver + kernels: load every PE's slice, start one kernel per rank, join them."""
    for rank, args in enumerate(lp.args):
        need = la.slice_bytes(args)
        if need > cube.p["WORDS"] * 64:
            raise ValueError(f"rank {rank} needs a {need}-byte slice; the CUBE has WORDS={cube.p['WORDS']} "
                             f"({cube.p['WORDS'] * 64} bytes): raise WORDS to >= {-(-need // 64)}")
        await cube.load(lp.pe_of(rank), 0, la.slice_image(args, q, k, v))
    tasks = [cocotb.start_soon(pe_kernel(cube, lp, r, max_cycles)) for r in range(len(lp.args))]
    return [await t for t in tasks]


async def read_output(cube: Cube, lp: la.Launch) -> np.ndarray:
    """O of every query block from the root's slice, as bf16 [G, T_q, d]."""
    root = lp.tree.root if lp.tree else 0
    args = lp.args[root]
    blocks = []
    for bw in la.walk(args):
        o = await cube.read_bf16(lp.pe_of(root), bw.o_addr, bw.rows * args.d)
        blocks.append(o.reshape(args.groups, bw.block.qe - bw.block.qs, args.d))
    return np.concatenate(blocks, axis=1)


def read_state(cube: Cube, p: int, sreg: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m, l, O) fp32 of state set `sreg` of PE p, read through the hierarchy."""
    core = cube.core(p)
    d, maxrows = cube.p["D"], cube.p["MAXROWS"]
    base = sreg * maxrows
    m = np.array([int(core.st_m[base + r].value) for r in range(rows)], dtype=np.uint32)
    l = np.array([int(core.st_l[base + r].value) for r in range(rows)], dtype=np.uint32)
    o = np.array([int(core.st_o[base * d + i].value) for i in range(rows * d)], dtype=np.uint32)
    return bits_to_f32(m), bits_to_f32(l), bits_to_f32(o).reshape(rows, d)


# ---------------------------------------------------------------- ring attention (ADR §5.5)


async def ring_kernel(cube: Cube, rl: la.RingLaunch, rank: int, max_cycles: int) -> PeRun:
    """One PE of ring prefill. Per step s: forward the block it holds (TX engine), receive the
    block of step s+1 into the other ping-pong buffer (RX engine) while step s computes, and
    enqueue its composites (each query sub-block against each tile of the block, state set = the
    sub-block) unless the block is all-future (causal step skip); tiles all-future for a
    sub-block are left out, partial ones masked. Buffer reuse waits on the PE's own counters: a
    buffer is refilled only after the composites that read it and the send that forwarded it."""
    a = rl.args[rank]
    p = rl.pes[rank]
    nxt, prv = rl.dirs[rank]
    run = PeRun(rank, p)
    c = cube.core(p)

    def count(name: str) -> int:
        return int(getattr(c, name).value)

    async def cmd(op: str, **f: int) -> None:
        run.add(op)
        await cube.cmd(p, op, **f)

    async def until(name: str, n: int, what: str) -> None:
        await cube.wait_for(p, lambda: count(name) >= n, f"rank {rank} (PE {p}) {what}", max_cycles)

    subs = a.subs()
    reload_q = len(subs) > 4                 # more sub-blocks than Q slots: reload per step
    if not reload_q:
        for i in range(len(subs)):
            await cmd("LOAD_Q", rows=a.sub_rows(i), qreg=i, q_addr=a.q_base + a.sub_offset(i))
    steps = la.ring_walk(a)
    issued = 0
    started: set[int] = set()                # sub-blocks whose state set is initialised
    done_by_step: list[int] = []             # composites issued up to and including step s
    for st in steps:
        s = st.step
        if s >= 1:
            await until("cnt_rx", s, f"receiving the KV block of ring step {s}")
        if s <= a.n - 2:
            await cmd("KV_SEND", dir=nxt, kv_addr=st.held, kv_bytes=a.kv_bytes(st.keys), tag=s)
            if s >= 2:                        # buffer (s+1) % 2 was read at step s-1: free it first
                await until("cnt_comp", done_by_step[s - 1], f"finishing the composites of ring step {s - 1}")
                await until("cnt_tx", s, f"forwarding the KV block of ring step {s - 1}")
            await cmd("KV_RECV", dir=prv, kv_addr=a.buf[(s + 1) % 2], kv_bytes=a.kv_bytes(steps[s + 1].keys),
                      tag=s + 1)
        if not st.tiles:
            run.ring_skipped += 1             # causal step skip: the block is all-future
        loaded = -1
        for t in st.tiles:
            rows = a.sub_rows(t.sub)
            if reload_q and t.sub != loaded:
                await cmd("LOAD_Q", rows=rows, qreg=t.sub % 4, q_addr=a.q_base + a.sub_offset(t.sub))
                loaded = t.sub
            f = dict(rows=rows, keys=t.keys, sreg=t.sub, qreg=t.sub % 4, k_addr=st.held + t.t0 * a.d * 2,
                     v_addr=st.held + a.v_offset(st.keys) + t.t0 * a.d * 2, init=int(t.sub not in started),
                     tag=s)
            if t.mask_addr is not None:
                f.update(mask_en=1, mask_addr=t.mask_addr)
            await cmd("ATTN_TILE", **f)
            started.add(t.sub)
            issued += 1
        done_by_step.append(issued)
    for i in range(len(subs)):
        await cmd("NORM_STORE", rows=a.sub_rows(i), sreg=i, o_addr=a.o_base + a.sub_offset(i))
    await cube.wait_idle(p, max_cycles)
    return run


async def launch_ring(cube: Cube, rl: la.RingLaunch, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                      max_cycles: int) -> list[PeRun]:
    for a in rl.args:
        need = la.ring_slice_bytes(a)
        if need > cube.p["WORDS"] * 64:
            raise ValueError(f"ring rank {a.rank} needs a {need}-byte slice; WORDS={cube.p['WORDS']} is "
                             f"{cube.p['WORDS'] * 64} bytes: raise WORDS to >= {-(-need // 64)}")
        await cube.load(rl.pes[a.rank], 0, la.ring_image(a, q, k, v))
    tasks = [cocotb.start_soon(ring_kernel(cube, rl, r, max_cycles)) for r in range(len(rl.args))]
    return [await t for t in tasks]


async def read_ring_output(cube: Cube, rl: la.RingLaunch) -> np.ndarray:
    """Every rank's O sub-blocks, concatenated in sequence order: bf16 [G, S, d]."""
    blocks = []
    for a in rl.args:
        for i, (bs, be) in enumerate(a.subs()):
            o = await cube.read_bf16(rl.pes[a.rank], a.o_base + a.sub_offset(i), a.sub_rows(i) * a.d)
            blocks.append(o.reshape(a.groups, be - bs, a.d))
    return np.concatenate(blocks, axis=1)
