"""Driver/kernel placement formulas of ADR-001 §2 and causal tile decisions.

* token i of request r lives on PE (r + i) mod N, appended densely per PE;
* start_pe = r mod N; slot s on PE p holds global index s*N + ((p - start_pe) mod N);
* causality: key at global position k is visible to the query at position q
  iff k <= q.  A tile is all-past for query block [qs, qe) iff every valid key
  k <= qs (no mask needed), all-future iff every valid key k >= qe (skipped),
  else partial (mask built by the kernel).  The ADR's coarse test "ke <= qs"
  is stricter by one position; the exact test above is what is implemented.
  Global positions inside one PE's tile are strided by N.
* ragged last tile: the kernel pads it to TILE rows (zero K/V) and masks the
  pad columns with -inf, so it is a masked ("partial") tile.
"""

from __future__ import annotations

import numpy as np

NEG_INF = np.float32(-np.inf)


def start_pe(request_id: int, n: int) -> int:
    return request_id % n


def dest_pe(request_id: int, token_idx: int, n: int) -> int:
    return (request_id + token_idx) % n


def is_my_turn(counter: int, start: int, pe_id: int, n: int) -> bool:
    """Does token number ``counter`` (0-based) land on ``pe_id``?"""
    return (start + counter) % n == pe_id


def valid_len(counter: int, start: int, pe_id: int, n: int) -> int:
    """Tokens held by pe_id after ``counter`` tokens were placed (ADR §2.2)."""
    base, rem = divmod(counter, n)
    return base + (1 if (pe_id - start) % n < rem else 0)


def slot_to_global(slot, pe_id: int, start: int, n: int):
    return np.asarray(slot) * n + (pe_id - start) % n


def global_to_pe_slot(g: int, start: int, n: int) -> tuple[int, int]:
    return (start + g) % n, g // n


def place(counter: int, request_id: int, n: int) -> list[np.ndarray]:
    """Global indices held by each PE, in slot order (dense append)."""
    out: list[list[int]] = [[] for _ in range(n)]
    for i in range(counter):
        out[dest_pe(request_id, i, n)].append(i)
    return [np.asarray(x, dtype=np.int64) for x in out]


def n_tiles(my_len: int, tile: int) -> int:
    return -(-my_len // tile)


def tile_positions(j: int, tile: int, my_len: int, pe_id: int, start: int, n: int) -> np.ndarray:
    """Global positions of the valid slots of tile j on pe_id (length <= tile)."""
    s0 = j * tile
    slots = np.arange(s0, min(s0 + tile, my_len), dtype=np.int64)
    return slot_to_global(slots, pe_id, start, n)


def tile_all_future(pos, qs: int, qe: int) -> bool:
    pos = np.asarray(pos)
    return bool(pos.size == 0 or pos.min() >= qe)


def tile_all_past(pos, qs: int, qe: int) -> bool:
    pos = np.asarray(pos)
    return bool(pos.size > 0 and pos.max() <= qs)


def tile_partial(pos, qs: int, qe: int) -> bool:
    return not tile_all_future(pos, qs, qe) and not tile_all_past(pos, qs, qe)


def classify(pos, qs: int, qe: int) -> str:
    if tile_all_future(pos, qs, qe):
        return "future"
    return "past" if tile_all_past(pos, qs, qe) else "partial"


def make_mask_tile(pos, qs: int, qe: int, groups: int, tile: int | None = None) -> np.ndarray:
    """Additive fp32 mask [groups*(qe-qs), tile]: row g*T_q + i is query
    position qs+i; column c is key pos[c] (columns >= len(pos) are padding).
    0 where pos[c] <= qs+i, -inf otherwise."""
    pos = np.asarray(pos, dtype=np.int64)
    tile = len(pos) if tile is None else tile
    qpos = np.arange(qs, qe, dtype=np.int64)
    kpos = np.full(tile, np.iinfo(np.int64).max, dtype=np.int64)
    kpos[: len(pos)] = pos
    m = np.where(kpos[None, :] <= qpos[:, None], np.float32(0.0), NEG_INF).astype(np.float32)
    return np.tile(m, (groups, 1))


def causal_tile_counts(counter: int, request_id: int, n: int, tile: int,
                       qs: int, qe: int) -> dict[int, dict[str, int]]:
    """Per PE: number of past / partial / future tiles for query block [qs, qe)."""
    st = start_pe(request_id, n)
    out = {}
    for p in range(n):
        ml = valid_len(counter, st, p, n)
        c = {"past": 0, "partial": 0, "future": 0}
        for j in range(n_tiles(ml, tile)):
            c[classify(tile_positions(j, tile, ml, p, st, n), qs, qe)] += 1
        out[p] = c
    return out


# ---------------------------------------------------------------- ring attention (§5.5)
# The ring shards the sequence into N contiguous, balanced blocks:
# block b = [b*S//N, (b+1)*S//N).  PE p owns query block p and KV block p; at
# ring step s it holds KV block (p - s) mod N (received from PE p-1).


def ring_block(b: int, seq: int, n: int) -> tuple[int, int]:
    return b * seq // n, (b + 1) * seq // n


def ring_source(pe: int, step: int, n: int) -> int:
    return (pe - step) % n


def ring_step_kind(pe: int, step: int, seq: int, n: int) -> str:
    qs, qe = ring_block(pe, seq, n)
    ks, ke = ring_block(ring_source(pe, step, n), seq, n)
    return classify(np.arange(ks, ke), qs, qe)


def ring_skipped_steps(pe: int, seq: int, n: int) -> list[int]:
    return [s for s in range(n) if ring_step_kind(pe, s, seq, n) == "future"]


def predicted_ring_skips(n: int) -> int:
    """Causal ring with N non-empty balanced blocks: PE p skips the N-1-p steps
    carrying blocks after its own, total N(N-1)/2 of N^2 steps."""
    return n * (n - 1) // 2
