"""Launch of the AHBM attention kernel on the CUBE: what the driver gives each
PE (ADR §2.2), what each PE's local slice holds, and the tile walk the kernel
derives from those arguments alone (ADR §5.1).

The driver gives a PE only: buffer bases (Q, K cache, V cache, mask tiles, O),
global_token_counter, start_pe = request_id mod N, its pe_id (rank) and the
query-block metadata.  Everything else (valid_len, which tiles exist, which are
all-future and skipped, which are boundary tiles needing a mask, where that mask
sits) the kernel computes from them, with the placement formulas of
placement.py.  The slice image builder uses the same formulas to lay the data
out, so kernel and memory agree by construction and tests check them against
the reference kernel (kernel.py) and its counts.

Slice map of one PE (byte addresses, every region 64-byte aligned):
  Q_BASE = 0                 query block b at Q_BASE + b*qbytes, rows g*T_qb + i, bf16 [rows, d]
  K_BASE                     the PE's K cache, dense token slots, bf16 [valid_len, d]
  V_BASE                     the V cache, same layout
  MASK_BASE                  boundary-tile masks in walk order, each [rows, stride] bf16,
                             stride = KEYS rounded up to 32, 0 or -inf (0xFF80), padding 0
  O_BASE                     output block b at O_BASE + b*qbytes (written by the root)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import placement
from .tree import Tree, build_tree, direction

WORD = 64
BF16_NEG_INF = 0xFF80
DIRS = {"N": 0, "E": 1, "S": 2, "W": 3}


def align(x: int, a: int = WORD) -> int:
    return -(-x // a) * a


def mask_stride(keys: int) -> int:
    return align(keys, 32)


@dataclass(frozen=True)
class QBlock:
    """Query block metadata: positions [qs, qe), rows = groups * (qe - qs)."""

    qs: int
    qe: int


@dataclass(frozen=True)
class LaunchArgs:
    """What the driver passes one PE (ADR §2.2) plus the fixed geometry."""

    pe_id: int                      # rank in 0..n-1 (the tree maps it to a physical PE)
    n: int
    start_pe: int                   # request_id mod n
    counter: int                    # global_token_counter
    blocks: tuple[QBlock, ...]
    q_base: int
    k_base: int
    v_base: int
    mask_base: int
    o_base: int
    groups: int = 8
    d: int = 128
    tile: int = 64

    def rows(self, b: QBlock) -> int:
        return self.groups * (b.qe - b.qs)

    def q_bytes(self, b: QBlock) -> int:
        return self.rows(b) * self.d * 2


@dataclass(frozen=True)
class TileStep:
    """One ATTN_TILE the kernel enqueues (never for an all-future tile)."""

    j: int
    keys: int
    k_addr: int
    v_addr: int
    mask_addr: int | None           # None: null mask (past tile)


@dataclass
class BlockWalk:
    block: QBlock
    q_addr: int
    o_addr: int
    rows: int
    tiles: list[TileStep] = field(default_factory=list)
    skipped: int = 0                # all-future tiles (never enqueued)


def walk(args: LaunchArgs) -> list[BlockWalk]:
    """The kernel's tile walk (§5.1) from the launch arguments alone."""
    ml = placement.valid_len(args.counter, args.start_pe, args.pe_id, args.n)
    row_bytes = args.d * 2
    out: list[BlockWalk] = []
    mask_addr = args.mask_base
    q_off = 0
    for b in args.blocks:
        rows = args.rows(b)
        bw = BlockWalk(b, args.q_base + q_off, args.o_base + q_off, rows)
        q_off += align(args.q_bytes(b))
        for j in range(placement.n_tiles(ml, args.tile)):
            pos = placement.tile_positions(j, args.tile, ml, args.pe_id, args.start_pe, args.n)
            kind = placement.classify(pos, b.qs, b.qe)
            if kind == "future":
                bw.skipped += 1
                continue
            m = None
            if kind == "partial":
                m = mask_addr
                mask_addr += align(rows * mask_stride(len(pos)) * 2)
            off = j * args.tile * row_bytes
            bw.tiles.append(TileStep(j, len(pos), args.k_base + off, args.v_base + off, m))
        out.append(bw)
    return out


