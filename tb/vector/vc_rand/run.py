"""Running cases on the model: ``predict`` one case, read the RUN's completion (``run_result`` /
``run_fault``), ``run_sequence`` with the cross-check of every RUN against what the generator tracked,
and the static fill/drain check ``dram_overlap``."""

from __future__ import annotations

from typing import Sequence

from models.cu.base import SigCode, signal_fields
from models.noc.flit import FIELDS, FlitType
from models.vector.core import Event
from models.vector.memory import CoreWithMemory
from models.vector import isa
from models.vector import N_DESC, Descriptor

from .cases import DEFAULT_GEOMETRY, Case, Geometry
from .generate import sequence
from .spec import mem_walk
from .tracing import new_model


def predict(model: CoreWithMemory, case: Case) -> list[Event]:
    """Load the case's DRAM words, deliver its bursts then its CU_INSTs; every flit the core sent, in order.

    The RUN must retire (a program that does not halt is a generator bug and
    raises); a RUN still in flight when bursts arrive would break the
    between-RUNs rule and raises too.
    """
    g = case.geometry
    if (model.core.coord, model.core.mag) != (g.unit, g.mag):
        raise ValueError(f"predict: the model is at {model.core.coord} with its memory agent at {model.core.mag}, "
                         f"the case expects {g.unit} and {g.mag}")
    if model.core.run is not None or model.core.burst is not None:
        raise RuntimeError("predict: a RUN or an inbound burst is still open before the case")
    for addr, word in case.dram.items():
        model.write_word(addr, word)
    start = len(model.sent)
    model.take_all(case.data_flits())
    if model.core.burst is not None:
        raise RuntimeError(f"case {case.index}: an inbound burst is left open")
    model.take_all(case.inst_flits())
    if model.core.run is not None or model.core.queue:
        raise RuntimeError(f"case {case.index}: the RUN did not retire\n{case.describe()}")
    return model.sent[start:]


def run_result(events: Sequence[Event], case: Case) -> tuple[int, int]:
    """(CU_SIGNAL code, arg) of the RUN's completion: the last completion to the host with the RUN's txn."""
    for e in reversed(events):
        f = e.flit
        if (e.dst == case.geometry.host and FIELDS["type"].extract(f) == FlitType.CU_SIGNAL
                and FIELDS["txn"].extract(f) == case.run_txn):
            return signal_fields(f)
    raise LookupError(f"case {case.index}: no completion of the RUN among {len(events)} events")


def run_fault(events: Sequence[Event], case: Case) -> int | None:
    """The fault code the RUN retired with, or None when it halted."""
    code, arg = run_result(events, case)
    return arg if code == SigCode.FAULT else None


def run_sequence(seed: int, n: int, model: CoreWithMemory | None = None, *, check: bool = True,
                 geometry: Geometry = DEFAULT_GEOMETRY) -> tuple[CoreWithMemory, list[Case]]:
    """Generate and predict n cases on one model; with `check`, each RUN must end as the generator intended
    (fault code, VL, mode, descriptors), which cross-checks the generator's tracking against the model."""
    model = model or new_model(geometry.unit, geometry.mag)
    cases = []
    for case in sequence(seed, n, geometry):
        events = predict(model, case)
        if check:
            core = model.core
            got = (run_fault(events, case), core.vl, core.mode)
            want = (case.expect_fault, case.vl_after, case.mode_after)
            if got != want:
                raise AssertionError(f"case {case.index}: (fault, VL, mode) {got}, generator expected {want}\n"
                                     + case.describe())
            held = [Descriptor(core.base[ad], tuple(core.dims[ad])) for ad in range(N_DESC)]
            if held != list(case.descriptors):
                raise AssertionError(f"case {case.index}: the core holds descriptors {held}, the generator "
                                     f"tracked {list(case.descriptors)} (DESC writes of changed fields only)")
        cases.append(case)
    return model, cases


def dram_overlap(cases: Sequence[Case]) -> set[int]:
    """DRAM words (byte >> 5) that some case's VFILL reads and some case's VDRAIN writes (static check)."""
    src, dst = set(), set()
    for c in cases:
        src.update(a >> 5 for a in c.dram)
        for w in c.words:
            x = isa.Word(w)
            if x.op == isa.OP_VDRAIN and not x.node:
                dst.update(a >> 5 for a in mem_walk(c.descriptors[x.ad]))
    return src & dst
