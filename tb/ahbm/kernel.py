"""The AHBM attention kernel as cocotb coroutines, one per PE, and its driver.

The driver (:func:`load_batch`, :func:`write_step`) does only what ADR §2.2 gives it: it writes each PE's slice (per
request of the batch: Q, the K/V cache with the round-robin placement, the boundary mask tiles) and
hands each PE its launch arguments (buffer bases, global_token_counter, start_pe, pe_id, query-block
metadata). Each PE's kernel (:func:`pe_kernel`) then works from those arguments alone
(models.ahbm.launch.walk). Its work is a list of units, one per (request, query block), in batch
order; per unit: LOAD_Q, one ATTN_TILE per tile that is not all-future (INIT on the first, a mask on
boundary tiles only, a leaf's last tile with the tail push to its parent), then the unit's reduction.

The §5.6 loop: the kernel keeps at most `window` tile composites in flight (PREFETCH + 2 by default:
the front-end's look-ahead plus the one computing and one behind), and before every enqueue polls the
next child of the oldest unit whose own tiles are all enqueued (its O_local will be final when the
merge runs: the queue is in order). On a hit it enqueues a streamed MERGE of that child's packet (cut
through: polled on the header), the last child's with PUSH_EN to the parent; on a miss it enqueues the
next tile, of this unit's successors (other requests of the batch) - it waits only when every tile is
issued or the window is full. Children are merged in the tree's order (bit exact with
models.ahbm.tree.reduce); every PE reduces its units in order and pushes them in order, so each
queue delivers a child's partials in unit order. The root stores each unit's O (NORM_STORE).

State sets: unit u uses S(u mod 8) (S(u mod 7) unstreamed, S7 then holds the popped child), Q slot
u mod 4; a unit's first tile waits until the unit 8 (7) before it has its reduction enqueued. A PE
with no visible tile in a unit uses NOP INIT (and a leaf still pushes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from cocotb.triggers import gather

from models.ahbm.batch import Batch, append_writes, batch_image
from models.ahbm.launch import Launch, RingLaunch, query_writes, ring_image, ring_slice_bytes, ring_walk, walk
from models.ahbm.numerics import bits_to_f32
from tb.ahbm.cube import CubeTB

SCRATCH = 7                 # unstreamed reduction: the popped child's state set


@dataclass(frozen=True)
class KernelPolicy:
    """How a PE's kernel schedules its work (ADR §5.6)."""

    window: int | None = None       # tile composites in flight at most; None: the run's PREFETCH + 2
    on_miss: str = "tile"           # "tile": a poll miss is covered by the next tile; "wait": the kernel
                                    # blocks on a miss (what §5.6 rules out; kept to test the check)
    stream: bool = True             # streamed MERGE from the child's queue, else IPCQ_POP + MERGE + IPCQ_PUSH

    def __post_init__(self) -> None:
        if self.on_miss not in ("tile", "wait"):
            raise ValueError(f"on_miss={self.on_miss!r}: 'tile' (cover a miss with work) or 'wait'")
        if self.window is not None and self.window < 1:
            raise ValueError(f"window={self.window}: at least one tile composite in flight")

    @property
    def state_sets(self) -> int:
        """State sets the units rotate through: all 8, or 7 unstreamed (S7 holds the popped child)."""
        return 8 if self.stream else SCRATCH

    def state_set(self, unit: int) -> int:
        return unit % self.state_sets


@dataclass
class PeRun:
    """What one PE's kernel did (commands it enqueued, by kind) and how its polls went."""

    rank: int
    pe: int
    enqueued: dict[str, int] = field(default_factory=dict)
    pop_polls: int = 0
    pop_misses: int = 0
    misses_covered: int = 0         # a tile was enqueued right after the miss
    misses_in_flight: int = 0       # the window was full: the PE had `window` tiles in flight
    misses_idle: int = 0            # no tile left to issue (batch of one, short context): the kernel waited
    waits_with_work: int = 0        # waited on a miss while a tile could have been enqueued (§5.6 broken)
    ring_skipped: int = 0           # ring steps with nothing enqueued (causal step skip)

    def add(self, op: str) -> None:
        self.enqueued[op] = self.enqueued.get(op, 0) + 1


@dataclass(frozen=True)
class Item:
    """One step of a PE's tile work: a unit's LOAD_Q, one of its tiles, or its empty sweep."""

    kind: str                       # "load_q", "tile", "empty"
    unit: int
    tile: int = 0


