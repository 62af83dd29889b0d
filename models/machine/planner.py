"""Planning a (fused) matmul + epilogue onto a machine, and refusing what cannot fit.

This is the part of the planner that decides *whether* and *where*: tiling,
instances, the deal() pairing of cluster instances with vector cores, the L1
layout (span_w, slots), and the acknowledgement counts the host must await. It
refuses the five cases of the fusion rules before any simulation, each time
naming both fixes: retile, or write two stages with a temp. Emitting the
cluster and vector programs from a Plan is the job of the program builders
that sit on the units' encoders.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Iterable, Mapping, Sequence, Union

from models.machine.layouts import Coord, Machine

WBURST = 8  # granules per CU_DATA burst: one acknowledgement per burst
L1_WORDS = 512  # vector core L1, 256-bit words
L1_SAFE = 320  # largest footprint measured good on hardware
K_PER_ENTRY = 32  # int7 elements of K per L1 entry
MAX_ACCUMULATORS = L1_SAFE // 8 - 1  # the L1 cannot hold more tiles than this even at the smallest span
TWO_STAGES = "write two stages with a temp in DRAM"
FIXES = f"fixes: retile with a smaller gm*gn (smaller, more instances), or {TWO_STAGES}"  # a tile too big
FEWER_INSTANCES = ("fixes: retile with a larger gm*gn (fewer, larger instances: at most one per vector core), "
                   "use a machine with more vector cores, or " + TWO_STAGES)  # too many tiles


class PlanRefused(ValueError):
    """A shape the fused form cannot serve; the message names the limit and both fixes."""


# ---------------------------------------------------------------- epilogue trees
@dataclass(frozen=True)
class Acc:
    """The accumulator of sweep `slot` (0 for a single GEMM), however it arrives."""

    slot: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.slot, bool) or not isinstance(self.slot, int) or not 0 <= self.slot < MAX_ACCUMULATORS:
            raise PlanRefused(f"Acc({self.slot!r}): the sweep slot must be an integer in 0..{MAX_ACCUMULATORS - 1} "
                              f"(accumulator 0 is the GEMM's own; one more per extra sweep)")


@dataclass(frozen=True)
class Const:
    """A scalar constant: goes into a scalar register (VSETI), never into DRAM."""

    value: float


@dataclass(frozen=True)
class Operand:
    """A second tensor operand (needs its own fill): refused by the fused form."""

    name: str


@dataclass(frozen=True)
class Op:
    """An elementwise operation: add, sub, mul, max, min, exp2, inv, neg, silu, sigmoid."""

    name: str
    args: tuple["Expr", ...]

    def __post_init__(self) -> None:
        arity = ELEMENTWISE.get(self.name)
        if arity is not None and len(self.args) != arity:
            raise PlanRefused(f"Op({self.name!r}) takes {arity} operand(s), got {len(self.args)}")
        bad = [a for a in self.args if not isinstance(a, (Acc, Const, Operand, Op))]
        if bad:
            raise PlanRefused(f"Op({self.name!r}): operand {bad[0]!r} is not an expression (Acc, Const, Operand "
                              f"or Op)")


Expr = Union[Acc, Const, Operand, Op]
ELEMENTWISE = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "exp2": 1, "inv": 1, "neg": 1,
               "silu": 1, "sigmoid": 1}


def leaves(expr: Expr) -> Iterable[Expr]:
    if isinstance(expr, Op):
        for a in expr.args:
            yield from leaves(a)
    else:
        yield expr


def silu(x: Expr) -> Op:
    return Op("silu", (x,))


def mul(a: Expr, b: Expr) -> Op:
    return Op("mul", (a, b))


# ---------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Instance:
    """One output tile of 4*gm x 4*gn: its cluster, its paired vector core, its L1 slots."""

    row: int
    col: int
    cluster: Coord
    vector_core: Coord


@dataclass(frozen=True)
class Plan:
    machine: str
    m: int
    n: int
    k: int
    gm: int
    gn: int
    nk: int
    accumulators: int
    instances: tuple[Instance, ...]
    span_w: int
    result_word: int  # first L1 word of the epilogue's result
    acks_per_drain: int

    @property
    def slots(self) -> tuple[int, ...]:
        """First L1 word of each accumulator's drained tile: slot r at r*span_w."""
        return tuple(r * self.span_w for r in range(self.accumulators))

    @property
    def acks_per_core(self) -> int:
        """Acknowledgements each receiving core produces per round: they add over drains."""
        return self.acks_per_drain * self.accumulators

    @property
    def footprint_words(self) -> int:
        return self.result_word + self.span_w


