"""Fused against unfused, and ours against the public compiler's: the seed case compared.

**Comparison with the seed** (32x64 @ 32x64: x is M=32 x K=64, w is N=32 x
K=64, y = x @ w^T is 32 x 32; gm=4, gn=8, nk=2: 2 instances of 16 x 32, 32
sub-tiles each, span_w 32; fused4): the instruction flits the host
dispatches, ours (``desc_writes="minimal"``) against the public compiler's
(its bundles ``linear_silu_fused_m32k64n32`` and
``linear_silu_unfused_m32k64n32`` in ``clients/bundles/``),
per unit kind and per role, every flit of both sides read back from the flit
itself by ``models/bundle/flit_ledger.py`` (``python -m models.bundle.flit_ledger`` prints
this block; tests/unit/bundle/test_flit_ledger.py fails when it differs from the
copy here or in docs/machine.md; :data:`SEED_OURS` pins our totals)::

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

from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional

from models.machine.layouts import Machine
from models.machine.planner import Acc

from .counts import Counts
from .kernel import KernelPrograms, build_kernel

UPSTREAM_FLITS = MappingProxyType({"fused": 94, "unfused": 107})  # seed / protocol §9
UPSTREAM_BROADCAST_BYTES = 2 * 16 * 1024  # upstream's unfused form: two 16 KB broadcast constant arrays
SEED_CASE = MappingProxyType({"m": 32, "n": 32, "k": 64, "gm": 4, "gn": 8, "nk": 2})
# Our counts for the seed case (silu epilogue on fused4), per DESC-write policy.
SEED_OURS = MappingProxyType({"minimal": {"fused": 100, "unfused": 114}, "full": {"fused": 112, "unfused": 126}})


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
    from models.machine.layouts import FUSED4
    from models.machine.planner import silu

    machine = machine or FUSED4
    epi = silu(Acc(0))
    builds = [build_kernel(**SEED_CASE, epilogue=epi, machine=machine, form=f, desc_writes=desc_writes)
              for f in ("fused", "unfused")]
    return compare_forms(*builds)
