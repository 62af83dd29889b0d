"""The simulator-free parts of tb.system.host_sequence and tb.lib.artifacts."""

from __future__ import annotations

import numpy as np
import pytest

from models import cluster
from models.cu.base import cu_inst
from models.noc.flit import FlitType, flit_field
from models.machine.layouts import FUSED4, MM_MESH, MM_MESH_SYS
from models.vector.archive import recheck_doubled
from models.vector.lanes import u16_to_word
from tb.lib import artifacts
from models.cu.base import cu_data_bursts
from tb.system.host_sequence import HostSequence, SequenceAwaitError

VC, CL, ORCH = (1, 0), (2, 1), (1, 1)


def seq(**kw) -> HostSequence:
    return HostSequence(None, None, MM_MESH_SYS, **kw)  # host and DRAM unused by what is tested here


def test_needs_one_orchestrator_and_bounded_credit() -> None:
    with pytest.raises(ValueError, match="orchestrator"):
        HostSequence(None, None, MM_MESH)
    with pytest.raises(ValueError, match=r"outside 1\.\.32, the instruction FIFO depth of machine mm_mesh_sys"):
        seq(fifo_depth=33)
    assert seq().fifo_depth == 32


def test_the_credit_cap_is_the_machines_fifo_depth() -> None:
    """fused4's units hold 512 instructions (the compiler seeds 512): the host may seed that, not more."""
    assert HostSequence(None, None, FUSED4).fifo_depth == 512
    with pytest.raises(ValueError, match="outside 1..512"):
        HostSequence(None, None, FUSED4, fifo_depth=513)


def test_dram_addresses_are_the_machines() -> None:
    """fused4's DRAM word 0 is machine address 0x8000_0000; an address outside the window is refused."""
    s = HostSequence(None, None, FUSED4)
    assert s.dram_byte(0x8000_1000) == 0x1000 and seq().dram_byte(0x40) == 0x40
    with pytest.raises(ValueError, match="outside its DRAM window 0x80000000"):
        s.dram_byte(0x1000)
    with pytest.raises(ValueError, match="raise dram_words"):
        s.dram_byte(0x8000_0000 + 32 * FUSED4.dram_words - 16, 32)


def test_payloads_become_instructions_last_on_the_final_one() -> None:
    s = seq()
    burst = cluster.cu_data_bursts(CL, ORCH, 0, 0, [1, 2, 3])
    flits = s.instruction_flits(CL, burst + [cluster.gemm(1, 1, 1), cluster.drain(1)])
    assert flits[:4] == burst
    assert [flit_field(f, "type") for f in flits[4:]] == [FlitType.CU_INST] * 2
    assert [flit_field(f, "last") for f in flits[4:]] == [0, 1]
    assert all((flit_field(f, "src_x"), flit_field(f, "src_y")) == ORCH for f in flits[4:])


def test_windows_respect_staging_slots_and_chunks() -> None:
    s = seq(slots=10)
    insts = [cu_inst(VC, ORCH, 0, 0, i) for i in range(25)]
    assert [len(w) for w in s._windows(insts, None)] == [10, 10, 5]
    assert [len(w) for w in s._windows(insts, 8)] == [8, 8, 8, 1]
    s = seq(slots=256)
    assert [len(w) for w in s._windows(insts, None)] == [25]
    mixed = cu_data_bursts(VC, ORCH, 0, 0, [7] * 3) + insts[:9]
    assert [len(w) for w in s._windows(mixed, 8)] == [4 + 8, 1]


def test_await_error_names_coordinate_counts_and_missing() -> None:
    e = SequenceAwaitError("await acks", VC, 65535, 2, 65535, "timeout after 3000 cycles")
    text = str(e)
    assert "await acks" in text and "(1,0)" in text and "expected count 1" in text and "seen 65535" in text
    assert e.missing == 2 and "2 signal(s) missing" in text
    over = SequenceAwaitError("x", VC, 5, 1, 7, "overshoot")
    assert over.surplus == 1 and "1 signal(s) surplus" in str(over)


def test_artifacts_merge_load_and_recheck(tmp_path) -> None:
    a = artifacts.Artifacts("t/x=1", tmp_path)
    a.words("obs_w", [1, 2 << 240])
    a.words("exp_w", [1, 2 << 240])
    a.count("acks", 2, 2)
    a.save({"seed": 3, "run_seed": 4, "verdict": "PASS"})
    b = artifacts.Artifacts("other", tmp_path)
    b.count("acks", 1, 0)
    b.save({"seed": 5, "run_seed": 4})
    data = artifacts.load(tmp_path / artifacts.FILE_NAME)
    assert set(data) == {"t.x=1", "other"}
    assert data["t.x=1"]["obs_w"].dtype == np.uint16 and data["t.x=1"]["obs_w"].shape == (2, 16)
    assert artifacts.lanes_to_words(data["t.x=1"]["obs_w"]) == [1, 2 << 240]
    checks, errors = artifacts.recheck(tmp_path / artifacts.FILE_NAME)
    assert checks == 3 and len(errors) == 1 and "other" in errors[0]
    with pytest.raises(ValueError):
        a.add("Bad-Name", 1)


def test_a_registered_recheck_runs_from_the_file_alone(tmp_path) -> None:
    """A wing registers its re-check with the archive; recheck() runs it by name, and only what was
    registered runs (an archive holding the same lanes without a registration is not re-derived)."""
    a = artifacts.Artifacts("doubled", tmp_path)
    a.words("in_words", [u16_to_word([0x3C00] * 16)])
    a.add("obs_doubled", np.full((1, 16), 0x4001, np.uint16))    # wrong: 2.0 is 0x4000
    a.recheck_with(recheck_doubled)
    a.recheck_with(recheck_doubled)                                # registered once
    a.save({})
    b = artifacts.Artifacts("unregistered", tmp_path)
    b.add("obs_doubled", np.full((1, 16), 0x4001, np.uint16))
    b.words("in_words", [u16_to_word([0x3C00] * 16)])
    path = b.save({})
    assert [str(n) for n in artifacts.load(path)["doubled"]["rechecks"]] == ["models.vector.archive:recheck_doubled"]
    checks, errors = artifacts.recheck(path)
    assert checks == 1 and errors == ["doubled: obs_doubled is not the saturating FP16 double of the input lanes"]


def test_a_recheck_outside_the_models_is_refused(tmp_path) -> None:
    def local_check(arrays) -> list[str]:
        return []

    with pytest.raises(ValueError, match="a re-check is a module-level function of models/"):
        artifacts.Artifacts("t", tmp_path).recheck_with(local_check)
    c = artifacts.Artifacts("t", tmp_path)
    c.add("rechecks", np.array(["os:system"]))                     # a hostile or stale archive
    checks, errors = artifacts.recheck(c.save({}))
    assert checks == 1 and errors == ["t: re-check os:system: names no function of models/ (module:function); "
                                      "not imported"]

