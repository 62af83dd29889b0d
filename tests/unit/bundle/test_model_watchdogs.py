"""Every run of a damaged bundle on the golden models ends, quickly and by name (docs/bundle.md, "The models'
watchdogs"): a vector program whose VHALT became another word, an IMEM flit whose envelope opcode had a bit
flipped, two rounds swapped, an await that can never be met, a round whose last await was dropped.

Each damaged bundle is a real one of clients/bundles copied into tmp_path with its bundle.json edited
(tb/bundle/plan_faults.py), run as a user's export would be, through ``python -m tb.client run --models``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from models.bundle.executor import PollFailed, Unawaited
from models.bundle.reader import Bundle
from models.machine.event_model import run_bundle
from tb import client
from tb.run.runner import CaseResult
from tb.bundle.plan_faults import (await_one_more, damaged_copy, imem_turned_run, last_await_dropped,
                                   rounds_swapped, vhalt_replaced)


def _run_models(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = client.main(["run", str(folder), "--models", "--build", str(tmp_path / "build")])
    return status, capsys.readouterr().out


def test_vhalt_replaced_ends_named_by_the_vector_core(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = damaged_copy("rmsnorm_m32n64", tmp_path / "no_vhalt", vhalt_replaced)
    status, out = _run_models(folder, tmp_path, capsys)
    assert status == 1
    assert ("FAILED: Runaway: bundle no_vhalt round 1 (rmsnorm_fused:0, VC): vector core (1,0): the RUN from pc 0 "
            "never reached VHALT: its control state (pc, VL, mode, scalars, K3, loop, fills) at lap 2 of IMEM") in out
    assert "the hardware would run on" in out and "1 of 1 bundle(s) FAILED: no_vhalt" in out


def test_imem_flit_turned_run_ends_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """IMEM (envelope op 1) with bit 1 flipped is RUN (3): the core runs an IMEM not loaded yet (all VMOV)."""
    folder = damaged_copy("rmsnorm_m32n64", tmp_path / "flipped", imem_turned_run)
    status, out = _run_models(folder, tmp_path, capsys)
    assert status == 1
    assert "FAILED: Runaway: bundle flipped round 0 (rmsnorm_fused:0, VC): vector core (1,0): the RUN from pc 0" in out


def test_rounds_swapped_end_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """flash attention's round 1 (the program's load and first RUN) run before round 0: round 0's RUN finds
    IMEM holding round 1's code at another pc."""
    folder = damaged_copy("flash_attention_l64d64", tmp_path / "swapped", rounds_swapped, timing=False)
    status, out = _run_models(folder, tmp_path, capsys)
    assert status == 1
    assert "FAILED: Runaway: bundle swapped round 0 (flash_attention:0, VC): vector core (1,0)" in out


def test_an_await_never_met_is_named_when_the_machine_goes_quiet() -> None:
    """Nothing left to deliver and the await unmet: the round, the node, the count awaited and the count seen."""
    b = Bundle("ops_log2_m32n64")
    await_one_more(b)
    with pytest.raises(PollFailed, match=r"^bundle ops_log2_m32n64 round 0 \(log2:0, VC\): await at node \(1,0\): "
                       r"expected count 45 \(baseline 0 \+ 45\), seen 44 \(44 signal\(s\) since the baseline\); the "
                       r"node's last signal: BATCH_COMPLETE .*; the machine model went quiet"):
        run_bundle(b)


@pytest.mark.parametrize("name, round_name, in_flight", [
    ("rmsnorm_m32n64", "round 1 (rmsnorm_fused:0, VC)", "CU_INST flit(s) in flight to (1,0)"),
    ("matmul_m32k64n32", "round 0 (matmul:0, MG)", "CU_INST flit(s) in flight to (1,1)"),
])
def test_reading_back_before_the_work_is_awaited_is_a_named_race(name: str, round_name: str, in_flight: str,
                                                                 tmp_path: Path) -> None:
    """The last round's await dropped: the host would read the outputs back while the kick's work is still in
    flight (on the RTL, 1,024 lanes of rmsnorm differed). The models name the race instead of running the
    work to its end before the read-back. (Without timing_rtl.json, whose awaits the edit no longer matches.)"""
    b = Bundle(damaged_copy(name, tmp_path / name, last_await_dropped, timing=False))
    with pytest.raises(Unawaited) as caught:
        run_bundle(b)
    text = str(caught.value)
    assert text.startswith(f"bundle {name} {round_name}: after its awaits: the host goes on "), text
    assert "while work it did not await is in flight: " in text and in_flight in text
    assert text.endswith("await every kick's completion (units.md §H.5)")


def first_rounds_awaits_dropped(meta: dict) -> None:
    first = next(p for p in meta["plan"] if p["kind"] == "round")
    first["steps"] = [s for s in first["steps"] if s["op"] != "await"]


def test_a_middle_rounds_dropped_await_is_named_before_the_next_round(tmp_path: Path) -> None:
    """linear_relu's round 0 (the clusters) without its awaits: named at round 0, before round 1 starts."""
    name = "linear_relu_m32k64n32"
    b = Bundle(damaged_copy(name, tmp_path / name, first_rounds_awaits_dropped, timing=False))
    with pytest.raises(Unawaited, match=r"^bundle linear_relu_m32k64n32 round 0 \(linear_relu:0, MG\): after its "
                       r"awaits: .*in flight to \(1,1\)"):
        run_bundle(b)


def test_a_bench_failure_without_report_names_its_checks_not_only_their_count() -> None:
    """A bundle test that ended before writing its report (a crash in the bench): the command prints the
    verdict's failing checks under "N check(s) failed:", not that line alone."""
    log = Path("sim.log")
    case = CaseResult("test_bundle/bundle=x", False, message="2 check(s) failed:\n  first thing\n  second thing")
    assert client.unreported_failures(case, None, log) == ["first thing (log: sim.log)", "second thing"]
    plain = CaseResult("test_bundle/bundle=x", False, message="ValueError: bad\nTraceback ...")
    assert client.unreported_failures(plain, None, log) == ["ValueError: bad (log: sim.log)"]
    assert client.unreported_failures(None, "build failed", log) == ["build failed (log: sim.log)"]
