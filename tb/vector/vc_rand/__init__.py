"""Constrained-random programs for the vector core's differential test (RTL against models/vector/__init__.py).

A *sequence* of cases runs on ONE core whose state carries over (V, S, P, K3,
VL, mode, descriptors, L1, IMEM). ``make_case(seed, index, state)`` returns case
``index`` of the sequence named by ``seed`` and advances ``state`` (a small
``CaseState``: VL, mode, the eight descriptors, the geometry); with ``state=None``
it first replays cases 0..index-1 from the generator alone (no model), so every
case is reproducible from (seed, index). Case 0 is always ``init``: it defines
all of L1, V0..V15, S0..S15, P0..P3 and K3, so no later case reads a register
the RTL leaves uninitialised (units.md V.1).

A ``Case`` carries what a bench sends, in this order:

1. ``bursts`` - inbound CU_DATA bursts (``data_flits()``), delivered **between
   RUNs**: after the previous RUN retired and before this case's CU_INSTs. Each
   flit names its sender in its src field; the list is in delivery order, so a
   bench that needs the order (the interleaved-burst F_CUDATA case) sends them
   all from one endpoint and lets them settle before the CU_INSTs
   (``streams()``: everything from the host endpoint, in that order);
2. ``dram`` - byte address -> 256-bit word: the words this case's VFILLs read,
   to load into the memory agent's DRAM before the case;
3. ``inst`` - CU_INST (txn, last, payload): IMEM writes of ``words`` from ``pc``
   (mod 512), DESC writes of the descriptor fields that differ from what the
   core holds (so carried-over fields are exercised), a few no-op envelopes, and
   the RUN last (``inst_flits()``).

``predict(model, case)`` feeds all of that into a ``CoreWithMemory`` and returns
every flit the core sent. ``new_model()`` gives a model whose ``TracingCore``
logs what executed, for the coverage model (tb/cover/vector.py) and
``timing_violations()``.

Rules that keep a result independent of the RTL's timing (the generator keeps
them by construction; ``timing_violations`` re-checks them on what executed):

* a VFILL's L1 words are not read or written (VLD, VST, VDRAIN, another VFILL)
  until a VBAR or VHALT after it, and no fault is raised with fills in flight;
* every VFILL source and VDRAIN-to-memory destination lies in the bench's DRAM
  (``Geometry.dram_base``/``dram_words``): sources in its first half, destinations
  in its second, so they are disjoint for the whole sequence (32-byte aligned:
  how a memory agent maps an unaligned address is not the core's business);
* node-form VDRAIN goes to the host or a peer, never the core or the memory agent;
* inbound CU_DATA only between RUNs (``predict`` refuses otherwise);
* every program halts: loops are counted from a VSETI right before them
  (counts 0..5), a body never holds VFILL/VSETVL/VSETMODE, words after a fault
  are never reached, and a program wraps pc 511 -> 0 only in the ``pcwrap``
  focus, where it still ends in a VHALT;
* ANY/ALL (quirk D4) and EXPSUM (quirk D5) read the pr/pm of the most recent
  ALU word; each RUN sets those before it reads them, so nothing depends on
  what a faulted word of an earlier RUN latched.

Every case has a focus (what it targets) and a label for messages. Foci are
visited in a seed-shuffled round robin, so N foci are all reached in N cases and
schedules inside a focus (VRED VLs, loop counts, fault variants) advance once per
round: a few hundred cases close every item of the coverage model but its walk cross, which a
regression closes on the union of its shards (tb/cover/vector.py, REGRESSION_ONLY).

The modules, one concern each:

* ``cases``: ``Geometry`` (where things are, the DRAM's fill and drain regions), ``Burst``, ``Case``,
  ``CaseState``;
* ``spec``: walks and operand reads re-derived from units.md (``raw_walk``, ``mem_walk``, ``reads``);
* ``values``: E8M15 immediates, FP16 / FP32 data words, transcendental operands;
* ``tracking``, ``units``, ``builder``: the program builder (its tracking and descriptors, its
  instruction units, then loops, filler, faults and the closing of a case);
* ``foci_alu``, ``foci_memory``, ``foci_flow``, ``foci_faults``: what each case targets, by family;
* ``generate``: the foci's round robin, ``make_case``, ``state_before``, ``sequence``;
* ``run``: ``predict``, ``run_result`` / ``run_fault``, ``run_sequence`` and its cross-checks, ``dram_overlap``;
* ``tracing``: ``TracingCore`` (the golden core with a log of what executed), ``new_model``;
* ``timing``: ``timing_violations``. (What the programs covered: tb/cover/vector.py, on cocotb-coverage.)
"""

from __future__ import annotations

from .builder import Builder, Focus
from .cases import DEFAULT_GEOMETRY, Burst, Case, CaseState, Coord, Geometry
from .generate import FOCI, focus_of, make_case, sequence, state_before
from .run import dram_overlap, predict, run_fault, run_result, run_sequence
from .spec import mem_walk, raw_walk, reads, walk_product
from .timing import timing_violations
from .tracing import STEP_LIMIT, Executed, FaultRecord, RunawayProgram, TracingCore, new_model
from .tracking import MAX_WORDS, MIN_WORDS

__all__ = [
    "Builder", "Burst", "Case", "CaseState", "Coord", "DEFAULT_GEOMETRY", "Executed", "FOCI",
    "FaultRecord", "Focus", "Geometry", "MAX_WORDS", "MIN_WORDS", "RunawayProgram", "STEP_LIMIT",
    "TracingCore", "dram_overlap", "focus_of", "make_case", "mem_walk", "new_model",
    "predict", "raw_walk", "reads", "run_fault", "run_result", "run_sequence", "sequence", "state_before",
    "timing_violations", "walk_product",
]
