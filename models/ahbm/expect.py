"""What a launch must leave in each PE's counters: the prediction the CUBE scorer compares, from the models alone.

The scorer (tb/ahbm/score.py) reads the counters through the cube and
compares; what they must hold is derived here from the launch plan and the
reference kernel, so a prediction can be read (and tested) without a
simulator: a batch's counts come from the placement formulas
(kernel.predict_counts), its merges from the reduction tree (a rank merges
one partial per child per unit of work); a ring's from the reference ring
kernel's own count of its steps.

Counter names are the RTL's (rtl/ahbm/pe/pe_core.v ports, `cnt_*`); a unit of work is one
(request, query block) of a launch, one walk of its program (launch.walk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .batch import Batch
from .kernel import KernelResult, PE_COUNT_KEYS, predict_counts
from .launch import RingLaunch, walk


@dataclass(frozen=True)
class RankExpect:
    """One rank's prediction: its PE's counters (cnt_comp is also the ATTN_TILE commands its program must
    enqueue) and the tiles and ring steps it must leave out."""

    counters: Mapping[str, int]
    tiles_skipped: int
    ring_steps_skipped: int = 0


def batch_units(batch: Batch) -> int:
    """Units of work of a batch: every request's query blocks."""
    return sum(len(walk(x.args[0])) for x in batch.launches)


def batch_pushes(batch: Batch) -> int:
    """Partials pushed over IPCQ in the whole launch: N - 1 per reduction, one reduction per unit."""
    return (batch.first.args[0].n - 1) * batch_units(batch)


def batch_counters(batch: Batch) -> list[RankExpect]:
    """Per rank of a batch launch: the PE counters summed over its requests, and its ATTN_TILE count."""
    lp = batch.first
    a0 = lp.args[0]
    n, tile = a0.n, a0.tile
    units = batch_units(batch)
    preds = [predict_counts(req.counter, req.q_start, req.tq, n, req.request_id, tile, req.q_block, groups=a0.groups)
             for req in batch.requests]
    root = lp.tree.root if lp.tree else 0
    out = []
    for rank in range(n):
        exp = {key: sum(blk[rank][key] for pred in preds for blk in pred) for key in PE_COUNT_KEYS}
        nchild = len(lp.child_dirs(rank))
        counters = {"cnt_k": exp["k_loads"], "cnt_v": exp["v_loads"], "cnt_comp": exp["composites"],
                    "cnt_mask": exp["masked"], "cnt_push": exp["pushes"], "cnt_pop": nchild * units,
                    "cnt_merge": nchild * units, "cnt_store": units if rank == root else 0, "cnt_q": units,
                    "cnt_fault": 0, "cnt_score": exp["scores"]}
        out.append(RankExpect(counters, exp["tiles_skipped"]))
    return out


def ring_counters(rl: RingLaunch, ref: KernelResult) -> list[RankExpect]:
    """Per rank of a ring prefill (the reference ring kernel's result `ref` on the same inputs): its PE
    counters but cnt_q (the query loads its program chose to issue, which the scorer takes from the run),
    N - 1 blocks sent and received, one O store per sub-block, no push: a ring reduces nothing."""
    n = rl.args[0].n
    out = []
    for rank in range(n):
        e = ref.per_block[0]["pe"][rank]
        counters = {"cnt_comp": e["composites"], "cnt_k": e["k_loads"], "cnt_v": e["v_loads"],
                    "cnt_mask": e["masked"], "cnt_score": e["scores"], "cnt_tx": n - 1, "cnt_rx": n - 1,
                    "cnt_store": len(rl.args[rank].subs()), "cnt_push": 0, "cnt_fault": 0}
        out.append(RankExpect(counters, e["tiles_skipped"], e["ring_steps_skipped"]))
    return out


__all__ = ["RankExpect", "batch_counters", "batch_pushes", "batch_units", "ring_counters"]
