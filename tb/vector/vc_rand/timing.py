"""The rules that make a program's result independent of the RTL's timing, re-checked on what executed.

The generator keeps them by construction (see the package docstring);
``timing_violations`` re-derives them from a ``TracingCore``'s log: a VFILL's
L1 words untouched until VBAR/VHALT, no fault with fills in flight, fill
sources never drained to, no node drain to the core or the memory agent.
"""

from __future__ import annotations

from typing import Iterable

from models.vector import isa
from models.vector.core import Coord
from models.vector.isa import Word
from models.vector.memory import CoreWithMemory

from .tracing import TracingCore


def timing_violations(model: CoreWithMemory, forbidden_nodes: Iterable[Coord] = ()) -> list[str]:
    """Rules whose breach would let the RTL's timing change a result, checked on what `model` executed.

    * a VFILL's L1 words are not read or written (VLD, VST, VDRAIN, another VFILL) until a VBAR or VHALT;
    * no RUN faults while fill responses are in flight;
    * no DRAM word is both a VFILL source and a VDRAIN destination (over the whole history);
    * no node-form VDRAIN goes to the core itself, the memory agent or `forbidden_nodes`.
    """
    core = model.core
    assert isinstance(core, TracingCore), "timing_violations needs a TracingCore"
    errors: list[str] = []
    pending: set[int] = set()
    run = 0
    fill_src: set[int] = set()
    drain_dst: set[int] = set()
    bad_nodes = {core.coord, core.mag, *forbidden_nodes}
    for x in core.trace:
        if x.run != run:
            run, pending = x.run, set()
        w = Word(x.word)
        op = w.op
        if op in (isa.OP_VBAR, isa.OP_VHALT):
            pending.clear()
            continue
        if op in (isa.OP_VLD, isa.OP_VST, isa.OP_VFILL, isa.OP_VDRAIN) and pending.intersection(x.l1):
            errors.append(f"RUN {x.run} pc {x.pc}: {w.name} touches L1 words {sorted(pending & set(x.l1))[:6]} "
                          "of a VFILL not yet ordered by VBAR/VHALT")
        if op == isa.OP_VFILL:
            pending.update(x.l1)
            fill_src.update(a >> 5 for a in x.mem)
        elif op == isa.OP_VDRAIN:
            drain_dst.update(a >> 5 for a in x.mem)
            if x.node_dst is not None and x.node_dst in bad_nodes:
                errors.append(f"RUN {x.run} pc {x.pc}: VDRAIN to node {x.node_dst}, which is forbidden")
    for f in core.fault_log:
        if f.fills_in_flight:
            errors.append(f"RUN {f.run} pc {f.pc}: {f.variant} raised with VFILL responses in flight")
    both = fill_src & drain_dst
    if both:
        errors.append(f"{len(both)} DRAM words are VFILL sources and VDRAIN destinations, e.g. byte "
                      f"{min(both) << 5:#x}")
    return errors