async def pe_kernel(cube: CubeTB, batch: Batch, rank: int, max_cycles: int,
                    policy: KernelPolicy = KernelPolicy()) -> PeRun:
    lp = batch.first
    p = lp.pe_of(rank)
    parent = lp.parent_dir(rank)
    children = lp.child_dirs(rank)
    leaf = parent is not None and not children
    run = PeRun(rank, p)
    core = cube.core(p)
    launch_pes = [lp.pe_of(r) for r in range(len(lp.args))]  # a FAULT on any of them ends this PE's waits
    units = [(r, bw) for r, l in enumerate(batch.launches) for bw in walk(l.args[rank])]
    nsets = policy.state_sets
    window = policy.window or cube.p["PREFETCH"] + 2
    items: list[Item] = []
    for u, (_, bw) in enumerate(units):
        items.append(Item("load_q", u))
        items += [Item("tile", u, i) for i in range(len(bw.tiles))] or [Item("empty", u)]
    last_item = {it.unit: i for i, it in enumerate(items)}
    tiles_enq = 0
    # a queue's status describes its head packet, which an enqueued but not yet run consumer (POP or
    # streamed MERGE) of that direction will take: poll a direction again only once its last one ran
    pops_enq, pop_base = 0, int(core.cnt_pop.value)
    last_pop = {d: -1 for d in children}

    async def cmd(op: str, **f: int) -> None:
        run.add(op)
        await cube.cmd(p, op, **f)

    def in_flight() -> int:
        return tiles_enq - int(core.cnt_comp.value)

    def child_ready(k: int) -> bool:
        if int(core.cnt_pop.value) - pop_base <= last_pop[children[k]]:
            return False                       # the head still belongs to the consumer already enqueued
        word = cube.pop_head(p) if policy.stream else cube.pop_avail(p)
        return bool(word >> children[k] & 1)

    def can_issue(i: int) -> bool:
        it = items[i]
        if it.kind == "load_q" and it.unit >= nsets and red <= it.unit - nsets:
            return False                       # its state set still holds an unreduced unit
        return it.kind != "tile" or in_flight() < window

    async def issue(it: Item) -> None:
        nonlocal tiles_enq
        _, bw = units[it.unit]
        s, qr = policy.state_set(it.unit), it.unit % 4
        if it.kind == "load_q":
            await cmd("LOAD_Q", rows=bw.rows, qreg=qr, q_addr=bw.q_addr)
        elif it.kind == "empty":
            await cmd("NOP", sreg=s, init=1)
            if leaf:
                await cmd("IPCQ_PUSH", rows=bw.rows, sreg=s, dir=parent, push_tag=it.unit & 0xFF)
        else:
            t = bw.tiles[it.tile]
            f = dict(rows=bw.rows, keys=t.keys, sreg=s, qreg=qr, k_addr=t.k_addr, v_addr=t.v_addr,
                     init=int(it.tile == 0), tag=t.j & 0xFF)
            if t.mask_addr is not None:
                f.update(mask_en=1, mask_addr=t.mask_addr)
            if leaf and it.tile == len(bw.tiles) - 1:
                f.update(push_en=1, dir=parent, push_tag=it.unit & 0xFF)     # tail push (ADR §8.4)
            tiles_enq += 1
            await cmd("ATTN_TILE", **f)

    async def merge(u: int, k: int) -> None:
        nonlocal pops_enq
        last_pop[children[k]] = pops_enq
        pops_enq += 1
        _, bw = units[u]
        s, last = policy.state_set(u), k == len(children) - 1
        if policy.stream:
            f = dict(rows=bw.rows, sreg=s, src_q=1, dir=children[k])
            if last and parent is not None:
                f.update(push_en=1, pdir=parent, push_tag=u & 0xFF)
            await cmd("MERGE", **f)
        else:
            await cmd("IPCQ_POP", rows=bw.rows, sreg=SCRATCH, dir=children[k])
            await cmd("MERGE", rows=bw.rows, sreg=s, sreg2=SCRATCH)
            if last and parent is not None:
                await cmd("IPCQ_PUSH", rows=bw.rows, sreg=s, dir=parent, push_tag=u & 0xFF)

    def snapshot() -> tuple[int, int, int, int]:
        return (int(core.cnt_comp.value), int(core.cnt_pop.value), int(core.pop_valid.value),
                int(core.pop_avail.value))

    nxt = red = child = 0
    while red < len(units):
        missed = False
        if nxt > last_item[red]:                       # unit `red`: own tiles all enqueued
            if child < len(children):
                run.pop_polls += 1
                if child_ready(child):
                    await merge(red, child)
                    child += 1
                    continue
                run.pop_misses += 1
                missed = True
            else:
                if parent is None:
                    await cmd("NORM_STORE", rows=units[red][1].rows, sreg=policy.state_set(red),
                              o_addr=units[red][1].o_addr)
                red, child = red + 1, 0
                continue
        if nxt < len(items) and can_issue(nxt) and not (missed and policy.on_miss == "wait"):
            await issue(items[nxt])
            nxt += 1
            run.misses_covered += int(missed)
            continue
        if missed:
            if nxt >= len(items):
                run.misses_idle += 1
            elif can_issue(nxt):
                run.waits_with_work += 1
            else:
                run.misses_in_flight += 1
        snap = snapshot()
        what = (f"rank {rank} (PE {p}) waiting for the partial of its child {child} (direction "
                f"{'NESW'[children[child]]}) of unit {red}" if missed else
                f"rank {rank} (PE {p}) waiting for a tile slot ({in_flight()} of {window} in flight)")
        await cube.wait_for(p, lambda: snapshot() != snap, what, max_cycles, also=(core.pop_valid, core.pop_avail),
                            watch=launch_pes)
    await cube.wait_idle(p, max_cycles)
    return run