def deal(keys: Sequence[object], nodes: Sequence[Coord]) -> dict[object, Coord]:
    """Round-robin over sorted(keys): key i gets node i mod len(nodes)."""
    if not nodes:
        raise PlanRefused("no nodes to deal instances onto")
    return {key: nodes[i % len(nodes)] for i, key in enumerate(sorted(keys))}


def span_words(gm: int, gn: int) -> int:
    """gm*gn rounded up to whole 8-word chunks."""
    return ceil(gm * gn / 8) * 8


def plan_fused(m: int, n: int, k: int, gm: int, gn: int, nk: int, epilogue: Expr, machine: Machine) -> Plan:
    """Decide the fused plan or refuse it (PlanRefused names the limit and the fixes)."""
    for name, value in (("gm", gm), ("gn", gn), ("nk", nk)):
        if not 1 <= value <= 255:
            raise PlanRefused(f"{name}={value} is outside 1..255 (an 8-bit instruction field)")
    if m % (4 * gm) or n % (4 * gn):
        raise PlanRefused(f"output {m}x{n} is not a whole number of {4 * gm}x{4 * gn} tiles (4*gm x 4*gn); "
                          f"choose gm dividing {m // 4 if m % 4 == 0 else m}/4 and gn dividing n/4")
    if k != K_PER_ENTRY * nk:
        raise PlanRefused(f"K={k} must equal 32*nk = {K_PER_ENTRY * nk} (one L1 entry holds 32 elements of K)")
    if machine.agent is None:
        raise PlanRefused(f"machine {machine.name} has no agent coordinate: the acknowledgements would go "
                          f"back to the cluster and be dropped; use a machine with an agent")
    if gm * gn > 256:
        raise PlanRefused(f"gm*gn = {gm * gn} sub-tiles > 256: a VDRAIN/VFILL walk longer than 256 entries "
                          f"faults F_LEN; {FIXES}")
    bad = [leaf for leaf in leaves(epilogue) if not isinstance(leaf, (Acc, Const))]
    if bad:
        raise PlanRefused(f"epilogue leaf {bad[0]!r} is neither an accumulator nor a constant: it would need "
                          f"its own fill aligned to one instance's tile; {TWO_STAGES}")
    unknown = [op.name for op in _ops(epilogue) if op.name not in ELEMENTWISE]
    if unknown:
        raise PlanRefused(f"epilogue operation '{unknown[0]}' has no vector-core lowering; known: "
                          f"{', '.join(sorted(ELEMENTWISE))}")
    accumulators = 1 + max((leaf.slot for leaf in leaves(epilogue) if isinstance(leaf, Acc)), default=0)
    span = span_words(gm, gn)
    result_word = accumulators * span
    footprint = result_word + span
    if footprint > L1_SAFE:
        band = " (inside the measured-bad band 321..511, where hardware returned wrong data and reported " \
               "success)" if footprint < L1_WORDS else ""
        raise PlanRefused(f"L1 footprint {footprint} words ({accumulators} tile(s) + result, span_w={span}) "
                          f"exceeds L1_SAFE={L1_SAFE}{band}; {FIXES}")
    rows, cols = m // (4 * gm), n // (4 * gn)
    keys = [(r, c) for r in range(rows) for c in range(cols)]
    cores = machine.vector_cores
    clusters = machine.clusters
    if len(keys) > len(cores):
        raise PlanRefused(f"{len(keys)} instances but {len(cores)} vector cores on {machine.name}: one open "
                          f"stream per receiver, so the pairing must be injective; {FEWER_INSTANCES}")
    if not clusters:
        raise PlanRefused(f"machine {machine.name} has no cluster")
    to_core = deal(keys, cores)
    to_cluster = deal(keys, clusters)
    instances = tuple(Instance(r, c, to_cluster[(r, c)], to_core[(r, c)]) for (r, c) in sorted(keys))
    return Plan(machine.name, m, n, k, gm, gn, nk, accumulators, instances, span, result_word,
                ceil(gm * gn / WBURST))


def _ops(expr: Expr) -> Iterable[Op]:
    if isinstance(expr, Op):
        yield expr
        for a in expr.args:
            yield from _ops(a)


def expected_acks(plan: Plan) -> Mapping[Coord, int]:
    """Per receiving core, the acknowledgements one round produces (for Await)."""
    out: dict[Coord, int] = {}
    for inst in plan.instances:
        out[inst.vector_core] = out.get(inst.vector_core, 0) + plan.acks_per_core
    return out
