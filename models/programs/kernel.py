"""A whole kernel in one form: the plan checked against the machine, every instance's programs, the counts.

:func:`build_kernel` runs the planner's ``plan_fused`` first, so every
``PlanRefused`` of the planner fires here too; :func:`build_programs` takes a
plan (also a hand-made one, checked as plan_fused would have made it) and
builds each instance's cluster and vector program (models.programs.emission),
counts the result (models.programs.counts) and, in the fused form, checks that
the drains earn exactly the acknowledgements the planner says the host awaits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from models.machine.layouts import Machine
from models.machine.planner import FIXES, L1_SAFE, Expr, Plan, expected_acks, plan_fused

from .counts import Counts, _count
from .emission import ANCHOR, InstancePrograms, cluster_program, vector_program
from .layout import DramLayout, _refuse, dram_layout
from .lowering import Lowered, lower_epilogue


@dataclass(frozen=True)
class KernelPrograms:
    """One form of the kernel, built: its plan, layout and lowered epilogue, every instance's programs, the counts."""

    plan: Plan
    form: str
    layout: DramLayout
    epilogue: Expr
    lowered: Lowered
    instances: tuple[InstancePrograms, ...]
    counts: Counts


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
    if layout is None:  # from the machine's memory window on: the addresses its memory agent serves
        layout = dram_layout(plan, base=machine.mem_base)
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
        raise _refuse("the result overlaps an accumulator slot", "plan with models.machine.planner")


def build_kernel(m: int, n: int, k: int, gm: int, gn: int, nk: int, epilogue: Expr, machine: Machine, *,
                 form: str = "fused", **kw) -> KernelPrograms:
    """plan_fused (every PlanRefused fires here) then :func:`build_programs`.

    The unfused form is built on the same plan (same placement and L1 layout),
    so it inherits the fused plan's refusals: it is the comparison's baseline,
    not a fallback.
    """
    plan = plan_fused(m, n, k, gm, gn, nk, epilogue, machine)
    return build_programs(plan, epilogue, machine, form=form, **kw)