def check_fits(cube: CubeTB, batch: Batch) -> None:
    """Refuse a batch whose slice map the CUBE's slices cannot hold, before anything is written."""
    need = batch.slice_bytes
    if need > cube.p["WORDS"] * 64:
        raise ValueError(f"the batch needs a {need}-byte slice; the CUBE has WORDS={cube.p['WORDS']} "
                         f"({cube.p['WORDS'] * 64} bytes): raise WORDS to >= {-(-need // 64)}")


async def load_batch(cube: CubeTB, batch: Batch, data: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
    """The driver: every PE's whole slice for the batch."""
    check_fits(cube, batch)
    for rank in range(len(batch.first.args)):
        await cube.load(batch.first.pe_of(rank), 0, batch_image(batch, rank, data))


async def run_kernels(cube: CubeTB, batch: Batch, max_cycles: int,
                      policy: KernelPolicy = KernelPolicy()) -> list[PeRun]:
    """One kernel per rank, joined; the first to fail (a named timeout) cancels the others at once."""
    return list(await gather(*(pe_kernel(cube, batch, r, max_cycles, policy) for r in range(len(batch.first.args)))))


async def write_step(cube: CubeTB, batch: Batch, request_id: int, first: int, q: np.ndarray, k: np.ndarray,
                     v: np.ndarray) -> None:
    """The driver between launches on one cache (P3), for a batch of that one request: append the
    tokens [first, counter) its launch adds to their owners' slots, then write its Q and mask tiles;
    nothing else of the slice is touched."""
    check_fits(cube, batch)
    lp = batch.first
    for rank, addr, rows in append_writes(lp, request_id, first, batch.requests[0].counter, k, v):
        await cube.load(lp.pe_of(rank), addr, rows)
    for rank, a in enumerate(lp.args):
        for addr, arr in query_writes(a, q):
            await cube.load(lp.pe_of(rank), addr, arr)


async def read_output(cube: CubeTB, lp: Launch) -> np.ndarray:
    """O of every query block of one request from the root's slice, as bf16 [G, T_q, d]."""
    root = lp.tree.root if lp.tree else 0
    args = lp.args[root]
    blocks = []
    for bw in walk(args):
        o = await cube.read_bf16(lp.pe_of(root), bw.o_addr, bw.rows * args.d)
        blocks.append(o.reshape(args.groups, bw.block.qe - bw.block.qs, args.d))
    return np.concatenate(blocks, axis=1)


def read_state(cube: CubeTB, p: int, sreg: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m, l, O) fp32 of state set `sreg` of PE p, read through the hierarchy."""
    core = cube.engine(p)
    d, maxrows = cube.p["D"], cube.p["MAXROWS"]
    base = sreg * maxrows
    m = np.array([int(core.st_m[base + r].value) for r in range(rows)], dtype=np.uint32)
    l = np.array([int(core.st_l[base + r].value) for r in range(rows)], dtype=np.uint32)
    o = np.array([int(core.st_o[base * d + i].value) for i in range(rows * d)], dtype=np.uint32)
    return bits_to_f32(m), bits_to_f32(l), bits_to_f32(o).reshape(rows, d)


# ---------------------------------------------------------------- ring attention (ADR §5.5)


async def ring_kernel(cube: CubeTB, rl: RingLaunch, rank: int, max_cycles: int) -> PeRun:
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
        await cube.wait_for(p, lambda: count(name) >= n, f"rank {rank} (PE {p}) {what}", max_cycles,
                            watch=rl.pes)

    subs = a.subs()
    reload_q = len(subs) > 4                 # more sub-blocks than Q slots: reload per step
    if not reload_q:
        for i in range(len(subs)):
            await cmd("LOAD_Q", rows=a.sub_rows(i), qreg=i, q_addr=a.q_base + a.sub_offset(i))
    steps = ring_walk(a)
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


async def launch_ring(cube: CubeTB, rl: RingLaunch, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                      max_cycles: int) -> list[PeRun]:
    for a in rl.args:
        need = ring_slice_bytes(a)
        if need > cube.p["WORDS"] * 64:
            raise ValueError(f"ring rank {a.rank} needs a {need}-byte slice; WORDS={cube.p['WORDS']} is "
                             f"{cube.p['WORDS'] * 64} bytes: raise WORDS to >= {-(-need // 64)}")
        await cube.load(rl.pes[a.rank], 0, ring_image(a, q, k, v))
    return list(await gather(*(ring_kernel(cube, rl, r, max_cycles) for r in range(len(rl.args)))))


async def read_ring_output(cube: CubeTB, rl: RingLaunch) -> np.ndarray:
    """Every rank's O sub-blocks, concatenated in sequence order: bf16 [G, S, d]."""
    blocks = []
    for a in rl.args:
        for i, (bs, be) in enumerate(a.subs()):
            o = await cube.read_bf16(rl.pes[a.rank], a.o_base + a.sub_offset(i), a.sub_rows(i) * a.d)
            blocks.append(o.reshape(a.groups, be - bs, a.d))
    return np.concatenate(blocks, axis=1)