def mask_tile_bf16(pos, qs: int, qe: int, groups: int) -> np.ndarray:
    """The boundary mask as stored: bf16 [rows, stride], 0 / -inf, padding 0."""
    m = placement.make_mask_tile(pos, qs, qe, groups)
    out = np.zeros((m.shape[0], mask_stride(len(pos))), dtype=np.uint16)
    out[:, :len(pos)] = np.where(m == 0, 0, BF16_NEG_INF)
    return out


def layout(counter: int, n: int, pe_id: int, start: int, blocks: tuple[QBlock, ...], groups: int,
           d: int, tile: int, kv_slots: int = 0, q_bytes: int = 0) -> LaunchArgs:
    """Bases of one PE's slice map (module docstring), sized for its data, or at least for `kv_slots`
    cache tokens and `q_bytes` of Q (a cache that later launches append to keeps its bases: ADR §2.1)."""
    ml = placement.valid_len(counter, start, pe_id, n)
    q_total = max(q_bytes, sum(align(groups * (b.qe - b.qs) * d * 2) for b in blocks))
    kv = align(max(ml, kv_slots, 1) * d * 2)
    probe = LaunchArgs(pe_id, n, start, counter, blocks, 0, q_total, q_total + kv, q_total + 2 * kv, 0,
                       groups, d, tile)
    masks = sum(align(groups * (b.qe - b.qs) * mask_stride(t.keys) * 2)
                for bw, b in zip(walk(probe), blocks) for t in bw.tiles if t.mask_addr is not None)
    return LaunchArgs(pe_id, n, start, counter, blocks, 0, q_total, q_total + kv, q_total + 2 * kv,
                      q_total + 2 * kv + align(max(masks, WORD)), groups, d, tile)


def put_bf16(img: np.ndarray, addr: int, arr: np.ndarray) -> None:
    """Store bf16 patterns (uint16, little-endian) into a slice image at byte `addr`."""
    raw = np.ascontiguousarray(arr, dtype=np.uint16).view(np.uint8).reshape(-1)
    img[addr:addr + raw.size] = raw


def slice_bytes(args: LaunchArgs) -> int:
    """Bytes of the slice map, O region included."""
    return args.o_base + sum(align(args.q_bytes(b)) for b in args.blocks)


