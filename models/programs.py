"""Unit programs from a plan: what the host dispatches to each cluster and vector core.

One role: turn a :class:`models.planner.Plan` (placement, deal() pairing,
span_w, slots, acks) plus an epilogue expression and a DRAM layout into, per
instance, the cluster program (CU_INST payloads), the vector program (words,
descriptors, IMEM/DESC/RUN payloads), and the counts of the comparison table.
It composes the planner (``plan_fused`` runs first in :func:`build_kernel`, so
every ``PlanRefused`` of the planner fires here too) and the units' encoders
(``models.cluster.fill/gemm/drain``, ``models.vector_core.assemble``); it
edits neither.

Two forms of the same kernel ``y = epilogue(x @ w_r^T ...)``:

* **fused**: the cluster drains each accumulator straight into its paired
  vector core's L1 (``dnode=1``, ``dbuf 0``, ``dflags 1``, ``dack`` = the
  machine's agent, ``addr = slot_word*32``); the vector program has no VFILL
  for the tile; the host awaits ``acks`` on each receiving core before RUN.
* **unfused**: the cluster drains to a temp in DRAM (``dnode=0``); the vector
  program VFILLs the temp into the same L1 slots, VBARs, then runs the same
  epilogue. Sequencing is on the cluster DRAIN's completion (protocol §5:
  never on a MEM_WR_ACK).

DRAM layout (:class:`DramLayout`; byte addresses, every region 32-byte aligned,
by default packed from ``base`` on 4 KB boundaries, all below 2^40, the reach
of a vector descriptor's base and of a cluster address):

=========  ==========================================================  ==========
region     content                                                      bytes
=========  ==========================================================  ==========
x          L1A entry images of x (M x K int7, E5M3 scale per row per     M*K
           32-wide K block): entry ``G*nk + kb`` (4-row group G, K block
           kb) at ``x_base + 128*(G*nk + kb)``, 4 granules as the cluster
           stores them (``models.cluster.a_entries``). Instance row r FILLs
           the ``gm*nk`` contiguous entries from group ``r*gm``.
w_r        L1B entry images of w_r^T (w_r is N x K, y = x @ w_r^T): entry   N*K each
           ``H*nk + kb`` (4-column group H of y = rows 4H..4H+3 of w_r) at
           ``w_base[r] + 128*(H*nk + kb)`` (``models.cluster.b_entries``).
           Instance column c FILLs ``gn*nk`` entries from group ``c*gn``.
temp_r     unfused only: accumulator r's FP16 drain, tiled like y.          M*N*2 each
y          the output, FP16, **tiled**: instance i (= row*cols + col, the    M*N*2
           plan's order) owns words ``y_base/32 + i*gm*gn + t``; word t =
           sub-tile t = g*gn + h, 16 FP16 with element (rr, cc) of the 4x4
           at lane 4*rr + cc (the OP_EMIT granule, unchanged by the
           epilogue). One instance's tile is contiguous, so its VDRAIN
           walks a one-dimensional descriptor (a multi-dimensional VDRAIN
           is unverified upstream). :func:`unpack_tiled` gives the M x N
           matrix.
=========  ==========================================================  ==========

Vector core L1 (per the seed): slot r (accumulator r's tile) at word
``r*span_w``, the result at ``plan.result_word``; both forms use the same words.

**Vector program**, shaped like the public compiler's (its listings of the
seed case, ``program.txt`` of the client bundles
``linear_silu_{fused,unfused}_m32k64n32``; for the seed's fused case our IMEM
words are the compiler's, word for word: tests/unit/test_flit_ledger.py)::

    VSETI s0, 128             # VL, raw integer: VSETVL reads S[va]
    VSETI s4, 0xbfb8aa        # every non-built-in constant, once, from S4 up (E8M15 pattern)
    VSETVL s0                 # VL = 128: one VLD / VST moves 8 L1 words, one ALU word 128 elements
    VSETMODE FLAT             # the mode persists across RUNs: set it, never assume it
    VFILL A{r}, {slot_r}      # unfused: one per accumulator, temp_r -> L1 words slot_r..
    VBAR                      # unfused: wait for the fills
    for each 8-word chunk c < span_w/8:
        VLD v{i}, A{slot}+{8c}        # each accumulator the epilogue reads, into v0, v1, ...
        ... the epilogue, one ALU word per operation (SiLU = 5), results from v7 up ...
        VST v{res}, A{result}+{8c}
    VDRAIN A{drain}, {result_word}    # gm*gn words from L1 word result_word to this instance's y tile
    VHALT

Descriptors, in the compiler's order (:func:`descriptor_roles`): the unfused
form's temp fills first, then one L1 descriptor per accumulator read (base
= its slot word, dim (1, 8)), the result's L1 descriptor (base =
result_word, dim (1, 8)), the y drain (base = the tile's byte address, dim
(32, gm*gn), memory target). The fused seed program thus uses A0 (slot 0),
A1 (result), A2 (drain), as the compiler's. The chunk offset is the VLD / VST
``off`` field. There is no loop in these programs (VLOOP exists, but the
compiler unrolls, and so do we); span_w is a whole number of 8-word chunks
by construction, so the last chunk computes on the padding words and stores
into result padding, which the VDRAIN does not send.

**DESC writes** (``desc_writes``): ``"minimal"`` (default) writes exactly the
fields the instructions using a descriptor read (:class:`DescUse`), so stale
descriptor state left by an earlier program cannot change the result
(fields persist across RUNs, units.md V.1): a VLD / VST moving VL/16 = 8
words through a dim-1 bound of 8 reads base and dim 1 only (the walk never
carries into dims 2..4); a VFILL / VDRAIN to memory reads base and all four
dims (the bounds make the walk total, the strides the addresses).
``"full"`` writes base and dims 1..4 of every descriptor. DESC fields 5..7
have no effect (units.md V.2) and are never written.

Constants: the E8M15 patterns of 0.0, 1.0 and -1.0 are the built-ins K0, K1,
K2; every other constant (and SiLU/sigmoid's -log2(e), ``NEG_LOG2E``) goes into
a scalar register by VSETI, never into DRAM, in **both** forms. So the unfused
form needs no broadcast constant arrays and none are counted; the seed's
broadcast arrays were the compiler's unfused encoding of folded constants,
reported apart as :data:`UPSTREAM_BROADCAST_BYTES` and not charged to ours
(charging them would credit fusion with a saving that comes from an encoding
choice the unfused form can make too). K3 is never written (VSETI with
sa = 3 would write it; our programs name S registers only).

**Comparison with the seed** (32x64 @ 32x64: x is M=32 x K=64, w is N=32 x
K=64, y = x @ w^T is 32 x 32; gm=4, gn=8, nk=2: 2 instances of 16 x 32, 32
sub-tiles each, span_w 32; fused4): the instruction flits the host
dispatches, ours (``desc_writes="minimal"``) against the public compiler's
(its bundles ``linear_silu_fused_m32k64n32`` and
``linear_silu_unfused_m32k64n32`` in ``clients/bundles/``),
per unit kind and per role, every flit of both sides read back from the flit
itself by ``models/flit_ledger.py`` (``python -m models.flit_ledger`` prints
this block; tests/unit/test_flit_ledger.py fails when it differs from the
copy here or in the README; :data:`SEED_OURS` pins our totals)::

    | unit | flits | fused: ours | fused: compiler | unfused: ours | unfused: compiler | why they differ |
    |---|---|---:|---:|---:|---:|---|
    | MG | FILL | 4 | 4 | 4 | 4 |  |
    | MG | GEMM | 2 | 2 | 2 | 2 |  |
    | MG | DRAIN | 2 | 2 | 2 | 2 |  |
    | VC | VSETI VL | 4 | 4 | 4 | 2 | per program |
    | VC | VSETI constant | 4 | 4 | 4 | 0 | constants |
    | VC | VSETVL | 2 | 2 | 2 | 1 | per program |
    | VC | VSETMODE | 2 | 2 | 2 | 1 | per program |
    | VC | VFILL | 0 | 0 | 2 | 3 | fills |
    | VC | VBAR | 0 | 0 | 2 | 1 | per program |
    | VC | VLD | 8 | 8 | 8 | 24 | loads |
    | VC | VMUL | 16 | 16 | 16 | 16 |  |
    | VC | VEXP2 | 8 | 8 | 8 | 8 |  |
    | VC | VADD | 8 | 8 | 8 | 8 |  |
    | VC | VINV | 8 | 8 | 8 | 8 |  |
    | VC | VST | 8 | 8 | 8 | 8 |  |
    | VC | VDRAIN | 2 | 2 | 2 | 1 | per program |
    | VC | VHALT | 2 | 2 | 2 | 1 | per program |
    | VC | DESC base | 6 | 6 | 8 | 8 |  |
    | VC | DESC dim 1 | 6 | 6 | 8 | 8 |  |
    | VC | DESC dims 2-4 | 6 | 0 | 12 | 0 | dims |
    | VC | RUN | 2 | 2 | 2 | 1 | per program |
    | all | total | 100 | 94 | 114 | 107 | |

    - *per program*: one per vector program: the compiler runs its unfused epilogue as 1 program(s) over the whole output; ours runs it as the fused one, one program per cluster instance on the paired core (2), so each per-program word and the RUN come once per instance
    - *constants*: -log2(e) of SiLU: ours keeps it in a scalar register (a VSETI and its immediate) in both forms; the compiler's unfused form reads its constants from 2 broadcast array(s) in DRAM instead
    - *fills*: ours fills one temp per program; the compiler's program fills the temp and its 2 broadcast constant array(s)
    - *loads*: each of the compiler's unfused chunks also loads its 2 broadcast constant(s); ours load the accumulator only
    - *dims*: ours writes every field an instruction reads: a VFILL or VDRAIN walk to memory reads all four dims (bounds make the walk total, strides the addresses) and DESC fields persist across RUNs, so a dim left by an earlier program would change the walk; the compiler writes only the fields its walks use (here base and dim 1) and relies on the others still holding their reset value (bound 1)
    - fused: ours 100 against the compiler's 94, +6: DESC dims 2-4 +6. Kicks, ours: MG (1,1) 4, MG (2,1) 4, VC (1,0) 46, VC (2,0) 46; the compiler's (linear_silu_fused_m32k64n32): MG (1,1) 4, MG (2,1) 4, VC (1,0) 43, VC (2,0) 43.
    - unfused: ours 114 against the compiler's 107, +7: VSETI VL +2, VSETI constant +4, VSETVL +1, VSETMODE +1, VFILL -1, VBAR +1, VLD -16, VDRAIN +1, VHALT +1, DESC dims 2-4 +12, RUN +1. Kicks, ours: MG (1,1) 4, MG (2,1) 4, VC (1,0) 53, VC (2,0) 53; the compiler's (linear_silu_unfused_m32k64n32): MG (1,1) 4, MG (2,1) 4, VC (1,0) 99.
    - fused, word by word: each of our vector programs writes 36 IMEM words, the compiler's 36; words that differ per core: 0, 0. DESC fields only ours writes: A2.dim 2, A2.dim 3, A2.dim 4; only the compiler's: none.
    - with every field of every descriptor written (desc_writes='full'): fused 112, unfused 126.

In words: the fused programs are the compiler's, IMEM word for IMEM word, and
every flit of difference is a DESC write of the drain descriptor's dims 2-4,
which our minimal policy writes because the VDRAIN walk reads them and
fields persist across RUNs. The unfused difference adds up the two
encodings' choices: the compiler runs its unfused epilogue as one program on
one core over the whole output and reads its constants from broadcast
arrays (a VFILL each, a VLD each per chunk, their descriptors); ours runs one
program per instance, as the fused form, with the constant in a scalar
register, so it pays the per-program words and the RUN once per instance and
saves the constant loads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Sequence

import numpy as np

from models import cluster as cl
from models import vector_core as vc
from models.machines import Coord, Machine
from models.numerics import NEG_LOG2E
from models.vc.isa import ADDR_BITS
from models.planner import (
    ELEMENTWISE, FIXES, L1_SAFE, Acc, Const, Expr, Op, Operand, Plan, PlanRefused, expected_acks, leaves, plan_fused,
)

__all__ = [
    "ANCHOR", "SCALE_ONE", "ENTRY_BYTES", "WORD_BYTES", "CHUNK_WORDS", "VL_CHUNK", "VL_SREG", "CONST_SREGS",
    "FIRST_TEMP_VREG", "L1_FIELDS", "MEMORY_FIELDS", "DESC_POLICIES", "UPSTREAM_FLITS", "UPSTREAM_BROADCAST_BYTES",
    "SEED_CASE", "SEED_OURS", "DramLayout", "dram_layout", "operand_images", "pack_tiled", "unpack_tiled",
    "Lowered", "lower_epilogue", "ClusterProgram", "DescUse", "VectorProgram", "InstancePrograms", "Counts",
    "KernelPrograms", "Comparison", "cluster_program", "descriptor_roles", "vector_program", "program_words",
    "build_programs", "build_kernel", "compare_forms", "seed_comparison", "const_pattern",
]

ANCHOR = cl.ANCHOR_NEUTRAL  # 40: with 0xA0 scales the GEMM is the exact integer dot product
SCALE_ONE = 0xA0  # E5M3 1.0
ENTRY_BYTES = 4 * cl.GRANULE_BYTES  # 128: one L1 entry image in DRAM
WORD_BYTES = 32
VL_CHUNK = vc.VL_MAX  # VL = 128: one VLD / VST moves 8 L1 words (FP16), one ALU word covers 128 elements
CHUNK_WORDS = VL_CHUNK // vc.LANES  # 8
VL_SREG = 0  # S0 holds VL (VSETI s0, 128; VSETVL s0), as in the compiler's programs
CONST_SREGS = tuple(range(4, vc.N_SREGS)) + (1, 2, 3)  # constants from S4 up, as the compiler; then S1..S3
FIRST_TEMP_VREG = 7  # results and temporaries from v7 up (the compiler's), loads in v0..
# DESC fields (0 base, 1..4 dims) an instruction reads. A VLD / VST of VL/16 = 8 words through a dim-1
# bound of 8 never leaves dim 1: base and dim 1 only. A VFILL / VDRAIN to memory reads all four bounds
# (the walk total) and all four strides (the addresses) besides the base.
L1_FIELDS = (0, 1)
MEMORY_FIELDS = (0, 1, 2, 3, 4)
DESC_POLICIES = ("minimal", "full")  # every field an instruction reads / every field of every descriptor
DESC_ADDR_LIMIT = 1 << ADDR_BITS  # a descriptor base (and a cluster address) is 40 bits
FILL_REACH = 256  # a FILL reaches L1 entries 0..255 (its tag is the 8-bit txn)

UPSTREAM_FLITS = MappingProxyType({"fused": 94, "unfused": 107})  # seed / protocol §9
UPSTREAM_BROADCAST_BYTES = 2 * 16 * 1024  # upstream's unfused form: two 16 KB broadcast constant arrays
SEED_CASE = MappingProxyType({"m": 32, "n": 32, "k": 64, "gm": 4, "gn": 8, "nk": 2})
# Our counts for the seed case (silu epilogue on fused4), per DESC-write policy.
SEED_OURS = MappingProxyType({"minimal": {"fused": 100, "unfused": 114}, "full": {"fused": 112, "unfused": 126}})


def _refuse(what: str, fix: str) -> PlanRefused:
    return PlanRefused(f"{what}; fix: {fix}")


# ================================================================ DRAM layout
@dataclass(frozen=True)
class DramLayout:
    """Byte addresses of the kernel's DRAM regions (see the module docstring for the formats)."""

    m: int
    n: int
    k: int
    gm: int
    gn: int
    nk: int
    x_base: int
    w_bases: tuple[int, ...]
    temp_bases: tuple[int, ...]
    y_base: int

    @property
    def cols(self) -> int:
        return self.n // (4 * self.gn)

    @property
    def tile_words(self) -> int:
        return self.gm * self.gn

    @property
    def x_bytes(self) -> int:
        return (self.m // 4) * self.nk * ENTRY_BYTES

    @property
    def w_bytes(self) -> int:
        return (self.n // 4) * self.nk * ENTRY_BYTES

    @property
    def y_bytes(self) -> int:
        return self.m * self.n * 2

    @property
    def temp_bytes(self) -> int:
        """Bytes of every temp together (one M x N FP16 image per accumulator)."""
        return len(self.temp_bases) * self.y_bytes

    def x_fill_addr(self, row: int) -> int:
        return self.x_base + row * self.gm * self.nk * ENTRY_BYTES

    def w_fill_addr(self, r: int, col: int) -> int:
        return self.w_bases[r] + col * self.gn * self.nk * ENTRY_BYTES

    def tile_offset(self, row: int, col: int) -> int:
        return (row * self.cols + col) * self.tile_words * WORD_BYTES

    def y_addr(self, row: int, col: int) -> int:
        return self.y_base + self.tile_offset(row, col)

    def temp_addr(self, r: int, row: int, col: int) -> int:
        return self.temp_bases[r] + self.tile_offset(row, col)

    def regions(self) -> list[tuple[str, int, int]]:
        """(name, first byte, bytes) of every region, in address order."""
        out = [("x", self.x_base, self.x_bytes)]
        out += [(f"w{r}", b, self.w_bytes) for r, b in enumerate(self.w_bases)]
        out += [(f"temp{r}", b, self.y_bytes) for r, b in enumerate(self.temp_bases)]
        out.append(("y", self.y_base, self.y_bytes))
        return sorted(out, key=lambda t: t[1])

    def check(self) -> None:
        """Refuse overlapping, misaligned or out-of-reach regions (naming the limit and the fix)."""
        regions = self.regions()
        for name, start, size in regions:
            if start % WORD_BYTES:
                raise _refuse(f"DRAM region {name} at {start:#x} is not 32-byte aligned (DRAM word = byte >> 5)",
                              "align every base to 32 bytes")
            if start + size > DESC_ADDR_LIMIT:
                raise _refuse(f"DRAM region {name} ends at {start + size:#x}, past 2^40, the reach of a vector "
                              f"descriptor base and of a cluster address", "place the regions lower")
        for (n1, s1, z1), (n2, s2, _) in zip(regions, regions[1:]):
            if s1 + z1 > s2:
                raise _refuse(f"DRAM regions {n1} and {n2} overlap ({n1} ends at {s1 + z1:#x}, {n2} starts at "
                              f"{s2:#x})", "move the bases apart")


def dram_layout(plan: Plan, *, base: int = 0, align: int = 0x1000, temps: bool = True) -> DramLayout:
    """The default layout: x, w_0.., temp_0.., y packed from `base`, each on an `align` boundary.

    Temps are laid out by default so one layout serves both forms; pass
    ``temps=False`` for a fused-only layout.
    """
    if align % WORD_BYTES or align <= 0:
        raise ValueError(f"align must be a positive multiple of 32 bytes, got {align}")
    up = lambda a: -(-a // align) * align  # noqa: E731
    cursor = up(base)
    x_base = cursor
    cursor = up(cursor + (plan.m // 4) * plan.nk * ENTRY_BYTES)
    w_bases = []
    for _ in range(plan.accumulators):
        w_bases.append(cursor)
        cursor = up(cursor + (plan.n // 4) * plan.nk * ENTRY_BYTES)
    temp_bases = []
    for _ in range(plan.accumulators if temps else 0):
        temp_bases.append(cursor)
        cursor = up(cursor + plan.m * plan.n * 2)
    layout = DramLayout(plan.m, plan.n, plan.k, plan.gm, plan.gn, plan.nk, x_base, tuple(w_bases),
                        tuple(temp_bases), cursor)
    layout.check()
    return layout


def operand_images(layout: DramLayout, x, ws: Sequence, *, x_scales=None, w_scales=None) -> dict[int, int]:
    """DRAM words (word index -> 256-bit value) holding x and every w_r as L1 entry images.

    x: (M, K) int7; ws: one (N, K) int7 matrix per accumulator; x_scales (M, nk)
    and w_scales (one (N, nk) per accumulator) are E5M3 codes, 0xA0 (1.0) when
    not given.
    """
    x = np.asarray(x)
    if x.shape != (layout.m, layout.k):
        raise ValueError(f"x must be (M, K) = ({layout.m}, {layout.k}), got {x.shape}")
    if len(ws) != len(layout.w_bases):
        raise ValueError(f"{len(ws)} weight matrices for {len(layout.w_bases)} accumulators")
    xs = np.full((layout.m, layout.nk), SCALE_ONE) if x_scales is None else np.asarray(x_scales)
    out: dict[int, int] = {}
    _put_entries(out, layout.x_base, cl.a_entries(x, xs))
    for r, w in enumerate(ws):
        w = np.asarray(w)
        if w.shape != (layout.n, layout.k):
            raise ValueError(f"w{r} must be (N, K) = ({layout.n}, {layout.k}), got {w.shape}")
        s = np.full((layout.n, layout.nk), SCALE_ONE) if w_scales is None else np.asarray(w_scales[r])
        _put_entries(out, layout.w_bases[r], cl.b_entries(w.T, s.T))
    return out


def _put_entries(out: dict[int, int], base: int, entries: Sequence[Sequence[int]]) -> None:
    first = base // WORD_BYTES
    for i, g in enumerate(cl.granules_of(entries)):
        out[first + i] = g


def pack_tiled(y, gm: int, gn: int) -> list[int]:
    """An (M, N) FP16 matrix -> its tiled words (instance-major, sub-tile g*gn+h, lane 4rr+cc)."""
    y = np.asarray(y, dtype=np.uint16)
    m, n = y.shape
    rows, cols = m // (4 * gm), n // (4 * gn)
    t = y.reshape(rows, gm, 4, cols, gn, 4).transpose(0, 3, 1, 4, 2, 5).reshape(-1, 16)
    return [vc.u16_to_word(lanes) for lanes in t]


def unpack_tiled(words: Sequence[int], m: int, n: int, gm: int, gn: int) -> np.ndarray:
    """Tiled words -> the (M, N) FP16 matrix (inverse of :func:`pack_tiled`)."""
    rows, cols = m // (4 * gm), n // (4 * gn)
    if len(words) != rows * cols * gm * gn:
        raise ValueError(f"{len(words)} words for an {m}x{n} tiled output ({rows * cols * gm * gn} expected)")
    lanes = np.array([vc.word_to_u16(w) for w in words], dtype=np.uint16)
    return lanes.reshape(rows, cols, gm, gn, 4, 4).transpose(0, 2, 4, 1, 3, 5).reshape(m, n)


# ================================================================ epilogue lowering
@dataclass(frozen=True)
class Lowered:
    """One chunk's epilogue: loads, ALU lines, the result register; constants as scalars."""

    slots: tuple[int, ...]  # accumulator slots read, loaded into v0.. in this order
    scalars: tuple[tuple[int, int], ...]  # (scalar register, E8M15 pattern), set once by VSETI
    body: tuple[str, ...]  # ALU lines, in execution order
    result: int  # vector register holding the result
    vregs: int  # vector registers used at peak

    def alu_ops(self) -> int:
        return len(self.body)


_BUILTIN = {int(p): f"k{i}" for i, p in enumerate(vc.K_CONST)}
_BINARY = {"add": "VADD", "sub": "VSUB", "mul": "VMUL", "max": "VMAX", "min": "VMIN"}
_UNARY = {"exp2": "VEXP2", "inv": "VINV", "neg": "VNEG"}


def const_pattern(value: float) -> int:
    """The E8M15 pattern of a constant (nearest even), refusing what is not a finite number."""
    if not math.isfinite(float(value)):
        raise _refuse(f"constant {value!r} is not finite", "fold it away or write it as a finite number")
    return vc.e8m15(float(value))


def _temp_rank(reg: int) -> tuple[bool, int]:
    """Allocation order of vector registers: v7.. first (the compiler's temporaries), then the rest."""
    return reg < FIRST_TEMP_VREG, reg


def lower_epilogue(expr: Expr) -> Lowered:
    """Lower an epilogue tree to one chunk's ALU lines (register allocation, constants as sources).

    Registers as the public compiler assigns them: accumulator r's chunk is
    loaded into v0, v1, ... (slot order), results and temporaries take v7 up
    (then the other free registers), an operation whose operand dies here
    writes over it, constants go into S4 up (S0 holds VL; then S1..S3).
    Identical subtrees are computed once. SiLU is VMUL t = x * -log2(e),
    VEXP2, VADD K1, VINV, VMUL t = x * t (the compiler's five words); sigmoid
    is the first four. Refuses an operand leaf, an unknown operation, more
    constants than scalar registers or more live values than vector registers.
    """
    for leaf in leaves(expr):
        if isinstance(leaf, Operand) or not isinstance(leaf, (Acc, Const)):
            raise _refuse(f"epilogue leaf {leaf!r} is neither an accumulator nor a constant", FIXES)
    uses: dict[Expr, int] = {}

    def count(e: Expr) -> None:
        uses[e] = uses.get(e, 0) + 1
        if uses[e] == 1 and isinstance(e, Op):
            if e.name not in ELEMENTWISE:
                raise _refuse(f"epilogue operation '{e.name}' has no vector-core lowering (known: "
                              f"{', '.join(sorted(ELEMENTWISE))})", "express it with the known operations")
            if len(e.args) != ELEMENTWISE[e.name]:
                raise _refuse(f"'{e.name}' takes {ELEMENTWISE[e.name]} operand(s), got {len(e.args)}",
                              "fix the expression")
            for a in e.args:
                count(a)

    count(expr)
    slots = tuple(sorted({leaf.slot for leaf in leaves(expr) if isinstance(leaf, Acc)}))
    if len(slots) > vc.N_VREGS:
        raise _refuse(f"the epilogue reads {len(slots)} accumulators, more than the {vc.N_VREGS} vector registers",
                      FIXES)
    scalars: dict[int, int] = {}  # pattern -> sreg

    def source_of_const(pattern: int) -> str:
        if pattern in _BUILTIN:
            return _BUILTIN[pattern]
        if pattern not in scalars:
            if len(scalars) == len(CONST_SREGS):
                raise _refuse(f"the epilogue needs more than {len(CONST_SREGS)} distinct constants (scalar "
                              f"registers S1..S15; S0 holds VL)", f"fold constants together, or {FIXES}")
            scalars[pattern] = CONST_SREGS[len(scalars)]
        return f"s{scalars[pattern]}"

    owner: dict[Expr, int] = {Acc(s): i for i, s in enumerate(slots)}  # the loads come first, in slot order
    free = sorted(set(range(vc.N_VREGS)) - set(owner.values()), key=_temp_rank)
    left = dict(uses)
    body: list[str] = []
    peak = len(owner)

    def alloc() -> int:
        nonlocal peak
        if not free:
            raise _refuse(f"the epilogue needs more than {vc.N_VREGS} vector registers live at once",
                          f"simplify the expression, or {FIXES}")
        r = free.pop(0)
        peak = max(peak, vc.N_VREGS - len(free))
        return r

    def release(e: Expr) -> None:
        left[e] -= 1
        if left[e] == 0 and e in owner:
            free.append(owner.pop(e))
            free.sort(key=_temp_rank)

    memo: dict[Expr, str] = {}

    def ev(e: Expr) -> str:
        if e in memo:
            return memo[e]
        if isinstance(e, Acc):
            src = f"v{owner[e]}"
        elif isinstance(e, Const):
            src = source_of_const(const_pattern(e.value))
        else:
            srcs = [ev(a) for a in e.args]
            if e.name in ("silu", "sigmoid"):
                x = srcs[0]
                s = source_of_const(NEG_LOG2E)
                vd = alloc()  # x is read again by SiLU's last step: never write over it
                d = f"v{vd}"
                body.extend([f"VMUL {d}, {x}, {s}", f"VEXP2 {d}, {d}", f"VADD {d}, {d}, k1", f"VINV {d}, {d}"])
                if e.name == "silu":
                    body.append(f"VMUL {d}, {x}, {d}")
                for a in e.args:
                    release(a)
            else:
                for a in e.args:
                    release(a)
                vd = alloc()
                d = f"v{vd}"
                if e.name in _BINARY:
                    body.append(f"{_BINARY[e.name]} {d}, {srcs[0]}, {srcs[1]}")
                else:
                    body.append(f"{_UNARY[e.name]} {d}, {srcs[0]}")
            owner[e] = vd
            src = d
        memo[e] = src
        return src

    res = ev(expr)
    if not res.startswith("v"):  # a bare constant: materialise it
        vd = alloc()
        body.append(f"VMOV v{vd}, {res}")
        res = f"v{vd}"
    return Lowered(slots, tuple((r, p) for p, r in sorted(scalars.items(), key=lambda t: CONST_SREGS.index(t[1]))),
                   tuple(body), int(res[1:]), peak)


# ================================================================ programs
@dataclass(frozen=True)
class ClusterProgram:
    cluster: Coord
    payloads: tuple[int, ...]

    def ops(self) -> tuple[str, ...]:
        return tuple(cl.Op(cl.decode_inst(p)["op"]).name for p in self.payloads)

    def fields(self) -> list[dict[str, int]]:
        return [cl.decode_inst(p) for p in self.payloads]


@dataclass(frozen=True)
class DescUse:
    """One descriptor of a vector program: what it walks, and the DESC fields its instructions read."""

    ad: int
    role: str  # "fill r" (temp_r -> L1, unfused), "slot r" (L1 of accumulator r), "result" (L1), "drain" (y)
    descriptor: vc.Descriptor
    reads: tuple[int, ...]  # DESC fields (0 = base, 1..4 = dims) the instructions using it read


@dataclass(frozen=True)
class VectorProgram:
    core: Coord
    lines: tuple[str, ...]
    words: tuple[int, ...]
    uses: tuple[DescUse, ...]  # in descriptor order
    desc_writes: tuple[tuple[int, int, int], ...]  # (ad, fld, value), in write order

    @property
    def descriptors(self) -> Mapping[int, vc.Descriptor]:
        return MappingProxyType({u.ad: u.descriptor for u in self.uses})

    def use(self, role: str) -> DescUse:
        for u in self.uses:
            if u.role == role:
                return u
        raise KeyError(f"no descriptor with role {role!r}; roles: {', '.join(u.role for u in self.uses)}")

    def payloads(self) -> list[int]:
        """IMEM writes from address 0, then the DESC writes, then RUN pc 0: the host's flits in order."""
        out = [vc.imem_payload(i, w) for i, w in enumerate(self.words)]
        out += [vc.desc_payload(ad, fld, v) for ad, fld, v in self.desc_writes]
        return out + [vc.run_payload(0)]

    @property
    def flits(self) -> dict[str, int]:
        return {"imem": len(self.words), "desc": len(self.desc_writes), "run": 1}

    def mnemonics(self) -> list[str]:
        return [line.split()[0] for line in self.lines]

    def listing(self) -> list[str]:
        """The program's words as ``pc: word  text`` lines."""
        return vc.listing(self.words)

    def kick_listing(self) -> list[str]:
        """The host's flits to this core in the public compiler's program.txt form (IMEM, DESC, RUN and the
        program the RUN runs)."""
        return vc.describe_kick(self.payloads())


def program_words(words: Sequence[int]) -> list[tuple[int, vc.Word]]:
    """(pc, word) of every instruction of a program, a VSETI's immediate skipped (it is data)."""
    out: list[tuple[int, vc.Word]] = []
    pc = 0
    while pc < len(words):
        w = vc.Word(words[pc])
        out.append((pc, w))
        pc += 2 if w.op == vc.OPCODES["VSETI"] else 1
    return out


@dataclass(frozen=True)
class InstancePrograms:
    index: int
    row: int
    col: int
    cluster: ClusterProgram
    vector: VectorProgram


def _fills(addr: int, n: int, sel: int) -> list[int]:
    """FILLs of n entries from `addr` into eoff 0.. of one side (255 per FILL, entries 0..255 reachable)."""
    if n > FILL_REACH:
        side = "A (gm*nk)" if sel == 0 else "B (gn*nk)"
        raise _refuse(f"{n} L1{'AB'[sel]} entries for side {side}: a FILL reaches entries 0..{FILL_REACH - 1} "
                      f"only (its tag is the 8-bit txn)", f"retile with a smaller gm, gn or nk, or {FIXES}")
    out, done = [], 0
    while done < n:
        k = min(cl.FILL_MAX, n - done)
        out.append(cl.fill(addr + done * ENTRY_BYTES, k, sel, eoff=done))
        done += k
    return out


def cluster_program(plan: Plan, index: int, machine: Machine, layout: DramLayout, *, fused: bool = True,
                    anchor: int = ANCHOR) -> ClusterProgram:
    """The cluster program of instance `index`: FILL A, then per accumulator r FILL B_r, GEMM, DRAIN.

    Order: sweep, drain, sweep, drain (each drain lifted above the next sweep,
    whose LOAD would clear the accumulator). Fused drains go to the paired
    vector core's slot r (dnode 1, dbuf 0, dflags 1, dack = agent, addr =
    slot*32); unfused drains go to temp_r in DRAM (dnode 0).
    """
    inst = plan.instances[index]
    if fused and machine.agent is None:
        raise _refuse(f"machine {machine.name} has no agent coordinate: the acknowledgements would go back to "
                      f"the cluster and be dropped", FIXES)
    if not fused and len(layout.temp_bases) < plan.accumulators:
        raise _refuse(f"the unfused form needs {plan.accumulators} temp region(s); the layout has "
                      f"{len(layout.temp_bases)}", "build the layout with temps=True")
    tiles = plan.gm * plan.gn
    out = _fills(layout.x_fill_addr(inst.row), plan.gm * plan.nk, 0)
    for r in range(plan.accumulators):
        out += _fills(layout.w_fill_addr(r, inst.col), plan.gn * plan.nk, 1)
        out.append(cl.gemm(plan.gm, plan.gn, plan.nk, anchor=anchor))
        if fused:
            out.append(cl.drain(tiles, addr=plan.slots[r] * WORD_BYTES, dnode=1, dst=inst.vector_core, dbuf=0,
                                dflags=1, dack=machine.agent))
        else:
            out.append(cl.drain(tiles, addr=layout.temp_addr(r, inst.row, inst.col), dnode=0))
    return ClusterProgram(inst.cluster, tuple(out))


def descriptor_roles(accumulators: int, slots: Sequence[int], *, fused: bool) -> list[tuple[int, str]]:
    """(ad, role) in the compiler's order: the unfused temp fills first, then one L1 descriptor per slot
    read, the result's L1 descriptor, the y drain (fused: A0 slot 0, A1 result, A2 drain)."""
    roles = [] if fused else [f"fill {r}" for r in range(accumulators)]
    roles += [f"slot {s}" for s in slots] + ["result", "drain"]
    if len(roles) > vc.N_DESC:
        raise _refuse(f"the {'fused' if fused else 'unfused'} program needs {len(roles)} descriptors "
                      f"({', '.join(roles)}); the core has {vc.N_DESC}",
                      f"fewer accumulators per kernel, or {FIXES}")
    return list(enumerate(roles))


def vector_program(plan: Plan, index: int, epilogue: Expr, layout: DramLayout, *, fused: bool = True,
                   desc_writes: str = "minimal", lowered: Optional[Lowered] = None) -> VectorProgram:
    """The vector program of instance `index` (see the module docstring for its shape)."""
    if desc_writes not in DESC_POLICIES:
        raise ValueError(f"desc_writes must be one of {', '.join(DESC_POLICIES)}, got {desc_writes!r}")
    inst = plan.instances[index]
    low = lowered if lowered is not None else lower_epilogue(epilogue)
    if max(low.slots, default=0) >= plan.accumulators:
        raise _refuse(f"the epilogue reads accumulator {max(low.slots)} but the plan has {plan.accumulators}",
                      "plan with the same epilogue")
    tiles = plan.gm * plan.gn
    if plan.span_w % CHUNK_WORDS:
        raise _refuse(f"span_w={plan.span_w} is not a whole number of {CHUNK_WORDS}-word chunks",
                      "plan with models.planner (span_w rounds gm*gn up to 8)")
    roles = descriptor_roles(plan.accumulators, low.slots, fused=fused)
    ad = {role: a for a, role in roles}
    y_desc = vc.Descriptor(layout.y_addr(inst.row, inst.col), ((WORD_BYTES, tiles),))
    described = {"result": (vc.Descriptor(plan.result_word, ((1, CHUNK_WORDS),)), L1_FIELDS),
                 "drain": (y_desc, MEMORY_FIELDS)}
    for s in low.slots:
        described[f"slot {s}"] = (vc.Descriptor(plan.slots[s], ((1, CHUNK_WORDS),)), L1_FIELDS)
    fills = [] if fused else list(range(plan.accumulators))
    for r in fills:
        described[f"fill {r}"] = (vc.Descriptor(layout.temp_addr(r, inst.row, inst.col), ((WORD_BYTES, tiles),)),
                                  MEMORY_FIELDS)
    uses = tuple(DescUse(a, role, *described[role]) for a, role in roles)

    lines = [f"VSETI s{VL_SREG}, {VL_CHUNK}"]
    lines += [f"VSETI s{sreg}, {pattern:#08x}" for sreg, pattern in low.scalars]
    lines += [f"VSETVL s{VL_SREG}", "VSETMODE FLAT"]
    lines += [f"VFILL A{ad[f'fill {r}']}, {plan.slots[r]}" for r in fills]
    if fills:
        lines.append("VBAR")
    for c in range(plan.span_w // CHUNK_WORDS):
        lines += [f"VLD v{i}, A{ad[f'slot {s}']}+{CHUNK_WORDS * c}" for i, s in enumerate(low.slots)]
        lines += list(low.body)
        lines.append(f"VST v{low.result}, A{ad['result']}+{CHUNK_WORDS * c}")
    lines += [f"VDRAIN A{ad['drain']}, {plan.result_word}", "VHALT"]
    try:
        words = vc.assemble(lines)
    except ValueError as exc:
        raise _refuse(f"the vector program does not assemble: {exc}", f"a smaller tile (fewer chunks), a simpler "
                      f"epilogue, or {FIXES}") from None
    writes = tuple((u.ad, fld, v) for u in uses
                   for fld, v in u.descriptor.writes(u.reads if desc_writes == "minimal" else MEMORY_FIELDS))
    return VectorProgram(inst.vector_core, tuple(lines), tuple(words), uses, writes)


# ================================================================ counts
@dataclass(frozen=True)
class Counts:
    """What one form of the kernel costs: host flits, DRAM bytes, acknowledgements, completions."""

    form: str
    cluster_flits: int
    vector_imem: int
    vector_desc: int
    vector_run: int
    x_read: int
    w_read: int
    temp_written: int
    temp_read: int
    y_written: int
    temp_bytes: int
    acks: Mapping[Coord, int]  # SIG_DATA_RECEIVED per receiving core, to await before RUN
    completions: Mapping[Coord, int]  # one per CU_INST, per unit

    @property
    def vector_flits(self) -> int:
        return self.vector_imem + self.vector_desc + self.vector_run

    @property
    def total_flits(self) -> int:
        return self.cluster_flits + self.vector_flits

    @property
    def dram_read(self) -> int:
        return self.x_read + self.w_read + self.temp_read

    @property
    def dram_written(self) -> int:
        return self.temp_written + self.y_written

    @property
    def dram_total(self) -> int:
        return self.dram_read + self.dram_written

    def node_status_counts(self) -> dict[Coord, int]:
        """What NODE_STATUS counts per unit over the round (acks and completions share it)."""
        out = dict(self.completions)
        for c, n in self.acks.items():
            out[c] = out.get(c, 0) + n
        return out


@dataclass(frozen=True)
class KernelPrograms:
    plan: Plan
    form: str
    layout: DramLayout
    epilogue: Expr
    lowered: Lowered
    instances: tuple[InstancePrograms, ...]
    counts: Counts


def _vector_bytes(prog: VectorProgram, op: str) -> int:
    """DRAM bytes the program's `op` (VFILL or VDRAIN, to memory) moves: its descriptors' walk totals."""
    code = vc.OPCODES[op]
    descs = prog.descriptors
    return sum(descs[w.ad].total * WORD_BYTES for _, w in program_words(prog.words) if w.op == code and not w.node)


def _count(plan: Plan, form: str, instances: Sequence[InstancePrograms]) -> Counts:
    x_read = w_read = temp_written = 0
    acks: dict[Coord, int] = {}
    completions: dict[Coord, int] = {}
    for ip in instances:
        completions[ip.cluster.cluster] = completions.get(ip.cluster.cluster, 0) + len(ip.cluster.payloads)
        completions[ip.vector.core] = completions.get(ip.vector.core, 0) + len(ip.vector.payloads())
        for f in ip.cluster.fields():
            n = f["n"] or 1
            if f["op"] == cl.Op.FILL:
                if f["sel"]:
                    w_read += n * ENTRY_BYTES
                else:
                    x_read += n * ENTRY_BYTES
            elif f["op"] == cl.Op.DRAIN:
                if f["dnode"]:
                    if f["dflags"] & 1:
                        dst = (f["dst_x"], f["dst_y"])
                        acks[dst] = acks.get(dst, 0) + cl.acks_for(n)
                else:
                    temp_written += n * WORD_BYTES
    temp_read = sum(_vector_bytes(ip.vector, "VFILL") for ip in instances)
    y_written = sum(_vector_bytes(ip.vector, "VDRAIN") for ip in instances)
    return Counts(
        form=form,
        cluster_flits=sum(len(ip.cluster.payloads) for ip in instances),
        vector_imem=sum(ip.vector.flits["imem"] for ip in instances),
        vector_desc=sum(ip.vector.flits["desc"] for ip in instances),
        vector_run=sum(ip.vector.flits["run"] for ip in instances),
        x_read=x_read, w_read=w_read, temp_written=temp_written, temp_read=temp_read, y_written=y_written,
        temp_bytes=temp_written, acks=MappingProxyType(acks), completions=MappingProxyType(completions),
    )


def build_programs(plan: Plan, epilogue: Expr, machine: Machine, *, form: str = "fused",
                   layout: Optional[DramLayout] = None, anchor: int = ANCHOR,
                   desc_writes: str = "minimal") -> KernelPrograms:
    """Every instance's cluster and vector program for `form` ('fused' or 'unfused'), and the counts.

    Checks the plan against the machine first (a hand-made Plan gets the same
    guarantees as one from plan_fused): same machine, units where the plan
    says, an injective pairing, an agent for the fused form.
    """
    if form not in ("fused", "unfused"):
        raise ValueError(f"form must be 'fused' or 'unfused', got {form!r}")
    fused = form == "fused"
    _check_plan(plan, machine)
    if layout is None:
        layout = dram_layout(plan)
    else:
        layout.check()
        if (layout.m, layout.n, layout.k, layout.gm, layout.gn, layout.nk) != \
                (plan.m, plan.n, plan.k, plan.gm, plan.gn, plan.nk) or len(layout.w_bases) != plan.accumulators:
            raise _refuse("the DRAM layout was made for another plan (shape, tiling or accumulators differ)",
                          "build it with dram_layout(plan)")
    low = lower_epilogue(epilogue)
    insts = tuple(
        InstancePrograms(i, inst.row, inst.col,
                         cluster_program(plan, i, machine, layout, fused=fused, anchor=anchor),
                         vector_program(plan, i, epilogue, layout, fused=fused, desc_writes=desc_writes,
                                        lowered=low))
        for i, inst in enumerate(plan.instances))
    counts = _count(plan, form, insts)
    if fused:
        want = dict(expected_acks(plan))
        if dict(counts.acks) != want:  # the drains we emit must produce exactly what the host awaits
            raise AssertionError(f"acks from the drains {dict(counts.acks)} != the planner's {want}")
    return KernelPrograms(plan, form, layout, epilogue, low, insts, counts)


def _check_plan(plan: Plan, machine: Machine) -> None:
    if plan.machine != machine.name:
        raise _refuse(f"the plan was made for machine {plan.machine}, not {machine.name}",
                      f"plan on {machine.name}")
    cores = [i.vector_core for i in plan.instances]
    if len(set(cores)) != len(cores):
        raise _refuse(f"two instances share a vector core ({len(cores)} instances on {len(set(cores))} cores): "
                      f"one open stream per receiver, the pairing must be injective", FIXES)
    for i in plan.instances:
        if i.vector_core not in machine.vector_cores or i.cluster not in machine.clusters:
            raise _refuse(f"instance ({i.row},{i.col}) names cluster {i.cluster} / vector core {i.vector_core}, "
                          f"not units of {machine.name}", f"plan on {machine.name}")
    if plan.footprint_words > L1_SAFE:
        raise _refuse(f"L1 footprint {plan.footprint_words} words exceeds L1_SAFE={L1_SAFE}", FIXES)
    if plan.slots and plan.result_word < plan.slots[-1] + plan.span_w:
        raise _refuse("the result overlaps an accumulator slot", "plan with models.planner")


def build_kernel(m: int, n: int, k: int, gm: int, gn: int, nk: int, epilogue: Expr, machine: Machine, *,
                 form: str = "fused", **kw) -> KernelPrograms:
    """plan_fused (every PlanRefused fires here) then :func:`build_programs`.

    The unfused form is built on the same plan (same placement and L1 layout),
    so it inherits the fused plan's refusals: it is the comparison's baseline,
    not a fallback.
    """
    plan = plan_fused(m, n, k, gm, gn, nk, epilogue, machine)
    return build_programs(plan, epilogue, machine, form=form, **kw)


# ================================================================ comparison
@dataclass(frozen=True)
class Comparison:
    fused: Counts
    unfused: Counts
    m: int
    n: int
    accumulators: int

    @property
    def flit_saving(self) -> int:
        return self.unfused.total_flits - self.fused.total_flits

    @property
    def dram_saving(self) -> int:
        return self.unfused.dram_total - self.fused.dram_total

    def table(self) -> str:
        rows = [
            ("cluster flits", "cluster_flits"), ("vector IMEM flits", "vector_imem"),
            ("vector DESC flits", "vector_desc"), ("vector RUN flits", "vector_run"),
            ("instruction flits, total", "total_flits"), ("DRAM read: x", "x_read"), ("DRAM read: w", "w_read"),
            ("DRAM read: temp", "temp_read"), ("DRAM written: temp", "temp_written"),
            ("DRAM written: y", "y_written"), ("DRAM bytes, total", "dram_total"), ("temp bytes", "temp_bytes"),
        ]
        out = [f"{'':28s}{'fused':>10s}{'unfused':>10s}"]
        for label, attr in rows:
            out.append(f"{label:28s}{getattr(self.fused, attr):>10d}{getattr(self.unfused, attr):>10d}")
        out.append(f"{'acks awaited':28s}{sum(self.fused.acks.values()):>10d}{sum(self.unfused.acks.values()):>10d}")
        out.append(f"{'upstream (seed) flits':28s}{UPSTREAM_FLITS['fused']:>10d}{UPSTREAM_FLITS['unfused']:>10d}")
        out.append(f"upstream's unfused form also kept {UPSTREAM_BROADCAST_BYTES} B of broadcast constants in DRAM; "
                   f"ours keeps none in either form")
        out.append(f"DRAM saving {self.dram_saving} B = {self.accumulators} x 2*M*N*2; flit saving {self.flit_saving}")
        return "\n".join(out)


def compare_forms(fused: KernelPrograms, unfused: KernelPrograms) -> Comparison:
    """The comparison of two builds of one plan; asserts the DRAM saving is 2*M*N*2 per accumulator."""
    if fused.form != "fused" or unfused.form != "unfused" or fused.plan != unfused.plan:
        raise ValueError("compare a fused and an unfused build of the same plan")
    p = fused.plan
    cmp = Comparison(fused.counts, unfused.counts, p.m, p.n, p.accumulators)
    want = p.accumulators * 2 * p.m * p.n * 2
    assert cmp.dram_saving == want, f"DRAM saving {cmp.dram_saving} != {p.accumulators} x 2*M*N*2 = {want}"
    assert fused.counts.temp_bytes == 0 and unfused.counts.temp_bytes == p.accumulators * p.m * p.n * 2
    return cmp


def seed_comparison(machine: Optional[Machine] = None, *, desc_writes: str = "minimal") -> Comparison:
    """The seed's case: y = silu(x @ w^T), x 32x64, w 32x64, gm=4 gn=8 nk=2, on fused4."""
    from models.machines import FUSED4
    from models.planner import silu

    machine = machine or FUSED4
    epi = silu(Acc(0))
    builds = [build_kernel(**SEED_CASE, epilogue=epi, machine=machine, form=f, desc_writes=desc_writes)
              for f in ("fused", "unfused")]
    return compare_forms(*builds)
