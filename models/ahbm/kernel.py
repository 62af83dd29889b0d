"""Pure-Python reference of the whole per-PE AHBM attention kernel (ADR-001 §5).

It issues exactly the composites (attention.attn_tile) and merges
(attention.merge, tree.reduce order) the RTL kernel issues, so its O bits are
the expected bits for the benches, and it counts the work.

Cases
* ``kv_parallel``: decode and prefill over the round-robin KV placement.
  N=1 is "no SP" (decode no SP: T_q=1; prefill no SP: query blocks with causal
  skip and triangular masks); N>1 splits the KV over N PEs and reduces
  (m, l, O) over the mesh tree (decode with SP: N=8, depth 3).
* ``ring_prefill``: prefill with SP over a ring of N PEs (§5.5), one
  composite per non-skipped ring step, running state carried across steps.

Inputs are bf16 bit patterns: q[G, T_q, d], k[S, d], v[S, d] (the cache in
global token order; the kernel sees each PE's dense slice via placement).
Queries of a block are flattened to rows g*T_qb + i.  Attention is causal:
key k is visible to query position q iff k <= q.  Decode = T_q 1 at q_start S-1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .placement import (
    classify,
    make_mask_tile,
    n_tiles,
    place,
    ring_block,
    ring_source,
    slot_to_global,
    start_pe,
    tile_positions,
    valid_len,
)
from .attention import State, attn_tile, empty_state, finalize, merge
from .tree import build_tree, reduce

PE_COUNT_KEYS = ("k_loads", "v_loads", "composites", "masked", "tiles_skipped",
                 "ring_steps", "ring_steps_skipped", "pushes", "scores")
# "scores": score elements computed, ROWS x KEYS summed over the composites (the RTL's cnt_score); the MM
# stages do d multiply-adds for each (S2) and d more (S6), so it is the measure of a launch's arithmetic.


def _zero_counts() -> dict[str, int]:
    return {k: 0 for k in PE_COUNT_KEYS}


@dataclass
class KernelResult:
    O: np.ndarray                                   # bf16 patterns [G, T_q, d]
    per_block: list[dict] = field(default_factory=list)  # {"qs","qe","pe":[counts]}
    tree_depth: int = 0
    o_writes: int = 0                               # O stores (one per query block per writer)

    def total(self, key: str) -> int:
        return sum(c[key] for b in self.per_block for c in b["pe"])


def sweep_pe(q_rows, k_pe, v_pe, pos_pe, qs: int, qe: int, groups: int, tile: int,
             counts: dict[str, int]) -> State:
    """One PE's tile sweep for query block [qs, qe) (§5.1 main loop)."""
    d = k_pe.shape[1]
    st = empty_state(q_rows.shape[0], d)
    for j in range(n_tiles(len(pos_pe), tile)):
        pos = pos_pe[j * tile:(j + 1) * tile]
        kind = classify(pos, qs, qe)
        if kind == "future":
            counts["tiles_skipped"] += 1
            continue
        # a ragged last tile is a short tile (KEYS = len(pos)), not a padded one
        kt = k_pe[j * tile:j * tile + len(pos)]
        vt = v_pe[j * tile:j * tile + len(pos)]
        mask = None
        if kind == "partial":                        # boundary tile: the only masked kind
            mask = make_mask_tile(pos, qs, qe, groups)
            counts["masked"] += 1
        counts["k_loads"] += 1
        counts["v_loads"] += 1
        counts["composites"] += 1
        counts["scores"] += q_rows.shape[0] * len(pos)
        st = attn_tile(q_rows, kt, vt, mask, st)
    return st


def kv_parallel(q, k, v, q_start: int, n: int = 1, request_id: int = 0, tile: int = 64,
                q_block: int | None = None, mesh: tuple[int, int] = (2, 4)) -> KernelResult:
    q = np.asarray(q, dtype=np.uint16)
    k = np.asarray(k, dtype=np.uint16)
    v = np.asarray(v, dtype=np.uint16)
    groups, tq, d = q.shape
    counter = k.shape[0]
    if q_start + tq > counter:
        raise ValueError("query positions must be in the cache (P3: K/V appended upstream)")
    q_block = tq if q_block is None else q_block
    tree = build_tree(n, *mesh) if n > 1 else None
    placed = place(counter, request_id, n)
    st0 = start_pe(request_id, n)
    for p in range(n):   # dense slice == the slot -> global formula
        assert np.array_equal(placed[p], slot_to_global(
            np.arange(valid_len(counter, st0, p, n)), p, st0, n))
    out = np.zeros((groups, tq, d), dtype=np.uint16)
    res = KernelResult(out, tree_depth=tree.depth if tree else 0)
    for b0 in range(0, tq, q_block):
        qs, qe = q_start + b0, q_start + min(b0 + q_block, tq)
        rows = q[:, b0:b0 + (qe - qs), :].reshape(groups * (qe - qs), d)
        counts = [_zero_counts() for _ in range(n)]
        states = [sweep_pe(rows, k[placed[p]], v[placed[p]], placed[p], qs, qe, groups,
                           tile, counts[p]) for p in range(n)]
        if tree is None:
            final = states[0]
        else:
            final, _ = reduce(tree, states, merge)
            for nd in tree.nodes:
                if nd.parent is not None:
                    counts[nd.rank]["pushes"] += 1
        out[:, b0:b0 + (qe - qs), :] = finalize(final).reshape(groups, qe - qs, d)
        res.o_writes += 1
        res.per_block.append({"qs": qs, "qe": qe, "pe": counts})
    return res


