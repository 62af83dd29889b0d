"""The timed models flit by flit against the RTL's own flit trace (tests/unit/timed/data/*.flits: the RTL
machine on Verilator built with AGSIM_FLIT_TRACE=1, `python -m tb.client run --sim verilator DIR`, the build
folder's clients/flit_trace.txt; to be taken again when the RTL's timing changes).

Every endpoint sees the same flits in the same order on both; each flit's offset from the last dispatched
flit before it differs by less than 1 % of its round's machine cycles (the round target of the timed models:
a flit that far off would move its round by as much). And the comparison itself names a flit moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.bundle.reader import Bundle
from models.machine.layouts import FUSED4, UnitKind
from models.timed.run import run_timed
from models.timed.trace import compare, model_trace, read_rtl_trace, round_limits

DATA = Path(__file__).parent / "data"
ORCH = FUSED4.geometry.port_index(FUSED4.coords(UnitKind.ORCH)[0])


def _both(name: str):
    run = run_timed(Bundle(name), trace=True)
    assert run.trace is not None
    return run, model_trace(run.trace, FUSED4), read_rtl_trace(DATA / f"{name}.flits")


@pytest.mark.parametrize("name", ["ops_log2_m32n64", "linear_gate_add_m32k64n32"])
def test_every_flit_where_the_rtl_has_it(name: str) -> None:
    run, models, rtl = _both(name)
    limits = round_limits([(r.kicked, r.timing.machine_cycles) for r in run.result.rounds if r.timing])
    cmp = compare(models, rtl, ORCH, limits)
    assert cmp.flits == len(rtl) and all(p.models == p.rtl and p.reordered == 0 for p in cmp.ports)
    assert cmp.past == 0, cmp.lines({})


def test_the_comparison_names_a_moved_flit() -> None:
    _, models, rtl = _both("ops_log2_m32n64")
    vc = FUSED4.geometry.port_index((1, 0))
    late = rtl[0][0] + 2000  # from here on the core takes its flits 200 cycles later
    moved = [(c + 200, w, p, h) if (w, p) == ("IN", vc) and c > late else (c, w, p, h) for c, w, p, h in rtl]
    cmp = compare(models, moved, ORCH)
    port = next(p for p in cmp.ports if p.key == ("IN", vc))
    assert port.worst <= -(200 - 12) and port.first_past is not None and cmp.past > 0


def test_flit_trace_is_refused_where_it_has_nothing_to_compare(capsys) -> None:
    """--flit-trace needs one bundle on the RTL: with --models, or two bundles, one refusal line, exit 2."""
    from models.bundle.reader import BUNDLES
    from tb.client import main

    assert main(["run", str(BUNDLES / "ops_log2_m32n64"), "--models", "--flit-trace"]) == 2
    assert main(["run", str(BUNDLES / "ops_log2_m32n64"), str(BUNDLES / "matmul_m32k64n32"), "--flit-trace"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["refused: --flit-trace compares one bundle's RTL flits with the timed models'; --models has no "
                   "RTL: run one bundle on the RTL",
                   "refused: --flit-trace compares one bundle's RTL flits with the timed models'; 2 bundles given: "
                   "run one bundle on the RTL"]
