"""Sequences: the foci in a seed-shuffled round robin, ``make_case(seed, index, state)``, ``state_before``
and ``sequence`` (every case reproducible from its seed and index)."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Iterator, Mapping

from .builder import Builder, Focus
from .cases import DEFAULT_GEOMETRY, Case, CaseState, Geometry
from .foci_alu import focus_chain2, focus_chain4, focus_flat, focus_hazards, focus_misc, focus_transc, focus_tree
from .foci_faults import (
    focus_f_chain, focus_f_cudata, focus_f_dtype, focus_f_len, focus_f_loop, focus_f_opcode, focus_f_redvl,
    focus_f_vl, focus_f_vsrc,
)
from .foci_flow import focus_init, focus_loop, focus_mixed, focus_pcwrap
from .foci_memory import focus_bursts, focus_drain, focus_fill, focus_ldst, focus_node

# The generator's random streams are named after the module it started in: changing the tag changes
# every sequence (and the cases a failure log names by seed and index).
SEED_TAG = "vc_randprog"

FOCI: Mapping[str, Focus] = MappingProxyType({
    "flat": focus_flat, "chain2": focus_chain2, "chain4": focus_chain4, "hazards": focus_hazards, "tree": focus_tree,
    "transc": focus_transc, "ldst": focus_ldst, "fill": focus_fill, "drain": focus_drain, "node": focus_node,
    "loop": focus_loop, "misc": focus_misc, "bursts": focus_bursts, "pcwrap": focus_pcwrap, "mixed": focus_mixed,
    "f_dtype": focus_f_dtype, "f_vsrc": focus_f_vsrc, "f_chain": focus_f_chain, "f_opcode": focus_f_opcode,
    "f_len": focus_f_len, "f_loop": focus_f_loop, "f_vl": focus_f_vl, "f_redvl": focus_f_redvl,
    "f_cudata": focus_f_cudata,
})


def focus_of(seed: int, index: int) -> tuple[str, int]:
    """(focus, round) of case `index`: 'init' first, then every focus once per round in a seeded order."""
    if index == 0:
        return "init", 0
    names = list(FOCI)
    rnd, pos = divmod(index - 1, len(names))
    random.Random(f"{SEED_TAG}:{seed}:round:{rnd}").shuffle(names)
    return names[pos], rnd


def make_case(seed: int, index: int, state: CaseState | None = None,
              geometry: Geometry = DEFAULT_GEOMETRY) -> Case:
    """Case `index` of sequence `seed`; advances `state` in place (state=None: replayed from case 0 for
    `geometry`, which a given state carries itself)."""
    if state is None:
        state = state_before(seed, index, geometry)
    if state.next_index != index:
        raise ValueError(f"make_case: the state is before case {state.next_index}, not case {index} "
                         "(cases of a sequence are made in order; pass state=None to replay)")
    focus, rnd = focus_of(seed, index)
    b = Builder(random.Random(f"{SEED_TAG}:{seed}:{index}"), state)
    label = (focus_init if focus == "init" else FOCI[focus])(b, rnd)
    case = b.finish(seed, index, focus, label)
    state.advance(case)
    return case


def state_before(seed: int, index: int, geometry: Geometry = DEFAULT_GEOMETRY) -> CaseState:
    """The CaseState before case `index`, rebuilt by generating cases 0..index-1 (no model needed)."""
    state = CaseState(geometry)
    for i in range(index):
        make_case(seed, i, state)
    return state


def sequence(seed: int, n: int, geometry: Geometry = DEFAULT_GEOMETRY) -> Iterator[Case]:
    """Cases 0..n-1 of sequence `seed`, for one core."""
    state = CaseState(geometry)
    for i in range(n):
        yield make_case(seed, i, state)