def decode(q, k, v, n: int = 1, request_id: int = 0, tile: int = 64,
           mesh: tuple[int, int] = (2, 4)) -> KernelResult:
    """q[G, d] (or [G, 1, d]) for the newest position S-1."""
    q = np.asarray(q, dtype=np.uint16)
    if q.ndim == 2:
        q = q[:, None, :]
    return kv_parallel(q, k, v, k.shape[0] - 1, n, request_id, tile, None, mesh)


def prefill(q, k, v, q_block: int, tile: int = 64, n: int = 1, request_id: int = 0,
            mesh: tuple[int, int] = (2, 4)) -> KernelResult:
    """Prefill of the whole prompt: q[G, S, d], chunked into query blocks."""
    return kv_parallel(q, k, v, 0, n, request_id, tile, q_block, mesh)


def ring_prefill(q, k, v, n: int, q_block: int | None = None, tile: int | None = None) -> KernelResult:
    """Ring attention: PE p owns query/KV block p (placement.ring_block); at
    step s it holds KV block (p - s) mod N.  Every PE forwards the block it
    holds at steps 0..N-2 (counted as ring_steps of comms, skipped or not).
    Each PE finalizes and writes its own query block: no tree merge (pushes 0).

    The PE's query block is cut into sub-blocks of ``q_block`` positions (one
    running state each; default: the whole block) and each KV block into tiles
    of ``tile`` keys (default: the whole block).  A step whose KV block is
    all-future for the whole query block is skipped (ring_steps_skipped);
    inside the other steps a tile all-future for a sub-block is skipped
    (tiles_skipped), a partial one is masked."""
    q = np.asarray(q, dtype=np.uint16)
    k = np.asarray(k, dtype=np.uint16)
    v = np.asarray(v, dtype=np.uint16)
    groups, seq, d = q.shape
    if seq < n:
        raise ValueError("ring needs at least one token per PE")
    out = np.zeros((groups, seq, d), dtype=np.uint16)
    res = KernelResult(out)
    counts = [_zero_counts() for _ in range(n)]
    for p in range(n):
        qs, qe = ring_block(p, seq, n)
        qb = (qe - qs) if q_block is None else q_block
        c = counts[p]
        for s in range(n):
            c["ring_steps"] += 1
            ks, ke = ring_block(ring_source(p, s, n), seq, n)
            if classify(np.arange(ks, ke), qs, qe) == "future":
                c["ring_steps_skipped"] += 1
        for bs in range(qs, qe, qb):
            be = min(bs + qb, qe)
            rows = q[:, bs:be, :].reshape(groups * (be - bs), d)
            st = empty_state(rows.shape[0], d)
            for s in range(n):
                ks, ke = ring_block(ring_source(p, s, n), seq, n)
                if classify(np.arange(ks, ke), qs, qe) == "future":
                    continue
                tl = (ke - ks) if tile is None else tile
                for t0 in range(ks, ke, tl):
                    pos = np.arange(t0, min(t0 + tl, ke))
                    kind = classify(pos, bs, be)
                    if kind == "future":
                        c["tiles_skipped"] += 1
                        continue
                    mask = None
                    if kind == "partial":
                        mask = make_mask_tile(pos, bs, be, groups)
                        c["masked"] += 1
                    c["k_loads"] += 1
                    c["v_loads"] += 1
                    c["composites"] += 1
                    c["scores"] += rows.shape[0] * len(pos)
                    st = attn_tile(rows, k[pos[0]:pos[-1] + 1], v[pos[0]:pos[-1] + 1], mask, st)
            out[:, bs:be, :] = finalize(st).reshape(groups, be - bs, d)
            res.o_writes += 1
    res.per_block.append({"qs": 0, "qe": seq, "pe": counts})
    return res


def predict_counts(counter: int, q_start: int, tq: int, n: int = 1, request_id: int = 0,
                   tile: int = 64, q_block: int | None = None, *, groups: int) -> list[list[dict[str, int]]]:
    """Counts per query block per PE from the placement formulas alone
    (valid_len, tile classification, tree) - what the RTL bench must see. `groups` query heads share
    each K/V tile (the rows of a composite are groups x the block's queries: its score elements)."""
    q_block = tq if q_block is None else q_block
    st = start_pe(request_id, n)
    out = []
    for b0 in range(0, tq, q_block):
        qs, qe = q_start + b0, q_start + min(b0 + q_block, tq)
        blk = []
        for p in range(n):
            c = _zero_counts()
            ml = valid_len(counter, st, p, n)
            for j in range(n_tiles(ml, tile)):
                pos = tile_positions(j, tile, ml, p, st, n)
                kind = classify(pos, qs, qe)
                if kind == "future":
                    c["tiles_skipped"] += 1
                    continue
                c["masked"] += int(kind == "partial")
                for key in ("k_loads", "v_loads", "composites"):
                    c[key] += 1
                c["scores"] += groups * (qe - qs) * len(pos)
            c["pushes"] = int(n > 1 and p != n - 1)
            blk.append(c)
        out.append(blk)
    return out


def check_counts(result: KernelResult, predicted: list[list[dict[str, int]]]) -> list[str]:
    """Compare a result's per-block per-PE counts with a prediction."""
    got = [b["pe"] for b in result.per_block]
    if len(got) != len(predicted):
        return [f"{len(got)} query blocks, predicted {len(predicted)}"]
    fails = []
    for bi, (gb, pb) in enumerate(zip(got, predicted)):
        if len(gb) != len(pb):
            fails.append(f"block {bi}: {len(gb)} PEs, predicted {len(pb)}")
            continue
        for p, (g, e) in enumerate(zip(gb, pb)):
            for key in PE_COUNT_KEYS:
                if g.get(key, 0) != e.get(key, 0):
                    fails.append(f"block {bi} PE {p} {key}: {g.get(key, 0)} != {e.get(key, 0)}")
    return fails
