"""Unit programs from a plan: what the host dispatches to each cluster and vector core.

One role: turn a :class:`models.machine.planner.Plan` (placement, deal() pairing,
span_w, slots, acks) plus an epilogue expression and a DRAM layout into, per
instance, the cluster program (CU_INST payloads), the vector program (words,
descriptors, IMEM/DESC/RUN payloads), and the counts of the comparison table.
It composes the planner (``plan_fused`` runs first in :func:`build_kernel`, so
every ``PlanRefused`` of the planner fires here too) and the units' encoders
(``models.cluster.fill/gemm/drain``, ``models.vector.assemble``); it
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

Modules, one concern each (this package re-exports their public names):

* ``layout``     - the DRAM layout (:class:`DramLayout`, :func:`dram_layout`), the
  operand images and the tiled output (:func:`pack_tiled`, :func:`unpack_tiled`);
* ``lowering``   - the epilogue lowered to one chunk's ALU lines, constants in
  scalar registers (:func:`lower_epilogue`, :func:`const_pattern`);
* ``emission``   - one instance's cluster program and vector program, and the
  shape of the vector program (:func:`cluster_program`, :func:`vector_program`);
* ``counts``     - what one form costs, counted from its programs (:class:`Counts`);
* ``kernel``     - the plan checked against the machine, every instance's
  programs in one form and their counts (:func:`build_programs`, :func:`build_kernel`);
* ``comparison`` - fused against unfused, and ours against the public
  compiler's, on the seed case (:func:`compare_forms`, :func:`seed_comparison`;
  its docstring holds the scenario-6 block that ``python -m models.bundle.flit_ledger
  --write`` keeps current).
"""

from .comparison import (
    SEED_CASE, SEED_OURS, UPSTREAM_BROADCAST_BYTES, UPSTREAM_FLITS, Comparison, compare_forms, seed_comparison,
)
from .counts import Counts
from .emission import (
    ANCHOR, CHUNK_WORDS, DESC_POLICIES, L1_FIELDS, MEMORY_FIELDS, VL_CHUNK, VL_SREG, ClusterProgram, DescUse,
    InstancePrograms, VectorProgram, cluster_program, descriptor_roles, program_words, vector_program,
)
from .kernel import KernelPrograms, build_kernel, build_programs
from .layout import (
    ENTRY_BYTES, SCALE_ONE, WORD_BYTES, DramLayout, dram_layout, operand_images, pack_tiled, unpack_tiled,
)
from .lowering import CONST_SREGS, FIRST_TEMP_VREG, Lowered, const_pattern, lower_epilogue

__all__ = [
    "ANCHOR", "SCALE_ONE", "ENTRY_BYTES", "WORD_BYTES", "CHUNK_WORDS", "VL_CHUNK", "VL_SREG", "CONST_SREGS",
    "FIRST_TEMP_VREG", "L1_FIELDS", "MEMORY_FIELDS", "DESC_POLICIES", "UPSTREAM_FLITS", "UPSTREAM_BROADCAST_BYTES",
    "SEED_CASE", "SEED_OURS", "DramLayout", "dram_layout", "operand_images", "pack_tiled", "unpack_tiled",
    "Lowered", "lower_epilogue", "ClusterProgram", "DescUse", "VectorProgram", "InstancePrograms", "Counts",
    "KernelPrograms", "Comparison", "cluster_program", "descriptor_roles", "vector_program", "program_words",
    "build_programs", "build_kernel", "compare_forms", "seed_comparison", "const_pattern",
]