def slice_image(args: LaunchArgs, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The PE's slice contents (uint8, slice_bytes long) from global bf16 data:
    q[G, T_q, d] for positions q_pos0.. (T_q covers all blocks), k/v[S, d]."""
    img = np.zeros(slice_bytes(args), dtype=np.uint8)

    def put(addr: int, arr: np.ndarray) -> None:
        put_bf16(img, addr, arr)

    mine = placement.place(args.counter, args.start_pe, args.n)[args.pe_id]   # request_id = start_pe mod N
    put(args.k_base, k[mine])
    put(args.v_base, v[mine])
    for addr, arr in query_writes(args, q):
        put(addr, arr)
    return img


def query_writes(args: LaunchArgs, q: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(byte address, bf16 data) of one launch's Q blocks and boundary mask tiles on one rank: what the
    driver writes per launch beside the cache (q[G, T_q, d] from the first block's position on)."""
    out = []
    q0 = args.blocks[0].qs
    ml = placement.valid_len(args.counter, args.start_pe, args.pe_id, args.n)
    for bw in walk(args):
        b = bw.block
        out.append((bw.q_addr, q[:, b.qs - q0:b.qe - q0, :].reshape(bw.rows, args.d)))
        for t in bw.tiles:
            if t.mask_addr is not None:
                pos = placement.tile_positions(t.j, args.tile, ml, args.pe_id, args.start_pe, args.n)
                out.append((t.mask_addr, mask_tile_bf16(pos, b.qs, b.qe, args.groups)))
    return out


@dataclass(frozen=True)
class Launch:
    """A whole launch: per-rank arguments, the reduction tree, rank -> physical PE."""

    args: tuple[LaunchArgs, ...]
    tree: Tree | None
    mesh: tuple[int, int]

    def pe_of(self, rank: int) -> int:
        return rank if self.tree is None else self.tree.nodes[rank].pe

    def parent_dir(self, rank: int) -> int | None:
        if self.tree is None or self.tree.nodes[rank].parent is None:
            return None
        return DIRS[self.tree.nodes[rank].dir_to_parent]

    def child_dirs(self, rank: int) -> list[int]:
        return [] if self.tree is None else [DIRS[x] for x in self.tree.nodes[rank].dir_to_children]


def plan(counter: int, q_start: int, tq: int, n: int, request_id: int, groups: int, d: int, tile: int,
         q_block: int | None = None, mesh: tuple[int, int] = (2, 4), max_context: int | None = None,
         max_tq: int | None = None) -> Launch:
    """The driver's side of a KV-parallel launch (decode / prefill, N in {1,2,4,8}). With
    `max_context` (and `max_tq`) the slice map is sized for a cache of that many tokens (and query
    chunks that wide), so launches that append to the same cache find it at the same bases."""
    if n < 1 or n & (n - 1) or n > mesh[0] * mesh[1]:
        raise ValueError(f"N={n}: the reduction tree needs a power of two <= {mesh[0] * mesh[1]} PEs "
                         f"(the {mesh[0]}x{mesh[1]} CUBE)")
    if d % 32 or not 32 <= d <= 128:
        raise ValueError(f"d={d}: the PE needs a head dim that is a multiple of 32 in 32..128")
    if not 1 <= tile <= 128:
        raise ValueError(f"tile={tile}: a K/V tile holds 1..128 keys (MAXKEYS)")
    if q_start + tq > counter:
        raise ValueError("query positions must already be in the KV cache (P3: K/V appended first)")
    if max_context is not None and counter > max_context:
        raise ValueError(f"counter {counter} > max_context {max_context}: the cache was sized for "
                         f"{max_context} tokens; plan the session with a larger max_context")
    if max_tq is not None and tq > max_tq:
        raise ValueError(f"a {tq}-position query chunk does not fit the Q region sized for max_tq={max_tq}")
    q_block = tq if q_block is None else q_block
    if groups * q_block > 64:
        raise ValueError(f"groups*q_block = {groups * q_block} rows > 64 (ROWS limit of a command); "
                         f"use q_block <= {64 // groups}")
    blocks = tuple(QBlock(q_start + b0, q_start + min(b0 + q_block, tq)) for b0 in range(0, tq, q_block))
    start = placement.start_pe(request_id, n)
    tree = build_tree(n, *mesh) if n > 1 else None
    kv_slots = 0 if max_context is None else -(-max_context // n)
    q_bytes = 0 if max_tq is None else groups * max_tq * d * 2
    args = tuple(layout(counter, n, r, start, blocks, groups, d, tile, kv_slots, q_bytes) for r in range(n))
    return Launch(args, tree, mesh)


# ---------------------------------------------------------------- ring attention (ADR §5.5)
# PE rank r owns query block r and KV block r (placement.ring_block). At ring
# step s it holds KV block (r - s) mod N: its own at s = 0, else the block it
# received from rank r-1 into ping-pong buffer s % 2. It forwards the block it
# holds to rank r+1 at steps 0..N-2 (KV_SEND, its TX engine) and receives the
# block of step s+1 (KV_RECV, its RX engine) while step s computes. A KV block
# travels as one packet: K rows then V rows, each region 64-byte aligned.


def ring_order(n: int, rows: int, cols: int) -> list[int]:
    """Physical PEs of a ring of n ranks where consecutive ranks (and the last and
    the first) are 4-neighbours: a row, or two rows walked as a snake."""
    if n == 1:
        return [0]
    if n == 2 and cols >= 2:
        return [0, 1]
    half = n // 2
    if n % 2 or rows < 2 or half > cols:
        raise ValueError(f"a ring of {n} PEs needs an even N <= 2 x {cols} on a mesh with >= 2 rows "
                         f"(this CUBE is {rows}x{cols})")
    return list(range(half)) + [cols + c for c in reversed(range(half))]


@dataclass(frozen=True)
class RingArgs:
    """What the driver passes one PE for ring prefill: its rank, the ring size and
    sequence length (the kernel derives every block from them), the query
    sub-block width and KV tile size, and its slice bases."""

    rank: int
    n: int
    seq: int
    q_base: int
    kv_own: int
    buf: tuple[int, int]
    mask_base: int
    o_base: int
    groups: int = 8
    d: int = 128
    q_block: int = 8                # query positions per sub-block (one state set each)
    tile: int = 128                 # keys per composite inside a KV block

    def block(self, b: int) -> tuple[int, int]:
        return placement.ring_block(b, self.seq, self.n)

    def subs(self) -> list[tuple[int, int]]:
        """The query sub-blocks [bs, be) of this PE's query block."""
        qs, qe = self.block(self.rank)
        return [(bs, min(bs + self.q_block, qe)) for bs in range(qs, qe, self.q_block)]

    def sub_rows(self, i: int) -> int:
        bs, be = self.subs()[i]
        return self.groups * (be - bs)

    def sub_offset(self, i: int) -> int:
        """Byte offset of sub-block i inside the Q (and O) region."""
        return sum(align(self.sub_rows(j) * self.d * 2) for j in range(i))

    def rows(self) -> int:
        qs, qe = self.block(self.rank)
        return self.groups * (qe - qs)

    def v_offset(self, keys: int) -> int:
        return align(keys * self.d * 2)

    def kv_bytes(self, keys: int) -> int:
        return 2 * self.v_offset(keys)


@dataclass(frozen=True)
class RingTile:
    """One composite of a ring step: sub-block `sub` against keys [t0, t0 + keys) of the block."""

    sub: int
    t0: int                         # first key, relative to the block
    keys: int
    pos0: int                       # its global position
    mask_addr: int | None


@dataclass(frozen=True)
class RingStep:
    step: int
    src: int                        # KV block held at this step
    keys: int                       # its length
    held: int                       # its slice address (K; V at held + v_offset(keys))
    kind: str                       # past / partial / future (skipped) for the whole query block
    tiles: tuple[RingTile, ...]     # composites to enqueue (tiles all-future for a sub-block left out)
    tiles_skipped: int


def ring_walk(a: RingArgs) -> list[RingStep]:
    qs, qe = a.block(a.rank)
    out = []
    mask_addr = a.mask_base
    for s in range(a.n):
        src = placement.ring_source(a.rank, s, a.n)
        ks, ke = a.block(src)
        kind = placement.classify(np.arange(ks, ke), qs, qe)
        held = a.kv_own if s == 0 else a.buf[s % 2]
        tiles: list[RingTile] = []
        skipped = 0
        if kind != "future":
            for i, (bs, be) in enumerate(a.subs()):
                for t0 in range(ks, ke, a.tile):
                    pos = np.arange(t0, min(t0 + a.tile, ke))
                    tk = placement.classify(pos, bs, be)
                    if tk == "future":
                        skipped += 1
                        continue
                    m = None
                    if tk == "partial":
                        m = mask_addr
                        mask_addr += align(a.sub_rows(i) * mask_stride(len(pos)) * 2)
                    tiles.append(RingTile(i, t0 - ks, len(pos), t0, m))
        out.append(RingStep(s, src, ke - ks, held, kind, tuple(tiles), skipped))
    return out


@dataclass(frozen=True)
class RingLaunch:
    args: tuple[RingArgs, ...]
    pes: tuple[int, ...]            # rank -> physical PE
    dirs: tuple[tuple[int, int], ...]   # rank -> (direction to next, direction to previous)


def _dir(a: int, b: int, cols: int) -> int:
    """IPCQ direction from PE a to its neighbour b (tree.direction on their mesh coordinates)."""
    name = direction(divmod(a, cols), divmod(b, cols))
    if name is None:
        raise ValueError(f"PEs {a} and {b} are not neighbours")
    return DIRS[name]


MAX_STATE_SETS = 8


def plan_ring(seq: int, n: int, groups: int, d: int, mesh: tuple[int, int] = (2, 4),
              q_block: int | None = None, tile: int | None = None) -> RingLaunch:
    """The driver's side of ring prefill. Default sub-block: as many positions as
    fit 64 rows (64 // groups); default tile: the whole KV block (<= 128 keys)."""
    if d % 32 or not 32 <= d <= 128:
        raise ValueError(f"d={d}: the PE needs a head dim that is a multiple of 32 in 32..128")
    if seq < n:
        raise ValueError(f"ring of {n} PEs over {seq} tokens: every PE needs at least one token")
    q_block = 64 // groups if q_block is None else q_block
    if groups * q_block > 64:
        raise ValueError(f"q_block {q_block} x G={groups} = {groups * q_block} rows > 64 (ROWS limit of one "
                         f"command): use q_block <= {64 // groups}")
    longest = -(-seq // n)
    if -(-longest // q_block) > MAX_STATE_SETS:
        raise ValueError(f"a ring block of {longest} positions needs {-(-longest // q_block)} sub-blocks of "
                         f"{q_block}, one state set each, > {MAX_STATE_SETS} (S0..S7): use seq <= "
                         f"{n * MAX_STATE_SETS * q_block} or more PEs")
    tile = min(longest, 128) if tile is None else tile
    if not 1 <= tile <= 128:
        raise ValueError(f"tile={tile}: a composite takes 1..128 keys (MAXKEYS)")
    if longest > 128 and tile == longest:
        raise ValueError(f"a ring block of {longest} keys needs tile <= 128")
    pes = ring_order(n, *mesh)
    dirs = tuple((_dir(pes[r], pes[(r + 1) % n], mesh[1]), _dir(pes[r], pes[(r - 1) % n], mesh[1]))
                 if n > 1 else (0, 0) for r in range(n))
    args = []
    for r in range(n):
        probe = RingArgs(r, n, seq, 0, 0, (0, 0), 0, 0, groups, d, q_block, tile)
        q_bytes = probe.sub_offset(len(probe.subs()))
        kv_max = 2 * align(longest * d * 2)
        kv_own = q_bytes
        buf0 = kv_own + kv_max
        buf1 = buf0 + kv_max
        mask_base = buf1 + kv_max
        probe = RingArgs(r, n, seq, 0, kv_own, (buf0, buf1), mask_base, 0, groups, d, q_block, tile)
        masks = sum(align(probe.sub_rows(t.sub) * mask_stride(t.keys) * 2)
                    for st in ring_walk(probe) for t in st.tiles if t.mask_addr is not None)
        args.append(RingArgs(r, n, seq, 0, kv_own, (buf0, buf1), mask_base, mask_base + align(max(masks, WORD)),
                             groups, d, q_block, tile))
    return RingLaunch(tuple(args), tuple(pes), dirs)


def ring_slice_bytes(a: RingArgs) -> int:
    return a.o_base + a.sub_offset(len(a.subs()))


def ring_image(a: RingArgs, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rank a.rank's slice: its Q sub-blocks, its own KV block (K then V), the diagonal masks."""
    img = np.zeros(ring_slice_bytes(a), dtype=np.uint8)

    def put(addr: int, arr: np.ndarray) -> None:
        put_bf16(img, addr, arr)

    qs, qe = a.block(a.rank)
    for i, (bs, be) in enumerate(a.subs()):
        put(a.q_base + a.sub_offset(i), q[:, bs:be, :].reshape(a.sub_rows(i), a.d))
    put(a.kv_own, k[qs:qe])
    put(a.kv_own + a.v_offset(qe - qs), v[qs:qe])
    for st in ring_walk(a):
        for t in st.tiles:
            if t.mask_addr is not None:
                bs, be = a.subs()[t.sub]
                put(t.mask_addr, mask_tile_bf16(np.arange(t.pos0, t.pos0 + t.keys), bs, be, a.groups))
    return img
